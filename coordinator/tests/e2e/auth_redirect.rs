//! A redirect only authenticated requests get (red team round 9, defect 6), through
//! `vantage check`: the endpoint answers 401 with a Bearer challenge (and complete metadata)
//! without a token, and 307 with one (a slash redirect behind an auth middleware, or a
//! gateway sending logged-in traffic to another host). The agent's side is
//! `agent/tests/auth_redirect.rs`; here the merged decision and the exit code: never `pass`
//! (redirects are never followed, so nothing past the boundary was observed), and another
//! origin is `redirect.cross-host` (high: clients drop `Authorization` there).

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Json;
use serde_json::{json, Value};

use crate::support::{check_json_with_token, only_region_check, Served};

const TOKEN: &str = "rD5mK8qW2xZ7pN4vB9tL3hJ6";

/// The front: `/mcp` answers 401 + challenge without a token and 307 to `location` with one;
/// its protected resource and authorization server metadata are complete and conformant.
async fn front(location: &'static str) -> Served {
    Served::start(move |addr| {
        let base = format!("http://{addr}");
        let prm = json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                         "scopes_supported": ["mcp"], "bearer_methods_supported": ["header"]});
        let asm = json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                         "token_endpoint": format!("{base}/token"), "response_types_supported": ["code"],
                         "code_challenge_methods_supported": ["S256"]});
        let challenge = format!(
            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
        );
        axum::Router::new()
            .route(
                "/mcp",
                any(move |headers: HeaderMap| async move {
                    let r: Response = if headers.contains_key("authorization") {
                        (StatusCode::TEMPORARY_REDIRECT, [("location", location)]).into_response()
                    } else {
                        (
                            StatusCode::UNAUTHORIZED,
                            [("www-authenticate", challenge)],
                            Json(json!({"error": "unauthorized"})),
                        )
                            .into_response()
                    };
                    r
                }),
            )
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(move || async move { Json(prm) }),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(move || async move { Json(asm) }),
            )
    })
    .await
}

/// `vantage check URL --token-env VT -f json`: the exit code and the report.
async fn check(url: &str) -> (Option<i32>, Value) {
    check_json_with_token(url, TOKEN).await
}

fn finding_ids(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn an_authenticated_only_redirect_never_passes_through_vantage_check() {
    // (Location, exit code, decision, redirect.none's severity, words it observed, the
    // finding that names it)
    let cases = [
        (
            "/mcp/",
            4,
            "unknown",
            "medium",
            "with the credential: 307 to /mcp/",
            ("redirect.none", "medium"),
        ),
        (
            "http://mcp.vantage-probe.invalid/mcp",
            2,
            "blocked",
            "high",
            "another origin",
            ("redirect.cross-host", "high"),
        ),
    ];
    for (location, code, decision, severity, words, finding) in cases {
        let served = front(location).await;
        let (exit, report) = check(&served.url()).await;
        let findings = finding_ids(&report);
        assert_eq!(
            (exit, report["decision"].as_str()),
            (Some(code), Some(decision)),
            "{location}: {findings:?}"
        );
        let (outcome, sev, observed) = only_region_check(&report, "redirect.none");
        assert_eq!(
            (outcome.as_str(), sev.as_str()),
            ("fail", Some(severity)),
            "{location}: {observed}"
        );
        assert!(observed.contains(words), "{location}: {observed}");
        let wanted = (finding.0.to_string(), finding.1.to_string());
        assert!(findings.contains(&wanted), "{location}: {findings:?}");
        // Nothing past the boundary was seen: never "not MCP" (the redirect says nothing
        // about MCP), and the boundary itself was judged from the 401.
        let (era, _, era_seen) = only_region_check(&report, "era.detect");
        assert_eq!(era, "skip", "{location}: {era_seen}");
        assert!(
            era_seen.contains("redirects authenticated requests"),
            "{era_seen}"
        );
        assert!(
            !findings.iter().any(|(id, _)| id == "era.detect"),
            "{findings:?}"
        );
        let (challenge, _, seen) = only_region_check(&report, "auth.challenge");
        assert_eq!(challenge, "pass", "{seen}");
    }
}
