//! A mock coordinator: a real tonic `vantage.v1.Fleet` server whose every move the test
//! makes through channels, and which reports everything the agent does as [`Seen`] events.
//!
//! Each dial is [`Seen::Dialed`]; each attach, after the agent's `Register`, is
//! [`Seen::Attach`], held until the test refuses it with a status or accepts it, which gives
//! the test the stream's [`Session`] (send jobs, cancels, `Reconnect`; end or fail the
//! stream; stall the connection). What the agent sends on an accepted stream comes back as
//! [`Seen::Result`], [`Seen::Heartbeat`], [`Seen::Leaving`], and its end as [`Seen::Closed`].
//! Tests await these events (bounded by [`WAIT`], virtual time in paused tests): nothing
//! stands in for "it arrived" but its arrival.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};
use vantage_proto::v1 as pb;
use vantage_proto::v1::fleet_server::{Fleet, FleetServer};

use super::transport::{ConnId, Link, Stalls};

/// How long a test waits for an event before it fails (virtual time in paused tests).
pub const WAIT: Duration = Duration::from_secs(120);

/// What the coordinator saw, in order. (Some fields are read only through `Debug`, in the
/// message of a test that saw something else than it waited for.)
#[derive(Debug)]
#[allow(dead_code)]
pub enum Seen {
    /// The agent opened a connection.
    Dialed {
        conn: ConnId,
        at: Instant,
    },
    /// The agent attached and sent its `Register`: the test answers.
    Attach(Attach),
    Result {
        conn: ConnId,
        result: pb::JobResult,
    },
    Heartbeat {
        conn: ConnId,
        heartbeat: pb::Heartbeat,
        at: Instant,
    },
    Leaving {
        conn: ConnId,
        leaving: pb::Leaving,
    },
    /// The agent sent something it must not (a second `Register`, an empty message).
    Unexpected {
        conn: ConnId,
        message: pb::AgentMessage,
    },
    /// The agent's side of an accepted stream ended: cleanly (`None`) or with a status.
    Closed {
        conn: ConnId,
        status: Option<Status>,
    },
}

enum Answer {
    Refuse(Status),
    Accept {
        registered: Option<pb::Registered>,
        outbound: mpsc::UnboundedReceiver<Result<pb::CoordinatorMessage, Status>>,
    },
}

/// An attach waiting for the test's answer.
#[derive(Debug)]
pub struct Attach {
    pub conn: ConnId,
    /// The `authorization` metadata as sent.
    pub authorization: Option<String>,
    pub register: pb::Register,
    reply: oneshot::Sender<Answer>,
    stalled: Arc<AtomicBool>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Answer")
    }
}

impl Attach {
    /// Refuse the agent with `status` (as the coordinator does an unknown token, or a region
    /// its token is not bound to).
    pub fn refuse(self, status: Status) {
        let _ = self.reply.send(Answer::Refuse(status));
    }

    /// Confirm the registration (`Registered` with `heartbeat`) and open the stream.
    pub fn accept(self, heartbeat: Duration) -> Session {
        let region = self.register.region.clone();
        self.open(Some(pb::Registered {
            region,
            heartbeat_interval_ms: heartbeat.as_millis() as u32,
        }))
    }

    /// Open the stream without confirming the registration (a coordinator that misbehaves).
    pub fn accept_unconfirmed(self) -> Session {
        self.open(None)
    }

    fn open(self, registered: Option<pb::Registered>) -> Session {
        let (tx, outbound) = mpsc::unbounded_channel();
        let _ = self.reply.send(Answer::Accept {
            registered,
            outbound,
        });
        Session {
            conn: self.conn,
            tx,
            stalled: self.stalled,
        }
    }
}

/// The coordinator's side of one accepted stream. Dropping it ends the stream cleanly.
#[derive(Debug)]
pub struct Session {
    pub conn: ConnId,
    tx: mpsc::UnboundedSender<Result<pb::CoordinatorMessage, Status>>,
    stalled: Arc<AtomicBool>,
}

