//! Fresh eyes round 14, item 3: a region with one agent that refuses every job (its own
//! --allow-non-global-max) and one healthy agent sent every job to the refusing one (it
//! answers at once, so it always looked least busy), and the report named no agent.

use std::sync::Arc;

use tokio::sync::mpsc;
use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::{Job, Target};

use super::remote;
use crate::fleet::{JobOutcome, Registry, ToAgent};

/// An agent of `region` on `reg` that answers each job with `answer`.
fn agent(reg: &Arc<Registry>, id: &str, region: &str, refuses: bool) {
    let (tx, mut rx) = mpsc::channel(8);
    let session = reg.register(id.into(), region.into(), "v".into(), tx);
    let reg = reg.clone();
    let region = region.to_string();
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            if let ToAgent::Job { id, .. } = msg {
                let outcome = if refuses {
                    JobOutcome::Refused("probe.allow_non_global names 127.0.0.0/8, wider than this agent's --allow-non-global-max (none)".into())
                } else {
                    JobOutcome::Done(Box::new(RegionResult::absent(
                        &region,
                        RegionStatus::Complete,
                    )))
                };
                reg.complete(session, &id, outcome);
            }
        }
    });
}

fn job() -> Job {
    Job::new(Target::parse("http://t.example/mcp").unwrap())
}

#[tokio::test]
async fn a_refused_job_goes_to_the_regions_next_agent() {
    let reg = Arc::new(Registry::default());
    // The refusing agent registers first: the least busy by the session order.
    agent(&reg, "ag-bad", "ap", true);
    agent(&reg, "ag-good", "ap", false);
    for _ in 0..4 {
        let (r, absence) = remote(&reg, "ap", &job()).await;
        assert!(absence.is_none(), "{absence:?}");
        assert_eq!(r.status, RegionStatus::Complete);
        assert_eq!(r.agent.as_deref(), Some("ag-good"));
    }
}

#[tokio::test]
async fn a_region_whose_every_agent_refuses_names_the_agent() {
    let reg = Arc::new(Registry::default());
    agent(&reg, "ag-bad", "ap", true);
    let (r, absence) = remote(&reg, "ap", &job()).await;
    assert_eq!(r.status, RegionStatus::Error);
    assert_eq!(r.agent.as_deref(), Some("ag-bad"));
    let absence = absence.expect("why the region has no result");
    assert!(
        absence
            .what
            .starts_with("the agent (ag-bad) is connected and refused the job: ")
            && absence.fix.contains("--allow-non-global-max"),
        "{absence:?}"
    );
}
