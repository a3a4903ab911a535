//! Prometheus metrics of the coordinator (`checks.md` section 8), from one registry passed
//! in explicitly. Names are defined once, here. Label values are bounded: target URLs,
//! region names, check and finding ids and severities; never an address, an error string
//! or a report id. Per-target series exist only for scheduled targets (`[[checks]]`):
//! checks submitted through the API are reported, not exported, so API callers cannot add
//! series. Counters of scheduled targets start at 0; `process_*` and `vantage_build_info`
//! describe the process itself.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use prometheus::core::Collector;
use prometheus::{Encoder, GaugeVec, IntCounterVec, Opts, Registry, TextEncoder};

use crate::fleet::Registry as Fleet;
use crate::report::Report;

pub const CHECK_SUCCESS: &str = "vantage_check_success";
pub const FINDING_ACTIVE: &str = "vantage_finding_active";
pub const DECISION: &str = "vantage_decision";
pub const GATE_DECISION: &str = "vantage_gate_decision";
pub const REGION_REACHABLE: &str = "vantage_region_reachable";
pub const REGION_UNKNOWN: &str = "vantage_region_unknown";
pub const REGION_UNKNOWN_FLEET: &str = "vantage_region_unknown_fleet";
pub const DNS_ALL_GLOBAL: &str = "vantage_dns_all_global";
pub const DNS_HAS_A: &str = "vantage_dns_has_a_record";
pub const PROBE_DURATION: &str = "vantage_probe_duration_seconds";
pub const RUNS_TOTAL: &str = "vantage_runs_total";
pub const AGENTS_CONNECTED: &str = "vantage_agents_connected";
pub const AGENT_LAST_SEEN: &str = "vantage_agent_last_seen_timestamp_seconds";
pub const REGION_DEGRADED: &str = "vantage_region_degraded";
pub const REGION_JOBS_REFUSED: &str = "vantage_region_jobs_refused_total";
pub const API_AUTH_FAILURES: &str = "vantage_api_auth_failures_total";
pub const SCHEDULED_SKIPPED: &str = "vantage_scheduled_runs_skipped_total";
pub const LAST_RUN: &str = "vantage_last_run_timestamp_seconds";
pub const CHECK_INTERVAL: &str = "vantage_check_interval_seconds";
pub const CHECK_SCHEDULED: &str = "vantage_check_scheduled_timestamp_seconds";
pub const TARGET_INFO: &str = "vantage_target_info";
pub const REGION_INFO: &str = "vantage_region_info";
pub const BUILD_INFO: &str = vantage_agent::health::BUILD_INFO;

/// Every metric family the coordinator exports, for the dashboard test.
pub const ALL: &[&str] = &[
    CHECK_SUCCESS,
    FINDING_ACTIVE,
    DECISION,
    GATE_DECISION,
    REGION_REACHABLE,
    REGION_UNKNOWN,
    REGION_UNKNOWN_FLEET,
    DNS_ALL_GLOBAL,
    DNS_HAS_A,
    PROBE_DURATION,
    RUNS_TOTAL,
    AGENTS_CONNECTED,
    AGENT_LAST_SEEN,
    REGION_DEGRADED,
    REGION_JOBS_REFUSED,
    API_AUTH_FAILURES,
    SCHEDULED_SKIPPED,
    LAST_RUN,
    CHECK_INTERVAL,
    CHECK_SCHEDULED,
    TARGET_INFO,
    REGION_INFO,
    BUILD_INFO,
];

/// Register the process collector and `vantage_build_info` (shared with the agent).
pub use vantage_agent::health::register_process;

mod families;
#[cfg(test)]
mod refused_tests;
#[cfg(test)]
mod series_tests;
mod targets;
#[cfg(test)]
mod tests;
mod text;
#[cfg(test)]
mod unknown_tests;

/// The coordinator's metrics: the process's and the fleet's few series in a `prometheus`
/// registry, and the per-target series of scheduled targets (most of them, and their number
/// grows with the schedule) in a compact table written straight into the exposition
/// (`targets`).
pub struct Metrics {
    registry: Registry,
    agents_connected: GaugeVec,
    agent_last_seen: GaugeVec,
    region_degraded: GaugeVec,
    region_info: GaugeVec,
    /// Jobs an agent of the region refused, from the fleet's count (`Fleet::refused_per_region`).
    jobs_refused: IntCounterVec,
    /// API requests refused for want of a valid bearer token, by `reason`.
    api_auth_failures: IntCounterVec,
    /// The region of the in-process vantage, if any.
    in_process: Mutex<Option<String>>,
    targets: targets::Targets,
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

impl Metrics {
    pub fn new(registry: Registry) -> Result<Self, prometheus::Error> {
        let r = &registry;
        register_process(r, "coordinator")?;
        Ok(Metrics {
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
                "1 when the region's vantage is degraded (its own resolver, routes, egress, TLS trust store or clock fail most scheduled targets other regions reach; the zone's answer never counts).",
                &["region"],
            )?,
            region_info: gauge(
                r,
                REGION_INFO,
                "Each configured region and where its vantage runs: in-process (the coordinator's own) or agents (always 1).",
                &["region", "vantage"],
            )?,
            jobs_refused: {
                let c = IntCounterVec::new(
                    Opts::new(
                        REGION_JOBS_REFUSED,
                        "Jobs an agent of the region refused without running them (its --allow-non-global-max narrower than probe.allow_non_global, a job it cannot read): the fleet's configuration, never the target's; VantageRegionRefusingJobs names the region and VantageTargetUnknown leaves it out.",
                    ),
                    &["region"],
                )?;
                r.register(Box::new(c.clone()))?;
                c
            },
            api_auth_failures: {
                let c = IntCounterVec::new(
                    Opts::new(
                        API_AUTH_FAILURES,
                        "API requests refused (401) for want of a valid bearer token: reason=missing (no Authorization: Bearer header) or invalid (a token no server.api_tokens entry has).",
                    ),
                    &["reason"],
                )?;
                r.register(Box::new(c.clone()))?;
                // Both from 0: a counter with no sample cannot be rated.
                for reason in ["missing", "invalid"] {
                    c.with_label_values(&[reason]);
                }
                c
            },
            in_process: Mutex::new(None),
            registry,
            targets: targets::Targets::default(),
        })
    }

