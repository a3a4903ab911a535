//! What the coordinator learns from a run, by where the run comes from (red team round 6,
//! #13 and #3): scheduled runs of `[[checks]]` targets feed the degraded-region state and the
//! per-target series; on-demand (API) checks feed neither. Regions a, b and c are scripted
//! agents on the fleet registry (no traffic: each answers with a region result built here).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Cause, RegionResult, Severity};
use vantage_agent::Target;

use super::{test_checks, test_scheduled, Checks, Origin};
use crate::config::Scheduled;
use crate::fleet::{JobOutcome, Registry, ToAgent};
use crate::report::{Decision, Report, Scope};
use crate::test_reports::{clean, fail, nxdomain, resolver_failed, unreachable};

/// What region b sees. a and c always see a clean target.
#[derive(Debug, Default)]
struct World {
    /// b's resolver answers NXDOMAIN for the x*.lab names (a, c resolve them).
    b_nxdomain_x: AtomicBool,
    /// b's resolver answers NXDOMAIN for ok.lab too.
    b_nxdomain_ok: AtomicBool,
    /// b reaches ok.lab through another edge: an unknown method gets an HTML 404.
    b_other_edge: AtomicBool,
    /// b's own resolver does not answer for the x*.lab names (a, c resolve them).
    b_resolver_dead_x: AtomicBool,
    /// b's egress drops its connections to the x*.lab names' address, which a and c
    /// connect to.
    b_unreachable_x: AtomicBool,
}

impl World {
    fn result(&self, region: &str, host: &str) -> RegionResult {
        if region != "b" {
            return clean(region);
        }
        let x = host.starts_with('x');
        if x && self.b_resolver_dead_x.load(Ordering::SeqCst) {
            return resolver_failed("b");
        }
        if x && self.b_unreachable_x.load(Ordering::SeqCst) {
            return unreachable(
                "b",
                Some(Cause::Timeout),
                "198.51.100.10:443 timeout after 5000 ms (connect: no answer)",
            );
        }
        if (x && self.b_nxdomain_x.load(Ordering::SeqCst))
            || (!x && self.b_nxdomain_ok.load(Ordering::SeqCst))
        {
            return nxdomain("b");
        }
        let mut r = clean("b");
        if !x && self.b_other_edge.load(Ordering::SeqCst) {
            fail(&mut r, "method.unknown", Severity::High, "404 text/html");
        }
        r
    }
}

/// The coordinator's lifecycle with agents for a, b and c answering from `world`.
fn checks(world: &Arc<World>) -> Arc<Checks> {
    let registry = Arc::new(Registry::default());
    for region in ["a", "b", "c"] {
        let (tx, mut rx) = mpsc::channel(64);
        let session = registry.register(format!("{region}-1"), region.into(), "v".into(), tx);
        let (registry, world) = (registry.clone(), world.clone());
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                if let ToAgent::Job { id, job } = msg {
                    let r = world.result(region, &job.target.host);
                    registry.complete(session, &id, JobOutcome::Done(Box::new(r)));
                }
            }
        });
    }
    test_checks(registry, &["a", "b", "c"])
}

fn scheduled(host: &str) -> Scheduled {
    test_scheduled(&format!("https://{host}/mcp"))
}

/// Configure the schedule as `serve` does (its timers stopped: the runs are driven here).
fn configure(checks: &Arc<Checks>, hosts: &[&str]) -> Vec<Scheduled> {
    let list: Vec<Scheduled> = hosts.iter().map(|h| scheduled(h)).collect();
    for t in crate::schedule::start(checks, &list, Duration::from_secs(30)) {
        t.abort();
    }
    list
}

/// One scheduled run of `c`, as the schedule's timer starts it.
async fn scheduled_run(checks: &Checks, c: &Scheduled) -> Report {
    let req = crate::schedule::request(checks, c, Duration::from_secs(30));
    checks.run(&req, Origin::Scheduled, &|_| {}).await
}

