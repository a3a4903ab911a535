//! The check lifecycle, one for an on-demand check (the API) and a scheduled one
//! (`schedule`): the request, its dispatch to one vantage per region (`dispatch`), the merged
//! report (`assemble`), the store of on-demand reports (`store`), degraded-region detection
//! (`degraded`) and the hand-off to the metrics; the last two learn from scheduled runs
//! only. The HTTP API only validates a request and
//! starts it here.

mod assemble;
pub mod degraded;
pub mod dispatch;
pub mod store;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::watch;
use vantage_agent::model::{Era, RegionResult};
use vantage_agent::{Credentials, Target};

pub use assemble::assemble;
pub use degraded::Degraded;
pub use dispatch::{Dispatcher, Vantage};
pub use store::Store;

use crate::clock::now_rfc3339;
use crate::metrics::Metrics;
use crate::report::{Decision, Report, SCHEMA_ID};

/// One on-demand (or scheduled) check.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub target: Target,
    pub regions: Vec<String>,
    /// A named credential and its secrets (the main token, and the other-audience and
    /// missing-scope tokens when configured).
    pub credential: Option<(String, Credentials)>,
    pub expect_auth: bool,
    pub deadline: Duration,
    /// Accepted findings to mark in the report (scheduled checks that name a baseline).
    pub baseline: Option<Arc<crate::baseline::Baseline>>,
}

/// Where a run comes from: what the coordinator may learn from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The schedule's run of a configured `[[checks]]` target: it feeds the per-target series
    /// and the degraded-region state.
    Scheduled,
    /// A check submitted through the API: its report is answered (and stored), not learned
    /// from.
    OnDemand,
}

/// What every check shares: what a request may name (regions, credentials; both change on a
/// configuration reload), where it runs, where its report goes.
#[derive(Debug)]
pub struct Checks {
    /// Named credentials: the main token and the negative ones, read from env or files.
    pub credentials: RwLock<BTreeMap<String, Credentials>>,
    /// Every region a check may name.
    pub regions: RwLock<Vec<String>>,
    pub dispatcher: Arc<Dispatcher>,
    pub store: Arc<Store>,
    pub metrics: Arc<Metrics>,
    pub degraded: Arc<Degraded>,
}

impl Checks {
    /// Every region a check may name.
    pub fn regions(&self) -> Vec<String> {
        self.regions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The configured credential `name`.
    pub fn credential(&self, name: &str) -> Option<Credentials> {
        self.credentials
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// The names of the configured credentials, in order (for an error that lists them).
    pub fn credential_names(&self) -> Vec<String> {
        self.credentials
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// Run a check to its merged report. A scheduled run (a `[[checks]]` target, its
    /// configured regions, credential and deadline) is also what the coordinator learns from:
    /// the degraded regions and the per-target series. An on-demand run (the API) is answered
    /// and nothing more: a caller's choice of targets, regions or timing never moves what the
    /// merge discounts for everyone, nor the series of a scheduled target (`checks.md` 8).
    /// `on_region` sees each region as it arrives.
    pub async fn run(
        &self,
        req: &CheckRequest,
        origin: Origin,
        on_region: &(dyn Fn(&RegionResult) + Send + Sync),
    ) -> Report {
        let degraded = self.degraded.regions();
        let (mut report, mut fleet) = self.dispatcher.run(req, &degraded, on_region).await;
        // Accepted findings are marked before the metrics see the report (`accepted="true"`).
        if let Some(b) = &req.baseline {
            b.apply(&mut report, crate::baseline::today());
        }
        if origin == Origin::Scheduled {
            self.degraded.record(&report);
            self.publish_degraded();
            // Why each region was without evidence, as this run saw it: no agent, agents
            // that refused the job (`fleet`), or a degraded vantage, by the state the merge
            // used and by the state once this run counted (what `vantage_region_degraded`
            // read right after it). Never the fleet's state at some later scrape.
            fleet.extend(degraded);
            fleet.extend(self.degraded.regions());
            self.metrics.observe_run(&report, &fleet);
        }
        report
    }

    /// `vantage_region_degraded` for every region, from what the scheduled runs showed.
    pub fn publish_degraded(&self) {
        let degraded = self.degraded.regions();
        for region in self.regions() {
            self.metrics
                .set_degraded(&region, degraded.contains(&region));
        }
    }

    /// Start an on-demand check in the background, kept in the store under its id (for
    /// `GET /v1/checks/{id}`); returns the id and a receiver that turns true when done.
    pub fn start(self: &Arc<Self>, req: CheckRequest) -> (String, watch::Receiver<bool>) {
        let id = ulid::Ulid::new().to_string();
        let done = self.store.insert_running(running(&id, &req.target));
        let checks = self.clone();
        let id2 = id.clone();
        tokio::spawn(async move {
            let store = checks.store.clone();
            let id3 = id2.clone();
            let on_region = move |r: &RegionResult| store.add_region(&id3, r);
            let mut report = checks.run(&req, Origin::OnDemand, &on_region).await;
            report.id = id2;
            checks.store.finish(report);
        });
        (id, done)
    }
}

/// The report of a check whose regions are outstanding.
fn running(id: &str, target: &Target) -> Report {
    Report {
        schema: SCHEMA_ID.into(),
        id: id.into(),
        target: target.to_string(),
        started_at: now_rfc3339(),
        duration_ms: 0,
        state: Some("running".into()),
        decision: Decision::Unknown,
        reason: "running: regions are outstanding".into(),
        era: Era::Unknown,
        regions: Vec::new(),
        findings: Vec::new(),
        baseline: None,
        gate: None,
    }
}

/// The unit tests' coordinator: runs dispatched to the agents of `regions` on `registry`
/// (no local vantage, the default policy), a fresh store, metrics and degraded state.
#[cfg(test)]
fn test_checks(registry: Arc<crate::fleet::Registry>, regions: &[&str]) -> Arc<Checks> {
    Arc::new(Checks {
        credentials: Default::default(),
        regions: RwLock::new(regions.iter().map(|r| r.to_string()).collect()),
        dispatcher: Arc::new(Dispatcher {
            registry,
            local: None,
            policy: vantage_agent::Policy::default(),
        }),
        store: Arc::new(Store::new(100, Duration::from_secs(3600))),
        metrics: Arc::new(Metrics::new(prometheus::Registry::new()).unwrap()),
        degraded: Default::default(),
    })
}

/// The unit tests' scheduled check of `url`: hourly, in every region, no credential, a
/// 30 s deadline, no labels or baseline.
#[cfg(test)]
fn test_scheduled(url: &str) -> crate::config::Scheduled {
    crate::config::Scheduled {
        target: Target::parse(url).unwrap(),
        interval: Duration::from_secs(3600),
        regions: vec![],
        credential: None,
        expect_auth: false,
        deadline: Some(Duration::from_secs(30)),
        labels: Default::default(),
        baseline: None,
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod lifecycle_tests;

#[cfg(test)]
#[path = "fleet_unknown_tests.rs"]
mod fleet_unknown_tests;
