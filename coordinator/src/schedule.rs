//! Scheduled checks: each target on its own interval, the start offset spread over the
//! interval (from a hash of the target) so checks do not fire in bursts, and never
//! overlapping itself: a run still going when the next is due is skipped and counted.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::api::{self, Api};
use crate::config::Scheduled;
use crate::dispatch::CheckRequest;

/// Where in its interval a target's runs fall: a stable fraction of the interval.
pub fn offset(target: &str, interval: Duration) -> Duration {
    let mut h = DefaultHasher::new();
    target.hash(&mut h);
    let frac = (h.finish() % 10_000) as f64 / 10_000.0;
    interval.mul_f64(frac)
}

/// The request of one scheduled run.
pub fn request(api: &Api, c: &Scheduled, default_deadline: Duration) -> CheckRequest {
    let regions = if c.regions.is_empty() {
        api.regions()
    } else {
        c.regions.clone()
    };
    let credential = c
        .credential
        .as_ref()
        .and_then(|n| api.credential(n).map(|s| (n.clone(), s)));
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
    api: &Arc<Api>,
    checks: &[Scheduled],
    default_deadline: Duration,
) -> Vec<JoinHandle<()>> {
    let exported: Vec<(String, f64, std::collections::BTreeMap<String, String>)> = checks
        .iter()
        .map(|c| {
            (
                c.target.to_string(),
                c.interval.as_secs_f64(),
                c.labels.clone(),
            )
        })
        .collect();
    api.metrics.set_schedule(&exported);
    checks
        .iter()
        .cloned()
        .map(|c| {
            let api = api.clone();
            tokio::spawn(async move {
                let running = Arc::new(AtomicBool::new(false));
                tokio::time::sleep(offset(c.target.as_str(), c.interval)).await;
                let mut tick = tokio::time::interval(c.interval);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                loop {
                    tick.tick().await;
                    let req = request(&api, &c, default_deadline);
                    if running.swap(true, Ordering::SeqCst) {
                        tracing::warn!(target = %c.target, "the previous run is still going; skipping this one");
                        api.metrics.scheduled_skipped(&req.target.to_string());
                        continue;
                    }
                    let (_, mut done) = api::start(&api, req);
                    let flag = running.clone();
                    tokio::spawn(async move {
                        let _ = done.wait_for(|d| *d).await;
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
