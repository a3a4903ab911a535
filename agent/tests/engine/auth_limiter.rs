//! A limiter on failed tokens in front of a protected server (fresh eyes round 17, D8), and
//! the authorization layer's 403 beside a protected discovery (nit 7).
//!
//! D8: the random tokens go to every request that asked for authorization at once; a
//! correctly protected server whose limiter answers the 2nd failed token within a window
//! 429 came out `unknown` (exit 4) on every run. A token probe answered 429 (or 503 with
//! `Retry-After`) is now asked again once, after the others, one at a time, after its pause
//! (`Retry-After`, capped; a short fixed pause without one); still rate limited, it stays
//! `unknown`, never a pass; let through when asked again, it is critical.
//!
//! Nit 7: a token-less `tools/list` (or `tools/call`) answered 403 with a Bearer challenge
//! (`error="insufficient_scope"`) beside a `server/discover` answered 401 passed
//! `auth.challenge`; the same answer on `server/discover` fails it high. One rule now.
//!
//! Each case puts a small proxy on loopback in front of the fixture; the proxy decides by
//! what it saw (counts, not clocks, except the limiter's window, which the probe's pauses
//! always exceed) and nothing here asserts on time.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName};
use axum::response::Response;
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult, Severity};
use vantage_agent::ProbeOptions;
use vantage_fixture::{Fault, Fixture};

use crate::auth_paths::{random_token_accepted, random_token_refused};
use crate::run::{all_tokens, assert_seen_all, check, options, run_with};

/// What the proxy does in front of the fixture.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// A failed token (a request with `Authorization` the fixture refused, 401/403) within
    /// `window` of the previous failed token is answered 429 instead, with `Retry-After`
    /// when given: a limiter sized for people.
    Limiter {
        window: Duration,
        retry_after: Option<&'static str>,
    },
    /// Every failed token is answered `status` (with `Retry-After` when given): a limiter
    /// that never lets a failed token through.
    Always {
        status: u16,
        retry_after: Option<&'static str>,
    },
    /// A request with a token other than the fixture's valid one is answered 429 the first
    /// time it is seen (the same token and body), then `second`: forwarded (0) or that
    /// status.
    FirstLimited { second: u16 },
    /// A token-less request for `method` is answered 403 with a Bearer challenge carrying
    /// `error="insufficient_scope"`, or, `bare`, a 403 without any challenge.
    NoToken403 { method: &'static str, bare: bool },
}

struct Proxy {
    mode: Mode,
    upstream: SocketAddr,
    client: reqwest::Client,
    last_failed: Mutex<Option<Instant>>,
    seen: Mutex<HashSet<(String, Vec<u8>)>>,
}

/// The proxy on loopback and the fixture behind it; both stop when dropped.
struct Front {
    url: String,
    _stop: oneshot::Sender<()>,
    _fixture: Fixture,
}

const HOP: [&str; 4] = ["host", "content-length", "transfer-encoding", "connection"];

fn answer(status: u16, headers: &[(&str, String)]) -> Response {
    let mut b = Response::builder().status(status);
    for (k, v) in headers {
        b = b.header(*k, v.as_str());
    }
    b.body(Body::empty()).unwrap()
}

fn limited(status: u16, retry_after: Option<&str>) -> Response {
    let headers: Vec<(&str, String)> = retry_after
        .map(|r| ("retry-after", r.to_string()))
        .into_iter()
        .collect();
    answer(status, &headers)
}

fn rpc_method(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("method")?.as_str().map(str::to_string)
}

async fn forward(
    p: &Proxy,
    method: axum::http::Method,
    headers: &HeaderMap,
    path: &str,
    body: Vec<u8>,
) -> Response {
    let mut req = p
        .client
        .request(method, format!("http://{}{path}", p.upstream))
        .body(body);
    for (k, v) in headers {
        if !HOP.contains(&k.as_str()) {
            req = req.header(k, v);
        }
    }
    let Ok(mut resp) = req.send().await else {
        return answer(502, &[]);
    };
    let mut b = Response::builder().status(resp.status().as_u16());
    for (k, v) in resp.headers() {
        if !HOP.contains(&k.as_str()) {
            b = b.header(
                HeaderName::from_bytes(k.as_str().as_bytes()).unwrap(),
                v.as_bytes(),
            );
        }
    }
    // Streamed through (a listen stream stays open until the client goes).
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(8);
    tokio::spawn(async move {
        while let Ok(Some(chunk)) = resp.chunk().await {
            if tx.send(Ok(chunk)).await.is_err() {
                break;
            }
        }
    });
    b.body(Body::from_stream(
        tokio_stream::wrappers::ReceiverStream::new(rx),
    ))
    .unwrap()
}

