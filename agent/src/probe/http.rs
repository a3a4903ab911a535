//! One HTTP exchange with the target: a request (see `request`) sent without following
//! redirects, its response read under byte caps and classified.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use http::HeaderMap;
use serde_json::Value;

use super::http_error::first_byte_timeout;
pub use super::http_error::{classify_reqwest, io_cause};
use super::observed;
pub use super::request::{ProbeRequest, ABSENT_NAME, LEGACY_VERSION, MODERN_VERSION};
use super::sse::{SseEvent, SseParser};
use crate::credentials::Pieces;
use crate::egress::{Connection, EgressClient, EgressError};
use crate::model::Cause;

/// Byte caps for everything read from the target.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A whole response body (JSON, text, or all of an SSE stream).
    pub body_bytes: usize,
    /// One SSE line.
    pub sse_line_bytes: usize,
    /// SSE events read before giving up on the matching response.
    pub sse_events: usize,
    /// Bytes of a non-JSON body kept for the report.
    pub excerpt_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            body_bytes: 256 * 1024,
            sse_line_bytes: 64 * 1024,
            sse_events: 256,
            excerpt_bytes: 160,
        }
    }
}

/// A response body, as far as it was read.
#[derive(Debug, Clone)]
pub enum Body {
    Empty,
    /// An SSE stream whose body was deliberately not read (only the status mattered).
    Unread,
    Json(Value),
    Sse(SseBody),
    /// Something else; an excerpt is kept.
    Other {
        excerpt: String,
        len: usize,
        invalid_json: bool,
    },
}

/// What was read of an SSE response.
#[derive(Debug, Clone, Default)]
pub struct SseBody {
    pub events: Vec<SseEvent>,
    /// The server closed the stream.
    pub ended: bool,
    /// The read stopped at a cap (named).
    pub capped: Option<&'static str>,
    /// The read stopped at the check's deadline.
    pub timed_out: bool,
    /// Milliseconds from the request to the first complete event.
    pub first_event_ms: Option<u64>,
    /// Milliseconds the stream was read after its first event (until it ended, the answer
    /// came, or the read stopped); `None` without a first event.
    pub watched_ms: Option<u64>,
}

/// A JSON-RPC message found in a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Rpc {
    Result {
        id: Value,
        result: Value,
    },
    Error {
        id: Value,
        code: i64,
        message: String,
        data: Option<Value>,
    },
}

/// One observed response.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub status: u16,
    pub headers: HeaderMap,
    /// The media type of `Content-Type`, lowercased, without parameters.
    pub content_type: Option<String>,
    pub body: Body,
    pub elapsed_ms: u64,
    pub first_byte_ms: u64,
    /// A cap that was hit while reading (named), or `None`.
    pub capped: Option<&'static str>,
}

