//! The listeners' accepted connections carry TCP_NODELAY: without it a small write behind an
//! unacknowledged one waits for the peer's delayed ACK (BENCHMARKS.md, "Multi-region
//! overhead").

use axum::serve::Listener;
use tokio_stream::StreamExt;

use super::*;

async fn listener() -> (TcpListener, SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = l.local_addr().expect("address");
    (l, addr)
}

#[tokio::test]
async fn a_plain_accept_leaves_nodelay_off_so_the_tests_below_can_fail() {
    let (l, addr) = listener().await;
    let _client = TcpStream::connect(addr).await.expect("connect");
    let (accepted, _) = l.accept().await.expect("accept");
    assert!(!accepted.nodelay().expect("nodelay"));
}

#[tokio::test]
async fn the_grpc_listener_sets_nodelay_on_every_connection_it_accepts() {
    let (l, addr) = listener().await;
    let mut incoming = grpc_incoming(l);
    let _client = TcpStream::connect(addr).await.expect("connect");
    let accepted = incoming
        .next()
        .await
        .expect("a connection")
        .expect("accepted");
    assert!(accepted.nodelay().expect("nodelay"));
}

#[tokio::test]
async fn the_http_listeners_set_nodelay_on_every_connection_they_accept() {
    let (l, addr) = listener().await;
    let mut incoming = http_incoming(l);
    let _client = TcpStream::connect(addr).await.expect("connect");
    let (accepted, _) = incoming.accept().await;
    assert!(accepted.nodelay().expect("nodelay"));
}
