//! The dial-out client: connect to the coordinator, register, run jobs as they come with
//! bounded concurrency, send results and heartbeats, and reconnect with jittered backoff.
//! A permission error keeps the agent alive and unready, retrying slowly (at once, at its
//! shortest backoff, when `--token-file` holds a new token since the refused attempt). A coordinator
//! that goes away says `Reconnect` (the agent reconnects at once, at its shortest backoff);
//! an agent told to stop says `Leaving`, lets its running jobs finish within its drain, and
//! closes (jobs still running then end as missing on the coordinator's side). The
//! coordinator is reached through [`crate::dial`]: the network, or in the client's tests
//! (`agent/tests/client.rs`) an in-memory transport to a mock coordinator.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use vantage_proto::v1 as pb;
use vantage_proto::v1::fleet_client::FleetClient;

use crate::backoff::Backoff;
use crate::convert::{region_to_pb, JobError};
use crate::dial::{self, Coordinator, Dialer};
use crate::egress::Ceiling;
use crate::job::{Job, MIN_DEADLINE};
use crate::model::{RegionResult, RegionStatus};
pub use crate::session::SessionError;
use crate::session::{classify, Ended};
use crate::state::Counted;
use crate::stop::{close, drain, Running};
use crate::Engine;

pub use crate::state::AgentState;

/// How the agent reaches its coordinator and runs jobs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// `http://host:port` or `https://host:port` of the coordinator's gRPC listener.
    pub coordinator: String,
    pub region: String,
    pub agent_id: String,
    /// The token presented at start (and whenever `token_file` cannot be read).
    pub token: SecretString,
    /// `--token-file`: re-read before each (re)connect, so a rotated file (a mounted Secret
    /// updated in place) is presented on the next attempt without a restart.
    pub token_file: Option<PathBuf>,
    /// Trust anchors for a TLS coordinator.
    pub ca_pem: Option<Vec<u8>>,
    /// A client certificate and key (PEM) for mutual TLS.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
    pub max_concurrency: usize,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// This vantage's engine: its region, per-exchange timeout, trust anchors and SSRF
    /// guard. Each job sets the rest ([`Job::options`]).
    pub engine: Engine,
    /// On stop: how long running jobs may take to finish before the stream closes.
    pub drain_timeout: Duration,
    /// The widest egress policy a job may carry (`--allow-non-global-max`); `None`: the
    /// coordinator's policy is taken as it comes.
    pub ceiling: Option<Ceiling>,
}

/// Run until `stop` turns true: connect, serve, reconnect. On stop, a registered agent says
/// it is leaving and drains its running jobs (at most `drain_timeout`) before returning.
pub async fn run(cfg: AgentConfig, state: Arc<AgentState>, stop: watch::Receiver<bool>) {
    run_with_dialer(cfg, state, stop, Dialer::network()).await
}

