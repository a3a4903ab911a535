//! The bounded store of reports: running ones, and finished ones up to a count and an age.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use vantage_agent::model::RegionResult;

use crate::report::Report;

struct Entry {
    report: Report,
    done: watch::Sender<bool>,
    created: Instant,
}

/// Reports by id (ULIDs, so the map is in creation order).
pub struct Store {
    inner: Mutex<BTreeMap<String, Entry>>,
    max_reports: usize,
    max_age: Duration,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("max_reports", &self.max_reports)
            .finish()
    }
}

impl Store {
    pub fn new(max_reports: usize, max_age: Duration) -> Self {
        Store {
            inner: Mutex::default(),
            max_reports: max_reports.max(1),
            max_age,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Entry>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add a running report; the receiver turns true when it is finished.
    pub fn insert_running(&self, report: Report) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        let mut g = self.lock();
        // Evict: too old first, then the oldest finished ones past the count.
        let max_age = self.max_age;
        g.retain(|_, e| e.created.elapsed() <= max_age || !*e.done.borrow());
        while g.len() >= self.max_reports {
            let Some(oldest) = g
                .iter()
                .find(|(_, e)| *e.done.borrow())
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            g.remove(&oldest);
        }
        g.insert(
            report.id.clone(),
            Entry {
                report,
                done: tx,
                created: Instant::now(),
            },
        );
        rx
    }

    pub fn add_region(&self, id: &str, region: &RegionResult) {
        if let Some(e) = self.lock().get_mut(id) {
            e.report.regions.push(region.clone());
        }
    }

    /// Replace the running report with the final one.
    pub fn finish(&self, report: Report) {
        let mut g = self.lock();
        if let Some(e) = g.get_mut(&report.id) {
            e.report = report;
            // send_replace: the value changes even when no one is waiting any more (send
            // would leave it false, and the report would count as running forever).
            e.done.send_replace(true);
        }
    }

    pub fn get(&self, id: &str) -> Option<Report> {
        self.lock().get(id).map(|e| e.report.clone())
    }

    /// Checks still running (not finished yet).
    pub fn running(&self) -> usize {
        self.lock().values().filter(|e| !*e.done.borrow()).count()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Decision, SCHEMA_ID};
    use vantage_agent::model::Era;

    fn report(id: &str) -> Report {
        Report {
            schema: SCHEMA_ID.into(),
            id: id.into(),
            target: "http://t/".into(),
            started_at: String::new(),
            duration_ms: 0,
            state: Some("running".into()),
            decision: Decision::Unknown,
            reason: "running".into(),
            era: Era::Unknown,
            regions: vec![],
            findings: vec![],
            baseline: None,
            gate: None,
        }
    }

    #[test]
    fn finished_reports_are_bounded_running_ones_kept() {
        let s = Store::new(2, Duration::from_secs(3600));
        let _a = s.insert_running(report("a"));
        let _b = s.insert_running(report("b"));
        // Both running: nothing can be evicted, so the store grows past its bound for now.
        let _c = s.insert_running(report("c"));
        assert_eq!(s.len(), 3);
        let mut done = report("a");
        done.state = None;
        s.finish(done);
        let _d = s.insert_running(report("d"));
        assert!(
            s.get("a").is_none(),
            "the oldest finished report goes first"
        );
        assert!(s.get("b").is_some() && s.get("d").is_some());
    }

    #[test]
    fn finishing_wakes_the_waiter() {
        let s = Store::new(10, Duration::from_secs(60));
        let rx = s.insert_running(report("x"));
        assert!(!*rx.borrow());
        s.add_region(
            "x",
            &RegionResult::absent("eu", vantage_agent::model::RegionStatus::Complete),
        );
        assert_eq!(s.get("x").unwrap().regions.len(), 1);
        s.finish(report("x"));
        assert!(*rx.borrow());
    }

    #[test]
    fn a_report_nobody_waits_for_still_finishes() {
        let s = Store::new(2, Duration::from_secs(60));
        // The API dropped its receiver (no ?wait=): finishing must still count.
        drop(s.insert_running(report("a")));
        assert_eq!(s.running(), 1);
        s.finish(report("a"));
        assert_eq!(s.running(), 0, "a finished report is not running");
        // And it can be evicted like any finished report.
        drop(s.insert_running(report("b")));
        drop(s.insert_running(report("c")));
        assert!(s.get("a").is_none());
    }
}