impl Session {
    fn send(&self, kind: pb::coordinator_message::Kind) {
        let _ = self
            .tx
            .send(Ok(pb::CoordinatorMessage { kind: Some(kind) }));
    }

    pub fn job(&self, job: pb::Job) {
        self.send(pb::coordinator_message::Kind::Job(job));
    }

    pub fn cancel(&self, job_id: &str) {
        self.send(pb::coordinator_message::Kind::Cancel(pb::CancelJob {
            job_id: job_id.into(),
        }));
    }

    /// Say `Reconnect` and keep the stream open: the agent must not wait for it to close.
    pub fn reconnect(&self, reason: &str) {
        self.send(pb::coordinator_message::Kind::Reconnect(pb::Reconnect {
            reason: reason.into(),
        }));
    }

    /// End the stream cleanly (the coordinator closed it).
    pub fn end(self) {}

    /// End the stream with `status`.
    pub fn fail(self, status: Status) {
        let _ = self.tx.send(Err(status));
    }

    /// From now on nothing the coordinator sends reaches the agent (not even HTTP/2 ping
    /// acknowledgements), and the connection stays open.
    pub fn stall(&self) {
        self.stalled.store(true, Ordering::SeqCst);
    }
}

type Outbound = Pin<Box<dyn Stream<Item = Result<pb::CoordinatorMessage, Status>> + Send>>;

#[derive(Debug, Clone)]
struct MockFleet {
    seen: mpsc::UnboundedSender<Seen>,
    stalls: Stalls,
}

impl MockFleet {
    fn stall_switch(&self, conn: ConnId) -> Arc<AtomicBool> {
        self.stalls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&conn)
            .cloned()
            .unwrap_or_default()
    }
}

#[tonic::async_trait]
impl Fleet for MockFleet {
    type AttachStream = Outbound;

    async fn attach(
        &self,
        request: Request<Streaming<pb::AgentMessage>>,
    ) -> Result<Response<Outbound>, Status> {
        let conn = *request
            .extensions()
            .get::<ConnId>()
            .ok_or_else(|| Status::internal("the mock's connection has no id"))?;
        let authorization = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut inbound = request.into_inner();
        let register = match inbound.message().await?.and_then(|m| m.kind) {
            Some(pb::agent_message::Kind::Register(r)) => r,
            _ => {
                return Err(Status::invalid_argument(
                    "the first message must be a Register",
                ))
            }
        };
        let (reply, answer) = oneshot::channel();
        let _ = self.seen.send(Seen::Attach(Attach {
            conn,
            authorization,
            register,
            reply,
            stalled: self.stall_switch(conn),
        }));
        let (registered, outbound) = match answer.await {
            Ok(Answer::Accept {
                registered,
                outbound,
            }) => (registered, outbound),
            Ok(Answer::Refuse(status)) => return Err(status),
            Err(_) => return Err(Status::unavailable("the test dropped the attach")),
        };
        let seen = self.seen.clone();
        tokio::spawn(async move {
            let status = loop {
                let message = match inbound.message().await {
                    Ok(Some(m)) => m,
                    Ok(None) => break None,
                    Err(s) => break Some(s),
                };
                let event = match message.kind {
                    Some(pb::agent_message::Kind::Result(result)) => Seen::Result { conn, result },
                    Some(pb::agent_message::Kind::Heartbeat(heartbeat)) => Seen::Heartbeat {
                        conn,
                        heartbeat,
                        at: Instant::now(),
                    },
                    Some(pb::agent_message::Kind::Leaving(leaving)) => {
                        Seen::Leaving { conn, leaving }
                    }
                    _ => Seen::Unexpected { conn, message },
                };
                let _ = seen.send(event);
            };
            let _ = seen.send(Seen::Closed { conn, status });
        });
        let first = registered.map(|r| {
            Ok(pb::CoordinatorMessage {
                kind: Some(pb::coordinator_message::Kind::Registered(r)),
            })
        });
        let stream = tokio_stream::iter(first).chain(UnboundedReceiverStream::new(outbound));
        Ok(Response::new(Box::pin(stream)))
    }
}

