//! Connect: a TCP connection to every resolved address the egress policy admits, both
//! families, concurrently. A refused address is named in the evidence; when the policy
//! refuses every address, `net.connect` is `unknown` (no evidence about the target).

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use super::http::{fmt_wait, io_cause};
use super::verdict::{Recorder, Verdict};
use crate::catalog::CheckId;
use crate::egress::{self, EgressPolicy};
use crate::model::{Cause, Severity};

/// One address's attempt.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub addr: SocketAddr,
    pub elapsed_ms: u64,
    pub result: Result<(), (Cause, String)>,
}

async fn attempt(policy: &EgressPolicy, addr: SocketAddr, timeout: Duration) -> Attempt {
    let started = Instant::now();
    // The policy is asked where the connection is made, whoever called.
    if let Err(refused) = policy.check(addr.ip()) {
        return Attempt {
            addr,
            elapsed_ms: 0,
            result: Err((Cause::PolicyRefused, refused.to_string())),
        };
    }
    let result = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
        Err(_) => Err((
            Cause::Timeout,
            format!(
                "connect: no answer to the TCP handshake within {}; a firewall that drops packets looks like this",
                fmt_wait(timeout)
            ),
        )),
        Ok(Err(e)) if no_route_here(&e, addr) => Err((
            Cause::NoRoute,
            format!(
                "connect: {e}: this vantage has no route (or no source address) to {}, so nothing was sent",
                family(addr)
            ),
        )),
        Ok(Err(e)) => Err((
            io_cause(&e).unwrap_or(Cause::Unreachable),
            format!("connect: {e}"),
        )),
        Ok(Ok(_stream)) => Ok(()),
    };
    Attempt {
        addr,
        elapsed_ms: started.elapsed().as_millis() as u64,
        result,
    }
}

fn family(addr: SocketAddr) -> &'static str {
    if addr.is_ipv4() {
        "IPv4 addresses like this one"
    } else {
        "IPv6 addresses like this one"
    }
}

/// Whether a failed connect() is this host's own missing route or source address
/// (ENETUNREACH, EADDRNOTAVAIL) rather than a router's ICMP answer (which can also read
/// ENETUNREACH after the SYN left). The kernel is asked again without sending anything: a
/// UDP socket's connect() only looks the route up. No route there either: nothing was sent.
pub fn no_route_here(e: &std::io::Error, addr: SocketAddr) -> bool {
    use std::io::ErrorKind as K;
    if !matches!(e.kind(), K::NetworkUnreachable | K::AddrNotAvailable) {
        return false;
    }
    let local: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    match std::net::UdpSocket::bind(local) {
        // No socket of that family at all (IPv6 disabled): no route either.
        Err(_) => true,
        Ok(sock) => sock
            .connect(addr)
            .is_err_and(|e| matches!(e.kind(), K::NetworkUnreachable | K::AddrNotAvailable)),
    }
}

fn cause_word(cause: Cause) -> &'static str {
    match cause {
        Cause::NoRoute => "not tried (no route from this vantage)",
        Cause::Timeout => "timeout",
        Cause::Refused => "refused",
        Cause::Reset => "reset",
        _ => "unreachable",
    }
}

/// Connect to every address; record `net.connect` and `net.ipv6`. Returns the addresses
/// that accepted a connection, IPv4 first.
/// Addresses tried at most: a DNS answer with hundreds of records must not turn one check
/// into hundreds of connections.
pub const MAX_ADDRESSES: usize = 16;

/// What a vantage declared to have no IPv6 says in the evidence: the setting, by its names.
pub const NO_IPV6: &str =
    "this vantage is set to have no IPv6 (--no-ipv6; probe.ipv6 = false in a coordinator's configuration)";

