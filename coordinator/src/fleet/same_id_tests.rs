//! Two sessions with one agent id (a copied Deployment with a hard-coded `--id`, or an agent
//! that reconnected before its old session was noticed gone): both are admitted over the
//! real Fleet service, and each is told apart by its id (`ap-a`, `ap-a~2`) in
//! `GET /v1/agents`, the reports' `"agent"` and the logs. An id freed by a session that
//! ended is given again.

use std::time::Duration;

use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::{Job, Target};

use super::revoke::tests::{attach, auth, lab};
use super::JobOutcome;

fn ids(registry: &super::Registry) -> Vec<String> {
    let mut ids: Vec<String> = registry.agents().into_iter().map(|a| a.id).collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn one_id_twice_gets_a_suffix_and_each_session_is_named_apart() {
    let lab = lab(vec![auth("ap-1", "ap", "tok-ap-1111")]).await;
    let first = attach(lab.addr, "tok-ap-1111", "ap-a", "ap").await.unwrap();
    let second = attach(lab.addr, "tok-ap-1111", "ap-a", "ap").await.unwrap();
    let _third = attach(lab.addr, "tok-ap-1111", "ap-a", "ap").await.unwrap();
    assert_eq!(ids(&lab.registry), ["ap-a", "ap-a~2", "ap-a~3"]);

    // A result names the session that sent it: the reports tell the two `ap-a` apart.
    let job = Job::new(Target::parse("http://127.0.0.1:9/mcp").unwrap());
    let (session, rx) = lab.registry.dispatch_except("ap", "j1", &job, &[]).unwrap();
    let named = lab.registry.agent_id(session).unwrap();
    lab.registry.complete(
        session,
        "j1",
        JobOutcome::Done(Box::new(RegionResult::absent("ap", RegionStatus::Complete))),
    );
    match rx.await {
        Ok(JobOutcome::Done(r)) => assert_eq!(r.agent.as_deref(), Some(named.as_str())),
        other => panic!("{other:?}"),
    }

    // The first session ends: its id is free, and the next agent asking for it gets it.
    drop(first);
    for _ in 0..600 {
        if ids(&lab.registry) == ["ap-a~2", "ap-a~3"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(ids(&lab.registry), ["ap-a~2", "ap-a~3"]);
    let _again = attach(lab.addr, "tok-ap-1111", "ap-a", "ap").await.unwrap();
    assert_eq!(ids(&lab.registry), ["ap-a", "ap-a~2", "ap-a~3"]);
    drop(second);
    lab.server.abort();
}

/// In-process registrations (the local agent, tests) follow the same rule.
#[test]
fn the_registry_never_hands_out_one_id_twice() {
    let reg = super::Registry::default();
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let a = reg.register("eu-a".into(), "eu".into(), "v".into(), tx.clone());
    let b = reg.register("eu-a".into(), "us".into(), "v".into(), tx.clone());
    // An id asked for that is taken gets a suffix too, whatever it looks like.
    let c = reg.register("eu-a~2".into(), "eu".into(), "v".into(), tx.clone());
    assert_eq!(reg.agent_id(a).as_deref(), Some("eu-a"));
    assert_eq!(reg.agent_id(b).as_deref(), Some("eu-a~2"));
    assert_eq!(reg.agent_id(c).as_deref(), Some("eu-a~2~2"));
    let d = reg.register("eu-a".into(), "eu".into(), "v".into(), tx);
    assert_eq!(reg.agent_id(d).as_deref(), Some("eu-a~3"));
}
