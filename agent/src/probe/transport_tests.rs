//! The transport evaluators on hand-made exchanges: each rule's pass and each way to fail,
//! by outcome and severity.

use serde_json::{json, Value};

use super::*;
use crate::model::Cause;
use crate::probe::http::{Body, Exchange, SseBody};
use crate::probe::test_support::answer_with;

fn ex(status: u16, ct: Option<&str>, body: Body) -> Exchange {
    answer_with(status, ct, body, &[])
}
fn rpc_err(status: u16, code: i64, data: Option<Value>) -> Exchange {
    let mut e = json!({"code": code, "message": "m"});
    if let Some(d) = data {
        e["data"] = d;
    }
    ex(
        status,
        Some("application/json"),
        Body::Json(json!({"jsonrpc": "2.0", "id": 1, "error": e})),
    )
}
fn rpc_ok(status: u16) -> Exchange {
    ex(
        status,
        Some("application/json"),
        Body::Json(json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}})),
    )
}
fn html(status: u16) -> Exchange {
    crate::probe::test_support::html_answer(status)
}
fn with_header(mut e: Exchange, k: &'static str, v: &'static str) -> Exchange {
    e.headers.insert(k, v.parse().unwrap());
    e
}
fn judged(v: &Verdict) -> (Outcome, Option<Severity>) {
    (v.outcome, v.severity)
}

#[test]
fn header_checks_want_400_and_32020() {
    for id in [
        TransportProbe::MissingMethod,
        TransportProbe::MethodMismatch,
        TransportProbe::NameMismatch,
        TransportProbe::VersionMismatch,
    ] {
        assert_eq!(
            judged(&id.evaluate(&rpc_err(400, -32020, None), Era::Modern)),
            (Outcome::Pass, None)
        );
        // served anyway
        assert_eq!(
            judged(&id.evaluate(&rpc_ok(200), Era::Modern)),
            (Outcome::Fail, Some(Severity::Medium))
        );
        // unknown tool looked up instead of the header compared
        assert_eq!(
            judged(&id.evaluate(&rpc_err(200, -32602, None), Era::Modern)),
            (Outcome::Fail, Some(Severity::Medium))
        );
        // pre-final code
        let v = id.evaluate(&rpc_err(400, -32001, None), Era::Modern);
        assert_eq!(judged(&v), (Outcome::Fail, Some(Severity::Medium)));
        assert!(v.observed.contains("pre-final"), "{}", v.observed);
        // a bare 400 leaves the code unobserved (rt18 D4), named by jsonrpc.error-body too
        let bare = ex(400, Some("text/plain"), Body::Empty);
        let v = id.evaluate(&bare, Era::Modern);
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Unknown, None, Some(Cause::Malformed))
        );
    }
}

/// 400 answers whose body is not a readable JSON-RPC error: empty, HTML, JSON cut short
/// (the -32022 error of red team round 18's `cut` fault), the error wrapped in a batch
/// array, other JSON.
fn unreadable_400s() -> Vec<(&'static str, Exchange)> {
    let error = json!({"jsonrpc": "2.0", "id": 109, "error": {"code": -32022, "message": "m",
        "data": {"requested": "1999-01-01", "supported": ["2026-07-28"]}}});
    let cut = error.to_string()[..40].to_string();
    vec![
        ("empty", ex(400, Some("text/plain"), Body::Empty)),
        ("html", html(400)),
        (
            "cut",
            ex(
                400,
                Some("application/json"),
                Body::Other {
                    len: cut.len(),
                    excerpt: cut,
                    invalid_json: true,
                },
            ),
        ),
        (
            "batch",
            ex(400, Some("application/json"), Body::Json(json!([error]))),
        ),
        (
            "other json",
            ex(
                400,
                Some("application/json"),
                Body::Json(json!({"error": "bad"})),
            ),
        ),
    ]
}

