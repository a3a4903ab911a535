//! The check lifecycle, one for an on-demand check (the API) and a scheduled one
//! (`schedule`): the request, its dispatch to one vantage per region (`dispatch`), the merged
//! report (`assemble`), the store of on-demand reports (`store`), degraded-region detection
//! (`degraded`) and the hand-off to the metrics. The HTTP API only validates a request and
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

    /// Run a check to its merged report, and learn from it: degraded regions, the metrics.
    /// `on_region` sees each region as it arrives.
    pub async fn run(
        &self,
        req: &CheckRequest,
        on_region: &(dyn Fn(&RegionResult) + Send + Sync),
    ) -> Report {
        let degraded = self.degraded.regions();
        let mut report = self.dispatcher.run(req, &degraded, on_region).await;
        // Accepted findings are marked before the metrics see the report (`accepted="true"`).
        if let Some(b) = &req.baseline {
            b.apply(&mut report, crate::baseline::today());
        }
        self.degraded.record(&report);
        for region in self.regions() {
            self.metrics
                .set_degraded(&region, self.degraded.regions().contains(&region));
        }
        self.metrics.observe(&report);
        report
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
            let mut report = checks.run(&req, &on_region).await;
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
