//! Dispatch: fan a check out to one vantage per requested region (the in-process vantage or
//! an agent), wait until the deadline, and merge what arrived. A region that does not answer
//! in time is named, never silently dropped. Every region gets the same [`Job`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::{Engine, Job, Policy};

use super::{assemble, CheckRequest};
use crate::clock::now_rfc3339;
use crate::fleet::{JobOutcome, Registry};
use crate::merge::Absence;
use crate::report::Report;

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
    /// Also returns the regions the fleet left without a result, as this run saw it: no
    /// agent of the region was connected, or its connected agents refused the job
    /// (`vantage_region_unknown_fleet`).
    pub async fn run(
        &self,
        req: &CheckRequest,
        degraded: &BTreeSet<String>,
        on_region: &(dyn Fn(&RegionResult) + Send + Sync),
    ) -> (Report, BTreeSet<String>) {
        let started_at = now_rfc3339();
        let t = Instant::now();
        let job = self.job(req);
        let runs = futures::future::join_all(req.regions.iter().map(|region| {
            let job = &job;
            async move {
                let (r, why) = self.vantage(region).run_explained(region, job).await;
                on_region(&r);
                (r, why)
            }
        }))
        .await;
        let mut absent = BTreeMap::new();
        let mut fleet = BTreeSet::new();
        let mut results = Vec::with_capacity(runs.len());
        for (r, why) in runs {
            if r.status == RegionStatus::NoAgent || why.as_ref().is_some_and(|w| w.fleet) {
                fleet.insert(r.region.clone());
            }
            if let Some(why) = why {
                absent.insert(r.region.clone(), why);
            }
            results.push(r);
        }
        let report = assemble(
            &req.target,
            started_at,
            t.elapsed().as_millis() as u64,
            &req.regions,
            results,
            degraded,
            &absent,
        );
        (report, fleet)
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
        self.run_explained(region, job).await.0
    }

    /// Like [`Vantage::run`], with why the region has no result when that is known: the
    /// report's `fleet.region-missing` carries it, with the fix that fits.
    pub async fn run_explained(self, region: &str, job: &Job) -> (RegionResult, Option<Absence>) {
        match self {
            Vantage::Local(engine) => (engine.run_job(job).await, None),
            Vantage::Remote(registry) => remote(registry, region, job).await,
        }
    }
}

async fn remote(registry: &Registry, region: &str, job: &Job) -> (RegionResult, Option<Absence>) {
    // An agent that refuses the job (its own ceiling) answers at once: the job goes to the
    // region's next agent, if any, so one refusing agent does not take every job of a region
    // with a healthy one (fresh eyes round 14, item 3). The last refusal names its agent.
    let mut refusers: Vec<u64> = Vec::new();
    let mut refusal: Option<(String, String)> = None;
    let started = tokio::time::Instant::now();
    loop {
        let job_id = ulid::Ulid::new().to_string();
        let Some((session, rx)) = registry.dispatch_except(region, &job_id, job, &refusers) else {
            return match refusal {
                Some((agent, reason)) => {
                    let mut r = RegionResult::absent(region, RegionStatus::Error);
                    r.agent = Some(agent.clone());
                    (r, Some(refused(&agent, &reason)))
                }
                None => (RegionResult::absent(region, RegionStatus::NoAgent), None),
            };
        };
        let wait = (job.deadline + GRACE).saturating_sub(started.elapsed());
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(JobOutcome::Refused(reason))) => {
                let agent = registry.agent_id(session).unwrap_or_else(|| "?".into());
                tracing::error!(region, agent, job = %job_id, "the agent refused the job: {reason}");
                refusers.push(session);
                refusal = Some((agent, reason));
            }
            outcome => return ended(registry, region, job, &job_id, outcome),
        }
    }
}

