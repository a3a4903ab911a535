//! The transport checks judged on what was seen (red-team round 9): a front of our own on
//! loopback passes every request to the in-repo fixture (a conformant dual-era server) and
//! changes one thing by mode, so each test breaks exactly one rule and everything else stays
//! conformant.
//!
//! - `listen.ack-first` on a stream that stayed open and silent until this vantage's own
//!   `--check-timeout` ended is `unknown` (cause timeout), never a failure of the target
//!   (defect 7; `checks.md` 4.1).
//! - A foreign `Origin` refused with a 400 -32600 or a 404 -32601 while the control without
//!   it was served is the low warning of any non-403 refusal, not `unknown` (defect 9).
//! - A refusal whose JSON-RPC error carries another `id` than the request's fails
//!   `jsonrpc.error-body` (defect 3; spec 2.4, headers.error-id).
//! - `subscriptions/listen` is tried when the server advertises only `resources.subscribe`
//!   (defect 11).
//! - On a dual-era server the Origin guard is probed on the 2025-11-25 path too (defect 4).

// The front and the engine in `run` are a test's setup: they unwrap.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{json, Value};
use vantage_agent::catalog::CheckId;
use vantage_agent::engine::{Engine, ProbeOptions};
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult, Severity};
use vantage_agent::target::Target;
use vantage_fixture::{Fault, Fixture};

#[path = "shared/probe.rs"]
mod shared;

use shared::{assert_outcomes, assert_seen, assert_seen_all};

