//! Answers for another reason than the rule under test, on every transport probe: a rate
//! limit, an unavailable server or gateway, a bare server error, the authorization layer, a
//! refusal in front of the MCP layer. Each is `unknown` with its cause (never a pass, never a
//! failure); the answers that are a rule's own subject keep their verdicts.

use serde_json::json;

use super::*;
use crate::model::Outcome;
use crate::probe::http::Body;
use crate::probe::test_support::answer_with as ex;

fn served() -> Exchange {
    ex(
        200,
        Some("application/json"),
        Body::Json(json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}})),
        &[],
    )
}

fn text(status: u16, body: &str) -> Exchange {
    ex(
        status,
        Some("text/plain"),
        Body::Other {
            excerpt: body.into(),
            len: body.len(),
            invalid_json: false,
        },
        &[],
    )
}

/// The answers the red team put in front of the fixture (front.py 429sel, unavail, waf403,
/// and a 401 challenge), each with the cause it must carry.
fn other_answers() -> Vec<(&'static str, Exchange)> {
    vec![
        (
            "429",
            ex(
                429,
                Some("application/json"),
                Body::Json(json!({"error": "rate limited"})),
                &[("retry-after", "60")],
            ),
        ),
        ("503", ex(503, None, Body::Empty, &[("retry-after", "120")])),
        ("502", text(502, "<html>Bad Gateway</html>")),
        ("504", text(504, "gateway timeout")),
        ("500", text(500, "Internal Server Error")),
        (
            "401",
            ex(
                401,
                None,
                Body::Empty,
                &[("www-authenticate", "Bearer resource_metadata=\"x\"")],
            ),
        ),
    ]
}

#[test]
fn every_probe_is_unknown_on_an_answer_for_another_reason() {
    for probe in TransportProbe::MODERN {
        for era in [Era::Modern, Era::Dual] {
            for (name, answer) in other_answers() {
                let v = probe.judge(&answer, era, Some(&served()), false);
                assert_eq!(
                    (v.outcome, v.severity, v.cause),
                    (Outcome::Unknown, None, Some(Cause::OtherReason)),
                    "{probe:?} {era:?} {name}: {}",
                    v.observed
                );
                assert!(
                    v.observed.contains(&probe.check().to_string()),
                    "{probe:?} {name}: {}",
                    v.observed
                );
            }
            // A WAF's 403 text/plain is a refusal in front of the MCP layer, except for the
            // Origin guard, whose subject a 403 is.
            let waf = text(403, "forbidden");
            let v = probe.judge(&waf, era, Some(&served()), false);
            // The CORS preflight carries a foreign Origin too: a 403 is no grant for it (the
            // Python SDK answers "Invalid Origin header").
            if matches!(probe, TransportProbe::Origin | TransportProbe::Preflight) {
                assert_eq!(v.outcome, Outcome::Pass, "{probe:?}: {}", v.observed);
            } else {
                assert_eq!(
                    (v.outcome, v.cause),
                    (Outcome::Unknown, Some(Cause::OtherReason)),
                    "{probe:?}: {}",
                    v.observed
                );
                assert!(v.observed.contains("refused before the MCP layer"));
            }
            // With a credential, a 401/403 is that credential refused.
            let v = probe.judge(&text(401, "no"), era, Some(&served()), true);
            assert_eq!(
                (v.outcome, v.cause),
                (Outcome::Unknown, Some(Cause::CredentialRefused)),
                "{probe:?}"
            );
        }
    }
}

#[test]
fn the_answers_a_rule_is_about_keep_their_verdicts() {
    let c = Some(served());
    let c = c.as_ref();
    let bare400 = ex(400, None, Body::Empty, &[]);
    // transport.get/delete: a 4xx is the 2025-11-25 path of a dual-era server (T section
    // GET), a SHOULD-405 warning on a modern-only one.
    for probe in [TransportProbe::Get, TransportProbe::Delete] {
        assert_eq!(
            probe.judge(&bare400, Era::Dual, c, false).outcome,
            Outcome::Pass
        );
        assert_eq!(
            probe.judge(&bare400, Era::Modern, c, false).outcome,
            Outcome::Warn
        );
    }
    // transport.notification: any 4xx refusal is compliant.
    assert_eq!(
        TransportProbe::Notification
            .judge(&bare400, Era::Modern, c, false)
            .outcome,
        Outcome::Pass
    );
    // A JSON-RPC 500 is the MCP layer answering: evidence (a failure), not another reason.
    let rpc500 = ex(
        500,
        Some("application/json"),
        Body::Json(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom"}}),
        ),
        &[],
    );
    let v = TransportProbe::MissingMethod.judge(&rpc500, Era::Modern, c, false);
    assert_eq!(v.outcome, Outcome::Fail, "{}", v.observed);
    // method.unknown: a bare 404 still fails (it is the check's own subject).
    let v = TransportProbe::UnknownMethod.judge(&text(404, "nope"), Era::Modern, c, false);
    assert_eq!(v.outcome, Outcome::Fail);
}

