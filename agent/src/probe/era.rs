//! Era detection (2026-07-28, 2025-11-25, the 2024-11-05 HTTP+SSE transport) and the shape
//! of the `server/discover` result. The evaluators are pure functions of what was observed.

use serde_json::Value;

use super::http::{clip, Body, Exchange, ExchangeError, Rpc, MODERN_VERSION};
use super::reason::{self, Subject};
use super::verdict::Verdict;
use crate::model::{Cause, Era, Severity};

/// JSON-RPC codes that only a 2026-07-28 server sends (spec section 1: recognised modern
/// errors). The pre-final -32001/-32003/-32004 are deliberately absent.
pub const MODERN_CODES: [i64; 3] = [-32020, -32021, -32022];

/// Whether a response proves a modern server even though the request failed.
pub fn modern_signal(ex: &Exchange) -> bool {
    match ex.rpc_error_code() {
        Some(code) if ex.status == 400 || ex.status == 404 => {
            MODERN_CODES.contains(&code) || (ex.status == 404 && code == -32601)
        }
        _ => false,
    }
}

/// The JSON-RPC id of the era probe's `server/discover`.
pub const DISCOVER_ID: i64 = 1;
/// The JSON-RPC id of the era probe's legacy `initialize`.
pub const INITIALIZE_ID: i64 = 2;

/// Whether a JSON-RPC result answers the request sent with `id`: a result whose id is
/// another one answers no request of this vantage's, so it tells no era (`checks.md` 4.1).
fn echoes(got: &Value, id: i64) -> bool {
    super::http::same_id(got, &Value::from(id))
}

/// Whether a `server/discover` result is one: it names the versions the server supports (the
/// field that tells the era: spec section 5, "200 with `supportedVersions` → modern"), or it
/// carries another field only a DiscoverResult has (`capabilities`, `resultType`, `ttlMs`,
/// `cacheScope`): a discover answer that lacks a required field is still the server's answer
/// to `server/discover`, and `discover.shape` judges what it lacks (a dual-era server is not
/// "legacy only" for a malformed discover). A result with none of them (`{}`, the answer of a
/// JSON-RPC echo to any method) tells no era.
fn names_versions(result: &Value) -> bool {
    let versions = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(Value::is_string));
    versions
        || ["capabilities", "resultType", "ttlMs", "cacheScope"]
            .iter()
            .any(|k| result.get(*k).is_some())
}

/// Whether `server/discover` worked: 2xx and a JSON-RPC result that echoes its id and is a
/// DiscoverResult (it names the supported versions, or another of its fields).
pub fn discover_works(ex: &Exchange) -> bool {
    (200..300).contains(&ex.status)
        && matches!(ex.rpc(), Some(Rpc::Result { id, result })
            if echoes(&id, DISCOVER_ID) && names_versions(&result))
}

/// Whether `initialize` worked: 2xx and a result that echoes its id and carries
/// `protocolVersion`.
pub fn initialize_works(ex: &Exchange) -> bool {
    (200..300).contains(&ex.status)
        && matches!(ex.rpc(), Some(Rpc::Result { id, result })
            if echoes(&id, INITIALIZE_ID) && names_protocol(&result))
}

/// Why an answer that carries a JSON-RPC result still does not work (for the `not MCP`
/// verdict): its id is not the request's, or it lacks `field`, the one that tells the era
/// (`supportedVersions` for discover, `protocolVersion` for initialize).
fn tells_no_era(
    ex: &Exchange,
    id: i64,
    field: &str,
    names: impl Fn(&Value) -> bool,
) -> Option<String> {
    match ex.rpc() {
        Some(Rpc::Result { id: got, .. }) if !echoes(&got, id) => Some(format!(
            "its JSON-RPC result has id {got}, not the request's {id}, so it answers no request of this vantage's"
        )),
        Some(Rpc::Result { result, .. }) if !names(&result) => Some(format!(
            "its JSON-RPC result carries no {field}, so it tells no era"
        )),
        _ => None,
    }
}

/// Whether an `initialize` result names its protocol version.
fn names_protocol(result: &Value) -> bool {
    result.get("protocolVersion").is_some()
}

/// Whether a GET answered with the 2024-11-05 transport's `endpoint` event.
pub fn http_sse_endpoint(ex: &Exchange) -> bool {
    matches!(&ex.body, Body::Sse(sse) if sse.events.first().is_some_and(|e| e.event.as_deref() == Some("endpoint")))
}