/// The mock coordinator: its server runs until it is dropped.
#[derive(Debug)]
pub struct Mock {
    link: Link,
    seen: mpsc::UnboundedReceiver<Seen>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Mock {
    pub fn start() -> Mock {
        let (seen_tx, seen) = mpsc::unbounded_channel();
        let (incoming, incoming_rx) = mpsc::unbounded_channel();
        let stalls = Stalls::default();
        let fleet = MockFleet {
            seen: seen_tx.clone(),
            stalls: stalls.clone(),
        };
        let server = tokio::spawn(async move {
            let _ = tonic::transport::Server::builder()
                .add_service(FleetServer::new(fleet))
                .serve_with_incoming(UnboundedReceiverStream::new(incoming_rx))
                .await;
        });
        Mock {
            link: Link {
                incoming,
                seen: seen_tx,
                stalls,
                next: Arc::new(AtomicU32::new(0)),
            },
            seen,
            server,
        }
    }

    pub fn link(&self) -> &Link {
        &self.link
    }

    /// The next event that is not a heartbeat.
    pub async fn next_not_heartbeat(&mut self) -> Seen {
        self.wait_for("an event other than a heartbeat", |s| {
            !matches!(s, Seen::Heartbeat { .. })
        })
        .await
    }

    /// The first event `wanted` accepts; the others are passed over (and shown on failure).
    pub async fn wait_for(&mut self, what: &str, wanted: impl Fn(&Seen) -> bool) -> Seen {
        let deadline = Instant::now() + WAIT;
        let mut passed = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline, self.seen.recv()).await {
                Ok(Some(seen)) if wanted(&seen) => return seen,
                Ok(Some(seen)) => passed.push(format!("{seen:?}")),
                Ok(None) => panic!("the mock's event channel closed waiting for {what}"),
                Err(_) => panic!(
                    "{what}: not seen within {WAIT:?}; seen meanwhile:\n{}",
                    passed.join("\n")
                ),
            }
        }
    }

    /// The next dial: (connection, when).
    pub async fn dialed(&mut self) -> (ConnId, Instant) {
        match self
            .wait_for("dial", |s| matches!(s, Seen::Dialed { .. }))
            .await
        {
            Seen::Dialed { conn, at } => (conn, at),
            _ => unreachable!(),
        }
    }

    /// The next attach (its `Register` read), waiting for the test's answer.
    pub async fn attach(&mut self) -> Attach {
        match self
            .wait_for("attach", |s| matches!(s, Seen::Attach(_)))
            .await
        {
            Seen::Attach(a) => a,
            _ => unreachable!(),
        }
    }

    /// The next dial and its attach, accepted with `heartbeat`.
    pub async fn accept(&mut self, heartbeat: Duration) -> Session {
        self.attach().await.accept(heartbeat)
    }

    /// [`Mock::accept`], then the stream's first heartbeat: the agent is using it.
    pub async fn accept_then_heartbeat(&mut self, heartbeat: Duration) -> Session {
        let session = self.accept(heartbeat).await;
        self.heartbeat(session.conn, "a first heartbeat", |_| true)
            .await;
        session
    }

    /// The next heartbeat on `conn` that `wanted` accepts.
    pub async fn heartbeat(
        &mut self,
        conn: ConnId,
        what: &str,
        wanted: impl Fn(&pb::Heartbeat) -> bool,
    ) -> (pb::Heartbeat, Instant) {
        let hb = self
            .wait_for(what, |s| {
                matches!(s, Seen::Heartbeat { conn: c, heartbeat, .. } if *c == conn && wanted(heartbeat))
            })
            .await;
        match hb {
            Seen::Heartbeat { heartbeat, at, .. } => (heartbeat, at),
            _ => unreachable!(),
        }
    }

    /// The next job result (any heartbeat before it is passed over, anything else fails).
    pub async fn result(&mut self) -> pb::JobResult {
        match self.next_not_heartbeat().await {
            Seen::Result { result, .. } => result,
            other => panic!("expected a job result, saw {other:?}"),
        }
    }
}
