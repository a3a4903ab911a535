//! A check's verdict before it is timed and named, and the recorder that keeps results in
//! client order and fills every check that did not run with a `skip` and its reason.

use std::time::Instant;

use crate::catalog;
use crate::model::{Cause, CheckResult, Outcome, Severity};

/// The judgement of one rule on one observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub observed: String,
    pub severity: Option<Severity>,
    pub cause: Option<Cause>,
}

impl Verdict {
    pub fn pass(observed: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Pass,
            observed: observed.into(),
            severity: None,
            cause: None,
        }
    }
    pub fn fail(severity: Severity, observed: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Fail,
            observed: observed.into(),
            severity: Some(severity),
            cause: None,
        }
    }
    pub fn warn(severity: Severity, observed: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Warn,
            observed: observed.into(),
            severity: Some(severity),
            cause: None,
        }
    }
    pub fn skip(reason: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Skip,
            observed: reason.into(),
            severity: None,
            cause: None,
        }
    }
    pub fn error(observed: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Error,
            observed: observed.into(),
            severity: None,
            cause: None,
        }
    }
    pub fn cause(mut self, cause: Cause) -> Self {
        self.cause = Some(cause);
        self
    }
}

/// Collects check results for one vantage.
#[derive(Debug, Default)]
pub struct Recorder {
    results: Vec<CheckResult>,
}

impl Recorder {
    pub fn record(&mut self, id: &str, verdict: Verdict, started: Instant) {
        self.record_ms(id, verdict, started.elapsed().as_millis() as u64);
    }

    pub fn record_ms(&mut self, id: &str, verdict: Verdict, duration_ms: u64) {
        let expected = catalog::spec(id)
            .map(|s| s.expected)
            .unwrap_or("")
            .to_string();
        self.results.retain(|r| r.id != id);
        self.results.push(CheckResult {
            id: id.to_string(),
            outcome: verdict.outcome,
            observed: verdict.observed,
            expected,
            duration_ms,
            severity: verdict.severity,
            cause: verdict.cause,
        });
    }

    pub fn get(&self, id: &str) -> Option<&CheckResult> {
        self.results.iter().find(|r| r.id == id)
    }

    pub fn has(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    /// Mark every catalogued check not yet recorded as skipped with `reason`.
    pub fn skip_rest(&mut self, reason: &str) {
        for spec in catalog::CHECKS {
            if !self.has(spec.id) {
                self.record_ms(spec.id, Verdict::skip(reason), 0);
            }
        }
    }

    /// The results in catalogue order, auth checks last.
    pub fn finish(mut self) -> Vec<CheckResult> {
        let rank = |id: &str| {
            catalog::CHECKS
                .iter()
                .position(|c| c.id == id)
                .unwrap_or(usize::MAX)
        };
        self.results.sort_by_key(|r| rank(&r.id));
        self.results
    }
}
