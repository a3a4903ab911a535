//! Where the authorization boundary was seen (`checks.md` 2.5 "runs when an unauthenticated
//! request gets 401"): not only on `server/discover`. A server whose discovery is public may
//! protect `tools/list`; a dual-era server may protect its 2026-07-28 requests and forget its
//! 2025-11-25 `initialize`. A token that must be refused is judged on every request that
//! answered 401 without a token (never on one served without a token: a public method may
//! ignore `Authorization`), and a legacy path that serves a request without any token while
//! `server/discover` requires one is an authorization bypass, whatever credential was given.

use serde_json::{json, Map, Value};

use super::challenge;
use crate::model::{Cause, CheckResult, Era, Outcome, Severity};
use crate::probe::era;
use crate::probe::http::{
    same_id, Exchange, ExchangeError, ProbeRequest, Rpc, SseRead, ABSENT_NAME,
};
use crate::probe::reason::{self, Other, Subject};
use crate::probe::verdict::Verdict;

/// The JSON-RPC id of the unauthenticated `tools/list` that looks for the boundary.
pub const TOOLS_LIST_ID: i64 = 7;
/// The JSON-RPC id of the unauthenticated `tools/call` that looks for the boundary.
pub const TOOLS_CALL_ID: i64 = 8;
/// The JSON-RPC id of the unauthenticated `subscriptions/listen` that looks for it.
pub const LISTEN_ID: i64 = 9;

/// A 2026-07-28 request past a public discovery that may sit behind the boundary: a server
/// whose discovery (and list) is public may protect only the requests that act
/// (`tools/call`) or hold a stream open (`subscriptions/listen`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behind {
    ToolsList,
    /// `tools/call` of a tool no server has ([`ABSENT_NAME`]): never calls a real tool.
    ToolsCall,
    /// `subscriptions/listen` with the filter the capabilities allow; only its status and
    /// headers are read (a stream served is never waited on).
    Listen(Map<String, Value>),
}

impl Behind {
    pub fn method(&self) -> &'static str {
        match self {
            Behind::ToolsList => "tools/list",
            Behind::ToolsCall => "tools/call",
            Behind::Listen(_) => "subscriptions/listen",
        }
    }

    /// The valid request (without a token) with JSON-RPC id `id`.
    pub fn request(&self, id: i64) -> ProbeRequest {
        match self {
            Behind::ToolsList => ProbeRequest::modern("tools/list", id, Map::new()),
            Behind::ToolsCall => ProbeRequest::modern(
                "tools/call",
                id,
                Map::from_iter([
                    ("name".to_string(), json!(ABSENT_NAME)),
                    ("arguments".to_string(), json!({})),
                ]),
            ),
            Behind::Listen(filter) => ProbeRequest::modern(
                "subscriptions/listen",
                id,
                Map::from_iter([("notifications".to_string(), Value::Object(filter.clone()))]),
            ),
        }
    }

    /// The JSON-RPC id this request is asked with, without a token, when the boundary is
    /// looked for.
    pub fn id(&self) -> i64 {
        match self {
            Behind::ToolsList => TOOLS_LIST_ID,
            Behind::ToolsCall => TOOLS_CALL_ID,
            Behind::Listen(_) => LISTEN_ID,
        }
    }

    /// How much of the answer to read: a listen stream is never read.
    pub fn read(&self) -> SseRead {
        match self {
            Behind::Listen(_) => SseRead::HeadersOnly,
            _ => SseRead::UntilResponse,
        }
    }

    /// The requests past discovery the capabilities `caps` make valid, in the order the
    /// boundary is looked for: `tools/list` and `tools/call` when tools are advertised,
    /// `subscriptions/listen` when a list change can be announced.
    pub fn candidates(caps: &Value, listen_filter: Option<Map<String, Value>>) -> Vec<Behind> {
        let mut out = Vec::new();
        if caps.get("tools").is_some() {
            out.extend([Behind::ToolsList, Behind::ToolsCall]);
        }
        out.extend(listen_filter.map(Behind::Listen));
        out
    }
}

/// Whether `ex` carries a Bearer challenge in `WWW-Authenticate`.
pub fn bearer_challenged(ex: &Exchange) -> bool {
    challenge::parse(&ex.header_values("www-authenticate"))
        .is_ok_and(|cs| cs.iter().any(challenge::Challenge::is_bearer))
}

