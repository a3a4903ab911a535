//! Red-team round 3, defects 1 and 2, through the `vantage` command: a server whose
//! `server/discover` works and whose `initialize` is answered with a bare 500 or never
//! answered, and one whose `server/discover` is never answered beside a working
//! `initialize`. Neither era was fully observed: the decision is `unknown` (exit 4) with
//! `probe.incomplete`, never "modern (2026-07-28 only)" passed nor "not MCP" blocked. The
//! front (on loopback) passes everything else through to a clean fixture. The engine's
//! verdicts per check are `agent/tests/era_front.rs`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use vantage_fixture::Fixture;

use crate::evidence_support::{era_unknown_exit_4, finding, finding_ids};
use crate::support::{front_before, head_of, pass_on, streamed, vantage_async, Received};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// initialize: 500 with an empty body; discover works.
    Init500,
    /// initialize: never answered; discover works.
    InitSilent,
    /// server/discover: never answered; initialize works (2025-11-25).
    DiscoverSilent,
}

type Front = crate::support::Front<Mode>;

/// The fixture's answer, streamed through, unless the mode changes this request.
async fn handle(State(f): State<Arc<Front>>, r: Received) -> Response {
    let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    match (msg.get("method").and_then(Value::as_str), f.mode) {
        (Some("initialize"), Mode::Init500) => {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        (Some("initialize"), Mode::InitSilent)
        | (Some("server/discover"), Mode::DiscoverSilent) => return std::future::pending().await,
        _ => {}
    }
    let Some(resp) = pass_on(&f.client, &f.upstream, r).await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    head_of(&resp, str::to_string).body(streamed(resp)).unwrap()
}

#[tokio::test]
async fn an_era_not_fully_observed_is_unknown_exit_4() {
    // A clean dual-era server behind the front: a control, everything but the one answer
    // the mode changes is conformant.
    let fixture = Fixture::start(&[]).await.unwrap();
    for mode in [Mode::Init500, Mode::InitSilent, Mode::DiscoverSilent] {
        let server = front_before(&fixture, mode, handle).await;
        let out = vantage_async(
            [
                "check",
                &server.url(),
                "--check-timeout",
                "1s",
                "-f",
                "json",
            ]
            .map(String::from)
            .to_vec(),
        )
        .await;
        drop(server);
        let report = era_unknown_exit_4(&out, &format!("{mode:?}"));
        let ids = finding_ids(&report);
        assert!(
            !ids.iter().any(|id| id == "era.detect"),
            "{mode:?}: {ids:?}"
        );
        let evidence = finding(&report, "probe.incomplete")["evidence"].to_string();
        let seen = match mode {
            Mode::Init500 => "initialize: a server error without an MCP answer: answered 500",
            Mode::InitSilent => "initialize: not answered (accepted the connection",
            Mode::DiscoverSilent => "the server speaks MCP: initialize (2025-11-25) works",
        };
        assert!(evidence.contains(seen), "{mode:?}: {evidence}");
        assert!(
            !report.to_string().contains("2026-07-28 only"),
            "{mode:?}: {report}"
        );
    }
}
