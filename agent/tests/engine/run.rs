//! Running the engine on one target, and reading its result by check id.

#![allow(dead_code)]

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult, Severity};
use vantage_agent::{Credentials, Engine, ProbeOptions};
use vantage_fixture::{FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN, FIXTURE_TOKEN};

pub use crate::shared::{
    assert_no_check_says, assert_not_seen, assert_outcomes, assert_seen, assert_seen_all,
    both_families_global, closed_port, fleet_vantage, front, job, lab, named_target, options,
    resolving_with, trusting,
};
pub use crate::shared_faults::Problem;

/// Options with every credential of the protected fixture.
pub fn all_tokens() -> ProbeOptions {
    let mut o = options();
    o.credentials = Credentials {
        token: Some(FIXTURE_TOKEN.to_string().into()),
        other_audience: Some(FIXTURE_OTHER_AUDIENCE_TOKEN.to_string().into()),
        missing_scope: Some(FIXTURE_NO_SCOPE_TOKEN.to_string().into()),
    };
    o
}

/// Run one job ([`job`]) on an engine built from `opts`.
pub async fn run_with(url: &str, opts: ProbeOptions) -> RegionResult {
    let job = job(url, &opts);
    Engine::new(opts).expect("engine").run_job(&job).await
}

pub async fn run(url: &str) -> RegionResult {
    run_with(url, options()).await
}

/// One check's result.
pub fn check(region: &RegionResult, id: CheckId) -> CheckResult {
    region
        .check(id)
        .unwrap_or_else(|| panic!("{id} missing from the result"))
        .clone()
}

/// Every check that failed or warned above info, in the catalogue's order.
pub fn problems(region: &RegionResult) -> Vec<Problem> {
    region
        .checks
        .iter()
        .filter(|c| c.outcome.is_problem() && c.severity.is_some_and(|s| s > Severity::Info))
        .map(|c| (c.id, c.outcome, c.severity, c.cause))
        .collect()
}

/// Assert the checks that failed or warned above info are exactly `want` (id, outcome,
/// severity, cause); a failure says what each check it names observed.
#[track_caller]
pub fn assert_problems(region: &RegionResult, want: &[Problem]) {
    let got = problems(region);
    let mut seen: Vec<String> = Vec::new();
    for id in got.iter().chain(want).map(|p| p.0) {
        let line = format!("{id}: {}", check(region, id).observed);
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    assert_eq!(got, want, "{seen:#?}");
}

/// Assert the checks that failed or warned above info are `want`, by id and severity (their
/// outcomes and causes are the caller's to assert, where it does).
#[track_caller]
pub fn assert_problem_severities(region: &RegionResult, want: &[(CheckId, Option<Severity>)]) {
    let got = problems(region);
    let ids: Vec<_> = got.iter().map(|p| (p.0, p.2)).collect();
    assert_eq!(ids, want, "{got:?}");
}

/// Every check with no evidence either way (`unknown`) or that could not run (`error`).
pub fn unknowns(region: &RegionResult) -> Vec<(CheckId, Option<Cause>)> {
    region
        .checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Unknown | Outcome::Error))
        .map(|c| (c.id, c.cause))
        .collect()
}
