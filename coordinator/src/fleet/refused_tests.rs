//! Refusals counted per region (red team round 12, D3).

use std::collections::BTreeMap;

use tokio::sync::mpsc;
use vantage_agent::model::RegionResult;
use vantage_agent::Job;

use super::{JobOutcome, Registry};

fn job() -> Job {
    Job::new(vantage_agent::Target::parse("http://t/").unwrap())
}

/// Red team round 12 (D3): an agent that refuses every job was invisible to the fleet's
/// metrics. Its refusals count for its region, only when the job was its own; results
/// and another agent's answer to the job do not count.
#[tokio::test]
async fn refused_jobs_are_counted_per_region() {
    let reg = Registry::default();
    let (tx1, _rx1) = mpsc::channel(8);
    let (tx2, _rx2) = mpsc::channel(8);
    let d = reg.register("ag-d".into(), "d".into(), "v".into(), tx1);
    let a = reg.register("ag-a".into(), "a".into(), "v".into(), tx2);
    assert!(reg.refused_per_region().is_empty());
    let r1 = reg.dispatch("d", "j1", &job()).unwrap();
    let r2 = reg.dispatch("d", "j2", &job()).unwrap();
    let r3 = reg.dispatch("a", "j3", &job()).unwrap();
    // Another agent's refusal of d's job is not delivered, and not counted.
    reg.complete(a, "j1", JobOutcome::Refused("x".into()));
    reg.complete(d, "j1", JobOutcome::Refused("ceiling".into()));
    reg.complete(d, "j2", JobOutcome::Refused("ceiling".into()));
    reg.complete(
        a,
        "j3",
        JobOutcome::Done(Box::new(RegionResult::absent(
            "a",
            vantage_agent::model::RegionStatus::Complete,
        ))),
    );
    assert!(matches!(r1.await, Ok(JobOutcome::Refused(r)) if r == "ceiling"));
    assert!(matches!(r2.await, Ok(JobOutcome::Refused(_))));
    // Red team round 12 (N3): the result names the agent that served the region, from
    // its session.
    match r3.await {
        Ok(JobOutcome::Done(r)) => assert_eq!(r.agent.as_deref(), Some("ag-a")),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        reg.refused_per_region(),
        BTreeMap::from([("d".to_string(), 2)])
    );
}