/// The one thing the front changes.
#[derive(Debug, Clone, PartialEq)]
enum Mode {
    /// Nothing: the fixture as it is.
    Clean,
    /// subscriptions/listen: 200 text/event-stream, then silence (the stream held open).
    ListenSilent,
    /// A request carrying Origin: this status with a JSON-RPC error of this code, id echoed.
    OriginRefused(u16, i64),
    /// Every JSON-RPC error answer carries this id instead of the request's.
    ErrorId(Value),
    /// server/discover advertises only `resources.subscribe` (no listChanged); with `true`,
    /// subscriptions/listen answers 404 -32601.
    SubscribeOnly(bool),
    /// initialize (the 2025-11-25 path) is served with a foreign Origin: the front drops
    /// the header before passing it on.
    LegacyOriginServed,
    /// The transport probes' requests on tools/list (JSON-RPC ids 120-133) are refused for
    /// another reason, with this status (429 and 503 with Retry-After, 401 with a Bearer
    /// challenge); the listing's own tools/list and the tools/list control pass.
    ToolsListProbesRefused(u16),
    /// The requests with these JSON-RPC ids get this answer from the front (139: the
    /// tools/call control; 129: `version.unsupported`'s 2099-12-31 request; 109: its
    /// 1999-01-01 one; 103: the discover without Mcp-Method).
    Answer(&'static [i64], Canned),
}

/// An answer the front makes itself.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Canned {
    /// This status, text/plain, with Retry-After (a rate limit, an unavailable upstream).
    Status(u16),
    /// 200 application/json with a Content-Length of 400, half a body, then the
    /// connection closed (a reset: not answered).
    Cut,
    /// 400 application/json with this body.
    Json400(&'static str),
}

impl Canned {
    fn respond(self) -> Response {
        match self {
            Canned::Status(status) => (
                StatusCode::from_u16(status).unwrap(),
                [("content-type", "text/plain"), ("retry-after", "60")],
                "busy",
            )
                .into_response(),
            Canned::Cut => {
                let tail = futures::stream::once(async {
                    Err::<Bytes, std::io::Error>(std::io::Error::other("cut"))
                });
                let body = futures::stream::once(async {
                    Ok(Bytes::from_static(br#"{"jsonrpc": "2.0", "#))
                })
                .chain(tail);
                (
                    StatusCode::OK,
                    [
                        ("content-type", "application/json"),
                        ("content-length", "400"),
                    ],
                    Body::from_stream(body),
                )
                    .into_response()
            }
            Canned::Json400(body) => (
                StatusCode::BAD_REQUEST,
                [("content-type", "application/json")],
                body,
            )
                .into_response(),
        }
    }
}

#[derive(Clone)]
struct Front {
    upstream: String,
    mode: Mode,
    client: reqwest::Client,
}

fn rpc_error(status: u16, id: &Value, code: i64) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [("content-type", "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "Invalid Origin header"}})
            .to_string(),
    )
        .into_response()
}

async fn handle(
    State(front): State<Front>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let rpc_method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let listen = rpc_method == "subscriptions/listen";
    let mut drop_origin = false;
    match &front.mode {
        Mode::ListenSilent if listen => {
            let silent = futures::stream::pending::<Result<Bytes, std::io::Error>>();
            return (
                StatusCode::OK,
                [
                    ("content-type", "text/event-stream"),
                    ("x-accel-buffering", "no"),
                ],
                Body::from_stream(silent),
            )
                .into_response();
        }
        Mode::OriginRefused(status, code)
            if method == Method::POST && headers.contains_key("origin") =>
        {
            return rpc_error(*status, &id, *code);
        }
        Mode::SubscribeOnly(true) if listen => {
            return (
                StatusCode::NOT_FOUND,
                [("content-type", "application/json")],
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
                    .to_string(),
            )
                .into_response();
        }
        Mode::LegacyOriginServed => drop_origin = rpc_method == "initialize",
        Mode::ToolsListProbesRefused(status)
            if rpc_method == "tools/list"
                && id.as_i64().is_some_and(|i| (120..=133).contains(&i)) =>
        {
            return (
                StatusCode::from_u16(*status).unwrap(),
                [
                    ("content-type", "text/plain"),
                    ("retry-after", "60"),
                    ("www-authenticate", "Bearer realm=\"mcp\""),
                ],
                "not now",
            )
                .into_response();
        }
        Mode::Answer(ids, canned) if id.as_i64().is_some_and(|i| ids.contains(&i)) => {
            return canned.respond();
        }
        _ => {}
    }
    let mut req = front.client.request(method, &front.upstream);
    for (k, v) in &headers {
        let skip = ["host", "content-length", "connection"].contains(&k.as_str())
            || (drop_origin && k.as_str() == "origin");
        if !skip {
            req = req.header(k.as_str(), v.as_bytes());
        }
    }
    let up = req.body(body).send().await.unwrap();
    let mut out = Response::builder().status(up.status().as_u16());
    for (k, v) in up.headers() {
        if !["content-length", "transfer-encoding", "connection"].contains(&k.as_str()) {
            out = out.header(k.as_str(), v.as_bytes());
        }
    }
    let json = up
        .headers()
        .get("content-type")
        .is_some_and(|c| c.as_bytes().starts_with(b"application/json"));
    if !json {
        let stream = futures::stream::unfold(up, |mut up| async move {
            match up.chunk().await {
                Ok(Some(c)) => Some((Ok::<Bytes, std::io::Error>(c), up)),
                _ => None,
            }
        });
        return out.body(Body::from_stream(stream.boxed())).unwrap();
    }
    let mut v: Value = serde_json::from_slice(&up.bytes().await.unwrap()).unwrap();
    match &front.mode {
        Mode::ErrorId(other) if v.get("error").is_some() => v["id"] = other.clone(),
        Mode::SubscribeOnly(_) if rpc_method == "server/discover" => {
            if let Some(caps) = v.pointer_mut("/result/capabilities") {
                *caps = json!({"tools": {}, "prompts": {}, "resources": {"subscribe": true}});
            }
        }
        _ => {}
    }
    out.body(Body::from(v.to_string())).unwrap()
}

/// Run the engine once against the fixture (dual-era unless `modern_only`) behind a front
/// in `mode`, with `check_timeout` as the per-exchange wait.
async fn run_with(mode: Mode, modern_only: bool, check_timeout: Duration) -> RegionResult {
    let faults: &[Fault] = if modern_only {
        &[Fault::ModernOnly]
    } else {
        &[]
    };
    run_faulted(mode, faults, check_timeout).await
}

/// [`run_with`] against the fixture with `faults` switched on.
async fn run_faulted(mode: Mode, faults: &[Fault], check_timeout: Duration) -> RegionResult {
    let fixture = Fixture::start(faults).await.unwrap();
    // The front's own client (plain http) still needs a process-wide crypto provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let front = Front {
        upstream: fixture.url(),
        mode,
        client: reqwest::Client::new(),
    };
    let (addr, server) =
        shared::serve_app(axum::Router::new().fallback(handle).with_state(front)).await;
    let engine = Engine::new(ProbeOptions {
        allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
        check_timeout,
        ..Default::default()
    })
    .unwrap();
    let target = Target::parse(&format!("http://{addr}/mcp")).unwrap();
    let r = engine.run(&target).await;
    server.abort();
    r
}

async fn run(mode: Mode) -> RegionResult {
    run_with(mode, false, Duration::from_secs(5)).await
}

fn check(r: &RegionResult, id: CheckId) -> &CheckResult {
    r.check(id).unwrap_or_else(|| panic!("{id} recorded"))
}

/// Nothing failed or warned above info but `allowed`.
#[track_caller]
fn only_problems(r: &RegionResult, allowed: &[CheckId], what: &str) {
    for c in &r.checks {
        let problem = matches!(c.outcome, Outcome::Fail | Outcome::Warn)
            && c.severity.is_some_and(|s| s > Severity::Info);
        assert!(
            !problem || allowed.contains(&c.id),
            "{what}: {} {:?} {:?}: {}",
            c.id,
            c.outcome,
            c.severity,
            c.observed
        );
    }
}

/// The front in `Clean` mode is the conformant fixture: nothing above info, and the checks
/// these tests break each passed (so a failure below is the mode's doing).
#[tokio::test]
async fn the_front_alone_is_clean() {
    for modern_only in [false, true] {
        let r = run_with(Mode::Clean, modern_only, Duration::from_secs(5)).await;
        only_problems(&r, &[], "clean");
        assert_outcomes(
            &r,
            [
                CheckId::ListenSse,
                CheckId::ListenAckFirst,
                CheckId::SecurityOrigin,
                CheckId::JsonrpcErrorBody,
                CheckId::HeadersMissingMethod,
            ],
            Outcome::Pass,
        );
    }
}

/// Defect 7: a listen stream open and silent past this vantage's own --check-timeout. The
/// rule (the acknowledgement comes first) was not broken, only not observed.
#[tokio::test]
async fn a_silent_listen_stream_is_unknown_for_our_own_timeout() {
    let r = run_with(Mode::ListenSilent, false, Duration::from_secs(1)).await;
    let sse = check(&r, CheckId::ListenSse);
    assert_seen(sse, sse.outcome, Outcome::Pass, "the stream stayed open");
    let ack = check(&r, CheckId::ListenAckFirst);
    assert_seen(
        ack,
        (ack.outcome, ack.severity, ack.cause),
        (Outcome::Unknown, None, Some(Cause::Timeout)),
        "no event arrived within this vantage's wait (--check-timeout",
    );
    only_problems(&r, &[], "listen silent");
}

/// Defect 9: a foreign Origin refused with 400 -32600 or 404 -32601 while the control
/// without it (sent alongside) was served: the Origin caused the refusal, which is not the
/// 403 the rule asks for (the low warning of any non-403 refusal), never `unknown`. A code
/// that names a fault of the request (-32022 here) still leaves the guard unobserved.
#[tokio::test]
async fn a_foreign_origin_refused_with_a_generic_code_is_the_low_warning() {
    for (status, code) in [(400, -32600), (404, -32601)] {
        let r = run(Mode::OriginRefused(status, code)).await;
        let o = check(&r, CheckId::SecurityOrigin);
        assert_seen_all(
            o,
            (o.outcome, o.severity, o.cause),
            (Outcome::Warn, Some(Severity::Low), None),
            &[
                "refused, but a foreign Origin MUST get 403",
                &code.to_string(),
            ],
        );
        only_problems(&r, &[CheckId::SecurityOrigin], "origin refused");
        assert!(
            r.checks.iter().all(|c| c.outcome != Outcome::Unknown),
            "nothing unobserved: {:?}",
            r.checks
                .iter()
                .filter(|c| c.outcome == Outcome::Unknown)
                .map(|c| (c.id, &c.observed))
                .collect::<Vec<_>>()
        );
    }
    let r = run(Mode::OriginRefused(400, -32022)).await;
    let o = check(&r, CheckId::SecurityOrigin);
    assert_seen(
        o,
        (o.outcome, o.cause),
        (Outcome::Unknown, Some(Cause::OtherReason)),
        "which names another rule",
    );
}

/// Defect 3: every JSON-RPC error answer carries another id than its request's (999, 0,
/// or null although the id was readable). The header, version, `_meta` and method checks
/// still count the refusal; `jsonrpc.error-body` fails medium, naming the checks and ids.
#[tokio::test]
async fn an_error_that_does_not_echo_the_request_id_fails_jsonrpc_error_body() {
    for other in [json!(999), json!(0), Value::Null] {
        for modern_only in [false, true] {
            let r = run_with(
                Mode::ErrorId(other.clone()),
                modern_only,
                Duration::from_secs(5),
            )
            .await;
            let what = format!("id {other}, modern only {modern_only}");
            let body = check(&r, CheckId::JsonrpcErrorBody);
            assert_seen(
                body,
                (body.outcome, body.severity),
                (Outcome::Fail, Some(Severity::Medium)),
                "an error does not echo the request id",
            );
            for id in [
                CheckId::HeadersMissingMethod,
                CheckId::VersionUnsupported,
                CheckId::MetaMissing,
                CheckId::MethodUnknown,
            ] {
                assert!(
                    body.observed.contains(&format!("{id}: ")),
                    "{what}: {id} not named: {}",
                    body.observed
                );
                let c = check(&r, id);
                assert_eq!(c.outcome, Outcome::Pass, "{what} {id}: {}", c.observed);
            }
            assert!(
                body.observed
                    .contains(&format!("carries id {other}, not the request's")),
                "{what}: {}",
                body.observed
            );
            only_problems(&r, &[CheckId::JsonrpcErrorBody], &what);
        }
    }
}

/// Defect 11: a server that advertises only `resources.subscribe` (no listChanged) is
/// listened to as well: the fixture acknowledges the empty `resourceSubscriptions` filter
/// (both listen checks pass, so the filter is one a server accepts), and a listen answering
/// 404 -32601 fails `listen.sse` as it does beside a listChanged capability.
#[tokio::test]
async fn listen_is_tried_when_only_resources_subscribe_is_advertised() {
    let r = run(Mode::SubscribeOnly(false)).await;
    assert_outcomes(
        &r,
        [CheckId::ListenSse, CheckId::ListenAckFirst],
        Outcome::Pass,
    );
    only_problems(&r, &[], "subscribe only");
    let r = run(Mode::SubscribeOnly(true)).await;
    let sse = check(&r, CheckId::ListenSse);
    assert_seen(
        sse,
        (sse.outcome, sse.severity),
        (Outcome::Fail, Some(Severity::Medium)),
        "a listChanged or resources.subscribe capability is advertised, but subscriptions/listen is not served",
    );
    assert_eq!(check(&r, CheckId::ListenAckFirst).outcome, Outcome::Skip);
    only_problems(&r, &[CheckId::ListenSse], "subscribe only, listen 404");
}

/// Defect 4: a dual-era server whose 2025-11-25 path (`initialize`, which opens a legacy
/// session) serves a foreign Origin, while its 2026-07-28 path refuses it with 403, fails
/// `security.origin`; the clean dual-era fixture passes it on both paths.
#[tokio::test]
async fn a_dual_era_server_is_asked_for_its_origin_guard_on_both_paths() {
    let r = run(Mode::Clean).await;
    let o = check(&r, CheckId::SecurityOrigin);
    assert_seen(
        o,
        o.outcome,
        Outcome::Pass,
        "; initialize (2025-11-25): 403",
    );
    let r = run(Mode::LegacyOriginServed).await;
    assert_eq!(r.era, vantage_agent::model::Era::Dual);
    let o = check(&r, CheckId::SecurityOrigin);
    assert_seen_all(
        o,
        (o.outcome, o.severity),
        (Outcome::Fail, Some(Severity::Medium)),
        &[
            "; initialize (2025-11-25): 200 text/event-stream",
            "server/discover (2026-07-28): 403",
            "was served",
        ],
    );
    only_problems(&r, &[CheckId::SecurityOrigin], "legacy origin served");
}

/// A request beyond server/discover that the Mcp-Method probes and the foreign Origin are
/// asked on: what the evidence names there on the clean fixture (which refuses them on it),
/// and the guard that stops short of it (`guarded`: where it validates) with what each
/// failure names.
struct Leg {
    clean_headers: &'static [&'static str],
    clean_origin: &'static [&'static str],
    guarded: &'static str,
    method_fault: Fault,
    method_failure: &'static [&'static str],
    origin_fault: Fault,
    origin_failure: &'static [&'static str],
}