/// An on-demand check, as `POST /v1/checks` starts it.
async fn on_demand(checks: &Arc<Checks>, host: &str, regions: &[&str]) -> Report {
    let req = super::CheckRequest {
        target: Target::parse(&format!("https://{host}/mcp")).unwrap(),
        regions: regions.iter().map(|r| r.to_string()).collect(),
        credential: None,
        expect_auth: false,
        deadline: Duration::from_secs(30),
        baseline: None,
    };
    let (id, mut done) = checks.start(req);
    done.wait_for(|d| *d).await.unwrap();
    checks.store.get(&id).expect("stored")
}

fn metrics(checks: &Checks) -> String {
    checks
        .metrics
        .render(&checks.dispatcher.registry, &checks.regions())
}

fn degraded_gauge(checks: &Checks, region: &str) -> String {
    let prefix = format!("vantage_region_degraded{{region=\"{region}\"}} ");
    metrics(checks)
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()).map(str::to_string))
        .unwrap_or_else(|| "absent".into())
}

/// The report blocks on b's method.unknown (high, regional, b only), whatever b's state.
fn assert_blocked_on_bs_edge(r: &Report) {
    assert_eq!(r.decision, Decision::Blocked, "{}", r.reason);
    let f = r.finding(FindingId::MethodUnknown).expect("method.unknown");
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::High, Scope::Regional, vec!["b".to_string()])
    );
    assert!(r.finding(FindingId::FleetVantageDegraded).is_none());
}

/// #13 (a): three (or any number of) on-demand checks of a caller's targets, failing at b's
/// resolver, never make b degraded, and b's real fault on another target keeps blocking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_demand_checks_never_make_a_region_degraded() {
    let world = Arc::new(World::default());
    world.b_nxdomain_x.store(true, Ordering::SeqCst);
    world.b_other_edge.store(true, Ordering::SeqCst);
    let checks = checks(&world);
    configure(&checks, &["ok.lab"]);
    assert_blocked_on_bs_edge(&on_demand(&checks, "ok.lab", &["a", "b", "c"]).await);
    for x in ["x1.lab", "x2.lab", "x3.lab", "x4.lab", "x5.lab"] {
        let r = on_demand(&checks, x, &["a", "b", "c"]).await;
        let f = r
            .finding(FindingId::DnsSplitHorizon)
            .expect("split horizon");
        assert_eq!(f.regions, vec!["b".to_string()]);
    }
    assert!(checks.degraded.regions().is_empty());
    assert!(checks.degraded.is_empty(), "on-demand targets are not kept");
    assert_eq!(degraded_gauge(&checks, "b"), "0");
    assert_blocked_on_bs_edge(&on_demand(&checks, "ok.lab", &["a", "b", "c"]).await);
}

/// #13 (a, b, c): scheduled runs of configured targets that fail at b's egress alone (its
/// connections to the address a and c connect to time out) make b degraded; b's high fault
/// on a target it observed still blocks; scheduled runs in which b connects again heal it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_runs_make_a_region_degraded_and_heal_it() {
    let world = Arc::new(World::default());
    world.b_unreachable_x.store(true, Ordering::SeqCst);
    world.b_other_edge.store(true, Ordering::SeqCst);
    let checks = checks(&world);
    let list = configure(&checks, &["x1.lab", "x2.lab", "x3.lab"]);
    assert_eq!(degraded_gauge(&checks, "b"), "0");
    for c in &list {
        scheduled_run(&checks, c).await;
    }
    assert_eq!(
        checks.degraded.regions(),
        std::collections::BTreeSet::from(["b".to_string()])
    );
    assert_eq!(degraded_gauge(&checks, "b"), "1");
    assert_eq!(degraded_gauge(&checks, "a"), "0");
    // Its egress failure on a target the others reach is discounted ...
    let r = on_demand(&checks, "x9.lab", &["a", "b", "c"]).await;
    assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
    let f = r
        .finding(FindingId::FleetVantageDegraded)
        .expect("the note");
    assert_eq!(f.regions, vec!["b".to_string()]);
    assert!(f.evidence.iter().any(|e| e.starts_with("b: net.connect")));
    // ... what it observed is not.
    assert_blocked_on_bs_edge(&on_demand(&checks, "ok.lab", &["a", "b", "c"]).await);
    // b's egress is fixed: each scheduled run clears its target; with two of three clear,
    // b no longer fails most targets.
    world.b_unreachable_x.store(false, Ordering::SeqCst);
    scheduled_run(&checks, &list[0]).await;
    assert_eq!(degraded_gauge(&checks, "b"), "1", "x2, x3 still fail in b");
    scheduled_run(&checks, &list[1]).await;
    assert!(checks.degraded.regions().is_empty());
    assert_eq!(degraded_gauge(&checks, "b"), "0");
    // A reload that drops the targets forgets them.
    configure(&checks, &["ok.lab"]);
    assert!(checks.degraded.is_empty());
}

