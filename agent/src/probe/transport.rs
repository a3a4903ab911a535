//! The 2026-07-28 transport and header checks. Each request differs from a valid one in one
//! way; each evaluator is a pure function of the exchange (and the era).

use http::Method;
use serde_json::{json, Map, Value};

use super::http::{Body, Exchange, ProbeRequest, Rpc, ABSENT_NAME};
use super::verdict::Verdict;
use crate::catalog::CheckId;
use crate::model::{Cause, Era, Outcome, Severity};

pub const FOREIGN_ORIGIN: &str = "https://vantage-probe.invalid";
pub const UNKNOWN_METHOD: &str = "vantage/__probe_absent__";
pub const BAD_VERSION: &str = "1999-01-01";
/// A version from the future no server can support: `version.unsupported` asks with it too,
/// as a server that refuses only versions older than its own (`requested < MIN`, or a
/// string `>=`) serves a later client as if it spoke 2026-07-28 (red team round 15, defect 12).
pub const FUTURE_VERSION: &str = "2099-12-31";

/// Which request of a probe an exchange answers: the main one (`server/discover` for the
/// header and version probes), the same change on `tools/list` (a guard mounted on the
/// discover route only: red team round 15, defects 6 and 7), or `version.unsupported`'s
/// second version ([`FUTURE_VERSION`], defect 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leg {
    Main,
    ToolsList,
    /// The same change on `tools/call` of the absent tool ([`ABSENT_NAME`]), the request
    /// that does things (fresh eyes round 17, D1 and D2): judged against the same
    /// `tools/call` without the change, whose unknown-tool answer (-32602) shows it was
    /// dispatched.
    ToolsCall,
    FutureVersion,
}

impl Leg {
    /// How the evidence names the request of this leg.
    pub fn label(self) -> &'static str {
        match self {
            Leg::Main => "server/discover",
            Leg::ToolsList => "tools/list",
            Leg::ToolsCall => "tools/call",
            Leg::FutureVersion => FUTURE_VERSION,
        }
    }
}

fn tools_list(id: i64) -> ProbeRequest {
    ProbeRequest::modern("tools/list", id, Map::new())
}

/// `tools/call` of the absent tool ([`ABSENT_NAME`]) with empty arguments: never a real
/// tool, so harmless to ask; a server that dispatches it answers the unknown tool (-32602).
pub fn tools_call_absent(id: i64) -> ProbeRequest {
    ProbeRequest::modern(
        "tools/call",
        id,
        Map::from_iter([
            ("name".to_string(), json!(ABSENT_NAME)),
            ("arguments".to_string(), json!({})),
        ]),
    )
}

/// A request with MCP-Protocol-Version and `_meta`'s protocolVersion both `version`.
fn discover_in(id: i64, version: &str) -> ProbeRequest {
    discover(id)
        .with_header("MCP-Protocol-Version", version)
        .with_params(|p| {
            if let Some(meta) = p.get_mut("_meta").and_then(Value::as_object_mut) {
                meta.insert(
                    "io.modelcontextprotocol/protocolVersion".into(),
                    json!(version),
                );
            }
        })
}

fn discover(id: i64) -> ProbeRequest {
    ProbeRequest::modern("server/discover", id, Map::new())
}

/// The transport checks that send a request of their own, each changed in one way from a
/// valid one. Matches on it are exhaustive: every probe has its request and its evaluator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportProbe {
    Notification,
    Get,
    Delete,
    MissingMethod,
    MethodMismatch,
    MethodCase,
    NameMismatch,
    MissingVersion,
    VersionMismatch,
    VersionUnsupported,
    MetaMissing,
    UnknownMethod,
    Origin,
    Preflight,
}

