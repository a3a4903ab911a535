//! A reload that revokes or moves an agent's token cuts that agent off over the real Fleet
//! service: its stream ends with PERMISSION_DENIED and why, its job in flight ends as
//! `Revoked`, the next job of its region does not reach it, and it can only come back with a
//! valid token. An agent whose token is unchanged keeps its session and its jobs.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use vantage_agent::{Job, Target};
use vantage_proto::v1 as pb;
use vantage_proto::v1::fleet_client::FleetClient;

use crate::fleet::{AgentAuth, FleetService, JobOutcome, Registry};

pub(crate) fn auth(name: &str, region: &str, token: &str) -> AgentAuth {
    AgentAuth {
        name: name.into(),
        region: region.into(),
        token: token.to_string().into(),
    }
}

fn job() -> Job {
    Job {
        target: Target::parse("http://127.0.0.1:9/mcp").unwrap(),
        deadline: Duration::from_secs(600),
        expect_auth: false,
        policy: Default::default(),
        credentials: Default::default(),
    }
}

pub(crate) struct Lab {
    pub(crate) registry: Arc<Registry>,
    tokens: Arc<RwLock<Vec<AgentAuth>>>,
    pub(crate) addr: std::net::SocketAddr,
    pub(crate) server: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
}

pub(crate) async fn lab(agents: Vec<AgentAuth>) -> Lab {
    let registry = Arc::new(Registry::default());
    let tokens = Arc::new(RwLock::new(agents));
    let service = FleetService {
        registry: registry.clone(),
        agents: tokens.clone(),
        heartbeat: Duration::from_secs(30),
    };
    let (addr, server) = service.serve_on_loopback().await;
    Lab {
        registry,
        tokens,
        addr,
        server,
    }
}

impl Lab {
    /// What a reload does with the new [[agents]]: replace the tokens, then sweep.
    fn reload(&self, agents: Vec<AgentAuth>) -> Vec<crate::fleet::Cut> {
        *self.tokens.write().unwrap() = agents;
        let agents = self.tokens.read().unwrap();
        self.registry.revoke_stale(&agents)
    }
}

/// An agent as the wire sees it: its outbound sender (kept open) and inbound stream. Other
/// test modules hold one (the session lives while it does) but cannot reach the wire types.
pub(crate) struct Attached(
    mpsc::Sender<pb::AgentMessage>,
    tonic::Streaming<pb::CoordinatorMessage>,
);

pub(crate) async fn attach(
    addr: std::net::SocketAddr,
    token: &str,
    id: &str,
    region: &str,
) -> Result<Attached, tonic::Status> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let bearer: tonic::metadata::MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
    let mut client = FleetClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
        req.metadata_mut().insert("authorization", bearer.clone());
        Ok(req)
    });
    let (tx, rx) = mpsc::channel::<pb::AgentMessage>(8);
    tx.send(pb::AgentMessage {
        kind: Some(pb::agent_message::Kind::Register(pb::Register {
            agent_id: id.into(),
            region: region.into(),
            version: "1.0.0".into(),
            capabilities: vec![],
            max_concurrency: 1,
        })),
    })
    .await
    .unwrap();
    let mut inbound = client.attach(ReceiverStream::new(rx)).await?.into_inner();
    match inbound.message().await?.and_then(|m| m.kind) {
        Some(pb::coordinator_message::Kind::Registered(r)) => assert_eq!(r.region, region),
        other => panic!("expected Registered, got {other:?}"),
    }
    Ok(Attached(tx, inbound))
}

/// Read until the stream ends; the status it ended with (`None`: ended cleanly) and the
/// ids of the jobs that came before it.
async fn until_end(
    inbound: &mut tonic::Streaming<pb::CoordinatorMessage>,
) -> (Option<tonic::Status>, Vec<String>) {
    let mut jobs = Vec::new();
    loop {
        // A hang guard, not a timing claim.
        match tokio::time::timeout(Duration::from_secs(60), inbound.message())
            .await
            .expect("the stream ended")
        {
            Ok(Some(m)) => {
                if let Some(pb::coordinator_message::Kind::Job(j)) = m.kind {
                    jobs.push(j.job_id)
                }
            }
            Ok(None) => return (None, jobs),
            Err(s) => return (Some(s), jobs),
        }
    }
}

