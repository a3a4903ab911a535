//! Product against product, in the same run on the same machine: `vantage serve` with N
//! scheduled targets against blackbox_exporter (Debian's `prometheus-blackbox-exporter`, the
//! tool users already run) probing the same N targets at the same rate.
//!
//! - The target counts: nginx in front of the fixture MCP server, one distinct URL per target
//!   (`/t/N/mcp`); every HTTP exchange either daemon makes is a line in nginx's access log.
//! - `vantage serve` runs N `[[checks]]` every interval with its in-process vantage; the
//!   bench scrapes its `/metrics` once per interval, as Prometheus would.
//! - blackbox_exporter is driven as Prometheus drives it: one `/probe?target=…&module=…` per
//!   target per interval, spread over the interval, never overlapping for one target; its own
//!   `/metrics` scraped once per interval. Its module is what a user would write to watch an
//!   MCP endpoint: a valid `server/discover` POST, 200 and `supportedVersions` expected.
//! - The interval is the same for both: N / rate seconds, at least 1 s (rate:
//!   VANTAGE_BENCH_RATE, default 50 targets per second). Each daemon runs alone (one after
//!   the other), warms up for one interval, then is measured over a window of at least two
//!   intervals.
//! - CPU time and peak RSS of each daemon come from the kernel (`/proc/PID/stat` utime+stime,
//!   `VmHWM`), never from this harness's clock.
//!
//! Prints, per N: exchanges, CPU-seconds and peak RSS of each daemon and the ratios; then the
//! verdicts: full Vantage verdicts per CPU-second and the exchanges one verdict costs. Writes
//! `daemon.json` for `.ci/bench-tables`. Asserts nothing.
//!
//! Run: `cargo bench -p vantage-coordinator --bench daemon` (VANTAGE_BENCH_TARGETS=10,50,…,
//! VANTAGE_BENCH_RATE, VANTAGE_BENCH_WINDOW seconds).

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::nginx::Nginx;
use common::{accounting, env_or, smaps, Guard};
use serde::Serialize;
use vantage_agent::probe::http::ProbeRequest;

/// Goals, stated once: here, in the output and (through daemon.json) in BENCHMARKS.md.
const GOAL_EXCHANGES_PER_CPU: f64 = 3.0;
const GOAL_PEAK_RSS: f64 = 1.0;
/// The memory goal holds from this many scheduled targets on.
const GOAL_FROM_TARGETS: usize = 50;

/// One daemon's figures over the measured window.
#[derive(Debug, Default, Clone, Serialize)]
struct Side {
    /// HTTP exchanges the target served in the window (nginx's access log).
    exchanges: u64,
    cpu_s: f64,
    /// vantage: merged runs; blackbox_exporter: `/probe` answers with `probe_success 1`.
    verdicts: u64,
    /// vantage: runs that decided `pass` (every check that applies ran and passed).
    passes: u64,
    /// vantage: scheduled runs skipped because the previous one was still going;
    /// blackbox_exporter: probes that failed or did not answer.
    missed: u64,
    /// Peak RSS over the daemon's life (VmHWM) and RSS at the end, KiB.
    hwm_kib: u64,
    rss_kib: u64,
    memory: smaps::Breakdown,
}

#[derive(Debug, Serialize)]
struct Row {
    targets: usize,
    interval_s: f64,
    window_s: f64,
    vantage: Side,
    blackbox: Side,
    /// Vantage's exchanges per CPU-second over blackbox_exporter's.
    exchanges_per_cpu_ratio: f64,
    /// Vantage's peak RSS over blackbox_exporter's.
    peak_rss_ratio: f64,
    /// The machine's 1-minute load average before and after the row.
    load: [f64; 2],
}

fn per_cpu(s: &Side) -> f64 {
    s.exchanges as f64 / s.cpu_s.max(0.01)
}

async fn scrape(c: &reqwest::Client, url: &str) -> String {
    match c.get(url).timeout(Duration::from_secs(30)).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Scrape `url` once per `interval` until aborted.
fn scraper(c: &reqwest::Client, url: String, interval: Duration) -> tokio::task::JoinHandle<()> {
    let c = c.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(interval);
        loop {
            tick.tick().await;
            let _ = scrape(&c, &url).await;
        }
    })
}

/// What one row puts on each daemon: `n` targets (distinct URLs on `target`), each every
/// `interval`, measured over `window`; the daemon's files go in `dir`.
#[derive(Clone, Copy)]
struct Load<'a> {
    n: usize,
    interval: Duration,
    window: Duration,
    target: &'a Nginx,
    dir: &'a Path,
}

