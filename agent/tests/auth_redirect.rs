//! A redirect only authenticated requests get (red team round 9, defect 6): a slash redirect
//! behind an auth middleware (`/mcp` -> `/mcp/`), or a gateway sending logged-in traffic to
//! another host. Without a token the endpoint answers 401; with one, 307. That answer is
//! `redirect.none` (or `redirect.cross-host`'s high case), never "not MCP" (`era.detect`
//! high with a fix about the URL path), and nothing past it was observed.

// A test's setup: it unwraps.
#![allow(clippy::unwrap_used)]

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_agent::{Engine, ProbeOptions};

#[path = "shared/probe.rs"]
mod shared;

async fn front(location: &'static str) -> (u16, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().route(
        "/mcp",
        post(move |headers: HeaderMap| async move {
            let r: Response = if headers.contains_key("authorization") {
                (StatusCode::TEMPORARY_REDIRECT, [("location", location)]).into_response()
            } else {
                (
                    StatusCode::UNAUTHORIZED,
                    [("www-authenticate", "Bearer resource_metadata=\"http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp\"")],
                )
                    .into_response()
            };
            r
        }),
    );
    let (addr, task) = shared::serve_app(app).await;
    (addr.port(), task)
}

async fn run(port: u16) -> vantage_agent::model::RegionResult {
    let mut opts = ProbeOptions::default();
    opts.credentials.token = Some("zq81Kx0pLm2Vt7Rw9Yb4Qd6Hn3Jc5Gf".to_string().into());
    opts.listing = None;
    let job = shared::job(&format!("http://127.0.0.1:{port}/mcp"), &opts);
    Engine::new(opts).unwrap().run_job(&job).await
}

#[tokio::test]
async fn a_redirect_of_authenticated_requests_is_a_redirect_not_a_missing_server() {
    for (location, severity, cause, words) in [
        (
            "/mcp/",
            Severity::Medium,
            Cause::SameHost,
            "with the credential: 307 to /mcp/",
        ),
        (
            "http://mcp.vantage-probe.invalid/mcp",
            Severity::High,
            Cause::CrossHost,
            "another origin",
        ),
    ] {
        let (port, task) = front(location).await;
        let r = run(port).await;
        task.abort();
        // The credential was given and sent: never "no credential given" (exit 3).
        assert!(r.protected && r.authenticated, "{location}");
        let c = r.check(CheckId::RedirectNone).unwrap();
        shared::assert_seen(
            c,
            (c.outcome, c.severity, c.cause),
            (Outcome::Fail, Some(severity), Some(cause)),
            words,
        );
        let era = r.check(CheckId::EraDetect).unwrap();
        shared::assert_seen(
            era,
            era.outcome,
            Outcome::Skip,
            "redirects authenticated requests",
        );
    }
}
