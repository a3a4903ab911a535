//! The verdicts of `net.connect` and `net.ipv6` from what `connect_all` tried (`checks.md`
//! 2.2, 4.1). An address counts as evidence only when a connection to it was attempted and
//! answered: one the egress policy refused, one beyond the cap and one this vantage's own
//! routing stopped were never tried, so they leave the check `unknown`, never `pass`. An
//! IPv4 address written as IPv6 (`::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is not an IPv6
//! address of the target: `net.ipv6` never passes on one.

use std::net::{IpAddr, Ipv6Addr};

use super::connect::{Attempt, LocalRoute, MAX_ADDRESSES};
use super::verdict::Verdict;
use crate::egress::{self, Refused};
use crate::model::{Cause, Severity};
use crate::netclass::{embedded_v4, Embedding};

/// What `connect_all` tried, and what it did not.
pub(super) struct Tried<'a> {
    /// Every address the name resolved to, in DNS order.
    pub all: &'a [IpAddr],
    pub attempts: &'a [Attempt],
    /// Addresses the egress policy refused (of the families this vantage tries).
    pub refused: &'a [Refused],
    /// Addresses admitted but beyond [`MAX_ADDRESSES`].
    pub untried: &'a [IpAddr],
    /// The target is the name `localhost` (RFC 6761): its addresses are the two loopbacks,
    /// and a client that resolves it tries both, so one that accepts serves it. A local
    /// server listening on one loopback only is the usual case, not a fault.
    pub localhost: bool,
}

/// What a `localhost` target's evidence adds when a loopback refused while the other
/// accepted.
const LOCALHOST_NOTE: &str = "localhost names both loopbacks (RFC 6761) and a client tries both, so one that accepts serves it";

/// Whether a connection to `ip` goes out over IPv4: an IPv4 address, or its IPv4-mapped
/// form (the kernel sends it as IPv4).
fn ipv4_on_the_wire(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(_) => true,
        IpAddr::V6(v6) => matches!(embedded_v4(v6), Some((_, Embedding::Mapped))),
    }
}

/// An IPv6 address of the target's own: not one that carries an IPv4 address.
fn native_v6(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if embedded_v4(v6).is_none())
}

fn line(a: &Attempt) -> String {
    match &a.result {
        Ok(()) => format!("{} connected in {} ms", a.addr, a.elapsed_ms),
        Err((cause, msg)) => format!(
            "{} {} after {} ms ({msg})",
            a.addr,
            cause_word(*cause),
            a.elapsed_ms
        ),
    }
}

fn cause_word(cause: Cause) -> &'static str {
    match cause {
        Cause::NoRoute => "not tried (this vantage's own routing)",
        Cause::Timeout => "timeout",
        Cause::Refused => "refused",
        Cause::Reset => "reset",
        _ => "unreachable",
    }
}

fn cause_of(a: &Attempt) -> Cause {
    a.result
        .as_ref()
        .err()
        .map(|e| e.0)
        .unwrap_or(Cause::Unreachable)
}

/// `a, b, c (+2 more)`.
fn list(addrs: &[IpAddr]) -> String {
    const SHOWN: usize = 8;
    let mut parts: Vec<String> = addrs.iter().take(SHOWN).map(ToString::to_string).collect();
    if addrs.len() > SHOWN {
        parts.push(format!("+{} more", addrs.len() - SHOWN));
    }
    parts.join(", ")
}

/// Each attempt, then what was not tried and why.
pub(super) fn observed(t: &Tried<'_>) -> String {
    let mut observed = t.attempts.iter().map(line).collect::<Vec<_>>().join("; ");
    if !t.untried.is_empty() {
        observed.push_str(&format!(
            " (+{} more addresses not tried: the cap is {MAX_ADDRESSES} addresses per check: {})",
            t.untried.len(),
            list(t.untried)
        ));
    }
    if !t.refused.is_empty() {
        observed.push_str(&format!(
            "; not connected: {}",
            egress::summarise(t.refused)
        ));
    }
    observed
}

/// The refused addresses nothing else observed: an IPv4-mapped form of an address that was
/// tried is that address, reached the same way.
fn unseen_refusals<'a>(t: &'a Tried<'_>) -> Vec<&'a Refused> {
    t.refused
        .iter()
        .filter(|r| {
            let same = match r.addr {
                IpAddr::V6(v6) => match embedded_v4(v6) {
                    Some((v4, Embedding::Mapped)) => Some(IpAddr::V4(v4)),
                    _ => None,
                },
                IpAddr::V4(_) => None,
            };
            !same.is_some_and(|s| t.attempts.iter().any(|a| a.addr.ip() == s))
        })
        .collect()
}

