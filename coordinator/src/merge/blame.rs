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

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{CheckResult, RegionResult};

use super::evidence::{reading, Reading};
use super::Acc;

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

/// `egress.blocked` names a region that failed to connect while others connected (`checks.md`
/// 3, one fault one name: `net.connect` in some regions only). When the addresses it failed
/// on were given to no other region (GeoDNS sending it to a dead edge or POP), the finding
/// stays `egress.blocked`, high, as the table says (the region resolves the target and cannot
/// connect while others can; `edge.divergent` is for transport and auth checks, and a
/// connect failure is not one), but its evidence says so and its fix looks at the target's
/// answer for that region first, not only at the region's egress (red team round 13, N4).
pub(crate) fn name_addresses_given_only_here(effective: &[&RegionResult], acc: &mut Acc) {
    let Some(f) = acc.by_id.get_mut(&FindingId::EgressBlocked) else {
        return;
    };
    let mut named = Vec::new();
    for r in effective.iter().filter(|r| f.regions.contains(&r.region)) {
        let only = given_only_here(r, effective);
        if only.is_empty() {
            continue;
        }
        let addrs: Vec<String> = only.iter().map(IpAddr::to_string).collect();
        let line = format!(
            "{region} was given {addrs}, which no other region was given: a dead edge or POP that the target's DNS sends {region} to, not necessarily {region}'s egress",
            region = r.region,
            addrs = addrs.join(", ")
        );
        if !f.evidence.contains(&line) {
            f.evidence.push(line);
        }
        named.push(r.region.clone());
    }
    if !named.is_empty() {
        f.remediation = format!(
            "{} connected to addresses no other region was given (the evidence names them): look first at the target's DNS answer for {} (GeoDNS, a provider's regional view) and at the edge or POP behind those addresses. Otherwise: {}",
            named.join(", "),
            if named.len() == 1 { "that region" } else { "those regions" },
            f.remediation
        );
    }
}

#[cfg(test)]
#[path = "blame_tests.rs"]
mod tests;
