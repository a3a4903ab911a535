//! A baseline that accepts `era.detect` on an endpoint that serves no MCP (a JSON error page,
//! a 404) never passes the gate: no MCP request got an MCP answer, so nothing was observed
//! (`checks.md` 4.1 (c)); the gate says unknown (exit 4). Without a baseline the endpoint
//! stays blocked (`era.detect`, high), as before. A JSON-RPC echo (an empty result with the
//! request's own id) is such an endpoint too: it names no `supportedVersions` nor
//! `protocolVersion`, so it tells no era.

use serde_json::Value;
use vantage_fixture::{Fixture, Hostile, HostileServer};

use crate::evidence_support::finding;
use crate::support::{vantage_env, Scratch, Served};

/// Every method: `200 {"jsonrpc":"2.0","id":<the request's id>,"result":{}}`.
async fn echo_empty(body: axum::body::Bytes) -> axum::response::Response {
    use axum::response::IntoResponse;
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null);
    (
        [("content-type", "application/json")],
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
    )
        .into_response()
}

/// `check URL` (blocked, exit 2), `baseline --from` its report, then `check URL --baseline`:
/// the second run's JSON report.
async fn accepted_run(url: &str, name: &str) -> Value {
    let dir = Scratch::new(name);
    let (report, base) = (dir.join("report.json"), dir.join("baseline.toml"));
    let (report_s, base_s) = (report.to_str().unwrap(), base.to_str().unwrap());
    let out = vantage_env(&["check", url, "-f", "json", "-o", report_s], &[]).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "{url}: not MCP, no baseline: blocked"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(doc["decision"], "blocked", "{url}");
    assert_eq!(finding(&doc, "era.detect")["severity"], "high", "{url}");
    assert_eq!(doc["era"], "not-mcp", "{url}");
    let out = vantage_env(
        &[
            "baseline", "--from", report_s, "-o", base_s, "--reason", "t", "--days", "5",
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{url}");
    let written = std::fs::read_to_string(&base).unwrap();
    assert!(written.contains("finding = \"era.detect\""), "{written}");
    let out = vantage_env(&["check", url, "--baseline", base_s, "-f", "json"], &[]).await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(4), "{url}: {}", doc["gate"]);
    doc
}

#[tokio::test]
async fn accepting_era_detect_on_an_endpoint_that_is_not_mcp_is_unknown_never_a_pass() {
    let not_json = HostileServer::start(Hostile::NotJson).await.unwrap();
    let clean = Fixture::start(&[]).await.unwrap();
    // A JSON-RPC echo: every request gets an empty result with its own id (round 8, item 1).
    let echo = Served::start(|_| axum::Router::new().fallback(echo_empty)).await;
    // The clean fixture 404s at `/mcp/`: an HTTP answer, not an MCP one.
    for (url, name) in [
        (not_json.url(), "notmcp-json"),
        (echo.url(), "notmcp-echo"),
        (format!("{}/", clean.url()), "notmcp-404"),
    ] {
        let doc = accepted_run(&url, name).await;
        assert_eq!(
            finding(&doc, "era.detect")["accepted"]["status"],
            "accepted",
            "{url}"
        );
        assert_eq!(doc["gate"]["result"], "unknown", "{url}: {}", doc["gate"]);
        assert_eq!(doc["gate"]["exit_code"], 4, "{url}");
        let line = doc["gate"]["line"].as_str().unwrap();
        assert!(
            line.starts_with("gate: unknown (exit 4: with era.detect accepted by the baseline, nothing else was observed from local"),
            "{url}: {line}"
        );
    }
    // Control: the same endpoint served right is observed and passes.
    let out = vantage_env(&["check", &clean.url(), "-f", "json"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
}