impl Exchange {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Every value of header `name`, in order (those that are not text left out).
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect()
    }

    /// The JSON-RPC response in the body: the JSON object, or the SSE event that is a response
    /// (has an id and a result or an error).
    pub fn rpc(&self) -> Option<Rpc> {
        match &self.body {
            Body::Json(v) => parse_rpc(v),
            Body::Sse(sse) => sse
                .events
                .iter()
                .filter_map(|e| e.json.as_ref())
                .find_map(parse_rpc),
            _ => None,
        }
    }

    /// The id of a JSON-RPC *result* in the body when it does not echo `id`, the request's:
    /// such a result is not an answer to the request (a response MUST carry its request's
    /// id). An error may carry `null` when the request's id could not be read, so only
    /// results are held to it.
    pub fn result_id_mismatch(&self, id: &Value) -> Option<Value> {
        match self.rpc() {
            Some(Rpc::Result { id: got, .. }) if &got != id => Some(got),
            _ => None,
        }
    }

    pub fn rpc_error_code(&self) -> Option<i64> {
        match self.rpc() {
            Some(Rpc::Error { code, .. }) => Some(code),
            _ => None,
        }
    }

    /// The content coding of the body when it is not identity (`gzip`, `br`, …): such a
    /// body was not decoded, so it was not observed (`probe::reason`).
    pub fn encoding(&self) -> Option<&str> {
        self.header("content-encoding")
            .map(str::trim)
            .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"))
    }

    pub fn is_sse(&self) -> bool {
        self.content_type.as_deref() == Some("text/event-stream")
    }

    /// A short description: `400 application/json -32020 "Header mismatch…"`.
    pub fn summary(&self) -> String {
        let mut s = self.status.to_string();
        if let Some(ct) = &self.content_type {
            s.push(' ');
            s.push_str(ct);
        }
        match (self.rpc(), &self.body) {
            (Some(Rpc::Error { code, message, .. }), _) => {
                s.push_str(&format!(
                    " JSON-RPC error {code} \"{}\"",
                    clip(&message, 80)
                ));
            }
            (Some(Rpc::Result { .. }), _) => s.push_str(" JSON-RPC result"),
            (None, Body::Empty) => s.push_str(" (empty body)"),
            (None, Body::Unread) => s.push_str(" (stream not read)"),
            (None, Body::Other { excerpt, .. }) => {
                s.push_str(&format!(" body \"{}\"", clip(excerpt, 60)));
            }
            (None, Body::Json(_)) => s.push_str(" (JSON, not JSON-RPC)"),
            (None, Body::Sse(sse)) => s.push_str(&format!(" ({} SSE events)", sse.events.len())),
        }
        if let Some(cap) = self.capped {
            s.push_str(&format!(" [read stopped at the {cap} cap]"));
        }
        s
    }
}

/// Whether a response's id is the request's: the same JSON value, numbers compared as
/// numbers (an id written `1.0` or `1e0` is the request's `1`: the SDK clients correlate it,
/// JavaScript's `Number` and Python's `1 == 1.0` alike).
pub fn same_id(got: &Value, asked: &Value) -> bool {
    match (got, asked) {
        (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
        _ => got == asked,
    }
}

pub fn parse_rpc(v: &Value) -> Option<Rpc> {
    let obj = v.as_object()?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return None;
    }
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    if let Some(err) = obj.get("error").and_then(Value::as_object) {
        // JSON-RPC 2.0: "Either the result member or error member MUST be included, but both
        // members MUST NOT be included"; clients disagree on which wins, so such a message
        // is neither a refusal nor a result (rt15 #15). (`"result": null` beside an error
        // says nothing else and is read as the error.)
        if obj.get("result").is_some_and(|r| !r.is_null()) {
            return None;
        }
        let code = err.get("code").and_then(Value::as_i64)?;
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return Some(Rpc::Error {
            id,
            code,
            message,
            data: err.get("data").cloned(),
        });
    }
    obj.get("result").map(|r| Rpc::Result {
        id,
        result: r.clone(),
    })
}

/// Shorten for a report line, on a character boundary, with control characters as visible
/// escapes ([`observed::clean`]).
pub fn clip(s: &str, max: usize) -> String {
    observed::clean(s, max)
}

/// Why an exchange produced no response.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ExchangeError {
    pub cause: Cause,
    pub message: String,
}

/// How to read an SSE body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseRead {
    /// Until the JSON-RPC response with the request's id arrives.
    UntilResponse,
    /// Do not read the stream at all (only the status and headers matter).
    HeadersOnly,
    /// Until the first event.
    FirstEvent,
    /// Until the first event, then a watch of its own ([`Watch`]) to see whether the stream
    /// ends inside it (`subscriptions/listen`: the stream stays open). Events in that time
    /// are kept (a final result for the request ends the read at once); an open stream is
    /// then left.
    FirstEventThenEnd(Watch),
}

/// How long [`SseRead::FirstEventThenEnd`] watches the stream after its first event: the
/// listen window (`--listen-window`), and no later than `by` (the check's own deadline: a
/// window longer than what is left of the run is cut there, and says so). After the first
/// event the watch is bounded by these, not by the exchange's `--check-timeout` (that wait
/// is for an answer, and the answer came).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    pub window: Duration,
    pub by: Instant,
}

