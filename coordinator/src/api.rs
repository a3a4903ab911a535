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
    pub metrics_require_auth: bool,
    pub registry: Arc<Registry>,
    /// The check lifecycle: what a request may name, dispatch, the store, the metrics.
    pub checks: Arc<Checks>,
}

pub use crate::rate::RateLimit;

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
    fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        let mut ok = false;
        for t in self.tokens.read().unwrap_or_else(|p| p.into_inner()).iter() {
            ok |= bool::from(t.expose_secret().as_bytes().ct_eq(presented.as_bytes()));
        }
        if ok && !presented.is_empty() {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid `Authorization: Bearer` API token is required",
            ))
        }
    }
}

async fn create(
    State(api): State<Arc<Api>>,
    headers: HeaderMap,
    Query(q): Query<CheckQuery>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    api.authorize(&headers)?;
    let wait = match q.wait.as_deref() {
        Some(w) => Some(duration("wait", w, MAX_DEADLINE)?),
        None => None,
    };
    let req = validate(&api, body)?;
    if let Err(wait) = api.rate.take(&req.target) {
        let secs = wait.as_secs().max(1);
        let mut r = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!(
                "at most {} on-demand checks of {} per minute; retry in {secs} s",
                api.rate.per_minute(),
                req.target
            ),
        )
        .into_response();
        if let Ok(v) = header::HeaderValue::from_str(&secs.to_string()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return Ok(r);
    }
    let (id, mut done) = api.checks.start(req);
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

async fn fetch(
    State(api): State<Arc<Api>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    api.authorize(&headers)?;
    match api.checks.store.get(&id) {
        Some(report) => Ok(Json(report).into_response()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no report `{id}` (finished reports are kept for a bounded time)"),
        )),
    }
}

async fn agents(State(api): State<Arc<Api>>, headers: HeaderMap) -> Result<Response, ApiError> {
    api.authorize(&headers)?;
    Ok(Json(Agents {
        agents: api.registry.agents(),
    })
    .into_response())
}

async fn metrics(State(api): State<Arc<Api>>, headers: HeaderMap) -> Result<Response, ApiError> {
    if api.metrics_require_auth {
        api.authorize(&headers)?;
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
