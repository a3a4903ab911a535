//! The listing's tests share one loopback server answering each JSON-RPC request with a
//! handler, one run of the listing stage against it, and one assertion on what a rule came
//! to ([`expect`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::catalog::CheckId;
use crate::egress::EgressClient;
use crate::engine::{Engine, ProbeOptions, State};
use crate::model::{CheckResult, Era};
use crate::probe::verdict::Recorder;
use crate::target::Target;

/// What the server answers to one JSON-RPC request: HTTP status and body ("" for none).
pub(crate) type Handler = Arc<dyn Fn(&Value) -> (u16, String) + Send + Sync>;

/// A loopback server answering each request with `handler`, one request per connection.
pub(crate) async fn server(handler: Handler) -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let Some(body) = read_body(&mut s).await else {
                    return;
                };
                let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let (status, body) = handler(&req);
                let ct = if body.is_empty() {
                    String::new()
                } else {
                    "content-type: application/json\r\n".into()
                };
                let answer = format!(
                    "HTTP/1.1 {status} X\r\n{ct}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(answer.as_bytes()).await;
            });
        }
    });
    addr
}

/// One request on `s`: its body, as long as the head's Content-Length says (`None` when the
/// connection ends first).
pub(crate) async fn read_body(s: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        let n = s.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        got.extend_from_slice(&buf[..n]);
        let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if got.len() >= end + 4 + len {
            return Some(got[end + 4..end + 4 + len].to_vec());
        }
    }
}

/// Run the listing stage of a 2026-07-28 server declaring `caps` at `addr`: the checks and
/// whether each list was read whole.
pub(crate) async fn listing(
    addr: std::net::SocketAddr,
    caps: Value,
) -> (Vec<CheckResult>, Vec<bool>) {
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let client = crate::egress::loopback_test_client();
    let (results, st) = listing_stage(&target, &client, Era::Modern, Some(caps)).await;
    let complete = st
        .surface
        .map(|s| s.lists.iter().map(|l| l.complete).collect())
        .unwrap_or_default();
    (results, complete)
}

/// Run the listing stage in `era` against `target` through `client`, given `caps` (what
/// the 2026-07-28 initialize declared, `None` when there was none): the checks recorded and
/// the state the stage left.
pub(crate) async fn listing_stage(
    target: &Target,
    client: &EgressClient,
    era: Era,
    caps: Option<Value>,
) -> (Vec<CheckResult>, State) {
    let engine = Engine::new(ProbeOptions::default()).unwrap();
    let mut rec = Recorder::default();
    let mut st = State::default();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut run = crate::protocol::Run {
        target,
        client,
        deadline,
        rec: &mut rec,
        st: &mut st,
    };
    engine.listing_stage(&mut run, era, caps).await;
    (rec.finish(), st)
}

pub(crate) fn check(results: &[CheckResult], id: CheckId) -> &CheckResult {
    results.iter().find(|c| c.id == id).expect("recorded")
}

pub(crate) use crate::probe::test_support::expect;
