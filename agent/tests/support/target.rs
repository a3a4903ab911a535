//! Targets for jobs, on loopback only: a port nothing listens on (the connection is refused
//! at once), and a listener that accepts connections and never answers, reporting each
//! connection it accepts and when its peer closes it.

use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use vantage_proto::v1 as pb;

use super::mock::WAIT;

/// A job for `target` that may connect to loopback (as the coordinator's
/// `probe.allow_non_global` allows), with `deadline`.
pub fn job(id: &str, target: &str, deadline: std::time::Duration) -> pb::Job {
    pb::Job {
        job_id: id.into(),
        target: target.into(),
        deadline_ms: deadline.as_millis() as u64,
        allow_non_global: vec!["127.0.0.0/8".into()],
        ..Default::default()
    }
}

/// `http://127.0.0.1:PORT/mcp` where nothing listens: bound, then closed again.
pub async fn closed_port() -> String {
    let l = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let port = l.local_addr().expect("an address").port();
    drop(l);
    format!("http://127.0.0.1:{port}/mcp")
}

/// What the silent target saw of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conn {
    Accepted(u32),
    /// The first bytes of a request arrived on connection n.
    Requested(u32),
    /// The prober closed connection n (EOF or reset).
    Closed(u32),
}

/// Accepts every connection on loopback and never writes a byte, until released: then it
/// closes them, and every later one at once (a job against it then ends quickly). Stops
/// when dropped.
#[derive(Debug)]
pub struct Silent {
    pub url: String,
    release: watch::Sender<bool>,
    events: mpsc::UnboundedReceiver<Conn>,
    task: tokio::task::JoinHandle<()>,
    accepted: u32,
    requested: u32,
    closed: u32,
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Silent {
    pub async fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
        let (tx, events) = mpsc::unbounded_channel();
        let (release, released) = watch::channel(false);
        let task = tokio::spawn(async move {
            let mut held = tokio::task::JoinSet::new();
            for n in 1.. {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                if *released.borrow() {
                    continue;
                }
                let _ = tx.send(Conn::Accepted(n));
                let tx = tx.clone();
                let mut released = released.clone();
                // Read (and drop) what the prober sends until it closes; answer nothing.
                held.spawn(async move {
                    let mut buf = [0u8; 4096];
                    let mut first = true;
                    let read = async {
                        while matches!(stream.read(&mut buf).await, Ok(k) if k > 0) {
                            if std::mem::take(&mut first) {
                                let _ = tx.send(Conn::Requested(n));
                            }
                        }
                        let _ = tx.send(Conn::Closed(n));
                    };
                    tokio::select! {
                        _ = read => {}
                        _ = released.wait_for(|r| *r) => {}
                    }
                });
            }
        });
        Silent {
            url,
            release,
            events,
            task,
            accepted: 0,
            requested: 0,
            closed: 0,
        }
    }

    /// Wait until `done(accepted, closed)` holds, counting the connections this target
    /// accepted, those a request arrived on, and those the prober closed, since it started.
    pub async fn until(&mut self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !done(self) {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(Conn::Accepted(_))) => self.accepted += 1,
                Ok(Some(Conn::Requested(_))) => self.requested += 1,
                Ok(Some(Conn::Closed(_))) => self.closed += 1,
                Ok(None) => panic!("the silent target stopped"),
                Err(_) => panic!(
                    "the silent target: no {what} within {WAIT:?} ({} accepted, {} closed)",
                    self.accepted, self.closed
                ),
            }
        }
    }

    /// Close every connection, and from now on each new one at once.
    pub fn release(&self) {
        let _ = self.release.send(true);
    }

    /// A request arrived: the prober waits for an answer that never comes.
    pub async fn requested(&mut self) {
        self.until("request", |t| t.requested >= 1).await;
    }

    /// Every connection the prober opened (at least one) is closed again.
    pub async fn all_closed(&mut self) {
        self.until("close of every connection", |t| {
            t.accepted >= 1 && t.closed == t.accepted
        })
        .await;
    }
}
