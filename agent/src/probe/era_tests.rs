//! The era evaluators on exchanges built in memory: the discover shape's levels, the era
//! table, a refused discover, and answers given for another reason.

use serde_json::json;

use super::*;
use crate::model::Outcome;

use crate::probe::test_support::json_answer as json_ex;

fn discover_result(result: Value) -> Exchange {
    json_ex(200, json!({"jsonrpc": "2.0", "id": 1, "result": result}))
}

fn good() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
           "ttlMs": 0, "cacheScope": "private",
           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}})
}

#[test]
fn discover_shape_levels() {
    let v = discover_shape(&discover_result(good()), &json!(1));
    assert_eq!(v.outcome, Outcome::Pass, "{}", v.observed);
    let without = |key: &str| {
        let mut r = good();
        r.as_object_mut().unwrap().remove(key);
        discover_shape(&discover_result(r), &json!(1))
    };
    for key in ["resultType", "supportedVersions", "capabilities"] {
        assert_eq!(
            (without(key).outcome, without(key).severity),
            (Outcome::Fail, Some(Severity::High)),
            "{key}"
        );
    }
    for key in ["ttlMs", "cacheScope"] {
        assert_eq!(
            (without(key).outcome, without(key).severity),
            (Outcome::Fail, Some(Severity::Medium)),
            "{key}"
        );
    }
    let v = without("_meta");
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Warn, Some(Severity::Low))
    );
    let mut prefinal = good();
    prefinal.as_object_mut().unwrap().remove("_meta");
    prefinal["serverInfo"] = json!({"name": "s", "version": "1"});
    assert!(discover_shape(&discover_result(prefinal), &json!(1))
        .observed
        .contains("pre-final"));
    let mut old = good();
    old["supportedVersions"] = json!(["2025-11-25"]);
    assert!(discover_shape(&discover_result(old), &json!(1))
        .observed
        .contains("lacks 2026-07-28"));
    let v = discover_shape(&discover_result(good()), &json!(2));
    assert!(v.observed.contains("does not echo"), "{}", v.observed);
}

#[test]
fn era_classification_table() {
    let ok = discover_result(good());
    let init_ok = json_ex(
        200,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}}),
    );
    let refused = json_ex(
        400,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32022, "message": "x"}}),
    );
    let legacy_err = json_ex(
        400,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: Server not initialized"}}),
    );
    let prefinal = json_ex(
        400,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Session not found"}}),
    );
    let not_found = json_ex(
        404,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}}),
    );
    assert_eq!(classify(Some(&ok), Some(&init_ok), None), Era::Dual);
    assert_eq!(classify(Some(&ok), Some(&refused), None), Era::Modern);
    assert_eq!(
        classify(Some(&legacy_err), Some(&init_ok), None),
        Era::Legacy
    );
    // -32001 is the legacy SDK's "session not found" as well as a draft code: never proof of modern.
    assert_eq!(classify(Some(&prefinal), Some(&init_ok), None), Era::Legacy);
    assert_eq!(
        classify(Some(&not_found), Some(&refused), None),
        Era::Modern
    );
    assert_eq!(
        classify(Some(&legacy_err), Some(&legacy_err), None),
        Era::NotMcp
    );
    // The era table counts "200 with supportedVersions": an empty result tells no era; one
    // that names the versions is modern whatever else it lacks (discover.shape says what).
    let empty = discover_result(json!({}));
    assert_eq!(classify(Some(&empty), Some(&refused), None), Era::NotMcp);
    assert_eq!(classify(Some(&empty), Some(&init_ok), None), Era::Legacy);
    let mut bare = good();
    for key in ["resultType", "capabilities", "ttlMs", "cacheScope", "_meta"] {
        bare.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(
        classify(Some(&discover_result(bare)), Some(&refused), None),
        Era::Modern
    );
    let no_versions = discover_result(json!({"supportedVersions": []}));
    assert_eq!(
        classify(Some(&no_versions), Some(&refused), None),
        Era::NotMcp
    );
    // A DiscoverResult lacking only supportedVersions is still the server's discover answer:
    // a dual-era server stays dual (discover.shape fails it, high), never "legacy only" with
    // the fix "upgrade the SDK" (red team round 11, item 2).
    let mut unversioned = good();
    unversioned
        .as_object_mut()
        .unwrap()
        .remove("supportedVersions");
    let unversioned = discover_result(unversioned);
    assert_eq!(
        classify(Some(&unversioned), Some(&init_ok), None),
        Era::Dual
    );
    assert_eq!(
        classify(Some(&unversioned), Some(&refused), None),
        Era::Modern
    );
    let shape = discover_shape(&unversioned, &json!(DISCOVER_ID));
    assert_eq!(
        (shape.outcome, shape.severity),
        (Outcome::Fail, Some(Severity::High))
    );
    assert!(
        shape.observed.contains("supportedVersions"),
        "{}",
        shape.observed
    );
}