/// The daemon `pid`'s CPU time and the target's exchanges over the load's window, then its
/// memory; the caller fills in what it counts as verdicts.
async fn measure(pid: u32, load: Load<'_>) -> Side {
    let (cpu0, _, _) = accounting(pid);
    let ex0 = load.target.exchanges();
    tokio::time::sleep(load.window).await;
    let (cpu1, hwm, rss) = accounting(pid);
    let ex1 = load.target.exchanges();
    Side {
        exchanges: ex1.saturating_sub(ex0),
        cpu_s: cpu1 - cpu0,
        hwm_kib: hwm,
        rss_kib: rss,
        memory: smaps::breakdown(pid),
        ..Side::default()
    }
}

async fn vantage(load: Load<'_>) -> Side {
    let mut config = common::SERVE_LOOPBACK.to_string();
    for i in 0..load.n {
        config.push_str(&format!(
            "[[checks]]\ntarget = \"{}\"\ninterval = \"{}ms\"\n",
            load.target.url(i),
            load.interval.as_millis()
        ));
    }
    let (child, api, _) = common::serve(env!("CARGO_BIN_EXE_vantage"), &config, &[], load.dir);
    let pid = child.id();
    let _guard = Guard(vec![child]);
    let c = common::client();
    let metrics = format!("{api}/metrics");
    let prometheus = scraper(&c, metrics.clone(), load.interval);
    // Every target has started (its first run falls within the first interval).
    tokio::time::sleep(load.interval + Duration::from_secs(1)).await;
    let before = scrape(&c, &metrics).await;
    let measured = measure(pid, load).await;
    let after = scrape(&c, &metrics).await;
    prometheus.abort();
    let delta = |family: &str, filter: &str| {
        (common::metric_sum(&after, family, filter) - common::metric_sum(&before, family, filter))
            .max(0.0) as u64
    };
    Side {
        verdicts: delta("vantage_runs_total", ""),
        passes: delta("vantage_runs_total", "decision=\"pass\""),
        missed: delta("vantage_scheduled_runs_skipped_total", ""),
        ..measured
    }
}

/// The blackbox_exporter module a user would write for an MCP endpoint: a valid
/// `server/discover` (the same request Vantage's discovery sends), 200 and
/// `supportedVersions` expected, no redirects followed.
fn blackbox_config() -> String {
    let req = ProbeRequest::modern("server/discover", 1, Default::default());
    let body = serde_json::to_string(&req.body).expect("body");
    let mut s = "modules:\n  mcp_discover:\n    prober: http\n    timeout: 5s\n    http:\n      method: POST\n      headers:\n".to_string();
    for (k, v) in &req.headers {
        s.push_str(&format!(
            "        {k}: {}\n",
            serde_json::to_string(v).expect("header")
        ));
    }
    s.push_str(&format!(
        "      body: {}\n",
        serde_json::to_string(&body).expect("body")
    ));
    s.push_str("      no_follow_redirects: true\n      valid_status_codes: [200]\n      fail_if_body_not_matches_regexp: [\"supportedVersions\"]\n      preferred_ip_protocol: ip4\n      ip_protocol_fallback: false\n");
    s
}

