//! Red team round 3, defects 3, 4 and 6: the authorization checks never claim what they did
//! not see. A reverse proxy on loopback in front of the fixture (its URLs rewritten to the
//! front's, so every metadata fetch goes through it) changes one kind of answer and nothing
//! else: a metadata URL rate limited, unavailable, behind a failing gateway, a bare 500, a
//! body in a content coding the vantage did not ask for, no answer at all, or a same-origin
//! redirect (never followed); or, with `--expect-auth`, the unauthenticated request answered
//! for another reason. None of these says anything about the rule: the check is `unknown`
//! with its cause, `probe.incomplete` names the gap, the decision is `unknown`, exit 4;
//! never `auth.prm` / `auth.as-metadata` / `auth.challenge` high. The same front with
//! nothing changed is the control: the protected fixture passes through it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::Value;
use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_agent::ProbeOptions;
use vantage_coordinator::exit::{for_report, FailOn};
use vantage_coordinator::report::{Decision, Report};
use vantage_fixture::{Fault, Fixture};

use crate::auth::all_tokens;
use crate::support::{above_info, check_with, forward, options, Received, Served};

const PRM: &[&str] = &["/.well-known/oauth-protected-resource"];
const AS: &[&str] = &[
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
];

/// What the front answers instead of the fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// This status, empty body, `Retry-After: 60`.
    Status(u16),
    /// 200 `application/json` in `Content-Encoding: gzip` (never asked for).
    Gzip,
    /// Never answered (the connection held open).
    Silence,
    /// 301 to the same path with a trailing slash (same origin).
    RedirectSameOrigin,
}

/// Which requests get the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    /// GETs whose path starts with one of these.
    Paths(&'static [&'static str]),
    /// `server/discover` without an Authorization header.
    UnauthenticatedDiscover,
    /// Nothing: the control.
    Nothing,
}

struct Front {
    upstream: String,
    me: String,
    on: On,
    answer: Answer,
    client: reqwest::Client,
}

/// The front before the fixture: every answer the fixture gives passes, but `on` gets `answer`.
async fn front(upstream: std::net::SocketAddr, on: On, answer: Answer) -> Served {
    Served::start(|addr| {
        let front = Arc::new(Front {
            upstream: format!("http://{upstream}"),
            me: format!("http://{addr}"),
            on,
            answer,
            client: crate::support::http(),
        });
        axum::Router::new().fallback(handle).with_state(front)
    })
    .await
}

async fn answer(a: Answer, path: &str) -> Response {
    let b = Response::builder();
    match a {
        Answer::Status(st) => b
            .status(StatusCode::from_u16(st).unwrap())
            .header("retry-after", "60")
            .body(Body::empty()),
        Answer::Gzip => b
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .body(Body::from(
                &b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\xae\x05\x00"[..],
            )),
        Answer::Silence => std::future::pending().await,
        Answer::RedirectSameOrigin => b
            .status(StatusCode::MOVED_PERMANENTLY)
            .header("location", format!("{path}/"))
            .body(Body::empty()),
    }
    .unwrap()
}

async fn handle(State(f): State<Arc<Front>>, r: Received) -> Response {
    let hit = match f.on {
        On::Paths(prefixes) => {
            r.method == Method::GET
                && prefixes.iter().any(|p| r.uri.path().starts_with(p))
                && !r.uri.path().ends_with('/')
        }
        On::UnauthenticatedDiscover => {
            let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            msg["method"] == "server/discover" && !r.headers.contains_key("authorization")
        }
        On::Nothing => false,
    };
    if hit {
        return answer(f.answer, r.uri.path()).await;
    }
    // The fixture names itself in its challenge and its metadata: name the front instead.
    forward(&f.client, &f.upstream, &f.me, r, |text| text).await
}

/// A check of the fixture with `faults` through a front answering `answer` on `on`.
async fn through(faults: &[Fault], on: On, answer: Answer, opts: ProbeOptions) -> Report {
    let fixture = Fixture::start(faults).await.unwrap();
    let front = front(fixture.addr, on, answer).await;
    check_with(&front.url(), opts).await
}

/// `id` is unknown for `cause` with `needle` in its evidence; nothing about the server is
/// above `low`; `probe.incomplete` (medium) names `id`; the decision is unknown, exit 4.
fn unknown_for(report: &Report, id: CheckId, cause: Cause, needle: &str) {
    let c = crate::support::outcome(report, id);
    assert_eq!(
        (c.outcome, c.severity, c.cause),
        (Outcome::Unknown, None, Some(cause)),
        "{id}: {}",
        c.observed
    );
    assert!(
        c.observed.contains(needle),
        "{id}: {needle:?} not in {}",
        c.observed
    );
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.severity <= Severity::Medium),
        "{id}: nothing about the server above medium: {:?}",
        above_info(report)
    );
    let f = report
        .finding(FindingId::ProbeIncomplete)
        .unwrap_or_else(|| {
            panic!(
                "{id}: probe.incomplete names the gap: {:?}",
                above_info(report)
            )
        });
    assert_eq!(f.severity, Severity::Medium);
    assert!(
        f.evidence.join("\n").contains(id.as_str()),
        "{id}: {:?}",
        f.evidence
    );
    assert_eq!(
        report.decision,
        Decision::Unknown,
        "{id}: {}",
        report.reason
    );
    assert_eq!(for_report(report, FailOn::Blocked), 4, "{id}");
}

/// The control: the front changes nothing, and the protected fixture passes through it
/// (every metadata URL was fetched through the front: its URLs are the front's).
#[tokio::test]
async fn the_protected_fixture_passes_through_the_front() {
    let report = through(
        &[Fault::Protected],
        On::Nothing,
        Answer::Silence,
        all_tokens(),
    )
    .await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.decision, Decision::Pass, "{}", report.reason);
    let prm = crate::support::outcome(&report, CheckId::AuthPrm);
    assert_eq!(prm.outcome, Outcome::Pass, "{}", prm.observed);
}

