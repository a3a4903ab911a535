//! Red-team round 18, D1, through the `vantage` command: a dual-era server whose
//! `server/discover` works and whose legacy `initialize` is answered 2xx with no response to
//! it read whole: cut after its headers (Content-Length and half the body, then the
//! connection breaks), an event stream that ends with no event, with only a comment, with a
//! response for another id, an empty 200, a 200 that is no JSON-RPC at all; or answered with
//! an intermediary's status (408, 413, 431). None of them is a refusal of 2025-11-25, so the era is `unknown` (exit 4, `probe.incomplete` naming what
//! initialize got), never "modern (2026-07-28 only)" passed; and behind a boundary the open
//! legacy path is then still probed (without a token, with a garbage one) and blocks. The
//! front (on loopback) passes everything else through to the fixture; the same front with
//! nothing broken is the control (a pass, dual-era). The JSON body cut short was already
//! `unknown` (the exchange fails) and stays so.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::Value;
use vantage_fixture::{Fault, Fixture, FIXTURE_TOKEN};

use crate::evidence_support::{era_unknown_exit_4, finding, finding_ids};
use crate::support::{front_before, head_of, pass_on, streamed, vantage_env, Received};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing changed: the control.
    None,
    /// The fixture's event stream, its Content-Length sent, cut after half its bytes.
    CutSse,
    /// A JSON initialize result, its Content-Length sent, cut after half its bytes.
    CutJson,
    /// 200 text/event-stream that ends with no byte.
    SseNoEvent,
    /// 200 text/event-stream whose body is one comment, then the end.
    SseComment,
    /// The fixture's event stream with its response's id changed to 424242.
    SseOtherId,
    /// 200 application/json, empty body.
    Empty200,
    /// 200 text/html, a page.
    Html200,
    /// An intermediary's status (408, 413, 431) with a text/plain body.
    Status(u16),
}

/// The mode, and whether the run has the fixture's token (then only the initialize that
/// carries it is broken).
type Front = crate::support::Front<(Mode, bool)>;

/// The fixture's answer, streamed through, unless the mode changes this request: the
/// initialize beside discovery. In a run with the token that is the one that carries it (the
/// token-less and garbage-token ones go through).
async fn handle(State(f): State<Arc<Front>>, r: Received) -> Response {
    let (mode, token) = f.mode;
    let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let is_init = msg.get("method").and_then(Value::as_str) == Some("initialize");
    let auth = r
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let breaks = is_init
        && match auth {
            Some(a) => token && a.ends_with(FIXTURE_TOKEN),
            None => !token,
        };
    let sse = |body: &'static str| ([("content-type", "text/event-stream")], body).into_response();
    if breaks {
        match mode {
            Mode::SseNoEvent => return sse(""),
            Mode::SseComment => return sse(": keepalive\n\n"),
            Mode::Empty200 => return ([("content-type", "application/json")], "").into_response(),
            Mode::Html200 => {
                return (
                    [("content-type", "text/html")],
                    "<html><body>Welcome</body></html>",
                )
                    .into_response()
            }
            Mode::CutJson => {
                let whole = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"f","version":"1"}}}}}}"#,
                    msg["id"]
                );
                return cut("application/json", Bytes::from(whole));
            }
            Mode::Status(code) => {
                return (
                    StatusCode::from_u16(code).unwrap(),
                    [("content-type", "text/plain")],
                    "request refused by the proxy",
                )
                    .into_response()
            }
            Mode::None | Mode::CutSse | Mode::SseOtherId => {}
        }
    }
    // The front stands for the fixture: its URLs (the challenge's resource_metadata, the
    // metadata's resource) name the front, as a reverse proxy's would.
    let front = r
        .headers
        .get("host")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let upstream = f.upstream.trim_start_matches("http://").to_string();
    let metadata = r.uri.path().starts_with("/.well-known/");
    let Some(resp) = pass_on(&f.client, &f.upstream, r).await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    if breaks && matches!(mode, Mode::CutSse | Mode::SseOtherId) {
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        assert!(
            ct.starts_with("text/event-stream"),
            "the fixture's initialize: {ct}"
        );
        let body = resp.bytes().await.unwrap();
        if mode == Mode::CutSse {
            return cut(&ct, body);
        }
        let text = String::from_utf8_lossy(&body)
            .replace(&format!("\"id\":{}", msg["id"]), "\"id\":424242");
        assert!(text.contains("424242"), "{text}");
        return sse_owned(text);
    }
    let head = head_of(&resp, |v| v.replace(&upstream, &front));
    if metadata {
        let body = resp.bytes().await.unwrap();
        let text = String::from_utf8_lossy(&body).replace(&upstream, &front);
        return head.body(Body::from(text)).unwrap();
    }
    head.body(streamed(resp)).unwrap()
}

fn sse_owned(text: String) -> Response {
    ([("content-type", "text/event-stream")], text).into_response()
}

/// 200 `ct` with the Content-Length of `whole`, half of it, then the connection breaks.
fn cut(ct: &str, whole: Bytes) -> Response {
    let half = whole.slice(..whole.len() / 2);
    // The half goes out before the break (hyper drops a connection whose body fails at once
    // before it writes what it holds).
    let stream = futures::stream::unfold(Some(half), |state| async move {
        match state {
            Some(half) => Some((Ok::<Bytes, std::io::Error>(half), None)),
            None => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                Some((Err(std::io::Error::other("cut after half the body")), None))
            }
        }
    })
    .take(2);
    axum::http::Response::builder()
        .status(200)
        .header("content-type", ct)
        .header("content-length", whole.len().to_string())
        .body(Body::from_stream(stream))
        .unwrap()
}

