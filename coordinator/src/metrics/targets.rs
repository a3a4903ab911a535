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

use super::families::FAMILIES;
use super::text::Writer;
use crate::report::{Decision, Report, Scope};

pub(super) const DECISIONS: [Decision; 4] = [
    Decision::Blocked,
    Decision::Pass,
    Decision::Review,
    Decision::Unknown,
];

/// One region's part of the last merged run.
#[derive(Debug)]
pub(super) struct RegionRun {
    pub(super) region: Arc<str>,
    /// (check id, passed); skipped checks and checks that could not run are absent.
    pub(super) checks: Vec<(Arc<str>, bool)>,
    pub(super) reachable: Option<bool>,
    /// (all addresses global, has an A record)
    pub(super) dns: Option<(bool, bool)>,
    /// (phase, seconds)
    pub(super) phases: Vec<(Arc<str>, f64)>,
}

/// What a target's last merged run showed.
#[derive(Debug)]
pub(super) struct Run {
    pub(super) decision: Decision,
    pub(super) regions: Vec<RegionRun>,
    /// (finding id, severity, scope)
    pub(super) findings: Vec<(Arc<str>, &'static str, &'static str)>,
}

#[derive(Debug, Default)]
pub(super) struct Target {
    pub(super) run: Option<Run>,
    /// Merged runs by decision, in the order of `DECISIONS`.
    pub(super) runs: [u64; 4],
    pub(super) last_run: Option<f64>,
    pub(super) skipped: Option<u64>,
    pub(super) interval: Option<f64>,
    /// Values of `Inner::info_keys`, when the target is scheduled.
    pub(super) info: Option<Vec<Arc<str>>>,
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

    /// Append per-target series to `out`, from where `cursor` stands, until `out` holds at
    /// least `budget` bytes or every family is written. The lock is held for one chunk only:
    /// a scrape of many targets never holds the whole text, nor the lock for long.
    pub(super) fn render_chunk(&self, cursor: &mut Cursor, out: &mut String, budget: usize) {
        use std::ops::Bound;
        let g = self.lock();
        while let Some(&family) = FAMILIES.get(cursor.family) {
            let mut w = Writer::new(out);
            if !cursor.header_written {
                w.family(family.name(), family.kind(), family.help());
            }
            let from = match &cursor.after {
                Some(k) => Bound::Excluded(&**k),
                None => Bound::Unbounded,
            };
            let mut full = None;
            for (key, t) in g.targets.range::<str, _>((from, Bound::Unbounded)) {
                family.write(key, t, &g.info_keys, &mut w);
                if w.out.len() >= budget {
                    full = Some(key.clone());
                    break;
                }
            }
            cursor.header_written = !w.header_pending();
            match full {
                Some(key) => {
                    cursor.after = Some(key);
                    return;
                }
                None => {
                    cursor.family += 1;
                    cursor.after = None;
                    cursor.header_written = false;
                }
            }
        }
    }
}

/// Where a chunked exposition stands: the family, and the last target written in it.
#[derive(Debug, Default)]
pub(super) struct Cursor {
    family: usize,
    after: Option<Arc<str>>,
    header_written: bool,
}

impl Cursor {
    pub(super) fn done(&self) -> bool {
        self.family >= FAMILIES.len()
    }
}
