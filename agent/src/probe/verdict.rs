//! A check's verdict before it is timed and named, and the recorder that keeps results in
//! client order and fills every check that did not run with a `skip` (or, when the deadline
//! cut the run, `unknown`) and its reason.

use std::time::Instant;

use crate::catalog::CheckId;
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
    /// No evidence either way, for `cause` (`checks.md` 4.1): never a pass, never a finding
    /// about the target under this check's id.
    pub fn unknown(cause: Cause, observed: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Unknown,
            observed: observed.into(),
            severity: None,
            cause: Some(cause),
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
    pub fn record(&mut self, id: CheckId, verdict: Verdict, started: Instant) {
        self.record_ms(id, verdict, started.elapsed().as_millis() as u64);
    }

    pub fn record_ms(&mut self, id: CheckId, verdict: Verdict, duration_ms: u64) {
        debug_assert!(
            verdict.severity.is_none_or(|s| s <= id.spec().max_severity),
            "{id}: severity {:?} above the catalogue's highest",
            verdict.severity
        );
        self.results.retain(|r| r.id != id);
        self.results.push(CheckResult {
            id,
            outcome: verdict.outcome,
            observed: verdict.observed,
            expected: id.expected().to_string(),
            duration_ms,
            severity: verdict.severity,
            cause: verdict.cause,
        });
    }

    pub fn get(&self, id: CheckId) -> Option<&CheckResult> {
        self.results.iter().find(|r| r.id == id)
    }

    pub fn has(&self, id: CheckId) -> bool {
        self.get(id).is_some()
    }

    /// Mark every catalogued check not yet recorded as skipped with `reason`.
    pub fn skip_rest(&mut self, reason: &str) {
        for &id in CheckId::ALL {
            if !self.has(id) {
                self.record_ms(id, Verdict::skip(reason), 0);
            }
        }
    }

    /// Mark every catalogued check not yet recorded as `unknown` for `cause` (the deadline
    /// ran out before it): it was due to run and produced no evidence.
    pub fn unknown_rest(&mut self, cause: Cause, reason: &str) {
        for &id in CheckId::ALL {
            if !self.has(id) {
                self.record_ms(id, Verdict::unknown(cause, reason), 0);
            }
        }
    }

    /// The results in catalogue (client) order.
    pub fn finish(mut self) -> Vec<CheckResult> {
        self.results.sort_by_key(|r| r.id);
        self.results
    }
}
