//! Red-team nit 8: evidence quoted the client library's error chain ("error sending request
//! for url (…): client error (SendRequest): connection closed before message completed").
//! A connection closed before a response reads as plain words, with cause `reset`.

use tokio::io::AsyncReadExt;

use super::*;
use crate::probe::test_support::discover_at;

#[tokio::test]
async fn a_connection_closed_before_a_response_is_said_plainly() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            // Read the request, then close without a byte of an answer (front.py drop).
            let mut buf = vec![0u8; 8192];
            let _ = s.read(&mut buf).await;
            drop(s);
        }
    });
    let e = discover_at(addr).await.unwrap_err();
    assert_eq!(e.cause, Cause::Reset, "{}", e.message);
    assert!(
        e.message
            .starts_with("the connection was closed before a response"),
        "{}",
        e.message
    );
    for library in [
        "error sending request",
        "SendRequest",
        "client error",
        "http://",
    ] {
        assert!(!e.message.contains(library), "{}", e.message);
    }
}
