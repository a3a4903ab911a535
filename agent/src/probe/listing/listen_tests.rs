//! Red team round 18, D3: `listen.sse` passed a subscription stream the server ended 100 ms
//! (or 1 s) after its acknowledgement: the probe watched 2 ms and said "the stream was open
//! when its first event arrived". The listing stage now watches the stream for the listen
//! window (`--listen-window`, 250 ms by default) after the acknowledgement, beside the rest
//! of the listing, and says only what it saw. The margins are wide (an end at 50 ms against
//! a 250 ms window, at 300 ms against 2 s): nothing here asserts a time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::catalog::CheckId;
use crate::engine::{Engine, ProbeOptions, State};
use crate::model::{Cause, CheckResult, Era, Outcome, Severity};
use crate::probe::listing::test_server::{check, expect, read_body};
use crate::probe::test_support::serve;
use crate::probe::verdict::Recorder;
use crate::target::Target;

/// What the listen stream does after its acknowledgement.
#[derive(Clone, Copy)]
enum Then {
    /// Ends (the connection closes, no final result) this many ms later.
    EndAfter(u64),
    /// Sends the final result (`resultType: complete`) this many ms later, then ends.
    FinalAfter(u64),
    /// Stays open (a keep-alive comment every 50 ms) until the client goes.
    Open,
    /// Stays open until the bogus-cursor request arrives, then ends.
    EndOnCursor,
}

/// One request on `s`: its JSON-RPC body, or `None`.
async fn read_request(s: &mut TcpStream) -> Option<Value> {
    serde_json::from_slice(&read_body(s).await?).ok()
}

/// A 2026-07-28 server on loopback: tools/list (one page, with a cursor to a second page
/// that is empty, so the bogus-cursor probe runs; an unknown cursor gets -32602), the
/// unadvertised lists -32601, and `subscriptions/listen` acknowledged, then `then`.
async fn server(then: Then) -> std::net::SocketAddr {
    let cursor_seen = Arc::new(Notify::new());
    serve(move |mut s| {
        let cursor_seen = cursor_seen.clone();
        async move {
            let Some(req) = read_request(&mut s).await else {
                return;
            };
            let id = req.get("id").cloned().unwrap_or(Value::Null);
            let method = req.get("method").and_then(Value::as_str).unwrap_or("");
            if method == "subscriptions/listen" {
                listen(s, id, then, &cursor_seen).await;
                return;
            }
            let cursor = req.pointer("/params/cursor").and_then(Value::as_str);
            let (status, body) = match (method, cursor) {
                ("tools/list", None) => (
                    200,
                    json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [], "nextCursor": "p2"}}),
                ),
                ("tools/list", Some("p2")) => {
                    (200, json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}}))
                }
                ("tools/list", Some(_)) => {
                    cursor_seen.notify_one();
                    (
                        200,
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "invalid cursor"}}),
                    )
                }
                _ => (
                    404,
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
                ),
            };
            let body = body.to_string();
            let answer = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(answer.as_bytes()).await;
        }
    })
    .await
    .0
}

async fn listen(mut s: TcpStream, id: Value, then: Then, cursor_seen: &Notify) {
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id},
        "notifications": {"toolsListChanged": true}}});
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    let _ = s
        .write_all(format!("{head}event: message\ndata: {ack}\n\n").as_bytes())
        .await;
    let _ = s.flush().await;
    match then {
        Then::EndAfter(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
        Then::FinalAfter(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            let done = json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
                "_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
            let _ = s
                .write_all(format!("event: message\ndata: {done}\n\n").as_bytes())
                .await;
        }
        Then::Open => loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if s.write_all(b": keepalive\n\n").await.is_err() {
                return;
            }
        },
        Then::EndOnCursor => cursor_seen.notified().await,
    }
    let _ = s.shutdown().await;
}

/// The listing stage of a 2026-07-28 server advertising `tools.listChanged` at `addr`, with
/// `opts`, under a run deadline `run_for` from now: what `listen.sse` came to.
async fn listen_sse(
    addr: std::net::SocketAddr,
    opts: ProbeOptions,
    run_for: Duration,
) -> CheckResult {
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let client = crate::egress::loopback_test_client();
    let engine = Engine::new(opts).unwrap();
    let mut rec = Recorder::default();
    let mut st = State::default();
    let mut run = crate::protocol::Run {
        target: &target,
        client: &client,
        deadline: Instant::now() + run_for,
        rec: &mut rec,
        st: &mut st,
    };
    let caps = json!({"tools": {"listChanged": true}});
    engine
        .listing_stage(&mut run, Era::Modern, Some(caps))
        .await;
    let results = rec.finish();
    let ack = check(&results, CheckId::ListenAckFirst);
    assert_eq!(ack.outcome, Outcome::Pass, "{}", ack.observed);
    check(&results, CheckId::ListenSse).clone()
}

