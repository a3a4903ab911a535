//! The per-target series, kept compactly and written straight into the text exposition.
//!
//! A scheduled target has about 30 series (a check outcome per check and region, phases,
//! decisions, findings). Kept as `prometheus` crate vectors, each series costs a hash entry
//! with its own copy of every label pair, and `gather` rebuilds all of them as protobuf
//! messages on every scrape: about 30 KiB per target at rest and twice that during a scrape
//! (BENCHMARKS.md, "Where the memory goes"). Here a target keeps what its last merged run
//! showed as small values and shared strings (region, check, finding and phase names are
//! interned), and the exposition is written from that, family by family.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use vantage_agent::model::Outcome;

use super::text::Writer;
use super::{
    CHECK_INTERVAL, CHECK_SUCCESS, DECISION, DNS_ALL_GLOBAL, DNS_HAS_A, FINDING_ACTIVE, LAST_RUN,
    PROBE_DURATION, REGION_REACHABLE, RUNS_TOTAL, SCHEDULED_SKIPPED, TARGET_INFO,
};
use crate::report::{Decision, Report, Scope};

const DECISIONS: [Decision; 4] = [
    Decision::Blocked,
    Decision::Pass,
    Decision::Review,
    Decision::Unknown,
];

/// One region's part of the last merged run.
#[derive(Debug)]
struct RegionRun {
    region: Arc<str>,
    /// (check id, passed); skipped checks and checks that could not run are absent.
    checks: Vec<(Arc<str>, bool)>,
    reachable: Option<bool>,
    /// (all addresses global, has an A record)
    dns: Option<(bool, bool)>,
    /// (phase, seconds)
    phases: Vec<(Arc<str>, f64)>,
}

/// What a target's last merged run showed.
#[derive(Debug)]
struct Run {
    decision: Decision,
    regions: Vec<RegionRun>,
    /// (finding id, severity, scope)
    findings: Vec<(Arc<str>, &'static str, &'static str)>,
}

#[derive(Debug, Default)]
struct Target {
    run: Option<Run>,
    /// Merged runs by decision, in the order of `DECISIONS`.
    runs: [u64; 4],
    last_run: Option<f64>,
    skipped: Option<u64>,
    interval: Option<f64>,
    /// Values of `Inner::info_keys`, when the target is scheduled.
    info: Option<Vec<Arc<str>>>,
}

#[derive(Debug, Default)]
struct Inner {
    names: HashSet<Arc<str>>,
    targets: BTreeMap<Arc<str>, Target>,
    /// The label names of `vantage_target_info` besides `target`, sorted.
    info_keys: Vec<String>,
}

impl Inner {
    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.names.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.names.insert(a.clone());
        a
    }

    fn target(&mut self, target: &str) -> &mut Target {
        self.targets.entry(Arc::from(target)).or_default()
    }
}

/// The per-target series of every target seen or scheduled.
#[derive(Debug, Default)]
pub(super) struct Targets {
    inner: Mutex<Inner>,
    /// Length of the last exposition, to size the next one at once.
    last_len: std::sync::atomic::AtomicUsize,
}

fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Targets {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replace the target's last run with this report's.
    pub(super) fn observe(&self, report: &Report) {
        let mut g = self.lock();
        let regions = report
            .regions
            .iter()
            .map(|r| {
                let mut checks = Vec::with_capacity(r.checks.len());
                let mut reachable = None;
                for c in &r.checks {
                    let passed = match c.outcome {
                        Outcome::Pass => true,
                        Outcome::Fail | Outcome::Warn => false,
                        Outcome::Skip | Outcome::Error => continue,
                    };
                    if c.id.as_str() == "net.connect" {
                        reachable = Some(passed);
                    }
                    checks.push((g.intern(c.id.as_str()), passed));
                }
                RegionRun {
                    region: g.intern(&r.region),
                    checks,
                    reachable,
                    dns: r.dns.as_ref().map(|d| (d.all_global, d.has_a)),
                    phases: r
                        .phases_ms
                        .iter()
                        .map(|(p, ms)| (g.intern(p), *ms as f64 / 1000.0))
                        .collect(),
                }
            })
            .collect();
        let findings = report
            .findings
            .iter()
            .map(|f| {
                let scope = match f.scope {
                    Scope::Global => "global",
                    Scope::Regional => "regional",
                };
                (g.intern(&f.id), f.severity.as_str(), scope)
            })
            .collect();
        let t = g.target(&report.target);
        if let Some(i) = DECISIONS.iter().position(|d| *d == report.decision) {
            t.runs[i] += 1;
        }
        t.last_run = Some(now_unix());
        t.run = Some(Run {
            decision: report.decision,
            regions,
            findings,
        });
    }

    /// Remove every series of a target that left the configuration.
    pub(super) fn forget(&self, target: &str) {
        self.lock().targets.remove(target);
    }

    /// The scheduled targets: interval and `vantage_target_info` labels. A target no longer
    /// listed loses its info series (its other series go with [`Targets::forget`]).
    pub(super) fn set_schedule(&self, checks: &[(String, f64, BTreeMap<String, String>)]) {
        let mut g = self.lock();
        let keys: std::collections::BTreeSet<&String> =
            checks.iter().flat_map(|(_, _, l)| l.keys()).collect();
        g.info_keys = keys.into_iter().cloned().collect();
        for t in g.targets.values_mut() {
            t.info = None;
        }
        for (target, interval, labels) in checks {
            let keys = g.info_keys.clone();
            let values: Vec<Arc<str>> = keys
                .iter()
                .map(|k| g.intern(labels.get(k).map(String::as_str).unwrap_or("")))
                .collect();
            let t = g.target(target);
            t.interval = Some(*interval);
            t.info = Some(values);
        }
    }

    pub(super) fn scheduled_skipped(&self, target: &str) {
        *self.lock().target(target).skipped.get_or_insert(0) += 1;
    }

    /// Append the text exposition of every per-target family to `out`.
    pub(super) fn render(&self, out: &mut String) {
        use std::sync::atomic::Ordering;
        let g = self.lock();
        let start = out.len();
        out.reserve(self.last_len.load(Ordering::Relaxed) + 4096);
        let ts = &g.targets;
        let mut w = Writer::new(out);

        w.family(
            CHECK_INTERVAL,
            "gauge",
            "The scheduled interval of each target, in seconds.",
        );
        for (target, t) in ts {
            if let Some(v) = t.interval {
                w.series(CHECK_INTERVAL, &[("target", target)], v);
            }
        }
        w.family(
            CHECK_SUCCESS,
            "gauge",
            "Last outcome of each check in each region (1 pass, 0 fail or warn).",
        );
        for (target, r) in runs(ts) {
            for rr in &r.regions {
                for (check, passed) in &rr.checks {
                    let labels = [
                        ("check", &**check),
                        ("region", &rr.region),
                        ("target", target),
                    ];
                    w.series(CHECK_SUCCESS, &labels, f64::from(u8::from(*passed)));
                }
            }
        }
        w.family(
            DECISION,
            "gauge",
            "The last decision: 1 for the current value, 0 for the others.",
        );
        for (target, r) in runs(ts) {
            for d in DECISIONS {
                let labels = [("decision", d.as_str()), ("target", target)];
                w.series(DECISION, &labels, f64::from(u8::from(d == r.decision)));
            }
        }
        let dns = |w: &mut Writer,
                   family: &'static str,
                   help: &'static str,
                   pick: fn((bool, bool)) -> bool| {
            w.family(family, "gauge", help);
            for (target, r) in runs(ts) {
                for rr in &r.regions {
                    if let Some(d) = rr.dns {
                        let labels = [("region", &*rr.region), ("target", target)];
                        w.series(family, &labels, f64::from(u8::from(pick(d))));
                    }
                }
            }
        };
        dns(
            &mut w,
            DNS_ALL_GLOBAL,
            "Whether every address the region resolved is globally routable.",
            |d| d.0,
        );
        dns(
            &mut w,
            DNS_HAS_A,
            "Whether the region received an IPv4 A record.",
            |d| d.1,
        );
        w.family(
            FINDING_ACTIVE,
            "gauge",
            "Findings of the last merged run (1 active).",
        );
        for (target, r) in runs(ts) {
            for (id, severity, scope) in &r.findings {
                let labels = [
                    ("finding", &**id),
                    ("scope", scope),
                    ("severity", severity),
                    ("target", target),
                ];
                w.series(FINDING_ACTIVE, &labels, 1.0);
            }
        }
        w.family(
            LAST_RUN,
            "gauge",
            "When the target's last merged run finished (Unix seconds).",
        );
        for (target, t) in ts {
            if let Some(v) = t.last_run {
                w.series(LAST_RUN, &[("target", target)], v);
            }
        }
        w.family(
            PROBE_DURATION,
            "gauge",
            "Duration of each probe phase (dns, connect, tls, first_byte, total).",
        );
        for (target, r) in runs(ts) {
            for rr in &r.regions {
                for (phase, s) in &rr.phases {
                    let labels = [
                        ("phase", &**phase),
                        ("region", &rr.region),
                        ("target", target),
                    ];
                    w.series(PROBE_DURATION, &labels, *s);
                }
            }
        }
        w.family(
            REGION_REACHABLE,
            "gauge",
            "Whether the region connected to the target.",
        );
        for (target, r) in runs(ts) {
            for rr in &r.regions {
                if let Some(v) = rr.reachable {
                    let labels = [("region", &*rr.region), ("target", target)];
                    w.series(REGION_REACHABLE, &labels, f64::from(u8::from(v)));
                }
            }
        }
        w.family(RUNS_TOTAL, "counter", "Merged runs, by decision.");
        for (target, t) in ts {
            for (d, n) in DECISIONS.iter().zip(t.runs).filter(|(_, n)| *n > 0) {
                w.series(
                    RUNS_TOTAL,
                    &[("decision", d.as_str()), ("target", target)],
                    n as f64,
                );
            }
        }
        w.family(
            SCHEDULED_SKIPPED,
            "counter",
            "Scheduled runs skipped because the previous run of the target was still going.",
        );
        for (target, t) in ts {
            if let Some(n) = t.skipped {
                w.series(SCHEDULED_SKIPPED, &[("target", target)], n as f64);
            }
        }
        w.family(
            TARGET_INFO,
            "gauge",
            "Scheduled targets and their labels (always 1).",
        );
        let mut names: Vec<&str> = g.info_keys.iter().map(String::as_str).collect();
        names.push("target");
        names.sort_unstable();
        for (target, t) in ts {
            if let Some(values) = &t.info {
                let labels: Vec<(&str, &str)> = names
                    .iter()
                    .map(|n| {
                        let v = match g.info_keys.iter().position(|k| k == n) {
                            Some(i) => &*values[i],
                            None => &**target,
                        };
                        (*n, v)
                    })
                    .collect();
                w.series(TARGET_INFO, &labels, 1.0);
            }
        }
        let written = w.out.len() - start;
        self.last_len.store(written, Ordering::Relaxed);
    }
}

/// Targets that have a merged run, with it.
fn runs(ts: &BTreeMap<Arc<str>, Target>) -> impl Iterator<Item = (&str, &Run)> {
    ts.iter()
        .filter_map(|(k, t)| t.run.as_ref().map(|r| (&**k, r)))
}
