//! Which answers show the boundary, the open legacy path, and one verdict out of several
//! token probes (red team round 9, defects 1, 2 and 5).

use serde_json::json;

use super::*;
use crate::model::Cause;
use crate::probe::http::Body;
use crate::probe::test_support::answer_with;

const BEARER: &str = "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\"";

fn refused(status: u16, www: Option<&str>) -> Exchange {
    let headers: Vec<(&'static str, &str)> =
        www.map(|w| ("www-authenticate", w)).into_iter().collect();
    answer_with(status, None, Body::Empty, &headers)
}

fn initialize_result(id: i64) -> Exchange {
    answer_with(
        200,
        Some("application/json"),
        Body::Json(
            json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}),
        ),
        &[],
    )
}

/// Fresh eyes round 17, nit 7: one rule for a request without a token answered 403 by the
/// authorization layer (a Bearer challenge, `insufficient_scope` or not), wherever it is:
/// `auth.challenge` fails high naming each request; a bare 403 or a 401 is not that.
#[test]
fn a_403_with_a_bearer_challenge_to_a_token_less_request_fails_the_challenge_naming_it() {
    let scope = format!("{BEARER}, error=\"insufficient_scope\"");
    let list = refused(403, Some(&scope));
    let call = refused(403, Some(BEARER));
    let v = no_token_403(&[
        ("tools/list", &list),
        ("tools/call", &call),
        ("subscriptions/listen", &refused(401, Some(BEARER))),
        ("initialize", &refused(403, None)),
    ])
    .unwrap();
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Fail, Some(Severity::High)),
        "{}",
        v.observed
    );
    assert_eq!(
        v.observed,
        "tools/list (no Authorization) answered 403 (empty body) with a Bearer challenge error=insufficient_scope; tools/call (no Authorization) answered 403 (empty body) with a Bearer challenge: 403 where 401 is required: a request without a token MUST get 401 with WWW-Authenticate (clients start authorization only on 401)"
    );
    assert_eq!(
        no_token_403(&[
            ("tools/list", &refused(401, Some(&scope))),
            ("tools/call", &refused(403, None)),
            ("initialize", &refused(403, Some("Basic realm=\"x\""))),
        ]),
        None
    );
}

#[test]
fn a_403_asks_for_authorization_only_with_a_bearer_challenge() {
    assert!(asks_for_authorization(&refused(401, None)));
    assert!(asks_for_authorization(&refused(403, Some(BEARER))));
    // A bare 403 is a refusal in front of the MCP layer (a WAF, an access rule).
    assert!(!asks_for_authorization(&refused(403, None)));
    assert!(!asks_for_authorization(&refused(
        403,
        Some("Basic realm=\"x\"")
    )));
    // Behind discovery as at it: a 401, with or without its challenge (fresh eyes round 14,
    // item 1), or a 403 with a Bearer challenge.
    assert!(shows_boundary(&refused(401, Some(BEARER))));
    assert!(shows_boundary(&refused(401, None)));
    assert!(!shows_boundary(&refused(403, None)));
    assert!(!shows_boundary(&refused(200, Some(BEARER))));
    assert_eq!(
        challenge_scope(&refused(401, Some(BEARER))).as_deref(),
        Some("mcp")
    );
}

#[test]
fn initialize_served_without_a_token_beside_a_protected_discover_is_the_open_legacy_path() {
    let v = legacy_open(
        &refused(401, Some(BEARER)),
        &initialize_result(era::INITIALIZE_ID),
    )
    .expect("the legacy path is open");
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Fail, Some(Severity::High))
    );
    assert!(
        v.observed
            .starts_with("initialize served without a token while server/discover requires one"),
        "{}",
        v.observed
    );
    // A refused initialize, or a discover served without a token, is no open path.
    assert!(legacy_open(&refused(401, Some(BEARER)), &refused(401, Some(BEARER))).is_none());
    assert!(legacy_open(
        &initialize_result(1),
        &initialize_result(era::INITIALIZE_ID)
    )
    .is_none());
}

