//! What `dns_resolver_faults` runs against: a tiny UDP responder on loopback playing the
//! vantage's faulty resolver (hand-built answers, by the first label of the name), a named
//! https target behind the lab's TLS front, and a fleet of in-process regions merged into
//! one report.

use std::net::{Ipv4Addr, SocketAddr};

use hickory_proto::op::{Message, MessageType, Query, ResponseCode};
use hickory_proto::rr::{rdata, Name, RData, Record, RecordType};
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::{CheckResult, DnsObservation, RegionResult};
use vantage_agent::{Engine, ProbeOptions, Target};
use vantage_coordinator::report::Report;
use vantage_fixture::lab::TlsFront;

use crate::support::{front, shared, trusting};
use shared::Lab;

/// The faulty resolver: UDP on loopback, answering by the first label of the name.
pub(crate) struct HostileDns {
    pub(crate) addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for HostileDns {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn name(s: &str) -> Name {
    Name::from_ascii(format!("{s}.vantage.test.")).unwrap()
}

/// The answer to one query, or `None` to stay silent.
fn reply(query: &[u8]) -> Option<Vec<u8>> {
    let req = Message::from_vec(query).ok()?;
    let q = req.queries().first()?.clone();
    let mut resp = Message::new();
    resp.set_id(req.id())
        .set_message_type(MessageType::Response)
        .set_op_code(req.op_code())
        .set_recursion_desired(true)
        .set_recursion_available(true);
    let label = q
        .name()
        .iter()
        .next()
        .map(|l| String::from_utf8_lossy(l).to_lowercase())?;
    let a = |owner: Name| Record::from_rdata(owner, 60, RData::A(rdata::A(Ipv4Addr::LOCALHOST)));
    let cname = |target: &str| {
        Record::from_rdata(
            q.name().clone(),
            60,
            RData::CNAME(rdata::CNAME(name(target))),
        )
    };
    let is_a = q.query_type() == RecordType::A;
    match label.as_str() {
        // A 127.0.0.1; the AAAA query SERVFAIL / never answered.
        "aaaasf" | "aaaadrop" if !is_a => {
            if label == "aaaadrop" {
                return None;
            }
            resp.set_response_code(ResponseCode::ServFail);
        }
        // The A query SERVFAIL; AAAA: no data.
        "asf" if is_a => {
            resp.set_response_code(ResponseCode::ServFail);
        }
        // Every query SERVFAIL (a metadata host).
        "metasf" => {
            resp.set_response_code(ResponseCode::ServFail);
        }
        "metanx" | "gone" => {
            resp.set_response_code(ResponseCode::NXDomain);
        }
        // An A record owned by another name than the one asked.
        "other" if is_a => {
            resp.add_answer(a(name("elsewhere")));
        }
        "loop" => {
            resp.add_answer(cname("loop2"));
        }
        "loop2" => {
            resp.add_answer(cname("loop"));
        }
        "dangle" => {
            resp.add_answer(cname("gone"));
        }
        // The owner in other letter case: the same name (DNS names compare without case).
        "upper" if is_a => {
            resp.add_answer(a(Name::from_ascii("UPPER.VANTAGE.TEST.").unwrap()));
        }
        // A question section about another name (hickory drops it as forged).
        "forged" => {
            resp.add_query(Query::query(name("elsewhere"), q.query_type()));
            if is_a {
                resp.add_answer(a(name("elsewhere")));
            }
            return resp.to_vec().ok();
        }
        _ if is_a => {
            resp.add_answer(a(q.name().clone()));
        }
        _ => {}
    }
    resp.add_query(q);
    resp.to_vec().ok()
}

pub(crate) async fn hostile_dns() -> HostileDns {
    let socket = UdpSocket::bind(("127.0.0.1", 0)).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
            if let Some(bytes) = reply(&buf[..n]) {
                let _ = socket.send_to(&bytes, peer).await;
            }
        }
    });
    HostileDns { addr, task }
}

/// An https target named `host` behind the lab's TLS front, and options that trust the lab
/// CA and ask `resolver`.
pub(crate) async fn named(
    lab: &Lab,
    host: &str,
    resolver: SocketAddr,
) -> (TlsFront, String, ProbeOptions) {
    let (front, url) = front(lab, &[host], 90).await;
    let url = url.replace("mcp.vantage.test", host);
    let mut opts = trusting(lab);
    opts.resolver.nameservers = vec![resolver];
    (front, url, opts)
}

pub(crate) fn check(report: &Report, region: &str, id: CheckId) -> CheckResult {
    let r = report.regions.iter().find(|r| r.region == region).unwrap();
    r.check(id).unwrap().clone()
}

pub(crate) fn dns_of<'a>(report: &'a Report, region: &str) -> &'a DnsObservation {
    let r = report.regions.iter().find(|r| r.region == region).unwrap();
    r.dns.as_ref().unwrap()
}

pub(crate) async fn region(url: &str, mut opts: ProbeOptions, name: &str) -> RegionResult {
    opts.region = name.into();
    let job = shared::job(url, &opts);
    Engine::new(opts).unwrap().run_job(&job).await
}

pub(crate) fn fleet(url: &str, regions: Vec<RegionResult>) -> Report {
    let names: Vec<String> = regions.iter().map(|r| r.region.clone()).collect();
    vantage_coordinator::checks::assemble(
        &Target::parse(url).unwrap(),
        "2026-12-02T01:00:00Z".into(),
        100,
        &names,
        regions,
        &Default::default(),
        &Default::default(),
    )
}
