//! Prometheus metrics of the coordinator (`checks.md` section 8), from one registry passed
//! in explicitly. Names are defined once, here. Label values are bounded: target URLs,
//! region names, check and finding ids and severities; never an address, an error string
//! or a report id. Per-target series exist only for scheduled targets (`[[checks]]`):
//! checks submitted through the API are reported, not exported, so API callers cannot add
//! series. Counters of scheduled targets start at 0; `process_*` and `vantage_build_info`
//! describe the process itself.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use prometheus::core::Collector;
use prometheus::{Encoder, GaugeVec, IntCounterVec, Opts, Registry, TextEncoder};
use vantage_agent::model::Outcome;

use crate::fleet::Registry as Fleet;
use crate::report::{Decision, Report, Scope};

pub const CHECK_SUCCESS: &str = "vantage_check_success";
pub const FINDING_ACTIVE: &str = "vantage_finding_active";
pub const DECISION: &str = "vantage_decision";
pub const REGION_REACHABLE: &str = "vantage_region_reachable";
pub const DNS_ALL_GLOBAL: &str = "vantage_dns_all_global";
pub const DNS_HAS_A: &str = "vantage_dns_has_a_record";
pub const PROBE_DURATION: &str = "vantage_probe_duration_seconds";
pub const RUNS_TOTAL: &str = "vantage_runs_total";
pub const AGENTS_CONNECTED: &str = "vantage_agents_connected";
pub const AGENT_LAST_SEEN: &str = "vantage_agent_last_seen_timestamp_seconds";
pub const REGION_DEGRADED: &str = "vantage_region_degraded";
pub const SCHEDULED_SKIPPED: &str = "vantage_scheduled_runs_skipped_total";
pub const LAST_RUN: &str = "vantage_last_run_timestamp_seconds";
pub const CHECK_INTERVAL: &str = "vantage_check_interval_seconds";
pub const TARGET_INFO: &str = "vantage_target_info";
pub const REGION_INFO: &str = "vantage_region_info";
pub const BUILD_INFO: &str = vantage_agent::health::BUILD_INFO;

/// Every metric family the coordinator exports, for the dashboard test.
pub const ALL: &[&str] = &[
    CHECK_SUCCESS,
    FINDING_ACTIVE,
    DECISION,
    REGION_REACHABLE,
    DNS_ALL_GLOBAL,
    DNS_HAS_A,
    PROBE_DURATION,
    RUNS_TOTAL,
    AGENTS_CONNECTED,
    AGENT_LAST_SEEN,
    REGION_DEGRADED,
    SCHEDULED_SKIPPED,
    LAST_RUN,
    CHECK_INTERVAL,
    TARGET_INFO,
    REGION_INFO,
    BUILD_INFO,
];

/// The decisions, each a `vantage_decision` and `vantage_runs_total` series per target.
const DECISIONS: [Decision; 4] = [
    Decision::Pass,
    Decision::Review,
    Decision::Blocked,
    Decision::Unknown,
];

/// Register the process collector and `vantage_build_info` (shared with the agent).
pub use vantage_agent::health::register_process;