impl TransportProbe {
    /// The probes of a server that speaks 2026-07-28, in catalogue order.
    pub const MODERN: &'static [TransportProbe] = &[
        TransportProbe::Notification,
        TransportProbe::Get,
        TransportProbe::Delete,
        TransportProbe::MissingMethod,
        TransportProbe::MethodMismatch,
        TransportProbe::MethodCase,
        TransportProbe::NameMismatch,
        TransportProbe::MissingVersion,
        TransportProbe::VersionMismatch,
        TransportProbe::VersionUnsupported,
        TransportProbe::MetaMissing,
        TransportProbe::UnknownMethod,
        TransportProbe::Origin,
        TransportProbe::Preflight,
    ];

    /// The JSON-RPC id of this probe's request: fixed per probe (100 plus its place in
    /// [`Self::MODERN`]), so its answer can be held to it (`jsonrpc.error-body`: an error
    /// MUST echo the request id) and a server's log names the probe.
    pub fn rpc_id(self) -> i64 {
        100 + Self::MODERN.iter().position(|p| *p == self).unwrap_or(0) as i64
    }

    /// The JSON-RPC id of this probe's second request ([`Self::second_request`]): 120 plus
    /// its place in [`Self::MODERN`], clear of the main ids (100-113) and of the Origin
    /// probe sent as `initialize`.
    pub fn second_rpc_id(self) -> i64 {
        self.rpc_id() + 20
    }

    /// The probe's second request on a server that speaks 2026-07-28, if it has one, and
    /// which leg it is: the `Mcp-Method` probes (missing, mismatch, case) and the foreign
    /// Origin also on `tools/list` when tools are advertised (read-only, so safe to ask;
    /// the spec table's own probes use it), a guard that validates on the discover route
    /// only being no guard for the requests that do things; `version.unsupported` also with
    /// [`FUTURE_VERSION`].
    pub fn second_request(self, caps: &Value) -> Option<(Leg, ProbeRequest)> {
        let id = self.second_rpc_id();
        let tools = caps.get("tools").is_some();
        let req = match self {
            TransportProbe::MissingMethod if tools => {
                (Leg::ToolsList, tools_list(id).without_header("Mcp-Method"))
            }
            TransportProbe::MethodMismatch if tools => (
                Leg::ToolsList,
                tools_list(id).with_header("Mcp-Method", "server/discover"),
            ),
            TransportProbe::MethodCase if tools => (
                Leg::ToolsList,
                tools_list(id).with_header("Mcp-Method", "TOOLS/LIST"),
            ),
            TransportProbe::Origin if tools => (
                Leg::ToolsList,
                tools_list(id).with_header("Origin", FOREIGN_ORIGIN),
            ),
            TransportProbe::VersionUnsupported => {
                (Leg::FutureVersion, discover_in(id, FUTURE_VERSION))
            }
            _ => return None,
        };
        Some(req)
    }

    /// The JSON-RPC id of this probe's `tools/call` request ([`Self::call_request`]): 140
    /// plus its place in [`Self::MODERN`].
    pub fn call_rpc_id(self) -> i64 {
        self.rpc_id() + 40
    }

    /// The probe's request on `tools/call` of the absent tool when tools are advertised:
    /// the `Mcp-Method` probes (missing, mismatch, case) and the foreign Origin, as on
    /// `tools/list`; a guard that covers discover and the listing but not the call lets a
    /// foreign page run tools, or a gateway route a call by a header that names another
    /// method (fresh eyes round 17, D1 and D2).
    pub fn call_request(self, caps: &Value) -> Option<(Leg, ProbeRequest)> {
        caps.get("tools")?;
        let call = tools_call_absent(self.call_rpc_id());
        let req = match self {
            TransportProbe::MissingMethod => call.without_header("Mcp-Method"),
            TransportProbe::MethodMismatch => call.with_header("Mcp-Method", "tools/list"),
            TransportProbe::MethodCase => call.with_header("Mcp-Method", "TOOLS/CALL"),
            TransportProbe::Origin => call.with_header("Origin", FOREIGN_ORIGIN),
            _ => return None,
        };
        Some((Leg::ToolsCall, req))
    }

    /// The probe that records `check`, if a transport probe does.
    pub fn of_check(check: CheckId) -> Option<TransportProbe> {
        Self::MODERN.iter().copied().find(|p| p.check() == check)
    }

    /// The check this probe records.
    pub fn check(self) -> CheckId {
        match self {
            TransportProbe::Notification => CheckId::TransportNotification,
            TransportProbe::Get => CheckId::TransportGet,
            TransportProbe::Delete => CheckId::TransportDelete,
            TransportProbe::MissingMethod => CheckId::HeadersMissingMethod,
            TransportProbe::MethodMismatch => CheckId::HeadersMethodMismatch,
            TransportProbe::MethodCase => CheckId::HeadersMethodCase,
            TransportProbe::NameMismatch => CheckId::HeadersNameMismatch,
            TransportProbe::MissingVersion => CheckId::HeadersMissingVersion,
            TransportProbe::VersionMismatch => CheckId::HeadersVersionMismatch,
            TransportProbe::VersionUnsupported => CheckId::VersionUnsupported,
            TransportProbe::MetaMissing => CheckId::MetaMissing,
            TransportProbe::UnknownMethod => CheckId::MethodUnknown,
            TransportProbe::Origin => CheckId::SecurityOrigin,
            TransportProbe::Preflight => CheckId::CorsPreflight,
        }
    }

    /// The probe's request. `Err` means it cannot run on this server (the reason).
    pub fn request(self, rpc_id: i64, caps: &Value) -> Result<ProbeRequest, String> {
        Ok(match self {
            TransportProbe::Notification => ProbeRequest::modern_notification(
                "notifications/cancelled",
                Map::from_iter([("requestId".to_string(), json!(ABSENT_NAME))]),
            ),
            TransportProbe::Get => {
                ProbeRequest::bare(Method::GET, &[("Accept", "text/event-stream")])
            }
            TransportProbe::Delete => ProbeRequest::bare(Method::DELETE, &[]),
            TransportProbe::MissingMethod => discover(rpc_id).without_header("Mcp-Method"),
            TransportProbe::MethodMismatch => {
                discover(rpc_id).with_header("Mcp-Method", "tools/list")
            }
            // Header values are case-sensitive: the method in capitals is another method.
            TransportProbe::MethodCase => {
                discover(rpc_id).with_header("Mcp-Method", "SERVER/DISCOVER")
            }
            TransportProbe::NameMismatch => name_mismatch(rpc_id, caps)?,
            TransportProbe::MissingVersion => {
                discover(rpc_id).without_header("MCP-Protocol-Version")
            }
            // The header says 2026-07-28 (a version the server serves), _meta another.
            TransportProbe::VersionMismatch => discover(rpc_id).with_params(|p| {
                if let Some(meta) = p.get_mut("_meta").and_then(Value::as_object_mut) {
                    meta.insert(
                        "io.modelcontextprotocol/protocolVersion".into(),
                        json!(BAD_VERSION),
                    );
                }
            }),
            TransportProbe::VersionUnsupported => discover_in(rpc_id, BAD_VERSION),
            TransportProbe::MetaMissing => discover(rpc_id).with_params(|p| {
                p.remove("_meta");
            }),
            TransportProbe::UnknownMethod => {
                ProbeRequest::modern(UNKNOWN_METHOD, rpc_id, Map::new())
            }
            TransportProbe::Origin => discover(rpc_id).with_header("Origin", FOREIGN_ORIGIN),
            TransportProbe::Preflight => ProbeRequest::bare(
                Method::OPTIONS,
                &[
                    ("Origin", FOREIGN_ORIGIN),
                    ("Access-Control-Request-Method", "POST"),
                    (
                        "Access-Control-Request-Headers",
                        "content-type, mcp-protocol-version, mcp-method, mcp-name, authorization",
                    ),
                ],
            ),
        })
    }

    /// Evaluate the probe's exchange (of its main request).
    pub fn evaluate(self, ex: &Exchange, era: Era) -> Verdict {
        self.evaluate_on(ex, era, Leg::Main)
    }

    /// Evaluate the exchange of the probe's request on `leg`.
    pub fn evaluate_on(self, ex: &Exchange, era: Era, leg: Leg) -> Verdict {
        match self {
            TransportProbe::Notification => notification(ex),
            TransportProbe::Get => get_or_delete(ex, era, false),
            TransportProbe::Delete => get_or_delete(ex, era, true),
            TransportProbe::MissingMethod
            | TransportProbe::MethodMismatch
            | TransportProbe::NameMismatch
            | TransportProbe::VersionMismatch => expect_error(ex, 400, -32020, Severity::Medium),
            TransportProbe::MethodCase if leg == Leg::ToolsList => {
                method_case(ex, "TOOLS/LIST", "tools/list")
            }
            TransportProbe::MethodCase if leg == Leg::ToolsCall => {
                method_case(ex, "TOOLS/CALL", "tools/call")
            }
            TransportProbe::MethodCase => method_case(ex, "SERVER/DISCOVER", "server/discover"),
            TransportProbe::MissingVersion => missing_version(ex, era),
            TransportProbe::VersionUnsupported if leg == Leg::FutureVersion => {
                version_unsupported(ex, FUTURE_VERSION)
            }
            TransportProbe::VersionUnsupported => version_unsupported(ex, BAD_VERSION),
            TransportProbe::MetaMissing => expect_error(ex, 400, -32602, Severity::Medium),
            TransportProbe::UnknownMethod => unknown_method(ex),
            TransportProbe::Origin => origin(ex),
            TransportProbe::Preflight => cors(ex),
        }
    }
}

