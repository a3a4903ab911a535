//! Real official MCP servers as controls against false positives. `.ci/run` installs them
//! from the registries (`npm ci` in tests/peers/ts-v2, a venv in tests/peers/python/.venv).
//! Each expected finding is justified by the spec rule and the server's observed behaviour.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Era, Outcome, Severity};
use vantage_agent::surface::ListKind;
use vantage_coordinator::report::{Decision, Finding, Report};

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
    ts_with(mode, &[])
}

/// The TypeScript SDK v2 peer with flags (`paged`, `old`; see server.mjs).
pub(crate) fn ts_with(mode: &str, flags: &[&str]) -> Peer {
    let dir = peers_dir().join("ts-v2");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server")
            .is_dir(),
        "the TypeScript SDK v2 peer is not installed; run `bash .ci/install-peers`"
    );
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.current_dir(&dir)
        .args(["server.mjs", &port.to_string(), mode])
        .args(flags);
    start(cmd, port, "the TypeScript SDK v2 peer")
}

/// The legacy-only TypeScript SDK 1.x peer (ts-v1/server-legacy.mjs).
pub(crate) fn ts_v1(flags: &[&str]) -> Peer {
    let dir = peers_dir().join("ts-v1");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the TypeScript SDK 1.x peer is not installed; run `bash .ci/install-peers`"
    );
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.current_dir(&dir)
        .args(["server-legacy.mjs", &port.to_string()])
        .args(flags);
    start(cmd, port, "the TypeScript SDK 1.x peer")
}

pub(crate) fn python(mode: Option<&str>) -> Peer {
    python_with(&mode.into_iter().collect::<Vec<_>>())
}

/// The Python SDK peer with flags (`stateless`, `paged`; see server.py).
pub(crate) fn python_with(flags: &[&str]) -> Peer {
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
    cmd.current_dir(&dir)
        .args(["server.py", &port.to_string()])
        .args(flags);
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

/// What every SDK's default `McpServer`/`MCPServer` does with a tool that takes no argument
/// (`time_now`): its JSON Schema is `{type: object, properties: {}}` with additionalProperties
/// open, so the tool accepts any input; the specification's own example of a tool with no
/// parameters closes it (`additionalProperties: false`, server/tools, Schema Examples). The
/// tool-surface lint reports it at low. Nothing else is reported.
const NO_ARG_TOOL_OPEN: (&str, Severity) = ("tools.input-constrained", Severity::Low);

/// What the SDKs' default `McpServer`/`MCPServer` of the peers list (each in one page):
/// sixteen tools, two resources, a template and two prompts.
const DEFAULT_SERVER_LISTS: &[(ListKind, u32)] = &[
    (ListKind::Tools, 16),
    (ListKind::Resources, 2),
    (ListKind::ResourceTemplates, 1),
    (ListKind::Prompts, 2),
];

/// The findings above info are `expected`, nothing else.
fn reported(report: &Report, expected: &[(&str, Severity)]) {
    assert_eq!(above_info(report), ids(expected), "{:#?}", report.findings);
}

/// Check `id` came out `want`.
fn came_out(report: &Report, id: CheckId, want: Outcome) {
    let c = outcome(report, id);
    assert_eq!(c.outcome, want, "{id}: {}", c.observed);
}

/// What check `id` observed says `needle`.
fn observed_says(report: &Report, id: CheckId, needle: &str) {
    let c = outcome(report, id);
    assert!(c.observed.contains(needle), "{id}: {}", c.observed);
}

/// The finding `id`, whose fix starts by naming the SDK (`sdk`).
fn fix_names_the_sdk<'a>(report: &'a Report, id: FindingId, sdk: &str) -> &'a Finding {
    let f = report
        .finding(id)
        .unwrap_or_else(|| panic!("{id}: {:#?}", report.findings));
    assert!(f.remediation.starts_with(sdk), "{id}: {}", f.remediation);
    f
}

