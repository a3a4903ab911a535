//! Helpers of the issue 12 reproductions (`evidence.rs`, `evidence_fleet.rs`), shared by the
//! review, egress, gate and report tests: the report as JSON from the `vantage` binary, its
//! finding rows and its findings and checks by id, the head of an HTTP request, a canned
//! HTTP server that records the Authorization header it gets, a gateway that strips one
//! request header (and a check through it), and the TypeScript SDK 1.x example server with
//! its demo authorization server.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use vantage_fixture::{Fault, Fixture};

use crate::support::vantage_env;

pub(crate) fn s(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

/// `vantage check … -f json` with `env`: the exit code and the report.
pub(crate) async fn json_check(args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-f", "json"]);
    let out = vantage_env(&all, env).await;
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} / {}", s(&out.stdout), s(&out.stderr)));
    crate::support::assert_valid(&report);
    (out.status.code().unwrap_or(-1), report)
}

/// (id, severity, scope, regions) of the findings above info, sorted.
pub(crate) fn shape(report: &Value) -> Vec<(String, String, String, Vec<String>)> {
    let mut v: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["scope"].as_str().unwrap().to_string(),
                f["regions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    v.sort();
    v
}

pub(crate) fn row(
    id: &str,
    sev: &str,
    scope: &str,
    regions: &[&str],
) -> (String, String, String, Vec<String>) {
    (
        id.into(),
        sev.into(),
        scope.into(),
        regions.iter().map(|r| r.to_string()).collect(),
    )
}

/// The item of the JSON array `items` whose `key` is `value`.
fn item<'a>(items: &'a Value, key: &str, value: &str) -> Option<&'a Value> {
    items.as_array().unwrap().iter().find(|x| x[key] == value)
}

/// The finding `id` of a JSON report; it must be there.
/// The JSON report of a one-region `vantage check -f json` run whose era was not observed:
/// exit 4, decision and era `unknown` (asserted, naming `what`).
pub(crate) fn era_unknown_exit_4(out: &std::process::Output, what: &str) -> Value {
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: {e}: {}", s(&out.stderr)));
    assert_eq!(out.status.code(), Some(4), "{what}: {report}");
    assert_eq!(report["decision"], "unknown", "{what}");
    assert_eq!(report["regions"][0]["era"], "unknown", "{what}");
    report
}

/// The ids of a JSON report's findings, in order.
pub(crate) fn finding_ids(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["id"].as_str().map(String::from))
        .collect()
}

pub(crate) fn finding<'a>(report: &'a Value, id: &str) -> &'a Value {
    item(&report["findings"], "id", id)
        .unwrap_or_else(|| panic!("{id} missing from the findings: {report}"))
}

/// The check `id` of `region` in a JSON report; it must be there.
pub(crate) fn check_of<'a>(report: &'a Value, region: &str, id: &str) -> &'a Value {
    item(&report["regions"], "region", region)
        .and_then(|r| item(&r["checks"], "id", id))
        .unwrap_or_else(|| panic!("{region} {id} missing"))
}

/// Where the head of the HTTP request at the start of `text` ends (its blank line) and its
/// Content-Length (0 without one); `None` while the head is incomplete.
pub(crate) fn head_and_length(text: &str) -> Option<(usize, usize)> {
    let end = text.find("\r\n\r\n")?;
    let len = text[..end]
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    Some((end, len))
}

/// The check `id` of `region`, asserted to have come out `outcome` for `cause`.
pub(crate) fn check_came_out<'a>(
    report: &'a Value,
    region: &str,
    id: &str,
    outcome: &str,
    cause: &str,
) -> &'a Value {
    let c = check_of(report, region, id);
    assert_eq!(
        (c["outcome"].as_str(), c["cause"].as_str()),
        (Some(outcome), Some(cause)),
        "{region} {id}: {c}"
    );
    c
}

/// A server that answers every request with `status` and `headers`, and records the
/// Authorization header of each request.
pub(crate) async fn canned(
    status: u16,
    headers: &'static [(&'static str, &'static str)],
) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let mut have = 0;
                loop {
                    let Ok(n) = s.read(&mut buf[have..]).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    have += n;
                    let text = String::from_utf8_lossy(&buf[..have]).to_string();
                    let Some((end, len)) = head_and_length(&text) else {
                        continue;
                    };
                    if have < end + 4 + len {
                        continue;
                    }
                    if let Some(auth) = text[..end].lines().find_map(|l| {
                        l.split_once(':')
                            .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                            .map(|(_, v)| v.trim().to_string())
                    }) {
                        log.lock().unwrap().push(auth);
                    }
                    let mut resp = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n");
                    for (k, v) in headers {
                        resp.push_str(&format!("{k}: {v}\r\n"));
                    }
                    resp.push_str("\r\n");
                    let _ = s.write_all(resp.as_bytes()).await;
                    have = 0;
                }
            });
        }
    });
    (addr, seen)
}