const HEADER_CHECKS: [CheckId; 3] = [
    CheckId::HeadersMissingMethod,
    CheckId::HeadersMethodMismatch,
    CheckId::HeadersMethodCase,
];

const LEGS: [Leg; 2] = [
    // Red team round 15, defects 6 and 7: with tools advertised, the Mcp-Method probes and
    // the foreign Origin are asked on tools/list too, and the evidence names both requests.
    // A guard that validates on the discover route only fails each of them, naming what
    // tools/list got.
    Leg {
        clean_headers: &["server/discover: 400", "; tools/list: 400"],
        clean_origin: &["; tools/list: 403"],
        guarded: "discover only",
        method_fault: Fault::MethodValidatedOnDiscoverOnly,
        method_failure: &["server/discover: 400", "; tools/list: 200"],
        origin_fault: Fault::OriginGuardOnDiscoverOnly,
        origin_failure: &[
            "server/discover (2026-07-28): 403",
            "initialize (2025-11-25): 403",
            "; tools/list: 200",
            "was served",
        ],
    },
    // Fresh eyes round 17, D1 and D2: a guard that covers server/discover, initialize and
    // tools/list but not tools/call passed every Mcp-Method check and `security.origin`
    // while a tool call with a foreign Origin, or whose Mcp-Method says tools/list, is
    // dispatched. The probes are asked on tools/call of the absent tool too, beside the same
    // call without the change (dispatched: the unknown tool's -32602).
    Leg {
        clean_headers: &["; tools/list: 400", "; tools/call: 400"],
        clean_origin: &["; tools/list: 403", "; tools/call: 403"],
        guarded: "discover and tools/list",
        method_fault: Fault::MethodValidatedOnDiscoverAndList,
        method_failure: &[
            "server/discover: 400",
            "; tools/list: 400",
            "; tools/call: ",
            "was dispatched like the one without it",
        ],
        origin_fault: Fault::OriginGuardOnDiscoverAndList,
        origin_failure: &[
            "server/discover (2026-07-28): 403",
            "initialize (2025-11-25): 403",
            "; tools/list: 403",
            "; tools/call: ",
            "a foreign Origin was dispatched",
        ],
    },
];

