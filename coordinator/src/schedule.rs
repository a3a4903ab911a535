//! Scheduled checks: each target on its own interval, the start offset spread over the
//! interval (from a hash of the target) so checks do not fire in bursts, and never
//! overlapping itself: a run still going when the next is due is skipped and counted.
//! Scheduled reports feed the metrics and degraded-region detection (and only they do: an
//! on-demand report feeds neither); no caller holds their id, so they are not kept in the
//! store of on-demand reports.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::checks::{CheckRequest, Checks, Origin};
use crate::config::Scheduled;

/// Where in its interval a target's runs fall: a stable fraction of the interval.
pub fn offset(target: &str, interval: Duration) -> Duration {
    let mut h = DefaultHasher::new();
    target.hash(&mut h);
    let frac = (h.finish() % 10_000) as f64 / 10_000.0;
    interval.mul_f64(frac)
}

/// The request of one scheduled run.
pub fn request(checks: &Checks, c: &Scheduled, default_deadline: Duration) -> CheckRequest {
    let regions = if c.regions.is_empty() {
        checks.regions()
    } else {
        c.regions.clone()
    };
    let credential = c
        .credential
        .as_ref()
        .and_then(|n| checks.credential(n).map(|s| (n.clone(), s)));
    let deadline = c.deadline.unwrap_or(default_deadline).min(c.interval);
    CheckRequest {
        target: c.target.clone(),
        regions,
        credential,
        expect_auth: c.expect_auth,
        deadline,
        baseline: c.baseline.as_ref().map(|b| b.0.clone()),
    }
}