/// Red team round 18, D4: a 400 whose body is not a readable JSON-RPC error passed every
/// check whose rule is "400 plus a JSON-RPC code" ("refused, but without a JSON-RPC body
/// the code cannot be read"), `version.unsupported` without its `data` too. The code was
/// not observed: `unknown`, cause `malformed`, saying so; never a pass (nor a failure: an
/// intermediary may answer a bare 400). `headers.method-case` (any 400: the spec names no
/// code) and `headers.missing-version` on a dual-era server (any 4xx) still pass on it.
#[test]
fn a_400_whose_code_could_not_be_read_is_unknown_not_a_pass() {
    let rule_checks = [
        (TransportProbe::MissingMethod, Leg::Main, "-32020"),
        (TransportProbe::MissingMethod, Leg::ToolsList, "-32020"),
        (TransportProbe::MethodMismatch, Leg::Main, "-32020"),
        (TransportProbe::NameMismatch, Leg::Main, "-32020"),
        (TransportProbe::MissingVersion, Leg::Main, "-32020"),
        (TransportProbe::VersionMismatch, Leg::Main, "-32020"),
        (TransportProbe::VersionUnsupported, Leg::Main, "-32022"),
        (
            TransportProbe::VersionUnsupported,
            Leg::FutureVersion,
            "-32022",
        ),
        (TransportProbe::MetaMissing, Leg::Main, "-32602"),
    ];
    for (what, answer) in unreadable_400s() {
        for (probe, leg, code) in rule_checks {
            let v = probe.evaluate_on(&answer, Era::Modern, leg);
            assert_eq!(
                (v.outcome, v.severity, v.cause),
                (Outcome::Unknown, None, Some(Cause::Malformed)),
                "{what} {probe:?} {leg:?}: {}",
                v.observed
            );
            for words in [
                "refused with 400, but the answer could not be read as a JSON-RPC error",
                &format!("its code (JSON-RPC {code} expected) was not observed"),
            ] {
                assert!(
                    v.observed.contains(words),
                    "{what} {probe:?}: {}",
                    v.observed
                );
            }
            assert_eq!(
                v.observed
                    .contains("nor were error.data.supported and error.data.requested"),
                probe == TransportProbe::VersionUnsupported,
                "{what} {probe:?}: {}",
                v.observed
            );
        }
        for leg in [Leg::Main, Leg::ToolsList, Leg::ToolsCall] {
            let v = TransportProbe::MethodCase.evaluate_on(&answer, Era::Modern, leg);
            assert_eq!(v.outcome, Outcome::Pass, "{what} method-case {leg:?}");
        }
        let v = TransportProbe::MissingVersion.evaluate(&answer, Era::Dual);
        assert_eq!(v.outcome, Outcome::Pass, "{what} missing-version, dual era");
        // jsonrpc.error-body still sees the refusal: the low warning of a bare 4xx.
        let check = TransportProbe::MissingMethod;
        let v = check.evaluate(&answer, Era::Modern);
        let seen = seen_outcome(&v, Some(&answer));
        let body = error_body(&[(check.check(), seen, Some(&answer))]);
        assert_eq!(
            (body.outcome, body.severity, body.cause),
            (Outcome::Warn, Some(Severity::Low), None),
            "{what}: {}",
            body.observed
        );
        assert!(
            body.observed
                .starts_with("bare 4xx without a JSON-RPC body")
                && body.observed.contains("headers.missing-method: 400"),
            "{what}: {}",
            body.observed
        );
    }
    // A readable -32022 with its data still passes.
    let ok = rpc_err(
        400,
        -32022,
        Some(json!({"requested": "1999-01-01", "supported": ["2026-07-28"]})),
    );
    assert_eq!(
        TransportProbe::VersionUnsupported
            .evaluate(&ok, Era::Modern)
            .outcome,
        Outcome::Pass
    );
}

