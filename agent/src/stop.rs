//! An agent told to stop (SIGTERM) while registered: it says `Leaving` (the coordinator
//! sends it no new job), lets running jobs finish and send their results for at most
//! `drain_timeout`, then ends the session. Jobs still running are aborted with the session,
//! and the coordinator reports their region as missing: never lost silently.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use vantage_proto::v1 as pb;

use crate::client::AgentConfig;
use crate::session::{Ended, SessionError};

pub(crate) type Running = Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>>;

pub(crate) fn in_flight(running: &Running) -> usize {
    running.lock().map(|r| r.len()).unwrap_or(0)
}

/// Told to stop while registered: say so (no new jobs come), let running jobs finish and
/// send their results for at most `drain_timeout`, then end the session. Jobs still running
/// are aborted with the session; the coordinator counts them as missing.
pub(crate) async fn drain(
    cfg: &AgentConfig,
    tx: &mpsc::Sender<pb::AgentMessage>,
    inbound: &mut tonic::Streaming<pb::CoordinatorMessage>,
    running: &Running,
) -> Result<Ended, SessionError> {
    let jobs = in_flight(running);
    tracing::info!(
        region = %cfg.region,
        jobs,
        "stopping: draining running jobs for at most {}",
        humantime::format_duration(cfg.drain_timeout)
    );
    let _ = tx
        .send(pb::AgentMessage {
            kind: Some(pb::agent_message::Kind::Leaving(pb::Leaving {
                reason: "the agent is shutting down".into(),
            })),
        })
        .await;
    let deadline = tokio::time::Instant::now() + cfg.drain_timeout;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    loop {
        let left = in_flight(running);
        if left == 0 {
            tracing::info!(region = %cfg.region, "drained: every running job answered");
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(
                region = %cfg.region,
                jobs = left,
                "drain timeout: {left} job(s) still running are abandoned; the coordinator reports their region as missing"
            );
            break;
        }
        tokio::select! {
            _ = tick.tick() => {}
            m = inbound.message() => match m {
                // The coordinator went away: nothing can be delivered any more.
                Ok(None) | Err(_) => break,
                Ok(Some(_)) => {}
            },
        }
    }
    Ok(Ended::Stopped)
}

/// After a drain: close our side and wait (briefly) for the coordinator to close its own,
/// so that results already queued reach it before the connection goes.
pub(crate) async fn close(
    tx: mpsc::Sender<pb::AgentMessage>,
    inbound: &mut tonic::Streaming<pb::CoordinatorMessage>,
) {
    drop(tx);
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Ok(Some(_)) = inbound.message().await {}
    })
    .await;
}