/// Start one task per scheduled check; abort the handles to stop them.
pub fn start(
    checks: &Arc<Checks>,
    scheduled: &[Scheduled],
    default_deadline: Duration,
) -> Vec<JoinHandle<()>> {
    let exported: Vec<(String, f64, std::collections::BTreeMap<String, String>)> = scheduled
        .iter()
        .map(|c| {
            (
                c.target.to_string(),
                c.interval.as_secs_f64(),
                c.labels.clone(),
            )
        })
        .collect();
    checks.metrics.set_schedule(&exported);
    // A region a check no longer runs from (a reload) loses its series now, not at the next run.
    let mut learned = Vec::with_capacity(scheduled.len());
    for c in scheduled {
        let regions = request(checks, c, default_deadline).regions;
        checks.metrics.keep_regions(&c.target.to_string(), &regions);
        learned.push((c.target.to_string(), regions));
    }
    // Degraded regions are learned from these targets and regions only.
    checks.degraded.schedule(&learned);
    checks.publish_degraded();
    // Reports (and the baselines written from them) name a target as shown, redacted.
    let shown: Vec<(String, &crate::baseline::Baseline)> = scheduled
        .iter()
        .filter_map(|c| c.baseline.as_ref().map(|b| (c.target.to_string(), &*b.0)))
        .collect();
    let named = shown.iter().map(|(t, b)| (t.as_str(), *b));
    for (file, e) in crate::baseline::unscheduled(named) {
        tracing::warn!(baseline = %file.display(), "{}", crate::render::stale_words(&e));
    }
    scheduled
        .iter()
        .cloned()
        .map(|c| {
            let checks = checks.clone();
            tokio::spawn(async move {
                let running = Arc::new(AtomicBool::new(false));
                tokio::time::sleep(offset(c.target.as_str(), c.interval)).await;
                let mut tick = tokio::time::interval(c.interval);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                loop {
                    tick.tick().await;
                    let req = request(&checks, &c, default_deadline);
                    if running.swap(true, Ordering::SeqCst) {
                        tracing::warn!(target = %c.target, "the previous run is still going; skipping this one");
                        checks.metrics.scheduled_skipped(&req.target.to_string());
                        continue;
                    }
                    // The report feeds the metrics and degraded-region detection; it is not
                    // kept in the store of on-demand reports (no caller holds its id).
                    let (checks, flag) = (checks.clone(), running.clone());
                    tokio::spawn(async move {
                        checks.run(&req, Origin::Scheduled, &|_| {}).await;
                        flag.store(false, Ordering::SeqCst);
                    });
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// The lifecycle with only the in-process vantage, as `serve` wires it.
    fn checks() -> Checks {
        let registry = Arc::new(crate::fleet::Registry::default());
        // A fleet vantage: the loopback target is allowed by the policy every job carries.
        let local = vantage_agent::ProbeOptions {
            allow_named_target: false,
            ..vantage_agent::ProbeOptions::default()
        };
        Checks {
            credentials: Default::default(),
            regions: std::sync::RwLock::new(vec!["local".into()]),
            dispatcher: Arc::new(crate::checks::Dispatcher {
                registry,
                local: Some(("local".into(), vantage_agent::Engine::new(local).unwrap())),
                policy: vantage_agent::Policy {
                    allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
                    ..vantage_agent::Policy::default()
                },
            }),
            store: Arc::new(crate::checks::Store::new(100, Duration::from_secs(3600))),
            metrics: Arc::new(crate::metrics::Metrics::new(prometheus::Registry::new()).unwrap()),
            degraded: Default::default(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scheduled_runs_feed_the_metrics_and_only_on_demand_reports_are_stored() {
        let fixture = vantage_fixture::Fixture::start(&[]).await.unwrap();
        let checks = Arc::new(checks());
        let check = Scheduled {
            target: vantage_agent::Target::parse(&fixture.url()).unwrap(),
            interval: Duration::from_millis(200),
            regions: vec![],
            credential: None,
            expect_auth: false,
            deadline: None,
            labels: Default::default(),
            baseline: None,
        };
        // A long deadline: on a loaded machine a debug-build run of the whole catalogue can
        // take seconds, and what is tested here is where the runs go, not their decision.
        let tasks = start(
            &checks,
            std::slice::from_ref(&check),
            Duration::from_secs(120),
        );
        let target = format!("target=\"{}\"}} ", fixture.url());
        let began = Instant::now();
        loop {
            let text = checks
                .metrics
                .render(&checks.dispatcher.registry, &checks.regions());
            // Merged runs of this target, whatever each decided.
            let runs: u64 = text
                .lines()
                .filter(|l| l.starts_with("vantage_runs_total{decision="))
                .filter_map(|l| l.split_once(target.as_str()))
                .filter_map(|(_, n)| n.parse::<u64>().ok())
                .sum();
            if runs >= 3 {
                break;
            }
            assert!(
                began.elapsed() < Duration::from_secs(300),
                "three scheduled runs did not merge: {runs}\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for t in tasks {
            t.abort();
        }
        assert!(
            checks.store.is_empty(),
            "scheduled reports are not kept: {} stored",
            checks.store.len()
        );

        let req = request(&checks, &check, Duration::from_secs(120));
        let (id, mut done) = checks.start(req);
        done.wait_for(|d| *d).await.unwrap();
        let stored = checks
            .store
            .get(&id)
            .expect("an on-demand report is kept under its id");
        assert_eq!(stored.target, fixture.url());
        assert_eq!(
            stored.regions.len(),
            1,
            "the local region's section is in it"
        );
        assert_eq!(checks.store.len(), 1);
    }

    /// Red team round 3: a region dropped from a check by a reload kept its series (DNS,
    /// probe durations, check outcomes) until the target's next run, an interval later; a
    /// fresh look then found that a run in flight at the reload wrote them back.
    #[tokio::test]
    async fn a_region_dropped_from_a_check_loses_its_series_at_once() {
        use crate::test_reports::{clean, report, report_requested};
        let checks = Arc::new(checks());
        let mut check = Scheduled {
            target: vantage_agent::Target::parse("http://127.0.0.1:9/mcp").unwrap(),
            interval: Duration::from_secs(3600),
            regions: vec!["eu".into(), "us".into()],
            credential: None,
            expect_auth: false,
            deadline: None,
            labels: Default::default(),
            baseline: None,
        };
        // The DNS series of eu and of us, and the decision series, exported now.
        let exported = |checks: &Checks| {
            let text = checks
                .metrics
                .render(&checks.dispatcher.registry, &checks.regions());
            let dns = |region: &str| {
                let region = format!("region=\"{region}\"");
                text.lines()
                    .filter(|l| l.starts_with("vantage_dns_has_a_record{") && l.contains(&region))
                    .count()
            };
            let decisions = text
                .lines()
                .filter(|l| l.starts_with("vantage_decision{"))
                .count();
            (dns("eu"), dns("us"), decisions)
        };
        // The schedule as `check` says, started and stopped at once (a reload).
        let reload = |check: &Scheduled| {
            for t in start(
                &checks,
                std::slice::from_ref(check),
                Duration::from_secs(10),
            ) {
                t.abort();
            }
        };
        let observe = |regions: &[&str]| {
            let results = regions.iter().map(|r| clean(r)).collect();
            checks.metrics.observe(&report(results));
        };
        // vantage_region_unknown_fleet, as `region value` (red team round 16, D1).
        let fleet = |checks: &Checks| -> Vec<String> {
            let text = checks
                .metrics
                .render(&checks.dispatcher.registry, &checks.regions());
            text.lines()
                .filter_map(|l| l.strip_prefix("vantage_region_unknown_fleet{region=\""))
                .filter_map(|l| l.split_once("\",target=\"http://127.0.0.1:9/mcp\"} "))
                .map(|(r, v)| format!("{r} {v}"))
                .collect()
        };
        reload(&check);
        observe(&["eu", "us"]);
        let (eu, us, _) = exported(&checks);
        assert_eq!((eu, us), (1, 1));
        // A run that found no agent in us: the fleet's reason, written with the run.
        checks.metrics.observe(&report_requested(
            &["eu".into(), "us".into()],
            vec![
                clean("eu"),
                vantage_agent::model::RegionResult::absent(
                    "us",
                    vantage_agent::model::RegionStatus::NoAgent,
                ),
            ],
        ));
        assert_eq!(fleet(&checks), ["eu 0", "us 1"]);
        // The reload: the same target, from eu only.
        check.regions = vec!["eu".into()];
        reload(&check);
        // The last run rested on us too: it goes, decision and all, until the next run.
        assert_eq!(exported(&checks), (0, 0, 0));
        assert!(fleet(&checks).is_empty());
        // A run still in flight at the reload (it asked us) ends: not exported.
        observe(&["eu", "us"]);
        assert_eq!(exported(&checks), (0, 0, 0));
        assert!(fleet(&checks).is_empty());
        // The next run, from eu only, is.
        observe(&["eu"]);
        assert_eq!(exported(&checks), (1, 0, 4));
        assert_eq!(fleet(&checks), ["eu 0"]);
    }

    #[test]
    fn offsets_spread_targets_over_the_interval() {
        let interval = Duration::from_secs(60);
        let offsets: Vec<Duration> = (0..50)
            .map(|i| offset(&format!("https://t{i}.example/mcp"), interval))
            .collect();
        assert!(offsets.iter().all(|o| *o < interval));
        assert_eq!(
            offset("https://a.example/mcp", interval),
            offset("https://a.example/mcp", interval),
            "stable"
        );
        let early = offsets.iter().filter(|o| **o < interval / 2).count();
        assert!(
            (10..=40).contains(&early),
            "{early} of 50 in the first half"
        );
    }
}
