//! What the probe's unit tests share: an answer as an exchange would have read it, and one
//! `server/discover` exchange with a server on loopback.

use std::net::SocketAddr;
use std::time::Duration;

use http::{HeaderMap, HeaderValue};

use super::http::{exchange, Body, Exchange, ExchangeError, Limits, ProbeRequest, SseRead};

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
