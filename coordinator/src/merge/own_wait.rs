//! A region's own connect wait, told from the target's silence (red team round 18, D8).
//! `--check-timeout` is each agent's own (the chart and Terraform set it per region), so a
//! fleet with unequal waits is normal. A connect that timed out in one region on an address
//! that another region connected to only after a longer time than that region waited says
//! nothing about the target: the region gave up before the target accepted (a slow accept
//! queue, a long path), which is the vantage's own wait, not "a firewall that drops packets".
//! `checks.md` 4.1: a fault of the vantage (its own timeout) never becomes a finding about the
//! target (`dns.*`, `egress.*`, `net.*`).
//!
//! The times come from `net.connect`'s evidence, one attempt per `; `-separated part, as
//! every engine writes it: "198.51.100.1:443 connected in 1007 ms", "198.51.100.1:443 timeout
//! after 518 ms (connect: no answer to the TCP handshake within 500 ms; ...)". A timed-out
//! attempt's elapsed time is how long the region waited for that address. A timeout is the
//! region's own wait when it ended before the longest time another region needed to connect
//! to the same address; a region that waited at least as long as every connect the others
//! measured there stays evidence about the target (`egress.blocked`: the firewall case).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult};

use super::evidence::{reading, Reading};

/// The fix `probe.incomplete` gives for a connect the merge found to be the region's own
/// wait (`evidence::gaps`).
pub const OWN_WAIT_FIX: &str = "A region gave up connecting before the target accepted, while another region connected to the same address after a longer time than that region waited (the evidence names both times): that is the region's own wait, not a firewall. Raise that region's --check-timeout (vantage-agent --check-timeout; the chart and Terraform set it per region) above the connect times the other regions measured, then check again; whether the target accepts connections from there was not observed.";

/// What the agent's words add to a connect timeout; the merge's own words replace it where
/// the wait was the region's.
const FIREWALL_WORDS: &str = "; a firewall that drops packets looks like this";

/// One attempt as `net.connect`'s evidence names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Try {
    /// Connected after this many ms.
    Connected(u64),
    /// Timed out after this many ms (the region's wait); the wait it was set to, when the
    /// evidence names it ("within 500 ms").
    Timeout(u64, Option<String>),
    /// Refused, reset, unreachable: an answer, not a wait.
    Answered,
    /// Not tried (this vantage's own routing): nothing was sent.
    NotTried,
}

/// The attempts `r`'s `net.connect` evidence names, in order.
pub fn tries(r: &RegionResult) -> Vec<(SocketAddr, Try)> {
    let Some(c) = r.check(CheckId::NetConnect) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let parts: Vec<&str> = c.observed.split("; ").collect();
    for (i, part) in parts.iter().enumerate() {
        let mut words = part.split_whitespace();
        let Some(addr) = words.next().and_then(|w| w.parse::<SocketAddr>().ok()) else {
            continue;
        };
        let rest: Vec<&str> = words.collect();
        let ms = |at: usize| rest.get(at).and_then(|w| w.parse::<u64>().ok());
        let t = match rest.as_slice() {
            ["connected", "in", ..] => match ms(2) {
                Some(n) => Try::Connected(n),
                None => continue,
            },
            ["timeout", "after", ..] => match ms(2) {
                // The wait it was set to is in the agent's words, in this part or the next
                // (the words hold a `; ` of their own).
                Some(n) => Try::Timeout(
                    n,
                    set_wait(part).or_else(|| parts.get(i + 1).and_then(|p| set_wait(p))),
                ),
                None => continue,
            },
            ["not", "tried", ..] => Try::NotTried,
            _ => Try::Answered,
        };
        out.push((addr, t));
    }
    out
}

/// "within 500 ms" in the agent's words: the wait the connect was set to.
fn set_wait(words: &str) -> Option<String> {
    let at = words.find("within ")? + "within ".len();
    let rest = &words[at..];
    let end = rest.find([';', ')', ',']).unwrap_or(rest.len());
    let wait = rest[..end].trim();
    (!wait.is_empty() && wait.starts_with(|c: char| c.is_ascii_digit())).then(|| wait.to_string())
}

/// An IPv4 address, or one written as IPv4-mapped IPv6: it goes out over IPv4.
fn ipv4_on_the_wire(ip: IpAddr) -> bool {
    ip.to_canonical().is_ipv4()
}

/// The failed attempts that decide `c` (`net.connect` or `net.ipv6`), as the agent judges
/// them (`connect_verdict.rs`): for `net.connect`, every failure when nothing connected,
/// else the IPv4 ones (IPv6 failures beside a connection are `net.ipv6`'s); for `net.ipv6`,
/// the native IPv6 ones. Addresses not tried (the vantage's own routing) are no failure.
fn deciding(check: CheckId, all: &[(SocketAddr, Try)]) -> Vec<&(SocketAddr, Try)> {
    let any_ok = all.iter().any(|(_, t)| matches!(t, Try::Connected(_)));
    all.iter()
        .filter(|(_, t)| matches!(t, Try::Timeout(..) | Try::Answered))
        .filter(|(a, _)| match check {
            CheckId::NetIpv6 => !ipv4_on_the_wire(a.ip()),
            _ => !any_ok || ipv4_on_the_wire(a.ip()),
        })
        .collect()
}

