//! What a degraded vantage's result counts for (`checks.md` 3, `fleet.vantage-degraded`, and
//! 4.1). A region is degraded when its own failures (its resolver, its routes, connects to
//! addresses other regions reach, its TLS trust store or clock) fail most scheduled targets
//! (`coordinator/src/checks/degraded.rs`). That excuses only failures that are its own on this
//! target too: a connect (`net.connect`, `net.ipv6`) that failed on an address another region
//! connected to, or, checked alone, on a target nothing contradicts. A zone's answer (NXDOMAIN,
//! no data, a non-global address) and a connect failure to an address no other region
//! connected to (a GeoDNS answer to a dead POP, an address every region fails) are evidence
//! about the target and count in full, however degraded the region is (red team round 13,
//! #1). A degraded region that resolved, connected and got answers saw the target: what it
//! saw counts with full weight, a high failure there blocks. So adding a failure anywhere (on
//! this target or on others) never improves a decision.

use std::collections::BTreeSet;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{RegionResult, Severity};

use super::blame::{connect_blame, Blame};
use super::evidence::{observation, reading, Reading};
use super::Acc;
use crate::report::Scope;

/// The checks whose failure may be the region's own egress when the region is degraded.
pub const EGRESS_CHECKS: &[CheckId] = &[CheckId::NetConnect, CheckId::NetIpv6];

/// Whether this region's result is discounted: it is degraded, it did not observe the target,
/// and every failure it has evidence for (there is at least one) is a connect that the other
/// reporting regions `regions` do not show to be the target's ([`connect_blame`]).
pub fn discounted(
    r: &RegionResult,
    regions: &[&RegionResult],
    degraded: &BTreeSet<String>,
) -> bool {
    if !degraded.contains(&r.region) || observation(r).observed {
        return false;
    }
    let mut problems = r.checks.iter().filter(|c| reading(c) == Reading::Problem);
    let mut any = false;
    let own_only = problems.all(|c| {
        any = true;
        EGRESS_CHECKS.contains(&c.id) && connect_blame(r, c, regions) != Blame::Target
    });
    any && own_only
}

/// `fleet.vantage-degraded` for the discounted regions: their egress failures, as evidence.
pub(crate) fn note(discounted: &[&RegionResult], regions: &[&RegionResult], acc: &mut Acc) {
    for r in discounted {
        let evidence = r
            .checks
            .iter()
            .filter(|c| reading(c) == Reading::Problem)
            .map(|c| {
                let why = match connect_blame(r, c, regions) {
                    Blame::Alone => "no other region was checked to compare with",
                    _ => "other regions connected where it failed",
                };
                format!(
                    "{}: {} {} (the region fails most scheduled targets by faults of its own (resolver, route, egress, trust store or clock), and {why}: not counted against this target)",
                    r.region, c.id, c.observed
                )
            })
            .collect();
        acc.add(
            FindingId::FleetVantageDegraded,
            Severity::Low,
            Scope::Regional,
            std::slice::from_ref(&r.region),
            evidence,
        );
    }
}

#[cfg(test)]
#[path = "degraded_tests.rs"]
mod tests;