/// Whether an unauthenticated answer is the authorization layer asking for a credential: a
/// 401 (with or without a challenge: `auth.challenge` judges it), or a 403 that carries a
/// Bearer challenge (the authorization layer answering with the wrong status, not a WAF).
pub fn asks_for_authorization(ex: &Exchange) -> bool {
    ex.status == 401 || (ex.status == 403 && bearer_challenged(ex))
}

/// Whether an unauthenticated answer to a request other than `server/discover` shows the
/// boundary: a 401 (with or without its challenge: a 401 is the authorization layer's
/// answer, and one without `WWW-Authenticate` fails `auth.challenge` as at the endpoint), or a
/// 403 with a Bearer challenge (a bare 403 is an access rule in front of the server). A bare
/// 401 on `tools/call` whose any token was let through passed with the random token never
/// sent there (fresh eyes round 14, item 1).
pub fn shows_boundary(ex: &Exchange) -> bool {
    asks_for_authorization(ex)
}

/// `auth.challenge` on the requests other than `server/discover` (each `(method, its
/// token-less answer)`) that the authorization layer answered 403 (a Bearer challenge,
/// whatever its `error=`, `insufficient_scope` included) without any token: one rule with
/// `server/discover` ([`super::challenge_verdict`]), a request without a token MUST get
/// 401, high, naming each request (fresh eyes round 17, nit 7). `None` when none was. A bare
/// 403 is not the authorization layer's answer (an access rule in front of the server) and
/// stays unobserved ([`not_observed`]).
pub fn no_token_403(answers: &[(&str, &Exchange)]) -> Option<Verdict> {
    let named: Vec<String> = answers
        .iter()
        .filter(|(_, ex)| ex.status == 403 && bearer_challenged(ex))
        .map(|(method, ex)| {
            let error = challenge::parse(&ex.header_values("www-authenticate"))
                .ok()
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c.is_bearer())
                        .and_then(|c| c.param("error").map(|e| format!(" error={e}")))
                })
                .unwrap_or_default();
            format!(
                "{method} (no Authorization) answered {} with a Bearer challenge{error}",
                ex.summary()
            )
        })
        .collect();
    if named.is_empty() {
        return None;
    }
    Some(Verdict::fail(
        Severity::High,
        format!(
            "{}: 403 where 401 is required: a request without a token MUST get 401 with WWW-Authenticate (clients start authorization only on 401)",
            named.join("; ")
        ),
    ))
}

/// The `scope=` of the first Bearer challenge of `ex`, if any: the scope the server says
/// the request needs.
pub fn challenge_scope(ex: &Exchange) -> Option<String> {
    challenge::parse(&ex.header_values("www-authenticate"))
        .ok()?
        .iter()
        .find(|c| c.is_bearer())
        .and_then(|c| c.param("scope").map(str::to_string))
}

/// What an unauthenticated request past a protected `server/discover` showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Beside {
    /// The authorization layer answered (a 401, or a 403 with a Bearer challenge): the
    /// random token goes there too.
    Boundary,
    /// The authorization layer answered 403 (with a Bearer challenge) where 401 is
    /// required: the boundary (the random token goes there too), and `auth.challenge`
    /// fails on it as on `server/discover` ([`no_token_403`]).
    Forbidden,
    /// The MCP layer answered it without any token: the `auth.challenge` verdict on that.
    Open(Verdict),
    /// Not observed: no answer, an answer not seen whole, or one given for another reason
    /// (a rate limit, 502-504, a bare 500 or 403): whether it asks for authorization is
    /// unknown.
    Unseen(Other),
    /// Answered, neither by the authorization layer nor with an MCP answer to this request
    /// (a 404 page, a bare 400): no boundary there, and nothing served either.
    NotMcp,
}

/// Why the unauthenticated answer `got` to a request says nothing about whether that
/// request asks for authorization: no answer, an answer not seen whole, or one given for
/// another reason (a rate limit, 502-504, a bare 500 or 403). `None` when it was observed
/// (the boundary's answer, or any other answer seen whole).
pub fn not_observed(got: &Result<Exchange, ExchangeError>) -> Option<Other> {
    let ex = match got {
        Ok(ex) => ex,
        Err(e) => return Some(reason::unanswered(e)),
    };
    if shows_boundary(ex) {
        return None;
    }
    reason::another_reason(ex, Subject::Rule, false)
        .or_else(|| era::cut_by_cap(ex, Subject::Rule).map(|cut| reason::unanswered(&cut)))
}

