//! Red team round 16, D1: `vantage_region_unknown_fleet` says why each region left a
//! scheduled run without evidence, as that run saw it (no agent connected, its agents
//! refused the job), and a scrape after the fleet changed says the same. Regions are
//! scripted agents on the fleet registry (no traffic).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use vantage_agent::model::{Cause, Outcome, RegionResult};

use super::{test_checks, test_scheduled, Checks, Origin};
use crate::fleet::{JobOutcome, Registry, ToAgent};
use crate::report::Decision;
use crate::test_reports::{clean, set};

const T: &str = "https://t.lab/mcp";

#[derive(Clone, Copy)]
enum Answer {
    Clean,
    /// A check the deadline left without evidence (`probe.incomplete`): the region's own.
    Deadline,
    Refuse,
}

/// An agent of `region` that answers every job with `answer`; returns its session.
fn agent(reg: &Arc<Registry>, region: &'static str, answer: Answer) -> u64 {
    let (tx, mut rx) = mpsc::channel(8);
    let session = reg.register(format!("{region}-1"), region.into(), "v".into(), tx);
    let reg = reg.clone();
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            if let ToAgent::Job { id, .. } = msg {
                let outcome = match answer {
                    Answer::Clean => JobOutcome::Done(Box::new(clean(region))),
                    Answer::Deadline => {
                        let mut r: RegionResult = clean(region);
                        set(
                            &mut r,
                            "tools.list-shape",
                            Outcome::Unknown,
                            None,
                            Some(Cause::Deadline),
                            "the deadline ran out",
                        );
                        JobOutcome::Done(Box::new(r))
                    }
                    Answer::Refuse => JobOutcome::Refused(
                        "probe.allow_non_global names 127.0.0.0/8, wider than this agent's --allow-non-global-max (none)".into(),
                    ),
                };
                reg.complete(session, &id, outcome);
            }
        }
    });
    session
}

/// `family`'s series of T as `region value`, in the exposition's order.
fn series(checks: &Checks, family: &str) -> Vec<String> {
    let text = checks
        .metrics
        .render(&checks.dispatcher.registry, &checks.regions());
    let prefix = format!("{family}{{region=\"");
    let tail = format!("\",target=\"{T}\"}} ");
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .filter_map(|l| l.split_once(tail.as_str()))
        .map(|(region, v)| format!("{region} {v}"))
        .collect()
}

/// a observes the target; b's only agent refuses the job; c has no agent; d's agent is
/// connected and its run leaves a check to the deadline. The run is unknown because of b,
/// c and d; b and c are the fleet's, d is not. Then the fleet changes (c's agent connects,
/// d's leaves, b's refusing agent leaves) before the next run: the scrape still says why
/// the run it describes was unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_reason_is_the_runs_not_the_fleets_at_the_scrape() {
    let registry = Arc::new(Registry::default());
    agent(&registry, "a", Answer::Clean);
    let b = agent(&registry, "b", Answer::Refuse);
    let d = agent(&registry, "d", Answer::Deadline);
    let checks = test_checks(registry.clone(), &["a", "b", "c", "d"]);
    let c = test_scheduled(T);
    for t in crate::schedule::start(&checks, std::slice::from_ref(&c), Duration::from_secs(30)) {
        t.abort();
    }
    let req = crate::schedule::request(&checks, &c, Duration::from_secs(30));
    let r = checks.run(&req, Origin::Scheduled, &|_| {}).await;
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    let unknown = ["a 0", "b 1", "c 1", "d 1"];
    let fleet = ["a 0", "b 1", "c 1", "d 0"];
    assert_eq!(series(&checks, "vantage_region_unknown"), unknown);
    assert_eq!(series(&checks, "vantage_region_unknown_fleet"), fleet);
    // The fleet now: c has an agent, d and b have none. The last run is what it was.
    agent(&registry, "c", Answer::Clean);
    registry.deregister(d);
    registry.deregister(b);
    assert_eq!(series(&checks, "vantage_region_unknown"), unknown);
    assert_eq!(series(&checks, "vantage_region_unknown_fleet"), fleet);
    // An on-demand check changes nothing either.
    let mut ad_hoc = req.clone();
    ad_hoc.regions = vec!["d".into()];
    checks.run(&ad_hoc, Origin::OnDemand, &|_| {}).await;
    assert_eq!(series(&checks, "vantage_region_unknown_fleet"), fleet);
    // The next scheduled run sees the fleet as it is now: d without an agent is the
    // fleet's, b too; c observes.
    checks.run(&req, Origin::Scheduled, &|_| {}).await;
    assert_eq!(
        series(&checks, "vantage_region_unknown_fleet"),
        ["a 0", "b 1", "c 0", "d 1"]
    );
}