#[test]
fn the_worst_of_several_token_probes_says_which_request_it_is_about() {
    let accepted = Verdict::fail(Severity::Critical, "200: accepted").cause(Cause::TokenAccepted);
    let v = worst(vec![
        ("server/discover", Verdict::pass("401")),
        ("tools/list", accepted.clone()),
        (
            "initialize (2025-11-25)",
            Verdict::unknown(Cause::OtherReason, "429"),
        ),
    ]);
    assert_eq!(
        (v.outcome, v.severity, v.cause),
        (
            Outcome::Fail,
            Some(Severity::Critical),
            Some(Cause::TokenAccepted)
        )
    );
    assert_eq!(v.observed, "tools/list: 200: accepted");
    // No failure: an unknown is not hidden behind a pass.
    let v = worst(vec![
        ("server/discover", Verdict::pass("401")),
        ("tools/list", Verdict::unknown(Cause::OtherReason, "429")),
    ]);
    assert_eq!(v.outcome, Outcome::Unknown);
    // Every probe refused: one pass naming each request.
    let v = worst(vec![
        ("server/discover", Verdict::pass("401")),
        ("tools/list", Verdict::pass("401")),
    ]);
    assert_eq!(
        (v.outcome, v.observed.as_str()),
        (Outcome::Pass, "server/discover: 401; tools/list: 401")
    );
}