    /// The region served by the in-process vantage (`vantage_region_info{vantage="in-process"}`).
    pub fn set_in_process(&self, region: Option<String>) {
        *self.in_process.lock().unwrap_or_else(|p| p.into_inner()) = region;
    }

    /// Record the finished report of a scheduled run: its series replace the target's
    /// previous ones. Other targets have no per-target series, and checks submitted through
    /// the API are never recorded (`checks::Checks::run`), also for a scheduled target.
    /// What the report alone says of the fleet (`observe_run` with no more).
    pub fn observe(&self, report: &Report) {
        self.observe_run(report, &std::collections::BTreeSet::new());
    }

    /// [`Metrics::observe`], with the regions the fleet left without evidence in this run,
    /// as the run saw them (no agent connected, its agents refused the job, a degraded
    /// vantage): `vantage_region_unknown_fleet` is 1 for those among the regions that made
    /// the run unknown. A region the report itself shows without an agent (`no-agent`) or
    /// discounted as degraded (`fleet.vantage-degraded`) counts without being named.
    pub fn observe_run(&self, report: &Report, fleet: &std::collections::BTreeSet<String>) {
        self.targets.observe(report, fleet);
    }

    /// Remove every series of a target that left the configuration.
    pub fn forget_target(&self, target: &str) {
        self.targets.forget(target);
    }

    /// Keep only the per-region series of `regions` for `target` (the regions it is checked
    /// from now).
    pub fn keep_regions(&self, target: &str, regions: &[String]) {
        self.targets.keep_regions(target, regions);
    }

    /// Export the scheduled targets: their interval, `vantage_target_info` with their labels,
    /// and their counters at 0 (a counter with no sample cannot be rated or alerted on). A
    /// target no longer listed loses every series.
    pub fn set_schedule(&self, checks: &[(String, f64, BTreeMap<String, String>)]) {
        self.targets.set_schedule(checks);
    }

    pub fn scheduled_skipped(&self, target: &str) {
        self.targets.scheduled_skipped(target);
    }

    /// An API request refused for want of a valid token: `missing` or `invalid`.
    pub fn api_auth_failed(&self, reason: &str) {
        self.api_auth_failures.with_label_values(&[reason]).inc();
    }

    pub fn set_degraded(&self, region: &str, degraded: bool) {
        self.region_degraded
            .with_label_values(&[region])
            .set(f64::from(u8::from(degraded)));
    }

    /// Text exposition, with the fleet gauges refreshed from the registry.
    pub fn render(&self, fleet: &Fleet, regions: &[String]) -> String {
        let mut text = self.render_registry(fleet, regions);
        self.targets
            .render_chunk(&mut targets::Cursor::default(), &mut text, usize::MAX);
        text
    }

    /// The same exposition in chunks of about 64 KiB: the registry's families, then the
    /// per-target series a chunk at a time, so that a scrape of many targets never holds the
    /// whole text (about 3 MB at 1,000 targets).
    pub fn render_chunks(
        self: &Arc<Self>,
        fleet: &Fleet,
        regions: &[String],
    ) -> impl futures::Stream<Item = String> + Send + 'static {
        self.chunks(fleet, regions, 64 << 10)
    }

    fn chunks(
        self: &Arc<Self>,
        fleet: &Fleet,
        regions: &[String],
        size: usize,
    ) -> impl futures::Stream<Item = String> + Send + 'static {
        let head = self.render_registry(fleet, regions);
        let me = self.clone();
        let start = (Some(head), targets::Cursor::default());
        futures::stream::unfold(start, move |(head, mut cursor)| {
            let me = me.clone();
            async move {
                if let Some(head) = head {
                    return Some((head, (None, cursor)));
                }
                if cursor.done() {
                    return None;
                }
                let mut out = String::with_capacity(size + size / 4);
                me.targets.render_chunk(&mut cursor, &mut out, size);
                (!out.is_empty()).then_some((out, (None, cursor)))
            }
        })
    }

    /// The families kept in the registry (the process's and the fleet's), refreshed.
    fn render_registry(&self, fleet: &Fleet, regions: &[String]) -> String {
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
        for m in self
            .jobs_refused
            .collect()
            .iter()
            .flat_map(|f| f.get_metric())
        {
            let region = m.get_label().iter().find(|l| l.name() == "region");
            if let Some(region) = region.filter(|l| !regions.iter().any(|r| r == l.value())) {
                let _ = self.jobs_refused.remove_label_values(&[region.value()]);
            }
        }
        let refused = fleet.refused_per_region();
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
            // A counter from 0 for every region (rate() needs a first sample), raised to
            // the fleet's count.
            let c = self.jobs_refused.with_label_values(&[region]);
            let n = refused.get(region).copied().unwrap_or(0);
            c.inc_by(n.saturating_sub(c.get()));
        }
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}