/// `leg`'s probes passed on the clean fixture's run `clean`; the fixture whose Mcp-Method
/// validation, then whose Origin guard, stops short of the leg fails those checks medium,
/// and nothing else.
async fn assert_leg(clean: &RegionResult, leg: &Leg) {
    for id in HEADER_CHECKS {
        let c = check(clean, id);
        assert_seen_all(c, c.outcome, Outcome::Pass, leg.clean_headers);
    }
    let o = check(clean, CheckId::SecurityOrigin);
    assert_seen_all(o, o.outcome, Outcome::Pass, leg.clean_origin);
    let r = run_faulted(Mode::Clean, &[leg.method_fault], Duration::from_secs(5)).await;
    for id in HEADER_CHECKS {
        let c = check(&r, id);
        assert_seen_all(
            c,
            (c.outcome, c.severity),
            (Outcome::Fail, Some(Severity::Medium)),
            leg.method_failure,
        );
    }
    only_problems(&r, &HEADER_CHECKS, &format!("validated on {}", leg.guarded));
    let r = run_faulted(Mode::Clean, &[leg.origin_fault], Duration::from_secs(5)).await;
    let o = check(&r, CheckId::SecurityOrigin);
    assert_seen_all(
        o,
        (o.outcome, o.severity),
        (Outcome::Fail, Some(Severity::Medium)),
        leg.origin_failure,
    );
    only_problems(
        &r,
        &[CheckId::SecurityOrigin],
        &format!("origin on {}", leg.guarded),
    );
}