/// Why a request was answered for another reason than MCP's: a rate limit (429), a server
/// or gateway that is unavailable (502, 503, 504), or a refusal in front of the MCP layer
/// (403), as [`reason::another_reason`] decides for discovery. Such an answer says nothing
/// about whether the endpoint speaks MCP (`checks.md` 4.1): the era is unknown, not "not
/// MCP".
pub fn other_reason(ex: &Exchange) -> Option<String> {
    let o = reason::another_reason(ex, Subject::Discover, false)?;
    Some(format!(
        "{}. Whether the endpoint speaks MCP was not observed; {}",
        o.head, o.advice
    ))
}

/// An answer the vantage stopped reading at one of its own read caps (the body size, an SSE
/// line, the SSE event count) before a JSON-RPC response could be read from it, where the
/// body decides (the status alone, a 401 or an answer for another reason, does not need
/// it): it was not observed whole, so it is no answer to judge the era on (`checks.md` 4.1),
/// never "does not work". `subject`: which request it answered.
pub fn cut_by_cap(ex: &Exchange, subject: Subject) -> Option<ExchangeError> {
    let cap = ex.capped?;
    if ex.rpc().is_some()
        || ex.status == 401
        || reason::another_reason(ex, subject, false).is_some()
    {
        return None;
    }
    Some(ExchangeError {
        cause: Cause::SizeCap,
        message: format!(
            "answered {}, but this vantage stopped reading at its own {cap} cap before a JSON-RPC response, so the answer was not seen whole",
            ex.summary()
        ),
    })
}

/// What the legacy `initialize` beside `server/discover` got when its answer is a 2xx that
/// carries no JSON-RPC response to it: the request was not refused (a 2xx is no refusal, and
/// a modern-only server refuses `initialize` with an error), and no answer to it was read
/// whole, so whether the 2025-11-25 path works was not observed (`checks.md` 4.1). Never
/// "modern (2026-07-28 only)" (red team round 18, D1: an answer cut after its headers, an
/// event stream that ended with no event, with only a comment or with a response for another
/// id, or an empty 200 made a dual-era server "modern only", and its legacy path went
/// unprobed).
///
/// An event stream that ended without the response (it may have been cut: a reset and a
/// close read alike) is never an answer. A whole 2xx body that holds no response to
/// `initialize` (empty, not JSON-RPC, a response for another id, a result without
/// `protocolVersion`) is no refusal either, but it is the server's whole answer: with
/// `modern` (discover showed 2026-07-28) it leaves the legacy path unknown; without it, the
/// era rules judge it (such an endpoint that answers neither request is "not MCP").
/// A JSON-RPC error for the request (a refusal given with a 2xx) is left to the era rules.
pub fn initialize_unread(ex: &Exchange, modern: bool) -> Option<reason::Other> {
    if !(200..300).contains(&ex.status) || initialize_works(ex) || ex.capped.is_some() {
        return None;
    }
    let asked = Value::from(INITIALIZE_ID);
    let ours = |rpc: &Rpc| match rpc {
        Rpc::Result { id, .. } => super::http::same_id(id, &asked),
        Rpc::Error { id, .. } => id.is_null() || super::http::same_id(id, &asked),
    };
    let responses: Vec<Rpc> = match &ex.body {
        Body::Json(v) => super::http::parse_rpc(v).into_iter().collect(),
        Body::Sse(sse) => sse
            .events
            .iter()
            .filter_map(|e| e.json.as_ref())
            .filter_map(super::http::parse_rpc)
            .collect(),
        _ => Vec::new(),
    };
    let mine = responses.iter().find(|r| ours(r));
    if matches!(mine, Some(Rpc::Error { .. })) {
        return None;
    }
    let other_id = responses.iter().find(|r| !ours(r)).map(|r| match r {
        Rpc::Result { id, .. } | Rpc::Error { id, .. } => id.to_string(),
    });
    let seen = ex.summary();
    let head = match (&ex.body, mine, other_id) {
        (Body::Sse(sse), None, other) => {
            let what = match (sse.events.len(), other) {
                (0, _) => "ended with no event (a comment is no event)".to_string(),
                (_, Some(id)) => format!(
                    "ended with no response to initialize (id {INITIALIZE_ID}): the one it carried has id {id}, so it answers no request of this vantage's"
                ),
                (n, None) => format!(
                    "ended after {n} events, none a JSON-RPC response to initialize (id {INITIALIZE_ID})"
                ),
            };
            format!(
                "not read whole: answered {seen}, but the event stream {what}; a stream cut short reads the same"
            )
        }
        (Body::Unread, ..) => format!("not read: answered {seen}"),
        _ if !modern => return None,
        (Body::Empty, ..) => format!("answered {seen}: a 2xx with no response to initialize"),
        (_, Some(_), _) => format!(
            "answered {seen}, a result without protocolVersion: initialize was accepted, not refused, but its answer tells no era"
        ),
        (_, None, Some(id)) => format!(
            "answered {seen} with id {id}, not the request's {INITIALIZE_ID}: no response to initialize"
        ),
        (_, None, None) => format!(
            "answered {seen}: a 2xx that is no JSON-RPC response to initialize"
        ),
    };
    Some(reason::Other {
        cause: Cause::Malformed,
        head,
        advice: "a 2xx without a response to initialize is no refusal of 2025-11-25: check the server and any proxy in front of it (an answer or stream cut short, a proxy that answers for the server), then check again",
    })
}

