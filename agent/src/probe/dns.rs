//! DNS: A and AAAA queried explicitly with hickory-resolver (never the system's combined
//! lookup), the CNAME chain, the rcode and TTLs, then each address classified.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use hickory_resolver::config::{NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{RData, RecordType};
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::proto::ProtoErrorKind;
use hickory_resolver::{ResolveError, Resolver};
use ipnet::IpNet;

use super::verdict::{Recorder, Verdict};
use crate::catalog::CheckId;
use crate::model::{Cause, DnsObservation, Severity};
use crate::netclass;

/// Parse a `--nameserver` value (`IP:PORT`); an address without its port is refused with
/// the fix (`:53`). One parser for `vantage check` and `vantage-agent`.
pub fn parse_nameserver(s: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    match s.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => Err(format!("`{s}` has no port; write {ip}:53")),
        Ok(IpAddr::V6(ip)) => Err(format!("`{s}` has no port; write [{ip}]:53")),
        Err(_) => Err(format!(
            "`{s}` is not IP:PORT; write e.g. 198.51.100.53:53 or [2001:db8::53]:53"
        )),
    }
}

/// Which resolver a vantage uses.
#[derive(Debug, Clone, Default)]
pub struct ResolverChoice {
    /// Name servers to ask instead of the system's (`/etc/resolv.conf`).
    pub nameservers: Vec<SocketAddr>,
}

/// The outcome of one record-type query.
#[derive(Debug, Default)]
struct Answer {
    addrs: Vec<IpAddr>,
    cnames: Vec<String>,
    min_ttl: Option<u32>,
    /// `NOERROR` (possibly with no data), `NXDOMAIN`, `SERVFAIL`, `REFUSED`, `TIMEOUT`, …
    rcode: String,
    failure: Option<String>,
}

pub(crate) fn build_resolver(
    choice: &ResolverChoice,
    timeout: Duration,
) -> Result<Resolver<TokioConnectionProvider>, String> {
    let mut opts = ResolverOpts::default();
    opts.timeout = timeout;
    opts.attempts = 1;
    opts.cache_size = 0;
    opts.use_hosts_file = ResolveHosts::Never;
    opts.edns0 = true;
    let builder = if choice.nameservers.is_empty() {
        Resolver::builder_tokio()
            .map_err(|e| format!("reading the system resolver configuration: {e}"))?
    } else {
        let mut config = ResolverConfig::new();
        for ns in &choice.nameservers {
            config.add_name_server(NameServerConfig::new(*ns, Protocol::Udp));
            config.add_name_server(NameServerConfig::new(*ns, Protocol::Tcp));
        }
        Resolver::builder_with_config(config, TokioConnectionProvider::default())
    };
    Ok(builder.with_options(opts).build())
}

/// One query, bounded as a whole by `timeout`: the resolver may try several transports (UDP,
/// then TCP) and servers, each with its own timeout; the lookup never takes longer than one.
async fn query(
    resolver: &Resolver<TokioConnectionProvider>,
    name: &str,
    rtype: RecordType,
    timeout: Duration,
) -> Answer {
    let fqdn = format!("{}.", name.trim_end_matches('.'));
    let Ok(result) = tokio::time::timeout(timeout, resolver.lookup(fqdn.as_str(), rtype)).await
    else {
        return Answer {
            rcode: "TIMEOUT".into(),
            failure: Some(format!(
                "no answer from the resolver within {} s (timeout)",
                timeout.as_secs_f64()
            )),
            ..Default::default()
        };
    };
    match result {
        Ok(lookup) => {
            let mut answer = Answer {
                rcode: "NOERROR".into(),
                ..Default::default()
            };
            for record in lookup.records() {
                answer.min_ttl = Some(answer.min_ttl.map_or(record.ttl(), |t| t.min(record.ttl())));
                match record.data() {
                    RData::A(a) => answer.addrs.push(IpAddr::V4(a.0)),
                    RData::AAAA(a) => answer.addrs.push(IpAddr::V6(a.0)),
                    // A name the zone chose: shown only through the one cleaning function.
                    RData::CNAME(c) => answer
                        .cnames
                        .push(super::observed::clean(&c.0.to_string(), 300)),
                    _ => {}
                }
            }
            answer
        }
        Err(e) => failed(&e),
    }
}

fn failed(e: &ResolveError) -> Answer {
    let mut answer = Answer::default();
    match e.proto().map(|p| p.kind()) {
        Some(ProtoErrorKind::NoRecordsFound { response_code, .. }) => {
            answer.rcode = match *response_code {
                ResponseCode::NoError => "NOERROR".into(),
                ResponseCode::NXDomain => "NXDOMAIN".into(),
                ResponseCode::ServFail => "SERVFAIL".into(),
                ResponseCode::Refused => "REFUSED".into(),
                other => other.to_str().to_ascii_uppercase(),
            };
            if !matches!(
                *response_code,
                ResponseCode::NoError | ResponseCode::NXDomain
            ) {
                answer.failure = Some(answer.rcode.clone());
            }
        }
        Some(ProtoErrorKind::Timeout) => {
            answer.rcode = "TIMEOUT".into();
            answer.failure = Some("no answer from the resolver (timeout)".into());
        }
        _ => {
            let text = e.to_string();
            answer.rcode = if text.contains("timed out") {
                "TIMEOUT".into()
            } else {
                "ERROR".into()
            };
            answer.failure = Some(text);
        }
    }
    answer
}