/// `tools/call` (or `prompts/get`, `resources/read`) of an absent name with another
/// `Mcp-Name`: the server must advertise one of them for a request to carry `Mcp-Name`.
fn name_mismatch(rpc_id: i64, caps: &Value) -> Result<ProbeRequest, String> {
    let other = "__vantage_probe_other__";
    let (method, key, value, header) = if caps.get("tools").is_some() {
        ("tools/call", "name", json!(ABSENT_NAME), other.to_string())
    } else if caps.get("prompts").is_some() {
        ("prompts/get", "name", json!(ABSENT_NAME), other.to_string())
    } else if caps.get("resources").is_some() {
        let uri = format!("vantage-probe://absent/{ABSENT_NAME}");
        ("resources/read", "uri", json!(uri), format!("{uri}-other"))
    } else {
        return Err(
            "the server advertises no tools, prompts or resources, so no request carries Mcp-Name"
                .into(),
        );
    };
    let mut params = Map::from_iter([(key.to_string(), value)]);
    if method == "tools/call" {
        params.insert("arguments".into(), json!({}));
    }
    Ok(ProbeRequest::modern(method, rpc_id, params).with_header("Mcp-Name", &header))
}

fn is_2xx(ex: &Exchange) -> bool {
    (200..300).contains(&ex.status)
}

