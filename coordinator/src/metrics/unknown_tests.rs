//! `vantage_region_unknown` (red team round 10, #1): per scheduled target and region, whether
//! the region is a reason the last decision is `unknown`, so that the alert rules can leave
//! out the regions that are the fleet's (no agent, degraded) and keep every other reason.
//! Reports come from the real merge (`test_reports`).

use std::collections::{BTreeMap, BTreeSet};

use prometheus::Registry;
use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Cause, Outcome, RegionResult, RegionStatus};

use super::Metrics;
use crate::fleet::Registry as Fleet;
use crate::report::{Decision, Report};
use crate::test_reports::{
    clean, report, report_degraded, report_requested, resolver_failed, set, unreachable,
};

const T: &str = "http://127.0.0.1:9/mcp";

/// The `vantage_region_unknown` lines of the exposition after a scheduled run of `r`.
fn unknown_series(r: &Report) -> Vec<String> {
    family_series(r, &BTreeSet::new(), "vantage_region_unknown")
}

/// The lines of `family` after a scheduled run of `r` in which the caller saw the `fleet`
/// regions without evidence by the fleet's doing (`Checks::run`).
fn family_series(r: &Report, fleet: &BTreeSet<String>, family: &str) -> Vec<String> {
    let m = Metrics::new(Registry::new()).unwrap();
    m.set_schedule(&[(T.into(), 60.0, BTreeMap::new())]);
    m.observe_run(r, fleet);
    let regions: Vec<String> = r.regions.iter().map(|r| r.region.clone()).collect();
    let text = m.render(&Fleet::default(), &regions);
    assert!(text.contains(&format!("# TYPE {family} gauge")), "{text}");
    let prefix = format!("{family}{{");
    text.lines()
        .filter(|l| l.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

/// `vantage_region_unknown_fleet` after a scheduled run of `r`, `fleet` as in
/// [`family_series`].
fn fleet_series(r: &Report, fleet: &[&str]) -> Vec<String> {
    let fleet = fleet.iter().map(|f| f.to_string()).collect();
    family_series(r, &fleet, "vantage_region_unknown_fleet")
}

fn fleet_line(region: &str, v: u8) -> String {
    format!("vantage_region_unknown_fleet{{region=\"{region}\",target=\"{T}\"}} {v}")
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

/// eu observed the target but ran out of its deadline on tools.list-shape, us is clean:
/// the run is unknown.
fn eu_deadline() -> Report {
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
    r
}

/// A region that observed the target but ran out of its deadline on a check: still a
/// reason (the target is unknown there for its own sake), whatever the alert rules make of
/// the region.
#[test]
fn a_region_that_observed_but_left_a_check_unknown_is_a_reason() {
    let r = eu_deadline();
    assert!(r.finding(FindingId::ProbeIncomplete).is_some());
    assert_eq!(unknown_series(&r), vec![line("eu", 1), line("us", 0)]);
}

#[test]
fn a_clean_run_has_no_unknown_region() {
    let r = report(vec![clean("eu"), clean("us")]);
    assert_eq!(r.decision, Decision::Pass, "{}", r.reason);
    assert_eq!(unknown_series(&r), vec![line("eu", 0), line("us", 0)]);
}

/// Red team round 16, D1: a region the run found without an agent is the fleet's reason, from
/// the report itself (`no-agent`), whatever the registry says at a later scrape (the
/// exposition here is rendered with an empty fleet registry, and would be the same with the
/// agent back).
#[test]
fn a_region_without_an_agent_at_the_run_is_the_fleets() {
    let r = report_requested(
        &["ap".into(), "eu".into()],
        vec![
            clean("eu"),
            RegionResult::absent("ap", RegionStatus::NoAgent),
        ],
    );
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    assert_eq!(
        fleet_series(&r, &[]),
        vec![fleet_line("ap", 1), fleet_line("eu", 0)]
    );
}

/// A deadline in a region whose agent reported is the region's own reason: 0, and it stays
/// 0 whatever happens to the agent after the run (the metric holds the run's view only).
#[test]
fn a_deadline_in_a_region_with_an_agent_is_not_the_fleets() {
    let r = eu_deadline();
    assert_eq!(unknown_series(&r), vec![line("eu", 1), line("us", 0)]);
    assert_eq!(
        fleet_series(&r, &[]),
        vec![fleet_line("eu", 0), fleet_line("us", 0)]
    );
}

/// The regions the run saw refused or degraded (`Checks::run` names them) count only where
/// they made the run unknown: a region named but with its evidence in hand stays 0.
#[test]
fn the_runs_fleet_regions_count_only_where_they_made_it_unknown() {
    let r = report(vec![resolver_failed("ap"), clean("eu")]);
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    assert_eq!(
        fleet_series(&r, &["ap", "eu"]),
        vec![fleet_line("ap", 1), fleet_line("eu", 0)]
    );
    // The same run with nobody named: ap's resolver is its own reason.
    assert_eq!(
        fleet_series(&r, &[]),
        vec![fleet_line("ap", 0), fleet_line("eu", 0)]
    );
}

/// A region the merge discounted as degraded (`fleet.vantage-degraded` names it) is the
/// fleet's from the report alone.
#[test]
fn a_region_the_merge_discounted_as_degraded_is_the_fleets() {
    let b = unreachable(
        "b",
        Some(Cause::Timeout),
        "198.51.100.10:443 timeout after 5000 ms (connect: no answer)",
    );
    let r = report_degraded(&["a", "b"], vec![clean("a"), b], &["b"]);
    let f = r
        .finding(FindingId::FleetVantageDegraded)
        .expect("fleet.vantage-degraded");
    assert_eq!(f.regions, vec!["b".to_string()]);
    assert_eq!(unknown_series(&r), vec![line("a", 0), line("b", 1)]);
    assert_eq!(
        fleet_series(&r, &[]),
        vec![fleet_line("a", 0), fleet_line("b", 1)]
    );
}
