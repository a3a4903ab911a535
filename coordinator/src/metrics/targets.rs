//! The per-target series, written only for scheduled targets, kept compactly and written
//! straight into the text exposition.
//!
//! A scheduled target has about 30 series (a check outcome per check and region, phases,
//! decisions, findings). Kept as `prometheus` crate vectors, each series costs a hash entry
//! with its own copy of every label pair, and `gather` rebuilds all of them as protobuf
//! messages on every scrape: about 30 KiB per target at rest and twice that during a scrape
//! (BENCHMARKS.md, "Where the memory goes"). Here a target keeps what its last merged run
//! showed as small values: typed check and finding ids, and shared strings for region and
//! phase names (interned). The exposition is written from that, family by family.
//!
//! The table holds the scheduled targets and nothing else: the schedule adds and removes
//! entries, and only the schedule's own runs are observed (`checks::Origin::Scheduled`): a
//! check submitted through the API never reaches here, even for a scheduled target (its
//! regions, credential or timing are the caller's), and a run that finished after its
//! target left the schedule changes nothing.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Mutex};

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Outcome, RegionStatus};

use super::families::FAMILIES;
use super::text::Writer;
use crate::report::{Decision, Report, Scope};

/// The decisions, each a `vantage_decision` and `vantage_runs_total` series per target, in
/// the order they are written (by label value).
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
    /// (check, passed); checks without evidence (skipped, errored, unknown) are absent.
    pub(super) checks: Vec<(CheckId, bool)>,
    pub(super) reachable: Option<bool>,
    /// (all addresses global, has an A record)
    pub(super) dns: Option<(bool, bool)>,
    /// (phase, seconds)
    pub(super) phases: Vec<(Arc<str>, f64)>,
}