/// A 4xx whose body is not a JSON-RPC error (empty, HTML, or other JSON).
pub fn bare_4xx(ex: &Exchange) -> bool {
    (400..500).contains(&ex.status) && !matches!(ex.rpc(), Some(Rpc::Error { .. }))
}

fn notification(ex: &Exchange) -> Verdict {
    let s = ex.summary();
    match ex.status {
        202 if matches!(ex.body, Body::Empty) => Verdict::pass(s),
        202 => Verdict::fail(
            Severity::Medium,
            format!("{s}: a 202 for a notification MUST have an empty body"),
        ),
        200..=299 => Verdict::fail(
            Severity::Medium,
            format!("{s}: an accepted notification MUST be answered 202 with an empty body"),
        ),
        400..=499 => Verdict::pass(format!("{s} (not accepted, which is compliant)")),
        _ => Verdict::fail(Severity::Medium, format!("{s}: expected 202 or a 4xx")),
    }
}

fn get_or_delete(ex: &Exchange, era: Era, delete: bool) -> Verdict {
    let s = ex.summary();
    let verb = if delete { "DELETE" } else { "GET" };
    match ex.status {
        405 => match ex.header("allow") {
            Some(allow) => Verdict::pass(format!("405, Allow: {allow}")),
            None => Verdict::warn(
                Severity::Low,
                format!("{s} without an Allow header (RFC 9110 requires Allow on a 405)"),
            ),
        },
        200 if !delete && ex.is_sse() => match era {
            Era::Dual => Verdict::pass(format!(
                "{s}: the 2025-11-25 GET stream of a dual-era server"
            )),
            _ => Verdict::warn(
                Severity::Low,
                format!("{s}: a server that serves only 2026-07-28 SHOULD answer GET with 405"),
            ),
        },
        200..=299 => Verdict::fail(
            Severity::Medium,
            if delete {
                format!("{s}: DELETE without a session was accepted (nothing can be torn down); expected 405")
            } else {
                format!("{s}: GET answered with a page instead of 405 (a gateway or web server in front of the endpoint?)")
            },
        ),
        // Sent elsewhere (not followed: redirects never are): not served here, but not the
        // 405 a SHOULD asks for; low, as a 4xx refusal (red team round 9, a 301 was medium).
        300..=399 => Verdict::warn(
            Severity::Low,
            format!("{s}: {verb} is redirected instead of answered 405 (a server SHOULD answer {verb} with 405 where it serves no stream)"),
        ),
        400..=499 if era == Era::Dual => Verdict::pass(format!(
            "{s} (refused by the 2025-11-25 path of a dual-era server)"
        )),
        400..=499 => Verdict::warn(
            Severity::Low,
            format!("{s}: a server that serves only 2026-07-28 SHOULD answer {verb} with 405"),
        ),
        _ => Verdict::fail(Severity::Medium, format!("{s}: expected 405")),
    }
}

