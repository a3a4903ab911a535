//! Connect: a TCP connection to every resolved address the egress policy admits, both
//! families, concurrently, at most [`MAX_ADDRESSES`]. What was not tried (refused by the
//! policy, beyond the cap, stopped by this vantage's own routing) is named in the evidence
//! and never passed (`checks.md` 4.1); the verdicts are in `connect_verdict.rs`.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use super::connect_verdict::{self, Tried};
use super::http::{fmt_wait, io_cause};
use super::verdict::{Recorder, Verdict};
use crate::catalog::CheckId;
use crate::egress::{self, EgressPolicy};
use crate::model::Cause;

/// One address's attempt.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub addr: SocketAddr,
    pub elapsed_ms: u64,
    pub result: Result<(), (Cause, String)>,
    /// connect() failed on this vantage itself, by its own routing: nothing was sent (the
    /// result's cause is then `no-route`).
    pub route: Option<LocalRoute>,
}

/// What this vantage's own routing table did with an address connect() failed on at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalRoute {
    /// No route, or no source address (ENETUNREACH, EADDRNOTAVAIL).
    Missing,
    /// A `blackhole` route (EINVAL).
    Blackhole,
    /// A `prohibit` route (EACCES).
    Prohibit,
    /// An `unreachable` route (EHOSTUNREACH).
    Unreachable,
}

impl LocalRoute {
    /// `a blackhole route on this vantage`.
    pub fn words(self) -> &'static str {
        match self {
            LocalRoute::Missing => "no route (or no source address) on this vantage",
            LocalRoute::Blackhole => "a blackhole route on this vantage",
            LocalRoute::Prohibit => "a prohibit route on this vantage",
            LocalRoute::Unreachable => "an unreachable route on this vantage",
        }
    }
}

async fn attempt(policy: &EgressPolicy, addr: SocketAddr, timeout: Duration) -> Attempt {
    let started = Instant::now();
    // The policy is asked where the connection is made, whoever called.
    if let Err(refused) = policy.check(addr.ip()) {
        return Attempt {
            addr,
            elapsed_ms: 0,
            result: Err((Cause::PolicyRefused, refused.to_string())),
            route: None,
        };
    }
    let mut route = None;
    let result = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
        Err(_) => Err((
            Cause::Timeout,
            format!(
                "connect: no answer to the TCP handshake within {}; a firewall that drops packets looks like this",
                fmt_wait(timeout)
            ),
        )),
        Ok(Err(e)) => match local_route(&e, addr) {
            Some(LocalRoute::Missing) => {
                route = Some(LocalRoute::Missing);
                Err((
                    Cause::NoRoute,
                    format!(
                        "connect: {e}: this vantage has no route (or no source address) to {}, so nothing was sent",
                        family(addr)
                    ),
                ))
            }
            Some(kind) => {
                route = Some(kind);
                Err((
                    Cause::NoRoute,
                    format!(
                        "connect: {e}: {} for {}: its own routing table stops the packets, so nothing was sent",
                        kind.words(),
                        addr.ip()
                    ),
                ))
            }
            None => Err((
                io_cause(&e).unwrap_or(Cause::Unreachable),
                format!("connect: {e}"),
            )),
        },
        Ok(Ok(_stream)) => Ok(()),
    };
    Attempt {
        addr,
        elapsed_ms: started.elapsed().as_millis() as u64,
        result,
        route,
    }
}

fn family(addr: SocketAddr) -> &'static str {
    if addr.is_ipv4() {
        "IPv4 addresses like this one"
    } else {
        "IPv6 addresses like this one"
    }
}

/// Whether a failed connect() is this host's own routing rather than an answer from the
/// network: no route or no source address (ENETUNREACH, EADDRNOTAVAIL), or a `blackhole`
/// (EINVAL), `prohibit` (EACCES) or `unreachable` (EHOSTUNREACH) route in its own table. A
/// router's ICMP answer can read ENETUNREACH or EHOSTUNREACH too, after the SYN left: so the
/// kernel is asked again without sending anything (a UDP socket's connect() only looks the
/// route up). The same failure there: nothing was sent, the vantage's routing stopped it.
pub fn local_route(e: &std::io::Error, addr: SocketAddr) -> Option<LocalRoute> {
    use std::io::ErrorKind as K;
    let kind = match e.kind() {
        K::NetworkUnreachable | K::AddrNotAvailable => LocalRoute::Missing,
        K::InvalidInput => LocalRoute::Blackhole,
        K::PermissionDenied => LocalRoute::Prohibit,
        K::HostUnreachable => LocalRoute::Unreachable,
        _ => return None,
    };
    let local: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let sock = match std::net::UdpSocket::bind(local) {
        // No socket of that family at all (IPv6 disabled): no route either.
        Err(_) => return (kind == LocalRoute::Missing).then_some(kind),
        Ok(sock) => sock,
    };
    let again = sock.connect(addr).err()?;
    let same = match kind {
        LocalRoute::Missing => matches!(again.kind(), K::NetworkUnreachable | K::AddrNotAvailable),
        _ => again.kind() == e.kind(),
    };
    same.then_some(kind)
}

