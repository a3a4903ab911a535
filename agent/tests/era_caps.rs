//! Red team round 6, #9 and #4: an answer the vantage stopped reading at its own read caps
//! (an endless JSON body, one endless SSE line, a valid but 5 MiB `server/discover`, an
//! endless header block) was not observed. A dual-era server whose `initialize` overflowed
//! was "modern (2026-07-28 only)", passed; one whose `server/discover` overflowed was
//! "legacy" with `era.legacy-only` ("upgrade the SDK"); an endless header block was "not
//! valid HTTP" (high). Each is `era.detect` `unknown` for cause `size-cap` (the merge's
//! `probe.incomplete`), never a pass, "legacy" or "not MCP"; the header cap is named as the
//! vantage's ("headers over N KiB"). A front of our own on loopback answers everything else
//! as a conformant dual-era server.

// The front and the engine in `run` are a test's setup: they unwrap.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vantage_agent::catalog::CheckId;
use vantage_agent::engine::{Engine, ProbeOptions};
use vantage_agent::model::{Cause, Era, Outcome, RegionResult};
use vantage_agent::target::Target;

#[path = "shared/probe.rs"]
mod shared;

/// Which answer overflows the vantage's caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// initialize: 200 application/json whose body never ends.
    InitEndlessBody,
    /// initialize: 200 text/event-stream with one `data:` line that never ends.
    InitEndlessSseLine,
    /// server/discover: a valid result with a 5 MiB `instructions` string (Content-Length
    /// set); initialize works.
    DiscoverHuge,
    /// server/discover: 200 application/json whose body never ends; initialize works.
    DiscoverEndlessBody,
    /// server/discover: one endless SSE line; initialize works.
    DiscoverEndlessSseLine,
}

fn endless(ct: &'static str, head: &'static str, unit: &'static [u8]) -> Response {
    let first = futures::stream::once(async move { Ok(Bytes::from_static(head.as_bytes())) });
    let rest =
        futures::stream::repeat_with(move || Ok::<_, std::io::Error>(Bytes::from_static(unit)));
    use futures::StreamExt;
    (
        StatusCode::OK,
        [("content-type", ct)],
        axum::body::Body::from_stream(first.chain(rest)),
    )
        .into_response()
}

const UNIT: &[u8] = &[b'['; 8192];
const LINE: &[u8] = &[b'x'; 8192];

async fn handle(State(mode): State<Mode>, method: Method, body: Bytes) -> Response {
    let json_answer = |v: Value| {
        (
            StatusCode::OK,
            [("content-type", "application/json")],
            v.to_string(),
        )
            .into_response()
    };
    if method != Method::POST {
        return (StatusCode::METHOD_NOT_ALLOWED, [("allow", "POST")], "").into_response();
    }
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    match (req.get("method").and_then(Value::as_str), mode) {
        (Some("initialize"), Mode::InitEndlessBody)
        | (Some("server/discover"), Mode::DiscoverEndlessBody) => {
            endless("application/json", "", UNIT)
        }
        (Some("initialize"), Mode::InitEndlessSseLine)
        | (Some("server/discover"), Mode::DiscoverEndlessSseLine) => {
            endless("text/event-stream", "event: message\ndata: ", LINE)
        }
        (Some("initialize"), _) => json_answer(json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "t", "version": "1"}}})),
        (Some("server/discover"), _) => {
            let mut result = json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28", "2025-11-25"],
                "capabilities": {}, "ttlMs": 0, "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "t", "version": "1"}}});
            if mode == Mode::DiscoverHuge {
                result["instructions"] = json!("i".repeat(5 << 20));
            }
            json_answer(json!({"jsonrpc": "2.0", "id": id, "result": result}))
        }
        (None, _) => StatusCode::ACCEPTED.into_response(),
        (Some(_), _) => (
            StatusCode::NOT_FOUND,
            [("content-type", "application/json")],
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
                .to_string(),
        )
            .into_response(),
    }
}

fn engine() -> Engine {
    Engine::new(ProbeOptions {
        allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
        check_timeout: Duration::from_secs(5),
        ..Default::default()
    })
    .unwrap()
}

