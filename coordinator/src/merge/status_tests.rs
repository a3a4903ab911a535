//! A region's status says what it observed (red team round 18, N3; `checks.md` 5): a region
//! whose run finished but observed nothing of the target, for reasons of its own, reads
//! `partial`, never `complete`.

use vantage_agent::catalog::{CheckId, Stage};
use vantage_agent::model::{Cause, Era, Outcome, RegionResult, RegionStatus, Severity};

use crate::report::Decision;
use crate::test_reports::{clean, report, report_degraded, set, unreachable};

fn status(report: &crate::report::Report, region: &str) -> RegionStatus {
    report
        .regions
        .iter()
        .find(|r| r.region == region)
        .map(|r| r.status)
        .expect("region in the report")
}

/// lab/tiny-lit.json: ap (`--check-timeout 1ms`) connected, but its server/discover was
/// not answered within its wait: era unknown, one pass (net.connect), every check after it
/// `unknown`. Before the fix: "status": "complete".
fn waited_too_little(region: &str) -> RegionResult {
    let mut r = clean(region);
    r.era = Era::Unknown;
    for c in r.checks.iter_mut().filter(|c| {
        c.id.stage() > Stage::Net && !matches!(c.id, CheckId::TlsHandshake | CheckId::TlsExpiry)
    }) {
        c.outcome = Outcome::Unknown;
        c.severity = None;
        c.cause = Some(Cause::Timeout);
        c.observed = "not run: server/discover was not answered (accepted the connection, never answered within 1 ms), so the era is not known".into();
    }
    r
}

#[test]
fn a_region_that_observed_nothing_is_partial() {
    let rep = report(vec![clean("eu"), clean("us"), waited_too_little("ap")]);
    assert_eq!(status(&rep, "ap"), RegionStatus::Partial);
    assert_eq!(status(&rep, "eu"), RegionStatus::Complete);
    assert_eq!(status(&rep, "us"), RegionStatus::Complete);
    assert_eq!(rep.decision, Decision::Unknown);

    // The D8 shape: ap's connect gave up before eu connected (its own wait): partial too.
    let mut eu = clean("eu");
    set(
        &mut eu,
        "net.connect",
        Outcome::Pass,
        None,
        None,
        "198.51.100.10:443 connected in 1007 ms",
    );
    let ap = unreachable(
        "ap",
        Some(Cause::Timeout),
        "198.51.100.10:443 timeout after 518 ms (connect: no answer to the TCP handshake within 500 ms; a firewall that drops packets looks like this)",
    );
    let rep = report(vec![eu, ap]);
    assert_eq!(status(&rep, "ap"), RegionStatus::Partial);
    assert_eq!(status(&rep, "eu"), RegionStatus::Complete);
    assert_eq!(rep.decision, Decision::Unknown);

    // A degraded region set aside for its own egress: partial.
    let ap = unreachable(
        "ap",
        Some(Cause::Timeout),
        "198.51.100.10:443 timeout after 5001 ms (connect: no answer)",
    );
    let rep = report_degraded(&["eu", "ap"], vec![clean("eu"), ap], &["ap"]);
    assert_eq!(status(&rep, "ap"), RegionStatus::Partial);
}

/// What the target did is an observation: a region stopped by it (a refused connection, a
/// firewall where others connected, an endpoint that is not MCP) stays `complete`, and so
/// does a region that observed the target with a gap in one check.
#[test]
fn a_region_stopped_by_the_target_stays_complete() {
    let refused = unreachable(
        "ap",
        Some(Cause::Refused),
        "198.51.100.10:443 refused after 1 ms (connect: Connection refused (os error 111))",
    );
    let rep = report(vec![clean("eu"), refused]);
    assert_eq!(status(&rep, "ap"), RegionStatus::Complete);
    assert_eq!(rep.decision, Decision::Blocked);

    let mut gap = clean("ap");
    set(
        &mut gap,
        "tools.deterministic-order",
        Outcome::Unknown,
        None,
        Some(Cause::Timeout),
        "the second listing of tools/list was not complete",
    );
    let mut not_mcp = clean("us");
    not_mcp.era = Era::NotMcp;
    set(
        &mut not_mcp,
        "era.detect",
        Outcome::Fail,
        Some(Severity::High),
        None,
        "not MCP: 404 text/html",
    );
    let rep = report(vec![clean("eu"), gap, not_mcp]);
    assert_eq!(status(&rep, "ap"), RegionStatus::Complete);
    assert_eq!(status(&rep, "us"), RegionStatus::Complete);
}
