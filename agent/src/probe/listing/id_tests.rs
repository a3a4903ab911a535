//! Red-team defect 8 (front.py idswap): list answers whose JSON-RPC id is not the request's
//! were read as the list, and the run passed. A result that does not echo its request's id
//! is not an answer to it (transport.post-result-shape, a MUST): the advertised list does
//! not work for a client, which matches answers by id.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::catalog::CheckId;
use crate::egress::EgressClient;
use crate::engine::{Engine, ProbeOptions, State};
use crate::model::{Era, Outcome, Severity};
use crate::probe::verdict::Recorder;
use crate::target::Target;

/// Answers every request with a complete, empty list result carrying id 987654.
async fn id_swapping_server() -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = vec![0u8; 8192];
                loop {
                    let Ok(n) = s.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
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
                    if got.len() < end + 4 + len {
                        continue;
                    }
                    let body = json!({"jsonrpc": "2.0", "id": 987654, "result": {
                        "tools": [], "resources": [], "resourceTemplates": [], "prompts": [],
                        "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}})
                    .to_string();
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = s.write_all(answer.as_bytes()).await;
                    return;
                }
            });
        }
    });
    addr
}

fn loopback_client() -> EgressClient {
    crate::egress::loopback_test_client()
}

#[tokio::test]
async fn a_list_answer_with_another_id_is_not_the_list() {
    let addr = id_swapping_server().await;
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let engine = Engine::new(ProbeOptions::default()).unwrap();
    let client = loopback_client();
    let mut rec = Recorder::default();
    let mut st = State::default();
    let deadline = Instant::now() + Duration::from_secs(60);
    let caps = json!({"tools": {}});
    engine
        .listing_stage(
            &target,
            &client,
            deadline,
            &mut rec,
            &mut st,
            Era::Modern,
            Some(caps),
        )
        .await;
    let results = rec.finish();
    let caps = results
        .iter()
        .find(|c| c.id == CheckId::CapsDiscoverMatchesHandlers)
        .unwrap();
    assert_eq!(
        (caps.outcome, caps.severity),
        (Outcome::Fail, Some(Severity::High)),
        "{}",
        caps.observed
    );
    assert!(
        caps.observed.contains("not the request's id"),
        "{}",
        caps.observed
    );
    for c in &results {
        if c.id == CheckId::ToolsListShape {
            assert_ne!(c.outcome, Outcome::Pass, "{}: {}", c.id, c.observed);
        }
    }
}