/// The Mcp-Method probes and the foreign Origin on every leg of [`LEGS`] (tools/list,
/// tools/call): the clean fixture refuses them there, a guard that stops short fails them.
#[tokio::test]
async fn the_header_and_origin_probes_are_asked_on_tools_list_and_tools_call_too() {
    let clean = run(Mode::Clean).await;
    for leg in &LEGS {
        assert_leg(&clean, leg).await;
    }
}

/// The evidence rule (`checks.md` 4.1) for the added tools/list requests: answered 429, 503
/// or 401, they say nothing, so each check is `unknown` for that request (cause
/// `other-reason`), never a pass on server/discover's answer alone (red team round 18, D2:
/// the old rule let the discover verdict stand); a failure seen on server/discover (served
/// without Mcp-Method) still fails; the evidence says what was not observed and why.
#[tokio::test]
async fn a_tools_list_probe_answered_for_another_reason_leaves_the_check_unknown() {
    for (status, why) in [
        (429, "rate limited: answered 429"),
        (503, "unavailable: answered 503"),
        (401, "the authorization layer answered 401"),
    ] {
        let r = run(Mode::ToolsListProbesRefused(status)).await;
        for id in HEADER_CHECKS.into_iter().chain([CheckId::SecurityOrigin]) {
            let c = check(&r, id);
            assert_seen_all(
                c,
                (c.outcome, c.severity, c.cause),
                (Outcome::Unknown, None, Some(Cause::OtherReason)),
                &["; tools/list: not observed: ", why, "; tools/call: 4"],
            );
        }
        only_problems(&r, &[], "tools/list probes refused for another reason");
    }
    let r = run_faulted(
        Mode::ToolsListProbesRefused(429),
        &[Fault::NoMethodValidation],
        Duration::from_secs(5),
    )
    .await;
    for id in HEADER_CHECKS {
        let c = check(&r, id);
        assert_seen_all(
            c,
            (c.outcome, c.severity),
            (Outcome::Fail, Some(Severity::Medium)),
            &["server/discover: 200", "; tools/list: not observed: "],
        );
    }
}