/// A dispatched job's end (other than a refusal, which goes to the region's next agent).
fn ended(
    registry: &Registry,
    region: &str,
    job: &Job,
    job_id: &str,
    outcome: Result<
        Result<JobOutcome, tokio::sync::oneshot::error::RecvError>,
        tokio::time::error::Elapsed,
    >,
) -> (RegionResult, Option<Absence>) {
    let absent = |status| RegionResult::absent(region, status);
    match outcome {
        Ok(Ok(JobOutcome::Done(r))) => (*r, None),
        Ok(Ok(JobOutcome::Refused(reason))) => {
            (absent(RegionStatus::Error), Some(refused("?", &reason)))
        }
        Ok(Ok(JobOutcome::Unusable {
            reason,
            agent_version,
        })) => {
            tracing::error!(region, job = %job_id, agent_version, "the agent's result cannot be read: {reason}");
            (
                absent(RegionStatus::Error),
                Some(unusable(&reason, &agent_version)),
            )
        }
        Ok(Ok(JobOutcome::Revoked(reason))) => {
            tracing::error!(region, job = %job_id, "the agent was cut off before it answered the job: {reason}");
            (
                absent(RegionStatus::Error),
                Some(Absence {
                    what: format!("the agent was cut off before it sent a result: {reason}"),
                    fix: "start the region's agent with its current token from [[agents]] (GET /v1/agents shows who is connected), then run the check again".into(),
                    fleet: false,
                }),
            )
        }
        Ok(Ok(JobOutcome::AgentLost)) | Ok(Err(_)) => {
            tracing::warn!(region, job = %job_id, "the agent went away before it answered the job");
            (absent(RegionStatus::Error), Some(lost()))
        }
        Err(_) => {
            registry.abandon(job_id);
            let waited = (job.deadline + GRACE).as_secs();
            (
                absent(RegionStatus::Timeout),
                Some(Absence {
                    what: format!(
                        "the agent is connected but sent no result within {waited} s (the job's deadline and {} s for the way back)",
                        GRACE.as_secs()
                    ),
                    fix: "look at the agent's log for this job; if its checks need longer, raise the deadline (?wait and the schedule's deadline)".into(),
                    fleet: false,
                }),
            )
        }
    }
}

/// An agent that refused the job: its reason (which names the flag or key) and the fix.
fn refused(agent: &str, reason: &str) -> Absence {
    let fix = if reason.contains("--allow-non-global-max") {
        "the agent refused the job: widen the agent's --allow-non-global-max or narrow probe.allow_non_global in the coordinator's configuration".to_string()
    } else {
        format!("the agent refused the job; do what its reason says ({reason})")
    };
    Absence {
        what: format!("the agent ({agent}) is connected and refused the job: {reason}"),
        fix,
        fleet: true,
    }
}

/// An agent whose result this coordinator cannot read: a version apart (a newer agent sends
/// a check id this coordinator does not know). The region decides nothing, at once.
fn unusable(reason: &str, agent_version: &str) -> Absence {
    Absence {
        what: format!(
            "the agent (version {agent_version}) answered with a result this coordinator (version {}) cannot read: {reason}",
            env!("CARGO_PKG_VERSION")
        ),
        fix: "run the same Vantage version on the agents and the coordinator (upgrade the older side); until then this region decides nothing".into(),
        fleet: false,
    }
}