/// `aaaa_failed` says why the AAAA query gave no answer, when it failed: then no IPv6
/// address is no evidence that the name has none, and `net.ipv6` is `unknown`. `ipv6`
/// false: the vantage declared it has no IPv6, so IPv6 addresses are not tried and
/// `net.ipv6` is left out (skipped, saying so), never judged.
pub async fn connect_all(
    policy: &EgressPolicy,
    addrs: &[IpAddr],
    aaaa_failed: Option<&str>,
    ipv6: bool,
    port: u16,
    timeout: Duration,
    rec: &mut Recorder,
) -> Vec<SocketAddr> {
    let started = Instant::now();
    let (addrs, refused) = policy.partition(addrs);
    if addrs.is_empty() {
        rec.record(
            CheckId::NetConnect,
            egress::refused_verdict(egress::summarise(&refused)),
            started,
        );
        rec.record(
            CheckId::NetIpv6,
            Verdict::skip("the egress policy refused every address"),
            started,
        );
        return Vec::new();
    }
    // A vantage without IPv6 tries only IPv4; what it left out is said, never judged.
    let left_out = if ipv6 {
        0
    } else {
        addrs.iter().filter(|a| a.is_ipv6()).count()
    };
    let addrs: Vec<IpAddr> = addrs.into_iter().filter(|a| ipv6 || a.is_ipv4()).collect();
    if addrs.is_empty() {
        rec.record(
            CheckId::NetConnect,
            Verdict::unknown(
                Cause::NoRoute,
                format!(
                    "the target has only IPv6 addresses ({left_out}) and {NO_IPV6}: nothing was sent, so whether the target accepts connections was not observed; check it from a vantage with IPv6 (an agent without --no-ipv6)"
                ),
            ),
            started,
        );
        rec.record(
            CheckId::NetIpv6,
            Verdict::skip(format!("{NO_IPV6}; {left_out} IPv6 addresses not tried")),
            started,
        );
        return Vec::new();
    }
    let addrs = addrs.as_slice();
    // Both families are tried when both are present, within the cap.
    let mut chosen: Vec<IpAddr> = addrs
        .iter()
        .filter(|a| a.is_ipv4())
        .take(MAX_ADDRESSES / 2)
        .copied()
        .collect();
    chosen.extend(addrs.iter().filter(|a| a.is_ipv6()).take(MAX_ADDRESSES / 2));
    for a in addrs {
        if chosen.len() >= MAX_ADDRESSES {
            break;
        }
        if !chosen.contains(a) {
            chosen.push(*a);
        }
    }
    let untried = addrs.len().saturating_sub(chosen.len());
    let attempts = futures::future::join_all(
        chosen
            .iter()
            .map(|&ip| attempt(policy, SocketAddr::new(ip, port), timeout)),
    )
    .await;
    let line = |a: &Attempt| match &a.result {
        Ok(()) => format!("{} connected in {} ms", a.addr, a.elapsed_ms),
        Err((cause, msg)) => format!(
            "{} {} after {} ms ({msg})",
            a.addr,
            cause_word(*cause),
            a.elapsed_ms
        ),
    };
    let mut observed = attempts.iter().map(line).collect::<Vec<_>>().join("; ");
    if untried > 0 {
        observed.push_str(&format!(
            " (+{untried} more addresses not tried: the cap is {MAX_ADDRESSES})"
        ));
    }
    if !refused.is_empty() {
        observed.push_str(&format!("; not connected: {}", egress::summarise(&refused)));
    }
    let ok: Vec<SocketAddr> = attempts
        .iter()
        .filter(|a| a.result.is_ok())
        .map(|a| a.addr)
        .collect();
    // net.connect fails when no address connects, or when an IPv4 address fails (IPv6-only
    // failures are net.ipv6's business).
    let failed = if ok.is_empty() {
        attempts.iter().find(|a| a.result.is_err())
    } else {
        attempts
            .iter()
            .find(|a| a.addr.is_ipv4() && a.result.is_err())
    };
    let cause_of = |a: &Attempt| a.result.as_ref().err().map(|e| e.0);
    // An address this vantage has no route to was never tried: only the others are evidence.
    let judged = |a: &&Attempt| {
        a.result.is_err()
            && cause_of(a) != Some(Cause::NoRoute)
            && (ok.is_empty() || a.addr.is_ipv4())
    };
    let unrouted =
        |a: &&Attempt| cause_of(a) == Some(Cause::NoRoute) && (ok.is_empty() || a.addr.is_ipv4());
    let verdict = match (attempts.iter().find(judged), failed) {
        (Some(first), _) => Verdict::fail(Severity::High, observed.clone())
            .cause(cause_of(first).unwrap_or(Cause::Unreachable)),
        (None, Some(_)) if attempts.iter().any(|a| unrouted(&a)) => Verdict::unknown(
            Cause::NoRoute,
            format!(
                "{observed}. This vantage has no route to {}: nothing was sent there, so whether the target accepts connections on it was not observed; give the vantage's network a route for that family",
                if attempts.iter().filter(unrouted).all(|a| a.addr.is_ipv6()) {
                    "these IPv6 addresses"
                } else {
                    "these addresses"
                }
            ),
        ),
        (None, _) => Verdict::pass(observed.clone()),
    };
    rec.record(CheckId::NetConnect, verdict, started);

    let v6: Vec<&Attempt> = attempts.iter().filter(|a| a.addr.is_ipv6()).collect();
    let v4_ok = ok.iter().any(SocketAddr::is_ipv4);
    let v6_verdict = if left_out > 0 {
        Verdict::skip(format!("{NO_IPV6}; {left_out} IPv6 addresses not tried"))
    } else if !ipv6 {
        Verdict::skip(format!("no IPv6 address, and {NO_IPV6}"))
    } else if let (true, Some(why)) = (v6.is_empty(), aaaa_failed) {
        Verdict::unknown(
            Cause::ResolverError,
            format!("{why}, so whether the name has IPv6 addresses, and whether they connect, is unknown"),
        )
    } else if v6.is_empty() {
        Verdict::skip("no IPv6 address")
    } else if !v4_ok {
        // The rule compares the families: with no IPv4 address that connects there is
        // nothing to compare with (net.connect judges the IPv6 addresses alone).
        Verdict::skip(
            "no IPv4 address connected to compare with; net.connect judges the IPv6 addresses",
        )
    } else if v6
        .iter()
        .all(|a| a.result.as_ref().is_err_and(|e| e.0 == Cause::NoRoute))
    {
        Verdict::unknown(
            Cause::NoRoute,
            format!(
                "this vantage has no IPv6 route: connect() to every IPv6 address failed on the vantage itself, nothing was sent, so whether the target's IPv6 addresses work was not observed ({observed}); a vantage that will never have IPv6 says so with --no-ipv6 (vantage check, vantage-agent) or probe.ipv6 = false, and IPv6 is then left out of its verdicts"
            ),
        )
    } else if v6.iter().all(|a| a.result.is_err()) && v4_ok {
        Verdict::warn(
            Severity::Low,
            format!("every IPv6 connect failed while IPv4 works: {observed}"),
        )
        .cause(
            v6[0]
                .result
                .as_ref()
                .err()
                .map(|e| e.0)
                .unwrap_or(Cause::Unreachable),
        )
    } else {
        Verdict::pass(format!(
            "{} of {} IPv6 addresses connected",
            v6.iter().filter(|a| a.result.is_ok()).count(),
            v6.len()
        ))
    };
    rec.record(CheckId::NetIpv6, v6_verdict, started);

    let mut ok = ok;
    ok.sort_by_key(|a| a.is_ipv6());
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a failure of this host's own routing is "no route here": the kernel still has a
    /// route to loopback, so an ENETUNREACH for it would be a router's answer (evidence),
    /// and other errors never ask.
    #[test]
    fn no_route_here_asks_the_kernel_for_the_route() {
        let lo: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let e = |k| std::io::Error::from(k);
        assert!(!no_route_here(
            &e(std::io::ErrorKind::NetworkUnreachable),
            lo
        ));
        assert!(!no_route_here(&e(std::io::ErrorKind::AddrNotAvailable), lo));
        assert!(!no_route_here(
            &e(std::io::ErrorKind::ConnectionRefused),
            lo
        ));
        assert!(!no_route_here(&e(std::io::ErrorKind::HostUnreachable), lo));
    }
}