/// [`run`], reaching the coordinator through `dialer` (the client's tests hand in an
/// in-memory transport; everything above the socket is the same).
pub async fn run_with_dialer(
    cfg: AgentConfig,
    state: Arc<AgentState>,
    mut stop: watch::Receiver<bool>,
    dialer: Dialer,
) {
    let mut backoff = Backoff::new(cfg.backoff_min, cfg.backoff_max);
    let mut token = cfg.token.clone();
    loop {
        reread_token(&cfg, &mut token);
        let mut registered = false;
        let outcome = session(&cfg, &token, &dialer, &state, &mut registered, stop.clone()).await;
        state.ready.store(false, Ordering::SeqCst);
        state.connected.store(false, Ordering::SeqCst);
        if registered {
            backoff.reset();
        }
        let wait = match outcome {
            Ok(Ended::Stopped) => return,
            Ok(Ended::Reconnect { reason }) => {
                tracing::info!(region = %cfg.region, "the coordinator is going away ({reason}); reconnecting now");
                state.set_error(format!(
                    "reconnecting: the coordinator went away ({reason})"
                ));
                backoff.reset();
                backoff.next_wait()
            }
            Err(e) => match e.refusal() {
                // The token refused, and `--token-file` holds another one now (rotated in
                // place while, or just before, the coordinator reloaded): the next attempt
                // presents it, at the shortest backoff rather than the slow pace.
                Some(msg) if token_file_changed(&cfg, &token) => {
                    tracing::warn!(region = %cfg.region, "refused by the coordinator: {msg}; --token-file holds a new token, retrying with it at the shortest backoff");
                    state.set_error(format!("refused: {msg}"));
                    backoff.reset();
                    backoff.next_wait()
                }
                Some(msg) => {
                    tracing::error!(region = %cfg.region, "refused by the coordinator: {msg}; retrying slowly (--backoff-max)");
                    state.set_error(format!("refused: {msg}"));
                    backoff.max()
                }
                None => {
                    tracing::warn!(region = %cfg.region, "coordinator connection: {e}");
                    state.set_error(e.to_string());
                    backoff.next_wait()
                }
            },
            Ok(Ended::Closed) => {
                tracing::warn!(region = %cfg.region, "the coordinator closed the stream");
                state.set_error("the coordinator closed the stream".into());
                backoff.next_wait()
            }
        };
        state.reconnects.fetch_add(1, Ordering::Relaxed);
        tracing::info!(region = %cfg.region, "reconnecting in {}", humantime::format_duration(Duration::from_millis(wait.as_millis() as u64)));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stopped(&mut stop) => return,
        }
    }
}

/// Before an attempt: the token in `--token-file` now, if it reads (a file rewritten in
/// place, a mounted Secret rotated). A file that cannot be read keeps the token read before
/// (a rotation caught half-written), saying so; never the token itself.
fn reread_token(cfg: &AgentConfig, token: &mut SecretString) {
    let Some(path) = &cfg.token_file else {
        return;
    };
    match crate::credentials::from_file(path) {
        Ok(now) if now.expose_secret() != token.expose_secret() => {
            tracing::info!(region = %cfg.region, "--token-file {}: a new token; presenting it from this attempt on", path.display());
            *token = now;
        }
        Ok(_) => {}
        Err(e) => {
            let why = std::error::Error::source(&e).map_or(e.to_string(), |s| format!("{e}: {s}"));
            tracing::warn!(region = %cfg.region, "re-reading the agent token: {why}; presenting the token read before");
        }
    }
}

/// Whether `--token-file` now reads as a token other than `presented` (a file that cannot be
/// read is no new token: the next attempt keeps the one read before).
fn token_file_changed(cfg: &AgentConfig, presented: &SecretString) -> bool {
    cfg.token_file.as_ref().is_some_and(|path| {
        crate::credentials::from_file(path)
            .is_ok_and(|now| now.expose_secret() != presented.expose_secret())
    })
}

/// Resolves once `stop` turns true (or its sender is gone). Holds no borrow of the value
/// across the caller's `.await`s, so the client's futures stay `Send`.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

