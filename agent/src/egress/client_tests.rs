//! The egress client end to end on loopback: what it refuses sends nothing, a pinned name
//! needs no lookup and is still checked, and every answer names the address it came from.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use url::Url;

use super::*;
use crate::job::Policy;
use crate::model::Cause;
use crate::probe::http::{exchange, ExchangeError, Limits, ProbeRequest, SseRead};
use crate::probe::test_support::serve;

fn policy(allow: &[&str]) -> EgressPolicy {
    EgressPolicy::new(&Policy {
        assume_global: Vec::new(),
        allow_non_global: allow.iter().map(|p| p.parse().unwrap()).collect(),
    })
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// A loopback listener that answers every request `200 ok` and counts the connections it
/// accepts. It keeps a connection alive until a request asks for `Connection: close`.
async fn listener() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    serve(|mut s| async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let close = String::from_utf8_lossy(&buf[..n])
                .to_ascii_lowercase()
                .contains("connection: close");
            let head = if close { "Connection: close\r\n" } else { "" };
            let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n{head}\r\nok");
            if s.write_all(answer.as_bytes()).await.is_err() || close {
                break;
            }
        }
    })
    .await
}

fn client(policy: EgressPolicy, pinned: Vec<(String, Vec<IpAddr>)>) -> EgressClient {
    super::test_client(policy, pinned)
}

/// GET `url` through `c` (with `Connection: close` when `close`): the address that answered.
async fn get(
    c: &EgressClient,
    url: &str,
    close: bool,
) -> Result<Option<SocketAddr>, ExchangeError> {
    let mut req = ProbeRequest::bare(http::Method::GET, &[]);
    if close {
        req.headers.push(("Connection".into(), "close".into()));
    }
    let url = Url::parse(url).unwrap();
    let budget = std::time::Duration::from_secs(3);
    exchange(
        c,
        &url,
        &req,
        &Limits::default(),
        budget,
        SseRead::HeadersOnly,
    )
    .await
    .map(|(_, peer)| peer)
}

#[tokio::test]
async fn the_client_connects_only_where_the_policy_admits() {
    let (addr, count) = listener().await;
    let port = addr.port();
    // Refused literals in either spelling: nothing is sent, the cause says why.
    let closed = client(policy(&[]), Vec::new());
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
    ] {
        let e = get(&closed, &url, false).await.unwrap_err();
        assert_eq!(e.cause, Cause::PolicyRefused, "{url}: {}", e.message);
        assert!(e.message.contains("is loopback"), "{}", e.message);
    }
    // A pinned name is used without a lookup, and its addresses are checked all the same.
    let pinned = vec![("pinned.test".to_string(), vec![ip("127.0.0.1")])];
    let e = get(
        &client(policy(&[]), pinned.clone()),
        &format!("http://pinned.test:{port}/"),
        false,
    )
    .await
    .unwrap_err();
    assert_eq!(e.cause, Cause::PolicyRefused, "{}", e.message);
    assert_eq!(
        count.load(Ordering::SeqCst),
        0,
        "nothing reached the listener"
    );
    let open = client(policy(&["127.0.0.1/32"]), pinned);
    let peer = get(&open, &format!("http://pinned.test:{port}/"), false)
        .await
        .unwrap();
    assert_eq!(peer, Some(addr), "the answer names its address");
    assert_eq!(
        get(&open, &format!("http://127.0.0.1:{port}/"), false)
            .await
            .unwrap(),
        Some(addr)
    );
    assert_eq!(count.load(Ordering::SeqCst), 2);
    // The peer of an answer is checked again: an address the policy refuses never passes.
    assert!(closed.admit_peer(Some(addr)).is_err());
    assert!(open.admit_peer(Some(addr)).is_ok());
}

/// A request that asks for `Connection: close` (the second reading of a list) gets a
/// connection of its own, even when the pool holds an idle one another request left open:
/// otherwise `tools.no-per-connection-variance` could pass without a second connection.
#[tokio::test]
async fn a_request_that_closes_its_connection_never_rides_on_a_pooled_one() {
    let (addr, accepted) = listener().await;
    let c = EgressClient::new(
        policy(&["127.0.0.0/8"]),
        ClientSettings {
            tls: crate::probe::tls::client_config(None).unwrap(),
            connect_timeout: std::time::Duration::from_secs(2),
            resolver: crate::probe::dns::ResolverChoice {
                nameservers: vec!["127.0.0.1:9".parse().unwrap()],
            },
            pinned: Vec::new(),
            idle_per_host: 8,
        },
    )
    .unwrap();
    let url = format!("http://{addr}/mcp");
    let send = |close: bool| get(&c, &url, close);
    // Two kept-alive requests share one connection, left idle in the pool.
    send(false).await.unwrap();
    send(false).await.unwrap();
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "keep-alive reuses the pooled connection"
    );
    // Each closing request connects afresh, although an idle connection is in the pool.
    send(true).await.unwrap();
    send(true).await.unwrap();
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        3,
        "every request that closes its connection opened one of its own"
    );
}
