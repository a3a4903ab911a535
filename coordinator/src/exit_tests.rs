//! The gate, table-driven: one value decides the exit code and the gate line.

use vantage_agent::model::RegionResult;
use vantage_agent::model::{Outcome, RegionStatus, Severity};

use super::*;
use crate::test_reports::{
    clean, fail, one_failure, report, report_degraded, report_requested, unreachable,
};

fn gate(fail_on: FailOn, sev: Option<FailOnSeverity>) -> Gate {
    Gate::new(fail_on, sev)
}

#[test]
fn exit_codes_and_gate_lines() {
    let pass = report(vec![clean("local")]);
    let low = one_failure("transport.delete", Severity::Low);
    let review = one_failure("transport.get", Severity::Medium);
    let blocked = one_failure("method.unknown", Severity::High);
    assert_eq!(pass.decision, Decision::Pass);
    assert_eq!(low.decision, Decision::Pass);
    assert_eq!(review.decision, Decision::Review);
    assert_eq!(blocked.decision, Decision::Blocked);

    use FailOn::{Blocked, Review};
    use FailOnSeverity as S;
    let cases: &[(&Report, Gate, u8, &str)] = &[
        (&pass, gate(Blocked, None), OK, "gate: passed"),
        (&pass, gate(Review, Some(S::Low)), OK, "gate: passed"),
        (&low, gate(Review, None), OK, "gate: passed"),
        (
            &low,
            gate(Blocked, Some(S::Low)),
            GATE_FAILED,
            "gate: failed (--fail-on-severity low)",
        ),
        (&low, gate(Blocked, Some(S::Medium)), OK, "gate: passed"),
        (&review, gate(Blocked, None), OK, "gate: passed"),
        (
            &review,
            gate(Review, None),
            GATE_FAILED,
            "gate: failed (--fail-on review)",
        ),
        (
            &review,
            gate(Blocked, Some(S::Medium)),
            GATE_FAILED,
            "gate: failed (--fail-on-severity medium)",
        ),
        (&review, gate(Blocked, Some(S::High)), OK, "gate: passed"),
        (
            &blocked,
            gate(Blocked, None),
            GATE_FAILED,
            "gate: failed (--fail-on blocked)",
        ),
        (
            &blocked,
            gate(Review, Some(S::Critical)),
            GATE_FAILED,
            "gate: failed (--fail-on review)",
        ),
    ];
    for (report, g, code, line) in cases {
        assert_eq!(
            g.exit_code(report),
            *code,
            "{} under {}",
            report.decision.as_str(),
            g.flags()
        );
        assert_eq!(g.line(report), *line, "{}", g.flags());
    }
}

#[test]
fn unknown_is_exit_4_for_a_missing_region_and_3_for_a_missing_credential() {
    let requested = vec!["eu".to_string(), "us".to_string()];
    let missing = report_requested(
        &requested,
        vec![
            clean("eu"),
            RegionResult::absent("us", RegionStatus::Timeout),
        ],
    );
    assert_eq!(missing.decision, Decision::Unknown);
    let g = Gate::new(FailOn::Review, Some(FailOnSeverity::Low));
    assert_eq!(g.exit_code(&missing), UNKNOWN_REGION);
    assert_eq!(
        g.line(&missing),
        "gate: unknown (exit 4: not everything due was observed: a region, or a check)"
    );
    // The finding that made it unknown is not a gate failure (it says nothing of the target).
    let f = missing
        .finding(vantage_agent::catalog::FindingId::FleetRegionMissing)
        .expect("named");
    assert!(!g.fails_on(f));

    let mut r = clean("local");
    r.protected = true;
    for c in r
        .checks
        .iter_mut()
        .filter(|c| c.id.as_str().starts_with("transport."))
    {
        c.outcome = Outcome::Skip;
    }
    let auth = report(vec![r]);
    assert_eq!(auth.decision, Decision::Unknown);
    assert_eq!(Gate::default().exit_code(&auth), UNKNOWN_AUTH);
    assert_eq!(
        Gate::default().line(&auth),
        "gate: unknown (exit 3: authorization required and no credential given)"
    );
}

#[test]
fn the_threshold_is_the_lower_of_the_two_rules() {
    assert_eq!(Gate::default().threshold(), Severity::High);
    assert_eq!(gate(FailOn::Review, None).threshold(), Severity::Medium);
    assert_eq!(
        gate(FailOn::Blocked, Some(FailOnSeverity::Low)).threshold(),
        Severity::Low
    );
    assert_eq!(
        gate(FailOn::Review, Some(FailOnSeverity::Critical)).threshold(),
        Severity::Medium
    );
    assert_eq!(
        gate(FailOn::Review, Some(FailOnSeverity::Low)).flags(),
        "--fail-on review --fail-on-severity low"
    );
}