async fn handle(State(p): State<Arc<Proxy>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = to_bytes(body, 1 << 20).await.unwrap_or_default().to_vec();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/".to_string(), |pq| pq.as_str().to_string());
    let auth = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let valid = auth.as_deref() == Some(&format!("Bearer {}", vantage_fixture::FIXTURE_TOKEN));
    match (p.mode, &auth) {
        (Mode::NoToken403 { method, bare }, None)
            if rpc_method(&body).as_deref() == Some(method) =>
        {
            let www = format!(
                "Bearer error=\"insufficient_scope\", scope=\"mcp:read mcp:write\", resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"",
                p.upstream
            );
            let headers = if bare {
                vec![]
            } else {
                vec![("www-authenticate", www)]
            };
            return answer(403, &headers);
        }
        (Mode::FirstLimited { second }, Some(a)) if !valid => {
            let first = p.seen.lock().unwrap().insert((a.clone(), body.clone()));
            if first {
                return limited(429, None);
            }
            if second != 0 {
                return answer(second, &[]);
            }
        }
        _ => {}
    }
    let counts = matches!(p.mode, Mode::Limiter { .. } | Mode::Always { .. });
    let resp = forward(&p, parts.method, &parts.headers, &path, body).await;
    if !counts || auth.is_none() || !matches!(resp.status().as_u16(), 401 | 403) {
        return resp;
    }
    // A failed token.
    match p.mode {
        Mode::Always {
            status,
            retry_after,
        } => limited(status, retry_after),
        Mode::Limiter {
            window,
            retry_after,
        } => {
            let now = Instant::now();
            let mut last = p.last_failed.lock().unwrap();
            let within = last.is_some_and(|l| now.duration_since(l) < window);
            *last = Some(now);
            if within {
                limited(429, retry_after)
            } else {
                resp
            }
        }
        _ => resp,
    }
}

/// The fixture with `faults` behind a proxy in `mode`, both on loopback.
async fn front(faults: &[Fault], mode: Mode) -> Front {
    let fixture = Fixture::start(faults).await.unwrap();
    let proxy = Arc::new(Proxy {
        mode,
        upstream: fixture.addr,
        client: reqwest::Client::builder()
            // Plain http on loopback only; reqwest wants a TLS configuration all the same.
            .use_preconfigured_tls(
                rustls::ClientConfig::builder_with_provider(Arc::new(
                    rustls::crypto::ring::default_provider(),
                ))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth(),
            )
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .unwrap(),
        last_failed: Mutex::new(None),
        seen: Mutex::new(HashSet::new()),
    });
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let app = Router::new().fallback(handle).with_state(proxy);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
    });
    Front {
        url: format!("http://{addr}/mcp"),
        _stop: tx,
        _fixture: fixture,
    }
}

/// A run through `mode` in front of the fixture with `faults`, with the fixture's
/// credentials (every one) or none, and a deadline of `deadline`.
async fn through(
    faults: &[Fault],
    mode: Mode,
    with_token: bool,
    deadline: Duration,
) -> RegionResult {
    let f = front(faults, mode).await;
    let mut opts: ProbeOptions = if with_token { all_tokens() } else { options() };
    opts.deadline = deadline;
    run_with(&f.url, opts).await
}

const DEADLINE: Duration = Duration::from_secs(10);