impl Answer {
    /// The resolver answered for the name (NOERROR, with or without data, or NXDOMAIN): an
    /// observation of the zone. A timeout, SERVFAIL, REFUSED or a local error is a fault of
    /// the vantage's resolver, never evidence about the target (`checks.md` 4.1).
    fn answered(&self) -> bool {
        self.failure.is_none()
    }

    fn describe_failure(&self, what: &str) -> String {
        format!(
            "the {what} query failed ({}): {}",
            self.rcode,
            self.failure.as_deref().unwrap_or("no detail")
        )
    }
}

/// The `dns.resolve` verdict when no address came back: NXDOMAIN or an empty NOERROR for
/// both queries are the zone's answers; anything else is the resolver's failure.
fn no_address(a: &Answer, aaaa: &Answer) -> Verdict {
    if a.rcode == "NXDOMAIN" || aaaa.rcode == "NXDOMAIN" {
        return Verdict::fail(Severity::High, "NXDOMAIN: the name does not exist")
            .cause(Cause::Nxdomain);
    }
    if a.answered() && aaaa.answered() {
        return Verdict::fail(Severity::High, "NOERROR but no A or AAAA records")
            .cause(Cause::NoAnswer);
    }
    let failed: Vec<String> = [(a, "A"), (aaaa, "AAAA")]
        .into_iter()
        .filter(|(ans, _)| !ans.answered())
        .map(|(ans, what)| ans.describe_failure(what))
        .collect();
    Verdict::unknown(
        Cause::ResolverError,
        format!(
            "this vantage's resolver failed, so nothing is known about the name: {}",
            failed.join("; ")
        ),
    )
}

/// Resolve `host` and record `dns.resolve`, `dns.a-record` and `dns.global-addresses`.
/// Returns the observation and the addresses to connect to (empty when resolution failed).
pub async fn resolve(
    host: &str,
    choice: &ResolverChoice,
    assume_global: &[IpNet],
    timeout: Duration,
    rec: &mut Recorder,
) -> (DnsObservation, Vec<IpAddr>) {
    let started = Instant::now();
    let resolver = match build_resolver(choice, timeout) {
        Ok(r) => r,
        Err(e) => {
            rec.record(
                CheckId::DnsResolve,
                Verdict::unknown(
                    Cause::ResolverError,
                    format!("this vantage's resolver could not be used: {e}"),
                ),
                started,
            );
            return (
                DnsObservation {
                    rcode: "ERROR".into(),
                    ..Default::default()
                },
                Vec::new(),
            );
        }
    };
    let (a, aaaa) = tokio::join!(
        query(&resolver, host, RecordType::A, timeout),
        query(&resolver, host, RecordType::AAAA, timeout)
    );
    let mut obs = DnsObservation {
        a: a.addrs.iter().map(ToString::to_string).collect(),
        aaaa: aaaa.addrs.iter().map(ToString::to_string).collect(),
        has_a: !a.addrs.is_empty(),
        min_ttl_s: [a.min_ttl, aaaa.min_ttl].into_iter().flatten().min(),
        ..Default::default()
    };
    let mut cname = a.cnames.clone();
    for c in &aaaa.cnames {
        if !cname.contains(c) {
            cname.push(c.clone());
        }
    }
    obs.cname = cname;
    let addrs: Vec<IpAddr> = a.addrs.iter().chain(aaaa.addrs.iter()).copied().collect();
    // The A answer decides the rcode unless it failed and AAAA did not.
    obs.rcode = if a.failure.is_none() || aaaa.failure.is_some() {
        a.rcode.clone()
    } else {
        aaaa.rcode.clone()
    };

    if addrs.is_empty() {
        rec.record(CheckId::DnsResolve, no_address(&a, &aaaa), started);
        return (obs, Vec::new());
    }
    let mut listing = format!("{} A, {} AAAA", obs.a.len(), obs.aaaa.len());
    if !obs.cname.is_empty() {
        listing.push_str(&format!(" via CNAME {}", obs.cname.join(" -> ")));
    }
    rec.record(
        CheckId::DnsResolve,
        Verdict::pass(format!("NOERROR: {listing}")),
        started,
    );

    rec.record(
        CheckId::DnsARecord,
        if obs.has_a {
            Verdict::pass(format!("A {}", obs.a.join(", ")))
        } else if !a.answered() {
            // AAAA answered, the A query did not: that is no evidence that A is absent.
            Verdict::unknown(
                Cause::ResolverError,
                format!(
                    "{}; AAAA answered ({}), so whether an A record exists is unknown",
                    a.describe_failure("A"),
                    obs.aaaa.join(", ")
                ),
            )
        } else {
            Verdict::fail(
                Severity::High,
                format!(
                    "AAAA only ({}); IPv4-only clients cannot connect",
                    obs.aaaa.join(", ")
                ),
            )
            .cause(Cause::NoAnswer)
        },
        started,
    );

    let bad: Vec<String> = addrs
        .iter()
        .map(|&ip| (ip, netclass::classify(ip, assume_global)))
        .filter(|(_, class)| !class.global)
        .map(|(ip, class)| netclass::describe(ip, class))
        .collect();
    obs.all_global = bad.is_empty();
    rec.record(
        CheckId::DnsGlobalAddresses,
        if bad.is_empty() {
            Verdict::pass("every address is globally routable")
        } else {
            Verdict::fail(Severity::High, bad.join("; ")).cause(Cause::NonGlobal)
        },
        started,
    );
    (obs, addrs)
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
