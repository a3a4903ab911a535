//! One record-type query, asked of the vantage's name servers directly (hickory's name
//! server pool, UDP then TCP on truncation) and read here rather than by hickory's caching
//! client, so that what came back can be told apart: the zone's answer (addresses, NOERROR
//! without data, NXDOMAIN), the CNAME chain as the zone wrote it (a loop, a CNAME to a name
//! that does not exist), and a resolver's fault (a timeout, SERVFAIL, REFUSED, or an answer
//! whose records belong to another owner than the name asked or its CNAME targets).

use std::net::IpAddr;
use std::time::Duration;

use hickory_resolver::config::{NameServerConfig, ResolverOpts};
use hickory_resolver::name_server::{NameServerPool, TokioConnectionProvider};
use hickory_resolver::proto::op::{Query, ResponseCode};
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use hickory_resolver::proto::xfer::{DnsHandle, DnsRequestOptions, FirstAnswer, Protocol};
use hickory_resolver::proto::{ProtoError, ProtoErrorKind};

use super::dns::ResolverChoice;
use super::observed::clean;
use crate::model::Cause;

/// CNAME links followed at most (a chain longer than this is reported as it stands).
pub const MAX_CHAIN: usize = 16;

/// The vantage's name servers, ready to be asked.
#[derive(Clone)]
pub(crate) struct Querier {
    pool: NameServerPool<TokioConnectionProvider>,
    timeout: Duration,
}

/// The outcome of one record-type query.
#[derive(Debug, Default, Clone)]
pub(crate) struct Answer {
    pub addrs: Vec<IpAddr>,
    /// The CNAME chain from the name asked, in order (the targets).
    pub cnames: Vec<String>,
    /// The chain came back to a name already on it (`cnames` ends with that name).
    pub cname_loop: bool,
    pub min_ttl: Option<u32>,
    /// `NOERROR` (possibly with no data), `NXDOMAIN`, `SERVFAIL`, `REFUSED`, `TIMEOUT`, …
    pub rcode: String,
    /// Why the resolver gave no usable answer: a fault of the vantage's resolver.
    pub failure: Option<String>,
}

impl Answer {
    fn failed(rcode: &str, failure: String) -> Self {
        Answer {
            rcode: rcode.into(),
            failure: Some(failure),
            ..Default::default()
        }
    }

    /// The resolver answered for the name (NOERROR, with or without data, or NXDOMAIN): an
    /// observation of the zone. A timeout, SERVFAIL, REFUSED, a malformed answer or a local
    /// error is a fault of the vantage's resolver, never evidence about the target
    /// (`checks.md` 4.1).
    pub fn answered(&self) -> bool {
        self.failure.is_none()
    }

    /// `the AAAA query failed (SERVFAIL): the resolver answered SERVFAIL`.
    pub fn describe_failure(&self, what: &str) -> String {
        format!(
            "the {what} query failed ({}): {}",
            self.rcode,
            self.failure.as_deref().unwrap_or("no detail")
        )
    }

    /// `a -> b -> a`: the chain from `name`.
    pub fn chain_from(&self, name: &str) -> String {
        std::iter::once(name.trim_end_matches('.'))
            .chain(self.cnames.iter().map(|c| c.trim_end_matches('.')))
            .collect::<Vec<_>>()
            .join(" -> ")
    }
}

/// The name servers: `--nameserver` (UDP and TCP each), else the system's.
fn servers(choice: &ResolverChoice) -> Result<Vec<NameServerConfig>, String> {
    if choice.nameservers.is_empty() {
        let (config, _) = hickory_resolver::system_conf::read_system_conf()
            .map_err(|e| format!("reading the system resolver configuration: {e}"))?;
        if config.name_servers().is_empty() {
            return Err(
                "the system resolver configuration names no name server: give one with --nameserver IP:PORT"
                    .into(),
            );
        }
        return Ok(config.name_servers().to_vec());
    }
    let mut out = Vec::new();
    for ns in &choice.nameservers {
        out.push(NameServerConfig::new(*ns, Protocol::Udp));
        out.push(NameServerConfig::new(*ns, Protocol::Tcp));
    }
    Ok(out)
}