/// Defect 3: the protected resource metadata answered for another reason, or not at all,
/// is not "no protected resource metadata" (high).
#[tokio::test]
async fn protected_resource_metadata_not_observed_is_unknown() {
    // Silence is a timeout; every answer is "another reason".
    let rows = [
        (Answer::Status(429), "rate limited: answered 429"),
        (Answer::Status(503), "unavailable: answered 503"),
        (Answer::Status(502), "a gateway answered 502"),
        (Answer::Status(504), "a gateway answered 504"),
        (Answer::Status(500), "a server error without an MCP answer"),
        (Answer::Gzip, "Content-Encoding gzip"),
        (Answer::Silence, "never answered within 1.5 s"),
    ];
    let reports = futures::future::join_all(
        rows.iter()
            .map(|(a, _)| through(&[Fault::Protected], On::Paths(PRM), *a, all_tokens())),
    )
    .await;
    for ((a, needle), report) in rows.iter().zip(&reports) {
        let silent = *a == Answer::Silence;
        let cause = if silent {
            Cause::Timeout
        } else {
            Cause::OtherReason
        };
        unknown_for(report, CheckId::AuthPrm, cause, needle);
        assert!(
            report.finding(FindingId::AuthPrm).is_none(),
            "{a:?}: {:?}",
            above_info(report)
        );
        // No authorization server is known: nothing is claimed about one either.
        let asm = crate::support::outcome(report, CheckId::AuthAsMetadata);
        assert_eq!(asm.outcome, Outcome::Skip, "{a:?}: {}", asm.observed);
        // Whether a metadata URL redirects: seen on an answer, unknown without one.
        let r = crate::support::outcome(report, CheckId::AuthMetadataRedirect);
        let expected = if silent {
            (Outcome::Unknown, Some(Cause::Timeout))
        } else {
            (Outcome::Pass, None)
        };
        assert_eq!((r.outcome, r.cause), expected, "{a:?}: {}", r.observed);
    }
}

/// Defect 3: every authorization server metadata candidate answered for another reason is
/// not "no metadata with an identical issuer" (high); the PRM itself passes.
#[tokio::test]
async fn authorization_server_metadata_not_observed_is_unknown() {
    for (a, needle) in [
        (Answer::Status(429), "rate limited: answered 429"),
        (Answer::Status(503), "unavailable: answered 503"),
    ] {
        let report = through(&[Fault::Protected], On::Paths(AS), a, all_tokens()).await;
        unknown_for(&report, CheckId::AuthAsMetadata, Cause::OtherReason, needle);
        assert_eq!(
            crate::support::outcome(&report, CheckId::AuthPrm).outcome,
            Outcome::Pass
        );
        assert!(report.finding(FindingId::AuthAsMetadata).is_none());
    }
}

/// Defect 6: a same-origin redirect on the PRM URL is not followed, so the document was not
/// observed: `auth.prm` unknown (same-host), not "no protected resource metadata" (high).
/// `auth.metadata-redirect` keeps its documented rule: only a cross-host redirect fails;
/// a same-host one is a low warning.
#[tokio::test]
async fn a_same_origin_redirect_on_the_prm_is_not_a_missing_document() {
    let report = through(
        &[Fault::Protected],
        On::Paths(PRM),
        Answer::RedirectSameOrigin,
        all_tokens(),
    )
    .await;
    unknown_for(
        &report,
        CheckId::AuthPrm,
        Cause::SameHost,
        "(not followed: redirects never are): redirected, so the document was not observed",
    );
    let r = crate::support::outcome(&report, CheckId::AuthMetadataRedirect);
    assert_eq!(
        (r.outcome, r.severity, r.cause),
        (Outcome::Warn, Some(Severity::Low), Some(Cause::SameHost)),
        "{}",
        r.observed
    );
    let f = report.finding(FindingId::AuthMetadataRedirect).unwrap();
    assert_eq!(f.severity, Severity::Low);
}

/// Defect 4: with --expect-auth, the unauthenticated request answered 429, 502 or 503 says
/// nothing about the boundary: `auth.challenge` unknown, never high "answered".
#[tokio::test]
async fn expect_auth_with_another_reason_is_unknown() {
    for (st, needle) in [
        (429, "rate limited: answered 429"),
        (502, "a gateway answered 502"),
        (503, "unavailable: answered 503"),
    ] {
        let mut opts = options();
        opts.expect_auth = true;
        let report = through(&[], On::UnauthenticatedDiscover, Answer::Status(st), opts).await;
        unknown_for(&report, CheckId::AuthChallenge, Cause::OtherReason, needle);
        assert!(report.finding(FindingId::AuthChallenge).is_none());
        // No token for another audience was named: that probe does not apply either way.
        assert_eq!(
            crate::support::outcome(&report, CheckId::AuthWrongAudience).outcome,
            Outcome::Skip
        );
        // Behind a boundary that was not observed, nothing was.
        let prm = crate::support::outcome(&report, CheckId::AuthPrm);
        assert_eq!(
            (prm.outcome, prm.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "{}",
            prm.observed
        );
    }
    // The control: the same open fixture served straight is a failure (high).
    let mut opts = options();
    opts.expect_auth = true;
    let report = through(&[], On::Nothing, Answer::Silence, opts).await;
    let c = crate::support::outcome(&report, CheckId::AuthChallenge);
    assert_eq!(
        (c.outcome, c.severity),
        (Outcome::Fail, Some(Severity::High))
    );
    assert_eq!(report.decision, Decision::Blocked);
}