async fn run(mode: Mode) -> RegionResult {
    let (addr, server) =
        shared::serve_app(axum::Router::new().fallback(handle).with_state(mode)).await;
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let r = engine().run(&target).await;
    server.abort();
    r
}

/// `era.detect` is `unknown` for the read cap, the era unknown, nothing failed or passed on
/// the era, and the evidence names the cap and which answer it cut.
#[track_caller]
fn era_unknown_for_the_cap(r: &RegionResult, mode: Mode, seen: &[&str]) {
    let era = r.check(CheckId::EraDetect).unwrap();
    shared::assert_cut_by_a_cap(era, &format!("{mode:?}"));
    for s in seen {
        assert!(era.observed.contains(s), "{mode:?}: {}", era.observed);
    }
    for never in ["modern (2026-07-28 only)", "legacy:", "not MCP"] {
        assert!(!era.observed.contains(never), "{mode:?}: {}", era.observed);
    }
    assert_eq!(r.era, Era::Unknown, "{mode:?}");
    let problems: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.outcome.is_problem())
        .map(|c| (c.id, c.outcome, c.severity))
        .collect();
    assert!(
        problems
            .iter()
            .all(|p| p.0 != CheckId::EraDetect && p.0 != CheckId::DiscoverShape),
        "{mode:?}: {problems:?}"
    );
}

#[tokio::test]
async fn an_initialize_cut_by_the_vantages_cap_never_makes_a_server_modern_only() {
    for (mode, cap) in [
        (Mode::InitEndlessBody, "body size cap"),
        (Mode::InitEndlessSseLine, "SSE line size cap"),
    ] {
        let r = run(mode).await;
        era_unknown_for_the_cap(
            &r,
            mode,
            &[
                "the server speaks 2026-07-28",
                "whether it also speaks 2025-11-25 was not observed",
                "initialize: not seen whole (answered 200",
                cap,
            ],
        );
        // The modern path was observed whole: its shape is judged.
        assert_eq!(
            r.check(CheckId::DiscoverShape).unwrap().outcome,
            Outcome::Pass,
            "{mode:?}"
        );
    }
}

#[tokio::test]
async fn a_discover_cut_by_the_vantages_cap_is_never_legacy() {
    for (mode, cap) in [
        (Mode::DiscoverHuge, "body size cap"),
        (Mode::DiscoverEndlessBody, "body size cap"),
        (Mode::DiscoverEndlessSseLine, "SSE line size cap"),
    ] {
        let r = run(mode).await;
        era_unknown_for_the_cap(
            &r,
            mode,
            &[
                "the server speaks MCP: initialize (2025-11-25) works",
                "server/discover was not seen whole (answered 200",
                cap,
            ],
        );
        let shape = r.check(CheckId::DiscoverShape).unwrap();
        assert_eq!(
            (shape.outcome, shape.cause),
            (Outcome::Unknown, Some(Cause::SizeCap)),
            "{mode:?}: {}",
            shape.observed
        );
    }
}

/// A status line, then header lines forever: hyper's header cap (the vantage's) stops the
/// read. Not "not valid HTTP" about the target: `unknown`, naming the cap.
#[tokio::test]
async fn an_endless_header_block_is_the_vantages_header_cap_not_invalid_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = tcp.read(&mut buf).await;
                if tcp.write_all(b"HTTP/1.1 200 OK\r\n").await.is_err() {
                    return;
                }
                for i in 0u64.. {
                    let line = format!("X-Filler-{i}: {}\r\n", "y".repeat(100));
                    if tcp.write_all(line.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let r = engine().run(&target).await;
    server.abort();
    let era = r.check(CheckId::EraDetect).unwrap();
    shared::assert_cut_by_a_cap(era, "the header cap");
    assert!(
        era.observed.contains("headers over 408 KiB")
            && era.observed.contains("the vantage's cap")
            && !era.observed.contains("not valid HTTP"),
        "{}",
        era.observed
    );
    assert!(
        r.checks.iter().all(|c| !c.outcome.is_problem()),
        "{:?}",
        r.checks
            .iter()
            .filter(|c| c.outcome.is_problem())
            .collect::<Vec<_>>()
    );
}