#[test]
fn a_refused_discover_never_passes_era_detect() {
    let stripped = json_ex(
        400,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "Mcp-Method header missing"}}),
    );
    let init_ok = json_ex(
        200,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}}),
    );
    let era = classify(Some(&stripped), Some(&init_ok), None);
    assert_eq!(era, Era::Dual, "the era is known: both eras answer");
    let v = era_verdict(era, Some(&stripped), Some(&init_ok));
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Fail, Some(Severity::Medium))
    );
    assert!(
        v.observed.contains("server/discover itself was refused"),
        "{}",
        v.observed
    );
    // Both working is the only pass for dual.
    let ok = discover_result(good());
    let v = era_verdict(Era::Dual, Some(&ok), Some(&init_ok));
    assert_eq!(v.outcome, Outcome::Pass);
}

#[test]
fn rate_limits_and_gateways_are_another_reason_not_an_era() {
    let mut limited = json_ex(429, json!({"error": "slow down"}));
    limited
        .headers
        .insert("retry-after", http::HeaderValue::from_static("60"));
    let r = other_reason(&limited).unwrap();
    assert!(
        r.starts_with("rate limited") && r.contains("Retry-After: 60"),
        "{r}"
    );
    for (status, head) in [
        (503, "unavailable"),
        (502, "a gateway"),
        (504, "a gateway"),
        (403, "refused before the MCP layer"),
    ] {
        let r = other_reason(&json_ex(status, json!({}))).unwrap();
        assert!(r.starts_with(head), "{status}: {r}");
    }
    for status in [200, 400, 404, 405, 500] {
        assert!(
            other_reason(&json_ex(status, json!({}))).is_none(),
            "{status}"
        );
    }
}

#[test]
fn a_discover_without_an_answer_is_not_mcp_only_when_the_target_broke_it_alone() {
    let init_ok = json_ex(
        200,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}}),
    );
    let html = json_ex(200, json!("not json-rpc"));
    let err = |cause| ExchangeError {
        cause,
        message: "what happened".into(),
    };
    let of = |d: &DiscoverUnanswered| {
        (
            d.era.outcome,
            d.era.severity,
            d.era.cause,
            d.shape.as_ref().map(|s| (s.outcome, s.severity, s.cause)),
            d.rest.as_ref().map(|r| r.0),
        )
    };
    use Cause::{Reset, Timeout};
    // initialize works: MCP for certain; the 2026 path unknown; a cut discover is its own.
    let d = discover_unanswered(&err(Timeout), Ok(&init_ok));
    assert_eq!(
        of(&d),
        (Outcome::Unknown, None, Some(Timeout), None, Some(Timeout))
    );
    assert!(d.era.observed.starts_with("the server speaks MCP"));
    // A discover whose exchange broke (reset, refused) beside a working initialize says
    // nothing about its shape: unknown with the rest, never a failure (red team round 12,
    // item 1); nor does an answer with no response in it (garbage, or a 2xx with no
    // response read: red team round 18, D9): a proxy on either side may have given it, and
    // the run is unknown either way, never a pass.
    for cause in [Reset, Cause::Refused, Cause::Unreachable, Cause::Malformed] {
        let d = discover_unanswered(&err(cause), Ok(&init_ok));
        assert_eq!(
            of(&d),
            (Outcome::Unknown, None, Some(cause), None, Some(cause))
        );
    }
    // A timeout is no evidence, whatever initialize got.
    for init in [Ok(&html), Err(&err(Timeout)), Err(&err(Reset))] {
        let d = discover_unanswered(&err(Timeout), init);
        assert_eq!(
            of(&d),
            (Outcome::Unknown, None, Some(Timeout), None, Some(Timeout))
        );
    }
    // The target broke discover and nothing beside it works: the high failure stands.
    for init in [Ok(&html), Err(&err(Timeout))] {
        let d = discover_unanswered(&err(Reset), init);
        assert_eq!(
            of(&d),
            (Outcome::Fail, Some(Severity::High), Some(Reset), None, None)
        );
        assert_eq!(d.era.observed, "server/discover: what happened");
    }
}

