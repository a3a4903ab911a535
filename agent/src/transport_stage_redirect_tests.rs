//! A transport probe redirected (red team round 15, defect 5).

use super::*;
use crate::model::{Cause, Outcome, Severity};
use crate::probe::http::Body;
use crate::probe::test_support::answer_with;

/// A notification (or any probe of a rule) redirected learnt nothing about its rule:
/// `unknown` (it was "expected 202 or a 4xx", medium); GET and DELETE keep their low
/// warning (a SHOULD), the redirect itself being redirect.none's.
#[test]
fn a_probe_redirected_is_unknown_but_get_and_delete_keep_their_should() {
    let j = Judging {
        era: Era::Modern,
        unsure: None,
        token: None,
        legacy_control: None,
    };
    let moved = |status| {
        answer_with(
            status,
            None,
            Body::Empty,
            &[("location", "http://127.0.0.2:3000/mcp")],
        )
    };
    for probe in [
        TransportProbe::Notification,
        TransportProbe::UnknownMethod,
        TransportProbe::VersionUnsupported,
    ] {
        let v = judge(probe, &moved(308), None, &j);
        assert_eq!(
            (v.outcome, v.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "{probe:?}: {}",
            v.observed
        );
        assert!(
            v.observed
                .starts_with("answered with a redirect (308 to http://127.0.0.2:3000/mcp)"),
            "{}",
            v.observed
        );
    }
    for probe in [TransportProbe::Get, TransportProbe::Delete] {
        let v = judge(probe, &moved(301), None, &j);
        assert_eq!(
            (v.outcome, v.severity),
            (Outcome::Warn, Some(Severity::Low)),
            "{probe:?}: {}",
            v.observed
        );
    }
}