#[test]
fn missing_version_is_lenient_only_on_dual_era_servers() {
    let legacy_path = ex(
        200,
        Some("text/event-stream"),
        Body::Sse(SseBody {
            events: vec![],
            ..Default::default()
        }),
    );
    assert_eq!(
        TransportProbe::MissingVersion
            .evaluate(&rpc_err(400, -32020, None), Era::Modern)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        TransportProbe::MissingVersion
            .evaluate(&rpc_err(400, -32600, None), Era::Modern)
            .outcome,
        Outcome::Fail
    );
    assert_eq!(
        TransportProbe::MissingVersion
            .evaluate(&rpc_err(400, -32600, None), Era::Dual)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        TransportProbe::MissingVersion
            .evaluate(&rpc_err(200, -32601, None), Era::Dual)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        TransportProbe::MissingVersion
            .evaluate(&rpc_ok(200), Era::Dual)
            .outcome,
        Outcome::Fail
    );
    assert_eq!(
        TransportProbe::MissingVersion
            .evaluate(&legacy_path, Era::Dual)
            .outcome,
        Outcome::Fail
    );
}

#[test]
fn unsupported_version_needs_its_data() {
    let good = rpc_err(
        400,
        -32022,
        Some(json!({"supported": ["2026-07-28"], "requested": BAD_VERSION})),
    );
    assert_eq!(
        judged(&TransportProbe::VersionUnsupported.evaluate(&good, Era::Modern)),
        (Outcome::Pass, None)
    );
    assert_eq!(
        judged(&TransportProbe::VersionUnsupported.evaluate(&rpc_ok(200), Era::Modern)),
        (Outcome::Fail, Some(Severity::High))
    );
    let wrong_name = rpc_err(
        400,
        -32022,
        Some(json!({"supportedVersions": ["2026-07-28"], "requested": BAD_VERSION})),
    );
    let v = TransportProbe::VersionUnsupported.evaluate(&wrong_name, Era::Modern);
    assert_eq!(judged(&v), (Outcome::Fail, Some(Severity::Medium)));
    assert!(v.observed.contains("`supported`"));
    let no_requested = rpc_err(400, -32022, Some(json!({"supported": ["2026-07-28"]})));
    assert_eq!(
        TransportProbe::VersionUnsupported
            .evaluate(&no_requested, Era::Modern)
            .outcome,
        Outcome::Fail
    );
    let prefinal = rpc_err(400, -32004, None);
    assert!(TransportProbe::VersionUnsupported
        .evaluate(&prefinal, Era::Modern)
        .observed
        .contains("pre-final"));
}

#[test]
fn unknown_method_wants_a_json_rpc_404() {
    assert_eq!(
        TransportProbe::UnknownMethod
            .evaluate(&rpc_err(404, -32601, None), Era::Modern)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        judged(&TransportProbe::UnknownMethod.evaluate(&html(404), Era::Modern)),
        (Outcome::Fail, Some(Severity::High))
    );
    assert_eq!(
        judged(&TransportProbe::UnknownMethod.evaluate(&ex(404, None, Body::Empty), Era::Modern)),
        (Outcome::Fail, Some(Severity::High))
    );
    assert_eq!(
        TransportProbe::UnknownMethod
            .evaluate(&rpc_err(200, -32601, None), Era::Modern)
            .outcome,
        Outcome::Fail
    );
}

