//! The per-target families of the exposition: name, type and help once each, and how one
//! target's series of a family are written from its compact state (`targets`).

use super::targets::{Target, DECISIONS};
use super::text::Writer;
use super::{
    CHECK_INTERVAL, CHECK_SCHEDULED, CHECK_SUCCESS, DECISION, DNS_ALL_GLOBAL, DNS_HAS_A,
    FINDING_ACTIVE, GATE_DECISION, LAST_RUN, PROBE_DURATION, REGION_REACHABLE, REGION_UNKNOWN,
    REGION_UNKNOWN_FLEET, RUNS_TOTAL, SCHEDULED_SKIPPED, TARGET_INFO,
};

#[derive(Debug, Clone, Copy)]
pub(super) enum Family {
    CheckInterval,
    CheckScheduled,
    CheckSuccess,
    Decision,
    DnsAllGlobal,
    DnsHasA,
    FindingActive,
    GateDecision,
    LastRun,
    ProbeDuration,
    RegionReachable,
    RegionUnknown,
    RegionUnknownFleet,
    RunsTotal,
    ScheduledSkipped,
    TargetInfo,
}

/// In the order they are written (by name).
pub(super) const FAMILIES: [Family; 16] = [
    Family::CheckInterval,
    Family::CheckScheduled,
    Family::CheckSuccess,
    Family::Decision,
    Family::DnsAllGlobal,
    Family::DnsHasA,
    Family::FindingActive,
    Family::GateDecision,
    Family::LastRun,
    Family::ProbeDuration,
    Family::RegionReachable,
    Family::RegionUnknown,
    Family::RegionUnknownFleet,
    Family::RunsTotal,
    Family::ScheduledSkipped,
    Family::TargetInfo,
];

fn bit(b: bool) -> f64 {
    f64::from(u8::from(b))
}