/// The common shape "this one fault must be refused with status S and JSON-RPC code C".
///
/// A refusal with status S whose body is not a readable JSON-RPC error (empty, text or
/// HTML, JSON cut short, a JSON array wrapping the error, other JSON) is `unknown`, cause
/// `malformed`, never a pass (red team round 18, D4): the rule is the status *and* the
/// code (spec 3.2, 3.3: "400 plus -32020", "400 plus -32602", "400 plus -32022" with its
/// `data`), and the code was not observed. Nor is it a failure: the spec lets an
/// intermediary (a gateway, a WAF) refuse a validation failure with a bare 400 (T note),
/// and from outside its 400 cannot be told from the server's. `jsonrpc.error-body` names
/// it (the low warning of a bare 4xx).
pub fn expect_error(ex: &Exchange, status: u16, code: i64, severity: Severity) -> Verdict {
    let s = ex.summary();
    let got = ex.rpc();
    match (&got, ex.status) {
        (Some(Rpc::Error { code: c, .. }), st) if *c == code && st == status => Verdict::pass(s),
        (None, st) if st == status && bare_4xx(ex) => Verdict::unknown(
            Cause::Malformed,
            format!("{s}: refused with {status}, but the answer could not be read as a JSON-RPC error, so its code (JSON-RPC {code} expected) was not observed: an intermediary's bare {status}, or a server whose refusal no client can read (see jsonrpc.error-body)"),
        ),
        (Some(Rpc::Error { code: c, .. }), _) if pre_final(*c) == Some(code) => Verdict::fail(
            severity,
            format!("{s}: pre-final error code {c}; 2026-07-28 renumbered it to {code}"),
        ),
        (Some(Rpc::Result { .. }), _) if is_2xx(ex) => {
            Verdict::fail(severity, format!("{s}: the request was served; expected {status} with {code}"))
        }
        _ => Verdict::fail(severity, format!("{s}: expected {status} with JSON-RPC {code}")),
    }
}