/// Judge the unauthenticated answer `got` to `b` (asked with [`Behind::id`]) beside a
/// `server/discover` that asked for authorization (`discover`, its unauthenticated answer).
/// The MCP layer answering a request past a protected discovery without a credential is an
/// authorization bypass, like the open legacy path ([`legacy_open`]): the tool list served,
/// or a tool call served (a result), fails high; the unknown tool's -32602 (the name was
/// looked up, nothing run) fails medium. Any other answer from the MCP layer (another JSON-RPC error, a listen
/// stream opened) is not the request served, so it is a low warning that says so.
pub fn beside(discover: &Exchange, b: &Behind, got: &Result<Exchange, ExchangeError>) -> Beside {
    if let Some(o) = not_observed(got) {
        return Beside::Unseen(o);
    }
    // Observed: the boundary's answer, or another answer seen whole.
    let method = b.method();
    let ex = match got {
        Ok(ex) if !shows_boundary(ex) => ex,
        Ok(ex) if ex.status == 403 => return Beside::Forbidden,
        _ => return Beside::Boundary,
    };
    let head = format!(
        "{method} (no Authorization) answered {}, server/discover (no Authorization) answered {}",
        ex.summary(),
        discover.summary()
    );
    let served = |what: &str| {
        Beside::Open(Verdict::fail(
            Severity::High,
            format!("{method} served without a token while server/discover requires one: {head}; {what}"),
        ))
    };
    let answered = |what: &str| {
        Beside::Open(Verdict::warn(
            Severity::Low,
            format!("{method} answered by the MCP layer without a token while server/discover requires one: {head}; {what}"),
        ))
    };
    let asked = serde_json::json!(b.id());
    match (b, ex.rpc()) {
        (Behind::Listen(_), _) if (200..300).contains(&ex.status) && ex.is_sse() => answered(
            "the stream was opened for a client without a credential (only its status and headers were read): if it is meant to be public, so can discovery be; if not, it needs the boundary too",
        ),
        (Behind::ToolsList, Some(Rpc::Result { id, .. }))
            if (200..300).contains(&ex.status) && same_id(&id, &asked) =>
        {
            served("the MCP layer lists the tools to any client without a credential")
        }
        (Behind::ToolsCall, Some(Rpc::Result { id, .. }))
            if (200..300).contains(&ex.status) && same_id(&id, &asked) =>
        {
            served("the MCP layer takes tool calls from any client without a credential")
        }
        (Behind::ToolsCall, Some(Rpc::Error { id, code: -32602, .. })) if same_id(&id, &asked) => {
            // Nothing was run (the name is one no server has): a real tool may be called the
            // same way, or a gateway may route by tool name before the authorization of each
            // backend (fresh eyes round 17, D4). Medium: the MCP layer was reached without a
            // credential, which the boundary should answer first; not "served" (high).
            Beside::Open(Verdict::fail(
                Severity::Medium,
                format!("{method} reached the MCP layer without a token while server/discover requires one: {head}; it looked up the tool's name (one no server has) for a client without a credential: a real tool may be called the same way, or a gateway routes by tool name before authorizing; the authorization layer should answer first (401)"),
            ))
        }
        (_, Some(Rpc::Error { id, .. })) if same_id(&id, &asked) => answered(
            "not the authorization layer's 401, and not the request served either, so whether the MCP layer serves it without a credential was not observed",
        ),
        _ => Beside::NotMcp,
    }
}