impl Querier {
    pub fn new(choice: &ResolverChoice, timeout: Duration) -> Result<Self, String> {
        let mut opts = ResolverOpts::default();
        opts.timeout = timeout;
        opts.attempts = 1;
        opts.cache_size = 0;
        opts.edns0 = true;
        let pool = NameServerPool::from_config(
            servers(choice)?.into(),
            opts,
            TokioConnectionProvider::default(),
        );
        Ok(Querier { pool, timeout })
    }

    /// Ask for `rtype` records of `name`, following the CNAME chain; bounded as a whole by
    /// the timeout (the pool may try UDP, then TCP, and several servers).
    pub async fn query(&self, name: &str, rtype: RecordType) -> Answer {
        match tokio::time::timeout(self.timeout, self.follow(name, rtype)).await {
            Ok(answer) => answer,
            Err(_) => Answer::failed("TIMEOUT", timed_out(self.timeout)),
        }
    }

    async fn follow(&self, name: &str, rtype: RecordType) -> Answer {
        let fqdn = format!("{}.", name.trim_end_matches('.'));
        let Ok(mut current) = Name::from_ascii(&fqdn) else {
            return Answer::failed("ERROR", format!("{name} is not a valid DNS name"));
        };
        let asked = current.clone();
        let mut answer = Answer::default();
        // Every name on the chain so far, the one asked first.
        let mut seen = vec![current.clone()];
        for _ in 0..=MAX_CHAIN {
            let mut options = DnsRequestOptions::default();
            options.use_edns = true;
            options.recursion_desired = true;
            let response = self
                .pool
                .lookup(Query::query(current.clone(), rtype), options)
                .first_answer()
                .await;
            let response = match response {
                Ok(r) => r,
                Err(e) => return with_chain(answer, from_error(&e, self.timeout)),
            };
            answer.rcode = rcode_word(response.response_code());
            let mut followed = false;
            // Walk the chain as the answer section writes it (links in any order).
            loop {
                let link = response.answers().iter().find_map(|r| match r.data() {
                    RData::CNAME(c) if *r.name() == current => Some((c.0.clone(), r.ttl())),
                    _ => None,
                });
                let Some((target, ttl)) = link else { break };
                answer.min_ttl = Some(answer.min_ttl.map_or(ttl, |t| t.min(ttl)));
                answer.cnames.push(clean(&target.to_string(), 300));
                if seen.contains(&target) {
                    answer.cname_loop = true;
                    return answer;
                }
                seen.push(target.clone());
                current = target;
                followed = true;
                if answer.cnames.len() > MAX_CHAIN {
                    return answer;
                }
            }
            for r in response.answers() {
                if *r.name() != current {
                    continue;
                }
                let ip = match (r.data(), rtype) {
                    (RData::A(a), RecordType::A) => IpAddr::V4(a.0),
                    (RData::AAAA(a), RecordType::AAAA) => IpAddr::V6(a.0),
                    _ => continue,
                };
                answer.min_ttl = Some(answer.min_ttl.map_or(r.ttl(), |t| t.min(r.ttl())));
                answer.addrs.push(ip);
            }
            if !answer.addrs.is_empty() || answer.rcode == "NXDOMAIN" {
                return answer;
            }
            // Records of an owner that is neither the name asked nor a CNAME target: the
            // answer is not about this name (malformed or spoofed), whatever it carries.
            let foreign: Vec<String> = response
                .answers()
                .iter()
                .filter(|r| !seen.contains(r.name()))
                .map(|r| {
                    format!(
                        "{} {}",
                        clean(r.name().to_string().trim_end_matches('.'), 300),
                        r.record_type()
                    )
                })
                .collect();
            if !foreign.is_empty() {
                return with_chain(
                    answer,
                    Answer::failed(
                        "MISMATCH",
                        format!(
                            "the resolver's answer for {} carried records of another owner ({}), neither the name asked nor a CNAME target: a malformed or forged answer",
                            asked.to_string().trim_end_matches('.'),
                            foreign.join(", ")
                        ),
                    ),
                );
            }
            if !followed {
                // NOERROR without data for the name (or the chain's end).
                return answer;
            }
            // The chain ends on a name this answer has no records for: ask for it.
        }
        answer
    }
}