/// `headers.method-case`: the spec asks for a 400 (values are case-sensitive) and names no
/// code, so any 400 refusal passes; a served request is the fault.
fn method_case(ex: &Exchange, sent: &str, method: &str) -> Verdict {
    if ex.status == 400 {
        return Verdict::pass(format!(
            "{} (Mcp-Method: {sent} is not {method})",
            ex.summary()
        ));
    }
    match expect_error(ex, 400, -32020, Severity::Medium) {
        v if v.outcome == Outcome::Fail && is_2xx(ex) => Verdict::fail(
            Severity::Medium,
            format!(
                "{}: Mcp-Method: {sent} was taken for {method}; header values are case-sensitive, so it MUST be refused with 400",
                ex.summary()
            ),
        ),
        v => v,
    }
}

/// The draft number a final code had before CL minor change 12.
fn pre_final(code: i64) -> Option<i64> {
    match code {
        -32001 => Some(-32020),
        -32003 => Some(-32021),
        -32004 => Some(-32022),
        _ => None,
    }
}

fn missing_version(ex: &Exchange, era: Era) -> Verdict {
    if era != Era::Dual {
        return expect_error(ex, 400, -32020, Severity::Medium);
    }
    // A dual-era server may route a request without the header to its 2025-11-25 path
    // (T §Protocol Version Header). Refusal in any form passes: a 4xx, or a JSON-RPC error
    // from the legacy path (which answers errors with 200). Serving it as modern fails.
    let s = ex.summary();
    match ex.rpc() {
        _ if (400..500).contains(&ex.status) => Verdict::pass(format!("{s} (refused)")),
        Some(Rpc::Error { .. }) => Verdict::pass(format!(
            "{s} (refused by the 2025-11-25 path of a dual-era server)"
        )),
        _ => Verdict::fail(
            Severity::Medium,
            format!("{s}: served without MCP-Protocol-Version"),
        ),
    }
}

fn version_unsupported(ex: &Exchange, requested: &str) -> Verdict {
    let base = expect_error(ex, 400, -32022, Severity::High);
    if base.cause == Some(Cause::Malformed) {
        // No JSON-RPC error, so no `data` either: what a client needs to pick a version.
        return Verdict {
            observed: format!(
                "{}; nor were error.data.supported and error.data.requested",
                base.observed
            ),
            ..base
        };
    }
    if base.outcome != Outcome::Pass {
        return base;
    }
    let Some(Rpc::Error { data, .. }) = ex.rpc() else {
        return base;
    };
    let data = data.unwrap_or(Value::Null);
    let mut problems = Vec::new();
    match data.get("supported").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => {}
        _ if data.get("supportedVersions").is_some() => {
            problems
                .push("error.data names `supportedVersions`; the field is `supported`".to_string());
        }
        _ => problems.push(
            "error.data.supported missing: clients cannot pick a version to retry with".to_string(),
        ),
    }
    if data.get("requested").and_then(Value::as_str) != Some(requested) {
        problems.push(format!("error.data.requested is not \"{requested}\""));
    }
    if problems.is_empty() {
        base
    } else {
        Verdict::fail(
            Severity::Medium,
            format!("{}: {}", ex.summary(), problems.join("; ")),
        )
    }
}

fn unknown_method(ex: &Exchange) -> Verdict {
    let s = ex.summary();
    match (ex.status, ex.rpc_error_code()) {
        (404, Some(-32601)) => match super::error_body::mislabelled_error(ex) {
            // checks.md: "an HTML or empty 404 fails" (rt15 #9).
            Some(media) => Verdict::fail(
                Severity::Medium,
                format!("{s}: the -32601 body is labelled {media}; a client that reads a refusal by its Content-Type sees an HTML or text 404, not MCP: serve it as application/json"),
            ),
            None => Verdict::pass(s),
        },
        (404, _) => Verdict::fail(
            Severity::High,
            format!("{s}: a 404 without a JSON-RPC -32601 body looks like a missing endpoint to a dual-era client"),
        ),
        (_, Some(-32601)) => Verdict::fail(Severity::High, format!("{s}: -32601 MUST come with HTTP 404")),
        _ => Verdict::fail(Severity::High, format!("{s}: expected 404 with JSON-RPC -32601")),
    }
}

