//! The gRPC side of the fleet: authenticate an agent by its bearer token (constant-time),
//! bind its region to the token, register it, and pump its results and heartbeats. The one
//! coordinator file that speaks `vantage.v1`: the registry's jobs and cancels go out here,
//! results and heartbeats come in here.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use std::future::Future;
use subtle::ConstantTimeEq;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};
use vantage_agent::convert::{job_to_pb, region_from_pb};
use vantage_proto::v1 as pb;
use vantage_proto::v1::fleet_server::{Fleet, FleetServer};

use super::{JobOutcome, Load, Registry, ToAgent};

/// One accepted agent token and the region bound to it.
#[derive(Debug, Clone)]
pub struct AgentAuth {
    pub name: String,
    pub region: String,
    pub token: SecretString,
}

/// The `vantage.v1.Fleet` service.
#[derive(Debug, Clone)]
pub struct FleetService {
    pub registry: Arc<Registry>,
    /// Accepted tokens; replaced on a configuration reload (connected agents stay unless
    /// their token was revoked or moved: `Registry::revoke_stale`).
    pub agents: Arc<std::sync::RwLock<Vec<AgentAuth>>>,
    pub heartbeat: Duration,
}

/// Find the agent entry whose token equals `presented`, comparing every entry in constant
/// time so that timing does not reveal a prefix.
pub fn authenticate<'a>(agents: &'a [AgentAuth], presented: &str) -> Option<&'a AgentAuth> {
    let mut found = None;
    for a in agents {
        if bool::from(
            a.token
                .expose_secret()
                .as_bytes()
                .ct_eq(presented.as_bytes()),
        ) {
            found = Some(a);
        }
    }
    found
}

#[cfg(test)]
impl FleetService {
    /// Serve on an ephemeral loopback port (the tests' real gRPC server): its address and
    /// the server's task.
    pub(crate) async fn serve_on_loopback(
        self,
    ) -> (
        std::net::SocketAddr,
        tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    ) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(self.into_server())
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        (addr, server)
    }
}

impl FleetService {
    /// The tonic server of this service, for the gRPC listener.
    pub fn into_server(self) -> FleetServer<FleetService> {
        FleetServer::new(self)
    }
}

fn to_pb(msg: ToAgent) -> pb::CoordinatorMessage {
    let kind = match msg {
        ToAgent::Job { id, job } => pb::coordinator_message::Kind::Job(job_to_pb(&id, &job)),
        ToAgent::Cancel { id } => {
            pb::coordinator_message::Kind::Cancel(pb::CancelJob { job_id: id })
        }
        ToAgent::Reconnect { reason } => {
            pb::coordinator_message::Kind::Reconnect(pb::Reconnect { reason })
        }
    };
    pb::CoordinatorMessage { kind: Some(kind) }
}

fn load(hb: &pb::Heartbeat) -> Load {
    Load {
        in_flight: hb.in_flight,
        queued: hb.queued,
        dropped: hb.dropped,
    }
}

/// The registry's messages for one agent, ended at once with PERMISSION_DENIED and why when
/// a reload revokes its token: nothing still queued for it goes out after that.
struct Revocable {
    killed: Option<oneshot::Receiver<String>>,
    rx: ReceiverStream<ToAgent>,
    /// The revocation went out: the stream is over.
    revoked: bool,
}

impl Stream for Revocable {
    type Item = Result<pb::CoordinatorMessage, Status>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        if self.revoked {
            return Poll::Ready(None);
        }
        if let Some(killed) = self.killed.as_mut() {
            match Pin::new(killed).poll(cx) {
                Poll::Ready(Ok(reason)) => {
                    self.killed = None;
                    self.revoked = true;
                    return Poll::Ready(Some(Err(Status::permission_denied(reason))));
                }
                // Deregistered without a revocation: the stream ends as it always did.
                Poll::Ready(Err(_)) => self.killed = None,
                Poll::Pending => {}
            }
        }
        Pin::new(&mut self.rx)
            .poll_next(cx)
            .map(|m| m.map(|m| Ok(to_pb(m))))
    }
}

