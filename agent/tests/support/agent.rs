//! The agent under test: `client::run_with_dialer` over the mock's in-memory transport, with
//! the daemon's defaults (backoff 0.5 s to 30 s) unless a test says otherwise.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use vantage_agent::client::{self, AgentConfig, AgentState};
use vantage_agent::{Engine, ProbeOptions};

use super::mock::{Mock, Session, WAIT};

pub const REGION: &str = "eu";
pub const TOKEN: &str = "agent-token-eu-0123456789";
pub const AGENT_ID: &str = "agent-eu-1";
pub const BACKOFF_MIN: Duration = Duration::from_millis(500);
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The settings `vantage-agent` runs with by default, for region `eu`. Its engine is a
/// fleet vantage's (no non-global address unless a job allows it), with a per-exchange
/// timeout of ten minutes: a job against a silent target runs until its deadline or a cancel.
pub fn config() -> AgentConfig {
    let engine = Engine::new(ProbeOptions {
        region: REGION.into(),
        check_timeout: Duration::from_secs(600),
        allow_named_target: false,
        ..ProbeOptions::default()
    })
    .expect("the engine builds");
    AgentConfig {
        // Never dialled: the mock's transport is in memory.
        coordinator: "http://coordinator.invalid:50051".into(),
        region: REGION.into(),
        agent_id: AGENT_ID.into(),
        token: TOKEN.to_string().into(),
        token_file: None,
        ca_pem: None,
        identity: None,
        max_concurrency: 2,
        backoff_min: BACKOFF_MIN,
        backoff_max: BACKOFF_MAX,
        engine,
        drain_timeout: Duration::from_secs(20),
        ceiling: None,
    }
}

/// A running agent. Dropping it aborts its task.
#[derive(Debug)]
pub struct Agent {
    pub state: Arc<AgentState>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A mock coordinator and an agent with `cfg` registered on it (heartbeat every
/// `heartbeat`): its stream, once its first heartbeat arrived.
pub async fn registered(cfg: AgentConfig, heartbeat: Duration) -> (Mock, Agent, Session) {
    let mut mock = Mock::start();
    let agent = Agent::start(cfg, &mock);
    let session = mock.accept_then_heartbeat(heartbeat).await;
    (mock, agent, session)
}

impl Agent {
    pub fn start(cfg: AgentConfig, mock: &Mock) -> Agent {
        let state = Arc::new(AgentState::default());
        let (stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(client::run_with_dialer(
            cfg,
            state.clone(),
            stop_rx,
            mock.link().dialer(),
        ));
        Agent { state, stop, task }
    }

    /// What SIGTERM does in `vantage-agent`.
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }

    pub fn is_running(&self) -> bool {
        !self.task.is_finished()
    }

    /// Wait for `client::run` to return (bounded).
    pub async fn stopped(&mut self) {
        tokio::time::timeout(WAIT, &mut self.task)
            .await
            .expect("the agent stops")
            .expect("the agent's task ends without a panic");
    }

    pub fn ready(&self) -> bool {
        self.state.ready.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn last_error(&self) -> String {
        self.state
            .last_error
            .lock()
            .ok()
            .and_then(|e| e.clone())
            .unwrap_or_default()
    }

    /// The body and status of the agent's `/readyz`.
    pub async fn readyz(&self) -> (u16, String) {
        use tower::ServiceExt;
        let response = vantage_agent::health::router(self.state.clone(), REGION.into())
            .oneshot(
                axum::http::Request::get("/readyz")
                    .body(axum::body::Body::empty())
                    .expect("a request"),
            )
            .await
            .expect("the router answers");
        let status = response.status().as_u16();
        let body = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .expect("a body");
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}