/// Rt6 #9/#4: an answer the vantage stopped reading at its own read cap was not observed
/// whole: it is no answer for the era (never "does not work", so never "modern only" nor
/// "legacy"), while the status alone still decides a 401 or an answer for another reason.
#[test]
fn an_answer_cut_by_the_vantages_read_cap_is_not_an_answer() {
    let cut = |status: u16, body: Body, cap: &'static str| {
        let mut ex =
            crate::probe::test_support::answer_with(status, Some("application/json"), body, &[]);
        ex.capped = Some(cap);
        ex
    };
    let endless = || Body::Other {
        excerpt: "[[[[[[".into(),
        len: 262_144,
        invalid_json: true,
    };
    let e = cut_by_cap(&cut(200, endless(), "body size"), Subject::Initialize).unwrap();
    assert_eq!(e.cause, Cause::SizeCap);
    assert!(
        e.message
            .contains("stopped reading at its own body size cap")
            && e.message.starts_with("answered 200 application/json"),
        "{}",
        e.message
    );
    let sse = Body::Sse(crate::probe::http::SseBody {
        capped: Some("SSE line size"),
        ..Default::default()
    });
    assert_eq!(
        cut_by_cap(&cut(200, sse, "SSE line size"), Subject::Discover).map(|e| e.cause),
        Some(Cause::SizeCap)
    );
    // Read whole, or decided by the status: no cut.
    assert!(cut_by_cap(&json_ex(200, json!("x")), Subject::Discover).is_none());
    assert!(cut_by_cap(&cut(401, endless(), "body size"), Subject::Discover).is_none());
    assert!(cut_by_cap(&cut(503, endless(), "body size"), Subject::Discover).is_none());
    let mut with_result = discover_result(good());
    with_result.capped = Some("SSE event count");
    assert!(cut_by_cap(&with_result, Subject::Discover).is_none());

    // discover cut by the cap: era.detect unknown (size-cap), whatever initialize got, no
    // discover.shape failure, the rest unknown for the same cause.
    let init_ok = json_ex(
        200,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}}),
    );
    let capped = ExchangeError {
        cause: Cause::SizeCap,
        message: "answered 200 application/json, but this vantage stopped reading".into(),
    };
    for init in [Ok(&init_ok), Ok(&json_ex(200, json!("x"))), Err(&capped)] {
        let d = discover_unanswered(&capped, init);
        assert_eq!(
            (d.era.outcome, d.era.severity, d.era.cause),
            (Outcome::Unknown, None, Some(Cause::SizeCap)),
            "{}",
            d.era.observed
        );
        assert!(d.shape.is_none());
        assert_eq!(d.rest.map(|r| r.0), Some(Cause::SizeCap));
        assert!(
            !d.era.observed.contains("legacy") && !d.era.observed.contains("not MCP"),
            "{}",
            d.era.observed
        );
    }
}

/// A passing discover.shape lists the DiscoverResult fields it saw (red team round 11,
/// nit 9), not only "200 application/json JSON-RPC result"; a server's long or unprintable
/// values are clipped and cleaned.
#[test]
fn a_passing_discover_shape_lists_the_fields_it_saw() {
    let mut r = good();
    r["capabilities"] = json!({"tools": {"listChanged": true}, "resources": {}});
    r["ttlMs"] = json!(60000);
    let v = discover_shape(&discover_result(r), &json!(1));
    assert_eq!(v.outcome, Outcome::Pass, "{}", v.observed);
    assert_eq!(
        v.observed,
        "200 application/json JSON-RPC result: resultType \"complete\", supportedVersions [\"2026-07-28\"], capabilities {resources, tools}, ttlMs 60000, cacheScope \"private\", serverInfo in _meta"
    );
    let mut wide = good();
    let caps: serde_json::Map<String, Value> = (0..9)
        .map(|i| (format!("cap{i}\u{1b}[31m"), json!({})))
        .collect();
    wide["capabilities"] = Value::Object(caps);
    // (Any resultType but "complete" fails now: the long value sits in supportedVersions.)
    wide["supportedVersions"] = json!(["2026-07-28", "x".repeat(200)]);
    let v = discover_shape(&discover_result(wide), &json!(1));
    assert_eq!(v.outcome, Outcome::Pass, "{}", v.observed);
    assert!(v.observed.contains("+3 more}"), "{}", v.observed);
    assert!(!v.observed.contains('\u{1b}'), "{}", v.observed);
    assert!(!v.observed.contains(&"x".repeat(100)), "{}", v.observed);
}

