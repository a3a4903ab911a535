//! `era.detect` never claims what it did not see: a front of our own (on loopback) whose
//! `server/discover` and `initialize` each answer, answer for another reason, or never
//! answer, by mode.
//!
//! Red-team defect 1 (front.py init429), round 3 (init500, hanginit): a server whose
//! `server/discover` works and whose `initialize` is rate limited, answered with a bare 500,
//! never answered or cut was reported "modern (2026-07-28 only)". Whether it also speaks
//! 2025-11-25 was not observed: `era.detect` is `unknown` with the cause, the report's era is
//! unknown, and a check whose verdict differs between a modern-only and a dual-era server
//! (`transport.get` answered with a bare 400) is `unknown` too, while one that does not
//! (`transport.delete` answered 405 with Allow) stands.
//!
//! Round 3 (hangdisc, slow.py trickle): a `server/discover` that never answered, or whose
//! body the vantage's own per-exchange timeout cut, was "No MCP protocol answers at this
//! URL" (high) beside a working `initialize`. A timeout is no evidence that the target is
//! not MCP (`checks.md` 4.1 (c), 4): `era.detect` is `unknown`, never a failure.

// The front and the engine in `run` are a test's setup: they unwrap.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{json, Value};
use vantage_agent::catalog::CheckId;
use vantage_agent::engine::{Engine, ProbeOptions};
use vantage_agent::model::{Cause, Era, Outcome, RegionResult};
use vantage_agent::target::Target;

// What the engine's tests share: here, `assert_seen`.
#[path = "shared/probe.rs"]
mod shared;

use shared::{assert_seen, assert_seen_all};

/// How the front answers `initialize` and `server/discover`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// initialize: 429 with Retry-After.
    InitRateLimited,
    /// initialize: 500 with an empty body.
    Init500,
    /// initialize: never answered (the connection held open).
    InitSilent,
    /// initialize: 200 headers, then the body cut (the connection closed mid-body).
    InitCut,
    /// server/discover never answered; initialize works (2025-11-25).
    DiscoverSilentLegacyWorks,
    /// server/discover: 200 headers and half a body, then nothing; initialize works.
    DiscoverStalledLegacyWorks,
    /// server/discover: 200 headers, then the body cut; initialize works.
    DiscoverCutLegacyWorks,
    /// Neither server/discover nor initialize is ever answered.
    NothingAnswers,
    /// server/discover: 200 text/event-stream with one comment, then the end; initialize
    /// works (red team round 18, D9).
    DiscoverSseCommentLegacyWorks,
    /// server/discover: 200 text/event-stream whose response has another id; initialize works.
    DiscoverSseOtherIdLegacyWorks,
    /// server/discover: 200 application/json with an empty body; initialize works.
    DiscoverEmptyLegacyWorks,
}

fn legacy_result(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
           "capabilities": {}, "serverInfo": {"name": "t", "version": "1"}}})
}