/// The listen window when none is given (`vantage check --listen-window`,
/// `vantage-agent --listen-window`, the coordinator's in-process vantage): long enough that
/// a handler that writes the acknowledgement, works a little and returns (a serverless
/// stream) is seen ending; the watch runs beside the rest of the listing, so it adds to a
/// check only what the other probes do not already take (BENCHMARKS.md section 3). A server
/// that ends the stream later than the window is not seen doing it, and the pass says so.
pub const LISTEN_WINDOW: Duration = Duration::from_millis(250);

impl From<EgressError> for ExchangeError {
    fn from(e: EgressError) -> Self {
        ExchangeError {
            cause: e.cause(),
            message: e.to_string(),
        }
    }
}

/// Send `req` to `url` and read the response under `limits`, within `budget`; the answer
/// and the address that answered. The egress policy decides first: a refused URL or address
/// is an error with cause `policy-refused`, and nothing is sent to it.
pub async fn exchange(
    client: &EgressClient,
    url: &url::Url,
    req: &ProbeRequest,
    limits: &Limits,
    budget: Duration,
    sse: SseRead,
) -> Result<(Exchange, Option<SocketAddr>), ExchangeError> {
    let start = Instant::now();
    let deadline = start + budget;
    // A request that asks for its connection to be closed (the second reading of a list)
    // also gets a connection of its own: `Connection: close` alone would still let the pool
    // hand it a connection another request left open.
    let own_connection = req
        .headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("connection") && v.eq_ignore_ascii_case("close"));
    let connection = if own_connection {
        Connection::Own
    } else {
        Connection::Pooled
    };
    let mut builder = client.request(req.method.clone(), url, connection)?;
    for (k, v) in &req.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    if let Some(body) = &req.body {
        builder = builder.body(body.to_string());
    }
    if let Some(token) = &req.bearer {
        let token = secrecy::ExposeSecret::expose_secret(token);
        // A token that cannot go in a header fails here, on this side: the vantage's own
        // fault, never the target's (red team round 15, defect 3).
        if let Some(what) = crate::credentials::header_problem(token) {
            return Err(unsendable(&format!(
                "the token contains {what}, which cannot be sent in an HTTP header"
            )));
        }
        // reqwest marks the header sensitive, so it never appears in its Debug output.
        builder = builder.bearer_auth(token);
    }
    let response = match tokio::time::timeout(budget, builder.send()).await {
        Err(_) => return Err(first_byte_timeout(budget)),
        // Anything else the client could not build (a header value): nothing was sent.
        Ok(Err(e)) if e.is_builder() => {
            return Err(unsendable("a header or the URL could not be encoded"))
        }
        Ok(Err(e)) => return Err(classify_reqwest(&e, budget)),
        Ok(Ok(r)) => r,
    };
    let peer = response.remote_addr();
    // Not a byte of an answer from an address the policy refuses is read.
    client.admit_peer(peer)?;
    let first_byte_ms = ms(start.elapsed());
    let status = response.status().as_u16();
    let pieces = client.pieces();
    let headers = scrub_headers(response.headers(), &pieces);
    // Every redirect is noted, whichever request got it (`redirect.none` judges them all).
    client.note_redirect(url, req.label(), status, &headers);
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    let mut ex = Exchange {
        status,
        headers,
        content_type,
        body: Body::Empty,
        elapsed_ms: first_byte_ms,
        first_byte_ms,
        capped: None,
    };
    if ex.is_sse() {
        if sse == SseRead::HeadersOnly || ex.encoding().is_some() {
            ex.body = Body::Unread;
        } else {
            let id = req.rpc_id().cloned();
            let mut body = read_sse(response, limits, deadline, start, sse, id.as_ref()).await;
            for e in &mut body.events {
                sanitize_event(e, &pieces);
            }
            ex.capped = body.capped;
            let events = body.events.len();
            let timed_out = body.timed_out;
            ex.body = Body::Sse(body);
            // A stream the clock ended before its response is not an answer (as a JSON body
            // cut by the clock): never judge it as "answered without a response".
            if sse == SseRead::UntilResponse
                && timed_out
                && ex.capped.is_none()
                && ex.rpc().is_none()
            {
                return Err(ExchangeError {
                    cause: Cause::Timeout,
                    message: format!(
                        "the headers arrived ({}) but the event stream stayed open without a response within {} ({events} events)",
                        head_line(&ex),
                        fmt_wait(budget),
                    ),
                });
            }
        }
    } else {
        let declared = ex.header("content-length").map(|l| clip(l, 20));
        let (bytes, capped, end) = read_body(response, limits.body_bytes, deadline).await;
        ex.capped = capped;
        // A body the connection or the clock cut short is not the body: never judge it (as
        // "not MCP", say); say what happened.
        let cut = match end {
            BodyEnd::CutShort => Some((
                Cause::Reset,
                format!(
                    "body cut short: the headers arrived ({}{}) but the connection ended after {} bytes of the body",
                    head_line(&ex),
                    declared
                        .map(|l| format!(", Content-Length {l}"))
                        .unwrap_or_default(),
                    bytes.len()
                ),
            )),
            BodyEnd::TimedOut => Some((
                Cause::Timeout,
                format!(
                    "body: the headers arrived ({}) but the body did not finish within {} ({} bytes read)",
                    head_line(&ex),
                    fmt_wait(budget),
                    bytes.len()
                ),
            )),
            BodyEnd::Complete => None,
        };
        if let Some((cause, message)) = cut {
            return Err(ExchangeError { cause, message });
        }
        // Scrubbed raw, before anything decodes or clips it: a token cut by a later clip
        // would leave most of itself behind.
        let bytes = pieces.scrub_bytes(&bytes);
        ex.body = match ex.encoding() {
            // Never parsed (nor quoted) as if plain.
            Some(coding) if !bytes.is_empty() => Body::Other {
                excerpt: format!(
                    "({} bytes in Content-Encoding {}, not decoded)",
                    bytes.len(),
                    clip(coding, 20)
                ),
                len: bytes.len(),
                invalid_json: false,
            },
            _ => classify_body(&bytes, ex.content_type.as_deref(), limits, capped.is_some()),
        };
        if ex.capped.is_none() && matches!(ex.body, Body::Other { .. }) && too_deep(&bytes) {
            ex.capped = Some(JSON_DEPTH_CAP);
        }
        if let Body::Json(v) = &mut ex.body {
            observed::sanitize_json_with(v, &pieces);
        }
    }
    ex.elapsed_ms = ms(start.elapsed());
    Ok((ex, peer))
}

