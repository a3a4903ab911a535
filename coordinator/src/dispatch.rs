//! Dispatch: fan a check out to one vantage per requested region (the in-process vantage or
//! an agent), wait until the deadline, and merge what arrived. A region that does not answer
//! in time is named, never silently dropped. Every region gets the same [`Job`].

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::{Credentials, Engine, Job, Policy, Target};

use crate::fleet::{JobOutcome, Registry};
use crate::local::{assemble, now_rfc3339};
use crate::report::Report;

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
    pub baseline: Option<std::sync::Arc<crate::baseline::Baseline>>,
}

/// Where one region's job runs.
#[derive(Debug, Clone, Copy)]
pub enum Vantage<'a> {
    /// The coordinator's in-process vantage.
    Local(&'a Engine),
    /// An agent of the region, over its gRPC stream.
    Remote(&'a Registry),
}

/// Sends jobs and collects results.
#[derive(Debug)]
pub struct Dispatcher {
    pub registry: Arc<Registry>,
    /// The in-process vantage: its region and its engine.
    pub local: Option<(String, Engine)>,
    /// The address policy every job carries.
    pub policy: Policy,
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
        let job = self.job(req);
        let results = futures::future::join_all(req.regions.iter().map(|region| {
            let job = &job;
            async move {
                let r = self.vantage(region).run(region, job).await;
                on_region(&r);
                r
            }
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

    /// The job every region of `req` runs.
    pub fn job(&self, req: &CheckRequest) -> Job {
        Job {
            target: req.target.clone(),
            deadline: req.deadline,
            expect_auth: req.expect_auth,
            policy: self.policy.clone(),
            credentials: req
                .credential
                .as_ref()
                .map(|(_, c)| c.clone())
                .unwrap_or_default(),
        }
    }

    /// The vantage that serves `region`.
    pub fn vantage(&self, region: &str) -> Vantage<'_> {
        match &self.local {
            Some((local, engine)) if local == region => Vantage::Local(engine),
            _ => Vantage::Remote(&self.registry),
        }
    }
}

impl Vantage<'_> {
    /// Run `job` in `region` and return its region section (absent, with the reason as its
    /// status, when no result came).
    pub async fn run(self, region: &str, job: &Job) -> RegionResult {
        match self {
            Vantage::Local(engine) => engine.run_job(job).await,
            Vantage::Remote(registry) => remote(registry, region, job).await,
        }
    }
}

async fn remote(registry: &Registry, region: &str, job: &Job) -> RegionResult {
    let job_id = ulid::Ulid::new().to_string();
    let Some(rx) = registry.dispatch(region, &job_id, job) else {
        return RegionResult::absent(region, RegionStatus::NoAgent);
    };
    match tokio::time::timeout(job.deadline + GRACE, rx).await {
        Ok(Ok(JobOutcome::Done(r))) => *r,
        Ok(Ok(JobOutcome::Refused(reason))) => {
            tracing::error!(region, job = %job_id, "the agent refused the job: {reason}");
            RegionResult::absent(region, RegionStatus::Error)
        }
        Ok(Ok(JobOutcome::AgentLost)) | Ok(Err(_)) => {
            RegionResult::absent(region, RegionStatus::Error)
        }
        Err(_) => {
            registry.abandon(&job_id);
            RegionResult::absent(region, RegionStatus::Timeout)
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;
    use vantage_agent::ProbeOptions;

    use super::*;
    use crate::fleet::ToAgent;

    fn dispatcher(registry: Arc<Registry>) -> Dispatcher {
        Dispatcher {
            registry,
            local: Some((
                "local".into(),
                Engine::new(ProbeOptions::default()).unwrap(),
            )),
            policy: Policy {
                assume_global: vec!["198.51.100.0/24".parse().unwrap()],
                allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
            },
        }
    }

    fn request() -> CheckRequest {
        CheckRequest {
            target: Target::parse("http://127.0.0.1:9/mcp").unwrap(),
            regions: vec!["eu".into()],
            credential: Some((
                "prod".into(),
                Credentials {
                    token: Some("main-secret".to_string().into()),
                    other_audience: Some("other-secret".to_string().into()),
                    missing_scope: Some("scope-secret".to_string().into()),
                },
            )),
            expect_auth: true,
            deadline: Duration::from_secs(3),
            baseline: None,
        }
    }

    #[test]
    fn the_local_region_runs_in_process_and_the_others_remotely() {
        let d = dispatcher(Arc::default());
        assert!(matches!(d.vantage("local"), Vantage::Local(_)));
        assert!(matches!(d.vantage("eu"), Vantage::Remote(_)));
        // Every region gets the same job: the request's, with the configured policy.
        let job = d.job(&request());
        assert_eq!(job.policy, d.policy);
        assert!(job.expect_auth && job.credentials.token.is_some());
        // Issue 12: a fleet job carries the negative tokens too, so the agents run
        // auth.wrong-audience and auth.insufficient-scope as `vantage check` does.
        assert_eq!(
            job.credentials.secrets(),
            ["main-secret", "other-secret", "scope-secret"]
        );
        assert_eq!(job.deadline, Duration::from_secs(3));
    }

    /// An agent that refuses the job (an unusable prefix) leaves its region `error`, at
    /// once: never a pass, never a wait for the deadline.
    #[tokio::test]
    async fn a_refused_job_is_an_errored_region() {
        let registry = Arc::new(Registry::default());
        let (tx, mut rx) = mpsc::channel(8);
        let session = registry.register("a1".into(), "eu".into(), "v".into(), tx);
        let d = dispatcher(registry.clone());
        let agent = tokio::spawn(async move {
            let Some(ToAgent::Job { id, job }) = rx.recv().await else {
                panic!("no job arrived");
            };
            assert_eq!(job.target.to_string(), "http://127.0.0.1:9/mcp");
            registry.complete(session, &id, JobOutcome::Refused("assume_global: x".into()));
        });
        let job = d.job(&request());
        let region = d.vantage("eu").run("eu", &job).await;
        agent.await.unwrap();
        assert_eq!(region.region, "eu");
        assert_eq!(region.status, RegionStatus::Error);
        assert!(region.checks.is_empty());
        // A region without an agent is named as such.
        let none = d.vantage("us").run("us", &job).await;
        assert_eq!(none.status, RegionStatus::NoAgent);
    }
}
