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

use crate::fleet::Registry as Fleet;
use crate::report::Decision;

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
                "Findings of the last merged run (1 active); accepted=\"true\" when the check's baseline accepts it.",
                &["target", "finding", "severity", "scope", "accepted"],
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

    /// The region served by the in-process vantage (`vantage_region_info{vantage="in-process"}`).
    pub fn set_in_process(&self, region: Option<String>) {
        *self.in_process.lock().unwrap_or_else(|p| p.into_inner()) = region;
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

mod targets;
#[cfg(test)]
mod tests;
