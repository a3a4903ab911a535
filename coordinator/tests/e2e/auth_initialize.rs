//! Red team round 18, D2 (D1b in the round's brief): the 2025-11-25 `initialize` probes of
//! the legacy path's boundary, not observed, never pass. A dual-era server whose
//! `initialize` serves anyone (fixture `auth-legacy-open`), checked with its valid token,
//! came out PASS, exit 0, when a limiter on unauthenticated traffic answered the token-less
//! `initialize` and the random-token ones 429 or 503: `auth.challenge` and
//! `auth.garbage-token` passed without an initialize leg. And an `initialize` with a random
//! token that got no answer (a reset), or a 500/502/504, was silently left out of
//! `auth.garbage-token`. A front on loopback before the fixture changes only those
//! `initialize` answers; the same front changing nothing is the control.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use serde_json::Value;
use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Outcome, Severity};
use vantage_coordinator::exit::{for_report, FailOn};
use vantage_coordinator::report::{Decision, Report};
use vantage_fixture::{Fault, Fixture, FIXTURE_TOKEN};

use crate::auth::all_tokens;
use crate::support::{
    above_info, check_with, head_of, options, outcome, pass_on, streamed, Received, Served,
};

/// What the front answers instead of the fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// This status, empty body, with `Retry-After` when given.
    Status(u16, Option<&'static str>),
    /// 200 `application/json` with a `Content-Length` of 64, then the connection closed
    /// after a few bytes: no answer.
    Reset,
}

/// Which `initialize` requests get the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    /// Without `Authorization`, and with any token but the fixture's valid one.
    Unauthenticated,
    /// With a token other than the fixture's valid one (the random tokens).
    RandomToken,
    /// Nothing: the control.
    Nothing,
}

fn hit(on: On, r: &Received) -> bool {
    let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    if msg["method"] != "initialize" {
        return false;
    }
    let auth = r.headers.get("authorization").and_then(|v| v.to_str().ok());
    let valid = auth == Some(format!("Bearer {FIXTURE_TOKEN}").as_str());
    match on {
        On::Unauthenticated => !valid,
        On::RandomToken => auth.is_some() && !valid,
        On::Nothing => false,
    }
}

fn answer(a: Answer) -> Response {
    match a {
        Answer::Status(st, retry_after) => {
            let mut b = Response::builder().status(st);
            if let Some(r) = retry_after {
                b = b.header("retry-after", r);
            }
            b.body(Body::empty()).unwrap()
        }
        Answer::Reset => {
            let chunks: Vec<Result<axum::body::Bytes, std::io::Error>> = vec![
                Ok(axum::body::Bytes::from_static(b"{\"jsonrpc\":")),
                Err(std::io::Error::other("cut")),
            ];
            Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .header("content-length", "64")
                .body(Body::from_stream(futures::stream::iter(chunks)))
                .unwrap()
        }
    }
}

/// The front's state: where it passes requests on, its own origin, which `initialize`
/// requests it answers itself and how.
struct Front {
    upstream: String,
    me: String,
    on: On,
    answer: Answer,
    client: reqwest::Client,
}

async fn handle(State(f): State<Arc<Front>>, r: Received) -> Response {
    if hit(f.on, &r) {
        return answer(f.answer);
    }
    let Some(resp) = pass_on(&f.client, &f.upstream, r).await else {
        return Response::builder().status(599).body(Body::empty()).unwrap();
    };
    // The fixture names itself in its challenge and its metadata: name the front instead.
    let out = head_of(&resp, |v| v.replace(&f.upstream, &f.me));
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|c| c.to_str().unwrap_or("").starts_with("text/event-stream"));
    if sse {
        return out.body(streamed(resp)).unwrap();
    }
    let text = String::from_utf8_lossy(&resp.bytes().await.unwrap_or_default())
        .replace(&f.upstream, &f.me);
    out.body(Body::from(text)).unwrap()
}

/// A check of the fixture with `faults` through a front answering `a` on `on`.
async fn through(faults: &[Fault], on: On, a: Answer, with_token: bool) -> Report {
    let fixture = Fixture::start(faults).await.unwrap();
    let upstream = fixture.addr;
    let front = Served::start(|addr| {
        let front = Arc::new(Front {
            upstream: format!("http://{upstream}"),
            me: format!("http://{addr}"),
            on,
            answer: a,
            client: crate::support::http(),
        });
        axum::Router::new().fallback(handle).with_state(front)
    })
    .await;
    let opts = if with_token { all_tokens() } else { options() };
    check_with(&front.url(), opts).await
}

/// `id` is `unknown` (a cause, no severity) with `needle` in its evidence.
#[track_caller]
fn unknown_naming(report: &Report, id: CheckId, needle: &str, case: &str) {
    let c = outcome(report, id);
    assert_eq!(
        (c.outcome, c.severity),
        (Outcome::Unknown, None),
        "{case} {id}: {}",
        c.observed
    );
    assert!(c.cause.is_some(), "{case} {id}: {}", c.observed);
    assert!(
        c.observed.contains(needle),
        "{case} {id}: {needle:?} not in {}",
        c.observed
    );
}

/// Decision `unknown`, exit 4, `probe.incomplete` naming `ids`, never a pass.
#[track_caller]
fn incomplete(report: &Report, ids: &[CheckId], case: &str) {
    assert_eq!(
        report.decision,
        Decision::Unknown,
        "{case}: {} {:?}",
        report.reason,
        above_info(report)
    );
    assert_eq!(for_report(report, FailOn::Blocked), 4, "{case}");
    let f = report
        .finding(FindingId::ProbeIncomplete)
        .unwrap_or_else(|| panic!("{case}: probe.incomplete: {:?}", above_info(report)));
    let evidence = f.evidence.join("\n");
    for id in ids {
        assert!(evidence.contains(id.as_str()), "{case}: {id} in {evidence}");
    }
}

