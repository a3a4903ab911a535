//! What a degraded vantage's result counts for (`checks.md` 3, `fleet.vantage-degraded`, and
//! 4.1). A region is degraded when its own egress fails most scheduled targets while other
//! regions reach them (`coordinator/src/checks/degraded.rs`). That excuses only failures that
//! are egress-shaped, on a target the region did not observe: its resolution of the name or
//! its connection failed (`dns.resolve`, `net.connect`, `net.ipv6`, which map to `dns.*`,
//! `net.*` and `egress.*`). A degraded region that resolved, connected and got answers saw the
//! target: what it saw counts with full weight, a high failure there blocks. So adding a
//! failure anywhere (on this target or on others) never improves a decision.

use std::collections::BTreeSet;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{RegionResult, Severity};

use super::evidence::{observation, reading, Reading};
use super::Acc;
use crate::report::Scope;

/// The checks whose failure is the region's own egress when the region is degraded.
pub const EGRESS_CHECKS: &[CheckId] = &[CheckId::DnsResolve, CheckId::NetConnect, CheckId::NetIpv6];

/// Whether this region's result is discounted: it is degraded, it did not observe the target,
/// and every failure it has evidence for is egress-shaped (there is at least one).
pub fn discounted(r: &RegionResult, degraded: &BTreeSet<String>) -> bool {
    if !degraded.contains(&r.region) || observation(r).observed {
        return false;
    }
    let mut problems = r.checks.iter().filter(|c| reading(c) == Reading::Problem);
    let mut any = false;
    let egress_only = problems.all(|c| {
        any = true;
        EGRESS_CHECKS.contains(&c.id)
    });
    any && egress_only
}

/// `fleet.vantage-degraded` for the discounted regions: their egress failures, as evidence.
pub(crate) fn note(discounted: &[&RegionResult], acc: &mut Acc) {
    for r in discounted {
        let evidence = r
            .checks
            .iter()
            .filter(|c| reading(c) == Reading::Problem)
            .map(|c| {
                format!(
                    "{}: {} {} (the region fails most scheduled targets this way while other regions reach them; not counted against this target)",
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