/// Which requests answered the authorization layer without a token, and so must refuse a
/// token that is not valid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paths {
    /// `server/discover` asked for authorization (the era's request is judged).
    pub discover: bool,
    /// The requests past discovery that answered 401/403 with a Bearer challenge without a
    /// token, in the order they were looked at, each with its challenge's `scope=`.
    pub behind: Vec<(Behind, Option<String>)>,
    /// The `scope=` of the discover challenge, when it named one.
    pub discover_scope: Option<String>,
    /// Also try the 2025-11-25 `initialize` (a dual-era or not yet classified endpoint whose
    /// discovery asked for authorization, or, without a credential, whose initialize asked
    /// for it behind a public discovery and a public `tools/list`).
    pub initialize: bool,
    /// `initialize` was served without any token: the legacy path has no boundary.
    pub initialize_open: bool,
    /// Why the token-less `initialize` sent to probe the 2025-11-25 path's boundary was not
    /// observed ([`initialize_not_observed`]): whether that path asks for authorization is
    /// unknown (`auth.challenge`, [`challenge_with_initialize_unseen`]).
    pub initialize_unseen: Option<Other>,
    /// The requests whose unauthenticated answer was not observed ([`not_observed`]), past
    /// a protected discovery ([`Beside::Unseen`]) or behind a public one where another
    /// request showed the boundary, each with why: whether the random token must be
    /// refused there is unknown.
    pub unseen: Vec<(&'static str, Other)>,
}

impl Paths {
    /// The boundary seen on `server/discover` (its unauthenticated answer).
    pub fn from_discover(unauth: &Exchange) -> Paths {
        Paths {
            discover: true,
            discover_scope: challenge_scope(unauth),
            ..Paths::default()
        }
    }

    /// Whether `method` answered the boundary past discovery.
    pub fn behind(&self, method: &str) -> bool {
        self.behind.iter().any(|(b, _)| b.method() == method)
    }

    /// The request every token probe asks with: the era's own request (`server/discover`,
    /// or `initialize` on a legacy-only server) when discovery asked for authorization,
    /// else the first request past it that did.
    pub fn primary(&self, era: Era) -> Option<TokenProbe> {
        if self.discover {
            let req = super::tokens::probe_request(era, 900);
            let method = if era == Era::Legacy {
                "initialize"
            } else {
                "server/discover"
            };
            return Some(TokenProbe {
                req,
                method,
                scope: self.discover_scope.clone(),
                read: SseRead::UntilResponse,
            });
        }
        self.behind
            .first()
            .map(|(b, scope)| TokenProbe::behind(b, scope))
    }

    /// Every request past discovery that asked for authorization and is not the
    /// [`Paths::primary`] one: the random token goes to each of them too.
    pub fn others(&self) -> Vec<TokenProbe> {
        let skip = usize::from(!self.discover);
        self.behind
            .iter()
            .skip(skip)
            .map(|(b, scope)| TokenProbe::behind(b, scope))
            .collect()
    }
}

/// A request a token probe asks with: the request, its method, the scope its challenge
/// named, and how much of the answer to read.
#[derive(Debug, Clone)]
pub struct TokenProbe {
    pub req: ProbeRequest,
    pub method: &'static str,
    pub scope: Option<String>,
    pub read: SseRead,
}

impl TokenProbe {
    fn behind(b: &Behind, scope: &Option<String>) -> TokenProbe {
        TokenProbe {
            req: b.request(901),
            method: b.method(),
            scope: scope.clone(),
            read: b.read(),
        }
    }
}

/// Why the answer `got` to a 2025-11-25 `initialize` sent to probe the legacy path's
/// boundary (without a token, or with a random token) says nothing about that boundary: no
/// answer (a timeout, a reset), an answer given for another reason (429, 503, 502, 504, a
/// bare 500 or 403, a body in a content coding), a redirect (never followed), an answer cut
/// at the vantage's read cap, or a 2xx without any JSON-RPC answer (an empty body, a stream
/// that ended without its response). `None` when it was observed: served (a JSON-RPC
/// result), the authorization layer's answer (401, or 403 with a Bearer challenge, or an
/// RFC 6750 error), or an answer from the MCP layer that it has no such path (a modern-only
/// server's -32022 or -32601) or any other answer seen whole (a 404 page, a bare 400).
/// Red team round 18, D2: a limiter on unauthenticated traffic answering these 429 hid an
/// open legacy path (PASS, exit 0).
pub fn initialize_not_observed(got: &Result<Exchange, ExchangeError>) -> Option<Other> {
    let ex = match got {
        Ok(ex) => ex,
        Err(e) => return Some(reason::unanswered(e)),
    };
    if asks_for_authorization(ex) || era::initialize_works(ex) || bearer_error(ex) {
        return None;
    }
    if let Some(o) =
        reason::another_reason(ex, Subject::Initialize, false).or_else(|| reason::redirected(ex))
    {
        return Some(o);
    }
    if let Some(cut) = era::cut_by_cap(ex, Subject::Initialize) {
        return Some(reason::unanswered(&cut));
    }
    if (200..300).contains(&ex.status) && ex.rpc().is_none() {
        return Some(Other {
            cause: Cause::OtherReason,
            head: format!(
                "answered {} without a JSON-RPC answer (an empty body, or a stream that ended without its response), so the answer was not seen",
                ex.summary()
            ),
            advice: "check the server's log and any proxy in front of it, then check again",
        });
    }
    None
}

