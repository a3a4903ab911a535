//! Review item 1: the vantage's own deadline is never the target's silence. A fixture that
//! answers every request after 400 ms, checked with a whole-run deadline of 300 ms, came
//! out `blocked` (era.detect high "never answered within 300 ms") four runs in five: the
//! per-exchange timeout was clamped to the deadline and both fired in the same tick.

use std::time::Duration;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionStatus, Severity};
use vantage_coordinator::report::{Decision, Report, Scope};
use vantage_fixture::{Fault, Fixture, Hostile, HostileServer};

use crate::evidence_support::{check_came_out, json_check, row, shape};
use crate::support::{check_with, options};

/// era.detect of the first region: unknown for `cause`, with no severity.
fn era_unknown(report: &Report, cause: Cause) -> &CheckResult {
    let era = report.regions[0].check(CheckId::EraDetect).unwrap();
    assert_eq!(
        (era.outcome, era.cause, era.severity),
        (Outcome::Unknown, Some(cause), None),
        "{}",
        era.observed
    );
    era
}

fn assert_incomplete(report: &Report) {
    era_unknown(report, Cause::Deadline);
    // What was due after it is unknown for the same cause, never skipped.
    for id in [CheckId::RedirectNone, CheckId::TransportGet] {
        let c = report.regions[0].check(id).unwrap();
        assert_eq!(
            (c.outcome, c.cause),
            (Outcome::Unknown, Some(Cause::Deadline)),
            "{id}: {}",
            c.observed
        );
    }
    assert_eq!(report.regions[0].status, RegionStatus::Partial);
    assert_eq!(report.decision, Decision::Unknown);
    let f = report
        .finding(FindingId::ProbeIncomplete)
        .expect("probe.incomplete");
    assert_eq!((f.severity, f.scope), (Severity::Medium, Scope::Global));
    assert!(report.finding(FindingId::EraDetect).is_none());
}

/// The repro, through the binary, several times: every run is `unknown`, exit 4,
/// `probe.incomplete` and nothing about the target.
#[tokio::test]
async fn a_slow_target_under_a_shorter_run_deadline_is_incomplete_every_time() {
    let fixture = Fixture::start(&[Fault::Slow]).await.unwrap();
    let url = fixture.url();
    for _ in 0..3 {
        let (code, report) = json_check(&[&url, "--timeout", "300ms"], &[]).await;
        assert_eq!(
            shape(&report),
            vec![row("probe.incomplete", "medium", "global", &["local"])]
        );
        assert_eq!((report["decision"].as_str(), code), (Some("unknown"), 4));
        check_came_out(&report, "local", "era.detect", "unknown", "deadline");
        assert_eq!(report["regions"][0]["status"], "partial");
    }
}

/// Both bounds equal (the operator set --check-timeout to the whole deadline, or a queued
/// fleet job's deadline shrank to it): the two timers fire together, and whichever fires
/// first the deadline is what ended the exchange.
#[tokio::test]
async fn equal_bounds_never_blame_the_target() {
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    for _ in 0..3 {
        let report = check_with(
            &silent.url(),
            vantage_agent::ProbeOptions {
                deadline: Duration::from_millis(400),
                check_timeout: Duration::from_millis(400),
                ..options()
            },
        )
        .await;
        assert_incomplete(&report);
    }
}

/// A fleet job queued on a busy agent runs with what is left of its deadline
/// (`Job::after`); the per-exchange timeout stays the agent's own, so the deadline ends
/// the run and nothing is blamed on the target.
#[tokio::test]
async fn a_queued_job_with_little_deadline_left_is_incomplete() {
    let fixture = Fixture::start(&[Fault::Slow]).await.unwrap();
    let engine = vantage_agent::Engine::new(options()).unwrap();
    let mut job = vantage_agent::Job::new(vantage_agent::Target::parse(&fixture.url()).unwrap());
    job.deadline = Duration::from_secs(10);
    let late = job.after(Duration::from_millis(9_700));
    let region = engine.run_job(&late).await;
    let era = region.check(CheckId::EraDetect).unwrap();
    assert_eq!(
        (era.outcome, era.cause),
        (Outcome::Unknown, Some(Cause::Deadline))
    );
    assert_eq!(region.status, RegionStatus::Partial);
}

/// The control: the delay (400 ms) sits between a short per-exchange timeout (200 ms) and
/// a long deadline (10 s), so the per-exchange timeout is what ran out, not the deadline:
/// cause `timeout` and a complete run. A timeout is the vantage's own wait running out, no
/// evidence that the target is not MCP (`checks.md` 4.1 (c), 4): `era.detect` is `unknown`
/// for it and the decision `unknown`, never blocked on it.
#[tokio::test]
async fn a_per_exchange_timeout_well_inside_the_deadline_is_the_timeout_not_the_deadline() {
    let fixture = Fixture::start(&[Fault::Slow]).await.unwrap();
    let report = check_with(
        &fixture.url(),
        vantage_agent::ProbeOptions {
            deadline: Duration::from_secs(10),
            check_timeout: Duration::from_millis(200),
            ..options()
        },
    )
    .await;
    let era = era_unknown(&report, Cause::Timeout);
    assert!(
        era.observed.contains("never answered within 200 ms"),
        "{}",
        era.observed
    );
    // No MCP answer within its own wait: the region observed nothing, so it is partial
    // (red team round 18, N3); the cause (timeout, not deadline) says which wait ended it.
    assert_eq!(report.regions[0].status, RegionStatus::Partial);
    assert_eq!(report.decision, Decision::Unknown);
    assert!(report.finding(FindingId::EraDetect).is_none());
    assert!(report.finding(FindingId::ProbeIncomplete).is_some());
}