/// Red team round 18, D2: one request of a check not observed turned the faults rounds 15
/// and 17 fixed back into a pass. The fixture whose Origin guard, or whose Mcp-Method
/// validation, covers server/discover and tools/list but not tools/call, with the tools/call
/// control answered 503 (so the tools/call leg says nothing), was `pass` ("tools/call: no
/// evidence, the verdict rests on the other request"): now `unknown`, naming tools/call and
/// its 503. `version.unsupported` on a server that serves later versions, with its
/// 2099-12-31 request cut (a reset), likewise. The clean fixture, every leg observed,
/// still passes them (the control of this test).
#[tokio::test]
async fn one_request_of_a_check_not_observed_leaves_it_unknown_never_a_pass() {
    let clean = run(Mode::Clean).await;
    for id in HEADER_CHECKS
        .into_iter()
        .chain([CheckId::SecurityOrigin, CheckId::VersionUnsupported])
    {
        let c = check(&clean, id);
        assert_eq!(c.outcome, Outcome::Pass, "{id}: {}", c.observed);
        shared::assert_not_seen(c, &["not observed"]);
    }
    let control_503 = Mode::Answer(&[139], Canned::Status(503));
    let r = run_faulted(
        control_503.clone(),
        &[Fault::OriginGuardOnDiscoverAndList],
        Duration::from_secs(5),
    )
    .await;
    let o = check(&r, CheckId::SecurityOrigin);
    assert_seen_all(
        o,
        (o.outcome, o.severity, o.cause),
        (Outcome::Unknown, None, Some(Cause::OtherReason)),
        &[
            "server/discover (2026-07-28): 403",
            "initialize (2025-11-25): 403",
            "; tools/list: 403",
            "; tools/call: not observed: ",
            "was not dispatched (503 text/plain",
        ],
    );
    only_problems(&r, &[], "origin guard short of tools/call, its control 503");
    let r = run_faulted(
        control_503,
        &[Fault::MethodValidatedOnDiscoverAndList],
        Duration::from_secs(5),
    )
    .await;
    for id in HEADER_CHECKS {
        let c = check(&r, id);
        assert_seen_all(
            c,
            (c.outcome, c.severity, c.cause),
            (Outcome::Unknown, None, Some(Cause::OtherReason)),
            &[
                "server/discover: 400",
                "; tools/list: 400",
                "; tools/call: not observed: ",
                "was not dispatched (503 text/plain",
            ],
        );
    }
    only_problems(
        &r,
        &[],
        "Mcp-Method validated short of tools/call, its control 503",
    );
    let body = check(&r, CheckId::JsonrpcErrorBody);
    assert_eq!(body.outcome, Outcome::Pass, "{}", body.observed);
    for (canned, cause, why) in [
        (Canned::Cut, Cause::Reset, "no response"),
        (
            Canned::Status(503),
            Cause::OtherReason,
            "unavailable: answered 503",
        ),
    ] {
        let r = run_faulted(
            Mode::Answer(&[129], canned),
            &[Fault::AcceptLaterVersions],
            Duration::from_secs(5),
        )
        .await;
        let v = check(&r, CheckId::VersionUnsupported);
        assert_seen_all(
            v,
            (v.outcome, v.severity, v.cause),
            (Outcome::Unknown, None, Some(cause)),
            &["1999-01-01: 400", "; 2099-12-31: not observed: ", why],
        );
        only_problems(&r, &[], "2099 not observed");
        // The 1999-01-01 refusal was seen carrying its JSON-RPC error: jsonrpc.error-body
        // reads it, whatever the request beside it got.
        let body = check(&r, CheckId::JsonrpcErrorBody);
        assert_eq!(body.outcome, Outcome::Pass, "{}", body.observed);
    }
}