/// A `server/discover` answered 2xx with no response to it that could be read: an event
/// stream that ended with no event (or only comments), or whose responses all carry another
/// id, an empty body, or a JSON-RPC response for another id. That is no answer (red team
/// round 18, D9: it made a dual-era server "legacy: only initialize works"); beside a
/// working `initialize` (the caller asks only then) the era is not judged on it (`checks.md`
/// 4.1), as for a discover cut or never answered. Without one, and for a page or JSON that
/// is no JSON-RPC at all, the era rules judge the answer ("not MCP").
pub fn discover_unread(ex: &Exchange) -> Option<ExchangeError> {
    if !(200..300).contains(&ex.status) || discover_works(ex) || ex.capped.is_some() {
        return None;
    }
    let asked = Value::from(DISCOVER_ID);
    let ours = |rpc: &Rpc| match rpc {
        Rpc::Result { id, .. } => super::http::same_id(id, &asked),
        Rpc::Error { id, .. } => id.is_null() || super::http::same_id(id, &asked),
    };
    let what = match &ex.body {
        Body::Empty => "a 2xx with no body".to_string(),
        Body::Sse(sse) => {
            let rpcs: Vec<Rpc> = sse
                .events
                .iter()
                .filter_map(|e| e.json.as_ref())
                .filter_map(super::http::parse_rpc)
                .collect();
            if rpcs.iter().any(ours) {
                return None;
            }
            match (sse.events.len(), rpcs.first()) {
                (0, _) => "an event stream that ended with no event (a comment is no event)".to_string(),
                (_, Some(Rpc::Result { id, .. } | Rpc::Error { id, .. })) => format!(
                    "an event stream whose response has id {id}, not server/discover's ({DISCOVER_ID})"
                ),
                (n, None) => format!(
                    "an event stream that ended after {n} events, none a JSON-RPC response to server/discover"
                ),
            }
        }
        Body::Json(v) => match super::http::parse_rpc(v) {
            Some(r) if !ours(&r) => match r {
                Rpc::Result { id, .. } | Rpc::Error { id, .. } => format!(
                    "a JSON-RPC response with id {id}, not server/discover's ({DISCOVER_ID})"
                ),
            },
            _ => return None,
        },
        _ => return None,
    };
    Some(ExchangeError {
        cause: Cause::Malformed,
        message: format!(
            "answered {}: {what}, so no response to server/discover was read",
            ex.summary()
        ),
    })
}

/// Whether an exchange error is one of the vantage's own bounds (its per-exchange timeout,
/// a read cap, a request it could not build) rather than something the target did: no evidence either way.
fn vantage_bound(cause: Cause) -> bool {
    matches!(cause, Cause::Timeout | Cause::SizeCap | Cause::Unsendable)
}

/// What a `server/discover` that got no HTTP answer leaves: `era.detect`, `discover.shape`
/// when the failure is the target's own, and whether the checks after it are `unknown`
/// (with this cause and reason) or skipped.
#[derive(Debug, Clone)]
pub struct DiscoverUnanswered {
    pub era: Verdict,
    pub shape: Option<Verdict>,
    pub rest: Option<(Cause, String)>,
}

