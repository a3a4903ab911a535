//! What the probe's unit tests share: an answer as an exchange would have read it, one
//! `server/discover` exchange with a server on loopback, and one assertion on what a verdict
//! or a recorded check came to ([`expect`]).

use std::net::SocketAddr;
use std::time::Duration;

use http::{HeaderMap, HeaderValue};

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