/// Red team round 18, D4: a 400 whose body is not a readable JSON-RPC error (the -32022
/// error cut in half, or wrapped in a batch array) passed `version.unsupported` ("refused,
/// but without a JSON-RPC body the code cannot be read"), although neither the code nor
/// `data.supported` was seen; likewise `headers.missing-method`. Now `unknown`, cause
/// `malformed`, saying what was not observed; `jsonrpc.error-body` keeps its low warning.
#[tokio::test]
async fn a_400_whose_json_rpc_error_could_not_be_read_is_unknown() {
    const CUT: &str =
        r#"{"jsonrpc":"2.0","id":109,"error":{"code":-32022,"data":{"requested":"1999-01-01","su"#;
    const BATCH: &str = r#"[{"jsonrpc":"2.0","id":109,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"1999-01-01","supported":["2026-07-28"]}}}]"#;
    for body in [CUT, BATCH] {
        let r = run(Mode::Answer(&[109], Canned::Json400(body))).await;
        let v = check(&r, CheckId::VersionUnsupported);
        assert_seen_all(
            v,
            (v.outcome, v.severity, v.cause),
            (Outcome::Unknown, None, Some(Cause::Malformed)),
            &[
                "1999-01-01: 400 application/json",
                "the answer could not be read as a JSON-RPC error",
                "(JSON-RPC -32022 expected) was not observed",
                "nor were error.data.supported and error.data.requested",
                "; 2099-12-31: 400",
            ],
        );
        let body = check(&r, CheckId::JsonrpcErrorBody);
        assert_seen(
            body,
            (body.outcome, body.severity),
            (Outcome::Warn, Some(Severity::Low)),
            "bare 4xx without a JSON-RPC body (an intermediary answering?): version.unsupported: 400",
        );
        only_problems(
            &r,
            &[CheckId::JsonrpcErrorBody],
            "version refusal unreadable",
        );
    }
    let r = run(Mode::Answer(
        &[103],
        Canned::Json400(r#"{"error":{"code":-32020,"#),
    ))
    .await;
    let c = check(&r, CheckId::HeadersMissingMethod);
    assert_seen_all(
        c,
        (c.outcome, c.severity, c.cause),
        (Outcome::Unknown, None, Some(Cause::Malformed)),
        &[
            "server/discover: 400 application/json",
            "(JSON-RPC -32020 expected) was not observed",
            "; tools/list: 400",
        ],
    );
}