fn window(w: Duration) -> ProbeOptions {
    ProbeOptions {
        listen_window: w,
        ..ProbeOptions::default()
    }
}

const MINUTE: Duration = Duration::from_secs(60);
const FAIL_MEDIUM: (Outcome, Option<Severity>, Option<Cause>) =
    (Outcome::Fail, Some(Severity::Medium), None);

/// A stream the server ends 50 ms after the acknowledgement, inside the default 250 ms
/// window, fails (medium), naming how long it stayed open and that no final result came.
/// Before: a pass, "the stream was open when its first event arrived".
#[tokio::test]
async fn a_stream_ended_inside_the_default_window_fails() {
    let addr = server(Then::EndAfter(50)).await;
    let c = listen_sse(addr, ProbeOptions::default(), MINUTE).await;
    expect(
        "ended at 50 ms",
        &c,
        FAIL_MEDIUM,
        &[
            "ms after its acknowledgement, inside the 250 ms listen window, without a final result",
            "MUST stay open",
        ],
    );
}

/// A final result (a graceful close, SHOULD) 50 ms after the acknowledgement, inside the
/// window: a low warning that names the graceful close, not a failure and not a pass.
/// Before: not seen (the watch was 2 ms), a pass.
#[tokio::test]
async fn a_graceful_close_inside_the_window_warns_low() {
    let addr = server(Then::FinalAfter(50)).await;
    let c = listen_sse(addr, ProbeOptions::default(), MINUTE).await;
    expect(
        "final result at 50 ms",
        &c,
        (Outcome::Warn, Some(Severity::Low), None),
        &[
            "closed with a final result",
            "inside the 250 ms listen window (a graceful close)",
        ],
    );
}

/// A stream still open at the end of the window passes, and the evidence says exactly what
/// was seen: open N ms after the acknowledgement, the window watched, a later end unseen.
#[tokio::test]
async fn a_stream_open_at_the_end_of_the_window_passes_saying_what_was_watched() {
    let addr = server(Then::Open).await;
    let c = listen_sse(addr, ProbeOptions::default(), MINUTE).await;
    expect(
        "open",
        &c,
        (Outcome::Pass, None, None),
        &[
            "open 250 ms after its acknowledgement (the listen window watched; a stream that ends later is not seen)",
        ],
    );
    let ms: u64 = c
        .observed
        .split(": open ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no duration in {}", c.observed));
    assert!(ms >= 250, "watched the whole window: {}", c.observed);
}

/// `--listen-window 2s`: an end 300 ms after the acknowledgement (past the default window)
/// is seen, and fails.
#[tokio::test]
async fn a_longer_window_sees_a_later_end() {
    let addr = server(Then::EndAfter(300)).await;
    let c = listen_sse(addr, window(Duration::from_secs(2)), MINUTE).await;
    expect(
        "ended at 300 ms",
        &c,
        FAIL_MEDIUM,
        &["inside the 2 s listen window, without a final result"],
    );
}

/// A window the check's own deadline cuts short (the listing's deadline, the run's less its
/// reserve) is not observed: `unknown`, the vantage's deadline, naming the flags; never a
/// pass of what was not watched, never the target's fault.
#[tokio::test]
async fn a_window_the_deadline_cuts_is_unknown() {
    let addr = server(Then::Open).await;
    let c = listen_sse(
        addr,
        window(Duration::from_secs(20)),
        Duration::from_millis(1500),
    )
    .await;
    expect(
        "cut",
        &c,
        (Outcome::Unknown, None, Some(Cause::Deadline)),
        &[
            "when this check's deadline stopped the watch, short of the 20 s listen window",
            "was not observed",
            "--listen-window",
        ],
    );
}

/// The watch runs beside the rest of the listing, the bogus-cursor probe (asked after the
/// lists are read) included: the server ends the stream when that probe arrives, and a 20 s
/// window sees the end. A watch that held the rest of the listing back would reach the end
/// of its window first, and pass.
#[tokio::test]
async fn the_watch_runs_beside_the_rest_of_the_listing() {
    let addr = server(Then::EndOnCursor).await;
    let c = listen_sse(addr, window(Duration::from_secs(20)), MINUTE).await;
    expect(
        "ended on the cursor probe",
        &c,
        FAIL_MEDIUM,
        &["inside the 20 s listen window, without a final result"],
    );
}