/// A request this vantage could not build (`why`, which never quotes a secret): its own
/// error, with nothing sent.
fn unsendable(why: &str) -> ExchangeError {
    ExchangeError {
        cause: Cause::Unsendable,
        message: format!(
            "this vantage could not build the request ({why}); nothing was sent, so the target was not observed"
        ),
    }
}

/// What arrived of an answer whose body did not: its status and content type.
fn head_line(ex: &Exchange) -> String {
    format!(
        "{} {}",
        ex.status,
        ex.content_type
            .as_deref()
            .unwrap_or("without a content type")
    )
}

/// The response's headers as captured: a value that carries a piece of a secret is stored
/// scrubbed.
fn scrub_headers(headers: &HeaderMap, pieces: &Pieces) -> HeaderMap {
    let mut out = headers.clone();
    if pieces.is_empty() {
        return out;
    }
    for v in out.values_mut() {
        let bytes = v.as_bytes();
        if pieces.carried_by(bytes) {
            let scrubbed = pieces.scrub_bytes(bytes);
            *v = http::HeaderValue::from_bytes(&scrubbed)
                .unwrap_or_else(|_| http::HeaderValue::from_static("[redacted]"));
        }
    }
    out
}

/// An SSE event as captured: secrets scrubbed, unsafe characters escaped.
fn sanitize_event(e: &mut SseEvent, pieces: &Pieces) {
    let fix = |s: &str| observed::clean(&pieces.scrub(s), usize::MAX);
    e.event = e.event.as_deref().map(fix);
    e.id = e.id.as_deref().map(fix);
    e.data = fix(&e.data);
    if let Some(v) = &mut e.json {
        observed::sanitize_json_with(v, pieces);
    }
}

/// The JSON parser's own bound, as "the … cap" names it: serde_json stops at 128 levels of
/// nesting (which keeps hostile depth cheap), while valid JSON has no such limit and other
/// clients parse deeper.
pub const JSON_DEPTH_CAP: &str = "JSON parser's 128-level nesting";

