//! Whose fault a failed connect is, from what the regions tried (red team round 13, #1 and
//! N4). A region that cannot connect to an address another region connected to has a
//! fault of its own (its egress); a region that cannot connect to an address no other region
//! connected to (one only it was given, a GeoDNS answer pointing at a dead edge or POP, or
//! one every region failed) has evidence about the target. `checks.md` 3
//! (`fleet.vantage-degraded`: "the fault is the vantage's own egress") and 4.1 (a fault of the
//! vantage is never a finding about the target, and the converse: the target's fault is
//! never the vantage's).
//!
//! The addresses come from `net.connect`'s evidence, one attempt per `; `-separated part
//! ("198.51.100.1:443 connected in 3 ms", "[2001:db8::1]:443 timeout after 2001 ms (...)"),
//! which is how every engine writes it. A region whose evidence names no address (an older
//! format) is compared by the target instead: whether other regions reached it.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{CheckResult, RegionResult};

use super::evidence::{reading, Reading};

/// The addresses a region's `net.connect` evidence names: (connected, failed).
pub fn attempts(r: &RegionResult) -> (BTreeSet<IpAddr>, BTreeSet<IpAddr>) {
    let mut connected = BTreeSet::new();
    let mut failed = BTreeSet::new();
    let Some(c) = r.check(CheckId::NetConnect) else {
        return (connected, failed);
    };
    for part in c.observed.split("; ") {
        let mut words = part.split_whitespace();
        let Some(addr) = words.next().and_then(|w| w.parse::<SocketAddr>().ok()) else {
            continue;
        };
        match (words.next(), words.next()) {
            (Some("connected"), Some("in")) => connected.insert(addr.ip()),
            (Some(_), _) => failed.insert(addr.ip()),
            (None, _) => false,
        };
    }
    (connected, failed)
}

/// The region connected (`net.connect` passed).
pub fn reached(r: &RegionResult) -> bool {
    r.check(CheckId::NetConnect)
        .is_some_and(|c| reading(c) == Reading::Pass)
}

/// The addresses `o` connected to: those its evidence names, or, for a region that passed
/// `net.connect` with evidence that names none, every address its DNS answer held.
fn connected_by(o: &RegionResult) -> BTreeSet<IpAddr> {
    let (connected, _) = attempts(o);
    if !connected.is_empty() || !reached(o) {
        return connected;
    }
    o.dns
        .iter()
        .flat_map(|d| d.addresses())
        .filter_map(|a| a.parse().ok())
        .collect()
}

/// Whose fault a region's failed connect is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blame {
    /// Another region connected to an address this region failed on (or, when its evidence
    /// names no address, reached the target): this vantage's egress.
    Vantage,
    /// Other regions reported and none connected to the addresses this one failed on: they
    /// were not given them (a dead edge or POP only this region is sent to) or failed them
    /// too. Evidence about the target.
    Target,
    /// No other region reported: nothing to compare with.
    Alone,
}

/// Whose fault `c` (a failed `net.connect` or `net.ipv6` of `r`) is, against the other
/// reporting regions.
pub fn connect_blame(r: &RegionResult, c: &CheckResult, regions: &[&RegionResult]) -> Blame {
    let others: Vec<&&RegionResult> = regions.iter().filter(|o| o.region != r.region).collect();
    if others.is_empty() {
        return Blame::Alone;
    }
    let (_, failed) = attempts(r);
    let failed: BTreeSet<IpAddr> = failed
        .into_iter()
        .filter(|a| c.id != CheckId::NetIpv6 || a.is_ipv6())
        .collect();
    let vantage = if failed.is_empty() {
        others.iter().any(|o| reached(o))
    } else {
        others.iter().any(|o| !connected_by(o).is_disjoint(&failed))
    };
    if vantage {
        Blame::Vantage
    } else {
        Blame::Target
    }
}

/// The addresses `r` failed to connect to that no other reporting region was given (in its
/// DNS answer or its connect evidence): a GeoDNS answer only this region got. Empty when
/// another region was given any of them, or no other region has an answer to compare with.
pub fn given_only_here(r: &RegionResult, regions: &[&RegionResult]) -> Vec<IpAddr> {
    let (_, failed) = attempts(r);
    let mut elsewhere: BTreeSet<IpAddr> = BTreeSet::new();
    let mut compared = false;
    for o in regions.iter().filter(|o| o.region != r.region) {
        let (ok, bad) = attempts(o);
        let dns: BTreeSet<IpAddr> = o
            .dns
            .iter()
            .flat_map(|d| d.addresses())
            .filter_map(|a| a.parse().ok())
            .collect();
        compared |= !(ok.is_empty() && bad.is_empty() && dns.is_empty());
        elsewhere.extend(ok.into_iter().chain(bad).chain(dns));
    }
    if !compared || failed.iter().any(|a| elsewhere.contains(a)) {
        return Vec::new();
    }
    failed.into_iter().collect()
}

#[cfg(test)]
#[path = "blame_tests.rs"]
mod tests;