impl Family {
    pub(super) fn name(self) -> &'static str {
        match self {
            Family::CheckInterval => CHECK_INTERVAL,
            Family::CheckScheduled => CHECK_SCHEDULED,
            Family::CheckSuccess => CHECK_SUCCESS,
            Family::Decision => DECISION,
            Family::DnsAllGlobal => DNS_ALL_GLOBAL,
            Family::DnsHasA => DNS_HAS_A,
            Family::FindingActive => FINDING_ACTIVE,
            Family::GateDecision => GATE_DECISION,
            Family::LastRun => LAST_RUN,
            Family::ProbeDuration => PROBE_DURATION,
            Family::RegionReachable => REGION_REACHABLE,
            Family::RegionUnknown => REGION_UNKNOWN,
            Family::RegionUnknownFleet => REGION_UNKNOWN_FLEET,
            Family::RunsTotal => RUNS_TOTAL,
            Family::ScheduledSkipped => SCHEDULED_SKIPPED,
            Family::TargetInfo => TARGET_INFO,
        }
    }

    pub(super) fn kind(self) -> &'static str {
        match self {
            Family::RunsTotal | Family::ScheduledSkipped => "counter",
            _ => "gauge",
        }
    }

    pub(super) fn help(self) -> &'static str {
        match self {
            Family::CheckInterval => "The scheduled interval of each target, in seconds.",
            Family::CheckScheduled => {
                "When the target entered the schedule (Unix seconds): a target with no vantage_last_run_timestamp_seconds three intervals after it has never completed a run."
            }
            Family::CheckSuccess => {
                "Last outcome of each check in each region (1 pass, 0 fail or warn)."
            }
            Family::Decision => "The last decision: 1 for the current value, 0 for the others.",
            Family::DnsAllGlobal => {
                "Whether every address the region resolved is globally routable."
            }
            Family::DnsHasA => "Whether the region received an IPv4 A record.",
            Family::FindingActive => {
                "Findings of the last merged run (1 active); accepted=\"true\" when the check's baseline accepts it, \"expired\" when its acceptance expired (it counts again), \"false\" otherwise."
            }
            Family::GateDecision => {
                "The last decision once the check's baseline is applied (accepted findings do not count, expired acceptances do): 1 for the current value, 0 for the others. Equal to vantage_decision without a baseline."
            }
            Family::LastRun => "When the target's last merged run finished (Unix seconds).",
            Family::ProbeDuration => {
                "Duration of each probe phase (dns, connect, tls, first_byte, total)."
            }
            Family::RegionReachable => "Whether the region connected to the target.",
            Family::RegionUnknown => {
                "1 when the region left the target's last run without evidence, which alone makes a decision unknown (a worse one, blocked, stands): it did not observe the target, or a finding that leaves a decision unknown (fleet.region-missing, probe.*, auth.credential-*) names it; 0 otherwise. vantage_region_unknown_fleet says which of them were the fleet's at the run."
            }
            Family::RegionUnknownFleet => {
                "1 when the region made the target's last run unknown (vantage_region_unknown 1) because of the fleet, as that run saw it: no agent of the region was connected, its agents refused the job, or its vantage was degraded; 0 otherwise. VantageTargetUnknown and VantageEgressBlocked leave those regions out; the fleet's own alerts (VantageRegionNoAgent, VantageRegionRefusingJobs, VantageRegionDegraded) name them."
            }
            Family::RunsTotal => "Merged runs, by decision.",
            Family::ScheduledSkipped => {
                "Scheduled runs skipped because the previous run of the target was still going."
            }
            Family::TargetInfo => "Scheduled targets and their labels (always 1).",
        }
    }

    /// Write `target`'s series of this family. `info_keys` are the label names of
    /// `vantage_target_info` besides `target`, sorted.
    pub(super) fn write(self, target: &str, t: &Target, info_keys: &[String], w: &mut Writer) {
        let name = self.name();
        let one = [("target", target)];
        match self {
            Family::CheckInterval => w.series(name, &one, t.interval),
            Family::CheckScheduled => w.series(name, &one, t.scheduled_at),
            Family::LastRun => {
                if let Some(v) = t.last_run {
                    w.series(name, &one, v);
                }
            }
            // Counters start at 0: a counter with no sample cannot be rated or alerted on.
            Family::ScheduledSkipped => w.series(name, &one, t.skipped as f64),
            Family::RunsTotal => {
                for (d, n) in DECISIONS.iter().zip(t.runs) {
                    w.series(
                        name,
                        &[("decision", d.as_str()), ("target", target)],
                        n as f64,
                    );
                }
            }
            Family::TargetInfo => {
                let mut labels: Vec<(&str, &str)> = info_keys
                    .iter()
                    .map(String::as_str)
                    .zip(t.info.iter().map(|v| &**v))
                    .collect();
                labels.push(("target", target));
                labels.sort_unstable_by_key(|(k, _)| *k);
                w.series(name, &labels, 1.0);
            }
            _ => self.write_run(target, t, w),
        }
    }

    /// The families that come from the last merged run.
    fn write_run(self, target: &str, t: &Target, w: &mut Writer) {
        let Some(run) = &t.run else { return };
        let name = self.name();
        if let Family::Decision | Family::GateDecision = self {
            let current = match self {
                Family::GateDecision => run.gate_decision,
                _ => run.decision,
            };
            for d in DECISIONS {
                let labels = [("decision", d.as_str()), ("target", target)];
                w.series(name, &labels, bit(d == current));
            }
            return;
        }
        if let Family::RegionUnknown | Family::RegionUnknownFleet = self {
            for (region, is, fleet) in &run.unknown {
                let v = match self {
                    Family::RegionUnknownFleet => *fleet,
                    _ => *is,
                };
                w.series(name, &[("region", &**region), ("target", target)], bit(v));
            }
            return;
        }
        if let Family::FindingActive = self {
            for (id, severity, scope, accepted) in &run.findings {
                let labels = [
                    ("accepted", *accepted),
                    ("finding", id.as_str()),
                    ("scope", scope),
                    ("severity", severity),
                    ("target", target),
                ];
                w.series(name, &labels, 1.0);
            }
            return;
        }
        for r in &run.regions {
            let region = &*r.region;
            let two = [("region", region), ("target", target)];
            match self {
                Family::CheckSuccess => {
                    for (check, passed) in &r.checks {
                        let labels = [
                            ("check", check.as_str()),
                            ("region", region),
                            ("target", target),
                        ];
                        w.series(name, &labels, bit(*passed));
                    }
                }
                Family::ProbeDuration => {
                    for (phase, s) in &r.phases {
                        let labels = [("phase", &**phase), ("region", region), ("target", target)];
                        w.series(name, &labels, *s);
                    }
                }
                Family::DnsAllGlobal => {
                    if let Some((all_global, _)) = r.dns {
                        w.series(name, &two, bit(all_global));
                    }
                }
                Family::DnsHasA => {
                    if let Some((_, has_a)) = r.dns {
                        w.series(name, &two, bit(has_a));
                    }
                }
                Family::RegionReachable => {
                    if let Some(v) = r.reachable {
                        w.series(name, &two, bit(v));
                    }
                }
                _ => {}
            }
        }
    }
}