/// Whether `bytes` failed to parse only because they nest deeper than the parser goes: the
/// vantage's bound, so the answer was not seen whole (rt15 #13), never "not JSON-RPC".
fn too_deep(bytes: &[u8]) -> bool {
    // As `classify_body` parsed it (serde_json skips ignored values without a depth bound),
    // asked again only for a body that did not parse.
    serde_json::from_slice::<Value>(bytes)
        .is_err_and(|e| e.to_string().starts_with("recursion limit exceeded"))
}

/// Classify a body read in full (or up to a cap): empty, JSON (serde_json's nesting limit
/// bounds hostile depth), or an excerpt of something else.
pub fn classify_body(bytes: &[u8], ct: Option<&str>, limits: &Limits, capped: bool) -> Body {
    if bytes.is_empty() {
        return Body::Empty;
    }
    let jsonish = ct.is_some_and(|c| c == "application/json" || c.ends_with("+json"));
    if !capped {
        // serde_json stops at 128 levels of nesting, so hostile depth costs nothing.
        if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
            return Body::Json(v);
        }
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(limits.excerpt_bytes * 4)]);
    Body::Other {
        excerpt: clip(&text, limits.excerpt_bytes),
        len: bytes.len(),
        invalid_json: jsonish,
    }
}

/// Why the next chunk of a body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkError {
    /// The connection failed (reset, closed early, broken framing): the target's doing.
    Broken,
    /// The HTTP client's own bound on the body's framing (named) stopped the read: the
    /// vantage's cap, no evidence about the target.
    Cap(&'static str),
}

/// Where body bytes come from: a response, or chunks given in a test or the fuzzer.
pub trait Chunks: Send {
    /// The next chunk; `Ok(None)` at the end of the body.
    fn next_chunk(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<bytes::Bytes>, ChunkError>> + Send;
}

impl Chunks for reqwest::Response {
    async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, ChunkError> {
        self.chunk()
            .await
            .map_err(|e| match super::http_error::client_body_cap(&e) {
                Some(cap) => ChunkError::Cap(cap),
                None => ChunkError::Broken,
            })
    }
}

/// Chunks from memory, in order.
impl Chunks for std::collections::VecDeque<bytes::Bytes> {
    async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, ChunkError> {
        Ok(self.pop_front())
    }
}

/// How a body read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyEnd {
    /// The body ended (or the read stopped at a cap: the size cap, or the client's own
    /// bound on chunk extensions or trailers).
    Complete,
    /// The deadline stopped the read.
    TimedOut,
    /// The connection failed before the body ended (reset, or closed short of its
    /// Content-Length).
    CutShort,
}

/// Read a body up to `cap` bytes; returns the bytes, the cap hit (if any) and whether the
/// deadline stopped the read. (A body cut short reads as ended: see [`read_body`].)
pub async fn read_capped(
    response: impl Chunks,
    cap: usize,
    deadline: Instant,
) -> (Vec<u8>, Option<&'static str>, bool) {
    let (buf, capped, end) = read_body(response, cap, deadline).await;
    (buf, capped, end == BodyEnd::TimedOut)
}

/// Read a body up to `cap` bytes; returns the bytes, the cap hit (if any) and how the read
/// ended.
pub async fn read_body(
    mut response: impl Chunks,
    cap: usize,
    deadline: Instant,
) -> (Vec<u8>, Option<&'static str>, BodyEnd) {
    let mut buf = Vec::new();
    // A declared Content-Length is never trusted for allocation: bytes are taken as they
    // arrive, and the read stops at the cap.
    loop {
        let now = Instant::now();
        if now >= deadline {
            return (buf, None, BodyEnd::TimedOut);
        }
        match tokio::time::timeout(deadline - now, response.next_chunk()).await {
            Err(_) => return (buf, None, BodyEnd::TimedOut),
            // The client's own framing bound stopped the read: as the size cap, the body
            // was not seen whole (and the target did not end it).
            Ok(Err(ChunkError::Cap(cap))) => return (buf, Some(cap), BodyEnd::Complete),
            Ok(Err(ChunkError::Broken)) => return (buf, None, BodyEnd::CutShort),
            Ok(Ok(None)) => return (buf, None, BodyEnd::Complete),
            Ok(Ok(Some(chunk))) => {
                let room = cap - buf.len();
                if chunk.len() > room {
                    buf.extend_from_slice(&chunk[..room]);
                    return (buf, Some("body size"), BodyEnd::Complete);
                }
                buf.extend_from_slice(&chunk);
            }
        }
    }
}