/// The next job id on a live stream.
async fn next_job(inbound: &mut tonic::Streaming<pb::CoordinatorMessage>) -> String {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(60), inbound.message())
            .await
            .expect("a job came")
            .expect("the stream is alive")
            .expect("the stream is open");
        if let Some(pb::coordinator_message::Kind::Job(j)) = m.kind {
            return j.job_id;
        }
    }
}

#[tokio::test]
async fn a_revoked_token_cuts_its_agent_off_and_an_unchanged_one_keeps_working() {
    let lab = lab(vec![
        auth("eu-1", "eu", "tok-eu-old-5f3a"),
        auth("us-1", "us", "tok-us-9c1d"),
    ])
    .await;
    let Attached(_eu_tx, mut eu) = attach(lab.addr, "tok-eu-old-5f3a", "vm-eu", "eu")
        .await
        .unwrap();
    let Attached(_us_tx, mut us) = attach(lab.addr, "tok-us-9c1d", "vm-us", "us")
        .await
        .unwrap();
    assert_eq!(lab.registry.agents().len(), 2);

    // A job in flight on the agent about to be revoked.
    let in_flight = lab.registry.dispatch("eu", "job-eu-1", &job()).unwrap();

    // Control: a reload that changes nothing keeps both sessions.
    let same = vec![
        auth("eu-1", "eu", "tok-eu-old-5f3a"),
        auth("us-1", "us", "tok-us-9c1d"),
    ];
    assert!(lab.reload(same).is_empty());
    assert_eq!(lab.registry.agents().len(), 2);

    // The eu token is replaced.
    let cut = lab.reload(vec![
        auth("eu-1", "eu", "tok-eu-new-77b2"),
        auth("us-1", "us", "tok-us-9c1d"),
    ]);
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert_eq!(
        (
            cut[0].agent.as_str(),
            cut[0].name.as_str(),
            cut[0].region.as_str()
        ),
        ("vm-eu", "eu-1", "eu")
    );
    assert_eq!(cut[0].jobs_lost, 1);
    assert!(
        cut[0].reason.contains("revoked by a configuration reload"),
        "{}",
        cut[0].reason
    );
    let shown = format!("{cut:?}");
    assert!(
        !shown.contains("tok-eu"),
        "no token in what is logged: {shown}"
    );

    // Its stream ends with PERMISSION_DENIED and why.
    let (status, _) = until_end(&mut eu).await;
    let status = status.expect("the stream ended with a status");
    assert_eq!(status.code(), Code::PermissionDenied);
    assert!(
        status
            .message()
            .contains("revoked by a configuration reload"),
        "{}",
        status.message()
    );
    // Its job in flight ends as revoked, with the reason.
    match tokio::time::timeout(Duration::from_secs(60), in_flight)
        .await
        .expect("the job ended at the revocation, not at its deadline")
    {
        Ok(JobOutcome::Revoked(reason)) => {
            assert!(
                reason.contains("revoked by a configuration reload"),
                "{reason}"
            )
        }
        other => panic!("expected Revoked, got {other:?}"),
    }
    // The next dispatch to eu reaches nobody; us still works.
    assert!(lab.registry.dispatch("eu", "job-eu-2", &job()).is_none());
    assert_eq!(lab.registry.agents().len(), 1);
    let _us_job = lab.registry.dispatch("us", "job-us-1", &job()).unwrap();
    assert_eq!(next_job(&mut us).await, "job-us-1");

    // The old token is refused; the new one attaches.
    let old = attach(lab.addr, "tok-eu-old-5f3a", "vm-eu", "eu").await;
    assert_eq!(old.err().map(|s| s.code()), Some(Code::Unauthenticated));
    let Attached(_tx, _new) = attach(lab.addr, "tok-eu-new-77b2", "vm-eu", "eu")
        .await
        .unwrap();
    assert!(lab.registry.dispatch("eu", "job-eu-3", &job()).is_some());
    lab.server.abort();
}

