//! A check's verdict before it is timed and named, and the recorder that keeps results in
//! client order and fills every check that did not run with a `skip` (or, when the deadline
//! cut the run, `unknown`) and its reason.

use std::time::{Duration, Instant};

use super::observed;
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

/// A timeout that ends closer than this to the run's own deadline is the deadline's doing,
/// not the target's: the target is blamed for silence only when its per-exchange timeout
/// ran out well inside the deadline (`checks.md` 4.1).
pub const DEADLINE_MARGIN: Duration = Duration::from_millis(100);

/// The run's own deadline, as the recorder sees it.
#[derive(Debug, Clone, Copy)]
struct RunDeadline {
    at: Instant,
    /// The deadline as the operator gave it, for the evidence.
    total: Duration,
}

/// Collects check results for one vantage.
#[derive(Debug, Default)]
pub struct Recorder {
    results: Vec<CheckResult>,
    deadline: Option<RunDeadline>,
    /// A timeout was the run's own deadline's doing: what is left has no evidence either.
    deadline_hit: bool,
}

impl Recorder {
    /// A recorder for a run that must end at `at` (`total` after it started). A timeout
    /// recorded within [`DEADLINE_MARGIN`] of `at` becomes `unknown` with cause `deadline`.
    pub fn with_deadline(at: Instant, total: Duration) -> Self {
        Recorder {
            deadline: Some(RunDeadline { at, total }),
            ..Recorder::default()
        }
    }

    /// Whether the run's own deadline ended a check (so the run is partial).
    pub fn deadline_hit(&self) -> bool {
        self.deadline_hit
    }

    pub fn record(&mut self, id: CheckId, verdict: Verdict, started: Instant) {
        self.record_ms(id, verdict, started.elapsed().as_millis() as u64);
    }

    /// A timeout that ran out at (or near) the run's own deadline says nothing about the
    /// target: whichever timer fired first, it is `unknown` for cause `deadline`.
    fn deadline_verdict(&mut self, verdict: Verdict) -> Verdict {
        let Some(d) = self.deadline else {
            return verdict;
        };
        let timed_out = verdict.cause == Some(Cause::Timeout)
            && matches!(
                verdict.outcome,
                Outcome::Fail | Outcome::Warn | Outcome::Unknown | Outcome::Error
            );
        if !timed_out || Instant::now() + DEADLINE_MARGIN < d.at {
            return verdict;
        }
        self.deadline_hit = true;
        Verdict::unknown(
            Cause::Deadline,
            format!(
                "not finished: this vantage's overall deadline ({}) ran out while it waited, so nothing is known about the target's answer time (the per-exchange timeout did not run out first)",
                crate::probe::http::fmt_wait(d.total)
            ),
        )
    }

    pub fn record_ms(&mut self, id: CheckId, verdict: Verdict, duration_ms: u64) {
        let verdict = self.deadline_verdict(verdict);
        debug_assert!(
            verdict.severity.is_none_or(|s| s <= id.spec().max_severity),
            "{id}: severity {:?} above the catalogue's highest",
            verdict.severity
        );
        self.results.retain(|r| r.id != id);
        self.results.push(CheckResult {
            id,
            outcome: verdict.outcome,
            // Every observation passes here: whatever text of the target's it quotes, no
            // control character reaches a report raw, and its length is bounded.
            observed: observed::clean(&verdict.observed, observed::MAX_OBSERVED_CHARS),
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

    /// Mark every catalogued check not yet recorded as skipped with `reason`; after the
    /// run's own deadline ended a check, as `unknown` for cause `deadline` instead (they were
    /// due, and a skip would read as "did not apply").
    pub fn skip_rest(&mut self, reason: &str) {
        if self.deadline_hit {
            self.unknown_rest(
                Cause::Deadline,
                &format!("not run: this vantage's overall deadline ran out first ({reason})"),
            );
            return;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn timed_out() -> Verdict {
        Verdict::fail(Severity::High, "never answered within 300 ms").cause(Cause::Timeout)
    }

    #[test]
    fn a_timeout_at_the_runs_own_deadline_is_unknown_deadline_and_the_rest_too() {
        // Both timers ran out together (the deadline is within the margin): whichever
        // fired first, the target is not blamed.
        let mut rec = Recorder::with_deadline(
            Instant::now() + DEADLINE_MARGIN / 2,
            Duration::from_millis(300),
        );
        rec.record_ms(CheckId::EraDetect, timed_out(), 300);
        let era = rec.get(CheckId::EraDetect).unwrap();
        assert_eq!(
            (era.outcome, era.cause, era.severity),
            (Outcome::Unknown, Some(Cause::Deadline), None)
        );
        assert!(
            era.observed.contains("deadline (300 ms)"),
            "{}",
            era.observed
        );
        assert!(rec.deadline_hit());
        // What an earlier stage's failure would skip is due and unseen: unknown, not skip.
        rec.skip_rest("server/discover got no response");
        let rest = rec.get(CheckId::DiscoverShape).unwrap();
        assert_eq!(
            (rest.outcome, rest.cause),
            (Outcome::Unknown, Some(Cause::Deadline))
        );
    }

    #[test]
    fn a_timeout_well_inside_the_deadline_blames_the_target() {
        let mut rec = Recorder::with_deadline(
            Instant::now() + Duration::from_secs(60),
            Duration::from_secs(60),
        );
        rec.record_ms(CheckId::EraDetect, timed_out(), 300);
        let era = rec.get(CheckId::EraDetect).unwrap();
        assert_eq!(
            (era.outcome, era.cause, era.severity),
            (Outcome::Fail, Some(Cause::Timeout), Some(Severity::High))
        );
        assert!(!rec.deadline_hit());
        rec.skip_rest("server/discover got no response");
        assert_eq!(
            rec.get(CheckId::DiscoverShape).unwrap().outcome,
            Outcome::Skip
        );
    }

    #[test]
    fn only_timeouts_are_turned_into_the_deadline() {
        let mut rec = Recorder::with_deadline(Instant::now(), Duration::from_millis(300));
        rec.record_ms(
            CheckId::NetConnect,
            Verdict::fail(Severity::High, "refused").cause(Cause::Refused),
            1,
        );
        rec.record_ms(CheckId::EraDetect, Verdict::pass("modern"), 1);
        assert_eq!(
            rec.get(CheckId::NetConnect).unwrap().cause,
            Some(Cause::Refused)
        );
        assert_eq!(rec.get(CheckId::EraDetect).unwrap().outcome, Outcome::Pass);
        assert!(!rec.deadline_hit());
    }
}