const LIMITS: &[Answer] = &[
    Answer::Status(429, None),
    Answer::Status(429, Some("0")),
    Answer::Status(503, None),
    Answer::Status(503, Some("0")),
    Answer::Reset,
];

/// D2: the open legacy path, every `initialize` without the valid token answered for
/// another reason (or not at all): `auth.challenge` and `auth.garbage-token` are `unknown`,
/// naming initialize; the decision `unknown`, exit 4. It was PASS, exit 0.
#[tokio::test]
async fn an_open_legacy_path_behind_a_limiter_on_unauthenticated_initialize_is_never_a_pass() {
    for &a in LIMITS {
        let case = format!("{a:?}");
        let r = through(&[Fault::AuthLegacyOpen], On::Unauthenticated, a, true).await;
        unknown_naming(
            &r,
            CheckId::AuthChallenge,
            "initialize (2025-11-25, no Authorization): ",
            &case,
        );
        unknown_naming(
            &r,
            CheckId::AuthGarbageToken,
            "initialize (2025-11-25): ",
            &case,
        );
        incomplete(
            &r,
            &[CheckId::AuthChallenge, CheckId::AuthGarbageToken],
            &case,
        );
        // Without a credential (the era not yet classified) the same: the legacy path's
        // boundary was not observed, never a passing challenge.
        let r = through(&[Fault::AuthLegacyOpen], On::Unauthenticated, a, false).await;
        unknown_naming(
            &r,
            CheckId::AuthChallenge,
            "initialize (2025-11-25, no Authorization): ",
            &case,
        );
        assert_eq!(r.decision, Decision::Unknown, "{case}: {}", r.reason);
        assert_ne!(for_report(&r, FailOn::Blocked), 0, "{case}");
    }
}

/// AUTH18's remainder: the clean dual-era protected fixture, only the random-token
/// `initialize` answered with no answer (a reset), a 500, 502 or 504 (or still rate
/// limited): `auth.garbage-token` is `unknown` naming initialize, never a pass without it;
/// `auth.challenge` (the token-less initialize answered 401) passes.
#[tokio::test]
async fn a_random_token_initialize_not_observed_leaves_the_random_token_unknown() {
    let answers = [
        Answer::Reset,
        Answer::Status(500, None),
        Answer::Status(502, None),
        Answer::Status(504, None),
        Answer::Status(429, None),
        Answer::Status(503, None),
    ];
    for a in answers {
        let case = format!("{a:?}");
        let r = through(&[Fault::Protected], On::RandomToken, a, true).await;
        unknown_naming(
            &r,
            CheckId::AuthGarbageToken,
            "initialize (2025-11-25): ",
            &case,
        );
        let c = outcome(&r, CheckId::AuthChallenge);
        assert_eq!(c.outcome, Outcome::Pass, "{case}: {}", c.observed);
        incomplete(&r, &[CheckId::AuthGarbageToken], &case);
    }
}

/// The same open legacy path with everything answered through the front: BLOCKED, the
/// open path high and the random token let through critical.
#[tokio::test]
async fn the_open_legacy_path_answered_is_still_blocked() {
    let r = through(&[Fault::AuthLegacyOpen], On::Nothing, Answer::Reset, true).await;
    assert_eq!(r.decision, Decision::Blocked, "{}", r.reason);
    let got: Vec<(String, Severity)> = r
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .map(|f| (f.id.to_string(), f.severity))
        .collect();
    assert!(
        got.contains(&("auth.challenge".to_string(), Severity::High)),
        "{got:?}"
    );
    assert!(
        got.contains(&(
            "auth.invalid-token-accepted".to_string(),
            Severity::Critical
        )),
        "{got:?}"
    );
    let c = outcome(&r, CheckId::AuthChallenge);
    assert!(
        c.observed
            .contains("initialize served without a token while server/discover requires one"),
        "{}",
        c.observed
    );
}

/// The controls: the clean protected fixture, dual-era and modern-only, through the same
/// front changing nothing, with and without a credential, keeps its verdicts: a pass with
/// the credential, `auth.credential-required` without one; never `unknown`. A modern-only
/// server whose `initialize` is public answers it -32022 without a token: an observed "no
/// such path", neutral (no credential: only `server/discover`'s challenge is judged).
#[tokio::test]
async fn the_clean_protected_fixture_still_passes_through_the_front() {
    for faults in [
        &[Fault::Protected][..],
        &[Fault::Protected, Fault::ModernOnly][..],
        &[Fault::AuthLegacyOpen, Fault::ModernOnly][..],
    ] {
        for with_token in [true, false] {
            let case = format!("{faults:?} with_token={with_token}");
            let r = through(faults, On::Nothing, Answer::Reset, with_token).await;
            let c = outcome(&r, CheckId::AuthChallenge);
            assert_eq!(c.outcome, Outcome::Pass, "{case}: {}", c.observed);
            if with_token {
                let g = outcome(&r, CheckId::AuthGarbageToken);
                assert_eq!(g.outcome, Outcome::Pass, "{case}: {}", g.observed);
                assert_eq!(r.decision, Decision::Pass, "{case}: {}", r.reason);
                assert_eq!(for_report(&r, FailOn::Blocked), 0, "{case}");
            } else {
                assert!(
                    r.finding(FindingId::AuthCredentialRequired).is_some(),
                    "{case}: {:?}",
                    above_info(&r)
                );
                assert!(
                    r.finding(FindingId::ProbeIncomplete).is_none(),
                    "{case}: {:?}",
                    above_info(&r)
                );
                assert_eq!(for_report(&r, FailOn::Blocked), 3, "{case}");
            }
        }
    }
}