async fn blackbox(bin: &str, load: Load<'_>) -> Side {
    std::fs::write(load.dir.join("blackbox.yml"), blackbox_config()).expect("blackbox config");
    let port = common::free_port();
    let child = std::process::Command::new(bin)
        .arg(format!(
            "--config.file={}",
            load.dir.join("blackbox.yml").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("blackbox_exporter");
    let pid = child.id();
    let _guard = Guard(vec![child]);
    let c = common::client();
    let metrics = format!("http://127.0.0.1:{port}/metrics");
    let started = std::time::Instant::now();
    while scrape(&c, &metrics).await.is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "blackbox_exporter did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ok = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let mut tasks = vec![scraper(&c, metrics, load.interval)];
    for i in 0..load.n {
        let (c, ok, failed) = (c.clone(), ok.clone(), failed.clone());
        let url = format!(
            "http://127.0.0.1:{port}/probe?module=mcp_discover&target={}",
            load.target.url(i)
        );
        // Prometheus spreads its targets over the interval and never overlaps one target's
        // scrapes.
        let (interval, offset) = (
            load.interval,
            load.interval.mul_f64(i as f64 / load.n as f64),
        );
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(offset).await;
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let answer = c.get(&url).timeout(Duration::from_secs(10)).send().await;
                let success = match answer {
                    Ok(r) => r.text().await.is_ok_and(|t| t.contains("probe_success 1")),
                    Err(_) => false,
                };
                if success { &ok } else { &failed }.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    tokio::time::sleep(load.interval + Duration::from_secs(1)).await;
    let (ok0, failed0) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    let measured = measure(pid, load).await;
    let (ok1, failed1) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    for t in tasks {
        t.abort();
    }
    Side {
        verdicts: ok1 - ok0,
        passes: ok1 - ok0,
        missed: failed1 - failed0,
        ..measured
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let Some(bb) = common::blackbox_bin() else {
        eprintln!("daemon: blackbox_exporter is not installed (apt-get install prometheus-blackbox-exporter); nothing to compare");
        std::process::exit(2);
    };
    let rate = env_or("VANTAGE_BENCH_RATE", 50).max(1) as usize;
    let min_window = Duration::from_secs(env_or("VANTAGE_BENCH_WINDOW", 10));
    let sizes: Vec<usize> = std::env::var("VANTAGE_BENCH_TARGETS")
        .unwrap_or_else(|_| "10,50,100,1000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let dir = std::env::temp_dir().join(format!("vantage-daemon-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (fixture, fixture_url) = common::fixture(env!("CARGO_BIN_EXE_vantage"));
    let _fixture = Guard(vec![fixture]);
    let upstream = fixture_url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let target = match Nginx::start(&upstream) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("daemon: {e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!("bench daemon: vantage serve against blackbox_exporter, N targets (distinct URLs on nginx in front of the fixture), every N/{rate} s (at least 1 s), each daemon alone");
    let mut rows = Vec::new();
    for &n in &sizes {
        let interval = Duration::from_millis(((n * 1000) / rate).max(1000) as u64);
        let window = min_window.max(interval * 2);
        let load0 = common::loadavg();
        let load = Load {
            n,
            interval,
            window,
            target: &target,
            dir: &dir,
        };
        let (v, b) = rt.block_on(async {
            let v = vantage(load).await;
            let b = blackbox(bb, load).await;
            (v, b)
        });
        let row = Row {
            targets: n,
            interval_s: interval.as_secs_f64(),
            window_s: window.as_secs_f64(),
            exchanges_per_cpu_ratio: per_cpu(&v) / per_cpu(&b).max(f64::MIN_POSITIVE),
            peak_rss_ratio: v.hwm_kib as f64 / b.hwm_kib.max(1) as f64,
            vantage: v,
            blackbox: b,
            load: [load0, common::loadavg()],
        };
        print_row(&row);
        rows.push(row);
    }
    println!("bench verdicts (the same runs): what one Vantage verdict costs");
    for r in &rows {
        let v = &r.vantage;
        println!(
            "  {:>5} targets: {:>6.0} full verdicts per CPU-second ({} runs, {} pass), {:.1} exchanges per verdict; blackbox_exporter: {:>6.0} probes (one exchange each) per CPU-second",
            r.targets,
            v.verdicts as f64 / v.cpu_s.max(0.01),
            v.verdicts,
            v.passes,
            v.exchanges as f64 / v.verdicts.max(1) as f64,
            r.blackbox.verdicts as f64 / r.blackbox.cpu_s.max(0.01),
        );
    }
    common::write_results(
        "daemon",
        &serde_json::json!({
            "rate_per_s": rate,
            "goals": {
                "exchanges_per_cpu_ratio_at_least": GOAL_EXCHANGES_PER_CPU,
                "peak_rss_ratio_at_most": GOAL_PEAK_RSS,
                "peak_rss_goal_from_targets": GOAL_FROM_TARGETS,
            },
            "blackbox_version": common::version(bb, "--version"),
            "nginx_version": common::version("nginx", "-v"),
            "rows": rows,
        }),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn print_row(r: &Row) {
    println!(
        "  {} targets, every {} s, {} s window (load {:.1} -> {:.1})",
        r.targets, r.interval_s, r.window_s, r.load[0], r.load[1]
    );
    for (name, s, what) in [
        ("vantage serve", &r.vantage, "runs, skipped"),
        ("blackbox_exporter", &r.blackbox, "probe_success, failed"),
    ] {
        println!(
            "    {name:<18} {:>7} exchanges {:>6.2} CPU-s {:>7.0} µs CPU/exchange  peak RSS {:>5.1} MiB  ({} {what} {})",
            s.exchanges,
            s.cpu_s,
            s.cpu_s * 1e6 / s.exchanges.max(1) as f64,
            mib(s.hwm_kib),
            s.verdicts,
            s.missed
        );
        println!("      memory at the end: {}", s.memory.line());
    }
    let rss_goal = if r.targets >= GOAL_FROM_TARGETS {
        format!("goal <= {GOAL_PEAK_RSS}x")
    } else {
        format!("goal applies from {GOAL_FROM_TARGETS} targets")
    };
    println!(
        "    ratio: {:.2}x the exchanges per CPU-second (goal >= {GOAL_EXCHANGES_PER_CPU}x); {:.2}x the peak RSS ({rss_goal})",
        r.exchanges_per_cpu_ratio, r.peak_rss_ratio
    );
}