/// `vantage check URL --check-timeout 2s -f json`, with the fixture's token when `token`.
async fn check(url: &str, token: bool) -> std::process::Output {
    let mut args = vec!["check", url, "--check-timeout", "2s", "-f", "json"];
    let env: &[(&str, &str)] = if token {
        args.extend(["--token-env", "VT"]);
        &[("VT", FIXTURE_TOKEN)]
    } else {
        &[]
    };
    vantage_env(&args, env).await
}

/// What each mode's initialize evidence names.
fn seen(mode: Mode) -> &'static str {
    match mode {
        Mode::None => unreachable!("the control passes"),
        Mode::CutSse | Mode::SseNoEvent | Mode::SseComment => {
            "initialize: not read whole: answered 200 text/event-stream (0 SSE events), but the event stream ended with no event"
        }
        Mode::CutJson => "initialize: not answered (body cut short",
        Mode::SseOtherId => {
            "but the event stream ended with no response to initialize (id 2): the one it carried has id 424242"
        }
        Mode::Empty200 => {
            "initialize: answered 200 application/json (empty body): a 2xx with no response to initialize"
        }
        Mode::Html200 => {
            "initialize: answered 200 text/html body \"<html><body>Welcome</body></html>\": a 2xx that is no JSON-RPC response to initialize"
        }
        Mode::Status(408) => "initialize: the request was refused for its timing, not for the rule: answered 408 text/plain body \"request refused by the proxy\" (Request Timeout",
        Mode::Status(413) => "initialize: the request was refused for its size, not for the rule: answered 413 text/plain body \"request refused by the proxy\" (Content Too Large",
        Mode::Status(_) => "initialize: the request was refused for its size, not for the rule: answered 431 text/plain body \"request refused by the proxy\" (Request Header Fields Too Large",
    }
}

const BROKEN: [Mode; 10] = [
    Mode::CutSse,
    Mode::CutJson,
    Mode::SseNoEvent,
    Mode::SseComment,
    Mode::SseOtherId,
    Mode::Empty200,
    Mode::Html200,
    Mode::Status(408),
    Mode::Status(413),
    Mode::Status(431),
];

#[tokio::test]
async fn an_initialize_answered_2xx_without_its_response_leaves_the_era_unknown_exit_4() {
    let fixture = Fixture::start(&[]).await.unwrap();
    // The control: the same front, nothing broken, passes as dual-era.
    let server = front_before(&fixture, (Mode::None, false), handle).await;
    let out = check(&server.url(), false).await;
    drop(server);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["decision"], "pass");
    assert_eq!(report["regions"][0]["era"], "dual");
    for mode in BROKEN {
        let server = front_before(&fixture, (mode, false), handle).await;
        let out = check(&server.url(), false).await;
        drop(server);
        let report = era_unknown_exit_4(&out, &format!("{mode:?}"));
        let ids = finding_ids(&report);
        assert!(
            !ids.iter().any(|id| id == "era.detect"),
            "{mode:?}: {ids:?}"
        );
        let evidence: Vec<&str> = finding(&report, "probe.incomplete")["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let evidence = evidence.join("\n");
        assert!(
            evidence.contains(
                "the server speaks 2026-07-28 (server/discover: 200 application/json JSON-RPC result), but whether it also speaks 2025-11-25 was not observed"
            ),
            "{mode:?}: {evidence}"
        );
        assert!(evidence.contains(seen(mode)), "{mode:?}: {evidence}");
        assert!(
            !report.to_string().contains("2026-07-28 only"),
            "{mode:?}: {report}"
        );
    }
}

/// The worst form (D1, "authorization"): the legacy path takes no token, the run has the
/// valid one, and only the initialize that carries it is broken. The era is not known, so
/// the token-less and garbage-token initializes are still sent and the open path blocks
/// (it was a pass, exit 0, "modern (2026-07-28 only)").
#[tokio::test]
async fn an_open_legacy_path_behind_an_unread_initialize_still_blocks() {
    let fixture = Fixture::start(&[Fault::AuthLegacyOpen]).await.unwrap();
    for mode in [
        Mode::CutSse,
        Mode::SseComment,
        Mode::SseOtherId,
        Mode::Empty200,
        Mode::Status(408),
    ] {
        let server = front_before(&fixture, (mode, true), handle).await;
        let out = check(&server.url(), true).await;
        drop(server);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(2), "{mode:?}: {report}");
        assert_eq!(report["decision"], "blocked", "{mode:?}");
        assert_eq!(report["regions"][0]["era"], "unknown", "{mode:?}");
        // Exactly the open legacy path, and the era not observed: the front adds nothing.
        let above_info: Vec<(String, String)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] != "info")
            .map(|f| {
                (
                    f["id"].as_str().unwrap().into(),
                    f["severity"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            above_info,
            [
                ("auth.invalid-token-accepted", "critical"),
                ("auth.challenge", "high"),
                ("probe.incomplete", "medium"),
            ]
            .map(|(i, s)| (i.to_string(), s.to_string())),
            "{mode:?}"
        );
        let challenge = finding(&report, "auth.challenge");
        assert_eq!(challenge["severity"], "high", "{mode:?}");
        assert!(
            challenge["evidence"]
                .to_string()
                .contains("initialize served without a token while server/discover requires one"),
            "{mode:?}: {challenge}"
        );
        assert_eq!(
            finding(&report, "auth.invalid-token-accepted")["severity"],
            "critical",
            "{mode:?}"
        );
        assert!(
            !report.to_string().contains("2026-07-28 only"),
            "{mode:?}: {report}"
        );
    }
}