/// Read an SSE body under `limits`: until the response with `id` (or the first event), the
/// end of the stream, a cap, or the deadline.
pub async fn read_sse(
    mut response: impl Chunks,
    limits: &Limits,
    deadline: Instant,
    start: Instant,
    mode: SseRead,
    id: Option<&Value>,
) -> SseBody {
    let mut parser = SseParser::new(limits.sse_line_bytes);
    let mut out = SseBody::default();
    let mut total = 0usize;
    // After the first event in [`SseRead::FirstEventThenEnd`]: when the window ends, and
    // when the watch stops (the window's end, or the check's deadline before it). Stopping
    // at the window's end is no timeout; stopping short of it is (`timed_out`).
    let mut watch: Option<(Instant, Instant)> = None;
    let stop = |out: &mut SseBody, watch: Option<(Instant, Instant)>| {
        out.timed_out = watch.is_none_or(|(window_end, until)| until < window_end);
    };
    loop {
        let now = Instant::now();
        let until = watch.map_or(deadline, |(_, until)| until);
        if now >= until {
            stop(&mut out, watch);
            note_watched(&mut out, start);
            return out;
        }
        let chunk = match tokio::time::timeout(until - now, response.next_chunk()).await {
            Err(_) => {
                stop(&mut out, watch);
                note_watched(&mut out, start);
                return out;
            }
            Ok(Err(ChunkError::Cap(cap))) => {
                out.capped = Some(cap);
                return out;
            }
            Ok(Err(ChunkError::Broken)) | Ok(Ok(None)) => {
                out.ended = true;
                out.events.extend(parser.finish());
                note_watched(&mut out, start);
                return out;
            }
            Ok(Ok(Some(chunk))) => chunk,
        };
        total += chunk.len();
        if total > limits.body_bytes {
            out.capped = Some("stream size");
            return out;
        }
        let events = match parser.feed(&chunk) {
            Ok(events) => events,
            Err(cap) => {
                out.capped = Some(cap);
                return out;
            }
        };
        for event in events {
            out.first_event_ms
                .get_or_insert_with(|| ms(start.elapsed()));
            let is_answer = match (&event.json, id) {
                (Some(v), Some(id)) => {
                    v.get("id").is_some_and(|got| same_id(got, id))
                        && (v.get("result").is_some() || v.get("error").is_some())
                }
                _ => false,
            };
            out.events.push(event);
            if mode == SseRead::FirstEvent || is_answer {
                note_watched(&mut out, start);
                return out;
            }
            if let SseRead::FirstEventThenEnd(w) = mode {
                watch.get_or_insert_with(|| {
                    let window_end = Instant::now() + w.window;
                    (window_end, window_end.min(w.by))
                });
            }
            if out.events.len() >= limits.sse_events {
                out.capped = Some("SSE event count");
                return out;
            }
        }
    }
}

/// `watched_ms`: how long the stream was read after its first event (none before it).
fn note_watched(out: &mut SseBody, start: Instant) {
    if let Some(first) = out.first_event_ms {
        out.watched_ms = Some(ms(start.elapsed()).saturating_sub(first));
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

pub fn fmt_ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// A wait as people say it: `5 s`, `1.5 s`, `800 ms`.
pub fn fmt_wait(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
#[path = "secret_tests.rs"]
mod secret_tests;

#[cfg(test)]
#[path = "encoding_tests.rs"]
mod encoding_tests;

#[cfg(test)]
#[path = "sse_wait_tests.rs"]
mod sse_wait_tests;

#[cfg(test)]
#[path = "words_tests.rs"]
mod words_tests;