/// `server/discover` got no HTTP answer (`err`); `initialize` went beside it. A working
/// `initialize` proves the endpoint speaks MCP, so it is never "not MCP": whether it also
/// speaks 2026-07-28 was not observed (`unknown`), and a discover answered with what is no
/// HTTP answer (garbage) fails `discover.shape`; one whose exchange broke (a reset, a refused
/// or unreachable connection: a proxy on either side may have cut it, and the next
/// connection may not) is no evidence about the shape either: `unknown` with the rest (red
/// team round 12, item 1: it was a high "got no answer" failure with the fix "Return a
/// DiscoverResult"). A timeout or a read cap is the vantage's own
/// bound running out: no evidence either way (`checks.md` 4.1 (c), 4), so `era.detect` is
/// `unknown` for it whatever `initialize` got. Only a discover the target broke with no
/// working `initialize` beside it keeps the high failure.
pub fn discover_unanswered(
    err: &ExchangeError,
    initialize: Result<&Exchange, &ExchangeError>,
) -> DiscoverUnanswered {
    let o = reason::unanswered(err);
    let init = match initialize {
        Ok(i) => i.summary(),
        Err(e) => format!("not answered ({})", e.message),
    };
    let rest = Some((
        err.cause,
        format!(
            "not run: server/discover was {}, so the era is not known",
            o.head
        ),
    ));
    if initialize.is_ok_and(initialize_works) {
        // A connection cut, or a 2xx with no response in it (`discover_unread`): a proxy on
        // either side may have done it, so `discover.shape` fails nothing (unknown).
        let broke = matches!(
            err.cause,
            Cause::Reset | Cause::Refused | Cause::Unreachable | Cause::Malformed
        );
        let shape = (!vantage_bound(err.cause) && !broke).then(|| {
            Verdict::fail(
                Severity::High,
                format!("server/discover got no answer: {}", err.message),
            )
            .cause(err.cause)
        });
        return DiscoverUnanswered {
            era: Verdict::unknown(
                err.cause,
                format!(
                    "the server speaks MCP: initialize (2025-11-25) works ({init}), but server/discover was {}, so whether it also speaks 2026-07-28 was not observed; {}",
                    o.head, o.advice
                ),
            ),
            shape,
            rest,
        };
    }
    if vantage_bound(err.cause) {
        let bound = match err.cause {
            Cause::Timeout => "a complete answer within this vantage's per-exchange timeout",
            Cause::Unsendable => "sent: this vantage could not build the request",
            _ => "an answer this vantage read whole (it stops at its own read caps)",
        };
        return DiscoverUnanswered {
            era: Verdict::unknown(
                err.cause,
                format!(
                    "server/discover: {}; initialize: {init}. No MCP request got {bound}, which is no evidence either way of whether the endpoint speaks MCP; {}",
                    err.message, o.advice
                ),
            ),
            shape: None,
            rest,
        };
    }
    DiscoverUnanswered {
        era: Verdict::fail(Severity::High, format!("server/discover: {}", err.message))
            .cause(err.cause),
        shape: None,
        rest: None,
    }
}

/// Classify the era from the discover and initialize exchanges (and the GET fallback).
pub fn classify(
    discover: Option<&Exchange>,
    initialize: Option<&Exchange>,
    get: Option<&Exchange>,
) -> Era {
    let modern = discover.is_some_and(|d| discover_works(d) || modern_signal(d));
    let legacy = initialize.is_some_and(initialize_works);
    match (modern, legacy) {
        (true, true) => Era::Dual,
        (true, false) => Era::Modern,
        (false, true) => Era::Legacy,
        (false, false) if get.is_some_and(http_sse_endpoint) => Era::HttpSse,
        (false, false) => Era::NotMcp,
    }
}