#[test]
fn get_and_delete() {
    let allow = with_header(ex(405, None, Body::Empty), "allow", "POST");
    assert_eq!(
        TransportProbe::Get.evaluate(&allow, Era::Modern).outcome,
        Outcome::Pass
    );
    assert_eq!(
        judged(&TransportProbe::Get.evaluate(&ex(405, None, Body::Empty), Era::Modern)),
        (Outcome::Warn, Some(Severity::Low))
    );
    assert_eq!(
        judged(&TransportProbe::Get.evaluate(&html(200), Era::Dual)),
        (Outcome::Fail, Some(Severity::Medium))
    );
    // A redirect is not the 405 a SHOULD asks for: low, as a 4xx, never medium (red team
    // round 9: GET 301 and DELETE 308 were medium).
    for (status, probe) in [(301, TransportProbe::Get), (308, TransportProbe::Delete)] {
        let moved = with_header(ex(status, None, Body::Empty), "location", "/elsewhere");
        for era in [Era::Modern, Era::Dual] {
            assert_eq!(
                judged(&probe.evaluate(&moved, era)),
                (Outcome::Warn, Some(Severity::Low)),
                "{status} {era:?}"
            );
        }
    }
    let stream = ex(200, Some("text/event-stream"), Body::Unread);
    assert_eq!(
        TransportProbe::Get.evaluate(&stream, Era::Dual).outcome,
        Outcome::Pass
    );
    assert_eq!(
        judged(&TransportProbe::Get.evaluate(&stream, Era::Modern)),
        (Outcome::Warn, Some(Severity::Low))
    );
    assert_eq!(
        judged(&TransportProbe::Delete.evaluate(&ex(200, None, Body::Empty), Era::Dual)),
        (Outcome::Fail, Some(Severity::Medium))
    );
    assert_eq!(
        TransportProbe::Delete
            .evaluate(&rpc_err(400, -32000, None), Era::Dual)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        TransportProbe::Delete
            .evaluate(&rpc_err(400, -32000, None), Era::Modern)
            .outcome,
        Outcome::Warn
    );
}

#[test]
fn notifications() {
    assert_eq!(
        TransportProbe::Notification
            .evaluate(&ex(202, None, Body::Empty), Era::Modern)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        TransportProbe::Notification
            .evaluate(&rpc_err(400, -32600, None), Era::Modern)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        judged(&TransportProbe::Notification.evaluate(&rpc_ok(200), Era::Modern)),
        (Outcome::Fail, Some(Severity::Medium))
    );
    assert_eq!(
        TransportProbe::Notification
            .evaluate(&rpc_ok(202), Era::Modern)
            .outcome,
        Outcome::Fail
    );
}

#[test]
fn origin_wants_403() {
    assert_eq!(
        TransportProbe::Origin
            .evaluate(&ex(403, None, Body::Empty), Era::Modern)
            .outcome,
        Outcome::Pass
    );
    assert_eq!(
        judged(&TransportProbe::Origin.evaluate(&rpc_ok(200), Era::Modern)),
        (Outcome::Fail, Some(Severity::Medium))
    );
    assert_eq!(
        judged(&TransportProbe::Origin.evaluate(&ex(401, None, Body::Empty), Era::Modern)),
        (Outcome::Warn, Some(Severity::Low))
    );
}

/// Red team round 3: a foreign Origin redirected to a login page was "served" (medium, and
/// high on a protected server). A 302 is a refusal that is not a 403; a 307/308 to
/// somewhere else was not observed at all.
#[test]
fn origin_redirected_is_never_served() {
    let redirect = |status| with_header(ex(status, None, Body::Empty), "location", "/login");
    for status in [301, 302, 303] {
        let v = TransportProbe::Origin.evaluate(&redirect(status), Era::Modern);
        assert_eq!(judged(&v), (Outcome::Warn, Some(Severity::Low)), "{status}");
        assert!(
            v.observed.contains("redirected away rather than refused"),
            "{}",
            v.observed
        );
    }
    for status in [307, 308] {
        let v = TransportProbe::Origin.evaluate(&redirect(status), Era::Modern);
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Unknown, None, Some(Cause::OtherReason)),
            "{status}"
        );
    }
    // Control: a 500 with a JSON-RPC error body reached the MCP layer: not refused.
    assert_eq!(
        judged(&TransportProbe::Origin.evaluate(&rpc_err(500, -32603, None), Era::Modern)),
        (Outcome::Fail, Some(Severity::Medium))
    );
}