/// A gateway in front of `backend` that removes one request header (one request per
/// connection; it asks the backend to close, so the client opens a new one each time).
pub(crate) struct StripHeader {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl StripHeader {
    pub async fn start(backend: SocketAddr, header: &'static str) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 8192];
                    let (head_end, len) = loop {
                        let Ok(n) = client.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf);
                        if let Some(head) = head_and_length(&text) {
                            break head;
                        }
                    };
                    while buf.len() < head_end + 4 + len {
                        let Ok(n) = client.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let mut out: Vec<String> = head
                        .split("\r\n")
                        .filter(|l| {
                            let name = l
                                .split(':')
                                .next()
                                .unwrap_or("")
                                .trim()
                                .to_ascii_lowercase();
                            name != header && name != "connection"
                        })
                        .map(str::to_string)
                        .collect();
                    out.push("connection: close".into());
                    let mut req = out.join("\r\n").into_bytes();
                    req.extend_from_slice(b"\r\n\r\n");
                    req.extend_from_slice(&buf[head_end + 4..head_end + 4 + len]);
                    let Ok(mut up) = TcpStream::connect(backend).await else {
                        return;
                    };
                    if up.write_all(&req).await.is_err() {
                        return;
                    }
                    let mut resp = Vec::new();
                    let _ = up.read_to_end(&mut resp).await;
                    let _ = client.write_all(&resp).await;
                    let _ = client.shutdown().await;
                });
            }
        });
        StripHeader { addr, task }
    }
}

impl Drop for StripHeader {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `vantage check … -f json` through a gateway that strips `Mcp-Method`, in front of the
/// fixture with `faults`. `server/discover` is refused (400 -32020), so `discover.shape`
/// fails for real (high): blocked, exit 2, asserted here. The report.
pub(crate) async fn behind_a_gateway_stripping_mcp_method(faults: &[Fault]) -> Value {
    let fixture = Fixture::start(faults).await.unwrap();
    let gateway = StripHeader::start(fixture.addr, "mcp-method").await;
    let url = format!("http://127.0.0.1:{}/mcp", gateway.addr.port());
    let (code, report) = json_check(&[&url], &[]).await;
    let found = shape(&report);
    assert!(
        found
            .iter()
            .any(|f| f.0 == "discover.shape" && f.1 == "high"),
        "{found:?}"
    );
    assert_eq!((code, report["decision"].as_str()), (2, Some("blocked")));
    report
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The TypeScript SDK 1.x example server as the package ships it
/// (`examples/server/simpleStreamableHttp.js --oauth`: its demo authorization server, and a
/// token verifier that checks no audience). Killed, by its own pid, when dropped.
pub(crate) struct TsV1 {
    child: Child,
    port: u16,
    auth_port: u16,
}

impl TsV1 {
    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ts-v1")
    }

    pub fn start() -> Self {
        let dir = Self::dir();
        let script = dir.join("node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js");
        assert!(
            script.is_file(),
            "the TypeScript SDK 1.x peer is not installed; run `bash .ci/install-peers`"
        );
        let (port, auth_port) = (free_port(), free_port());
        let mut child = Command::new("node")
            .current_dir(&dir)
            .arg(&script)
            .arg("--oauth")
            .env("MCP_PORT", port.to_string())
            .env("MCP_AUTH_PORT", auth_port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut ready = 0;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("listening on port") {
                    ready += 1;
                    if ready == 2 {
                        let _ = tx.send(());
                    }
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(20))
            .expect("the SDK 1.x example server did not start within 20 s");
        TsV1 {
            child,
            port,
            auth_port,
        }
    }

    /// The endpoint as the example names it (its protected resource metadata says so).
    pub fn resource(&self) -> String {
        format!("http://localhost:{}/mcp", self.port)
    }

    /// A token from the demo authorization server, issued for `resource`.
    pub fn token(&self, resource: &str) -> String {
        let out = Command::new("node")
            .current_dir(Self::dir())
            .args(["token.mjs", &self.auth_port.to_string(), resource])
            .output()
            .expect("node runs");
        assert!(out.status.success(), "token.mjs: {}", s(&out.stderr));
        s(&out.stdout).trim().to_string()
    }
}

impl Drop for TsV1 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