/// Whether a failed connect() is this host's own missing route or source address: see
/// [`local_route`].
pub fn no_route_here(e: &std::io::Error, addr: SocketAddr) -> bool {
    local_route(e, addr).is_some()
}

/// Addresses tried at most: a DNS answer with hundreds of records must not turn one check
/// into hundreds of connections. The addresses beyond it are named, and leave `net.connect`
/// `unknown` (cause `size-cap`): an address not tried is no evidence.
pub const MAX_ADDRESSES: usize = 16;

/// What a vantage declared to have no IPv6 says in the evidence: the setting, by its names.
pub const NO_IPV6: &str =
    "this vantage is set to have no IPv6 (--no-ipv6; probe.ipv6 = false in a coordinator's configuration)";

/// The addresses tried: both families when both are present (half the cap each, the rest
/// to whichever has more), in the order DNS gave them; and those left out by the cap.
fn choose(addrs: &[IpAddr]) -> (Vec<IpAddr>, Vec<IpAddr>) {
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
    let untried = addrs
        .iter()
        .filter(|a| !chosen.contains(a))
        .copied()
        .collect();
    (chosen, untried)
}

/// Connect to every address; record `net.connect` and `net.ipv6`. Returns the addresses
/// that accepted a connection, IPv4 first.
///
/// `aaaa_failed` says why the AAAA query gave no answer, when it failed: then no IPv6
/// address is no evidence that the name has none, and `net.ipv6` is `unknown`. `ipv6`
/// false: the vantage declared it has no IPv6, so IPv6 addresses are not tried and
/// `net.ipv6` is left out (skipped, saying so), never judged. `localhost`: the target is
/// the name `localhost` and `all` its loopbacks (see [`Tried::localhost`]).
#[allow(clippy::too_many_arguments)]
pub async fn connect_all(
    policy: &EgressPolicy,
    all: &[IpAddr],
    aaaa_failed: Option<&str>,
    ipv6: bool,
    localhost: bool,
    port: u16,
    timeout: Duration,
    rec: &mut Recorder,
) -> Vec<SocketAddr> {
    let started = Instant::now();
    let (addrs, refused) = policy.partition(all);
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
    let refused: Vec<egress::Refused> = refused
        .into_iter()
        .filter(|r| ipv6 || r.addr.is_ipv4())
        .collect();
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
    let (chosen, untried) = choose(&addrs);
    let attempts = futures::future::join_all(
        chosen
            .iter()
            .map(|&ip| attempt(policy, SocketAddr::new(ip, port), timeout)),
    )
    .await;
    let tried = Tried {
        all,
        attempts: &attempts,
        refused: &refused,
        untried: &untried,
        localhost,
    };
    rec.record(
        CheckId::NetConnect,
        connect_verdict::net_connect(&tried),
        started,
    );
    let v6_verdict = if left_out > 0 {
        Verdict::skip(format!("{NO_IPV6}; {left_out} IPv6 addresses not tried"))
    } else if !ipv6 {
        Verdict::skip(format!("no IPv6 address, and {NO_IPV6}"))
    } else {
        connect_verdict::net_ipv6(&tried, aaaa_failed)
    };
    rec.record(CheckId::NetIpv6, v6_verdict, started);

    let mut ok: Vec<SocketAddr> = attempts
        .iter()
        .filter(|a| a.result.is_ok())
        .map(|a| a.addr)
        .collect();
    ok.sort_by_key(|a| a.is_ipv6());
    ok
}

#[cfg(test)]
#[path = "connect_ipv6_tests.rs"]
mod ipv6_tests;
#[cfg(test)]
#[path = "connect_tests.rs"]
mod tests;