/// One address this region gave up on before another region connected to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub addr: SocketAddr,
    /// How long this region waited (ms), and the wait it was set to, when named.
    pub waited_ms: u64,
    pub set_to: Option<String>,
    /// The region that needed longest to connect to that address, and how long (ms).
    pub other: String,
    pub other_ms: u64,
}

/// The connect timeouts of `r` that were its own wait, for the failed `check` (`net.connect`
/// or `net.ipv6`): `Some` only when every failure that decides the check is a timeout that
/// ended before another region connected to the same address (after a longer time); `None`
/// when any deciding failure is evidence about the target (an answer such as a refusal, a
/// timeout at least as long as every connect the others measured there, or an address no
/// other region connected to).
pub fn own_wait(r: &RegionResult, check: CheckId, regions: &[&RegionResult]) -> Option<Vec<Cut>> {
    let own = tries(r);
    let deciding = deciding(check, &own);
    if deciding.is_empty() {
        return None;
    }
    // The longest connect time the other regions measured, per address.
    let mut longest: BTreeMap<IpAddr, (u64, String)> = BTreeMap::new();
    for o in regions.iter().filter(|o| o.region != r.region) {
        for (addr, t) in tries(o) {
            if let Try::Connected(ms) = t {
                let e = longest
                    .entry(addr.ip().to_canonical())
                    .or_insert((ms, o.region.clone()));
                if ms > e.0 {
                    *e = (ms, o.region.clone());
                }
            }
        }
    }
    let mut cuts = Vec::new();
    for (addr, t) in deciding {
        let Try::Timeout(waited, set_to) = t else {
            return None;
        };
        let (other_ms, other) = longest.get(&addr.ip().to_canonical())?;
        if waited >= other_ms {
            return None;
        }
        cuts.push(Cut {
            addr: *addr,
            waited_ms: *waited,
            set_to: set_to.clone(),
            other: other.clone(),
            other_ms: *other_ms,
        });
    }
    Some(cuts)
}

/// The words of a check whose failure was the region's own wait: what it tried, then the
/// region's wait next to the other regions' connect times.
fn words(c: &CheckResult, cuts: &[Cut]) -> String {
    let tried = c.observed.replace(FIREWALL_WORDS, "");
    let each: Vec<String> = cuts
        .iter()
        .map(|k| {
            let set = k
                .set_to
                .as_ref()
                .map(|s| format!(" (its connect wait: {s})"))
                .unwrap_or_default();
            format!(
                "gave up on {} after {} ms{set}, and {} connected to the same address in {} ms",
                k.addr, k.waited_ms, k.other, k.other_ms
            )
        })
        .collect();
    let need = cuts.iter().map(|k| k.other_ms).max().unwrap_or_default();
    format!(
        "{tried}. This region's own wait ended first: it {}. A wait shorter than the time the target took to accept elsewhere shows no firewall, so whether the target accepts connections from here was not observed: raise this region's --check-timeout (vantage-agent --check-timeout; the chart and Terraform set it per region) above {need} ms",
        each.join(", and it ")
    )
}

/// The regions with their connect failures that were their own wait turned into gaps:
/// `net.connect` (or `net.ipv6`) becomes `unknown`, cause `timeout`, with the region's wait
/// and the others' connect times in its words (the region's section of the report keeps what
/// the vantage saw; the merge names the gap `probe.incomplete`). Regions without such a
/// failure are borrowed unchanged.
pub fn excuse<'a>(regions: &[&'a RegionResult]) -> Vec<Cow<'a, RegionResult>> {
    regions
        .iter()
        .map(|r| {
            let cut: Vec<(CheckId, Vec<Cut>)> = [CheckId::NetConnect, CheckId::NetIpv6]
                .into_iter()
                .filter(|&id| r.check(id).is_some_and(|c| reading(c) == Reading::Problem))
                .filter_map(|id| own_wait(r, id, regions).map(|cuts| (id, cuts)))
                .collect();
            if cut.is_empty() {
                return Cow::Borrowed(*r);
            }
            let mut owned = (*r).clone();
            for (id, cuts) in cut {
                if let Some(c) = owned.checks.iter_mut().find(|c| c.id == id) {
                    c.observed = words(c, &cuts);
                    c.outcome = Outcome::Unknown;
                    c.severity = None;
                    c.cause = Some(Cause::Timeout);
                }
            }
            Cow::Owned(owned)
        })
        .collect()
}

/// Whether a gap is a connect the merge found to be the region's own wait ([`excuse`]): an
/// agent records a connect timeout as a failure, never as `unknown`.
pub fn is_own_wait(c: &CheckResult) -> bool {
    matches!(c.id, CheckId::NetConnect | CheckId::NetIpv6)
        && c.outcome == Outcome::Unknown
        && c.cause == Some(Cause::Timeout)
}

#[cfg(test)]
#[path = "own_wait_tests.rs"]
mod tests;
