//! DNS: A and AAAA queried explicitly with hickory-resolver (never the system's combined
//! lookup), the CNAME chain, the rcode and TTLs, then each address classified.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use hickory_resolver::proto::rr::RecordType;
use ipnet::IpNet;

use super::dns_query::{self, Answer, Querier};
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

/// The `dns.resolve` verdict when no address came back: the zone's answers (NXDOMAIN, a
/// CNAME loop or a CNAME to a name that does not exist, an empty NOERROR for both queries)
/// fail it; anything else is the resolver's failure.
fn no_address(host: &str, a: &Answer, aaaa: &Answer) -> Verdict {
    match dns_query::no_address(host, a, aaaa) {
        (Cause::ResolverError, why) => Verdict::unknown(
            Cause::ResolverError,
            format!("this vantage's resolver failed, so nothing is known about the name: {why}"),
        ),
        (cause, why) => Verdict::fail(Severity::High, why).cause(cause),
    }
}

/// The overall rcode of the dns block: NXDOMAIN when the zone said so, else the rcode of a
/// query that failed (a half-answered name never reads as a clean NOERROR), else the A
/// query's.
fn overall_rcode(a: &Answer, aaaa: &Answer) -> String {
    if let Some(nx) = [a, aaaa]
        .into_iter()
        .find(|x| x.answered() && x.rcode == "NXDOMAIN")
    {
        return nx.rcode.clone();
    }
    match [a, aaaa].into_iter().find(|x| !x.answered()) {
        Some(failed) => failed.rcode.clone(),
        None => a.rcode.clone(),
    }
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
    let querier = match Querier::new(choice, timeout) {
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
        querier.query(host, RecordType::A),
        querier.query(host, RecordType::AAAA)
    );
    let mut obs = DnsObservation {
        a: a.addrs.iter().map(ToString::to_string).collect(),
        aaaa: aaaa.addrs.iter().map(ToString::to_string).collect(),
        has_a: !a.addrs.is_empty(),
        min_ttl_s: [a.min_ttl, aaaa.min_ttl].into_iter().flatten().min(),
        rcode: overall_rcode(&a, &aaaa),
        a_rcode: a.rcode.clone(),
        aaaa_rcode: aaaa.rcode.clone(),
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
    if addrs.is_empty() {
        rec.record(CheckId::DnsResolve, no_address(host, &a, &aaaa), started);
        return (obs, Vec::new());
    }
    rec.record(CheckId::DnsResolve, resolved(&obs, &a, &aaaa), started);

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

/// The `dns.resolve` verdict when addresses came back: a pass when both queries were
/// answered; when one failed (a timeout, SERVFAIL) the name is half-answered: what the
/// failed family holds was never seen, so the check is `unknown` (`checks.md` 4.1), with
/// what the other family answered.
fn resolved(obs: &DnsObservation, a: &Answer, aaaa: &Answer) -> Verdict {
    let mut listing = format!("{} A, {} AAAA", obs.a.len(), obs.aaaa.len());
    if !obs.cname.is_empty() {
        listing.push_str(&format!(" via CNAME {}", obs.cname.join(" -> ")));
    }
    let (failed, what, other, seen) = match (a.answered(), aaaa.answered()) {
        (true, true) => return answered(a, aaaa, &listing),
        (false, _) => (a, "A", "AAAA", &obs.aaaa),
        (true, false) => (aaaa, "AAAA", "A", &obs.a),
    };
    let family = if what == "A" { "IPv4" } else { "IPv6" };
    Verdict::unknown(
        Cause::ResolverError,
        format!(
            "{}; {other} answered ({}), so whether the name has {family} addresses is unknown",
            failed.describe_failure(what),
            seen.join(", ")
        ),
    )
}

/// The `dns.resolve` verdict when both queries were answered and addresses came back: a
/// pass, saying each family's rcode when they differ; unless one family answered NXDOMAIN
/// while the other has records. The zone then says the name does not exist and has records
/// at once (RFC 4074 section 4.2 names the misbehaviour), and a caching resolver keeps a
/// name's NXDOMAIN for every type (RFC 2308 section 5; RFC 8020 for the names below it), so
/// clients behind it fail to resolve the family that has records too: a fail, `high` (a
/// DNS rule real clients break on, `checks.md` 3), cause `nxdomain` (the zone's answer).
fn answered(a: &Answer, aaaa: &Answer, listing: &str) -> Verdict {
    for (nx, what, other, their) in [(a, "A", aaaa, "AAAA"), (aaaa, "AAAA", a, "A")] {
        if nx.rcode == "NXDOMAIN" && !other.addrs.is_empty() {
            return Verdict::fail(
                Severity::High,
                format!(
                    "{what} answered NXDOMAIN while {their} answered {} with records ({listing}): the zone says the name does not exist and has {their} records at once; a caching resolver keeps that NXDOMAIN for every type of the name (RFC 2308 section 5, RFC 8020), so clients behind it then fail to resolve {their} too. The zone (or the DNS load balancer in front of it) must answer NOERROR without data for a type it has no records of",
                    other.rcode
                ),
            )
            .cause(Cause::Nxdomain);
        }
    }
    if a.rcode == aaaa.rcode {
        Verdict::pass(format!("{}: {listing}", a.rcode))
    } else {
        Verdict::pass(format!("A {}, AAAA {}: {listing}", a.rcode, aaaa.rcode))
    }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
