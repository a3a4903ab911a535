//! Red team round 18, D5, N2, N4: 408 (Request Timeout), 413 (Content Too Large) and 431
//! (Request Header Fields Too Large) describe the request the vantage sent (its timing, its
//! body's or its header fields' size), not the rule a probe asks about. A front on loopback
//! before the fixture answers exactly one kind of request with one of them (text/plain, as
//! a proxy does) and passes everything else on: the check that asked is `unknown` with
//! words that say so (`probe/reason.rs`), never a pass ("refused"), never a finding about
//! the target (a high `caps.discover-matches-handlers` or `version.unsupported`, BLOCKED),
//! and the decision is neither `pass` nor `blocked`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Response, StatusCode};
use serde_json::Value;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_coordinator::report::{Decision, Report};
use vantage_fixture::{Fault, Fixture};

use crate::support::shared::{assert_not_seen, assert_seen};
use crate::support::{check, front_before, head_of, outcome, pass_on, streamed, Front, Received};

/// Which requests the front answers itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hit {
    /// `tools/call` carrying a (foreign) `Origin`: the Origin probe's tools/call leg.
    OriginToolsCall,
    /// `server/discover` carrying a foreign `Origin`: the Origin probe's main leg (N4).
    OriginDiscover,
    /// `initialize` carrying a foreign `Origin`: the Origin probe on the 2025-11-25 path (N4).
    OriginInitialize,
    /// Every request of this list method.
    List(&'static str),
    /// Every request with `MCP-Protocol-Version: 1999-01-01` (`version.unsupported`).
    Version1999,
    /// The notification `transport.notification` sends (N2).
    Notification,
    /// Every DELETE (`transport.delete`, N2).
    Delete,
    /// `initialize` without an `Origin`: the one era detection sends beside discovery.
    Initialize,
}

#[derive(Debug, Clone, Copy)]
struct Mode {
    hit: Hit,
    status: u16,
}

fn hits(hit: Hit, r: &Received, msg: &Value) -> bool {
    let rpc = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let origin = r.headers.contains_key("origin");
    let post = r.method == Method::POST;
    match hit {
        Hit::OriginToolsCall => post && origin && rpc == "tools/call",
        Hit::OriginDiscover => post && origin && rpc == "server/discover",
        Hit::OriginInitialize => post && origin && rpc == "initialize",
        Hit::List(m) => post && rpc == m,
        Hit::Version1999 => {
            post && r
                .headers
                .get("mcp-protocol-version")
                .is_some_and(|v| v.as_bytes() == b"1999-01-01")
        }
        Hit::Notification => post && rpc == "notifications/cancelled",
        Hit::Delete => r.method == Method::DELETE,
        Hit::Initialize => post && !origin && rpc == "initialize",
    }
}

fn body_of(status: u16) -> &'static str {
    match status {
        408 => "request timeout",
        413 => "content too large",
        _ => "header fields too large",
    }
}

async fn handle(State(f): State<Arc<Front<Mode>>>, r: Received) -> Response<Body> {
    let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    if hits(f.mode.hit, &r, &msg) {
        return Response::builder()
            .status(StatusCode::from_u16(f.mode.status).unwrap())
            .header("content-type", "text/plain")
            .body(Body::from(body_of(f.mode.status)))
            .unwrap();
    }
    let Some(resp) = pass_on(&f.client, &f.upstream, r).await else {
        return Response::builder().status(599).body(Body::empty()).unwrap();
    };
    head_of(&resp, str::to_string).body(streamed(resp)).unwrap()
}

async fn through(faults: &[Fault], hit: Hit, status: u16) -> Report {
    let fixture = Fixture::start(faults).await.unwrap();
    let front = front_before(&fixture, Mode { hit, status }, handle).await;
    let report = check(&front.url()).await;
    drop(front);
    drop(fixture);
    report
}

/// What the check's evidence says for `status`: the words `probe/reason.rs` gives.
fn words(status: u16) -> String {
    let what = if status == 408 { "timing" } else { "size" };
    format!(
        "the request was refused for its {what}, not for the rule: answered {status} text/plain"
    )
}

/// `id` is `unknown` (other-reason) naming `status` as about the vantage's request; nothing
/// above medium is said about the target; the decision is `unknown` (never pass, never
/// blocked).
#[track_caller]
fn unknown_for_the_request(report: &Report, id: CheckId, status: u16, what: &str) {
    let c = outcome(report, id);
    assert_seen(
        &c,
        (c.outcome, c.severity, c.cause),
        (Outcome::Unknown, None, Some(Cause::OtherReason)),
        &words(status),
    );
    assert_not_seen(&c, &["(refused)", "not accepted, which is compliant"]);
    assert!(
        !report.findings.iter().any(|f| f.severity >= Severity::High),
        "{what} {status}: nothing about the target above medium: {:#?}",
        report.findings
    );
    assert_eq!(
        report.decision,
        Decision::Unknown,
        "{what} {status}: {}",
        report.reason
    );
}