/// The `era.detect` verdict.
pub fn era_verdict(
    era: Era,
    discover: Option<&Exchange>,
    initialize: Option<&Exchange>,
) -> Verdict {
    let d = discover
        .map(Exchange::summary)
        .unwrap_or_else(|| "no answer".into());
    let i = initialize
        .map(Exchange::summary)
        .unwrap_or_else(|| "no answer".into());
    let seen = format!("server/discover: {d}; initialize: {i}");
    // A 2026 error code proves the server speaks 2026-07-28, but a refused discover is not
    // one that works (2.4: dual means both work): the era is known, the modern path broken.
    let refused = discover.is_some_and(|d| !discover_works(d));
    match era {
        Era::Modern | Era::Dual if refused => Verdict::fail(
            Severity::Medium,
            format!(
                "{}, but server/discover itself was refused: the server answers with a 2026-07-28 error code, so the modern path is broken between this vantage and it (a gateway that strips or rewrites the MCP request headers looks like this; discover.shape and the header checks say which). {seen}",
                if era == Era::Dual {
                    "dual-era signals (initialize works)"
                } else {
                    "modern signals"
                }
            ),
        ),
        Era::Modern => Verdict::pass(format!("modern (2026-07-28 only). {seen}")),
        Era::Dual => Verdict::pass(format!("dual-era (2026-07-28 and 2025-11-25). {seen}")),
        Era::Legacy => Verdict::fail(
            Severity::Medium,
            format!("legacy: only initialize (2025-11-25 or older) works. {seen}"),
        ),
        Era::HttpSse => Verdict::fail(
            Severity::Medium,
            format!("http-sse: only the deprecated 2024-11-05 HTTP+SSE transport answers. {seen}"),
        ),
        Era::NotMcp | Era::Unknown => {
            let why: Vec<String> = [
                discover.and_then(|d| tells_no_era(d, DISCOVER_ID, "supportedVersions", names_versions)).map(|w| format!("server/discover: {w}")),
                initialize.and_then(|i| tells_no_era(i, INITIALIZE_ID, "protocolVersion", names_protocol)).map(|w| format!("initialize: {w}")),
            ]
            .into_iter()
            .flatten()
            .collect();
            let why = if why.is_empty() { String::new() } else { format!(" ({})", why.join("; ")) };
            Verdict::fail(
                Severity::High,
                format!("not MCP: neither server/discover nor initialize works{why}. {seen}"),
            )
        }
    }
}

/// The `discover.shape` verdict on a `server/discover` exchange sent with id `id`.
pub fn discover_shape(ex: &Exchange, id: &Value) -> Verdict {
    let mut high = Vec::new();
    let mut medium = Vec::new();
    let mut low = Vec::new();
    if ex.status != 200 {
        high.push(format!("status {} (expected 200)", ex.status));
    }
    match ex.content_type.as_deref() {
        Some("application/json") | Some("text/event-stream") => {}
        other => high.push(format!(
            "Content-Type {} (expected application/json or text/event-stream)",
            other.unwrap_or("absent")
        )),
    }
    match ex.rpc() {
        None => high.push("no JSON-RPC response in the body".into()),
        Some(Rpc::Error { code, message, .. }) => {
            high.push(format!("JSON-RPC error {code} \"{}\"", clip(&message, 80)))
        }
        Some(Rpc::Result { id: got, result }) => {
            if !super::http::same_id(&got, id) {
                high.push(format!(
                    "response id {got} does not echo the request id {id}"
                ));
            }
            // discover.implemented: `resultType:"complete"`. `input_required` MUST NOT
            // appear outside tools/call, prompts/get and resources/read (mrtr.allowed-methods),
            // and a type the client does not know leaves it no result to use.
            match result.get("resultType") {
                Some(Value::String(t)) if t == "complete" => {}
                Some(Value::String(t)) if t == "input_required" => high.push(
                    "resultType \"input_required\": server/discover MUST be answered with a complete result (input_required is allowed only on tools/call, prompts/get and resources/read)".into(),
                ),
                Some(other) => high.push(format!(
                    "resultType {} is not \"complete\" (the only result server/discover may give)",
                    clip(&other.to_string(), 60)
                )),
                None => high.push("result.resultType missing".into()),
            }
            match result.get("supportedVersions").and_then(Value::as_array) {
                Some(v) if v.iter().any(|x| x.as_str() == Some(MODERN_VERSION)) => {}
                Some(v) if !v.is_empty() => high.push(format!(
                    "supportedVersions {} lacks {MODERN_VERSION}",
                    Value::Array(v.clone())
                )),
                _ => high.push("supportedVersions missing or empty".into()),
            }
            if !result.get("capabilities").is_some_and(Value::is_object) {
                high.push("capabilities missing".into());
            }
            if let Some(why) = ttl_ms_problem(result.get("ttlMs")) {
                medium.push(why);
            }
            match result.get("cacheScope").and_then(Value::as_str) {
                Some("public") | Some("private") => {}
                Some(other) => medium.push(format!(
                    "cacheScope \"{other}\" is neither public nor private"
                )),
                None => medium.push("cacheScope missing".into()),
            }
            let info = result
                .get("_meta")
                .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"));
            if info.is_none() {
                if result.get("serverInfo").is_some() {
                    low.push("serverInfo at the top level (the pre-final shape); final moved it to _meta[\"io.modelcontextprotocol/serverInfo\"]".to_string());
                } else {
                    low.push(
                        "no _meta[\"io.modelcontextprotocol/serverInfo\"] (SHOULD)".to_string(),
                    );
                }
            }
        }
    }
    if !high.is_empty() {
        high.extend(medium);
        Verdict::fail(Severity::High, high.join("; "))
    } else if !medium.is_empty() {
        Verdict::fail(Severity::Medium, medium.join("; "))
    } else if !low.is_empty() {
        Verdict::warn(Severity::Low, low.join("; "))
    } else {
        Verdict::pass(format!("{}: {}", ex.summary(), fields_seen(ex)))
    }
}

