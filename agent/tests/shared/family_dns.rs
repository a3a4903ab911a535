//! A DNS server on loopback (UDP) that answers each (name, type) as the test says: its
//! rcode and its addresses. The lab's `LabDns` answers NXDOMAIN only for a name it does not
//! know at all; a zone (or a DNS load balancer) that answers NXDOMAIN for one type of a name
//! that has records of the other (RFC 4074 section 4.2) needs a per-type answer.
//! Included by path by the agent's and the coordinator's tests; the including module names
//! hickory's protocol crate `dnsproto` (`hickory_resolver::proto` or `hickory_proto`).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use super::dnsproto::op::{Message, ResponseCode};
use super::dnsproto::rr::RecordType;
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;

/// One type's answer: `NOERROR` with these addresses (none: no data), or `NXDOMAIN`.
#[derive(Debug, Clone)]
pub enum TypeAnswer {
    Records(Vec<IpAddr>),
    Nxdomain,
}

pub fn records(addrs: &[&str]) -> TypeAnswer {
    TypeAnswer::Records(addrs.iter().map(|a| a.parse().expect("ip")).collect())
}

pub struct FamilyDns {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl FamilyDns {
    /// `zone`: (name, A answer, AAAA answer); a name not listed is NXDOMAIN for both.
    pub async fn start(zone: &[(&str, TypeAnswer, TypeAnswer)]) -> Self {
        let mut table: BTreeMap<(String, RecordType), TypeAnswer> = BTreeMap::new();
        for (name, a, aaaa) in zone {
            let fqdn = format!("{}.", name.trim_end_matches('.'));
            table.insert((fqdn.clone(), RecordType::A), a.clone());
            table.insert((fqdn, RecordType::AAAA), aaaa.clone());
        }
        let table = Arc::new(table);
        let socket = UdpSocket::bind(("127.0.0.1", 0)).await.expect("bind udp");
        let addr = socket.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
                if let Some(bytes) = answer(&table, &buf[..n]) {
                    let _ = socket.send_to(&bytes, peer).await;
                }
            }
        });
        FamilyDns { addr, task }
    }
}

fn answer(table: &BTreeMap<(String, RecordType), TypeAnswer>, query: &[u8]) -> Option<Vec<u8>> {
    let req = Message::from_vec(query).ok()?;
    let q = req.queries().first()?.clone();
    let mut resp = vantage_fixture::lab::response_to(&req);
    let key = (q.name().to_ascii().to_ascii_lowercase(), q.query_type());
    match table.get(&key) {
        None | Some(TypeAnswer::Nxdomain) => {
            resp.set_response_code(ResponseCode::NXDomain);
        }
        Some(TypeAnswer::Records(addrs)) => {
            vantage_fixture::lab::answer_addresses(&mut resp, &q, addrs);
        }
    }
    resp.to_vec().ok()
}

impl Drop for FamilyDns {
    fn drop(&mut self) {
        self.task.abort();
    }
}
