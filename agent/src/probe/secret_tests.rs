//! Red team round 15, defects 2 and 3, at the exchange: a secret value of the target URL's
//! query, echoed back by the server (a `Location` keeping the query, another header, a
//! JSON-RPC error message), is scrubbed at capture like a token; a request this vantage
//! cannot build (a token with a newline inside) is its own error, with nothing sent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;

use super::*;
use crate::credentials::Credentials;
use crate::probe::test_support::{read_head, serve};
use crate::target::Target;

/// A loopback server that answers every request with `answer(request head)`, counting the
/// connections it accepted.
async fn echo_server(answer: fn(&str) -> Vec<u8>) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    serve(move |mut s| async move {
        if let Some(head) = read_head(&mut s).await {
            let _ = s.write_all(&answer(&head)).await;
        }
    })
    .await
}

/// The request line's query, as the server received it.
fn query_of(head: &str) -> String {
    let line = head.lines().next().unwrap_or("");
    let target = line.split(' ').nth(1).unwrap_or("");
    target
        .split_once('?')
        .map(|(_, q)| q.to_string())
        .unwrap_or_default()
}

const KEY: &str = "QQapikeyVALUE1";
const PAT: &str = "QQ/patVALUE2";

/// Every run of 8 characters of the two values, and the percent-encoded `/`.
fn pieces() -> Vec<String> {
    let mut out = Vec::new();
    for v in [KEY, PAT, "QQ%2FpatVALUE2"] {
        for i in 0..=v.len() - 8 {
            out.push(v[i..i + 8].to_string());
        }
    }
    out
}

#[tokio::test]
async fn a_query_secret_echoed_in_location_a_header_and_a_body_is_scrubbed_at_capture() {
    let (addr, _) = echo_server(|head| {
        let q = query_of(head);
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601,
            "message": format!("Method not found path=/mcp?{q} decoded={}", q.replace("%2F", "/"))}})
        .to_string();
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.2:1/moved?{q}&leak={}\r\nx-echo: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            url::form_urlencoded::byte_serialize(q.as_bytes()).collect::<String>(),
            q.replace("%2F", "/"),
            body.len()
        )
        .into_bytes()
    })
    .await;
    let target = Target::parse(&format!(
        "http://{addr}/mcp?api_key={KEY}&pat=QQ%2FpatVALUE2&v=1"
    ))
    .unwrap();
    let also = target
        .query_secrets()
        .into_iter()
        .map(secrecy::SecretString::from)
        .collect();
    let client = crate::egress::loopback_test_client().with_secrets(
        Credentials::default(),
        also,
        crate::credentials::public_text(&target.url).to_string(),
    );
    let req = ProbeRequest::modern("tools/list", 1, Default::default());
    let (ex, _) = exchange(
        &client,
        &target.url,
        &req,
        &Limits::default(),
        std::time::Duration::from_secs(30),
        SseRead::UntilResponse,
    )
    .await
    .unwrap();
    let location = ex.header("location").unwrap().to_string();
    let echo = ex.header("x-echo").unwrap().to_string();
    let Some(Rpc::Error { message, .. }) = ex.rpc() else {
        panic!("no JSON-RPC error: {:?}", ex.body);
    };
    for text in [&location, &echo, &message] {
        for p in pieces() {
            assert!(!text.contains(&p), "{p:?} in {text}");
        }
        assert!(text.contains("[redacted]"), "{text}");
    }
    // What is not secret stays as sent.
    assert!(
        location
            .starts_with("http://127.0.0.2:1/moved?api_key=[redacted]&pat=[redacted]&v=1&leak="),
        "{location}"
    );
}

#[tokio::test]
async fn a_token_that_cannot_go_in_a_header_is_the_vantages_error_and_nothing_is_sent() {
    let (addr, accepted) = echo_server(|_| {
        b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec()
    })
    .await;
    let url = url::Url::parse(&format!("http://{addr}/mcp")).unwrap();
    let client = crate::egress::loopback_test_client();
    for (token, what) in [
        ("SeCrEtPiece1234\nSECONDhalf98765", "a newline"),
        ("SeCrEtPiece1234\u{1}SECONDhalf98765", "a control character"),
    ] {
        let bearer = secrecy::SecretString::from(token.to_string());
        let req = ProbeRequest::modern("server/discover", 1, Default::default())
            .with_bearer(Some(&bearer));
        let e = exchange(
            &client,
            &url,
            &req,
            &Limits::default(),
            std::time::Duration::from_secs(30),
            SseRead::UntilResponse,
        )
        .await
        .unwrap_err();
        assert_eq!(e.cause, Cause::Unsendable, "{}", e.message);
        assert!(e.cause.is_vantage_side());
        assert!(
            e.message.starts_with(&format!(
                "this vantage could not build the request (the token contains {what}"
            )),
            "{}",
            e.message
        );
        assert!(!e.message.contains("SeCrEt") && !e.message.contains("SECOND"));
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "nothing was sent");
}

/// `era.detect` on a discover this vantage could not build: `unknown` with the cause, never
/// the high "No MCP protocol answers" failure.
#[test]
fn an_unbuildable_discover_leaves_the_era_unknown() {
    let e = ExchangeError {
        cause: Cause::Unsendable,
        message: "this vantage could not build the request (the token contains a newline, which cannot be sent in an HTTP header); nothing was sent, so the target was not observed".into(),
    };
    for init in [
        Err(&e),
        Ok(&crate::probe::test_support::json_answer(
            401,
            serde_json::json!({}),
        )),
    ] {
        let d = crate::probe::era::discover_unanswered(&e, init);
        assert_eq!(
            (d.era.outcome, d.era.severity, d.era.cause),
            (
                crate::model::Outcome::Unknown,
                None,
                Some(Cause::Unsendable)
            ),
            "{}",
            d.era.observed
        );
        assert!(d.shape.is_none());
    }
}
