//! Helpers shared by the end-to-end tests: an in-process check, schema validation, the
//! `vantage` binary, and the fixture's lab (a CA with a TLS front, a small DNS server on
//! loopback: `vantage_fixture::lab`).

#![allow(dead_code)]

use std::process::Output;
use std::sync::LazyLock;

use serde_json::Value;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::Severity;
use vantage_agent::{Engine, ProbeOptions};
use vantage_coordinator::report::Report;

/// What these tests share with the engine's own (`agent/tests/engine.rs`), included by path
/// (the file says why): the test options, the job, the lab's zone, the fault table.
#[path = "../../../agent/tests/shared/probe.rs"]
pub mod shared;
#[path = "../../../agent/tests/shared/faults.rs"]
pub mod shared_faults;

pub use shared::{closed_port, front, lab, named_target, options, resolving_with, trusting};

/// Run one in-process vantage on the job `vantage check` would send ([`shared::job`]) and
/// return the report, validated against the schema.
pub async fn check_with(url: &str, opts: ProbeOptions) -> Report {
    let job = shared::job(url, &opts);
    let engine = Engine::new(opts).expect("engine");
    let report = vantage_coordinator::local::check(&engine, &job).await;
    assert_valid(&serde_json::to_value(&report).expect("report serialises"));
    report
}

pub async fn check(url: &str) -> Report {
    check_with(url, options()).await
}

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/report.v1.json"
    ))
    .expect("the shipped schema exists");
    let schema: Value = serde_json::from_str(&text).expect("the shipped schema is JSON");
    jsonschema::validator_for(&schema).expect("the shipped schema compiles")
});

/// Assert a JSON report validates against the shipped JSON Schema.
pub fn assert_valid(report: &Value) {
    let errors: Vec<String> = VALIDATOR
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report does not match the schema: {errors:#?}"
    );
}

/// (finding id, severity) of every finding above info, sorted by id.
pub fn above_info(report: &Report) -> Vec<(String, Severity)> {
    let mut v: Vec<(String, Severity)> = report
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .map(|f| (f.id.to_string(), f.severity))
        .collect();
    v.sort();
    v
}

pub fn ids(expected: &[(&str, Severity)]) -> Vec<(String, Severity)> {
    let mut v: Vec<(String, Severity)> =
        expected.iter().map(|(i, s)| (i.to_string(), *s)).collect();
    v.sort();
    v
}

/// The outcome of one check in the only region.
pub fn outcome(report: &Report, id: CheckId) -> vantage_agent::model::CheckResult {
    report.regions[0]
        .check(id)
        .unwrap_or_else(|| panic!("{id} missing from the report"))
        .clone()
}

/// An HTTP client for the tests' own calls: no proxy, the web PKI roots.
pub fn http() -> reqwest::Client {
    let tls = vantage_agent::probe::tls::client_config(None).expect("TLS config");
    reqwest::Client::builder()
        .use_preconfigured_tls((*tls).clone())
        .no_proxy()
        .build()
        .expect("client")
}

/// A fresh directory for one test, `<tmp>/vantage-<name>-<pid>`, removed when the guard is
/// dropped: when the test ends, pass or fail (a panic unwinds through it).
pub fn tmpdir(name: &str) -> Scratch {
    Scratch::new(name)
}

