//! A result the coordinator cannot read (a newer agent's check id) ends the job at once,
//! with why and the agent's version: never a silent wait for the deadline, never a pass.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::{Job, Target};
use vantage_proto::v1 as pb;
use vantage_proto::v1::fleet_client::FleetClient;

use super::{AgentAuth, FleetService};
use crate::fleet::{JobOutcome, Registry};

/// A region section carrying `check`, as an agent would send it.
fn section(check: &str) -> pb::RegionResult {
    let mut p =
        vantage_agent::convert::region_to_pb(&RegionResult::absent("eu", RegionStatus::Complete));
    p.checks.push(pb::CheckResult {
        id: check.into(),
        outcome: "pass".into(),
        ..Default::default()
    });
    p
}

/// Serve the real Fleet service on loopback; attach one agent of version `9.9.9` in `eu`
/// that answers its first job with `answer`; dispatch a job and return how it ended.
async fn answer_with(answer: Option<pb::RegionResult>) -> JobOutcome {
    let registry = Arc::new(Registry::default());
    let service = FleetService {
        registry: registry.clone(),
        agents: Arc::new(std::sync::RwLock::new(vec![AgentAuth {
            name: "a1".into(),
            region: "eu".into(),
            token: "agent-token".to_string().into(),
        }])),
        heartbeat: Duration::from_secs(30),
    };
    let (addr, server) = service.serve_on_loopback().await;

    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = FleetClient::with_interceptor(channel, |mut req: tonic::Request<()>| {
        req.metadata_mut()
            .insert("authorization", "Bearer agent-token".parse().unwrap());
        Ok(req)
    });
    let (tx, rx) = mpsc::channel::<pb::AgentMessage>(8);
    tx.send(pb::AgentMessage {
        kind: Some(pb::agent_message::Kind::Register(pb::Register {
            agent_id: "a1".into(),
            region: "eu".into(),
            version: "9.9.9".into(),
            capabilities: vec![],
            max_concurrency: 1,
        })),
    })
    .await
    .unwrap();
    let mut inbound = client
        .attach(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let agent = tokio::spawn(async move {
        while let Ok(Some(msg)) = inbound.message().await {
            if let Some(pb::coordinator_message::Kind::Job(job)) = msg.kind {
                let result = pb::JobResult {
                    job_id: job.job_id,
                    region: answer,
                    refused: String::new(),
                };
                tx.send(pb::AgentMessage {
                    kind: Some(pb::agent_message::Kind::Result(result)),
                })
                .await
                .unwrap();
                // Stay attached: the outcome must come from the answer, not a lost agent.
                while inbound.message().await.is_ok_and(|m| m.is_some()) {}
                return;
            }
        }
    });

    // The agent is registered once the service has its Register.
    let job = Job {
        target: Target::parse("http://127.0.0.1:9/mcp").unwrap(),
        deadline: Duration::from_secs(600),
        expect_auth: false,
        policy: Default::default(),
        credentials: Default::default(),
    };
    let rx = loop {
        if let Some(rx) = registry.dispatch("eu", "job-1", &job) {
            break rx;
        }
        tokio::task::yield_now().await;
    };
    // A hang guard, not a timing claim: without an outcome the job would wait out its
    // 600 s deadline.
    let outcome = tokio::time::timeout(Duration::from_secs(60), rx)
        .await
        .expect("the job ended when the agent answered, not at its deadline")
        .expect("an outcome");
    agent.abort();
    server.abort();
    outcome
}

#[tokio::test]
async fn a_result_with_a_check_id_this_coordinator_does_not_know_ends_the_job_with_why() {
    // Control: a check id the coordinator knows is a result.
    let known = answer_with(Some(section("transport.get"))).await;
    assert!(
        matches!(&known, JobOutcome::Done(r) if r.checks.len() == 1),
        "{known:?}"
    );

    match answer_with(Some(section("transport.future-rule"))).await {
        JobOutcome::Unusable {
            reason,
            agent_version,
        } => {
            assert_eq!(reason, "check id: unknown value `transport.future-rule`");
            assert_eq!(agent_version, "9.9.9");
        }
        other => panic!("expected Unusable, got {other:?}"),
    }
    match answer_with(None).await {
        JobOutcome::Unusable { reason, .. } => {
            assert_eq!(reason, "the result has no region section")
        }
        other => panic!("expected Unusable, got {other:?}"),
    }
}