fn origin(ex: &Exchange) -> Verdict {
    let s = ex.summary();
    match ex.status {
        403 => Verdict::pass(s),
        400..=499 => Verdict::warn(
            Severity::Low,
            format!("{s}: refused, but a foreign Origin MUST get 403"),
        ),
        200..=299 => Verdict::fail(
            Severity::Medium,
            format!("{s}: a request with Origin {FOREIGN_ORIGIN} was served"),
        ),
        // Sent elsewhere, not served here. 301/302/303 send a browser to GET another page
        // (a login): refused, but not with the 403 the rule asks for. 307/308 keep the method
        // and body: whoever answers there was not asked (redirects are never followed).
        301..=303 => Verdict::warn(
            Severity::Low,
            format!("{s}: redirected away rather than refused; a foreign Origin MUST get 403"),
        ),
        307 | 308 => Verdict::unknown(
            Cause::OtherReason,
            format!("{s}: redirected with its method and body kept, and not followed: whether the server behind it refuses a foreign Origin was not observed"),
        ),
        _ => Verdict::fail(Severity::Medium, format!("{s}: expected 403")),
    }
}

fn cors(ex: &Exchange) -> Verdict {
    let allow_origin = ex.header("access-control-allow-origin");
    let allow_headers = ex.header("access-control-allow-headers").unwrap_or("");
    let expose = ex.header("access-control-expose-headers").unwrap_or("");
    let mut s = format!("OPTIONS answered {}", ex.status);
    match allow_origin {
        None => s.push_str("; no CORS grant for a foreign origin (browser clients on other origins cannot call it)"),
        Some(o) => s.push_str(&format!("; Allow-Origin: {o}; Allow-Headers: {allow_headers}; Expose-Headers: {expose}")),
    }
    if allow_origin.is_some() && !allow_headers.contains('*') {
        let lower = allow_headers.to_ascii_lowercase();
        let missing: Vec<&str> = ["mcp-method", "mcp-protocol-version", "mcp-name"]
            .into_iter()
            .filter(|h| !lower.contains(h))
            .collect();
        if !missing.is_empty() {
            return Verdict::warn(
                Severity::Info,
                format!("{s}; browsers cannot send {}", missing.join(", ")),
            );
        }
    }
    Verdict::pass(s)
}

/// `transport.sse-buffering` over every exchange answered as SSE.
pub fn sse_buffering(exchanges: &[&Exchange]) -> Verdict {
    let sse: Vec<&&Exchange> = exchanges.iter().filter(|e| e.is_sse()).collect();
    if sse.is_empty() {
        return Verdict::skip("no response was an SSE stream");
    }
    let missing = sse
        .iter()
        .filter(|e| e.header("x-accel-buffering") != Some("no"))
        .count();
    let late = sse
        .iter()
        .filter(|e| matches!(&e.body, Body::Sse(b) if b.ended && b.events.is_empty()))
        .count();
    if missing > 0 {
        return Verdict::warn(
            Severity::Info,
            format!("{missing} of {} SSE responses arrived without X-Accel-Buffering: no (nginx consumes that header, so this alone proves nothing)", sse.len()),
        );
    }
    if late > 0 {
        return Verdict::warn(
            Severity::Info,
            format!("{late} SSE responses ended before any event arrived"),
        );
    }
    Verdict::pass(format!(
        "{} SSE responses carried X-Accel-Buffering: no",
        sse.len()
    ))
}

pub use super::error_body::{error_body, seen_outcome, RPC_ERROR_CHECKS};

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