#[test]
fn an_unsure_era_leaves_only_the_era_dependent_verdicts_unknown() {
    let c = Some(served());
    let c = c.as_ref();
    let why = "initialize: rate limited";
    // GET refused with a 4xx: a pass on a dual-era server, a warning on a modern-only one.
    let v = TransportProbe::Get.judge_unsure_era(&ex(400, None, Body::Empty, &[]), c, false, why);
    assert_eq!(
        (v.outcome, v.cause),
        (Outcome::Unknown, Some(Cause::OtherReason))
    );
    assert!(v.observed.contains(why), "{}", v.observed);
    // 405 with Allow passes on either.
    let v = TransportProbe::Get.judge_unsure_era(
        &ex(405, None, Body::Empty, &[("allow", "POST")]),
        c,
        false,
        why,
    );
    assert_eq!(v.outcome, Outcome::Pass);
    // A header rule does not depend on the era.
    let right = ex(
        400,
        Some("application/json"),
        Body::Json(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "m"}})),
        &[],
    );
    let v = TransportProbe::MissingMethod.judge_unsure_era(&right, c, false, why);
    assert_eq!(v.outcome, Outcome::Pass);
}

/// Red-team defect 5 (front.py waf403): a WAF that starts blocking mid-run answers the
/// Origin probe and the control sent alongside it with the same 403 text/plain. That is no
/// pass; neither is a 403 next to a control that was rate limited.
#[test]
fn the_origin_guard_needs_a_served_control_alongside() {
    let waf = text(403, "forbidden");
    for era in [Era::Modern, Era::Legacy] {
        let v = TransportProbe::Origin.judge(&waf, era, Some(&waf), false);
        assert_eq!(
            (v.outcome, v.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "{}",
            v.observed
        );
        let limited = ex(429, None, Body::Empty, &[("retry-after", "5")]);
        let v = TransportProbe::Origin.judge(&waf, era, Some(&limited), false);
        assert_eq!(v.outcome, Outcome::Unknown, "{}", v.observed);
        assert!(v.observed.contains("rate limited"), "{}", v.observed);
        // Served control: the 403 is the guard's.
        let v = TransportProbe::Origin.judge(&waf, era, Some(&served()), false);
        assert_eq!(v.outcome, Outcome::Pass);
    }
}

fn call_err(status: u16, code: i64) -> Exchange {
    ex(
        status,
        Some("application/json"),
        Body::Json(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}})),
        &[],
    )
}

/// Fresh eyes round 17, D1 and D2, on the tools/call leg: the absent tool's control is the
/// unknown tool's -32602, at 200 or at 400 depending on the server. A probe dispatched the
/// same way fails (a 400 -32602 beside a 400 -32602 is the change not refused, not "refused
/// the same way"); the header or Origin refusal passes; a control not dispatched (a 429, a
/// -32020 for another header) leaves the leg without evidence.
#[test]
fn the_tools_call_leg_is_judged_beside_a_dispatched_control() {
    use crate::model::Severity;
    let probes = [
        TransportProbe::MissingMethod,
        TransportProbe::MethodMismatch,
        TransportProbe::MethodCase,
        TransportProbe::Origin,
    ];
    for status in [200, 400] {
        let control = call_err(status, -32602);
        for p in probes {
            let v = p.judge_on(
                &call_err(status, -32602),
                Era::Modern,
                Some(&control),
                false,
                Leg::ToolsCall,
            );
            assert_eq!(
                (v.outcome, v.severity),
                (Outcome::Fail, Some(Severity::Medium)),
                "{p:?} {status}: {}",
                v.observed
            );
            assert!(
                v.observed
                    .contains("was dispatched like the one without it"),
                "{}",
                v.observed
            );
            let refusal = if p == TransportProbe::Origin {
                text(403, "forbidden")
            } else {
                call_err(400, -32020)
            };
            let v = p.judge_on(&refusal, Era::Modern, Some(&control), false, Leg::ToolsCall);
            assert_eq!(v.outcome, Outcome::Pass, "{p:?} {status}: {}", v.observed);
        }
    }
    for control in [text(429, "slow down"), call_err(400, -32020)] {
        for p in probes {
            let v = p.judge_on(
                &call_err(200, -32602),
                Era::Modern,
                Some(&control),
                false,
                Leg::ToolsCall,
            );
            assert_eq!(
                (v.outcome, v.cause),
                (Outcome::Unknown, Some(Cause::OtherReason)),
                "{p:?}: {}",
                v.observed
            );
        }
    }
}
