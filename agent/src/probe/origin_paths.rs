//! `security.origin` on a dual-era server: the Origin guard is asked on both paths, the
//! 2026-07-28 one (`server/discover` with a foreign `Origin`) and the 2025-11-25 one
//! (`initialize`, the request that opens a legacy session, where DNS rebinding matters
//! most: spec 5, legacy.origin). One verdict for the check: the worse of the two, so a
//! foreign Origin served on either path fails, and a path not observed leaves the check
//! `unknown` rather than a warning or a pass that covers only the other path
//! (`checks.md` 4.1).

use super::verdict::Verdict;
use crate::model::Outcome;

/// How bad a verdict is for the combination: a failure, then no evidence (the path not
/// observed might be the one that serves the Origin), then a warning, a pass, a skip.
fn rank(v: &Verdict) -> (u8, Option<crate::model::Severity>) {
    let r = match v.outcome {
        Outcome::Fail => 5,
        Outcome::Unknown | Outcome::Error => 4,
        Outcome::Warn => 3,
        Outcome::Pass => 2,
        Outcome::Skip => 1,
    };
    (r, v.severity)
}

/// The verdict of `security.origin` from the verdict on the 2026-07-28 path (`modern`) and
/// on the 2025-11-25 path (`legacy`): the worse one (its outcome, severity and cause),
/// saying what each path answered.
pub fn both(modern: Verdict, legacy: Verdict) -> Verdict {
    let observed = format!(
        "server/discover (2026-07-28): {}; initialize (2025-11-25): {}",
        modern.observed, legacy.observed
    );
    let worse = if rank(&legacy) > rank(&modern) {
        legacy
    } else {
        modern
    };
    Verdict { observed, ..worse }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cause, Severity};

    /// Red-team round 9 defect 4: a dual-era server whose `initialize` serves a foreign
    /// Origin passed `security.origin` on its 2026-07-28 path's 403.
    #[test]
    fn the_worse_path_decides() {
        let guarded = || Verdict::pass("403 text/plain");
        let served = || {
            Verdict::fail(
                Severity::Medium,
                "200 application/json: a request with Origin https://vantage-probe.invalid was served",
            )
        };
        let unseen = || Verdict::unknown(Cause::OtherReason, "rate limited: answered 429");
        let refused = || {
            Verdict::warn(
                Severity::Low,
                "400: refused, but a foreign Origin MUST get 403",
            )
        };
        for (m, l, want) in [
            (
                guarded(),
                served(),
                (Outcome::Fail, Some(Severity::Medium), None),
            ),
            (
                served(),
                guarded(),
                (Outcome::Fail, Some(Severity::Medium), None),
            ),
            (guarded(), guarded(), (Outcome::Pass, None, None)),
            (
                refused(),
                unseen(),
                (Outcome::Unknown, None, Some(Cause::OtherReason)),
            ),
            (
                guarded(),
                refused(),
                (Outcome::Warn, Some(Severity::Low), None),
            ),
            (
                unseen(),
                served(),
                (Outcome::Fail, Some(Severity::Medium), None),
            ),
        ] {
            let what = format!("{} / {}", m.observed, l.observed);
            let v = both(m, l);
            assert_eq!((v.outcome, v.severity, v.cause), want, "{what}");
            assert!(
                v.observed.starts_with("server/discover (2026-07-28): ")
                    && v.observed.contains("; initialize (2025-11-25): "),
                "{}",
                v.observed
            );
        }
    }
}
