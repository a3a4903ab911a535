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