/// A fresh directory removed when dropped, so a failing test leaves nothing behind.
pub struct Scratch(std::path::PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("vantage-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        Scratch(d)
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// (region, status) of every region of a JSON report, sorted.
pub fn regions_of(report: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = report["regions"]
        .as_array()
        .expect("regions")
        .iter()
        .map(|r| {
            (
                r["region"].as_str().unwrap_or_default().to_string(),
                r["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Run the `vantage` binary with `args` (blocking; call from spawn_blocking in async tests).
pub fn vantage(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"));
    cmd.args(args)
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("vantage runs")
}

/// [`vantage`], which must refuse (exit 1): its stderr.
pub fn vantage_refused(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = vantage(args, env);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    err
}

/// The `vantage` binary with `args` and extra environment, off the async runtime.
pub async fn vantage_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        vantage(&a, &e)
    })
    .await
    .expect("join")
}

/// `vantage check URL --token-env VT -f json -o -` with `token` in VT: the exit code and
/// the report on stdout.
pub async fn check_json_with_token(url: &str, token: &str) -> (Option<i32>, Value) {
    let out = vantage_env(
        &["check", url, "--token-env", "VT", "-f", "json", "-o", "-"],
        &[("VT", token)],
    )
    .await;
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

/// The only region's check `id` in a JSON report: (outcome, severity, observed).
pub fn only_region_check(report: &Value, id: &str) -> (String, Value, String) {
    let c = report["regions"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} missing"));
    (
        c["outcome"].as_str().unwrap().to_string(),
        c["severity"].clone(),
        c["observed"].as_str().unwrap_or_default().to_string(),
    )
}

pub async fn vantage_async(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        vantage(&refs, &[])
    })
    .await
    .expect("join")
}

pub use vantage_fixture::lab::{answer, DnsMode, LabCa, LabDns, TlsFront};

/// The state of a front before a fixture: where it passes requests on, in which mode.
pub struct Front<M> {
    pub upstream: String,
    pub mode: M,
    pub client: reqwest::Client,
}

/// Serve `handler` on loopback as a front before `fixture`, in `mode`.
pub async fn front_before<M, H, T>(
    fixture: &vantage_fixture::Fixture,
    mode: M,
    handler: H,
) -> Served
where
    M: Send + Sync + 'static,
    H: axum::handler::Handler<T, std::sync::Arc<Front<M>>>,
    T: 'static,
{
    let upstream = format!("http://{}", fixture.addr);
    Served::start(move |_| {
        let front = std::sync::Arc::new(Front {
            upstream,
            mode,
            client: http(),
        });
        axum::Router::new().fallback(handler).with_state(front)
    })
    .await
}

/// A router served on a loopback port until dropped (the serving task is aborted then).
pub struct Served {
    pub addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Served {
    /// Bind a loopback port and serve the router `app(its own address)` on it.
    pub async fn start(app: impl FnOnce(std::net::SocketAddr) -> axum::Router) -> Served {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let app = app(addr);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Served { addr, task }
    }

    /// A serving task already spawned on `addr`, aborted when this is dropped.
    pub fn spawned(addr: std::net::SocketAddr, task: tokio::task::JoinHandle<()>) -> Served {
        Served { addr, task }
    }

    /// Its MCP endpoint, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Headers a front sets itself (length, framing): never copied through.
pub fn hop(name: &str) -> bool {
    matches!(name, "content-length" | "connection" | "transfer-encoding")
}

/// Pass the request a front received on to `upstream` (its method, path, headers but `Host`
/// and framing, and body); `None` when the upstream did not answer.
pub async fn pass_on(
    client: &reqwest::Client,
    upstream: &str,
    r: Received,
) -> Option<reqwest::Response> {
    let path = r.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let mut req = client.request(r.method, format!("{upstream}{path}"));
    for (k, v) in &r.headers {
        if k != "host" && !hop(k.as_str()) {
            req = req.header(k, v);
        }
    }
    req.body(r.body).send().await.ok()
}

/// The upstream's status and headers (framing aside), each value through `rewrite`.
pub fn head_of(
    resp: &reqwest::Response,
    rewrite: impl Fn(&str) -> String,
) -> axum::http::response::Builder {
    let mut out = axum::http::Response::builder().status(resp.status());
    for (k, v) in resp.headers() {
        if !hop(k.as_str()) {
            out = out.header(k, rewrite(v.to_str().unwrap_or("")));
        }
    }
    out
}

/// The upstream's body, streamed through as it arrives (a stream that stays open stays open).
pub fn streamed(resp: reqwest::Response) -> axum::body::Body {
    let stream = futures::stream::unfold(Some(resp), |state| async move {
        let mut r = state?;
        match r.chunk().await {
            Ok(Some(c)) => Some((Ok::<axum::body::Bytes, std::io::Error>(c), Some(r))),
            _ => None,
        }
    });
    axum::body::Body::from_stream(stream)
}

/// A front's forwarding step: `r` passed on to `upstream` (599 when it does not answer), the
/// answer's head with `upstream` named `me`, a `text/event-stream` streamed through as it
/// arrives, any other body read whole with `upstream` named `me` and then through `edit`.
pub async fn forward(
    client: &reqwest::Client,
    upstream: &str,
    me: &str,
    r: Received,
    edit: impl FnOnce(String) -> String,
) -> axum::response::Response {
    let Some(resp) = pass_on(client, upstream, r).await else {
        return axum::http::Response::builder()
            .status(599)
            .body(axum::body::Body::empty())
            .unwrap();
    };
    let out = head_of(&resp, |v| v.replace(upstream, me));
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|c| c.to_str().unwrap_or("").starts_with("text/event-stream"));
    if sse {
        return out.body(streamed(resp)).unwrap();
    }
    let text =
        String::from_utf8_lossy(&resp.bytes().await.unwrap_or_default()).replace(upstream, me);
    out.body(axum::body::Body::from(edit(text))).unwrap()
}

/// What a front received, as one extractor: its handler reads the request whole.
pub struct Received {
    pub method: axum::http::Method,
    pub uri: axum::http::Uri,
    pub headers: axum::http::HeaderMap,
    pub body: axum::body::Bytes,
}

impl<S: Send + Sync> axum::extract::FromRequest<S> for Received {
    type Rejection = axum::http::StatusCode;

    async fn from_request(req: axum::extract::Request, _: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX)
            .await
            .map_err(|_| axum::http::StatusCode::BAD_REQUEST)?;
        Ok(Received {
            method: parts.method,
            uri: parts.uri,
            headers: parts.headers,
            body,
        })
    }
}