/// Why the `ttlMs` of a cacheable result (`server/discover`, a list page) is not the
/// "integer >= 0" the spec asks for, or `None` when it is; one rule for `discover.shape` and
/// `cache.hints`. An integer is JSON Schema's (`"type": "integer"`: a number whose value has
/// no fractional part, however it is written), so:
/// - `60000`, `6e4`, `6E+4` and `60000.0` are the integer 60000, and pass;
/// - a number beyond 2^64 - 1 (`18446744073709551616`, `1e20`), which the JSON parser reads
///   as a float, is an integer all the same (a cache that long is the server's choice, not a
///   wrong type), and passes; so does `-0` (zero);
/// - a negative number (`-1`, `-6e4`) is not >= 0, a fraction (`60000.5`, `6.5e-1`) is not an
///   integer, and anything that is not a number (`"60000"`, `null`, `true`) is neither: each
///   fails, saying "not an integer >= 0".
///
/// The parser reads a fraction too small for a 64-bit float to carry (`60000.000000000000001`)
/// as the integer it rounds to; no server writes one.
pub(crate) fn ttl_ms_problem(ttl: Option<&Value>) -> Option<String> {
    let whole_and_not_negative = |n: &serde_json::Number| {
        n.as_u64().is_some()
            || n.as_i64() == Some(0)
            || n.as_f64()
                .is_some_and(|f| f.is_finite() && f >= 0.0 && f.fract() == 0.0)
    };
    match ttl {
        Some(Value::Number(n)) if whole_and_not_negative(n) => None,
        Some(other) => Some(format!("ttlMs {other} is not an integer >= 0")),
        None => Some("ttlMs missing".into()),
    }
}

/// The DiscoverResult fields a passing `discover.shape` saw, short: `resultType "complete",
/// supportedVersions ["2026-07-28"], capabilities {tools, resources}, ttlMs 0, cacheScope
/// "private", serverInfo in _meta`. The server's values are clipped and cleaned.
fn fields_seen(ex: &Exchange) -> String {
    let Some(Rpc::Result { result, .. }) = ex.rpc() else {
        return String::new();
    };
    let value = |key: &str, max: usize| {
        result
            .get(key)
            .map_or_else(|| "absent".into(), |v| clip(&v.to_string(), max))
    };
    let mut caps: Vec<String> = result
        .get("capabilities")
        .and_then(Value::as_object)
        .map(|c| c.keys().take(6).map(|k| clip(k, 24)).collect())
        .unwrap_or_default();
    let more = result
        .get("capabilities")
        .and_then(Value::as_object)
        .map_or(0, |c| c.len().saturating_sub(6));
    if more > 0 {
        caps.push(format!("+{more} more"));
    }
    format!(
        "resultType {}, supportedVersions {}, capabilities {{{}}}, ttlMs {}, cacheScope {}, serverInfo in _meta",
        value("resultType", 30),
        value("supportedVersions", 80),
        caps.join(", "),
        value("ttlMs", 20),
        value("cacheScope", 20),
    )
}

/// The capabilities object of a working discover result.
pub fn capabilities(ex: &Exchange) -> Option<Value> {
    match ex.rpc() {
        Some(Rpc::Result { result, .. }) => result.get("capabilities").cloned(),
        _ => None,
    }
}

#[cfg(test)]
#[path = "era_tests.rs"]
pub(crate) mod tests;