type Outbound = Pin<Box<dyn Stream<Item = Result<pb::CoordinatorMessage, Status>> + Send>>;

#[tonic::async_trait]
impl Fleet for FleetService {
    type AttachStream = Outbound;

    async fn attach(
        &self,
        request: Request<Streaming<pb::AgentMessage>>,
    ) -> Result<Response<Self::AttachStream>, Status> {
        let peer = request
            .remote_addr()
            .map_or_else(|| "unknown".to_string(), |a| a.to_string());
        let presented = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(vantage_agent::credentials::bearer)
            .unwrap_or("");
        let (agent, configured) = {
            let agents = self.agents.read().unwrap_or_else(|p| p.into_inner());
            (authenticate(&agents, presented).cloned(), agents.len())
        };
        let Some(agent) = agent else {
            tracing::warn!(
                %peer,
                configured,
                "agent refused: unknown agent token; add an [[agents]] entry (name, region, token_env or token_file) with this token to the configuration"
            );
            return Err(Status::unauthenticated(format!(
                "unknown agent token: the coordinator has no [[agents]] entry with this token ({configured} configured); add one (name, region, token_env or token_file) to its configuration"
            )));
        };
        let mut inbound = request.into_inner();
        let first = tokio::time::timeout(Duration::from_secs(10), inbound.message())
            .await
            .map_err(|_| Status::deadline_exceeded("no Register within 10 s"))??;
        let register = match first.and_then(|m| m.kind) {
            Some(pb::agent_message::Kind::Register(r)) => r,
            _ => {
                return Err(Status::invalid_argument(
                    "the first message must be a Register",
                ))
            }
        };
        if register.region != agent.region {
            tracing::warn!(
                agent = %register.agent_id,
                name = %agent.name,
                claimed = %register.region,
                bound = %agent.region,
                %peer,
                "agent refused: its token is bound to another region"
            );
            return Err(Status::permission_denied(format!(
                "this token is bound to region `{}`, not `{}`",
                agent.region, register.region
            )));
        }
        let (tx, rx) = mpsc::channel(256);
        let (kill, killed) = oneshot::channel();
        let session = self.registry.register_bound(
            register.agent_id.clone(),
            agent.region.clone(),
            register.version.clone(),
            tx,
            agent.name.clone(),
            agent.token.clone(),
            kill,
            peer.clone(),
        );
        // The id it is known by here: unique among connected agents (`~2` when taken).
        let agent_id = self
            .registry
            .agent_id(session)
            .unwrap_or_else(|| register.agent_id.clone());
        // A reload may have replaced the tokens since this one was accepted: check again
        // now that a reload's sweep would see this session.
        let revoked = {
            let agents = self.agents.read().unwrap_or_else(|p| p.into_inner());
            self.registry.revoke_if_stale(session, &agents)
        };
        if let Some(reason) = revoked {
            return Err(Status::permission_denied(reason));
        }
        tracing::info!(
            agent = %agent_id,
            name = %agent.name,
            region = %agent.region,
            version = %register.version,
            %peer,
            "agent registered"
        );
        let registered = pb::CoordinatorMessage {
            kind: Some(pb::coordinator_message::Kind::Registered(pb::Registered {
                region: agent.region.clone(),
                heartbeat_interval_ms: self.heartbeat.as_millis() as u32,
            })),
        };
        // The confirmation goes first, whatever the registry sends meanwhile.
        let outbound = tokio_stream::once(Ok(registered)).chain(Revocable {
            killed: Some(killed),
            rx: ReceiverStream::new(rx),
            revoked: false,
        });
        let registry = self.registry.clone();
        let region = agent.region.clone();
        let agent_version = register.version.clone();
        tokio::spawn(async move {
            let why = loop {
                let msg = match inbound.message().await {
                    Ok(Some(msg)) => msg,
                    Ok(None) => break "stream closed".to_string(),
                    Err(s) => break format!("stream error: {}", s.message()),
                };
                match msg.kind {
                    Some(pb::agent_message::Kind::Result(r)) if !r.refused.is_empty() => {
                        registry.seen(session, None);
                        registry.complete(session, &r.job_id, JobOutcome::Refused(r.refused));
                    }
                    Some(pb::agent_message::Kind::Result(r)) => {
                        registry.seen(session, None);
                        match r.region.map(region_from_pb) {
                            Some(Ok(mut result)) => {
                                // The region is the one bound to the token, whatever the result says.
                                result.region = region.clone();
                                registry.complete(
                                    session,
                                    &r.job_id,
                                    JobOutcome::Done(Box::new(result)),
                                );
                            }
                            // Answered, but unreadable: the job ends now, with why, rather
                            // than waiting out its deadline as if nothing came.
                            unusable => {
                                let reason = match unusable {
                                    Some(Err(e)) => e.to_string(),
                                    _ => "the result has no region section".to_string(),
                                };
                                tracing::warn!(%region, version = %agent_version, "unusable result: {reason}");
                                registry.complete(
                                    session,
                                    &r.job_id,
                                    JobOutcome::Unusable {
                                        reason,
                                        agent_version: agent_version.clone(),
                                    },
                                );
                            }
                        }
                    }
                    Some(pb::agent_message::Kind::Heartbeat(hb)) => {
                        registry.seen(session, Some(load(&hb)))
                    }
                    Some(pb::agent_message::Kind::Leaving(l)) => {
                        registry.seen(session, None);
                        registry.leaving(session);
                        tracing::info!(agent = %agent_id, %region, reason = %l.reason, "agent leaving: no new jobs for it");
                    }
                    _ => registry.seen(session, None),
                }
            };
            let lost = registry.deregister(session);
            tracing::info!(agent = %agent_id, %region, jobs_lost = lost, "agent disconnected ({why})");
        });
        Ok(Response::new(Box::pin(outbound)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_revoked_stream_ends_with_its_status_before_anything_queued() {
        let (tx, rx) = mpsc::channel(8);
        let (kill, killed) = oneshot::channel();
        tx.try_send(ToAgent::Cancel {
            id: "queued".into(),
        })
        .unwrap();
        let (live_tx, live_rx) = mpsc::channel(8);
        live_tx
            .try_send(ToAgent::Cancel { id: "kept".into() })
            .unwrap();
        drop(live_tx);
        let mut live = Revocable {
            killed: None,
            rx: ReceiverStream::new(live_rx),
            revoked: false,
        };
        // Control: without a revocation the stream carries what is queued, then ends.
        assert!(live.next().await.is_some_and(|m| m.is_ok()));
        assert!(live.next().await.is_none());
        kill.send("this agent's token was revoked".to_string())
            .unwrap();
        let mut s = Revocable {
            killed: Some(killed),
            rx: ReceiverStream::new(rx),
            revoked: false,
        };
        let status = s.next().await.expect("an item").expect_err("a status");
        assert_eq!(status.code(), tonic::Code::PermissionDenied);
        assert_eq!(status.message(), "this agent's token was revoked");
        assert!(s.next().await.is_none(), "nothing queued goes out after it");
        drop(tx);
    }

    #[test]
    fn tokens_select_their_agent() {
        let agents = vec![
            AgentAuth {
                name: "a".into(),
                region: "eu".into(),
                token: "token-eu".to_string().into(),
            },
            AgentAuth {
                name: "b".into(),
                region: "us".into(),
                token: "token-us".to_string().into(),
            },
        ];
        assert_eq!(
            authenticate(&agents, "token-us").map(|a| a.region.as_str()),
            Some("us")
        );
        assert!(authenticate(&agents, "token-u").is_none());
        assert!(authenticate(&agents, "").is_none());
        assert!(authenticate(&agents, "token-eu-extra").is_none());
    }
}

#[cfg(test)]
#[path = "unusable_tests.rs"]
mod unusable_tests;