const STATUSES: [u16; 3] = [408, 413, 431];

/// D5 (b): one advertised list answered 408/413/431 is no evidence that the capability
/// is broken: `caps.discover-matches-handlers` is `unknown`, not high (it was BLOCKED).
#[tokio::test]
async fn one_advertised_list_answered_about_the_request_is_unknown_not_high() {
    for status in STATUSES {
        let report = through(&[], Hit::List("prompts/list"), status).await;
        unknown_for_the_request(
            &report,
            CheckId::CapsDiscoverMatchesHandlers,
            status,
            "prompts/list",
        );
        assert!(report
            .finding(vantage_agent::catalog::FindingId::CapsDiscoverMatchesHandlers)
            .is_none());
    }
}

/// D5 (c): the 1999-01-01 version probe answered 408/413/431: `version.unsupported` is
/// `unknown`, not high (it was BLOCKED).
#[tokio::test]
async fn the_unsupported_version_probe_answered_about_the_request_is_unknown() {
    for status in STATUSES {
        let report = through(&[], Hit::Version1999, status).await;
        unknown_for_the_request(&report, CheckId::VersionUnsupported, status, "1999-01-01");
    }
}

/// N2: the notification answered 408/413/431 is not "not accepted, which is compliant",
/// and a DELETE so answered is not "refused by the 2025-11-25 path".
#[tokio::test]
async fn a_notification_or_delete_answered_about_the_request_is_unknown() {
    for status in STATUSES {
        let report = through(&[], Hit::Notification, status).await;
        unknown_for_the_request(
            &report,
            CheckId::TransportNotification,
            status,
            "notification",
        );
        let report = through(&[], Hit::Delete, status).await;
        unknown_for_the_request(&report, CheckId::TransportDelete, status, "delete");
    }
}

/// The `initialize` era detection sends beside `server/discover` answered 408/413/431 on a
/// dual-era server: whether it also speaks 2025-11-25 was not observed, so `era.detect` is
/// `unknown`, never "modern (2026-07-28 only)" (rt18 D1's 408/413/431 forms: the legacy path
/// was then never probed).
#[tokio::test]
async fn an_initialize_answered_about_the_request_leaves_the_era_unknown() {
    for status in STATUSES {
        let report = through(&[], Hit::Initialize, status).await;
        unknown_for_the_request(&report, CheckId::EraDetect, status, "initialize");
        assert_not_seen(&outcome(&report, CheckId::EraDetect), &["2026-07-28 only"]);
    }
}

/// N4: the foreign Origin answered 408/413/431 on server/discover or on the 2025-11-25
/// initialize is no refusal by the guard (it was a low "refused, but a foreign Origin MUST
/// get 403"): `security.origin` is `unknown`.
#[tokio::test]
async fn a_foreign_origin_answered_about_the_request_is_unknown() {
    for status in STATUSES {
        for hit in [Hit::OriginDiscover, Hit::OriginInitialize] {
            let report = through(&[], hit, status).await;
            unknown_for_the_request(
                &report,
                CheckId::SecurityOrigin,
                status,
                &format!("{hit:?}"),
            );
            assert_not_seen(
                &outcome(&report, CheckId::SecurityOrigin),
                &["refused, but a foreign Origin MUST get 403"],
            );
        }
    }
}

/// D5 (a), the rt17 D1 server (tools run for a foreign Origin; the guard sits on discover
/// and the lists only) whose foreign-Origin tools/call a proxy answers 408/413/431: that
/// leg is no refusal ("refused, but a foreign Origin MUST get 403", then PASS): its
/// evidence says the answer concerns the vantage's request.
#[tokio::test]
async fn a_foreign_origin_tools_call_answered_about_the_request_is_no_refusal() {
    for status in STATUSES {
        let report = through(
            &[Fault::OriginGuardOnDiscoverAndList],
            Hit::OriginToolsCall,
            status,
        )
        .await;
        let c = outcome(&report, CheckId::SecurityOrigin);
        assert!(
            !matches!(c.outcome, Outcome::Warn | Outcome::Fail),
            "{status}: {:?} {}",
            c.outcome,
            c.observed
        );
        assert!(
            c.observed.contains("tools/call: ") && c.observed.contains(&words(status)),
            "{status}: {}",
            c.observed
        );
        assert_not_seen(&c, &["refused, but a foreign Origin MUST get 403"]);
    }
}

/// D5 (a), the whole claim: a leg the run meant to ask and did not observe leaves the
/// check `unknown` (rt18 D3), so `security.origin` is `unknown` and the decision `unknown`.
#[tokio::test]
async fn a_foreign_origin_tools_call_answered_about_the_request_is_never_pass() {
    for status in STATUSES {
        let report = through(
            &[Fault::OriginGuardOnDiscoverAndList],
            Hit::OriginToolsCall,
            status,
        )
        .await;
        unknown_for_the_request(&report, CheckId::SecurityOrigin, status, "tools/call");
    }
}
