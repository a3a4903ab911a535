//! Helpers shared by the end-to-end tests: an in-process check, schema validation, a lab
//! CA with a TLS front, a small DNS server on loopback, and the `vantage` binary.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::process::Output;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::Value;
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::task::JoinHandle;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::Severity;
use vantage_agent::{Engine, Job, Policy, ProbeOptions, Target};
use vantage_coordinator::report::Report;

/// Options for tests: short per-exchange timeouts so hostile cases end quickly.
pub fn options() -> ProbeOptions {
    ProbeOptions {
        check_timeout: Duration::from_millis(1500),
        deadline: Duration::from_secs(10),
        ..ProbeOptions::default()
    }
}

/// Run one in-process vantage and return the report, validated against the schema. The
/// job-level fields of `opts` (deadline, policy, credentials) travel as the job, the way
/// `vantage check` sends them.
pub async fn check_with(url: &str, opts: ProbeOptions) -> Report {
    let job = Job {
        target: Target::parse(url).expect("target"),
        deadline: opts.deadline,
        expect_auth: opts.expect_auth,
        policy: Policy {
            assume_global: opts.assume_global.clone(),
            allow_non_global: opts.allow_non_global.clone(),
        },
        credentials: opts.credentials.clone(),
    };
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

/// A fresh directory for one test: `<tmp>/vantage-<name>-<pid>`.
pub fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("vantage-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A fresh directory removed when dropped, so a failing test leaves nothing behind.
pub struct Scratch(std::path::PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        Scratch(tmpdir(name))
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

pub async fn vantage_async(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        vantage(&refs, &[])
    })
    .await
    .expect("join")
}

/// A lab certificate authority and leaf certificates signed by it.
pub struct LabCa {
    pub ca_pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl LabCa {
    pub fn new() -> Self {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "Vantage Lab CA");
        let cert = params.self_signed(&key).expect("ca");
        LabCa {
            ca_pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// A leaf for `names`, valid from yesterday for `days` days.
    pub fn leaf(&self, names: &[&str], days: i64) -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params =
            rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .expect("params");
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::days(1);
        params.not_after = now + time::Duration::days(days);
        let cert = params.signed_by(&key, &self.issuer).expect("leaf");
        (cert.pem(), key.serialize_pem())
    }
}

/// A TLS front on loopback that forwards the decrypted stream to `backend`.
pub struct TlsFront {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl TlsFront {
    pub async fn start(backend: SocketAddr, cert_pem: &str, key_pem: &str) -> Self {
        let certs = rustls_pemfile_certs(cert_pem);
        let key = rustls::pki_types::PrivateKeyDer::try_from(
            rustls::pki_types::pem::PemObject::from_pem_slice(key_pem.as_bytes())
                .map(|k: rustls::pki_types::PrivatePkcs8KeyDer<'static>| {
                    k.secret_pkcs8_der().to_vec()
                })
                .expect("key pem"),
        )
        .expect("key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut up) = TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                });
            }
        });
        TlsFront { addr, task }
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn rustls_pemfile_certs(pem: &str) -> Vec<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<_, _>>()
        .expect("certs")
}

/// A small authoritative DNS server on loopback: names map to addresses; unknown names get
/// NXDOMAIN. Its [`DnsMode`] can make it a faulty resolver instead.
pub struct LabDns {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

/// How the lab DNS server behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DnsMode {
    /// Answer every query from the table.
    Answer,
    /// Never answer an A query (UDP or TCP); answer the others (a resolver whose A lookups
    /// time out while AAAA works).
    DropA,
    /// Never answer anything, on UDP or TCP (a resolver that is down behind a firewall).
    Blackhole,
}

fn dropped(mode: DnsMode, query: &[u8]) -> bool {
    use hickory_proto::op::Message;
    use hickory_proto::rr::RecordType;
    match mode {
        DnsMode::Answer => false,
        DnsMode::Blackhole => true,
        DnsMode::DropA => Message::from_vec(query)
            .ok()
            .and_then(|m| m.queries().first().map(|q| q.query_type() == RecordType::A))
            .unwrap_or(false),
    }
}

impl LabDns {
    /// Answer each name with its addresses; unknown names get NXDOMAIN. Over UDP an answer
    /// larger than 512 bytes (or the client's EDNS size) is truncated (TC), so the client
    /// retries over TCP, which is served on the same port.
    pub async fn start(zone: &[(&str, &[&str])]) -> Self {
        let table: BTreeMap<String, Vec<IpAddr>> = zone
            .iter()
            .map(|(n, addrs)| {
                (
                    format!("{}.", n.trim_end_matches('.')),
                    addrs.iter().map(|a| a.parse().expect("ip")).collect(),
                )
            })
            .collect();
        Self::start_table(table).await
    }

    pub async fn start_table(table: BTreeMap<String, Vec<IpAddr>>) -> Self {
        Self::start_mode(table, DnsMode::Answer).await
    }

    /// Like [`LabDns::start`], behaving as `mode` says.
    pub async fn start_with(zone: &[(&str, &[&str])], mode: DnsMode) -> Self {
        let table = zone
            .iter()
            .map(|(n, addrs)| {
                (
                    format!("{}.", n.trim_end_matches('.')),
                    addrs.iter().map(|a| a.parse().expect("ip")).collect(),
                )
            })
            .collect();
        Self::start_mode(table, mode).await
    }

    pub async fn start_mode(table: BTreeMap<String, Vec<IpAddr>>, mode: DnsMode) -> Self {
        // UDP and TCP on the same port: the UDP port the kernel picks may be taken for TCP
        // by another test's socket, so pick again until both are free.
        let mut tries = 0;
        let (socket, tcp, addr) = loop {
            let socket = UdpSocket::bind(("127.0.0.1", 0)).await.expect("bind udp");
            let addr = socket.local_addr().expect("addr");
            match TcpListener::bind(addr).await {
                Ok(tcp) => break (socket, tcp, addr),
                Err(e) => {
                    tries += 1;
                    assert!(tries < 50, "no port free for both UDP and TCP: {e}");
                }
            }
        };
        let table = Arc::new(table);
        let t2 = table.clone();
        let task = tokio::spawn(async move {
            let tcp_task = tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                while let Ok((mut s, _)) = tcp.accept().await {
                    let table = t2.clone();
                    tokio::spawn(async move {
                        let mut len = [0u8; 2];
                        while s.read_exact(&mut len).await.is_ok() {
                            let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
                            if s.read_exact(&mut buf).await.is_err() {
                                return;
                            }
                            if dropped(mode, &buf) {
                                // Hold the connection open and never answer.
                                continue;
                            }
                            let Some(bytes) = answer(&table, &buf, usize::MAX) else {
                                return;
                            };
                            let _ = s.write_all(&(bytes.len() as u16).to_be_bytes()).await;
                            let _ = s.write_all(&bytes).await;
                        }
                    });
                }
            });
            let mut buf = vec![0u8; 4096];
            while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
                if dropped(mode, &buf[..n]) {
                    continue;
                }
                if let Some(bytes) = answer(&table, &buf[..n], 4096) {
                    let _ = socket.send_to(&bytes, peer).await;
                }
            }
            tcp_task.abort();
        });
        LabDns { addr, task }
    }
}