/// Red team round 9 (nit): a discover result whose id is written `1.0` or `1e0` is the same
/// JSON number as the request's `1` (the SDK clients correlate it): modern, and its shape
/// passes; another number is still no answer to the request.
#[test]
fn an_id_written_as_another_spelling_of_the_same_number_echoes() {
    let spelt = |id: &str| {
        let body: Value = serde_json::from_str(&format!(
            r#"{{"jsonrpc": "2.0", "id": {id}, "result": {}}}"#,
            good()
        ))
        .unwrap();
        json_ex(200, body)
    };
    let refused = json_ex(
        400,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request"}}),
    );
    for id in ["1.0", "1e0"] {
        let d = spelt(id);
        assert_eq!(
            classify(Some(&d), Some(&refused), None),
            Era::Modern,
            "{id}"
        );
        let v = discover_shape(&d, &json!(1));
        assert_eq!(v.outcome, Outcome::Pass, "{id}: {}", v.observed);
    }
    let other = spelt("1.5");
    assert_eq!(classify(Some(&other), Some(&refused), None), Era::NotMcp);
}

/// Red team round 15, defect 4: discover.implemented wants `resultType:"complete"`; an
/// `input_required` discover result, or a type no client knows, fails high like every other
/// missing DiscoverResult field.
#[test]
fn a_discover_result_that_is_not_complete_fails_high() {
    for (t, words) in [
        (
            json!("input_required"),
            "MUST be answered with a complete result",
        ),
        (
            json!("completed"),
            "resultType \"completed\" is not \"complete\"",
        ),
        (json!(null), "resultType null is not"),
        (json!("x".repeat(200)), "\"xxxxxxxxxx"),
    ] {
        let mut r = good();
        r["resultType"] = t.clone();
        let v = discover_shape(&discover_result(r), &json!(1));
        assert_eq!(
            (v.outcome, v.severity),
            (Outcome::Fail, Some(Severity::High)),
            "{t}: {}",
            v.observed
        );
        assert!(v.observed.contains(words), "{t}: {}", v.observed);
        assert!(!v.observed.contains(&"x".repeat(100)), "{}", v.observed);
    }
}

/// The `ttlMs` forms, as the JSON parser reads them from a body: an integer by its value
/// (JSON Schema's `"type": "integer"`), whatever its spelling.
pub(crate) const TTL_INTEGERS: &[&str] = &[
    "0",
    "60000",
    "18446744073709551615",
    "18446744073709551616",
    "1e20",
    "1.8446744073709552e19",
    "6e4",
    "6E+4",
    "60000.0",
    "-0",
    "-0.0",
];
/// Negative, fractional, or no number at all.
pub(crate) const TTL_NOT_INTEGERS: &[&str] = &[
    "-1",
    "-6e4",
    "-18446744073709551616",
    "60000.5",
    "6.5e-1",
    "1e-7",
    "\"60000\"",
    "null",
    "true",
    "[60000]",
];

/// Red team round 15, defect 14: a `ttlMs` above 2^64 - 1 (`18446744073709551616`, `1e20`),
/// which the JSON parser reads as a float, was "not an integer >= 0" (`discover.shape`
/// medium on a server within the spec); so were `6e4` and `60000.0`, integers by JSON
/// Schema's rule. A negative number, a fraction and a string still fail, medium.
#[test]
fn ttl_ms_is_an_integer_by_its_value_however_it_is_written() {
    let with_ttl = |raw: &str| {
        let ttl: Value = serde_json::from_str(raw).unwrap();
        let mut r = good();
        r["ttlMs"] = ttl.clone();
        (ttl, discover_shape(&discover_result(r), &json!(1)))
    };
    for raw in TTL_INTEGERS {
        let (ttl, v) = with_ttl(raw);
        assert_eq!(ttl_ms_problem(Some(&ttl)), None, "{raw}");
        assert_eq!(v.outcome, Outcome::Pass, "{raw}: {}", v.observed);
    }
    for raw in TTL_NOT_INTEGERS {
        let (ttl, v) = with_ttl(raw);
        let why = format!("ttlMs {ttl} is not an integer >= 0");
        assert_eq!(ttl_ms_problem(Some(&ttl)), Some(why.clone()), "{raw}");
        assert_eq!(
            (v.outcome, v.severity, v.observed.as_str()),
            (Outcome::Fail, Some(Severity::Medium), why.as_str()),
            "{raw}"
        );
    }
    // Missing: the evidence says so (never "not an integer").
    assert_eq!(ttl_ms_problem(None), Some("ttlMs missing".to_string()));
}

