//! `vantage_region_unknown` (red team round 10, #1): per scheduled target and region, whether
//! the region is a reason the last decision is `unknown`, so that the alert rules can leave
//! out the regions that are the fleet's (no agent, degraded) and keep every other reason.
//! Reports come from the real merge (`test_reports`).

use std::collections::BTreeMap;

use prometheus::Registry;
use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Cause, Outcome, RegionResult, RegionStatus};

use super::Metrics;
use crate::fleet::Registry as Fleet;
use crate::report::{Decision, Report};
use crate::test_reports::{clean, report, report_requested, resolver_failed, set};

const T: &str = "http://127.0.0.1:9/mcp";

/// The `vantage_region_unknown` lines of the exposition after a scheduled run of `r`.
fn unknown_series(r: &Report) -> Vec<String> {
    let m = Metrics::new(Registry::new()).unwrap();
    m.set_schedule(&[(T.into(), 60.0, BTreeMap::new())]);
    m.observe(r);
    let regions: Vec<String> = r.regions.iter().map(|r| r.region.clone()).collect();
    let text = m.render(&Fleet::default(), &regions);
    assert!(
        text.contains("# TYPE vantage_region_unknown gauge"),
        "{text}"
    );
    text.lines()
        .filter(|l| l.starts_with("vantage_region_unknown{"))
        .map(str::to_string)
        .collect()
}

fn line(region: &str, v: u8) -> String {
    format!("vantage_region_unknown{{region=\"{region}\",target=\"{T}\"}} {v}")
}

#[test]
fn a_region_without_an_agent_is_the_only_reason() {
    let r = report_requested(
        &["ap".into(), "eu".into(), "local".into()],
        vec![
            clean("eu"),
            clean("local"),
            RegionResult::absent("ap", RegionStatus::NoAgent),
        ],
    );
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    assert!(r.finding(FindingId::FleetRegionMissing).is_some());
    assert_eq!(
        unknown_series(&r),
        vec![line("ap", 1), line("eu", 0), line("local", 0)]
    );
}

#[test]
fn a_region_whose_resolver_failed_is_a_reason() {
    let r = report(vec![clean("eu"), resolver_failed("ap")]);
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    let f = r.finding(FindingId::ProbeResolverFailed).expect("resolver");
    assert_eq!(f.regions, vec!["ap".to_string()]);
    assert_eq!(unknown_series(&r), vec![line("ap", 1), line("eu", 0)]);
}

/// A region that observed the target but ran out of its deadline on a check: still a
/// reason (the target is unknown there for its own sake), whatever the alert rules make of
/// the region.
#[test]
fn a_region_that_observed_but_left_a_check_unknown_is_a_reason() {
    let mut eu = clean("eu");
    set(
        &mut eu,
        "tools.list-shape",
        Outcome::Unknown,
        None,
        Some(Cause::Deadline),
        "the deadline ran out",
    );
    let r = report(vec![eu, clean("us")]);
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    assert!(r.finding(FindingId::ProbeIncomplete).is_some());
    assert_eq!(unknown_series(&r), vec![line("eu", 1), line("us", 0)]);
}

#[test]
fn a_clean_run_has_no_unknown_region() {
    let r = report(vec![clean("eu"), clean("us")]);
    assert_eq!(r.decision, Decision::Pass, "{}", r.reason);
    assert_eq!(unknown_series(&r), vec![line("eu", 0), line("us", 0)]);
}