async fn session(
    cfg: &AgentConfig,
    token: &SecretString,
    dialer: &Dialer,
    state: &Arc<AgentState>,
    registered: &mut bool,
    mut stop: watch::Receiver<bool>,
) -> Result<Ended, SessionError> {
    let coordinator = Coordinator {
        url: &cfg.coordinator,
        ca_pem: cfg.ca_pem.as_deref(),
        identity: cfg
            .identity
            .as_ref()
            .map(|(c, k)| (c.as_slice(), k.as_slice())),
    };
    let channel = tokio::select! {
        c = dial::channel(coordinator, dialer) => c?,
        _ = stopped(&mut stop) => return Ok(Ended::Stopped),
    };
    let header: tonic::metadata::MetadataValue<tonic::metadata::Ascii> =
        format!("Bearer {}", token.expose_secret())
            .parse()
            .map_err(|source| SessionError::TokenNotAHeader { source })?;
    let mut client = FleetClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
        req.metadata_mut().insert("authorization", header.clone());
        Ok(req)
    });
    let (tx, rx) = mpsc::channel::<pb::AgentMessage>(64);
    let register = pb::Register {
        agent_id: cfg.agent_id.clone(),
        region: cfg.region.clone(),
        version: env!("CARGO_PKG_VERSION").into(),
        capabilities: vec!["probe.v1".into(), "auth.v1".into()],
        max_concurrency: cfg.max_concurrency as u32,
    };
    let _ = tx
        .send(pb::AgentMessage {
            kind: Some(pb::agent_message::Kind::Register(register)),
        })
        .await;
    let attached = tokio::select! {
        a = client.attach(ReceiverStream::new(rx)) => a,
        _ = stopped(&mut stop) => return Ok(Ended::Stopped),
    };
    let mut inbound = match attached {
        Ok(r) => r.into_inner(),
        Err(status)
            if matches!(
                status.code(),
                Code::Unauthenticated | Code::PermissionDenied
            ) =>
        {
            return Err(SessionError::Refused { status })
        }
        Err(status) => return Err(SessionError::Attach { status }),
    };
    state.connected.store(true, Ordering::SeqCst);
    let first = inbound.message().await.map_err(|s| classify(s, false))?;
    let heartbeat = match first.and_then(|m| m.kind) {
        Some(pb::coordinator_message::Kind::Registered(r)) => {
            *registered = true;
            state.ready.store(true, Ordering::SeqCst);
            tracing::info!(region = %r.region, "registered with the coordinator");
            Duration::from_millis(u64::from(r.heartbeat_interval_ms.max(100)))
        }
        _ => return Err(SessionError::Unconfirmed),
    };

    let hb_tx = tx.clone();
    let hb_state = state.clone();
    let heartbeats = tokio::spawn(async move {
        let mut tick = tokio::time::interval(heartbeat);
        loop {
            tick.tick().await;
            let hb = pb::Heartbeat {
                in_flight: hb_state.in_flight.load(Ordering::Relaxed),
                queued: hb_state.queued.load(Ordering::Relaxed),
                dropped: hb_state.dropped.load(Ordering::Relaxed),
            };
            if hb_tx
                .send(pb::AgentMessage {
                    kind: Some(pb::agent_message::Kind::Heartbeat(hb)),
                })
                .await
                .is_err()
            {
                return;
            }
        }
    });

    let slots = Arc::new(Semaphore::new(cfg.max_concurrency.max(1)));
    let running: Running = Arc::default();
    let result = loop {
        let next = tokio::select! {
            m = inbound.message() => m,
            _ = stopped(&mut stop) => {
                break drain(cfg, &tx, &mut inbound, &running).await;
            }
        };
        let msg = match next {
            Ok(Some(m)) => m,
            Ok(None) => break Ok(Ended::Closed),
            Err(s) => break Err(classify(s, true)),
        };
        match msg.kind {
            Some(pb::coordinator_message::Kind::Job(job)) => {
                let job_id = job.job_id.clone();
                // Entered under the lock, before the task can take it: a job that ends at
                // once (a refusal) then removes its own entry, and no stale one is left for
                // a drain to wait on.
                let mut r = running.lock().unwrap_or_else(PoisonError::into_inner);
                let task = tokio::spawn(run_job(
                    cfg.clone(),
                    job_id.clone(),
                    accept(cfg, job),
                    slots.clone(),
                    state.clone(),
                    tx.clone(),
                    running.clone(),
                ));
                r.insert(job_id, task.abort_handle());
            }
            Some(pb::coordinator_message::Kind::Cancel(c)) => {
                if let Some(h) = running.lock().ok().and_then(|mut r| r.remove(&c.job_id)) {
                    h.abort();
                }
            }
            Some(pb::coordinator_message::Kind::Reconnect(r)) => {
                break Ok(Ended::Reconnect { reason: r.reason });
            }
            _ => {}
        }
    };
    heartbeats.abort();
    if let Ok(mut r) = running.lock() {
        for (_, h) in r.drain() {
            h.abort();
        }
    }
    if matches!(result, Ok(Ended::Stopped)) {
        close(tx, &mut inbound).await;
    }
    result
}

/// The job `p` describes, if this agent runs it: it converts, and its policy is within the
/// agent's ceiling.
fn accept(cfg: &AgentConfig, p: pb::Job) -> Result<Job, JobError> {
    let job = Job::try_from(p)?;
    if let Some(ceiling) = &cfg.ceiling {
        ceiling.admits(&job.policy)?;
    }
    Ok(job)
}

