//! An in-memory transport between the agent and the mock coordinator: each dial is a
//! `tokio::io::duplex` pair, the client half handed to tonic through
//! `Endpoint::connect_with_connector`, the server half to the mock's tonic server.
//!
//! Why not a socket: with `tokio::time::pause()` the clock jumps to the next timer as soon
//! as every task waits. Bytes on a real socket arrive through the kernel and the reactor, so
//! "every task waits" can also mean "a reply is on its way", and the clock would jump past a
//! connect timeout or a keepalive that in reality never fires. In memory, a waiting runtime
//! really is idle, so backoffs, heartbeats and keepalives can be asserted in virtual time,
//! exactly and without sleeping.
//!
//! A connection can be stalled: the coordinator's bytes stop reaching the agent (a frozen
//! coordinator, a path that silently drops packets), while the connection stays open.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};
use tokio::sync::mpsc;
use tonic::transport::server::Connected;
use vantage_agent::dial::Dialer;

use super::mock::Seen;

/// Which connection (one per dial, counted from 1) a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnId(pub u32);

/// One half of a connection. The agent's half can be stalled: then it reads nothing more.
/// The coordinator's half carries the connection's id to the mock's requests.
#[derive(Debug)]
pub struct Half {
    io: DuplexStream,
    conn: ConnId,
    stalled: Arc<AtomicBool>,
}

impl Connected for Half {
    type ConnectInfo = ConnId;

    fn connect_info(&self) -> ConnId {
        self.conn
    }
}

impl AsyncRead for Half {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.stalled.load(Ordering::SeqCst) {
            // Nothing arrives any more; the agent's own timers are what must notice.
            return Poll::Pending;
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Half {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The stall switches of every connection so far, by connection.
pub type Stalls = Arc<std::sync::Mutex<std::collections::HashMap<ConnId, Arc<AtomicBool>>>>;

/// Hands the agent a fresh in-memory connection per dial and the mock's server its other half.
#[derive(Debug, Clone)]
pub struct Link {
    pub(super) incoming: mpsc::UnboundedSender<io::Result<Half>>,
    pub(super) seen: mpsc::UnboundedSender<Seen>,
    pub(super) stalls: Stalls,
    pub(super) next: Arc<AtomicU32>,
}

impl Link {
    /// A dialer for `client::run_with_dialer`: each session's dial opens a new connection
    /// and is reported as [`Seen::Dialed`] at the (virtual) instant it happens.
    pub fn dialer(&self) -> Dialer {
        let link = self.clone();
        Dialer::custom(move |endpoint| {
            let link = link.clone();
            Box::pin(async move {
                endpoint
                    .connect_with_connector(tower::service_fn(move |_uri| {
                        let io = link.open();
                        async move { io.map(TokioIo::new) }
                    }))
                    .await
            })
        })
    }

    fn open(&self) -> io::Result<Half> {
        let conn = ConnId(self.next.fetch_add(1, Ordering::SeqCst) + 1);
        let (client, server) = tokio::io::duplex(64 * 1024);
        let stalled = Arc::new(AtomicBool::new(false));
        self.stalls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(conn, stalled.clone());
        let _ = self.seen.send(Seen::Dialed {
            conn,
            at: tokio::time::Instant::now(),
        });
        self.incoming
            .send(Ok(Half {
                io: server,
                conn,
                stalled: Arc::default(),
            }))
            .map_err(|_| io::Error::new(io::ErrorKind::ConnectionRefused, "the mock is gone"))?;
        Ok(Half {
            io: client,
            conn,
            stalled,
        })
    }
}