/// The listing ran whole: these lists, these sizes, in this era.
fn listed(report: &Report, era: Era, want: &[(ListKind, u32)]) {
    let surface = report.regions[0].surface.as_ref().expect("the listing ran");
    assert_eq!(surface.era, era);
    for (kind, count) in want {
        let l = surface
            .list(*kind)
            .unwrap_or_else(|| panic!("{kind:?} not listed"));
        assert!(l.complete, "{kind:?}: {:?}", l.stopped);
        assert_eq!(l.count, *count, "{kind:?}");
    }
}

/// TypeScript SDK v2, `createMcpHandler` with its default stateless legacy fallback, behind
/// the SDK's own Host and Origin guards. Observed: discover 200 JSON with every required
/// field; initialize 200 SSE (X-Accel-Buffering: no); GET and DELETE 405 with Allow: POST;
/// every header fault 400 -32020; 1999-01-01 400 -32022 {supported, requested}; no _meta
/// 400 -32602; unknown method 404 -32601; foreign Origin 403. Listing: sixteen tools, two
/// resources, a template and two prompts, each list in one page with ttlMs and cacheScope
/// (McpServer does not paginate: no cursor to follow); subscriptions/listen acknowledges
/// first. Reported: only the no-argument tool (see [`NO_ARG_TOOL_OPEN`]).
#[tokio::test]
async fn typescript_sdk_v2_dual_era_is_clean() {
    let peer = ts("dual");
    let report = check(&url(&peer)).await;
    reported(&report, &[NO_ARG_TOOL_OPEN]);
    assert_eq!(report.decision, Decision::Pass);
    assert_eq!(report.era, Era::Dual);
    listed(&report, Era::Modern, DEFAULT_SERVER_LISTS);
    for id in [
        CheckId::HeadersNameMismatch,
        CheckId::CapsDiscoverMatchesHandlers,
        CheckId::ToolsListShape,
        CheckId::CacheHints,
        CheckId::ListenSse,
        CheckId::ListenAckFirst,
        CheckId::ToolsNoPerConnectionVariance,
    ] {
        came_out(&report, id, Outcome::Pass);
    }
    came_out(&report, CheckId::PaginationCursor, Outcome::Skip);
    assert!(outcome(&report, CheckId::ToolsInputConstrained)
        .observed
        .starts_with("time_now:"));
}

/// The same SDK with `legacy: 'reject'`: initialize is refused with -32022 naming
/// 2026-07-28, so the era is modern; everything else as above.
#[tokio::test]
async fn typescript_sdk_v2_modern_only_is_clean() {
    let peer = ts("modern");
    let report = check(&url(&peer)).await;
    reported(&report, &[NO_ARG_TOOL_OPEN]);
    assert_eq!(report.era, Era::Modern);
    assert_eq!(report.decision, Decision::Pass);
}

/// The SDK v2 with its tools on the low-level Server's paginated `tools/list` handler (five
/// a page): the cursors it issues are followed to the end over four pages and a cursor it
/// never issued gets -32602 from the SDK; nothing to report at all.
#[tokio::test]
async fn typescript_sdk_v2_paginated_is_clean() {
    let peer = ts_with("dual", &["paged"]);
    let report = check(&url(&peer)).await;
    reported(&report, &[]);
    assert_eq!(report.decision, Decision::Pass, "{}", report.reason);
    came_out(&report, CheckId::PaginationCursor, Outcome::Pass);
    observed_says(&report, CheckId::PaginationCursor, "tools/list (4 pages)");
    came_out(&report, CheckId::PaginationInvalidCursor, Outcome::Pass);
    listed(&report, Era::Modern, &[(ListKind::Tools, 16)]);
}

/// Python SDK (`mcp`), MCPServer over Streamable HTTP with the SDK defaults (sessions on).
/// Observed: dual-era; GET and DELETE without a session are refused on the 2025-11-25 path
/// (which a dual-era server may do); header faults -32020; a request without
/// MCP-Protocol-Version is routed to the legacy path and refused there with -32601, which
/// the spec allows a dual-era server. Listing as the TypeScript peer (MCPServer does not
/// paginate either); it advertises resources.subscribe and every listChanged, and
/// subscriptions/listen acknowledges first. Reported: only the no-argument tool.
#[tokio::test]
async fn python_sdk_default_is_clean() {
    let peer = python(None);
    let report = check(&url(&peer)).await;
    reported(&report, &[NO_ARG_TOOL_OPEN]);
    assert_eq!(report.era, Era::Dual);
    assert_eq!(report.decision, Decision::Pass);
    listed(&report, Era::Modern, DEFAULT_SERVER_LISTS);
    came_out(&report, CheckId::ListenAckFirst, Outcome::Pass);
}

