//! Red-team defect 7: a compressed answer was parsed as if plain (era legacy, gzip bytes
//! quoted as evidence). Every request asks for `Accept-Encoding: identity`; an answer in
//! another coding is kept undecoded, never parsed, and is no observation of its body.

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::*;
use crate::probe::reason::{another_reason, Subject};
use crate::probe::test_support::{discover_at, read_head, serve};

/// A loopback server answering each request with `answer`, reporting each request's head.
async fn server(answer: Vec<u8>) -> (std::net::SocketAddr, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (addr, _) = serve(move |mut s| {
        let (tx, answer) = (tx.clone(), answer.clone());
        async move {
            if let Some(head) = read_head(&mut s).await {
                let _ = tx.send(head.to_ascii_lowercase());
                let _ = s.write_all(&answer).await;
            }
        }
    })
    .await;
    (addr, rx)
}

#[tokio::test]
async fn identity_is_asked_for_and_an_encoded_body_is_not_observed() {
    // A valid discover result, as gzip bytes would carry it: what matters is that it is
    // never read as JSON while it is labelled gzip.
    let body = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}"#;
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(body);
    let (addr, mut heads) = server(answer).await;
    let ex = discover_at(addr).await.unwrap();
    let head = heads.recv().await.unwrap();
    assert!(
        head.contains("\r\naccept-encoding: identity"),
        "the request asks for identity: {head}"
    );
    assert_eq!(ex.encoding(), Some("gzip"));
    assert!(ex.rpc().is_none(), "an encoded body is never parsed");
    assert!(
        ex.summary().contains("Content-Encoding gzip, not decoded"),
        "{}",
        ex.summary()
    );
    for subject in [Subject::Discover, Subject::Rule] {
        let o = another_reason(&ex, subject, false).expect("not an observation");
        assert_eq!(o.cause, Cause::OtherReason);
        assert!(o.head.contains("Content-Encoding gzip"), "{}", o.head);
    }
    // The era stage reads it as another reason, never "not MCP" nor "legacy".
    assert!(super::super::era::other_reason(&ex).is_some());
    // A token probe is judged on its status alone.
    assert!(another_reason(&ex, Subject::Token, false).is_none());
}
