//! Red-team defect 1 (front.py init429): a server whose `server/discover` works and whose
//! `initialize` is rate limited was reported "modern (2026-07-28 only)". Whether it also
//! speaks 2025-11-25 was not observed: `era.detect` is `unknown`, the report's era is
//! unknown, and a check whose verdict differs between a modern-only and a dual-era server
//! (`transport.get` answered with a bare 400) is `unknown` too, while one that does not
//! (`transport.delete` answered 405 with Allow) stands.

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use vantage_agent::catalog::CheckId;
use vantage_agent::engine::{Engine, ProbeOptions};
use vantage_agent::model::{Cause, Era, Outcome};
use vantage_agent::target::Target;

// What the engine's tests share: here, `assert_seen`.
#[path = "shared/probe.rs"]
mod shared;

use shared::assert_seen;

async fn handle(method: Method, _headers: HeaderMap, body: Bytes) -> Response {
    let json_answer = |status: StatusCode, v: Value| {
        (
            status,
            [("content-type", "application/json")],
            v.to_string(),
        )
            .into_response()
    };
    match method {
        Method::GET => (StatusCode::BAD_REQUEST, "").into_response(),
        Method::DELETE | Method::OPTIONS => {
            (StatusCode::METHOD_NOT_ALLOWED, [("allow", "POST")], "").into_response()
        }
        _ => {
            let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let id = req.get("id").cloned().unwrap_or(Value::Null);
            match req.get("method").and_then(Value::as_str) {
                Some("initialize") => (
                    StatusCode::TOO_MANY_REQUESTS,
                    [("content-type", "application/json"), ("retry-after", "60")],
                    r#"{"error":"rate limited"}"#,
                )
                    .into_response(),
                Some("server/discover") => json_answer(
                    StatusCode::OK,
                    json!({"jsonrpc": "2.0", "id": id, "result": {
                        "resultType": "complete", "supportedVersions": ["2026-07-28"],
                        "capabilities": {}, "ttlMs": 0, "cacheScope": "public",
                        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "t", "version": "1"}}}}),
                ),
                None => StatusCode::ACCEPTED.into_response(),
                Some(_) => json_answer(
                    StatusCode::NOT_FOUND,
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
                ),
            }
        }
    }
}

#[tokio::test]
async fn a_rate_limited_initialize_never_makes_a_server_modern_only() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(handle);
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let engine = Engine::new(ProbeOptions {
        allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
        ..Default::default()
    })
    .unwrap();
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let r = engine.run(&target).await;
    server.abort();
    let check = |id: CheckId| r.check(id).unwrap_or_else(|| panic!("{id} recorded"));
    let era = check(CheckId::EraDetect);
    assert_seen(
        era,
        (era.outcome, era.cause),
        (Outcome::Unknown, Some(Cause::OtherReason)),
        "whether it also speaks 2025-11-25 was not observed",
    );
    assert!(era.observed.contains("rate limited"), "{}", era.observed);
    assert_eq!(
        r.era,
        Era::Unknown,
        "the report claims no era it did not see"
    );
    let get = check(CheckId::TransportGet);
    // A bare 400 to GET passes on a dual-era server and warns on a modern-only one.
    assert_seen(
        get,
        (get.outcome, get.cause),
        (Outcome::Unknown, Some(Cause::OtherReason)),
        "whether this server also speaks 2025-11-25 was not observed",
    );
    assert_eq!(check(CheckId::TransportDelete).outcome, Outcome::Pass);
    assert_eq!(check(CheckId::MethodUnknown).outcome, Outcome::Pass);
    for c in &r.checks {
        assert!(
            !c.observed.contains("2026-07-28 only"),
            "{}: {}",
            c.id,
            c.observed
        );
    }
}