/// The limiter answers a failed token within 200 ms of the previous one 429 without
/// `Retry-After` (the probe pauses 250 ms before each second request, so each comes after
/// the window): the random tokens are refused everywhere, `auth.garbage-token` passes, and
/// with every credential so do the other token probes. It was `unknown` (the burst).
#[tokio::test]
async fn a_limiter_on_failed_tokens_without_retry_after_leaves_the_server_clean() {
    let mode = Mode::Limiter {
        window: Duration::from_millis(200),
        retry_after: None,
    };
    for with_token in [true, false] {
        let r = through(&[Fault::Protected], mode, with_token, DEADLINE).await;
        assert!(r.protected, "{with_token}");
        let g = random_token_refused(
            &r,
            &[
                "server/discover: ",
                "tools/list: 401",
                "tools/call: 401",
                "first answered 429",
                "asked again once, 250 ms later",
            ],
        );
        assert!(!g.observed.contains("rate limited"), "{}", g.observed);
        if with_token {
            for id in [CheckId::AuthWrongAudience, CheckId::AuthInsufficientScope] {
                let c = check(&r, id);
                assert_eq!(c.outcome, Outcome::Pass, "{id}: {}", c.observed);
            }
        }
    }
}

/// The same limiter saying `Retry-After: 1` (its window one second): each second request
/// waits it, and the random tokens are refused everywhere.
#[tokio::test]
async fn a_limiter_on_failed_tokens_with_retry_after_leaves_the_server_clean() {
    let mode = Mode::Limiter {
        window: Duration::from_secs(1),
        retry_after: Some("1"),
    };
    let r = through(&[Fault::Protected], mode, false, Duration::from_secs(30)).await;
    random_token_refused(
        &r,
        &[
            "tools/list: 401",
            "tools/call: 401",
            "asked again once, 1 s later",
        ],
    );
}

/// A limiter that answers every failed token 429 (or 503 with `Retry-After`), asked again
/// or not: whether the random token is refused was not observed: `unknown`, cause
/// other-reason, naming the rate limit and the second request; never a pass.
#[tokio::test]
async fn a_limiter_that_never_lets_a_failed_token_through_leaves_the_random_token_unknown() {
    for (status, retry_after, head) in [
        (429, None, "rate limited: answered 429"),
        (503, Some("0"), "unavailable: answered 503"),
    ] {
        for with_token in [true, false] {
            let r = through(
                &[Fault::Protected],
                Mode::Always {
                    status,
                    retry_after,
                },
                with_token,
                DEADLINE,
            )
            .await;
            unknown_for_other_reason(
                &r,
                CheckId::AuthGarbageToken,
                &[head, "whether the", "first answered", "asked again once"],
            );
            if with_token {
                unknown_for_other_reason(
                    &r,
                    CheckId::AuthWrongAudience,
                    &[head, "asked again once"],
                );
            }
        }
    }
}

/// A 503 without `Retry-After` is not asked again (it says neither when nor that it is a
/// limit): `unknown` as before, and nothing says it was asked twice.
#[tokio::test]
async fn a_503_without_retry_after_is_not_asked_again_and_stays_unknown() {
    let mode = Mode::Always {
        status: 503,
        retry_after: None,
    };
    let r = through(&[Fault::Protected], mode, false, DEADLINE).await;
    let g = unknown_for_other_reason(
        &r,
        CheckId::AuthGarbageToken,
        &["unavailable: answered 503"],
    );
    assert!(!g.observed.contains("asked again"), "{}", g.observed);
}

/// The random token rate limited at first and let through (served) when asked again:
/// critical, token accepted, naming the second request (it was `unknown`: never asked
/// again). With the second request unanswered for another reason (a gateway's 502) it is
/// `unknown`, never a pass.
#[tokio::test]
async fn a_random_token_let_through_when_asked_again_is_critical() {
    for with_token in [true, false] {
        let r = through(
            &[Fault::Protected, Fault::AuthGarbageAccepted],
            Mode::FirstLimited { second: 0 },
            with_token,
            DEADLINE,
        )
        .await;
        let g = random_token_accepted(&r, "server/discover: 200");
        assert!(
            g.observed.contains("first answered 429"),
            "{with_token}: {}",
            g.observed
        );
        let r = through(
            &[Fault::Protected],
            Mode::FirstLimited { second: 502 },
            with_token,
            DEADLINE,
        )
        .await;
        unknown_for_other_reason(
            &r,
            CheckId::AuthGarbageToken,
            &["a gateway answered 502", "first answered 429"],
        );
    }
}

