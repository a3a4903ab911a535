//! `era.detect` counts an answer as MCP only when its JSON-RPC result answers the request:
//! the same `jsonrpc` "2.0" and the request's id.
//!
//! Fresh-user round 8, defect 1 (nonmcp.py jsonrpc-id999): a server that answers every
//! request `200 {"jsonrpc":"2.0","id":999,"result":{}}` was "modern (2026-07-28 only)". A
//! result with another id answers no request of the vantage's (`checks.md` 4.1): no era was
//! told, and the endpoint is not taken for MCP.
//!
//! The same echo with the request's own id (`nonmcp.py jsonrpc-notmcp`): an empty result is
//! no `server/discover` answer either. The spec's era table counts "200 with
//! `supportedVersions`" as modern (and `initialize` needs `protocolVersion`); a result that
//! carries neither tells no era.

// The server and the engine in `run` are a test's setup: they unwrap.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{json, Value};
use vantage_agent::catalog::CheckId;
use vantage_agent::engine::{Engine, ProbeOptions};
use vantage_agent::model::{Era, Outcome, RegionResult, Severity};
use vantage_agent::target::Target;

#[path = "shared/probe.rs"]
mod shared;

/// Every method, every request: the same JSON-RPC result with id 999.
async fn echo999() -> impl IntoResponse {
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        r#"{"jsonrpc":"2.0","id":999,"result":{}}"#,
    )
}

/// Every method, every request: an empty JSON-RPC result with the request's own id.
async fn echo_empty(body: Bytes) -> impl IntoResponse {
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(json!(1));
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
    )
}

async fn run(app: axum::Router) -> RegionResult {
    let (addr, server) = shared::serve_app(app).await;
    let engine = Engine::new(ProbeOptions {
        allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
        check_timeout: Duration::from_secs(5),
        ..Default::default()
    })
    .unwrap();
    let r = engine
        .run(&Target::parse(&format!("http://{addr}/mcp")).unwrap())
        .await;
    server.abort();
    r
}

/// `era.detect` failed high, "not MCP", naming why each request's answer told no era
/// (`needles`), and the region's era is not-MCP.
#[track_caller]
fn no_era_told(r: &RegionResult, needles: &[&str]) {
    let era = r.check(CheckId::EraDetect).expect("era.detect recorded");
    shared::assert_seen_all(
        era,
        (era.outcome, era.severity),
        (Outcome::Fail, Some(Severity::High)),
        &[&["not MCP"], needles].concat(),
    );
    assert_eq!(r.era, Era::NotMcp);
}

#[tokio::test]
async fn an_empty_result_with_the_request_id_tells_no_era() {
    let r = run(axum::Router::new().fallback(echo_empty)).await;
    no_era_told(
        &r,
        &[
            "server/discover: its JSON-RPC result carries no supportedVersions",
            "initialize: its JSON-RPC result carries no protocolVersion",
        ],
    );
    let shape = r.check(CheckId::DiscoverShape).expect("discover.shape");
    assert_eq!(shape.outcome, Outcome::Skip, "{}", shape.observed);
}

#[tokio::test]
async fn a_result_that_does_not_echo_the_request_id_tells_no_era() {
    let r = run(axum::Router::new().fallback(echo999)).await;
    no_era_told(
        &r,
        &[
            "server/discover: its JSON-RPC result has id 999, not the request's 1",
            "initialize: its JSON-RPC result has id 999, not the request's 2",
        ],
    );
    assert!(
        r.checks.iter().all(|c| c.outcome != Outcome::Pass
            || !matches!(c.id, CheckId::EraDetect | CheckId::DiscoverShape)),
        "nothing of the MCP surface passes"
    );
}
