//! The egress laboratory: an HTTP server that counts the connections it accepts (the
//! "internal" service a hostile target points at, and the "public" target itself), and a
//! DNS server whose answer for a name can change between queries (rebinding).

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::task::JoinHandle;

/// What the server saw of one request.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
}

/// One answer: status, headers, body. Every answer closes its connection, so a second
/// request to a name needs a new connection (and a new lookup).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Answer {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = Arc<dyn Fn(&Request) -> Answer + Send + Sync>;

/// An HTTP/1.1 server on one address that counts every connection it accepts.
pub struct CountingServer {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl CountingServer {
    pub fn start(listener: TcpListener, handler: Handler) -> Self {
        let addr = listener.local_addr().expect("addr");
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, handler.clone()));
            }
        });
        CountingServer {
            addr,
            connections,
            task,
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for CountingServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut stream: TcpStream, handler: Handler) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 64 * 1024 {
            return;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let mut length = 0usize;
    for line in lines {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        if k.trim().eq_ignore_ascii_case("content-length") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    // Read the body, so closing the connection does not reset it under the answer.
    let mut have = buf.len() - head_end;
    while have < length.min(1 << 20) {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => have += n,
        }
    }
    let answer = handler(&Request { path });
    let mut out = format!("HTTP/1.1 {} X\r\n", answer.status);
    for (k, v) in &answer.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
        answer.body.len(),
        answer.body
    ));
    let _ = stream.write_all(out.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Two listeners on the same port: `127.0.0.1:P` (internal) and `127.0.0.2:P` (the
/// target's "public" side), so a URL naming a host and that port reaches one or the other
/// depending only on the address the host resolves to.
pub async fn twin_listeners() -> (TcpListener, TcpListener) {
    for _ in 0..50 {
        let internal = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = internal.local_addr().expect("addr").port();
        if let Ok(public) = TcpListener::bind(("127.0.0.2", port)).await {
            return (internal, public);
        }
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

/// A DNS server on loopback (UDP): fixed names, and rebinding names whose first A query is
/// answered with one address and every later one with another (AAAA: no data). It counts
/// the queries for each name.
pub struct RebindDns {
    pub addr: SocketAddr,
    queries: Arc<Mutex<BTreeMap<String, usize>>>,
    task: JoinHandle<()>,
}

impl RebindDns {
    pub async fn start(fixed: &[(&str, &str)], rebinding: &[(&str, &str, &str)]) -> Self {
        let fixed: BTreeMap<String, IpAddr> = fixed
            .iter()
            .map(|(n, a)| (format!("{n}."), a.parse().expect("ip")))
            .collect();
        let rebinding: BTreeMap<String, (IpAddr, IpAddr)> = rebinding
            .iter()
            .map(|(n, first, later)| {
                (
                    format!("{n}."),
                    (first.parse().expect("ip"), later.parse().expect("ip")),
                )
            })
            .collect();
        let socket = UdpSocket::bind(("127.0.0.1", 0)).await.expect("bind udp");
        let addr = socket.local_addr().expect("addr");
        let queries: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let counts = queries.clone();
        let task = tokio::spawn(async move {
            let mut a_queries: BTreeMap<String, usize> = BTreeMap::new();
            let mut buf = vec![0u8; 4096];
            while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
                let Ok(msg) = hickory_proto::op::Message::from_vec(&buf[..n]) else {
                    continue;
                };
                let Some(q) = msg.queries().first() else {
                    continue;
                };
                let name = q.name().to_ascii().to_ascii_lowercase();
                *counts.lock().unwrap().entry(name.clone()).or_default() += 1;
                let mut table = BTreeMap::new();
                if let Some(&a) = fixed.get(&name) {
                    table.insert(name.clone(), vec![a]);
                } else if let Some(&(first, later)) = rebinding.get(&name) {
                    let mut answer = Vec::new();
                    if q.query_type() == hickory_proto::rr::RecordType::A {
                        let seen = a_queries.entry(name.clone()).or_default();
                        *seen += 1;
                        answer.push(if *seen == 1 { first } else { later });
                    }
                    table.insert(name.clone(), answer);
                }
                if let Some(bytes) = crate::support::answer(&table, &buf[..n], 4096) {
                    let _ = socket.send_to(&bytes, peer).await;
                }
            }
        });
        RebindDns {
            addr,
            queries,
            task,
        }
    }

    /// Queries received for `name` (A and AAAA).
    pub fn queries(&self, name: &str) -> usize {
        self.queries
            .lock()
            .unwrap()
            .get(&format!("{name}."))
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for RebindDns {
    fn drop(&mut self) {
        self.task.abort();
    }
}