/// Red team round 13, #1: scheduled runs in which the zone answers NXDOMAIN in b alone (a
/// DNS provider's regional view breaking for every target behind it) never make b degraded:
/// each is a split horizon about its target, blocked, and stays so on the next runs (it had
/// become `unknown` with `fleet.vantage-degraded`, and nothing paged).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_zones_nxdomain_in_one_region_never_makes_it_degraded() {
    let world = Arc::new(World::default());
    world.b_nxdomain_x.store(true, Ordering::SeqCst);
    let checks = checks(&world);
    let list = configure(&checks, &["x1.lab", "x2.lab", "x3.lab"]);
    for _ in 0..2 {
        for c in &list {
            let r = scheduled_run(&checks, c).await;
            assert_eq!(r.decision, Decision::Blocked, "{}", r.reason);
            let f = r
                .finding(FindingId::DnsSplitHorizon)
                .expect("split horizon");
            assert_eq!(
                (f.severity, f.scope, f.regions.clone()),
                (Severity::High, Scope::Regional, vec!["b".to_string()])
            );
            assert!(r.finding(FindingId::FleetVantageDegraded).is_none());
        }
    }
    assert!(checks.degraded.regions().is_empty());
    assert_eq!(degraded_gauge(&checks, "b"), "0");
    let r = on_demand(&checks, "x4.lab", &["a", "b", "c"]).await;
    assert_eq!(r.decision, Decision::Blocked, "{}", r.reason);
}

