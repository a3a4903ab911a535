//! Real official MCP servers as controls against false positives. `.ci/run` installs them
//! from the registries (`npm ci` in tests/peers/ts-v2, a venv in tests/peers/python/.venv).
//! Each expected finding is justified by the spec rule and the server's observed behaviour.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Era, Outcome, Severity};
use vantage_coordinator::report::Decision;

use crate::support::{above_info, check, ids, outcome};

fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// A peer server process, killed (by its own pid) when dropped.
pub(crate) struct Peer {
    child: Child,
    port: u16,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn ts(mode: &str) -> Peer {
    let dir = peers_dir().join("ts-v2");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server")
            .is_dir(),
        "the TypeScript SDK v2 peer is not installed; run `bash .ci/install-peers`"
    );
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.current_dir(&dir)
        .args(["server.mjs", &port.to_string(), mode]);
    start(cmd, port, "the TypeScript SDK v2 peer")
}

pub(crate) fn python(mode: Option<&str>) -> Peer {
    let dir = peers_dir().join("python");
    let py = std::env::var("VANTAGE_PEER_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| dir.join(".venv/bin/python"));
    assert!(
        py.exists(),
        "the Python SDK peer is not installed ({}); run `bash .ci/install-peers`",
        py.display()
    );
    let port = free_port();
    let mut cmd = Command::new(py);
    cmd.current_dir(&dir).args(["server.py", &port.to_string()]);
    if let Some(m) = mode {
        cmd.arg(m);
    }
    start(cmd, port, "the Python SDK peer")
}

/// Spawn a peer that listens on `port` and wait for its "listening" line.
fn start(mut cmd: Command, port: u16, what: &str) -> Peer {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("{what} could not start ({e}); run `bash .ci/install-peers` first")
        });
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("listening") {
                let _ = tx.send(());
            }
        }
    });
    let mut peer = Peer { child, port };
    let deadline = Instant::now() + Duration::from_secs(30);
    while rx.recv_timeout(Duration::from_millis(100)).is_err() {
        if let Ok(Some(status)) = peer.child.try_wait() {
            panic!("{what} exited early ({status}); run `bash .ci/install-peers` first");
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not start listening within 30 s"
        );
    }
    peer
}

pub(crate) fn url(peer: &Peer) -> String {
    format!("http://127.0.0.1:{}/mcp", peer.port)
}

/// TypeScript SDK v2, `createMcpHandler` with its default stateless legacy fallback, behind
/// the SDK's own Host and Origin guards. Observed: discover 200 JSON with every required
/// field; initialize 200 SSE (X-Accel-Buffering: no); GET and DELETE 405 with Allow: POST;
/// every header fault 400 -32020; 1999-01-01 400 -32022 {supported, requested}; no _meta
/// 400 -32602; unknown method 404 -32601; foreign Origin 403. Nothing to report.
#[tokio::test]
async fn typescript_sdk_v2_dual_era_is_clean() {
    let peer = ts("dual");
    let report = check(&url(&peer)).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.decision, Decision::Pass);
    assert_eq!(report.era, Era::Dual);
    assert_eq!(
        outcome(&report, CheckId::HeadersNameMismatch).outcome,
        Outcome::Pass
    );
}

/// The same SDK with `legacy: 'reject'`: initialize is refused with -32022 naming
/// 2026-07-28, so the era is modern; everything else as above.
#[tokio::test]
async fn typescript_sdk_v2_modern_only_is_clean() {
    let peer = ts("modern");
    let report = check(&url(&peer)).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.era, Era::Modern);
    assert_eq!(report.decision, Decision::Pass);
}

/// Python SDK (`mcp`), MCPServer over Streamable HTTP with the SDK defaults (sessions on).
/// Observed: dual-era; GET and DELETE without a session are refused on the 2025-11-25 path
/// (which a dual-era server may do); header faults -32020; a request without
/// MCP-Protocol-Version is routed to the legacy path and refused there with -32601, which
/// the spec allows a dual-era server. Nothing to report.
#[tokio::test]
async fn python_sdk_default_is_clean() {
    let peer = python(None);
    let report = check(&url(&peer)).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.era, Era::Dual);
    assert_eq!(report.decision, Decision::Pass);
}

/// Python SDK in stateless mode. Observed: DELETE is answered 405 with a JSON-RPC body but
/// no `Allow` header. RFC 9110 section 15.5.6 says an origin server MUST send Allow with a
/// 405, so `transport.delete` is reported, at low severity (an HTTP rule, no MCP client
/// breaks on it). GET opens the 2025-11-25 stream, which a dual-era server may do: passes.
#[tokio::test]
async fn python_sdk_stateless_lacks_allow_on_405() {
    let peer = python(Some("stateless"));
    let report = check(&url(&peer)).await;
    assert_eq!(
        above_info(&report),
        ids(&[("transport.delete", Severity::Low)]),
        "{:#?}",
        report.findings
    );
    assert!(outcome(&report, CheckId::TransportDelete)
        .observed
        .contains("without an Allow header"));
    assert_eq!(
        outcome(&report, CheckId::TransportGet).outcome,
        Outcome::Pass
    );
    assert_eq!(report.decision, Decision::Pass);
}