/// What an unauthenticated request beside a protected discovery shows (round 15, AUTHP):
/// the authorization layer's answer is the boundary (the random token goes there); the MCP
/// layer serving it without a token is a bypass; an answer for another reason, or none, is
/// not observed (never "no boundary there"); anything else is not judged.
#[test]
fn a_request_beside_a_protected_discovery_is_the_boundary_a_bypass_or_unseen() {
    let discover = refused(401, Some(BEARER));
    let json = |status: u16, body: serde_json::Value| -> Result<Exchange, ExchangeError> {
        Ok(answer_with(
            status,
            Some("application/json"),
            Body::Json(body),
            &[],
        ))
    };
    let call = Behind::ToolsCall;
    let list = Behind::ToolsList;
    let listen = Behind::Listen(serde_json::Map::from_iter([(
        "toolsListChanged".to_string(),
        json!(true),
    )]));
    for b in [&list, &call, &listen] {
        assert_eq!(
            beside(&discover, b, &Ok(refused(401, Some(BEARER)))),
            Beside::Boundary
        );
        assert_eq!(
            beside(&discover, b, &Ok(refused(401, None))),
            Beside::Boundary
        );
        // The authorization layer's 403 where 401 is required (fresh eyes round 17, nit 7):
        // the boundary all the same (the random token goes there), and `auth.challenge`
        // fails on it ([`no_token_403`]).
        assert_eq!(
            beside(&discover, b, &Ok(refused(403, Some(BEARER)))),
            Beside::Forbidden
        );
        // A bare 403 is no authorization layer's answer: not observed, never a failure.
        assert!(matches!(
            beside(&discover, b, &Ok(refused(403, None))),
            Beside::Unseen(_)
        ));
    }
    // Served without any token: the tool call dispatched (the unknown tool looked up), the
    // tool list served: high, naming both requests and what each answered.
    let open = |b: &Behind, got: Result<Exchange, ExchangeError>| match beside(&discover, b, &got) {
        Beside::Open(v) => v,
        other => panic!("{b:?}: not open: {other:?}"),
    };
    let v = open(
        &call,
        json(
            200,
            json!({"jsonrpc": "2.0", "id": TOOLS_CALL_ID, "error": {"code": -32602, "message": "Unknown tool: __vantage_probe_absent__"}}),
        ),
    );
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Fail, Some(Severity::Medium))
    );
    assert!(
        v.observed.starts_with("tools/call reached the MCP layer without a token while server/discover requires one: tools/call (no Authorization) answered 200 application/json JSON-RPC error -32602"),
        "{}",
        v.observed
    );
    assert!(
        v.observed
            .contains("server/discover (no Authorization) answered 401"),
        "{}",
        v.observed
    );
    let v = open(
        &list,
        json(
            200,
            json!({"jsonrpc": "2.0", "id": TOOLS_LIST_ID, "result": {"tools": []}}),
        ),
    );
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Fail, Some(Severity::High))
    );
    assert!(
        v.observed.starts_with("tools/list served without a token"),
        "{}",
        v.observed
    );
    // Another JSON-RPC error from the MCP layer (it may refuse at its own layer): not the
    // request served, a low warning that says what was seen.
    let v = open(
        &call,
        json(
            200,
            json!({"jsonrpc": "2.0", "id": TOOLS_CALL_ID, "error": {"code": -32001, "message": "Unauthorized"}}),
        ),
    );
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Warn, Some(Severity::Low))
    );
    assert!(
        v.observed
            .starts_with("tools/call answered by the MCP layer without a token"),
        "{}",
        v.observed
    );
    assert!(v.observed.contains("was not observed"), "{}", v.observed);
    let sse = answer_with(200, Some("text/event-stream"), Body::Unread, &[]);
    let v = open(&listen, Ok(sse));
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Warn, Some(Severity::Low))
    );
    // Not an answer to this request (another id), or no MCP answer at all: not judged.
    assert_eq!(
        beside(
            &discover,
            &list,
            &json(
                200,
                json!({"jsonrpc": "2.0", "id": 99, "result": {"tools": []}})
            )
        ),
        Beside::NotMcp
    );
    let page = answer_with(
        404,
        Some("text/html"),
        Body::Other {
            excerpt: "<h1>404</h1>".into(),
            len: 12,
            invalid_json: false,
        },
        &[],
    );
    assert_eq!(beside(&discover, &call, &Ok(page)), Beside::NotMcp);
    // Not observed: a rate limit, an unavailable server or gateway, a bare 500 or 403, no
    // answer (a reset, the vantage's own timeout): unknown for that cause, never a pass.
    let unseen = |b: &Behind, got: Result<Exchange, ExchangeError>| match beside(&discover, b, &got)
    {
        Beside::Unseen(o) => o,
        other => panic!("{b:?}: not unseen: {other:?}"),
    };
    for status in [429, 502, 503, 504, 500, 403] {
        let o = unseen(
            &call,
            Ok(answer_with(
                status,
                None,
                Body::Empty,
                &[("retry-after", "60")],
            )),
        );
        assert_eq!(o.cause, Cause::OtherReason, "{status}");
        assert!(
            o.head.contains(&format!("answered {status}")),
            "{status}: {}",
            o.head
        );
    }
    for cause in [Cause::Reset, Cause::Timeout] {
        let e = ExchangeError {
            cause,
            message: "connection reset by peer".into(),
        };
        let o = unseen(&call, Err(e));
        assert_eq!(o.cause, cause);
        assert!(
            o.head
                .starts_with("not answered (connection reset by peer)"),
            "{}",
            o.head
        );
    }
}

fn rpc_error(status: u16, code: i64) -> Exchange {
    answer_with(
        status,
        Some("application/json"),
        Body::Json(
            json!({"jsonrpc": "2.0", "id": crate::probe::era::INITIALIZE_ID, "error": {"code": code, "message": "no"}}),
        ),
        &[],
    )
}