/// Red team round 10 (#2): scheduled runs in which b's own resolver fails every target while
/// a and c reach them make b degraded (the fleet alert names it), and b is the one region
/// `vantage_region_unknown` names; the decision stays unknown with `probe.resolver-failed`
/// in b (no evidence, nothing for the merge to discount: no `fleet.vantage-degraded`), and
/// b's high fault on a target it observed still blocks. b heals when it resolves again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_resolver_makes_its_region_degraded_and_the_decision_stays_unknown() {
    let world = Arc::new(World::default());
    world.b_resolver_dead_x.store(true, Ordering::SeqCst);
    world.b_other_edge.store(true, Ordering::SeqCst);
    let checks = checks(&world);
    let list = configure(&checks, &["x1.lab", "x2.lab", "x3.lab"]);
    let mut last = None;
    for c in &list {
        last = Some(scheduled_run(&checks, c).await);
    }
    assert_eq!(degraded_gauge(&checks, "b"), "1");
    assert_eq!(degraded_gauge(&checks, "a"), "0");
    // The next run of x1, with b degraded, decides as before.
    let r = scheduled_run(&checks, &list[0]).await;
    for r in [last.unwrap(), r] {
        assert_eq!(r.decision, Decision::Unknown, "{}", r.reason);
        let f = r
            .finding(FindingId::ProbeResolverFailed)
            .expect("the resolver");
        assert_eq!(
            (f.scope, f.regions.clone()),
            (Scope::Regional, vec!["b".to_string()])
        );
        assert!(r.finding(FindingId::FleetVantageDegraded).is_none());
    }
    let unknown: Vec<String> = target_series(&checks, "https://x1.lab/mcp")
        .into_iter()
        .filter(|l| l.starts_with("vantage_region_unknown{"))
        .collect();
    assert_eq!(
        unknown,
        ["a 0", "b 1", "c 0"].map(|v| {
            let (region, v) = v.split_once(' ').unwrap();
            format!(
                "vantage_region_unknown{{region=\"{region}\",target=\"https://x1.lab/mcp\"}} {v}"
            )
        })
    );
    // Red team round 16, D1: x1's last run is unknown because of b, a region degraded at
    // that run: the fleet's reason, written with the run.
    let fleet: Vec<String> = target_series(&checks, "https://x1.lab/mcp")
        .into_iter()
        .filter(|l| l.starts_with("vantage_region_unknown_fleet{"))
        .collect();
    assert_eq!(
        fleet,
        ["a 0", "b 1", "c 0"].map(|v| {
            let (region, v) = v.split_once(' ').unwrap();
            format!(
                "vantage_region_unknown_fleet{{region=\"{region}\",target=\"https://x1.lab/mcp\"}} {v}"
            )
        })
    );
    assert_blocked_on_bs_edge(&on_demand(&checks, "ok.lab", &["a", "b", "c"]).await);
    world.b_resolver_dead_x.store(false, Ordering::SeqCst);
    scheduled_run(&checks, &list[1]).await;
    scheduled_run(&checks, &list[2]).await;
    assert_eq!(degraded_gauge(&checks, "b"), "0");
}

/// The lines of the per-target series of `target`.
fn target_series(checks: &Checks, target: &str) -> Vec<String> {
    let label = format!("target=\"{target}\"");
    metrics(checks)
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(&label))
        .map(str::to_string)
        .collect()
}

/// #3: an on-demand check of a scheduled target, from one region, leaves the scheduled
/// series as the last scheduled run wrote them (its decision, its gate decision, its run
/// counters and timestamp, every region's series); the next scheduled run writes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_demand_checks_leave_the_scheduled_series_alone() {
    let world = Arc::new(World::default());
    world.b_nxdomain_ok.store(true, Ordering::SeqCst);
    let checks = checks(&world);
    let list = configure(&checks, &["ok.lab"]);
    let target = "https://ok.lab/mcp";
    let r = scheduled_run(&checks, &list[0]).await;
    assert_eq!(r.decision, Decision::Blocked, "{}", r.reason);
    let before = target_series(&checks, target);
    let has = |lines: &[String], prefix: &str| lines.iter().any(|l| l.starts_with(prefix));
    let decision = format!("vantage_decision{{decision=\"blocked\",target=\"{target}\"}} 1");
    let runs =
        |n: u32| format!("vantage_runs_total{{decision=\"blocked\",target=\"{target}\"}} {n}");
    assert!(has(&before, &decision), "{before:#?}");
    assert!(has(&before, &runs(1)), "{before:#?}");
    for region in ["a", "b", "c"] {
        let reachable = format!("vantage_check_success{{check=\"dns.resolve\",region=\"{region}\"");
        assert!(has(&before, &reachable), "{region}: {before:#?}");
    }

    let r = on_demand(&checks, "ok.lab", &["a"]).await;
    assert_eq!(r.decision, Decision::Pass, "{}", r.reason);
    assert_eq!(
        target_series(&checks, target),
        before,
        "the on-demand run wrote series"
    );

    // The next scheduled run does.
    scheduled_run(&checks, &list[0]).await;
    let after = target_series(&checks, target);
    assert!(has(&after, &runs(2)), "{after:#?}");
    assert!(has(&after, &decision), "{after:#?}");
}
