//! Hostile targets cost bounded time and memory: each check ends by its deadline with a
//! finding, and reads stop at the engine's byte caps (asserted through the evidence, not
//! through wall time).

use vantage_agent::model::{Cause, Outcome, RegionStatus, Severity};
use vantage_coordinator::fixture::{Hostile, HostileServer};
use vantage_coordinator::report::Decision;

use crate::support::{above_info, check, ids, outcome};

#[tokio::test]
async fn a_target_that_never_answers_times_out_with_a_finding() {
    let server = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let report = check(&server.url()).await;
    assert_eq!(report.regions[0].status, RegionStatus::Complete);
    let era = outcome(&report, "era.detect");
    assert_eq!(era.outcome, Outcome::Fail);
    assert_eq!(era.cause, Some(Cause::Timeout));
    assert_eq!(above_info(&report), ids(&[("era.detect", Severity::High)]));
    assert_eq!(report.decision, Decision::Blocked);
}

#[tokio::test]
async fn an_endless_body_stops_at_the_body_cap() {
    let server = HostileServer::start(Hostile::EndlessBody).await.unwrap();
    let report = check(&server.url()).await;
    let era = outcome(&report, "era.detect");
    assert_eq!(era.outcome, Outcome::Fail);
    assert!(era.observed.contains("body size cap"), "{}", era.observed);
    assert_eq!(above_info(&report), ids(&[("era.detect", Severity::High)]));
}

#[tokio::test]
async fn a_gigabyte_content_length_is_never_trusted() {
    let server = HostileServer::start(Hostile::HugeContentLength)
        .await
        .unwrap();
    let report = check(&server.url()).await;
    let era = outcome(&report, "era.detect");
    assert!(era.observed.contains("body size cap"), "{}", era.observed);
    assert_eq!(above_info(&report), ids(&[("era.detect", Severity::High)]));
}

#[tokio::test]
async fn an_endless_event_stream_stops_at_a_stream_cap() {
    let server = HostileServer::start(Hostile::EndlessSse).await.unwrap();
    let report = check(&server.url()).await;
    let era = outcome(&report, "era.detect");
    assert!(
        era.observed.contains("stream size cap") || era.observed.contains("SSE event count cap"),
        "{}",
        era.observed
    );
    assert_eq!(report.decision, Decision::Blocked);
}

#[tokio::test]
async fn a_redirect_to_itself_is_not_followed() {
    let server = HostileServer::start(Hostile::RedirectSelf).await.unwrap();
    let report = check(&server.url()).await;
    let c = outcome(&report, "redirect.none");
    assert_eq!(c.outcome, Outcome::Fail);
    assert_eq!(c.cause, Some(Cause::SameHost));
    assert_eq!(
        above_info(&report),
        ids(&[("redirect.none", Severity::Medium)])
    );
}
