//! Helpers shared by the benchmarks: the kernel's accounting of a process, percentiles.

#![allow(dead_code)]

/// (CPU seconds used, peak RSS in KiB, current RSS in KiB) of a process, from /proc.
pub fn accounting(pid: u32) -> (f64, u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let f: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = f.get(11).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
            .unwrap_or(0)
    };
    // USER_HZ is 100 on Linux.
    (ticks / 100.0, kib("VmHWM:"), kib("VmRSS:"))
}

/// The `p` percentile (0..=1) of `v`.
pub fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// The median and the 99th percentile of `v`, in milliseconds.
pub fn median_p99_ms(mut v: Vec<std::time::Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    (
        ms(v[v.len() / 2]),
        ms(v[(v.len() * 99 / 100).min(v.len() - 1)]),
    )
}

/// One check of `job` by `engine` against the in-process `fixture`, which must pass: how long
/// it took, how many HTTP exchanges the fixture counted, and the report.
pub async fn timed_check(
    fixture: &vantage_fixture::Fixture,
    engine: &vantage_agent::Engine,
    job: &vantage_agent::Job,
) -> (
    std::time::Duration,
    u64,
    vantage_coordinator::report::Report,
) {
    let before = fixture.requests();
    let t = std::time::Instant::now();
    let report = vantage_coordinator::local::check(engine, job).await;
    let took = t.elapsed();
    let exchanges = fixture.requests() - before;
    assert_eq!(report.decision.as_str(), "pass");
    (took, exchanges, report)
}

/// The multi-threaded runtime a bench runs in.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// An environment variable as a number, or the default.
pub fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Start `vantage fixture` (the binary at `exe`) on loopback; returns the child and its URL.
pub fn fixture(exe: &str) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(exe)
        .args(["fixture", "--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fixture");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("fixture url");
    (
        child,
        line.trim().trim_start_matches("listening ").to_string(),
    )
}

pub mod nginx;
pub mod smaps;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Kills and reaps its processes when dropped (by pid: only the ones this bench started).
pub struct Guard(pub Vec<Child>);

impl Drop for Guard {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A loopback port free right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Start `vantage serve` (the binary at `exe`) with `config` written in `dir`; returns the
/// child and the API and gRPC URLs it printed. The API token is `bench-api-token`.
pub fn serve(
    exe: &str,
    config: &str,
    env: &[(String, String)],
    dir: &Path,
) -> (Child, String, String) {
    std::fs::write(dir.join("c.toml"), config).expect("config");
    let mut cmd = Command::new(exe);
    cmd.args(["serve", "--config"])
        .arg(dir.join("c.toml"))
        .env("T_API", "bench-api-token")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("serve line");
    let urls: Vec<&str> = line
        .split_whitespace()
        .filter(|w| w.starts_with("http://"))
        .collect();
    assert!(urls.len() >= 2, "vantage serve did not start: {line:?}");
    (child, urls[0].to_string(), urls[1].to_string())
}

/// The config head of a coordinator on loopback with the in-process vantage allowed to
/// reach loopback targets.
pub const SERVE_LOOPBACK: &str = "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{ token_env = \"T_API\" }]\n[probe]\nallow_non_global = [\"127.0.0.0/8\"]\n";

/// An HTTP client for the benches' own requests.
pub fn client() -> reqwest::Client {
    let tls = vantage_agent::probe::tls::client_config(None).expect("tls");
    reqwest::Client::builder()
        .use_preconfigured_tls((*tls).clone())
        .no_proxy()
        .build()
        .expect("client")
}

/// The sum of a family's series in a text exposition, over series whose line contains
/// `filter`.
pub fn metric_sum(text: &str, family: &str, filter: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{family}{{")) && l.contains(filter))
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}

/// The machine's 1-minute load average: how busy the machine was around a measurement.
pub fn loadavg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// Write a bench's results as JSON for `.ci/bench-tables` (in `VANTAGE_BENCH_OUT`, default
/// `target/bench`).
pub fn write_results(name: &str, value: &serde_json::Value) {
    let dir = std::env::var_os("VANTAGE_BENCH_OUT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench"));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{name}.json"));
    match serde_json::to_string_pretty(value) {
        Ok(text) => {
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("writing {}: {e}", path.display());
            }
        }
        Err(e) => eprintln!("results of {name}: {e}"),
    }
}

/// The installed blackbox_exporter, if any.
pub fn blackbox_bin() -> Option<&'static str> {
    ["prometheus-blackbox-exporter", "blackbox_exporter"]
        .into_iter()
        .find(|b| {
            Command::new("sh")
                .args(["-c", &format!("command -v {b}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// The first line of `cmd --version` (stdout or stderr).
pub fn version(cmd: &str, arg: &str) -> String {
    Command::new(cmd)
        .arg(arg)
        .output()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).to_string()
                + &String::from_utf8_lossy(&o.stderr);
            text.lines().next().unwrap_or("").trim().to_string()
        })
        .unwrap_or_default()
}
