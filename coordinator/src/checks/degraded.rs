//! Vantage health: a region that fails most scheduled targets at the network layer (its
//! resolution of the name, its own resolver, or its connection) while other regions reach
//! them is degraded: its own egress is at fault. On a target it did not observe, its egress
//! failures stay in the report as evidence but do not vote (`fleet.vantage-degraded`,
//! `merge::degraded`). A failure of its own resolver (`probe.resolver-failed`) counts toward
//! "degraded" too (red team round 10, #2): it is by definition the vantage's fault, and
//! without it a region whose resolver is dead left every target `unknown` with no fleet
//! alert naming the region. It changes no verdict: a resolver failure is no evidence about
//! the target, so the merge has nothing to discount and the decision stays `unknown`
//! (`checks.md` 4.1); what it changes is `vantage_region_degraded`, which the alert rules
//! read.
//!
//! What it learns from is bounded by the configuration: only scheduled runs of the
//! `[[checks]]` targets, from the regions each is checked from (`Checks::run` never passes
//! an on-demand report here, and a report of a target or region the schedule does not list
//! is ignored). Each (region, target) keeps the verdict of the latest scheduled run, so the
//! state heals by itself: a run in which the region resolves and connects clears that
//! target's failure, and the region stops being degraded once most of its targets are clear.
//! A target that leaves the configuration (or a region a check no longer runs from) is
//! forgotten.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::RegionResult;

use crate::merge::evidence::{gap_finding, reading, Reading};
use crate::report::Report;

/// Targets a region must have been seen on before it can be called degraded.
pub const MIN_TARGETS: usize = 3;

#[derive(Debug, Default)]
struct Inner {
    /// The scheduled targets and the regions each is checked from.
    scheduled: BTreeMap<String, BTreeSet<String>>,
    /// region -> target -> failed at the network layer while another region reached it.
    seen: BTreeMap<String, BTreeMap<String, bool>>,
}

/// The latest network verdict per (region, scheduled target).
#[derive(Debug, Default)]
pub struct Degraded {
    inner: Mutex<Inner>,
}

/// The region reached the target: it connected (so it had an address).
fn reached(r: &RegionResult) -> bool {
    r.check(CheckId::NetConnect)
        .is_some_and(|c| reading(c) == Reading::Pass)
}

/// The region failed at the network layer, with evidence: the zone's answer said no address
/// (NXDOMAIN, no records) or the connection failed.
fn network_failed(r: &RegionResult) -> bool {
    r.checks.iter().any(|c| {
        matches!(c.id, CheckId::DnsResolve | CheckId::NetConnect) && reading(c) == Reading::Problem
    })
}

/// The region's own resolver failed (a timeout, SERVFAIL or REFUSED from it, a local error:
/// what the merge names `probe.resolver-failed`): no evidence about the target, but a fault
/// of the vantage, so it counts toward "degraded" like an egress failure. A deadline or a
/// policy refusal at the DNS stage is not the resolver's.
fn resolver_failed(r: &RegionResult) -> bool {
    r.check(CheckId::DnsResolve).is_some_and(|c| {
        reading(c) == Reading::Gap && gap_finding(c) == FindingId::ProbeResolverFailed
    })
}

impl Degraded {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The scheduled targets and the regions each is checked from (at start and on every
    /// reload): verdicts of anything else are forgotten.
    pub fn schedule(&self, checks: &[(String, Vec<String>)]) {
        let mut g = self.lock();
        g.scheduled = checks
            .iter()
            .map(|(t, regions)| (t.clone(), regions.iter().cloned().collect()))
            .collect();
        let Inner { scheduled, seen } = &mut *g;
        for (region, targets) in seen.iter_mut() {
            targets.retain(|t, _| scheduled.get(t).is_some_and(|r| r.contains(region)));
        }
        seen.retain(|_, targets| !targets.is_empty());
    }

    /// Learn from the merged report of a scheduled run.
    pub fn record(&self, report: &Report) {
        let mut g = self.lock();
        let Inner { scheduled, seen } = &mut *g;
        let Some(regions) = scheduled.get(&report.target) else {
            return;
        };
        let reported: Vec<&RegionResult> = report.regions.iter().filter(|r| r.reported()).collect();
        for region in regions {
            let verdict = reported.iter().find(|r| &r.region == region).and_then(|r| {
                if reached(r) {
                    Some(false)
                } else if network_failed(r) || resolver_failed(r) {
                    // Down everywhere is the target's fault (or its zone's), not this
                    // vantage's.
                    Some(reported.iter().any(|o| o.region != r.region && reached(o)))
                } else {
                    None
                }
            });
            match verdict {
                Some(failed) => {
                    seen.entry(region.clone())
                        .or_default()
                        .insert(report.target.clone(), failed);
                }
                // Nothing to judge the vantage by this time (no result, its deadline ran
                // out, a policy refusal): the last verdict no longer describes the region.
                None => {
                    if let Some(targets) = seen.get_mut(region) {
                        targets.remove(&report.target);
                    }
                }
            }
        }
        seen.retain(|_, targets| !targets.is_empty());
    }

    /// Regions failing most of at least `MIN_TARGETS` targets while others reach them.
    pub fn regions(&self) -> BTreeSet<String> {
        let g = self.lock();
        g.seen
            .iter()
            .filter(|(_, targets)| {
                let failed = targets.values().filter(|f| **f).count();
                targets.len() >= MIN_TARGETS && failed * 2 > targets.len()
            })
            .map(|(region, _)| region.clone())
            .collect()
    }

    /// Forget a target that left the configuration.
    pub fn forget(&self, target: &str) {
        let mut g = self.lock();
        g.scheduled.remove(target);
        for targets in g.seen.values_mut() {
            targets.remove(target);
        }
        g.seen.retain(|_, targets| !targets.is_empty());
    }

    /// How many (region, target) verdicts are kept (bounded by the configuration).
    pub fn len(&self) -> usize {
        self.lock().seen.values().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
#[path = "degraded_tests.rs"]
mod tests;
