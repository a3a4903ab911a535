//! Dispatch: fan a check out to one agent per requested region (or the in-process vantage),
//! wait until the deadline, and merge what arrived. A region that does not answer in time is
//! named, never silently dropped.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use secrecy::{ExposeSecret, SecretString};
use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::{Credentials, Engine, Target};
use vantage_proto::v1 as pb;

use crate::fleet::{JobOutcome, Registry};
use crate::local::{assemble, now_rfc3339};
use crate::report::Report;

/// One on-demand (or scheduled) check.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub target: Target,
    pub regions: Vec<String>,
    /// A named credential and its secret.
    pub credential: Option<(String, SecretString)>,
    pub expect_auth: bool,
    pub deadline: Duration,
}

/// Sends jobs and collects results.
#[derive(Debug)]
pub struct Dispatcher {
    pub registry: Arc<Registry>,
    /// The in-process vantage: its region and its engine, built once (each run takes its
    /// options and shares the engine's TLS configuration).
    pub local: Option<(String, Engine)>,
    /// Probe settings sent with every job.
    pub probe: crate::config::Probe,
}

/// Extra time after the job deadline for the result to travel back.
const GRACE: Duration = Duration::from_secs(2);

impl Dispatcher {
    /// Run `req` in every requested region; `on_region` sees each region as it arrives.
    /// `degraded` names regions whose own egress is failing; their failures do not vote.
    pub async fn run(
        &self,
        req: &CheckRequest,
        degraded: &BTreeSet<String>,
        on_region: &(dyn Fn(&RegionResult) + Send + Sync),
    ) -> Report {
        let started_at = now_rfc3339();
        let t = Instant::now();
        let results = futures::future::join_all(req.regions.iter().map(|region| async move {
            let r = self.one(region, req).await;
            on_region(&r);
            r
        }))
        .await;
        assemble(
            &req.target,
            started_at,
            t.elapsed().as_millis() as u64,
            &req.regions,
            results,
            degraded,
        )
    }

    async fn one(&self, region: &str, req: &CheckRequest) -> RegionResult {
        if let Some((local_region, base)) = &self.local {
            if local_region == region {
                return self.local_run(base, region, req).await;
            }
        }
        let job_id = ulid::Ulid::new().to_string();
        let job = pb::Job {
            job_id: job_id.clone(),
            target: req.target.to_string(),
            deadline_ms: req.deadline.as_millis() as u64,
            expect_auth: req.expect_auth,
            assume_global: self
                .probe
                .assume_global
                .iter()
                .map(ToString::to_string)
                .collect(),
            allow_non_global: self
                .probe
                .allow_non_global
                .iter()
                .map(ToString::to_string)
                .collect(),
            credential_name: req
                .credential
                .as_ref()
                .map(|(n, _)| n.clone())
                .unwrap_or_default(),
            credential_secret: req
                .credential
                .as_ref()
                .map(|(_, s)| s.expose_secret().to_string())
                .unwrap_or_default(),
        };
        let Some(rx) = self.registry.dispatch(region, job) else {
            return RegionResult::absent(region, RegionStatus::NoAgent);
        };
        match tokio::time::timeout(req.deadline + GRACE, rx).await {
            Ok(Ok(JobOutcome::Done(r))) => *r,
            Ok(Ok(JobOutcome::AgentLost)) | Ok(Err(_)) => {
                RegionResult::absent(region, RegionStatus::Error)
            }
            Err(_) => {
                self.registry.abandon(&job_id);
                RegionResult::absent(region, RegionStatus::Timeout)
            }
        }
    }

    async fn local_run(&self, base: &Engine, region: &str, req: &CheckRequest) -> RegionResult {
        let mut opts = base.options().clone();
        opts.region = region.to_string();
        opts.deadline = req.deadline;
        opts.check_timeout = opts.check_timeout.min(req.deadline);
        opts.expect_auth = req.expect_auth;
        opts.credentials = Credentials {
            token: req.credential.as_ref().map(|(_, s)| s.clone()),
            ..Credentials::default()
        };
        base.with_options(opts).run(&req.target).await
    }
}
