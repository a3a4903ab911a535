//! Vantage health: a region whose own vantage (its network, its TLS trust store or clock)
//! fails most scheduled targets while other regions reach them is degraded. On a target it did not observe, its own failures (a
//! connect to an address other regions reach) stay in the report as evidence but do not vote
//! (`fleet.vantage-degraded`, `merge::degraded`).
//!
//! Only the vantage's own failures count (red team round 13, #1; `checks.md` 3: "the fault is
//! the vantage's own egress", and 4.1): its own resolver failing (`probe.resolver-failed`,
//! red team round 10, #2: without it a region whose resolver is dead left every target
//! `unknown` with no fleet alert naming the region), no route from it (nothing was sent), a
//! connect that failed to an address another region connected to (`merge::blame`), and its
//! TLS trust store or clock judging a chain another region verified (`probe.trust-store`,
//! `probe.clock-skew`, `merge::vantage_tls`: it connected, but its own configuration left
//! the target `unknown`; red team round 12, D2). The zone's answer (NXDOMAIN, no data, a
//! non-global address) and a connect failure to an address no other region connected to (a
//! GeoDNS answer to a dead edge or POP) are evidence about the target: they stay `dns.*`,
//! `egress.*` and `net.*` findings about it, and they count as a run in which the region's
//! own network did its job, so several targets behind one DNS provider whose regional view
//! breaks never silence each other as a "degraded" region. A resolver failure, no route, a
//! trust store or a clock changes no verdict: no evidence about the target, so the merge has
//! nothing to discount and the decision stays `unknown` (`checks.md` 4.1); what it changes
//! is `vantage_region_degraded`, which the alert rules read.
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
use vantage_agent::model::{Cause, RegionResult};

use crate::merge::blame::{connect_blame, reached, Blame};
use crate::merge::evidence::{gap_finding, reading, Reading};
use crate::merge::vantage_tls;
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

/// The region's own resolver failed (a timeout, SERVFAIL or REFUSED from it, a local error:
/// what the merge names `probe.resolver-failed`), or it has no route to the target's
/// addresses (nothing was sent): no evidence about the target, but a fault of the vantage.
/// A deadline or a policy refusal is not the vantage's network.
fn own_network_failed(r: &RegionResult) -> bool {
    let resolver = r.check(CheckId::DnsResolve).is_some_and(|c| {
        reading(c) == Reading::Gap && gap_finding(c) == FindingId::ProbeResolverFailed
    });
    let no_route = r
        .check(CheckId::NetConnect)
        .is_some_and(|c| reading(c) == Reading::Gap && c.cause == Some(Cause::NoRoute));
    resolver || no_route
}

/// The zone answered, and the answer is about the target: the name does not exist, has no
/// address, or has a non-global one.
fn zone_answered(r: &RegionResult) -> bool {
    r.checks.iter().any(|c| {
        matches!(c.id, CheckId::DnsResolve | CheckId::DnsGlobalAddresses)
            && reading(c) == Reading::Problem
    })
}

/// This run's verdict on `r`'s own vantage: `Some(true)` when it failed where another region
/// succeeded (its network, or its TLS trust store or clock on a chain another region
/// verified), `Some(false)` when it did its job (it connected and judged the chain as the
/// others did, or what stopped it is the target's), `None` when the run says nothing about
/// it.
fn judge(r: &RegionResult, reported: &[&RegionResult]) -> Option<bool> {
    // The merge judged its TLS by its own trust store or clock (`probe.trust-store`,
    // `probe.clock-skew`): another region verified the very chain it refused, so the target is
    // not down everywhere, and the fault is this vantage's even though it connected.
    if !vantage_tls::faults(r, reported).is_empty() {
        return Some(true);
    }
    if reached(r) {
        return Some(false);
    }
    if own_network_failed(r) {
        // Down everywhere is the target's fault (or its zone's), not this vantage's.
        return Some(reported.iter().any(|o| o.region != r.region && reached(o)));
    }
    let connect = r.checks.iter().find(|c| {
        matches!(c.id, CheckId::NetConnect | CheckId::NetIpv6) && reading(c) == Reading::Problem
    });
    if let Some(c) = connect {
        return match connect_blame(r, c, reported) {
            Blame::Vantage => Some(true),
            Blame::Target => Some(false),
            Blame::Alone => None,
        };
    }
    zone_answered(r).then_some(false)
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
            let verdict = reported
                .iter()
                .find(|r| &r.region == region)
                .and_then(|r| judge(r, &reported));
            match verdict {
                Some(failed) => {
                    seen.entry(region.clone())
                        .or_default()
                        .insert(report.target.clone(), failed);
                }
                // Nothing to judge the vantage by this time (no result, its deadline ran
                // out, a policy refusal, no other region to compare with): the last verdict
                // no longer describes the region.
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