/// Whether `ex` carries a Bearer challenge with an RFC 6750 `error` (the authorization
/// layer's answer whatever its status, e.g. 400 `invalid_request`).
fn bearer_error(ex: &Exchange) -> bool {
    challenge::parse(&ex.header_values("www-authenticate")).is_ok_and(|cs| {
        cs.iter()
            .any(|c| c.is_bearer() && c.param("error").is_some())
    })
}

/// `auth.challenge` when the token-less 2025-11-25 `initialize` sent to probe the legacy
/// path's boundary (a dual-era or not yet classified endpoint) was not observed (`o`, why):
/// whether that path asks for authorization is unknown, so a pass (or a warning) on the
/// other requests' challenge becomes `unknown` with that cause, naming initialize (never a
/// pass, `checks.md` 4.1); a failure stands, saying so too. `current` is the verdict
/// recorded so far (`None`: none).
pub fn challenge_with_initialize_unseen(current: Option<&CheckResult>, o: &Other) -> Verdict {
    let line = format!(
        "initialize (2025-11-25, no Authorization): {}",
        o.explain("whether the 2025-11-25 path asks for authorization without a token")
    );
    let Some(c) = current else {
        return Verdict::unknown(o.cause, line);
    };
    let observed = format!("{line}; server/discover's challenge: {}", c.observed);
    match c.outcome {
        Outcome::Pass | Outcome::Warn | Outcome::Skip => Verdict::unknown(o.cause, observed),
        _ => Verdict {
            outcome: c.outcome,
            severity: c.severity,
            cause: c.cause,
            observed: format!("{}; {line}", c.observed),
        },
    }
}

/// `auth.challenge` when `initialize` (sent without a token) was served while
/// `server/discover` asked for authorization: the 2025-11-25 path has no boundary.
pub fn legacy_open(discover: &Exchange, init: &Exchange) -> Option<Verdict> {
    if !asks_for_authorization(discover) || !era::initialize_works(init) {
        return None;
    }
    Some(Verdict::fail(
        Severity::High,
        format!(
            "initialize served without a token while server/discover requires one: initialize (2025-11-25, no Authorization) answered {}, server/discover (no Authorization) answered {}; the legacy path lets any client in without a credential",
            init.summary(),
            discover.summary()
        ),
    ))
}

/// How bad a token probe's verdict is: a failure (by severity) above an `unknown` or
/// `error`, above a warning, a pass, a skip.
pub fn rank(v: &Verdict) -> usize {
    match v.outcome {
        Outcome::Fail => 4 + v.severity.map_or(0, |s| s as usize),
        Outcome::Error | Outcome::Unknown => 3,
        Outcome::Warn => 2,
        Outcome::Pass => 1,
        Outcome::Skip => 0,
    }
}

/// One verdict out of the token probe's verdicts on several requests, each `(method,
/// verdict)`: the worst failure (by severity), else an `unknown`, else a warning, else a
/// pass naming every request it was sent on; each says which request it is about.
pub fn worst(verdicts: Vec<(&str, Verdict)>) -> Verdict {
    let all_pass = verdicts.iter().all(|(_, v)| v.outcome == Outcome::Pass);
    if all_pass {
        let seen: Vec<String> = verdicts
            .iter()
            .map(|(m, v)| format!("{m}: {}", v.observed))
            .collect();
        return Verdict::pass(seen.join("; "));
    }
    let mut best: Option<(&str, Verdict)> = None;
    for (m, v) in verdicts {
        if best.as_ref().is_none_or(|(_, b)| rank(&v) > rank(b)) {
            best = Some((m, v));
        }
    }
    match best {
        Some((m, mut v)) => {
            v.observed = format!("{m}: {}", v.observed);
            v
        }
        None => Verdict::skip(""),
    }
}

#[cfg(test)]
#[path = "boundary_tests.rs"]
mod tests;