/// Reproduction 8 of issue 12: a gateway that strips Mcp-Method gets every request refused
/// with 400 -32020, the Origin probe included; that refusal says nothing about the Origin
/// guard. It was a low `security.origin` warning; it is `unknown` with the reason.
#[test]
fn a_probe_answered_for_another_reason_is_unknown_with_that_reason() {
    let stripped = rpc_err(400, -32020, None);
    let v = TransportProbe::Origin.judge(&stripped, Era::Modern, Some(&stripped), false);
    assert_eq!(
        (v.outcome, v.severity, v.cause),
        (Outcome::Unknown, None, Some(Cause::OtherReason))
    );
    assert!(
        v.observed.contains("answered for another reason"),
        "{}",
        v.observed
    );
    // Without a control, the code alone names another rule.
    let v = TransportProbe::Origin.judge(&stripped, Era::Modern, Some(&rpc_ok(200)), false);
    assert_eq!(
        (v.outcome, v.cause),
        (Outcome::Unknown, Some(Cause::OtherReason))
    );
    assert!(v.observed.contains("-32020"), "{}", v.observed);
    // 401 to the Origin probe: the authorization layer answered.
    let v = TransportProbe::Origin.judge(
        &ex(401, None, Body::Empty),
        Era::Modern,
        Some(&rpc_ok(200)),
        false,
    );
    assert_eq!(v.outcome, Outcome::Unknown);
    // Red-team round 9 defect 9: a generic JSON-RPC code (400 -32600 Invalid Request, 404
    // -32601, 400 -32700) names no other rule, and the control was served: the foreign
    // Origin was refused, not with 403 (a low warning, as a bare 400). The codes that name
    // a fault of the request stay unknown.
    for (status, code) in [(400, -32600), (404, -32601), (400, -32700), (400, -32000)] {
        let v = TransportProbe::Origin.judge(
            &rpc_err(status, code, None),
            Era::Modern,
            Some(&rpc_ok(200)),
            false,
        );
        assert_eq!(judged(&v), (Outcome::Warn, Some(Severity::Low)), "{code}");
        assert!(v.observed.contains("MUST get 403"), "{}", v.observed);
    }
    for code in [-32020, -32021, -32022, -32602] {
        let v = TransportProbe::Origin.judge(
            &rpc_err(400, code, None),
            Era::Modern,
            Some(&rpc_ok(200)),
            false,
        );
        assert_eq!(
            (v.outcome, v.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "{code}"
        );
        assert!(v.observed.contains(&code.to_string()), "{}", v.observed);
    }
    // A bare 400 while the control is served: refused for the Origin, not with 403.
    let v = TransportProbe::Origin.judge(
        &ex(400, None, Body::Empty),
        Era::Modern,
        Some(&rpc_ok(200)),
        false,
    );
    assert_eq!(judged(&v), (Outcome::Warn, Some(Severity::Low)));
    assert_eq!(
        TransportProbe::Origin
            .judge(
                &ex(403, None, Body::Empty),
                Era::Modern,
                Some(&stripped),
                false
            )
            .outcome,
        Outcome::Pass
    );
    // The header probes: a "pass" that the unchanged request gets too is no evidence.
    let v = TransportProbe::MissingMethod.judge(&stripped, Era::Modern, Some(&stripped), false);
    assert_eq!(v.outcome, Outcome::Unknown);
    let v = TransportProbe::MissingMethod.judge(&stripped, Era::Modern, Some(&rpc_ok(200)), false);
    assert_eq!(v.outcome, Outcome::Pass);
    // A failure the control does not share stays a failure.
    let v = TransportProbe::MetaMissing.judge(&stripped, Era::Modern, Some(&rpc_ok(200)), false);
    assert_eq!(judged(&v), (Outcome::Fail, Some(Severity::Medium)));
    // GET is not a changed POST: a page stays a failure whatever the control got.
    let v = TransportProbe::Get.judge(&html(200), Era::Modern, Some(&stripped), false);
    assert_eq!(v.outcome, Outcome::Fail);
}

#[test]
fn sse_buffering_is_informational() {
    let sse = ex(
        200,
        Some("text/event-stream"),
        Body::Sse(SseBody::default()),
    );
    let v = sse_buffering(&[&sse]);
    assert_eq!(judged(&v), (Outcome::Warn, Some(Severity::Info)));
    let ok = with_header(sse.clone(), "x-accel-buffering", "no");
    assert_eq!(sse_buffering(&[&ok]).outcome, Outcome::Pass);
    assert_eq!(sse_buffering(&[&rpc_ok(200)]).outcome, Outcome::Skip);
}

#[test]
fn name_mismatch_request_never_names_a_real_tool() {
    let req = TransportProbe::NameMismatch
        .request(7, &json!({"tools": {}}))
        .unwrap();
    let body = req.body.unwrap();
    assert_eq!(body["params"]["name"], json!(ABSENT_NAME));
    let name = req.headers.iter().find(|(k, _)| k == "Mcp-Name").unwrap();
    assert_ne!(name.1, ABSENT_NAME);
    assert!(TransportProbe::NameMismatch.request(7, &json!({})).is_err());
    let res = TransportProbe::NameMismatch
        .request(7, &json!({"resources": {}}))
        .unwrap();
    assert_eq!(res.body.unwrap()["method"], json!("resources/read"));
}

#[test]
fn each_probe_changes_exactly_one_thing() {
    let valid = ProbeRequest::modern("server/discover", 9, Default::default());
    let caps = json!({});
    for (id, differs_in) in [
        (TransportProbe::MissingMethod, "header"),
        (TransportProbe::MethodMismatch, "header"),
        (TransportProbe::MethodCase, "header"),
        (TransportProbe::MissingVersion, "header"),
        (TransportProbe::VersionMismatch, "body"),
        (TransportProbe::MetaMissing, "body"),
        (TransportProbe::Origin, "header"),
    ] {
        let probe = id.request(9, &caps).unwrap();
        let headers_differ = {
            let mut a = probe.headers.clone();
            let mut b = valid.headers.clone();
            a.sort();
            b.sort();
            a != b
        };
        let body_differs = probe.body != valid.body;
        match differs_in {
            "header" => assert!(headers_differ && !body_differs, "{id:?}"),
            _ => assert!(body_differs && !headers_differ, "{id:?}"),
        }
    }
    // version.unsupported changes the version, in the header and _meta together (one fact).
    let v = TransportProbe::VersionUnsupported
        .request(9, &caps)
        .unwrap();
    assert_eq!(
        v.body.unwrap()["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        json!(BAD_VERSION)
    );
}

/// `headers.method-case`: any 400 is the refusal the spec asks for (it names no code); a
/// request served although Mcp-Method differed in case is the fault.
#[test]
fn method_case_wants_a_400_and_fails_when_served() {
    let probe = TransportProbe::MethodCase;
    let req = probe.request(3, &json!({})).unwrap();
    assert!(
        req.headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("mcp-method") && v == "SERVER/DISCOVER"),
        "{:?}",
        req.headers
    );
    for refused in [
        rpc_err(400, -32020, None),
        rpc_err(400, -32600, None),
        ex(400, Some("text/plain"), Body::Empty),
    ] {
        assert_eq!(
            judged(&probe.evaluate(&refused, Era::Modern)),
            (Outcome::Pass, None)
        );
    }
    let v = probe.evaluate(&rpc_ok(200), Era::Modern);
    assert_eq!(judged(&v), (Outcome::Fail, Some(Severity::Medium)));
    assert!(v.observed.contains("case-sensitive"), "{}", v.observed);
}

/// Red team round 15, defects 6 and 7: with tools advertised, the Mcp-Method probes and the
/// foreign Origin are asked on `tools/list` too, each changed in the same one way from a
/// valid `tools/list`; without tools there is no second request on tools/list.
#[test]
fn the_header_and_origin_probes_also_ask_tools_list_when_tools_are_advertised() {
    let tools = json!({"tools": {}});
    let valid = ProbeRequest::modern("tools/list", 9, Default::default());
    let header = |r: &ProbeRequest, name: &str| {
        r.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    for (probe, name, want) in [
        (TransportProbe::MissingMethod, "Mcp-Method", None),
        (
            TransportProbe::MethodMismatch,
            "Mcp-Method",
            Some("server/discover"),
        ),
        (TransportProbe::MethodCase, "Mcp-Method", Some("TOOLS/LIST")),
        (TransportProbe::Origin, "Origin", Some(FOREIGN_ORIGIN)),
    ] {
        let (leg, req) = probe.second_request(&tools).expect("a second request");
        assert_eq!(leg, Leg::ToolsList, "{probe:?}");
        let body = req.body.clone().unwrap();
        assert_eq!(body["method"], "tools/list", "{probe:?}");
        assert_eq!(body["id"], json!(probe.second_rpc_id()));
        assert_eq!(header(&req, name).as_deref(), want, "{probe:?}");
        // Only that header differs from a valid tools/list.
        let others = |r: &ProbeRequest| {
            let mut h: Vec<_> = r
                .headers
                .iter()
                .filter(|(k, _)| !k.eq_ignore_ascii_case(name))
                .cloned()
                .collect();
            h.sort();
            h
        };
        assert_eq!(others(&req), others(&valid), "{probe:?}");
        assert!(probe.second_request(&json!({"prompts": {}})).is_none());
    }
    // The main requests stay on server/discover; the second ids are clear of the main ones.
    for p in TransportProbe::MODERN {
        assert!(p.second_rpc_id() > 113 + 5, "{p:?}");
    }
    for p in [
        TransportProbe::NameMismatch,
        TransportProbe::MissingVersion,
        TransportProbe::Get,
    ] {
        assert!(p.second_request(&tools).is_none(), "{p:?}");
    }
}

/// Red team round 15, defect 12: `version.unsupported` also asks with a version from the
/// future, in the header and `_meta` together; its answer is held to that version.
#[test]
fn version_unsupported_also_asks_a_future_version() {
    let (leg, req) = TransportProbe::VersionUnsupported
        .second_request(&json!({}))
        .expect("the future version");
    assert_eq!(leg, Leg::FutureVersion);
    let body = req.body.clone().unwrap();
    assert_eq!(body["method"], "server/discover");
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        json!(FUTURE_VERSION)
    );
    assert!(req
        .headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("mcp-protocol-version") && v == FUTURE_VERSION));
    let refused = |requested: &str| {
        rpc_err(
            400,
            -32022,
            Some(json!({"supported": ["2026-07-28"], "requested": requested})),
        )
    };
    let p = TransportProbe::VersionUnsupported;
    assert_eq!(
        judged(&p.evaluate_on(&refused(FUTURE_VERSION), Era::Modern, leg)),
        (Outcome::Pass, None)
    );
    // The data must name the version this request asked for.
    assert_eq!(
        judged(&p.evaluate_on(&refused(BAD_VERSION), Era::Modern, leg)),
        (Outcome::Fail, Some(Severity::Medium))
    );
    let served = p.evaluate_on(&rpc_ok(200), Era::Modern, leg);
    assert_eq!(judged(&served), (Outcome::Fail, Some(Severity::High)));
}

/// `headers.method-case` on tools/list names what it sent there.
#[test]
fn method_case_on_tools_list_names_tools_list() {
    let p = TransportProbe::MethodCase;
    let v = p.evaluate_on(&rpc_ok(200), Era::Modern, Leg::ToolsList);
    assert_eq!(judged(&v), (Outcome::Fail, Some(Severity::Medium)));
    assert!(
        v.observed
            .contains("Mcp-Method: TOOLS/LIST was taken for tools/list"),
        "{}",
        v.observed
    );
    let v = p.evaluate_on(&rpc_err(400, -32020, None), Era::Modern, Leg::ToolsList);
    assert!(
        v.observed.contains("TOOLS/LIST is not tools/list"),
        "{}",
        v.observed
    );
}