/// An answer that ends the chain keeps the links seen before it: which name failed, or does
/// not exist, is part of the evidence.
fn with_chain(before: Answer, mut after: Answer) -> Answer {
    after.cnames = before.cnames;
    after.min_ttl = before.min_ttl;
    after
}

/// A query with no usable answer in time. The client drops, without a word to the caller,
/// an answer whose question section names another query (forged) or that cannot be parsed
/// (malformed): silence and such answers look alike here, and the evidence says both.
fn timed_out(timeout: Duration) -> String {
    format!(
        "no usable answer from the resolver within {} s (timeout): nothing came back, or only answers that did not match the question or could not be read (those are dropped)",
        timeout.as_secs_f64()
    )
}

fn rcode_word(code: ResponseCode) -> String {
    match code {
        ResponseCode::NoError => "NOERROR".into(),
        ResponseCode::NXDomain => "NXDOMAIN".into(),
        ResponseCode::ServFail => "SERVFAIL".into(),
        ResponseCode::Refused => "REFUSED".into(),
        other => other.to_str().to_ascii_uppercase(),
    }
}

/// What an error of the pool says: the zone's "no such name" / "no data", a resolver's
/// error rcode, a timeout, or a local failure.
fn from_error(e: &ProtoError, timeout: Duration) -> Answer {
    match e.kind() {
        ProtoErrorKind::NoRecordsFound { response_code, .. } => {
            let rcode = rcode_word(*response_code);
            if matches!(
                *response_code,
                ResponseCode::NoError | ResponseCode::NXDomain
            ) {
                Answer {
                    rcode,
                    ..Default::default()
                }
            } else {
                Answer::failed(&rcode, format!("the resolver answered {rcode}"))
            }
        }
        ProtoErrorKind::Timeout => Answer::failed("TIMEOUT", timed_out(timeout)),
        _ => {
            let text = e.to_string();
            let rcode = if text.contains("timed out") {
                "TIMEOUT"
            } else {
                "ERROR"
            };
            Answer::failed(rcode, text)
        }
    }
}

/// Why a name gave no address, from its two answers: the zone's answer (NXDOMAIN, a CNAME
/// chain that loops or ends on a name that does not exist, no data in both families), as
/// `Cause::Nxdomain` or `Cause::NoAnswer`, or the resolver's failure (`Cause::ResolverError`):
/// a fault of the vantage, never evidence about the name. One rule for the target's name
/// (`dns.resolve`) and a metadata host's.
pub(crate) fn no_address(name: &str, a: &Answer, aaaa: &Answer) -> (Cause, String) {
    let answered = [a, aaaa].into_iter().filter(|x| x.answered());
    for ans in answered.clone() {
        if ans.cname_loop {
            return (
                Cause::NoAnswer,
                format!(
                    "CNAME loop {}: the chain never reaches an address",
                    ans.chain_from(name)
                ),
            );
        }
    }
    for ans in answered {
        if ans.rcode == "NXDOMAIN" {
            let text = match ans.cnames.last() {
                Some(target) => format!(
                    "NXDOMAIN: the name is a CNAME ({}) to {}, which does not exist",
                    ans.chain_from(name),
                    target.trim_end_matches('.')
                ),
                None => "NXDOMAIN: the name does not exist".to_string(),
            };
            return (Cause::Nxdomain, text);
        }
    }
    let failed: Vec<String> = [(a, "A"), (aaaa, "AAAA")]
        .into_iter()
        .filter(|(ans, _)| !ans.answered())
        .map(|(ans, what)| ans.describe_failure(what))
        .collect();
    if failed.is_empty() {
        let via = a.cnames.last().or(aaaa.cnames.last()).map(|_| {
            let longer = if a.cnames.len() >= aaaa.cnames.len() {
                a
            } else {
                aaaa
            };
            format!(" (via CNAME {})", longer.chain_from(name))
        });
        (
            Cause::NoAnswer,
            format!(
                "NOERROR but no A or AAAA records{}",
                via.unwrap_or_default()
            ),
        )
    } else {
        (Cause::ResolverError, failed.join("; "))
    }
}
