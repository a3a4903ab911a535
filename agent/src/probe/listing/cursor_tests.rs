//! Red-team round 4, defects 2, 3 and 6, through the whole listing stage against a server on
//! loopback: a list the server said goes on (a `nextCursor` that is not a string), broke (a
//! page-2 error, a repeated cursor) or left without a usable answer (a wrong id) is read in
//! part, so no rule that needed all of it passes; and a bogus cursor answered by an empty 404
//! (an expired session, a proxy) says nothing about the cursor.

use std::sync::Arc;

use serde_json::{json, Value};

use super::test_server::{check, expect, listing, server, Handler};
use crate::catalog::CheckId;
use crate::model::{Cause, CheckResult, Outcome, Severity};

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}})
}

/// A `tools/list` result: `tools`, the cache hints, and `next` as `nextCursor` when given.
fn page(id: &Value, tools: &[&str], next: Option<Value>) -> (u16, String) {
    let mut result = json!({"resultType": "complete", "ttlMs": 60000, "cacheScope": "public",
        "tools": tools.iter().map(|t| tool(t)).collect::<Vec<_>>()});
    if let Some(n) = next {
        result["nextCursor"] = n;
    }
    (
        200,
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
}

fn rpc_error(id: &Value, status: u16, code: i64) -> (u16, String) {
    (
        status,
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no"}}).to_string(),
    )
}

/// The method, the cursor sent (if any) and the id of a request.
fn parts(req: &Value) -> (&str, Option<&str>, Value) {
    (
        req["method"].as_str().unwrap_or(""),
        req["params"]["cursor"].as_str(),
        req["id"].clone(),
    )
}

/// An unadvertised list: 404 with -32601, as the rule wants.
fn unadvertised(id: &Value) -> (u16, String) {
    rpc_error(id, 404, -32601)
}

/// The rules that need the whole of a list: none passes on part of it.
const WHOLE: &[CheckId] = &[
    CheckId::CapsDiscoverMatchesHandlers,
    CheckId::ToolsListShape,
    CheckId::ToolsNameFormat,
    CheckId::ToolsDeterministicOrder,
    CheckId::ToolsNoPerConnectionVariance,
    CheckId::PaginationCursor,
    CheckId::CacheHints,
    CheckId::ToolsSchemaValid,
    CheckId::ToolsInputConstrained,
    CheckId::ToolsSurfaceSize,
];

const FAIL_MEDIUM: (Outcome, Option<Severity>, Option<Cause>) =
    (Outcome::Fail, Some(Severity::Medium), None);
const SKIP: (Outcome, Option<Severity>, Option<Cause>) = (Outcome::Skip, None, None);

fn none_passes(results: &[CheckResult], what: &str) {
    for &id in WHOLE {
        let c = check(results, id);
        assert_ne!(c.outcome, Outcome::Pass, "{what}: {id}: {}", c.observed);
    }
}

/// A tool list the server broke by its cursors (`what` names the case): `pagination.cursor`
/// fails medium with `failure` in its evidence, no rule that needed the whole list passes, and
/// `cache.hints` and `caps.discover-matches-handlers` are skipped with `skipped` in theirs,
/// pointing at that failure.
fn broken_by_its_cursor(results: &[CheckResult], what: &str, failure: &[&str], skipped: &[&str]) {
    expect(
        what,
        check(results, CheckId::PaginationCursor),
        FAIL_MEDIUM,
        failure,
    );
    none_passes(results, what);
    let mut skipped = skipped.to_vec();
    skipped.push("the failure of pagination.cursor");
    for id in [CheckId::CacheHints, CheckId::CapsDiscoverMatchesHandlers] {
        expect(format!("{what}: {id}"), check(results, id), SKIP, &skipped);
    }
}

/// A server answering `tools/list` with `pages` (given the cursor sent, if any, and the
/// request's id), and every other list as unadvertised.
fn tools_only(
    pages: impl Fn(Option<&str>, &Value) -> (u16, String) + Send + Sync + 'static,
) -> Handler {
    Arc::new(move |req| {
        let (m, cursor, id) = parts(req);
        if m == "tools/list" {
            pages(cursor, &id)
        } else {
            unadvertised(&id)
        }
    })
}

/// Tools on two pages, the second's `nextCursor` being `next`.
fn two_pages(next: Value) -> Handler {
    tools_only(move |cursor, id| match cursor {
        None => page(id, &["t0", "t1"], Some(json!("p1"))),
        Some("p1") => page(id, &["t2"], Some(next.clone())),
        Some(_) => rpc_error(id, 200, -32602),
    })
}

#[tokio::test]
async fn a_cursor_that_is_not_a_string_leaves_the_list_read_in_part() {
    for next in [
        json!(12345),
        json!({"a": 1}),
        json!(["page-2"]),
        json!(true),
    ] {
        let addr = server(two_pages(next.clone())).await;
        let (results, complete) = listing(addr, json!({"tools": {}})).await;
        assert_eq!(complete, vec![false], "{next}: the list is not complete");
        broken_by_its_cursor(
            &results,
            &next.to_string(),
            &[
                &format!("tools/list page 2: nextCursor is {next}, not a string"),
                "MUST be an opaque string",
            ],
            &["tools/list was read in part (2 page(s), then tools/list page 2: nextCursor is"],
        );
    }
}

#[tokio::test]
async fn a_null_cursor_ends_the_list_with_a_warning() {
    let addr = server(two_pages(Value::Null)).await;
    let (results, complete) = listing(addr, json!({"tools": {}})).await;
    assert_eq!(complete, vec![true]);
    expect(
        "null",
        check(&results, CheckId::PaginationCursor),
        (Outcome::Warn, Some(Severity::Low), None),
        &["nextCursor is null"],
    );
    for id in [CheckId::CacheHints, CheckId::CapsDiscoverMatchesHandlers] {
        let c = check(&results, id);
        assert_eq!(c.outcome, Outcome::Pass, "{id}: {}", c.observed);
    }
}

#[tokio::test]
async fn a_list_the_server_broke_later_passes_neither_caps_nor_cache_hints() {
    // Page 2 a JSON-RPC error; a cursor that comes back.
    let errp2 = tools_only(|cursor, id| match cursor {
        None => page(id, &["t0"], Some(json!("p1"))),
        Some(_) => rpc_error(id, 200, -32603),
    });
    let repeat = tools_only(|cursor, id| match cursor {
        None => page(id, &["t0"], Some(json!("c1"))),
        Some("c1") => page(id, &["t1"], Some(json!("c2"))),
        Some("c2") => page(id, &["t2"], Some(json!("c1"))),
        Some(_) => rpc_error(id, 200, -32602),
    });
    for (what, h, why) in [
        (
            "errp2",
            errp2,
            "then the server refused the cursor it issued (page 2)",
        ),
        ("loop", repeat, "issued the cursor c1 twice"),
    ] {
        let (results, complete) = listing(server(h).await, json!({"tools": {}})).await;
        assert_eq!(complete, vec![false], "{what}");
        broken_by_its_cursor(&results, what, &[], &["tools/list was read in part", why]);
    }
}

#[tokio::test]
async fn a_list_without_a_usable_answer_is_never_called_unpaginated() {
    // tools/list answered with another id; prompts/list whole and fine.
    let h: Handler = Arc::new(|req| {
        let (m, _, id) = parts(req);
        match m {
            "tools/list" => page(&json!(987654), &["t0"], None),
            "prompts/list" => (
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
                    "ttlMs": 0, "cacheScope": "public", "prompts": []}})
                .to_string(),
            ),
            _ => unadvertised(&id),
        }
    });
    let (results, complete) = listing(server(h).await, json!({"tools": {}, "prompts": {}})).await;
    assert_eq!(complete, vec![false, true]);
    expect(
        "caps",
        check(&results, CheckId::CapsDiscoverMatchesHandlers),
        (Outcome::Fail, Some(Severity::High), None),
        &[],
    );
    for id in [CheckId::PaginationCursor, CheckId::CacheHints] {
        let c = check(&results, id);
        expect(
            id,
            c,
            SKIP,
            &[
                "tools/list had no usable answer",
                "not the request's id",
                "the failure of caps.discover-matches-handlers",
            ],
        );
        assert!(
            !c.observed.contains("without nextCursor"),
            "{id}: {}",
            c.observed
        );
    }
}

#[tokio::test]
async fn a_bogus_cursor_answered_by_an_empty_404_says_nothing_about_the_cursor() {
    let h = tools_only(|cursor, id| match cursor {
        None => page(id, &["t0"], Some(json!("p1"))),
        Some("p1") => page(id, &["t1"], None),
        // What an expired session (or a proxy) answers: no JSON-RPC error.
        Some(_) => (404, String::new()),
    });
    let (results, complete) = listing(server(h).await, json!({"tools": {}})).await;
    assert_eq!(complete, vec![true]);
    expect(
        "invalid cursor",
        check(&results, CheckId::PaginationInvalidCursor),
        (Outcome::Unknown, None, Some(Cause::OtherReason)),
        &[
            "without a JSON-RPC error",
            "nothing says the server judged the cursor",
        ],
    );
    // The list itself was read whole: its rules pass.
    let p = check(&results, CheckId::PaginationCursor);
    assert_eq!(p.outcome, Outcome::Pass, "{}", p.observed);
}
