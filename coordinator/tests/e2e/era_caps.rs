//! Red team round 6, #9 and #4, through the `vantage` command: a clean dual-era fixture
//! behind a front whose `initialize` answer never ends (the vantage's body cap stops the
//! read), or whose `server/discover` answer is a valid 5 MiB result. What the vantage did not
//! read whole was not observed: the decision is `unknown` (exit 4) with `probe.incomplete`,
//! never "modern (2026-07-28 only)" passed (exit 0) nor "legacy" with `era.legacy-only`
//! (review, exit 0). The engine's verdicts per check are `agent/tests/era_caps.rs`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use vantage_fixture::Fixture;

use crate::evidence_support::{era_unknown_exit_4, finding, finding_ids};
use crate::support::{front_before, head_of, pass_on, streamed, vantage_async, Received};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// initialize: 200 application/json whose body never ends; the rest passes through.
    InitEndless,
    /// server/discover: the fixture's result with a 5 MiB `instructions` string.
    DiscoverHuge,
}

type Front = crate::support::Front<Mode>;

async fn handle(State(f): State<Arc<Front>>, r: Received) -> Response {
    let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    if (method.as_deref(), f.mode) == (Some("initialize"), Mode::InitEndless) {
        let body = futures::stream::repeat_with(|| {
            Ok::<_, std::io::Error>(axum::body::Bytes::from_static(&[b'['; 8192]))
        });
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            axum::body::Body::from_stream(body),
        )
            .into_response();
    }
    let Some(resp) = pass_on(&f.client, &f.upstream, r).await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    if (method.as_deref(), f.mode) == (Some("server/discover"), Mode::DiscoverHuge) {
        let mut v: Value = resp.json().await.unwrap();
        v["result"]["instructions"] = json!("i".repeat(5 << 20));
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            v.to_string(),
        )
            .into_response();
    }
    head_of(&resp, str::to_string).body(streamed(resp)).unwrap()
}

#[tokio::test]
async fn an_answer_cut_by_the_vantages_cap_is_unknown_exit_4() {
    let fixture = Fixture::start(&[]).await.unwrap();
    for mode in [Mode::InitEndless, Mode::DiscoverHuge] {
        let server = front_before(&fixture, mode, handle).await;
        let out = vantage_async(
            ["check", &server.url(), "-f", "json"]
                .map(String::from)
                .to_vec(),
        )
        .await;
        drop(server);
        let report = era_unknown_exit_4(&out, &format!("{mode:?}"));
        for never in ["era.detect", "era.legacy-only", "discover.shape"] {
            assert!(
                finding_ids(&report).iter().all(|id| id != never),
                "{mode:?}: {report}"
            );
        }
        let evidence = finding(&report, "probe.incomplete")["evidence"].to_string();
        let seen = match mode {
            Mode::InitEndless => "initialize: not seen whole (answered 200 application/json",
            Mode::DiscoverHuge => {
                "server/discover was not seen whole (answered 200 application/json"
            }
        };
        assert!(
            evidence.contains(seen) && evidence.contains("body size cap"),
            "{mode:?}: {evidence}"
        );
        assert!(
            !report.to_string().contains("2026-07-28 only"),
            "{mode:?}: {report}"
        );
    }
}