/// One written series: its family and label values.
type Series = (&'static str, Vec<String>);

/// The coordinator's metrics.
pub struct Metrics {
    registry: Registry,
    check_success: GaugeVec,
    finding_active: GaugeVec,
    decision: GaugeVec,
    region_reachable: GaugeVec,
    dns_all_global: GaugeVec,
    dns_has_a: GaugeVec,
    probe_duration: GaugeVec,
    runs_total: IntCounterVec,
    agents_connected: GaugeVec,
    agent_last_seen: GaugeVec,
    region_degraded: GaugeVec,
    scheduled_skipped: IntCounterVec,
    last_run: GaugeVec,
    check_interval: GaugeVec,
    region_info: GaugeVec,
    /// The region of the in-process vantage, if any.
    in_process: Mutex<Option<String>>,
    /// Targets with per-target series: the scheduled ones.
    scheduled: Mutex<BTreeSet<String>>,
    /// Rebuilt on every configuration load: its label names are the configured label keys.
    target_info: Mutex<Option<GaugeVec>>,
    /// Label sets written per target, so a new run (or a target leaving) removes stale ones.
    written: Mutex<BTreeMap<String, Vec<Series>>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn gauge(
    r: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
) -> Result<GaugeVec, prometheus::Error> {
    let g = GaugeVec::new(Opts::new(name, help), labels)?;
    r.register(Box::new(g.clone()))?;
    Ok(g)
}

fn counter(
    r: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
) -> Result<IntCounterVec, prometheus::Error> {
    let c = IntCounterVec::new(Opts::new(name, help), labels)?;
    r.register(Box::new(c.clone()))?;
    Ok(c)
}

impl Metrics {
    pub fn new(registry: Registry) -> Result<Self, prometheus::Error> {
        let r = &registry;
        register_process(r, "coordinator")?;
        Ok(Metrics {
            check_success: gauge(
                r,
                CHECK_SUCCESS,
                "Last outcome of each check in each region (1 pass, 0 fail or warn).",
                &["target", "region", "check"],
            )?,
            finding_active: gauge(
                r,
                FINDING_ACTIVE,
                "Findings of the last merged run (1 active).",
                &["target", "finding", "severity", "scope"],
            )?,
            decision: gauge(
                r,
                DECISION,
                "The last decision: 1 for the current value, 0 for the others.",
                &["target", "decision"],
            )?,
            region_reachable: gauge(
                r,
                REGION_REACHABLE,
                "Whether the region connected to the target.",
                &["target", "region"],
            )?,
            dns_all_global: gauge(
                r,
                DNS_ALL_GLOBAL,
                "Whether every address the region resolved is globally routable.",
                &["target", "region"],
            )?,
            dns_has_a: gauge(
                r,
                DNS_HAS_A,
                "Whether the region received an IPv4 A record.",
                &["target", "region"],
            )?,
            probe_duration: gauge(
                r,
                PROBE_DURATION,
                "Duration of each probe phase (dns, connect, tls, first_byte, total).",
                &["target", "region", "phase"],
            )?,
            runs_total: counter(
                r,
                RUNS_TOTAL,
                "Merged runs, by decision.",
                &["target", "decision"],
            )?,
            agents_connected: gauge(
                r,
                AGENTS_CONNECTED,
                "Connected agents per region.",
                &["region"],
            )?,
            agent_last_seen: gauge(
                r,
                AGENT_LAST_SEEN,
                "Newest heartbeat per region (Unix seconds).",
                &["region"],
            )?,
            region_degraded: gauge(
                r,
                REGION_DEGRADED,
                "1 when the region's vantage is degraded (its own egress fails).",
                &["region"],
            )?,
            scheduled_skipped: counter(
                r,
                SCHEDULED_SKIPPED,
                "Scheduled runs skipped because the previous run of the target was still going.",
                &["target"],
            )?,
            last_run: gauge(
                r,
                LAST_RUN,
                "When the target's last merged run finished (Unix seconds).",
                &["target"],
            )?,
            check_interval: gauge(
                r,
                CHECK_INTERVAL,
                "The scheduled interval of each target, in seconds.",
                &["target"],
            )?,
            region_info: gauge(
                r,
                REGION_INFO,
                "Each configured region and where its vantage runs: in-process (the coordinator's own) or agents (always 1).",
                &["region", "vantage"],
            )?,
            in_process: Mutex::new(None),
            scheduled: Mutex::default(),
            target_info: Mutex::new(None),
            registry,
            written: Mutex::default(),
        })
    }

    fn vec(&self, family: &'static str) -> &GaugeVec {
        match family {
            CHECK_SUCCESS => &self.check_success,
            FINDING_ACTIVE => &self.finding_active,
            REGION_REACHABLE => &self.region_reachable,
            DNS_ALL_GLOBAL => &self.dns_all_global,
            DNS_HAS_A => &self.dns_has_a,
            _ => &self.probe_duration,
        }
    }

    /// The region served by the in-process vantage (`vantage_region_info{vantage="in-process"}`).
    pub fn set_in_process(&self, region: Option<String>) {
        *self.in_process.lock().unwrap_or_else(|p| p.into_inner()) = region;
    }

    fn is_scheduled(&self, target: &str) -> bool {
        self.scheduled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(target)
    }

    /// Record a finished report of a scheduled target (others have no per-target series).
    pub fn observe(&self, report: &Report) {
        let target = report.target.as_str();
        if !self.is_scheduled(target) {
            return;
        }
        let mut now: Vec<(&'static str, Vec<String>, f64)> = Vec::new();
        for r in &report.regions {
            for c in &r.checks {
                let v = match c.outcome {
                    Outcome::Pass => 1.0,
                    Outcome::Fail | Outcome::Warn => 0.0,
                    Outcome::Skip | Outcome::Error => continue,
                };
                now.push((
                    CHECK_SUCCESS,
                    vec![target.into(), r.region.clone(), c.id.clone()],
                    v,
                ));
                if c.id == "net.connect" {
                    now.push((REGION_REACHABLE, vec![target.into(), r.region.clone()], v));
                }
            }
            if let Some(d) = &r.dns {
                now.push((
                    DNS_ALL_GLOBAL,
                    vec![target.into(), r.region.clone()],
                    f64::from(u8::from(d.all_global)),
                ));
                now.push((
                    DNS_HAS_A,
                    vec![target.into(), r.region.clone()],
                    f64::from(u8::from(d.has_a)),
                ));
            }
            for (phase, ms) in &r.phases_ms {
                now.push((
                    PROBE_DURATION,
                    vec![target.into(), r.region.clone(), phase.clone()],
                    *ms as f64 / 1000.0,
                ));
            }
        }
        for f in &report.findings {
            let scope = match f.scope {
                Scope::Global => "global",
                Scope::Regional => "regional",
            };
            now.push((
                FINDING_ACTIVE,
                vec![
                    target.into(),
                    f.id.clone(),
                    f.severity.as_str().into(),
                    scope.into(),
                ],
                1.0,
            ));
        }
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        let previous = written.remove(target).unwrap_or_default();
        for (family, labels) in &previous {
            if !now.iter().any(|(f, l, _)| f == family && l == labels) {
                let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
                let _ = self.vec(family).remove_label_values(&refs);
            }
        }
        for (family, labels, v) in &now {
            let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
            self.vec(family).with_label_values(&refs).set(*v);
        }
        written.insert(
            target.to_string(),
            now.into_iter().map(|(f, l, _)| (f, l)).collect(),
        );
        for d in DECISIONS {
            self.decision
                .with_label_values(&[target, d.as_str()])
                .set(f64::from(u8::from(d == report.decision)));
        }
        self.runs_total
            .with_label_values(&[target, report.decision.as_str()])
            .inc();
        let now_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        self.last_run.with_label_values(&[target]).set(now_s);
    }

    /// Remove every series of a target that left the configuration.
    pub fn forget_target(&self, target: &str) {
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        for (family, labels) in written.remove(target).unwrap_or_default() {
            let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
            let _ = self.vec(family).remove_label_values(&refs);
        }
        for d in DECISIONS {
            let _ = self.decision.remove_label_values(&[target, d.as_str()]);
            let _ = self.runs_total.remove_label_values(&[target, d.as_str()]);
        }
        let _ = self.last_run.remove_label_values(&[target]);
        let _ = self.check_interval.remove_label_values(&[target]);
        let _ = self.scheduled_skipped.remove_label_values(&[target]);
    }

    /// Export the scheduled targets: their interval and `vantage_target_info` with their labels,
    /// and their counters at 0 (a counter with no sample cannot be rated or alerted on).
    pub fn set_schedule(&self, checks: &[(String, f64, BTreeMap<String, String>)]) {
        *self.scheduled.lock().unwrap_or_else(|p| p.into_inner()) =
            checks.iter().map(|(t, _, _)| t.clone()).collect();
        for (target, _, _) in checks {
            self.scheduled_skipped
                .with_label_values(&[target])
                .inc_by(0);
            for d in DECISIONS {
                self.runs_total
                    .with_label_values(&[target, d.as_str()])
                    .inc_by(0);
            }
        }
        let keys: std::collections::BTreeSet<&String> =
            checks.iter().flat_map(|(_, _, l)| l.keys()).collect();
        let mut names: Vec<&str> = vec!["target"];
        names.extend(keys.iter().map(|k| k.as_str()));
        let mut slot = self.target_info.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = slot.take() {
            let _ = self.registry.unregister(Box::new(old));
        }
        if let Ok(info) = GaugeVec::new(
            Opts::new(
                TARGET_INFO,
                "Scheduled targets and their labels (always 1).",
            ),
            &names,
        ) {
            if self.registry.register(Box::new(info.clone())).is_ok() {
                for (target, _, labels) in checks {
                    let values: Vec<&str> = names
                        .iter()
                        .map(|n| {
                            if *n == "target" {
                                target.as_str()
                            } else {
                                labels.get(*n).map(String::as_str).unwrap_or("")
                            }
                        })
                        .collect();
                    info.with_label_values(&values).set(1.0);
                }
                *slot = Some(info);
            }
        }
        for (target, interval, _) in checks {
            self.check_interval
                .with_label_values(&[target])
                .set(*interval);
        }
    }

    pub fn scheduled_skipped(&self, target: &str) {
        self.scheduled_skipped.with_label_values(&[target]).inc();
    }

    pub fn set_degraded(&self, region: &str, degraded: bool) {
        self.region_degraded
            .with_label_values(&[region])
            .set(f64::from(u8::from(degraded)));
    }

    /// Text exposition, with the fleet gauges refreshed from the registry.
    pub fn render(&self, fleet: &Fleet, regions: &[String]) -> String {
        let per_region = fleet.per_region();
        // Regions that left the configuration lose their fleet series.
        for family in [
            &self.agents_connected,
            &self.agent_last_seen,
            &self.region_degraded,
            &self.region_info,
        ] {
            for m in family.collect().iter().flat_map(|f| f.get_metric()) {
                let labels = m.get_label();
                let left = labels
                    .iter()
                    .any(|l| l.name() == "region" && !regions.iter().any(|r| r == l.value()));
                if left {
                    // Label pairs come sorted by name, as the families declare them.
                    let values: Vec<&str> = labels.iter().map(|l| l.value()).collect();
                    let _ = family.remove_label_values(&values);
                }
            }
        }
        let in_process = self
            .in_process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for region in regions {
            let (kind, other) = if in_process.as_deref() == Some(region.as_str()) {
                ("in-process", "agents")
            } else {
                ("agents", "in-process")
            };
            let _ = self.region_info.remove_label_values(&[region, other]);
            self.region_info.with_label_values(&[region, kind]).set(1.0);
            let (n, last) = per_region.get(region).copied().unwrap_or((0, 0.0));
            self.agents_connected
                .with_label_values(&[region])
                .set(n as f64);
            if last > 0.0 {
                self.agent_last_seen.with_label_values(&[region]).set(last);
            }
        }
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