/// An agent that disconnected (stopped, restarted, lost its connection) mid-job.
fn lost() -> Absence {
    Absence {
        what: "the agent disconnected before it sent a result (it was stopped or restarted, or lost its connection, in the middle of the job)".into(),
        fix: "run the check again once the region's agent is back (GET /v1/agents); if it keeps going away, look at its log and at what stops it".into(),
        fleet: false,
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;
    use vantage_agent::{Credentials, ProbeOptions, Target};

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

    /// The dispatcher, the job it sent, the job the one agent (in eu, of `version`) received
    /// and answered with `outcome`, and what running it in eu came to.
    async fn answered_with(
        version: &str,
        outcome: JobOutcome,
    ) -> (Dispatcher, Job, Job, (RegionResult, Option<Absence>)) {
        let registry = Arc::new(Registry::default());
        let (tx, mut rx) = mpsc::channel(8);
        let session = registry.register("a1".into(), "eu".into(), version.into(), tx);
        let d = dispatcher(registry.clone());
        let agent = tokio::spawn(async move {
            let Some(ToAgent::Job { id, job }) = rx.recv().await else {
                panic!("no job arrived");
            };
            registry.complete(session, &id, outcome);
            job
        });
        let job = d.job(&request());
        let ran = d.vantage("eu").run_explained("eu", &job).await;
        let received = agent.await.unwrap();
        (d, job, *received, ran)
    }

    /// An agent that refuses the job (an unusable prefix) leaves its region `error`, at
    /// once: never a pass, never a wait for the deadline.
    #[tokio::test]
    async fn a_refused_job_is_an_errored_region() {
        let refused = JobOutcome::Refused("assume_global: x".into());
        let (d, job, received, (region, why)) = answered_with("v", refused).await;
        assert_eq!(received.target.to_string(), "http://127.0.0.1:9/mcp");
        assert_eq!(region.region, "eu");
        assert_eq!(region.status, RegionStatus::Error);
        assert!(region.checks.is_empty());
        // Why travels with it, for the report.
        let why = why.expect("the refusal is explained");
        assert_eq!(
            why.what,
            "the agent (a1) is connected and refused the job: assume_global: x"
        );
        assert!(why.fix.contains("assume_global: x"), "{}", why.fix);
        // A region without an agent is named as such.
        let none = d.vantage("us").run("us", &job).await;
        assert_eq!(none.status, RegionStatus::NoAgent);
    }

    /// An agent whose result cannot be read (a newer version) leaves its region `error` at
    /// once, naming both versions and the fix.
    #[tokio::test]
    async fn an_unreadable_result_is_an_errored_region_with_both_versions() {
        let unusable = JobOutcome::Unusable {
            reason: "check id: unknown value `transport.future-rule`".into(),
            agent_version: "9.9.9".into(),
        };
        let (_, _, _, (region, why)) = answered_with("9.9.9", unusable).await;
        assert_eq!(
            (region.status, region.checks.len()),
            (RegionStatus::Error, 0)
        );
        let why = why.expect("the unreadable result is explained");
        assert_eq!(
            why.what,
            format!(
                "the agent (version 9.9.9) answered with a result this coordinator (version {}) cannot read: check id: unknown value `transport.future-rule`",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(
            why.fix.starts_with("run the same Vantage version"),
            "{}",
            why.fix
        );
    }

    /// The report names why each region has no result, with the fix that fits it; a region
    /// the dispatcher cannot explain keeps the generic fix.
    #[test]
    fn the_report_carries_why_a_region_has_no_result() {
        let absent: BTreeMap<String, Absence> = [
            (
                "lab".to_string(),
                refused("ag-lab", "probe.allow_non_global names 127.0.0.2/32, wider than this agent's --allow-non-global-max (none)"),
            ),
            ("lab3".to_string(), lost()),
        ]
        .into();
        let requested = vec!["lab".to_string(), "lab3".to_string(), "ap".to_string()];
        let r = assemble(
            &Target::parse("http://127.0.0.1:9/mcp").unwrap(),
            "2026-11-30T10:00:00Z".into(),
            1,
            &requested,
            vec![
                RegionResult::absent("lab", RegionStatus::Error),
                RegionResult::absent("lab3", RegionStatus::Error),
                RegionResult::absent("ap", RegionStatus::NoAgent),
            ],
            &BTreeSet::new(),
            &absent,
        );
        let f = r
            .finding(vantage_agent::catalog::FindingId::FleetRegionMissing)
            .expect("fleet.region-missing");
        assert_eq!(
            f.evidence,
            [
                "ap: no-agent: no agent of this region is connected",
                "lab: error: the agent (ag-lab) is connected and refused the job: probe.allow_non_global names 127.0.0.2/32, wider than this agent's --allow-non-global-max (none)",
                "lab3: error: the agent disconnected before it sent a result (it was stopped or restarted, or lost its connection, in the middle of the job)",
            ]
        );
        assert!(
            f.remediation.starts_with(
                "lab: the agent refused the job: widen the agent's --allow-non-global-max or narrow probe.allow_non_global in the coordinator's configuration; lab3: run the check again"
            ),
            "{}",
            f.remediation
        );
        assert!(
            f.remediation
                .ends_with("other regions: Check that an agent for the region is connected and healthy (GET /v1/agents)."),
            "{}",
            f.remediation
        );
    }
}

#[cfg(test)]
#[path = "refusal_tests.rs"]
mod refusal_tests;
