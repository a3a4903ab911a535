//! Vantage health: a region that fails most scheduled targets at the network layer (its
//! resolution of the name or its connection) while other regions reach them is degraded:
//! its own egress is at fault. On a target it did not observe, its egress failures stay in
//! the report as evidence but do not vote (`fleet.vantage-degraded`, `merge::degraded`).
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

use vantage_agent::catalog::CheckId;
use vantage_agent::model::RegionResult;

use crate::merge::evidence::{reading, Reading};
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
/// (NXDOMAIN, no records) or the connection failed. A resolver of its own that failed is
/// `probe.resolver-failed`, no evidence either way.
fn network_failed(r: &RegionResult) -> bool {
    r.checks.iter().any(|c| {
        matches!(c.id, CheckId::DnsResolve | CheckId::NetConnect) && reading(c) == Reading::Problem
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
                } else if network_failed(r) {
                    // Down everywhere is the target's fault, not this vantage's.
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
                // No evidence this time (no result, its resolver failed): the last verdict
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
mod tests {
    use super::*;
    use crate::report::{Decision, SCHEMA_ID};
    use vantage_agent::model::{CheckResult, Era, Outcome, RegionResult, RegionStatus};

    fn region(name: &str, connect: Outcome) -> RegionResult {
        let mut r = RegionResult::absent(name, RegionStatus::Complete);
        r.checks.push(CheckResult {
            id: CheckId::NetConnect,
            outcome: connect,
            observed: String::new(),
            expected: String::new(),
            duration_ms: 0,
            severity: None,
            cause: None,
        });
        r
    }

    fn report(target: &str, regions: Vec<RegionResult>) -> Report {
        Report {
            schema: SCHEMA_ID.into(),
            id: "x".into(),
            target: target.into(),
            started_at: String::new(),
            duration_ms: 0,
            state: None,
            decision: Decision::Pass,
            reason: String::new(),
            era: Era::Modern,
            regions,
            findings: vec![],
            baseline: None,
            gate: None,
        }
    }

    /// The scheduled targets `targets`, each checked from eu and ap.
    fn scheduled(targets: &[&str]) -> Degraded {
        let h = Degraded::default();
        let regions = vec!["eu".to_string(), "ap".to_string()];
        let checks: Vec<(String, Vec<String>)> = targets
            .iter()
            .map(|t| (t.to_string(), regions.clone()))
            .collect();
        h.schedule(&checks);
        h
    }

    #[test]
    fn a_region_failing_most_targets_alone_is_degraded() {
        let h = scheduled(&["a", "b", "c"]);
        for t in ["a", "b"] {
            h.record(&report(
                t,
                vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)],
            ));
        }
        assert!(
            h.regions().is_empty(),
            "two targets are not enough to judge"
        );
        h.record(&report(
            "c",
            vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)],
        ));
        assert_eq!(h.regions(), BTreeSet::from(["ap".to_string()]));
        h.forget("a");
        h.forget("b");
        assert!(h.regions().is_empty());
    }

    #[test]
    fn a_target_down_everywhere_degrades_nobody() {
        let h = scheduled(&["a", "b", "c"]);
        for t in ["a", "b", "c"] {
            h.record(&report(
                t,
                vec![region("eu", Outcome::Fail), region("ap", Outcome::Fail)],
            ));
        }
        assert!(h.regions().is_empty());
    }

    /// Red team round 6 (#13): reports of targets the schedule does not list (on-demand
    /// checks of a caller's choosing, a run that ended after its target left) and of regions
    /// a check does not run from teach nothing, however many there are.
    #[test]
    fn only_scheduled_targets_and_their_regions_are_learned() {
        let h = scheduled(&["a"]);
        for i in 0..50 {
            h.record(&report(
                &format!("http://x{i}.lab/mcp"),
                vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)],
            ));
        }
        assert!(h.regions().is_empty());
        assert!(h.is_empty(), "{} verdicts kept", h.len());
        // A region the check does not run from.
        h.record(&report(
            "a",
            vec![region("eu", Outcome::Pass), region("us", Outcome::Fail)],
        ));
        assert_eq!(h.len(), 1, "eu's verdict on a, and nothing of us");
        // Without a schedule, nothing at all.
        let h = Degraded::default();
        for t in ["a", "b", "c"] {
            h.record(&report(
                t,
                vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)],
            ));
        }
        assert!(h.is_empty());
    }

    /// Red team round 6 (#13): the state heals. A scheduled run in which the degraded region
    /// connects clears that target's failure; once most targets are clear, the region is not
    /// degraded. A reload that drops a target or a region forgets its verdicts.
    #[test]
    fn a_region_that_connects_again_heals() {
        let h = scheduled(&["a", "b", "c"]);
        for t in ["a", "b", "c"] {
            h.record(&report(
                t,
                vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)],
            ));
        }
        assert_eq!(h.regions(), BTreeSet::from(["ap".to_string()]));
        h.record(&report(
            "a",
            vec![region("eu", Outcome::Pass), region("ap", Outcome::Pass)],
        ));
        assert_eq!(
            h.regions(),
            BTreeSet::from(["ap".to_string()]),
            "two of three targets still fail in ap alone"
        );
        h.record(&report(
            "b",
            vec![region("eu", Outcome::Pass), region("ap", Outcome::Pass)],
        ));
        assert!(h.regions().is_empty());
        // A region without a result this time keeps no verdict for that target.
        h.record(&report("c", vec![region("eu", Outcome::Pass)]));
        assert_eq!(h.len(), 5, "eu: a, b, c; ap: a, b");
        // The reload: c leaves, a is checked from eu only.
        h.schedule(&[
            ("a".into(), vec!["eu".into()]),
            ("b".into(), vec!["eu".into(), "ap".into()]),
        ]);
        assert_eq!(h.len(), 3, "eu: a, b; ap: b");
    }
}