/// Red team round 18, D2: a 2025-11-25 `initialize` sent to probe the legacy path's
/// boundary (without a token, or with a random token) is observed when it is served, the
/// authorization layer's answer, or the MCP layer saying it has no such path (a modern-only
/// server's -32022 or -32601: neutral); not observed when it got no answer, an answer for
/// another reason (429, 503, 502, 504, a bare 500), a redirect, or a 2xx without any
/// JSON-RPC answer.
#[test]
fn an_initialize_boundary_probe_is_observed_only_when_answered_for_itself() {
    let observed = [
        (
            "served",
            initialize_result(crate::probe::era::INITIALIZE_ID),
        ),
        ("401", refused(401, Some(BEARER))),
        ("bare 401", refused(401, None)),
        ("403 Bearer", refused(403, Some(BEARER))),
        ("-32022", rpc_error(200, -32022)),
        ("-32601 400", rpc_error(400, -32601)),
        (
            "404 page",
            answer_with(
                404,
                Some("text/html"),
                Body::Other {
                    excerpt: "<h1>no</h1>".into(),
                    len: 11,
                    invalid_json: true,
                },
                &[],
            ),
        ),
    ];
    for (case, ex) in observed {
        assert_eq!(initialize_not_observed(&Ok(ex)), None, "{case}");
    }
    let unseen = [
        ("429", refused(429, None), "rate limited: answered 429"),
        ("503", refused(503, None), "unavailable: answered 503"),
        ("502", refused(502, None), "a gateway answered 502"),
        ("504", refused(504, None), "a gateway answered 504"),
        (
            "bare 500",
            refused(500, None),
            "a server error without an MCP answer",
        ),
        (
            "bare 403",
            refused(403, None),
            "refused before the MCP layer",
        ),
        (
            "empty 200",
            answer_with(200, Some("application/json"), Body::Empty, &[]),
            "without a JSON-RPC answer",
        ),
    ];
    for (case, ex, head) in unseen {
        let o = initialize_not_observed(&Ok(ex)).unwrap_or_else(|| panic!("{case}"));
        assert_eq!(o.cause, Cause::OtherReason, "{case}");
        assert!(o.head.contains(head), "{case}: {}", o.head);
    }
    let reset = Err(ExchangeError {
        cause: Cause::Reset,
        message: "connection reset".into(),
    });
    let o = initialize_not_observed(&reset).unwrap();
    assert_eq!(o.cause, Cause::Reset);
    assert!(o.head.starts_with("not answered"), "{}", o.head);
}

/// The token-less `initialize` not observed: a pass (or a warning) on discovery's challenge
/// becomes `unknown` with its cause, naming initialize; a failure stands and says so.
#[test]
fn the_challenge_is_unknown_when_the_token_less_initialize_was_not_observed() {
    let o = initialize_not_observed(&Ok(refused(429, None))).unwrap();
    let result = |outcome, severity| CheckResult {
        id: crate::catalog::CheckId::AuthChallenge,
        outcome,
        observed: "401 with Bearer".into(),
        expected: String::new(),
        duration_ms: 0,
        severity,
        cause: None,
    };
    for (outcome, severity) in [(Outcome::Pass, None), (Outcome::Warn, Some(Severity::Low))] {
        let v = challenge_with_initialize_unseen(Some(&result(outcome, severity)), &o);
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Unknown, None, Some(Cause::OtherReason)),
            "{}",
            v.observed
        );
        assert!(
            v.observed.starts_with(
                "initialize (2025-11-25, no Authorization): rate limited: answered 429"
            ),
            "{}",
            v.observed
        );
        assert!(
            v.observed
                .ends_with("; server/discover's challenge: 401 with Bearer"),
            "{}",
            v.observed
        );
    }
    let v =
        challenge_with_initialize_unseen(Some(&result(Outcome::Fail, Some(Severity::High))), &o);
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Fail, Some(Severity::High))
    );
    assert!(
        v.observed
            .contains("; initialize (2025-11-25, no Authorization): "),
        "{}",
        v.observed
    );
    let v = challenge_with_initialize_unseen(None, &o);
    assert_eq!(v.outcome, Outcome::Unknown);
}
