//! `security.origin` on a dual-era server: the Origin guard is asked on both paths, the
//! 2026-07-28 one (`server/discover` with a foreign `Origin`) and the 2025-11-25 one
//! (`initialize`, the request that opens a legacy session, where DNS rebinding matters
//! most: spec 5, legacy.origin). One verdict for the check: the worse of the two, so a
//! foreign Origin served on either path fails, and a path not observed leaves the check
//! `unknown` rather than a warning or a pass that covers only the other path
//! (`checks.md` 4.1).
//!
//! [`with_second`]: a probe asked with a second request (the `Mcp-Method` probes and the
//! foreign Origin also on `tools/list`, `version.unsupported` also with a future version:
//! red team round 15, defects 6, 7, 12) is the worse of the two, except that a second
//! request that gave no evidence leaves the main request's verdict to stand alone.

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

/// The verdict of a probe from its main request's verdict (`main`; `main_label` names its
/// request in the evidence, `None` when its evidence names it already) and its second
/// request's (`second`, on the request `label`): the worse one (a failure, then no
/// evidence, then a warning, a pass), the evidence naming both requests. The second request
/// is evidence added to the main one's: unanswered, or answered for another reason
/// (`unknown`, `error`), or not sent (`skip`), it says nothing, and the main request's
/// verdict stands alone (its outcome, severity and cause), the evidence saying why the
/// second adds nothing. So a guard seen refusing on the main request and not observed on
/// the second is the main request's pass, and one seen serving on the second fails whatever
/// the main request got.
pub fn with_second(
    main: Verdict,
    main_label: Option<&str>,
    second: Verdict,
    label: &str,
) -> Verdict {
    let main_seen = match main_label {
        Some(l) => format!("{l}: {}", main.observed),
        None => main.observed.clone(),
    };
    if matches!(
        second.outcome,
        Outcome::Unknown | Outcome::Error | Outcome::Skip
    ) {
        return Verdict {
            observed: format!(
                "{main_seen}; {label}: no evidence, the verdict rests on the other request ({})",
                second.observed
            ),
            ..main
        };
    }
    let observed = format!("{main_seen}; {label}: {}", second.observed);
    let worse = if rank(&second) > rank(&main) {
        second
    } else {
        main
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

    /// Red team round 15, defects 6, 7, 12: a probe asked on a second request is the worse
    /// of the two; a second request that gave no evidence (429, 5xx, reset, 401: `unknown`)
    /// leaves the main request's verdict to stand alone, and the evidence names both.
    #[test]
    fn a_second_request_adds_evidence_and_never_takes_it_away() {
        let refused = || Verdict::pass("400 application/json JSON-RPC error -32020");
        let served = || {
            Verdict::fail(
                Severity::Medium,
                "200 application/json: the request was served; expected 400 with -32020",
            )
        };
        let unseen = || {
            Verdict::unknown(
                Cause::OtherReason,
                "rate limited: answered 429: what headers.missing-method tests was not observed",
            )
        };
        let reset = || Verdict::unknown(Cause::Reset, "no response");
        let low = || Verdict::warn(Severity::Low, "404: refused, but not with 403");
        for (main, second, want) in [
            // Served on tools/list: fails whatever discover got.
            (
                refused(),
                served(),
                (Outcome::Fail, Some(Severity::Medium), None),
            ),
            (
                unseen(),
                served(),
                (Outcome::Fail, Some(Severity::Medium), None),
            ),
            (
                served(),
                refused(),
                (Outcome::Fail, Some(Severity::Medium), None),
            ),
            (refused(), refused(), (Outcome::Pass, None, None)),
            (refused(), low(), (Outcome::Warn, Some(Severity::Low), None)),
            // tools/list not observed: discover's verdict stands alone.
            (refused(), unseen(), (Outcome::Pass, None, None)),
            (refused(), reset(), (Outcome::Pass, None, None)),
            (
                served(),
                unseen(),
                (Outcome::Fail, Some(Severity::Medium), None),
            ),
            // discover not observed: a pass on tools/list alone does not clear it.
            (
                unseen(),
                refused(),
                (Outcome::Unknown, None, Some(Cause::OtherReason)),
            ),
        ] {
            let what = format!("{} / {}", main.observed, second.observed);
            let second_unseen = second.outcome == Outcome::Unknown;
            let v = with_second(main, Some("server/discover"), second, "tools/list");
            assert_eq!((v.outcome, v.severity, v.cause), want, "{what}");
            assert!(
                v.observed.starts_with("server/discover: ")
                    && v.observed.contains("; tools/list: "),
                "{}",
                v.observed
            );
            assert_eq!(
                v.observed.contains("tools/list: no evidence"),
                second_unseen,
                "{}",
                v.observed
            );
        }
    }
}