#[test]
fn a_degraded_vantage_never_fails_the_gate() {
    // eu connected nowhere (its checks after the connect not run): a region that connected
    // to another address and got answers observed the target, and is never discounted.
    let eu = unreachable("eu", None, "timeout");
    let r = report_degraded(&["eu", "us"], vec![eu, clean("us")], &["eu"]);
    let f = r
        .finding(vantage_agent::catalog::FindingId::FleetVantageDegraded)
        .expect("degraded finding");
    let g = gate(FailOn::Blocked, Some(FailOnSeverity::Low));
    assert!(!g.fails_on(f));
    // Not a failure of the gate; but eu did not observe the target, so nothing passes
    // there either (checks.md 4.1): unknown, exit 4.
    assert_eq!(g.result(&r), GateResult::Unknown, "{:?}", r.findings);
    assert_eq!(g.exit_code(&r), UNKNOWN_REGION, "{:?}", r.findings);
}

#[test]
fn the_worst_exit_code_of_many_endpoints() {
    assert_eq!(worst([]), OK);
    assert_eq!(worst([OK, OK]), OK);
    assert_eq!(worst([OK, UNKNOWN_AUTH]), UNKNOWN_AUTH);
    assert_eq!(worst([UNKNOWN_AUTH, UNKNOWN_REGION, OK]), UNKNOWN_REGION);
    assert_eq!(worst([UNKNOWN_REGION, GATE_FAILED, OK]), GATE_FAILED);
    assert_eq!(worst([GATE_FAILED, USAGE]), USAGE);
}

/// A region that could not connect: net.connect refused, everything after it not run.
/// `region`'s connection to the target was refused.
fn refused(region: &str) -> RegionResult {
    unreachable(
        region,
        Some(vantage_agent::model::Cause::Refused),
        "127.0.0.1:9: connection refused",
    )
}

fn accept(r: &mut Report, id: vantage_agent::catalog::FindingId) {
    let f = r.findings.iter_mut().find(|f| f.id == id).expect("finding");
    f.accepted = Some(crate::report::Acceptance {
        status: crate::report::AcceptanceStatus::Accepted,
        reason: "known".into(),
        expires: "2099-12-31".into(),
    });
}

/// Accepting what blocked a target never passes what was not observed (checks.md 4.1): a
/// refused connection accepted by a baseline leaves a target nobody observed, `unknown`
/// with exit 4; so does a blocking finding accepted in one region while the other region's
/// vantage was degraded and observed nothing. A finding accepted on a target every region
/// observed still passes.
#[test]
fn accepting_a_finding_never_passes_a_target_that_was_not_observed() {
    use vantage_agent::catalog::FindingId;
    let g = gate(FailOn::Blocked, None);
    // One vantage, nothing listens.
    let mut dead = report(vec![refused("local")]);
    assert_eq!(dead.decision, Decision::Blocked, "{:?}", dead.findings);
    accept(&mut dead, FindingId::NetConnect);
    assert_eq!(g.decision(&dead), Decision::Unknown);
    assert_eq!(g.result(&dead), GateResult::Unknown);
    assert_eq!(g.exit_code(&dead), UNKNOWN_REGION);
    assert_eq!(
        g.line(&dead),
        "gate: unknown (exit 4: with net.connect accepted by the baseline, nothing else was observed from local; a baseline accepts a fault, it does not stand in for an observation)"
    );
    // Two regions: eu sees a blocking fault, us is degraded and observed nothing.
    let mut eu = clean("eu");
    fail(&mut eu, "method.unknown", Severity::High, "404 page");
    let mut fleet = report_degraded(&["eu", "us"], vec![eu, refused("us")], &["us"]);
    assert_eq!(fleet.decision, Decision::Blocked, "{:?}", fleet.findings);
    assert!(fleet.finding(FindingId::FleetVantageDegraded).is_some());
    let blocking = fleet
        .findings
        .iter()
        .find(|f| f.severity >= Severity::High)
        .map(|f| f.id)
        .expect("a blocking finding");
    accept(&mut fleet, blocking);
    assert_eq!(
        g.decision(&fleet),
        Decision::Unknown,
        "{:?}",
        fleet.findings
    );
    assert_eq!(g.exit_code(&fleet), UNKNOWN_REGION);
    // The control: the same fault in both regions, both observing, accepted: it passes.
    let mut eu = clean("eu");
    let mut us = clean("us");
    for r in [&mut eu, &mut us] {
        fail(r, "method.unknown", Severity::High, "404 page");
    }
    let mut seen = report(vec![eu, us]);
    assert_eq!(seen.decision, Decision::Blocked);
    assert_eq!(seen.findings.len(), 1, "{:?}", seen.findings);
    accept(&mut seen, blocking);
    assert_eq!(g.decision(&seen), Decision::Pass, "{:?}", seen.findings);
    assert_eq!(g.exit_code(&seen), OK);
}
