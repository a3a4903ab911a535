//! Vantage health: a region that fails most targets at the network layer while other
//! regions reach them is degraded (its own egress is at fault). Its failures stay in the
//! reports as evidence but do not count toward `blocked` (`fleet.vantage-degraded`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use vantage_agent::catalog::CheckId;
use vantage_agent::model::Outcome;

use crate::report::Report;

/// Targets a region must have been seen on before it can be called degraded.
pub const MIN_TARGETS: usize = 3;

/// The latest network verdict per (region, target).
#[derive(Debug, Default)]
pub struct Degraded {
    /// region -> target -> failed at the network layer while another region succeeded
    seen: Mutex<BTreeMap<String, BTreeMap<String, bool>>>,
}

impl Degraded {
    /// Learn from a merged report.
    pub fn record(&self, report: &Report) {
        let network_failed = |r: &vantage_agent::model::RegionResult| {
            r.checks.iter().any(|c| {
                c.outcome == Outcome::Fail
                    && matches!(c.id, CheckId::DnsResolve | CheckId::NetConnect)
            })
        };
        let reported: Vec<_> = report.regions.iter().filter(|r| r.reported()).collect();
        let mut g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        for r in &reported {
            let others_ok = reported
                .iter()
                .any(|o| o.region != r.region && !network_failed(o));
            g.entry(r.region.clone())
                .or_default()
                .insert(report.target.clone(), network_failed(r) && others_ok);
        }
    }

    /// Regions failing most of at least `MIN_TARGETS` targets while others reach them.
    pub fn regions(&self) -> BTreeSet<String> {
        let g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        g.iter()
            .filter(|(_, targets)| {
                let failed = targets.values().filter(|f| **f).count();
                targets.len() >= MIN_TARGETS && failed * 2 > targets.len()
            })
            .map(|(region, _)| region.clone())
            .collect()
    }

    /// Forget a target that left the configuration.
    pub fn forget(&self, target: &str) {
        let mut g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        for targets in g.values_mut() {
            targets.remove(target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Decision, SCHEMA_ID};
    use vantage_agent::model::{CheckResult, Era, RegionResult, RegionStatus};

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

    #[test]
    fn a_region_failing_most_targets_alone_is_degraded() {
        let h = Degraded::default();
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
        let h = Degraded::default();
        for t in ["a", "b", "c"] {
            h.record(&report(
                t,
                vec![region("eu", Outcome::Fail), region("ap", Outcome::Fail)],
            ));
        }
        assert!(h.regions().is_empty());
    }
}