/// Run one job (or refuse it, saying why) and send its result.
async fn run_job(
    cfg: AgentConfig,
    job_id: String,
    job: Result<Job, JobError>,
    slots: Arc<Semaphore>,
    state: Arc<AgentState>,
    tx: mpsc::Sender<pb::AgentMessage>,
    running: Running,
) {
    let (region, refused) = match job {
        Ok(job) => (
            queue_and_run(&cfg, &job, &slots, &state).await,
            String::new(),
        ),
        Err(e) => {
            tracing::error!(region = %cfg.region, job = %job_id, "refused a job: {e}");
            state.jobs_refused.fetch_add(1, Ordering::Relaxed);
            (
                RegionResult::absent(&cfg.region, RegionStatus::Error),
                e.to_string(),
            )
        }
    };
    let msg = pb::AgentMessage {
        kind: Some(pb::agent_message::Kind::Result(pb::JobResult {
            job_id: job_id.clone(),
            region: Some(region_to_pb(&region)),
            refused,
        })),
    };
    if tx.send(msg).await.is_err() {
        state.dropped.fetch_add(1, Ordering::Relaxed);
    }
    if let Ok(mut r) = running.lock() {
        r.remove(&job_id);
    }
}

/// Wait for a slot (at most the job's deadline), then run the job with what is left of it.
async fn queue_and_run(
    cfg: &AgentConfig,
    job: &Job,
    slots: &Arc<Semaphore>,
    state: &AgentState,
) -> RegionResult {
    let received = tokio::time::Instant::now();
    let queued = Counted::enter(&state.queued);
    let permit = tokio::time::timeout(
        job.deadline.max(MIN_DEADLINE),
        slots.clone().acquire_owned(),
    )
    .await;
    drop(queued);
    let Ok(Ok(_permit)) = permit else {
        return RegionResult::absent(&cfg.region, RegionStatus::Timeout);
    };
    let _running = Counted::enter(&state.in_flight);
    let region = cfg.engine.run_job_queued(job, received.elapsed()).await;
    state.jobs_run.fetch_add(1, Ordering::Relaxed);
    region
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProbeOptions;

    fn config() -> AgentConfig {
        AgentConfig {
            coordinator: "http://127.0.0.1:9".into(),
            region: "eu".into(),
            agent_id: "a1".into(),
            token: "t".to_string().into(),
            token_file: None,
            ca_pem: None,
            identity: None,
            max_concurrency: 1,
            backoff_min: Duration::from_millis(10),
            backoff_max: Duration::from_millis(20),
            engine: Engine::new(ProbeOptions::default()).unwrap(),
            drain_timeout: Duration::from_secs(1),
            ceiling: None,
        }
    }

    /// A job wider than the agent's ceiling is refused, saying so (the ceiling's own rules
    /// are tested in `egress`); within it, or without a ceiling, the job runs.
    #[tokio::test]
    async fn a_job_wider_than_the_ceiling_is_refused() {
        let mut cfg = config();
        cfg.ceiling = Some(Ceiling::new(vec!["127.0.0.2/32".parse().unwrap()]));
        let mut job = Job::new(crate::Target::parse("http://127.0.0.2:9/mcp").unwrap());
        let pb = |j: &Job| crate::convert::job_to_pb("j", j);
        job.policy.allow_non_global = vec!["127.0.0.0/8".parse().unwrap()];
        let e = accept(&cfg, pb(&job)).unwrap_err();
        assert!(matches!(e, JobError::Wider(_)), "{e:?}");
        assert!(e.to_string().contains("probe.allow_non_global names 127.0.0.0/8, wider than this agent's --allow-non-global-max (127.0.0.2/32)"), "{e}");
        job.policy.allow_non_global = vec!["127.0.0.2/32".parse().unwrap()];
        assert!(accept(&cfg, pb(&job)).is_ok());
        job.policy.allow_non_global = vec!["0.0.0.0/0".parse().unwrap()];
        cfg.ceiling = None;
        assert!(accept(&cfg, pb(&job)).is_ok());
    }
}