/// Build the answer to one query; over UDP (`limit`) an oversized answer is truncated.
pub fn answer(
    table: &BTreeMap<String, Vec<IpAddr>>,
    query: &[u8],
    limit: usize,
) -> Option<Vec<u8>> {
    use hickory_proto::op::{Message, MessageType, ResponseCode};
    use hickory_proto::rr::{rdata, RData, Record, RecordType};
    let req = Message::from_vec(query).ok()?;
    let mut resp = Message::new();
    resp.set_id(req.id())
        .set_message_type(MessageType::Response)
        .set_op_code(req.op_code())
        .set_recursion_desired(req.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true);
    resp.add_queries(req.queries().to_vec());
    if let Some(q) = req.queries().first() {
        match table.get(&q.name().to_ascii().to_ascii_lowercase()) {
            None => {
                resp.set_response_code(ResponseCode::NXDomain);
            }
            Some(addrs) => {
                for ip in addrs {
                    let rdata = match (ip, q.query_type()) {
                        (IpAddr::V4(v4), RecordType::A) => RData::A(rdata::A(*v4)),
                        (IpAddr::V6(v6), RecordType::AAAA) => RData::AAAA(rdata::AAAA(*v6)),
                        _ => continue,
                    };
                    resp.add_answer(Record::from_rdata(q.name().clone(), 60, rdata));
                }
            }
        }
    }
    // Over UDP the client's EDNS size (at least 512) bounds the answer; over TCP nothing does.
    let limit = if limit == usize::MAX {
        limit
    } else {
        req.extensions()
            .as_ref()
            .map(|e| usize::from(e.max_payload()).max(512))
            .unwrap_or(512)
            .min(limit)
    };
    let bytes = resp.to_vec().ok()?;
    if bytes.len() <= limit {
        return Some(bytes);
    }
    let mut truncated = Message::new();
    truncated
        .set_id(req.id())
        .set_message_type(MessageType::Response)
        .set_op_code(req.op_code())
        .set_truncated(true)
        .set_recursion_available(true);
    truncated.add_queries(req.queries().to_vec());
    truncated.to_vec().ok()
}

impl Drop for LabDns {
    fn drop(&mut self) {
        self.task.abort();
    }
}