/// `net.connect`: fails when an address that counts fails (any address when none
/// connected; else an IPv4 one: IPv6-only failures are `net.ipv6`'s); `unknown` when an
/// address that counts was stopped by this vantage's routing, refused by its policy or left
/// out by the cap; `pass` only when every address was tried and every one that counts
/// connected.
pub(super) fn net_connect(t: &Tried<'_>) -> Verdict {
    let observed = observed(t);
    let any_ok = t.attempts.iter().any(|a| a.result.is_ok());
    // For `localhost`, a loopback that refused beside one that accepted is no fault.
    let counts = |a: &&Attempt| !any_ok || (!t.localhost && ipv4_on_the_wire(a.addr.ip()));
    if let Some(first) = t
        .attempts
        .iter()
        .filter(counts)
        .find(|a| a.result.is_err() && a.route.is_none())
    {
        return Verdict::fail(Severity::High, observed).cause(cause_of(first));
    }
    let unrouted: Vec<&Attempt> = t
        .attempts
        .iter()
        .filter(counts)
        .filter(|a| a.route.is_some())
        .collect();
    if !unrouted.is_empty() {
        let which = if unrouted.iter().all(|a| a.addr.is_ipv6()) {
            "these IPv6 addresses"
        } else {
            "these addresses"
        };
        let why = if unrouted
            .iter()
            .all(|a| a.route == Some(LocalRoute::Missing))
        {
            format!("This vantage has no route to {which}")
        } else {
            let mut kinds: Vec<&str> = unrouted
                .iter()
                .filter_map(|a| a.route.map(LocalRoute::words))
                .collect();
            kinds.dedup();
            format!(
                "This vantage's own routing stops {which} ({}): a blackhole/prohibit route on this vantage is its own network's, not the target's",
                kinds.join(", ")
            )
        };
        return Verdict::unknown(
            Cause::NoRoute,
            format!(
                "{observed}. {why}: nothing was sent there, so whether the target accepts connections on it was not observed; give the vantage's network a route for that family (or remove the route that discards it)"
            ),
        );
    }
    if !unseen_refusals(t).is_empty() {
        return egress::refused_verdict(format!(
            "{observed}. Nothing was sent to the refused addresses, so whether the target accepts connections there was not observed"
        ));
    }
    if !t.untried.is_empty() {
        return Verdict::unknown(
            Cause::SizeCap,
            format!(
                "{observed}. Whether the {} addresses beyond the cap accept connections was not observed (clients may pick them: DNS rotates the order)",
                t.untried.len()
            ),
        );
    }
    if t.localhost && t.attempts.iter().any(|a| a.result.is_err()) {
        return Verdict::pass(format!("{observed} ({LOCALHOST_NOTE})"));
    }
    let v6_failed = t
        .attempts
        .iter()
        .any(|a| a.result.is_err() && !ipv4_on_the_wire(a.addr.ip()));
    if v6_failed {
        Verdict::pass(format!(
            "{observed} (the IPv6 failures are judged by net.ipv6)"
        ))
    } else {
        Verdict::pass(observed)
    }
}

/// What the AAAA records that carry an IPv4 address say, or `None` when there are none.
fn translated_note(all: &[IpAddr]) -> Option<String> {
    let forms: Vec<(Ipv6Addr, std::net::Ipv4Addr, Embedding)> = all
        .iter()
        .filter_map(|ip| match ip {
            IpAddr::V6(v6) => embedded_v4(*v6).map(|(v4, e)| (*v6, v4, e)),
            IpAddr::V4(_) => None,
        })
        .collect();
    if forms.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for (v6, v4, form) in &forms {
        parts.push(match form {
            Embedding::Mapped => format!(
                "AAAA publishes an IPv4-mapped address ({v6}); IPv6-only clients cannot reach it (a connection to it is IPv4 to {v4})"
            ),
            Embedding::Nat64 => format!(
                "AAAA publishes a NAT64 address ({v6}, 64:ff9b::/96); only IPv6 clients whose own network translates it reach {v4}, over IPv4"
            ),
        });
    }
    Some(format!(
        "{}: an IPv4 address written as IPv6 is not an IPv6 address of the target; publish the server's own IPv6 address, or no AAAA record",
        parts.join("; ")
    ))
}

/// `net.ipv6` for a vantage that has IPv6: the native IPv6 addresses compared with IPv4
/// (warn when every one fails, or when some fail: "k of n IPv6 addresses failed"), and a
/// warning when AAAA carries IPv4 addresses (mapped, NAT64), which are never IPv6 evidence.
pub(super) fn net_ipv6(t: &Tried<'_>, aaaa_failed: Option<&str>) -> Verdict {
    let base = native_ipv6(t, aaaa_failed);
    let Some(note) = translated_note(t.all) else {
        return base;
    };
    use crate::model::Outcome;
    match base.outcome {
        Outcome::Unknown | Outcome::Error | Outcome::Warn | Outcome::Fail => Verdict {
            observed: format!("{}; also: {note}", base.observed),
            ..base
        },
        Outcome::Pass | Outcome::Skip => {
            Verdict::warn(Severity::Low, format!("{note} ({})", base.observed))
        }
    }
}