#[tokio::test]
async fn swapped_tokens_cut_off_both_agents_and_nothing_queued_goes_out_after_the_status() {
    let lab = lab(vec![
        auth("a-1", "a", "tok-a-1111"),
        auth("b-1", "b", "tok-b-2222"),
    ])
    .await;
    let Attached(_a_tx, mut a) = attach(lab.addr, "tok-a-1111", "vm-a", "a").await.unwrap();
    let Attached(_b_tx, mut b) = attach(lab.addr, "tok-b-2222", "vm-b", "b").await.unwrap();
    // The two tokens swap regions.
    let cut = lab.reload(vec![
        auth("a-1", "a", "tok-b-2222"),
        auth("b-1", "b", "tok-a-1111"),
    ]);
    assert_eq!(cut.len(), 2, "{cut:?}");
    for c in &cut {
        let other = if c.region == "a" { "b" } else { "a" };
        assert!(
            c.reason.contains(&format!(
                "moved from region `{}` to region `{other}`",
                c.region
            )),
            "{}",
            c.reason
        );
    }
    for inbound in [&mut a, &mut b] {
        let (status, jobs) = until_end(inbound).await;
        let status = status.expect("a status");
        assert_eq!(status.code(), Code::PermissionDenied);
        assert!(
            status.message().contains("moved from region"),
            "{}",
            status.message()
        );
        assert!(jobs.is_empty(), "no job after the reload: {jobs:?}");
    }
    assert!(lab.registry.dispatch("a", "j-a", &job()).is_none());
    assert!(lab.registry.dispatch("b", "j-b", &job()).is_none());
    // Each comes back only as what its token now says.
    let wrong = attach(lab.addr, "tok-a-1111", "vm-a", "a").await;
    assert_eq!(wrong.err().map(|s| s.code()), Some(Code::PermissionDenied));
    let Attached(_tx, _ok) = attach(lab.addr, "tok-a-1111", "vm-a", "b").await.unwrap();
    lab.server.abort();
}

/// Attach agent `vm` in `eu` as the `[[agents]]` entry `eu-1` with the token `tok-x`.
fn bind_eu(
    registry: &Registry,
    tx: mpsc::Sender<crate::fleet::ToAgent>,
    kill: tokio::sync::oneshot::Sender<String>,
) {
    registry.register_bound(
        "vm".into(),
        "eu".into(),
        "v".into(),
        tx,
        "eu-1".into(),
        "tok-x".to_string().into(),
        kill,
        "127.0.0.1:1".into(),
    );
}

#[tokio::test]
async fn a_job_queued_for_the_agent_is_not_sent_once_its_token_is_revoked() {
    // Registry level: the kill switch fires before anything queued is read.
    let registry = Registry::default();
    let (tx, mut rx) = mpsc::channel(8);
    let (kill, mut killed) = tokio::sync::oneshot::channel();
    bind_eu(&registry, tx, kill);
    let lost = registry.dispatch("eu", "queued", &job()).unwrap();
    let cut = registry.revoke_stale(&[auth("eu-1", "eu", "tok-y")]);
    assert_eq!(cut.len(), 1);
    let reason = killed.try_recv().expect("the kill switch fired");
    assert!(reason.contains("revoked"), "{reason}");
    assert!(matches!(lost.await, Ok(JobOutcome::Revoked(_))));
    // The queued job was never read: the stream ends with the status before it
    // (service.rs `a_revoked_stream_ends_with_its_status_before_anything_queued`).
    assert!(matches!(
        rx.try_recv(),
        Ok(crate::fleet::ToAgent::Job { .. })
    ));
    assert!(registry.agents().is_empty());
}

/// The check that was running on the revoked agent: its region is `error` at once, and the
/// report's explanation names the revocation and the fix (never a pass, never a deadline wait).
#[tokio::test]
async fn a_check_running_on_a_revoked_agent_is_its_regions_error_naming_why() {
    let registry = Arc::new(Registry::default());
    let (tx, mut rx) = mpsc::channel(8);
    let (kill, _killed) = tokio::sync::oneshot::channel();
    bind_eu(&registry, tx, kill);
    let running = {
        let registry = registry.clone();
        tokio::spawn(async move {
            crate::checks::Vantage::Remote(&registry)
                .run_explained("eu", &job())
                .await
        })
    };
    // The job reached the agent: it is in flight.
    assert!(matches!(
        rx.recv().await,
        Some(crate::fleet::ToAgent::Job { .. })
    ));
    assert_eq!(registry.revoke_stale(&[]).len(), 1);
    let (region, why) = tokio::time::timeout(Duration::from_secs(60), running)
        .await
        .expect("ended at the revocation, not at the deadline")
        .unwrap();
    assert_eq!(region.region, "eu");
    assert_eq!(region.status, vantage_agent::model::RegionStatus::Error);
    assert!(region.checks.is_empty());
    let why = why.expect("explained");
    assert!(
        why.what.starts_with("the agent was cut off before it sent a result: this agent's token was revoked by a configuration reload"),
        "{}",
        why.what
    );
    assert!(why.fix.contains("current token"), "{}", why.fix);
}
