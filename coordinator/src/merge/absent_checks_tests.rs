//! A region's result that does not carry every catalogued check (an agent older than the
//! coordinator) is no evidence for the checks it leaves out: never a pass.

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::Severity;

use super::NOT_IN_RESULT;
use crate::report::{Decision, Scope};
use crate::test_reports::{clean, report};

/// `eu`'s agent left out two checks; `us` ran everything.
fn skewed() -> crate::report::Report {
    let mut eu = clean("eu");
    eu.checks
        .retain(|c| !matches!(c.id, CheckId::TransportGet | CheckId::SecurityOrigin));
    report(vec![eu, clean("us")])
}

/// The report's `probe.incomplete`, which must be there.
fn incomplete(r: &crate::report::Report) -> &crate::report::Finding {
    r.finding(FindingId::ProbeIncomplete)
        .expect("probe.incomplete")
}

#[test]
fn a_check_left_out_of_a_result_is_named_and_never_passes() {
    // Control: every check in every region passes.
    let control = report(vec![clean("eu"), clean("us")]);
    assert_eq!(control.decision, Decision::Pass, "{}", control.reason);
    assert!(control.findings.is_empty(), "{:?}", control.findings);

    let r = skewed();
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    let f = incomplete(&r);
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::Medium, Scope::Regional, vec!["eu".to_string()])
    );
    assert_eq!(
        f.evidence,
        vec![format!(
            "eu: transport.get, security.origin ({NOT_IN_RESULT})"
        )]
    );
    // Nothing about the target comes from the gap: no other finding.
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
}

#[test]
fn a_result_with_no_checks_at_all_is_not_an_observation() {
    let mut eu = clean("eu");
    eu.checks.clear();
    let r = report(vec![eu]);
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    let f = incomplete(&r);
    assert_eq!(f.regions, vec!["eu".to_string()]);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains(CheckId::ALL[0].as_str()) && e.contains(NOT_IN_RESULT)),
        "{:?}",
        f.evidence
    );
}

/// A fresh look: a server that never answers got probe.incomplete's fix for every way a check
/// can go unobserved (listings, versions, deadlines). The fix fits what stopped the checks,
/// each cause once, in the order met.
#[test]
fn the_fix_fits_what_stopped_the_checks() {
    use vantage_agent::model::{Cause, Outcome};

    use crate::test_reports::set;
    let mut silent = clean("eu");
    set(
        &mut silent,
        "era.detect",
        Outcome::Unknown,
        None,
        Some(Cause::Timeout),
        "server/discover: accepted the connection, never answered within 2 s",
    );
    set(
        &mut silent,
        "transport.get",
        Outcome::Unknown,
        None,
        Some(Cause::Deadline),
        "not run: the overall deadline ran out first",
    );
    set(
        &mut silent,
        "security.origin",
        Outcome::Unknown,
        None,
        Some(Cause::Timeout),
        "no answer",
    );
    let r = report(vec![silent]);
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    let fix = &incomplete(&r).remediation;
    assert!(
        fix.starts_with("The endpoint did not answer within the per-exchange timeout")
            && fix.contains("raise --check-timeout")
            && fix.contains("The run's deadline ran out before these checks: raise --timeout"),
        "{fix}"
    );
    assert_eq!(fix.matches("per-exchange timeout").count(), 1, "{fix}");
    assert!(
        !fix.contains("Vantage version") && !fix.contains("paginate"),
        "{fix}"
    );
    // A result without checks: the version fix alone.
    assert!(
        incomplete(&skewed())
            .remediation
            .starts_with("Checks missing from a region's result"),
        "{}",
        incomplete(&skewed()).remediation
    );
}