/// Nit 7: beside a protected discovery, a token-less tools/list or tools/call answered 403
/// with `WWW-Authenticate: Bearer error="insufficient_scope"` fails `auth.challenge` high
/// naming the request, as the same answer on server/discover does (it passed, unnamed);
/// the random token still goes there (the authorization layer answered). A bare 403 there
/// is no authorization layer's answer: not observed, the random token `unknown`, and
/// `auth.challenge` passes on discovery's own challenge.
#[tokio::test]
async fn a_403_to_a_token_less_request_beside_a_protected_discovery_fails_the_challenge() {
    for method in ["tools/list", "tools/call"] {
        for with_token in [true, false] {
            let label = "server/discover's challenge: 401 with Bearer";
            let r = challenge_403(&[Fault::Protected], method, with_token, label).await;
            let sent = format!("{method}: 401");
            random_token_refused(&r, &[sent.as_str()]);

            let mode = Mode::NoToken403 { method, bare: true };
            let r = through(&[Fault::Protected], mode, with_token, DEADLINE).await;
            let c = check(&r, CheckId::AuthChallenge);
            assert_eq!(c.outcome, Outcome::Pass, "{}", c.observed);
            let why = format!("{method}: refused before the MCP layer: answered 403");
            unknown_for_other_reason(&r, CheckId::AuthGarbageToken, &[why.as_str()]);
        }
    }
}

/// Nit 7, behind a public discovery: the boundary is judged from the first request that
/// showed it (tools/list, 401: its challenge passes), and a later one the authorization
/// layer answered 403 without a token (tools/call, `insufficient_scope`) fails
/// `auth.challenge` high naming it (it passed). Without a credential tools/list alone is
/// asked: its own 403 fails, now naming tools/list.
#[tokio::test]
async fn a_403_to_a_token_less_request_behind_a_public_discovery_fails_the_challenge_naming_it() {
    let faults = [Fault::Protected, Fault::AuthDiscoverPublic];
    for (method, with_token, label) in [
        (
            "tools/call",
            true,
            "tools/list's challenge: 401 with Bearer",
        ),
        (
            "tools/list",
            false,
            "tools/list's challenge: 403 with Bearer",
        ),
    ] {
        let r = challenge_403(&faults, method, with_token, label).await;
        assert!(r.protected, "{method}");
    }
}

/// The check `id` of `r`, asserted `unknown` for another reason with each of `needles` in
/// what it observed.
fn unknown_for_other_reason(r: &RegionResult, id: CheckId, needles: &[&str]) -> CheckResult {
    let c = check(r, id);
    assert_seen_all(
        &c,
        (c.outcome, c.cause),
        (Outcome::Unknown, Some(Cause::OtherReason)),
        needles,
    );
    c
}

/// Runs `method` answered 403 with a Bearer `insufficient_scope` challenge when it carries no
/// token, and asserts `auth.challenge` fails high naming it, with `label` (whose challenge
/// the boundary was judged from).
async fn challenge_403(
    faults: &[Fault],
    method: &'static str,
    with_token: bool,
    label: &str,
) -> RegionResult {
    let mode = Mode::NoToken403 {
        method,
        bare: false,
    };
    let r = through(faults, mode, with_token, DEADLINE).await;
    let c = check(&r, CheckId::AuthChallenge);
    let head = format!("{method} (no Authorization) answered 403");
    assert_seen_all(
        &c,
        (c.outcome, c.severity),
        (Outcome::Fail, Some(Severity::High)),
        &[
            head.as_str(),
            "error=insufficient_scope",
            "403 where 401 is required",
            label,
        ],
    );
    r
}

/// Never past the job's deadline: a limiter answering every failed token 429 with
/// `Retry-After: 2` (ten token probes would wait 20 s) leaves the random token `unknown`
/// for the rate limit, the probes the deadline left no time for not asked again; the run is
/// not cut by its own deadline (no check `unknown` for cause deadline).
#[tokio::test]
async fn asking_again_never_runs_past_the_jobs_deadline() {
    let mode = Mode::Always {
        status: 429,
        retry_after: Some("2"),
    };
    let r = through(&[Fault::Protected], mode, false, Duration::from_secs(8)).await;
    let g = unknown_for_other_reason(
        &r,
        CheckId::AuthGarbageToken,
        &["rate limited: answered 429", "Retry-After: 2"],
    );
    let cut: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.cause == Some(Cause::Deadline))
        .map(|c| c.id)
        .collect();
    assert_eq!(cut, vec![], "{}", g.observed);
}
