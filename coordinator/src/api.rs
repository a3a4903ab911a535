//! The HTTP API (`checks.md` section 7): on-demand checks, reports, agents, metrics and
//! health. Every `/v1` route requires a bearer token from the configuration; bad input gets
//! a 4xx with `{"error": {"code", "message"}}`. HTTP only: routes, authentication, the rate
//! limit, validation and error mapping; a valid check is started by `checks`.

pub mod types;
mod validate;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;

use crate::checks::Checks;
use crate::fleet::Registry;
use types::{Accepted, Agents, CheckQuery, ErrorBody, Health};
use validate::{duration, validate, MAX_DEADLINE};

/// Everything the routes share.
#[derive(Debug)]
pub struct Api {
    /// API tokens change on a configuration reload (credentials and regions too, in `checks`).
    pub tokens: RwLock<Vec<SecretString>>,
    pub default_deadline: Duration,
    pub max_body_bytes: usize,
    pub rate: RateLimit,
    /// The cap on on-demand checks running at once, whatever their targets.
    pub in_flight: InFlight,
    pub metrics_require_auth: bool,
    pub registry: Arc<Registry>,
    /// The check lifecycle: what a request may name, dispatch, the store, the metrics.
    pub checks: Arc<Checks>,
    /// How often a refused API token was logged: at most one line per
    /// [`AUTH_LOG_EVERY`], each saying how many were refused since the last.
    pub auth_log: std::sync::Mutex<AuthLog>,
}

/// The log of refused API tokens, rate-limited (a client retrying a wrong token in a loop
/// must not flood the log); every refusal is counted in `vantage_api_auth_failures_total`.
#[derive(Debug, Default)]
pub struct AuthLog {
    last: Option<std::time::Instant>,
    /// Refusals not logged since the last line.
    unlogged: u64,
}

impl AuthLog {
    /// A refusal at `now`: `Some(n)` when it is logged (`n` refusals were not logged since
    /// the last line), `None` when a line went out less than [`AUTH_LOG_EVERY`] ago.
    fn admit(&mut self, now: std::time::Instant) -> Option<u64> {
        if self
            .last
            .is_some_and(|t| now.saturating_duration_since(t) < AUTH_LOG_EVERY)
        {
            self.unlogged += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.unlogged))
    }
}

/// At most one log line per this long for refused API tokens.
pub const AUTH_LOG_EVERY: Duration = Duration::from_secs(10);

/// The peer of an API request, when the server passed it (`into_make_service_with_connect_info`).
type Peer = Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>;

pub use crate::rate::{InFlight, RateLimit};

/// A refusal with its JSON body.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, Json(ErrorBody::new(self.code, self.message))).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"vantage\""),
            );
        }
        r
    }
}

pub fn router(api: Arc<Api>) -> Router {
    let limit = api.max_body_bytes;
    Router::new()
        .route("/v1/checks", post(create))
        .route("/v1/checks/{id}", get(fetch))
        .route("/v1/agents", get(agents))
        .merge(monitoring_routes())
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "no such route; see GET /v1/checks/{id}, POST /v1/checks, GET /v1/agents",
            )
        })
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(api)
}

/// `/metrics`, `/healthz` and `/readyz`: on the API port, and alone on `server.metrics_listen`.
fn monitoring_routes() -> Router<Arc<Api>> {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { Json(Health::new("ok")) }))
        .route("/readyz", get(|| async { Json(Health::new("ready")) }))
}

/// The monitoring routes alone, for `server.metrics_listen`: a port a monitoring namespace
/// may reach while the API stays closed.
pub fn monitoring_router(api: Arc<Api>) -> Router {
    monitoring_routes()
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "the metrics port serves GET /metrics, /healthz and /readyz; the API is on server.api_listen",
            )
        })
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(api)
}

/// A known path with another method: JSON like every other error; axum adds `Allow`.
async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{method} is not served on {}; the Allow header lists the methods that are",
            uri.path()
        ),
    )
}

impl Api {
    fn authorize(&self, headers: &HeaderMap, peer: &Peer, path: &str) -> Result<(), ApiError> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(vantage_agent::credentials::bearer)
            .unwrap_or("");
        let mut ok = false;
        for t in self.tokens.read().unwrap_or_else(|p| p.into_inner()).iter() {
            ok |= bool::from(t.expose_secret().as_bytes().ct_eq(presented.as_bytes()));
        }
        if ok && !presented.is_empty() {
            Ok(())
        } else {
            let reason = if presented.is_empty() {
                "missing"
            } else {
                "invalid"
            };
            self.refused_token(reason, peer, path);
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid `Authorization: Bearer` API token is required",
            ))
        }
    }

    /// Count a refused API token, and log it unless a line went out within
    /// [`AUTH_LOG_EVERY`] (the next line says how many were not logged). The token presented
    /// is never logged.
    fn refused_token(&self, reason: &'static str, peer: &Peer, path: &str) {
        self.checks.metrics.api_auth_failed(reason);
        let admitted = self
            .auth_log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .admit(std::time::Instant::now());
        let Some(unlogged) = admitted else {
            return;
        };
        let peer = peer
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |p| p.0 .0.to_string());
        let token = if reason == "missing" {
            "no `Authorization: Bearer` token"
        } else {
            "a token no server.api_tokens entry has"
        };
        let since = if unlogged > 0 {
            format!("; {unlogged} more refused since the last such line")
        } else {
            String::new()
        };
        tracing::warn!(
            %peer,
            path = %path,
            reason,
            "API request refused (401): {token}{since} (at most one such line per {}s; vantage_api_auth_failures_total counts every refusal)",
            AUTH_LOG_EVERY.as_secs()
        );
    }
}