fn native_ipv6(t: &Tried<'_>, aaaa_failed: Option<&str>) -> Verdict {
    let v6: Vec<&Attempt> = t
        .attempts
        .iter()
        .filter(|a| native_v6(a.addr.ip()))
        .collect();
    let refused6: Vec<&Refused> = t.refused.iter().filter(|r| native_v6(r.addr)).collect();
    let untried6: Vec<IpAddr> = t
        .untried
        .iter()
        .copied()
        .filter(|a| native_v6(*a))
        .collect();
    let v4_ok = t
        .attempts
        .iter()
        .any(|a| a.result.is_ok() && ipv4_on_the_wire(a.addr.ip()));
    if v6.is_empty() {
        if let Some(why) = aaaa_failed {
            return Verdict::unknown(
                Cause::ResolverError,
                format!("{why}, so whether the name has IPv6 addresses, and whether they connect, is unknown"),
            );
        }
        if !refused6.is_empty() {
            let refused: Vec<Refused> = refused6.into_iter().cloned().collect();
            return egress::refused_verdict(format!(
                "the egress policy refused every IPv6 address, so none was tried: {}",
                egress::summarise(&refused)
            ));
        }
        return Verdict::skip(if translated_note(t.all).is_some() {
            "no native IPv6 address"
        } else {
            "no IPv6 address"
        });
    }
    if t.localhost && v4_ok && !v6.iter().any(|a| a.result.is_ok()) {
        // A local server on 127.0.0.1 only (or a machine without ::1) is no IPv6 fault of
        // a deployment: nothing to judge here.
        return Verdict::skip(format!(
            "localhost: ::1 did not accept while 127.0.0.1 did ({}); {LOCALHOST_NOTE}. A deployment's IPv6 is judged on its real name",
            observed(t)
        ));
    }
    if !v4_ok {
        // The rule compares the families: with no IPv4 address that connects there is
        // nothing to compare with (net.connect judges the IPv6 addresses alone).
        return Verdict::skip(
            "no IPv4 address connected to compare with; net.connect judges the IPv6 addresses",
        );
    }
    let observed = observed(t);
    let unrouted = v6.iter().filter(|a| a.route.is_some()).count();
    let failed: Vec<&&Attempt> = v6
        .iter()
        .filter(|a| a.result.is_err() && a.route.is_none())
        .collect();
    let connected = v6.iter().filter(|a| a.result.is_ok()).count();
    if unrouted == v6.len() {
        return Verdict::unknown(
            Cause::NoRoute,
            format!(
                "this vantage has no IPv6 route: connect() to every IPv6 address failed on the vantage itself, nothing was sent, so whether the target's IPv6 addresses work was not observed ({observed}); a vantage that will never have IPv6 says so with --no-ipv6 (vantage check, vantage-agent) or probe.ipv6 = false, and IPv6 is then left out of its verdicts"
            ),
        );
    }
    if connected == 0 {
        return Verdict::warn(
            Severity::Low,
            format!("every IPv6 connect failed while IPv4 works: {observed}"),
        )
        .cause(cause_of(failed[0]));
    }
    if !failed.is_empty() {
        return Verdict::warn(
            Severity::Low,
            format!(
                "{} of {} IPv6 addresses failed while IPv4 works: {}; {connected} connected. A client that picks a failed address stalls or falls back",
                failed.len(),
                v6.len(),
                failed.iter().map(|a| line(a)).collect::<Vec<_>>().join("; ")
            ),
        )
        .cause(cause_of(failed[0]));
    }
    let counted = format!("{connected} of {} IPv6 addresses connected", v6.len());
    if unrouted > 0 {
        return Verdict::unknown(
            Cause::NoRoute,
            format!(
                "{counted}; {unrouted} stopped by this vantage's own routing, nothing sent there, so whether they work was not observed ({observed})"
            ),
        );
    }
    if !refused6.is_empty() {
        let refused: Vec<Refused> = refused6.into_iter().cloned().collect();
        return egress::refused_verdict(format!(
            "{counted}; not tried: {}",
            egress::summarise(&refused)
        ));
    }
    if !untried6.is_empty() {
        return Verdict::unknown(
            Cause::SizeCap,
            format!(
                "{counted}; {} more IPv6 addresses not tried (the cap is {MAX_ADDRESSES} addresses per check): {}",
                untried6.len(),
                list(&untried6)
            ),
        );
    }
    Verdict::pass(counted)
}
