//! Graceful shutdown of `vantage serve` (SIGTERM on every Kubernetes rollout), bounded by
//! `server.drain_timeout`:
//! 1. readiness turns 503 and new on-demand checks get 503 `shutting_down`; scheduled runs stop;
//! 2. running checks get up to the drain timeout to finish, and the API stays up a moment
//!    after they did so that their waiting clients collect the reports;
//! 3. every agent is told to reconnect (`Reconnect`) and its stream ends, so agents go
//!    unready at once and dial the replacement with their shortest backoff;
//! 4. the listeners close; connections still open a few seconds later are cut.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::api::types::{ErrorBody, Health};
use crate::api::Api;

/// How long the listeners get to close once agents are gone, before connections are cut.
pub const LISTENER_GRACE: Duration = Duration::from_secs(3);

/// How long the API stays up after the drain's running checks finished, so that a client
/// waiting on one (`vantage check --coordinator` polls every 150 ms) collects its report
/// instead of meeting a closed port (fresh eyes round 14, item 2: a finished check read as
/// "the regions did not report").
pub const COLLECT_GRACE: Duration = Duration::from_secs(1);

/// Middleware: while draining, `/readyz` says so and new checks are refused with a retry hint.
pub async fn guard(State(draining): State<Arc<AtomicBool>>, req: Request, next: Next) -> Response {
    if draining.load(Ordering::SeqCst) {
        if req.uri().path() == "/readyz" {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(Health::new("draining")),
            )
                .into_response();
        }
        if req.method() == Method::POST && req.uri().path() == "/v1/checks" {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "5")],
                Json(ErrorBody::new(
                    "shutting_down",
                    "the coordinator is shutting down; retry in a few seconds (its replacement takes over)",
                )),
            )
                .into_response();
        }
    }
    next.run(req).await
}

/// Steps 2 and 3: wait for running checks (at most `timeout`), then send agents away.
pub async fn drain(api: &Api, timeout: Duration) {
    let running = api.checks.store.running();
    tracing::info!(
        running_checks = running,
        agents = api.registry.agents().len(),
        "shutting down: finishing running checks for at most {} (server.drain_timeout)",
        humantime::format_duration(timeout)
    );
    let deadline = tokio::time::Instant::now() + timeout;
    while api.checks.store.running() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let left = api.checks.store.running();
    if left > 0 {
        tracing::warn!(
            running_checks = left,
            "drain timeout: {left} check(s) still running end now; their missing regions are named in their reports"
        );
    } else if running > 0 {
        // The checks finished within the drain: their clients collect the reports first.
        let grace =
            COLLECT_GRACE.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
        tokio::time::sleep(grace).await;
    }
    let agents = api.registry.close_all("the coordinator is shutting down");
    tracing::info!(
        agents,
        "told {agents} agent(s) to reconnect; closing the listeners"
    );
}