/// 200 application/json whose body sends `first` and then either ends with an error (the
/// connection closed mid-body) or never ends.
fn broken_body(first: &'static str, then_close: bool) -> Response {
    let tail = futures::stream::once(async move {
        if !then_close {
            std::future::pending::<()>().await;
        }
        Err::<Bytes, std::io::Error>(std::io::Error::other("cut"))
    });
    let body =
        futures::stream::once(async move { Ok(Bytes::from_static(first.as_bytes())) }).chain(tail);
    (
        StatusCode::OK,
        [
            ("content-type", "application/json"),
            ("content-length", "400"),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

async fn handle(
    State(mode): State<Mode>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
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
            let discover_answers = !matches!(
                mode,
                Mode::DiscoverSilentLegacyWorks
                    | Mode::DiscoverStalledLegacyWorks
                    | Mode::DiscoverCutLegacyWorks
                    | Mode::NothingAnswers
                    | Mode::DiscoverSseCommentLegacyWorks
                    | Mode::DiscoverSseOtherIdLegacyWorks
                    | Mode::DiscoverEmptyLegacyWorks
            );
            match req.get("method").and_then(Value::as_str) {
                // The 2026-07-28 path's Origin guard.
                Some("server/discover") if discover_answers && headers.contains_key("origin") => {
                    json_answer(
                        StatusCode::FORBIDDEN,
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "Forbidden: origin not allowed"}}),
                    )
                }
                Some("initialize") => match mode {
                    Mode::InitRateLimited => (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("content-type", "application/json"), ("retry-after", "60")],
                        r#"{"error":"rate limited"}"#,
                    )
                        .into_response(),
                    Mode::Init500 => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                    Mode::InitSilent | Mode::NothingAnswers => std::future::pending().await,
                    Mode::InitCut => broken_body(r#"{"jsonrpc": "2.0", "#, true),
                    _ => json_answer(StatusCode::OK, legacy_result(id)),
                },
                Some("server/discover") if !discover_answers => match mode {
                    Mode::DiscoverStalledLegacyWorks => {
                        broken_body(r#"{"jsonrpc": "2.0", "id": 1, "#, false)
                    }
                    Mode::DiscoverCutLegacyWorks => broken_body(r#"{"jsonrpc": "2.0", "#, true),
                    Mode::DiscoverSseCommentLegacyWorks => (
                        StatusCode::OK,
                        [("content-type", "text/event-stream")],
                        ": keepalive\n\n",
                    )
                        .into_response(),
                    Mode::DiscoverSseOtherIdLegacyWorks => (
                        StatusCode::OK,
                        [("content-type", "text/event-stream")],
                        format!(
                            "event: message\ndata: {}\n\n",
                            json!({"jsonrpc": "2.0", "id": 424242, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"]}})
                        ),
                    )
                        .into_response(),
                    Mode::DiscoverEmptyLegacyWorks => {
                        (StatusCode::OK, [("content-type", "application/json")], "").into_response()
                    }
                    _ => std::future::pending().await,
                },
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

/// Run the engine once against a front in `mode` (per-exchange timeout 1 s: the silent
/// modes end by it).
async fn run(mode: Mode) -> RegionResult {
    let (addr, server) =
        shared::serve_app(axum::Router::new().fallback(handle).with_state(mode)).await;
    let engine = Engine::new(ProbeOptions {
        allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
        check_timeout: Duration::from_secs(1),
        ..Default::default()
    })
    .unwrap();
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let r = engine.run(&target).await;
    server.abort();
    r
}

/// discover works, initialize was not observed: modern for certain, dual-era or not unknown.
#[tokio::test]
async fn an_initialize_answered_for_another_reason_or_not_at_all_never_makes_a_server_modern_only()
{
    for (mode, cause, seen) in [
        (Mode::InitRateLimited, Cause::OtherReason, "rate limited"),
        (
            Mode::Init500,
            Cause::OtherReason,
            "initialize: a server error without an MCP answer: answered 500",
        ),
        (
            Mode::InitSilent,
            Cause::Timeout,
            "initialize: not answered (accepted the connection, never answered within 1 s",
        ),
        (Mode::InitCut, Cause::Reset, "initialize: not answered ("),
    ] {
        let r = run(mode).await;
        modern_but_dual_unknown(&r, mode, cause, seen);
    }
}

/// `era.detect` is unknown for `cause` and says each of `needles`; the report claims no era
/// it did not see.
#[track_caller]
fn assert_era_unknown(r: &RegionResult, mode: Mode, cause: Cause, needles: &[&str]) {
    let era = r.check(CheckId::EraDetect).expect("era.detect recorded");
    for needle in needles {
        assert_seen(
            era,
            (era.outcome, era.cause),
            (Outcome::Unknown, Some(cause)),
            needle,
        );
    }
    assert_eq!(r.era, Era::Unknown, "{mode:?}: the report claims no era");
}

fn modern_but_dual_unknown(r: &RegionResult, mode: Mode, cause: Cause, seen: &str) {
    let check = |id: CheckId| r.check(id).unwrap_or_else(|| panic!("{id} recorded"));
    let no_legacy = "whether it also speaks 2025-11-25 was not observed";
    assert_era_unknown(r, mode, cause, &[no_legacy, seen]);
    let get = check(CheckId::TransportGet);
    // A bare 400 to GET passes on a dual-era server and warns on a modern-only one.
    assert_seen(
        get,
        (get.outcome, get.cause),
        (Outcome::Unknown, Some(Cause::OtherReason)),
        "whether this server also speaks 2025-11-25 was not observed",
    );
    assert_eq!(
        check(CheckId::TransportDelete).outcome,
        Outcome::Pass,
        "{mode:?}"
    );
    assert_eq!(
        check(CheckId::MethodUnknown).outcome,
        Outcome::Pass,
        "{mode:?}"
    );
    // Red team round 18, D2: the Origin guard refused on server/discover; whether there is a
    // 2025-11-25 path (whose initialize the guard must refuse too) was not observed, so
    // security.origin is unknown, never the 2026-07-28 path's pass alone.
    let origin = check(CheckId::SecurityOrigin);
    assert_seen_all(
        origin,
        (origin.outcome, origin.severity, origin.cause),
        (Outcome::Unknown, None, Some(Cause::OtherReason)),
        &[
            "server/discover (2026-07-28): 403",
            "initialize (2025-11-25): not observed: whether this server also speaks 2025-11-25",
        ],
    );
    shared::assert_no_check_says(r, "2026-07-28 only", &format!("{mode:?}"));
}

/// initialize works (2025-11-25), discover was not observed: MCP for certain, never "not
/// MCP"; whether it also speaks 2026-07-28 is unknown, and so is everything after it. A
/// discover whose connection was cut (a reset: a proxy on either side may have cut it) or
/// one the vantage's own timeout ended fails nothing: `discover.shape` is unknown too (red
/// team round 12, item 1: a cut discover was a high `discover.shape` failure).
#[tokio::test]
async fn a_discover_without_an_answer_beside_a_working_initialize_is_never_not_mcp() {
    for (mode, cause, seen, shape) in [
        (
            Mode::DiscoverSilentLegacyWorks,
            Cause::Timeout,
            "server/discover was not answered (accepted the connection, never answered within 1 s",
            None,
        ),
        (
            Mode::DiscoverStalledLegacyWorks,
            Cause::Timeout,
            "but the body did not finish within 1 s",
            None,
        ),
        (
            Mode::DiscoverCutLegacyWorks,
            Cause::Reset,
            "server/discover was not answered (",
            None,
        ),
        // Red team round 18, D9: a 2xx with no response to discover was "legacy: only
        // initialize works" (era.legacy-only, medium) on a dual-era server.
        (
            Mode::DiscoverSseCommentLegacyWorks,
            Cause::Malformed,
            "an event stream that ended with no event (a comment is no event), so no response to server/discover was read",
            None,
        ),
        (
            Mode::DiscoverSseOtherIdLegacyWorks,
            Cause::Malformed,
            "an event stream whose response has id 424242, not server/discover's (1)",
            None,
        ),
        (
            Mode::DiscoverEmptyLegacyWorks,
            Cause::Malformed,
            "a 2xx with no body, so no response to server/discover was read",
            None,
        ),
    ] {
        let r = run(mode).await;
        let legacy = "the server speaks MCP: initialize (2025-11-25) works (200 application/json";
        let no_modern = "whether it also speaks 2026-07-28 was not observed";
        assert_era_unknown(&r, mode, cause, &[legacy, seen, no_modern]);
        let got = r.check(CheckId::DiscoverShape).unwrap();
        match shape {
            Some(want) => assert_eq!((got.outcome, got.severity, got.cause), want, "{mode:?}"),
            None => assert_eq!(
                (got.outcome, got.cause),
                (Outcome::Unknown, Some(cause)),
                "{mode:?}"
            ),
        }
        // Nothing else failed, and what was not run is unknown (no evidence), not skipped.
        for c in &r.checks {
            assert!(
                c.outcome != Outcome::Fail || c.id == CheckId::DiscoverShape,
                "{mode:?} {}: {:?} {}",
                c.id,
                c.outcome,
                c.observed
            );
        }
        for id in [
            CheckId::RedirectNone,
            CheckId::TransportGet,
            CheckId::ToolsListShape,
        ] {
            let c = r.check(id).unwrap();
            assert_eq!(
                (c.outcome, c.cause),
                (Outcome::Unknown, Some(cause)),
                "{mode:?} {id}"
            );
        }
    }
}

/// Nothing answered an MCP request within the per-exchange timeout: no evidence either way
/// (the region did not observe the target), never the high "not MCP".
#[tokio::test]
async fn a_target_whose_mcp_requests_all_time_out_has_an_unknown_era() {
    let r = run(Mode::NothingAnswers).await;
    let needles = [
        "server/discover: accepted the connection, never answered within 1 s",
        "initialize: not answered (accepted the connection",
        "no evidence either way",
    ];
    assert_era_unknown(&r, Mode::NothingAnswers, Cause::Timeout, &needles);
    // Connected, and then nothing: every check past the connection is unknown for the
    // timeout, none failed and none passed.
    use vantage_agent::catalog::Stage;
    for c in &r.checks {
        if matches!(c.id.stage(), Stage::Dns | Stage::Net | Stage::Tls) {
            assert!(c.outcome != Outcome::Fail, "{}: {}", c.id, c.observed);
        } else {
            assert_eq!(
                (c.outcome, c.cause),
                (Outcome::Unknown, Some(Cause::Timeout)),
                "{}: {}",
                c.id,
                c.observed
            );
        }
    }
}