async fn create(
    State(api): State<Arc<Api>>,
    peer: Peer,
    headers: HeaderMap,
    Query(q): Query<CheckQuery>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    api.authorize(&headers, &peer, "/v1/checks")?;
    json_body(&headers)?;
    let wait = match q.wait.as_deref() {
        Some(w) => Some(duration("wait", w, MAX_DEADLINE)?),
        None => None,
    };
    let req = validate(&api, body)?;
    // The cap on checks in flight first: a check it refuses takes nothing from its target's
    // budget. Dropped on any refusal below, so a refused request holds no slot.
    let slot = match api.in_flight.take(req.deadline) {
        Ok(slot) => slot,
        Err(wait) => {
            let secs = wait.as_secs().max(1);
            let max = api.in_flight.max();
            return Ok(retry_after(
                ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "busy",
                    format!(
                        "{max} on-demand checks are running, the most server.max_checks_in_flight ({max}) allows at once, whatever their targets; nothing was started: retry in {secs} s (the first running check's deadline)"
                    ),
                ),
                secs,
            ));
        }
    };
    if let Err(wait) = api.rate.take(&req.target) {
        let secs = wait.as_secs().max(1);
        return Ok(retry_after(
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "at most {} on-demand checks of {} per minute; retry in {secs} s",
                    api.rate.per_minute(),
                    req.target
                ),
            ),
            secs,
        ));
    }
    let (id, mut done) = api.checks.start(req);
    // The slot is held until the check finishes (or its report is gone).
    let mut finished = done.clone();
    tokio::spawn(async move {
        let _ = finished.wait_for(|d| *d).await;
        drop(slot);
    });
    if let Some(wait) = wait {
        let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
        if *done.borrow() {
            if let Some(report) = api.checks.store.get(&id) {
                return Ok((StatusCode::OK, Json(report)).into_response());
            }
        }
    }
    let location = format!("/v1/checks/{id}");
    Ok((
        StatusCode::ACCEPTED,
        [(header::LOCATION, location)],
        Json(Accepted { id }),
    )
        .into_response())
}

/// A refusal with `Retry-After: secs`.
fn retry_after(e: ApiError, secs: u64) -> Response {
    let mut r = e.into_response();
    if let Ok(v) = header::HeaderValue::from_str(&secs.to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// The body of `POST /v1/checks` is JSON: a `Content-Type` that says otherwise (`text/plain`,
/// the `application/x-www-form-urlencoded` that `curl -d` sends) is a 415 naming the fix.
/// `application/json` with parameters (`; charset=utf-8`) and a structured `+json` type are
/// JSON; so is a body sent without
/// a `Content-Type`, which claims no other type (the JSON parser then judges it).
fn json_body(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Ok(());
    };
    let media = value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    // A structured `+json` type (`application/vnd.api+json`) is JSON too (fresh eyes round
    // 17, nit 1: it was "not JSON").
    if vantage_agent::probe::auth::metadata::is_json_media(&media.to_ascii_lowercase()) {
        return Ok(());
    }
    // Shown as sent when short and printable; never more than a media type's worth.
    let shown =
        if !media.is_empty() && media.len() <= 80 && media.bytes().all(|b| b.is_ascii_graphic()) {
            format!("`{media}`")
        } else {
            "this Content-Type".to_string()
        };
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        format!(
            "{shown} is not JSON; send the body as JSON with `Content-Type: application/json` (curl: --json '{{\"target\": …}}', or -H 'Content-Type: application/json' with -d)"
        ),
    ))
}

async fn fetch(
    State(api): State<Arc<Api>>,
    peer: Peer,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    api.authorize(&headers, &peer, "/v1/checks/{id}")?;
    match api.checks.store.get(&id) {
        Some(report) => Ok(Json(report).into_response()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no report `{id}` (finished reports are kept for a bounded time)"),
        )),
    }
}

async fn agents(
    State(api): State<Arc<Api>>,
    peer: Peer,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    api.authorize(&headers, &peer, "/v1/agents")?;
    Ok(Json(Agents {
        agents: api.registry.agents(),
    })
    .into_response())
}

async fn metrics(
    State(api): State<Arc<Api>>,
    peer: Peer,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if api.metrics_require_auth {
        api.authorize(&headers, &peer, "/metrics")?;
    }
    // Streamed a chunk at a time: a scrape of many targets never holds the whole text.
    let chunks = api
        .checks
        .metrics
        .render_chunks(&api.registry, &api.checks.regions());
    let body = axum::body::Body::from_stream(futures::StreamExt::map(
        chunks,
        Ok::<String, std::convert::Infallible>,
    ));
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response())
}

#[cfg(test)]
mod auth_log_tests {
    use super::{AuthLog, AUTH_LOG_EVERY};
    use std::time::{Duration, Instant};

    /// One line per window, and the next line counts what the window swallowed: a client
    /// retrying a wrong token in a loop cannot flood the log, and no refusal goes unsaid.
    #[test]
    fn refusals_are_logged_once_per_window_with_the_count_of_the_rest() {
        let mut log = AuthLog::default();
        let t0 = Instant::now();
        assert_eq!(log.admit(t0), Some(0));
        for i in 1..=1999u32 {
            assert_eq!(log.admit(t0 + Duration::from_millis(u64::from(i))), None);
        }
        assert_eq!(log.admit(t0 + AUTH_LOG_EVERY), Some(1999));
        assert_eq!(log.admit(t0 + AUTH_LOG_EVERY), None);
        assert_eq!(log.admit(t0 + AUTH_LOG_EVERY * 3), Some(1));
    }
}
