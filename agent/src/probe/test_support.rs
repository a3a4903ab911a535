//! What the probe's unit tests share: an answer as an exchange would have read it, one
//! `server/discover` exchange with a server on loopback, and one assertion on what a verdict
//! or a recorded check came to ([`expect`]).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

use super::http::{exchange, Body, Exchange, ExchangeError, Limits, ProbeRequest, SseRead};
use super::verdict::Verdict;
use crate::model::{Cause, CheckResult, Outcome, Severity};

/// An answer: `status`, content type `ct`, `body` and `headers`, its first byte and its end
/// after 1 ms, nothing capped.
pub(crate) fn answer_with(
    status: u16,
    ct: Option<&str>,
    body: Body,
    headers: &[(&'static str, &str)],
) -> Exchange {
    let mut h = HeaderMap::new();
    for (k, v) in headers {
        h.insert(*k, HeaderValue::from_str(v).expect("a header value"));
    }
    Exchange {
        status,
        headers: h,
        content_type: ct.map(str::to_string),
        body,
        elapsed_ms: 1,
        first_byte_ms: 1,
        capped: None,
    }
}

/// A JSON answer: `status`, `application/json`, `body`, no header.
pub(crate) fn json_answer(status: u16, body: serde_json::Value) -> Exchange {
    answer_with(status, Some("application/json"), Body::Json(body), &[])
}

/// An HTML page (`<html>`): `status`, `text/html`, no header.
pub(crate) fn html_answer(status: u16) -> Exchange {
    answer_with(
        status,
        Some("text/html"),
        Body::Other {
            excerpt: "<html>".into(),
            len: 6,
            invalid_json: false,
        },
        &[],
    )
}

/// One modern `server/discover` to `http://{addr}/mcp` through the loopback test client,
/// with the default limits, 30 s, read until the response.
pub(crate) async fn discover_at(addr: SocketAddr) -> Result<Exchange, ExchangeError> {
    discover_within(addr, Duration::from_secs(30)).await
}

/// [`discover_at`] within `budget`.
pub(crate) async fn discover_within(
    addr: SocketAddr,
    budget: Duration,
) -> Result<Exchange, ExchangeError> {
    let client = crate::egress::loopback_test_client();
    let url = url::Url::parse(&format!("http://{addr}/mcp")).expect("a loopback URL");
    let req = ProbeRequest::modern("server/discover", 1, Default::default());
    exchange(
        &client,
        &url,
        &req,
        &Limits::default(),
        budget,
        SseRead::UntilResponse,
    )
    .await
    .map(|(ex, _)| ex)
}

/// What a rule came to (outcome, severity, cause) and its evidence: a verdict, or a check as
/// recorded.
pub(crate) trait Judged {
    fn came_to(&self) -> ((Outcome, Option<Severity>, Option<Cause>), &str);
}

impl Judged for Verdict {
    fn came_to(&self) -> ((Outcome, Option<Severity>, Option<Cause>), &str) {
        ((self.outcome, self.severity, self.cause), &self.observed)
    }
}

impl Judged for CheckResult {
    fn came_to(&self) -> ((Outcome, Option<Severity>, Option<Cause>), &str) {
        ((self.outcome, self.severity, self.cause), &self.observed)
    }
}

/// Assert that `v` came to `want` (outcome, severity, cause) with evidence holding every one
/// of `needles`; `what` names the case in a failure, with the evidence.
#[track_caller]
pub(crate) fn expect(
    what: impl std::fmt::Display,
    v: &impl Judged,
    want: (Outcome, Option<Severity>, Option<Cause>),
    needles: &[&str],
) {
    let (got, observed) = v.came_to();
    assert_eq!(got, want, "{what}: {observed}");
    for n in needles {
        assert!(observed.contains(n), "{what}: {n:?} is not in: {observed}");
    }
}

/// A loopback listener that runs `conn` on every connection it accepts, each on a task of
/// its own; its address, and the count of the connections it accepted.
pub(crate) async fn serve<F, Fut>(conn: F) -> (SocketAddr, Arc<AtomicUsize>)
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(conn(s));
        }
    });
    (addr, accepted)
}

/// `s` read up to the end of a request head: the head (lossy UTF-8, without its blank
/// line), or None when the connection ended or failed first.
pub(crate) async fn read_head(s: &mut TcpStream) -> Option<String> {
    let mut buf = vec![0u8; 8192];
    let mut got = Vec::new();
    while let Ok(n) = s.read(&mut buf).await {
        if n == 0 {
            return None;
        }
        got.extend_from_slice(&buf[..n]);
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(String::from_utf8_lossy(&got[..end]).to_string());
        }
    }
    None
}
