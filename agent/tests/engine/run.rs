//! Running the engine on one target, and reading its result by check id.

#![allow(dead_code)]

use std::time::Duration;

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult, Severity};
use vantage_agent::{Credentials, Engine, Job, Policy, ProbeOptions, Target};
use vantage_fixture::{FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN, FIXTURE_TOKEN};

/// Options for tests: short per-exchange timeouts so hostile cases end quickly (the same as
/// the coordinator's end-to-end tests use).
pub fn options() -> ProbeOptions {
    ProbeOptions {
        check_timeout: Duration::from_millis(1500),
        deadline: Duration::from_secs(10),
        ..ProbeOptions::default()
    }
}

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

/// Run one job on an engine built from `opts`: the job-level fields of `opts` (deadline,
/// policy, credentials) travel as the job, the way every vantage receives them.
pub async fn run_with(url: &str, opts: ProbeOptions) -> RegionResult {
    let job = Job {
        target: Target::parse(url).expect("target"),
        deadline: opts.deadline,
        expect_auth: opts.expect_auth,
        policy: Policy {
            assume_global: opts.assume_global.clone(),
            allow_non_global: opts.allow_non_global.clone(),
        },
        credentials: opts.credentials.clone(),
    };
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

/// One failed or warned check: its id, outcome, severity and cause.
pub type Problem = (CheckId, Outcome, Option<Severity>, Option<Cause>);

/// Every check that failed or warned above info, in the catalogue's order.
pub fn problems(region: &RegionResult) -> Vec<Problem> {
    region
        .checks
        .iter()
        .filter(|c| c.outcome.is_problem() && c.severity.is_some_and(|s| s > Severity::Info))
        .map(|c| (c.id, c.outcome, c.severity, c.cause))
        .collect()
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