/// Python SDK in stateless mode. Observed: DELETE is answered 405 with a JSON-RPC body but
/// no `Allow` header. RFC 9110 section 15.5.6 says an origin server MUST send Allow with a
/// 405, so `transport.delete` is reported, at low severity (an HTTP rule, no MCP client
/// breaks on it); the fix names the Python SDK from its own error string. GET opens the
/// 2025-11-25 stream, which a dual-era server may do: passes. And the no-argument tool.
#[tokio::test]
async fn python_sdk_stateless_lacks_allow_on_405() {
    let peer = python(Some("stateless"));
    let report = check(&url(&peer)).await;
    reported(
        &report,
        &[("transport.delete", Severity::Low), NO_ARG_TOOL_OPEN],
    );
    observed_says(&report, CheckId::TransportDelete, "without an Allow header");
    came_out(&report, CheckId::TransportGet, Outcome::Pass);
    assert_eq!(report.decision, Decision::Pass);
    let f = fix_names_the_sdk(&report, FindingId::TransportDelete, "Python SDK: ");
    assert_eq!(
        f.stack.as_ref().map(|s| s.stack),
        Some(vantage_agent::stack::Stack::PythonSdk)
    );
}

/// The Python SDK's low-level Server with paginated list handlers (five a page): cursors
/// followed over four pages, -32602 for a bogus cursor; it serves no
/// resources/templates/list (no templates: optional). Nothing to report.
#[tokio::test]
async fn python_sdk_paginated_is_clean() {
    let peer = python_with(&["paged"]);
    let report = check(&url(&peer)).await;
    reported(&report, &[]);
    assert_eq!(report.decision, Decision::Pass, "{}", report.reason);
    observed_says(&report, CheckId::PaginationCursor, "tools/list (4 pages)");
    came_out(&report, CheckId::PaginationInvalidCursor, Outcome::Pass);
    observed_says(&report, CheckId::CapsDiscoverMatchesHandlers, "optional");
}

/// The legacy-only TypeScript SDK 1.x (stateful sessions): era.legacy-only, its fix naming
/// the SDK from its own "Server not initialized". Listed in a session (initialize,
/// notifications/initialized, the lists with Mcp-Session-Id, DELETE), tools again in a
/// second session; the 2026-only rules skipped. With the low-level paginated handler the
/// cursors work in the session too. Its zod schemas leave additionalProperties open: an
/// observation (info) only.
#[tokio::test]
async fn typescript_sdk_v1_legacy_only_is_listed_in_sessions() {
    for flags in [&[][..], &["paged"][..]] {
        let peer = ts_v1(flags);
        let report = check(&url(&peer)).await;
        assert_eq!(
            above_info(&report),
            ids(&[("era.legacy-only", Severity::Medium)]),
            "{flags:?}: {:#?}",
            report.findings
        );
        assert_eq!(report.era, Era::Legacy);
        // Every listing rule had its evidence: nothing unknown, so the medium finding decides.
        assert_eq!(report.decision, Decision::Review, "{}", report.reason);
        let f = fix_names_the_sdk(&report, FindingId::EraLegacyOnly, "TypeScript SDK: ");
        assert!(f
            .stack
            .as_ref()
            .unwrap()
            .evidence
            .contains("Server not initialized"));
        listed(
            &report,
            Era::Legacy,
            &[(ListKind::Tools, 12), (ListKind::Prompts, 1)],
        );
        assert_eq!(
            outcome(&report, CheckId::ToolsNoPerConnectionVariance).observed,
            "the same 12 tools over a second session"
        );
        came_out(&report, CheckId::CacheHints, Outcome::Skip);
        if flags.is_empty() {
            came_out(&report, CheckId::PaginationCursor, Outcome::Skip);
        } else {
            observed_says(&report, CheckId::PaginationCursor, "tools/list (3 pages)");
        }
    }
}