/// An event stream to `initialize` that ended with `events` (each event's data).
fn init_stream(events: &[Value]) -> Exchange {
    let events = events
        .iter()
        .map(|v| crate::probe::sse::SseEvent {
            event: Some("message".into()),
            id: None,
            data: v.to_string(),
            json: Some(v.clone()),
        })
        .collect();
    crate::probe::test_support::answer_with(
        200,
        Some("text/event-stream"),
        Body::Sse(crate::probe::http::SseBody {
            events,
            ended: true,
            ..Default::default()
        }),
        &[],
    )
}

/// Red team round 18, D1: a 2xx to `initialize` with no response to it read whole is no
/// refusal of 2025-11-25 (`malformed`, with what was seen), never "initialize does not work":
/// an event stream that ended without it whatever discover showed; a whole body without it
/// (empty, not JSON-RPC, another id, no protocolVersion) beside a modern discover only. A
/// refusal (any non-2xx, a JSON-RPC error for the request even with a 200) and a working
/// initialize are left to the era rules.
#[test]
fn a_2xx_initialize_without_its_response_is_not_a_refusal() {
    let result = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}});
    let unread = |ex: &Exchange, modern: bool| {
        let o = initialize_unread(ex, modern).expect("not a refusal");
        assert_eq!(o.cause, Cause::Malformed, "{}", o.head);
        o.head
    };
    // Streams: whatever discover showed.
    for modern in [true, false] {
        let h = unread(&init_stream(&[]), modern);
        assert!(
            h.starts_with("not read whole: answered 200 text/event-stream (0 SSE events), but the event stream ended with no event"),
            "{h}"
        );
        let other = json!({"jsonrpc": "2.0", "id": 424242, "result": result});
        let h = unread(&init_stream(&[other]), modern);
        assert!(
            h.contains(
                "ended with no response to initialize (id 2): the one it carried has id 424242"
            ),
            "{h}"
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        let h = unread(&init_stream(&[note]), modern);
        assert!(
            h.contains("ended after 1 events, none a JSON-RPC response to initialize (id 2)"),
            "{h}"
        );
    }
    // Whole bodies: only beside a modern discover.
    let empty =
        crate::probe::test_support::answer_with(200, Some("application/json"), Body::Empty, &[]);
    let html = crate::probe::test_support::html_answer(200);
    let other_id = json_ex(200, json!({"jsonrpc": "2.0", "id": 9, "result": result}));
    let no_version = json_ex(200, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    for (ex, words) in [
        (&empty, "answered 200 application/json (empty body): a 2xx with no response to initialize"),
        (&html, "answered 200 text/html body \"<html>\": a 2xx that is no JSON-RPC response to initialize"),
        (&other_id, "with id 9, not the request's 2: no response to initialize"),
        (&no_version, "a result without protocolVersion: initialize was accepted, not refused"),
    ] {
        let h = unread(ex, true);
        assert!(h.contains(words), "{h}");
        assert!(initialize_unread(ex, false).is_none(), "{words}");
    }
    // Refusals and answers: the era rules judge them.
    let ok = json_ex(200, json!({"jsonrpc": "2.0", "id": 2, "result": result}));
    let ok_stream = init_stream(&[json!({"jsonrpc": "2.0", "id": 2, "result": result})]);
    let err_200 = json_ex(
        200,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "x"}}),
    );
    let err_stream = init_stream(&[
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "x"}}),
    ]);
    let err_400 = json_ex(
        400,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32022, "message": "x"}}),
    );
    let err_404 = json_ex(
        404,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "x"}}),
    );
    let bare_400 = crate::probe::test_support::answer_with(400, None, Body::Empty, &[]);
    for ex in [
        &ok,
        &ok_stream,
        &err_200,
        &err_stream,
        &err_400,
        &err_404,
        &bare_400,
    ] {
        for modern in [true, false] {
            assert!(initialize_unread(ex, modern).is_none(), "{}", ex.summary());
        }
    }
    // A read the vantage's own cap stopped is cut_by_cap's.
    let mut capped = init_stream(&[]);
    capped.capped = Some("SSE event count");
    assert!(initialize_unread(&capped, true).is_none());
}