/// What a target's last merged run showed.
#[derive(Debug)]
pub(super) struct Run {
    /// As the merge decided.
    pub(super) decision: Decision,
    /// As the gate judges it with the check's baseline (`Gate::decision`).
    pub(super) gate_decision: Decision,
    pub(super) regions: Vec<RegionRun>,
    /// (finding, severity, scope, `accepted` label: `true`, `expired` or `false`)
    pub(super) findings: Vec<(FindingId, &'static str, &'static str, &'static str)>,
    /// (region, whether it is a reason the decision is unknown: `unknown_regions`, whether
    /// that reason was the fleet's in this run: `fleet_regions`)
    pub(super) unknown: Vec<(Arc<str>, bool, bool)>,
}

/// Every region of a run (those with a result, and those a finding names), each with
/// whether it is a reason the decision is `unknown` (`checks.md` 4.1): it did not observe
/// the target (`merge::not_observing`, missing regions included), or a finding that leaves
/// the decision unknown and that the baseline does not accept names it. Every such finding
/// names its regions, so a run that is `unknown` has at least one region at 1; the alert
/// rules leave out the regions that are the fleet's (no agent, degraded), never the others.
fn unknown_regions(report: &Report) -> BTreeMap<String, bool> {
    let mut regions: BTreeMap<String, bool> = report
        .regions
        .iter()
        .map(|r| (r.region.clone(), false))
        .collect();
    for region in crate::merge::not_observing(report) {
        regions.insert(region, true);
    }
    for f in report
        .findings
        .iter()
        .filter(|f| crate::merge::UNKNOWN_FINDINGS.contains(&f.id) && !f.is_accepted())
    {
        for region in &f.regions {
            regions.insert(region.clone(), true);
        }
    }
    regions
}

/// The regions whose lack of evidence in this run was the fleet's, as the run saw it: the
/// report shows no agent connected (`no-agent`) or discounts the region as degraded
/// (`fleet.vantage-degraded`), or the caller names it in `fleet` (its agents refused the job,
/// a degraded vantage at the run: `Checks::run`). Never the fleet's state at a later scrape:
/// a run unknown because its agent was away stays excused after the agent is back, and a
/// region unknown for its own reasons (a deadline) is not excused when its agent leaves
/// later (red team round 16, D1).
fn fleet_regions(report: &Report, fleet: &BTreeSet<String>) -> BTreeSet<String> {
    let mut regions: BTreeSet<String> = fleet.clone();
    regions.extend(
        report
            .regions
            .iter()
            .filter(|r| r.status == RegionStatus::NoAgent)
            .map(|r| r.region.clone()),
    );
    regions.extend(
        report
            .findings
            .iter()
            .filter(|f| f.id == FindingId::FleetVantageDegraded)
            .flat_map(|f| f.regions.iter().cloned()),
    );
    regions
}

/// A scheduled target.
#[derive(Debug, Default)]
pub(super) struct Target {
    pub(super) run: Option<Run>,
    /// Merged runs by decision, in the order of `DECISIONS` (0 until the first).
    pub(super) runs: [u64; 4],
    pub(super) last_run: Option<f64>,
    pub(super) skipped: u64,
    pub(super) interval: f64,
    /// When the target entered the schedule (Unix seconds); a reload that keeps it keeps this.
    pub(super) scheduled_at: f64,
    /// The regions it is checked from, once the schedule said (`keep_regions`).
    pub(super) regions: Option<Vec<String>>,
    /// Values of `Inner::info_keys`.
    pub(super) info: Vec<Arc<str>>,
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
}

/// The per-target series of every scheduled target.
#[derive(Debug, Default)]
pub(super) struct Targets {
    inner: Mutex<Inner>,
}

impl Targets {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replace a scheduled target's last run with the report of its scheduled run; a target
    /// that is not scheduled gets nothing.
    pub(super) fn observe(&self, report: &Report, fleet: &BTreeSet<String>) {
        let mut g = self.lock();
        let Some(t) = g.targets.get(report.target.as_str()) else {
            return;
        };
        // A run started before a reload took a region away answered a question no longer
        // asked: it is not exported (the next run is).
        if let Some(now) = &t.regions {
            if report.regions.iter().any(|r| !now.contains(&r.region)) {
                tracing::debug!(target = %report.target, "a run from before the reload that changed its regions: not exported");
                return;
            }
        }
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
                        Outcome::Skip | Outcome::Error | Outcome::Unknown => continue,
                    };
                    if c.id == CheckId::NetConnect {
                        reachable = Some(passed);
                    }
                    checks.push((c.id, passed));
                }
                RegionRun {
                    region: g.intern(&r.region),
                    checks,
                    reachable,
                    // Only an answer from the zone says what it holds: a resolver that
                    // timed out or failed leaves the DNS series out, never "no A record".
                    dns: r
                        .dns
                        .as_ref()
                        .filter(|_| {
                            r.check(CheckId::DnsResolve)
                                .is_some_and(crate::merge::evidence::has_evidence)
                        })
                        .map(|d| (d.all_global, d.has_a)),
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
                let accepted = if f.is_accepted() {
                    "true"
                } else if f.is_expired() {
                    "expired"
                } else {
                    "false"
                };
                (f.id, f.severity.as_str(), scope, accepted)
            })
            .collect();
        let fleet = fleet_regions(report, fleet);
        let unknown = unknown_regions(report)
            .into_iter()
            .map(|(r, is)| {
                let fleet = is && fleet.contains(&r);
                (g.intern(&r), is, fleet)
            })
            .collect();
        let Some(t) = g.targets.get_mut(report.target.as_str()) else {
            return;
        };
        if let Some(i) = DECISIONS.iter().position(|d| *d == report.decision) {
            t.runs[i] += 1;
        }
        t.last_run = Some(crate::clock::unix_now());
        t.run = Some(Run {
            decision: report.decision,
            gate_decision: crate::exit::Gate::default().decision(report),
            regions,
            findings,
            unknown,
        });
    }

    /// The regions `target` is checked from now (a reload may change them). A last run that
    /// included a region no longer asked goes, with every series it wrote (its decision and
    /// findings included: they rest on that region too); so does a run still in flight when
    /// it ends (`observe`).
    pub(super) fn keep_regions(&self, target: &str, regions: &[String]) {
        let mut g = self.lock();
        let Some(t) = g.targets.get_mut(target) else {
            return;
        };
        let stale = t.run.as_ref().is_some_and(|run| {
            run.regions
                .iter()
                .any(|r| !regions.iter().any(|k| k.as_str() == &*r.region))
        });
        if stale {
            t.run = None;
        }
        t.regions = Some(regions.to_vec());
    }

    /// Remove every series of a target that left the configuration.
    pub(super) fn forget(&self, target: &str) {
        self.lock().targets.remove(target);
    }

    /// The scheduled targets: interval and `vantage_target_info` labels; a new one starts
    /// with its counters at 0, one still listed keeps its series and counters, and one no
    /// longer listed loses every series.
    pub(super) fn set_schedule(&self, checks: &[(String, f64, BTreeMap<String, String>)]) {
        let mut g = self.lock();
        let keys: BTreeSet<&String> = checks.iter().flat_map(|(_, _, l)| l.keys()).collect();
        g.info_keys = keys.into_iter().cloned().collect();
        let listed: HashSet<&str> = checks.iter().map(|(t, _, _)| t.as_str()).collect();
        g.targets.retain(|t, _| listed.contains(&**t));
        for (target, interval, labels) in checks {
            let keys = std::mem::take(&mut g.info_keys);
            let info: Vec<Arc<str>> = keys
                .iter()
                .map(|k| g.intern(labels.get(k).map(String::as_str).unwrap_or("")))
                .collect();
            g.info_keys = keys;
            let t = g
                .targets
                .entry(Arc::from(target.as_str()))
                .or_insert_with(|| Target {
                    scheduled_at: crate::clock::unix_now(),
                    ..Target::default()
                });
            t.interval = *interval;
            t.info = info;
        }
    }

    /// A scheduled run skipped because the previous one was still going.
    pub(super) fn scheduled_skipped(&self, target: &str) {
        if let Some(t) = self.lock().targets.get_mut(target) {
            t.skipped += 1;
        }
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
