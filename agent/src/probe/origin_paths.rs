//! `security.origin` on a dual-era server: the Origin guard is asked on both paths, the
//! 2026-07-28 one (`server/discover` with a foreign `Origin`) and the 2025-11-25 one
//! (`initialize`, the request that opens a legacy session, where DNS rebinding matters
//! most: spec 5, legacy.origin). One verdict for the check: the worse of the two, so a
//! foreign Origin served on either path fails, and a path not observed leaves the check
//! `unknown` rather than a warning or a pass that covers only the other path
//! (`checks.md` 4.1).
//!
//! [`with_second`]: a probe asked with more requests than one (the `Mcp-Method` probes and
//! the foreign Origin also on `tools/list` and `tools/call`, `version.unsupported` also with
//! a future version: red team round 15, defects 6, 7, 12; fresh eyes round 17, D1, D2) is
//! the worse of its requests: a failure seen on any of them fails the check; otherwise a
//! request the run meant to ask whose answer was not observed (no answer, or an answer for
//! another reason: 429, 5xx, 401, a reset, a control not served) leaves the check `unknown`
//! with that request's cause, never the other requests' pass (`checks.md` 4.1: a pass needs
//! positive evidence for the whole claim; red team round 18, D2).

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
/// request in the evidence, `None` when its evidence names it already) and another
/// request's (`second`, on the request `label`), the evidence naming both: a failure on
/// either fails (the worse failure); otherwise a request not observed (`unknown`, `error`)
/// leaves the check `unknown` with that request's cause, its evidence saying "not
/// observed"; otherwise the worse of a warning and a pass. A pass on one request never
/// covers another that was asked and not observed: a guard seen refusing on
/// `server/discover` and `tools/list` says nothing about the `tools/call` whose control got
/// a 503 (red team round 18, D2). A request not sent (`skip`: the run did not mean to ask
/// it) is not missing: the main request's verdict stands.
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
    let seen = match second.outcome {
        Outcome::Unknown | Outcome::Error => "not observed: ",
        Outcome::Skip => "not asked: ",
        _ => "",
    };
    let observed = format!("{main_seen}; {label}: {seen}{}", second.observed);
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
    /// of the two, and the evidence names both. Round 18, D2: a second request that gave no
    /// evidence (429, 5xx, reset, 401: `unknown`) leaves the check `unknown` with its cause
    /// ("not observed"), never the main request's pass; a failure seen on either still
    /// fails.
    #[test]
    fn a_second_request_not_observed_leaves_the_check_unknown() {
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
            // tools/list not observed: discover's pass does not cover it.
            (
                refused(),
                unseen(),
                (Outcome::Unknown, None, Some(Cause::OtherReason)),
            ),
            (
                refused(),
                reset(),
                (Outcome::Unknown, None, Some(Cause::Reset)),
            ),
            (low(), reset(), (Outcome::Unknown, None, Some(Cause::Reset))),
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
                v.observed.contains("; tools/list: not observed: "),
                second_unseen,
                "{}",
                v.observed
            );
        }
    }
}
