//! Where the memory of `vantage serve` goes, from the kernel's accounting of the process
//! (`/proc/PID/status`, `/proc/PID/smaps`), never from an allocator's own counters:
//!
//! 1. fixed cost: an idle coordinator (no scheduled target), by kind of mapping: the binary's
//!    pages, libraries, malloc's heaps (main and per-thread arenas), thread stacks, the rest;
//! 2. per scheduled target: RSS with 10 and with 1,000 targets on the same interval, after
//!    every target ran once, and what a Prometheus scrape of 1,000 targets adds at its peak;
//!    and the same with 8 runtime worker threads instead of the default 2 (stacks, arenas),
//!    and with glibc's malloc bounded to one arena (MALLOC_ARENA_MAX=1);
//! 3. the report store: RSS growth per stored on-demand report (scheduled runs are not stored);
//! 4. the TLS client configuration (web PKI roots): memory and CPU of building one, which the
//!    in-process vantage now does once per process instead of once per run.
//!
//! Writes `memory.json` for `.ci/bench-tables`. Asserts nothing.
//!
//! Run: `cargo bench -p vantage-coordinator --bench memory`.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{accounting, smaps, Guard};

const EXE: &str = env!("CARGO_BIN_EXE_vantage");

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

async fn get(c: &reqwest::Client, url: &str) -> String {
    match c.get(url).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// An idle coordinator: what it costs before it does anything.
async fn fixed(dir: &Path) -> serde_json::Value {
    let (child, api, _) = common::serve(EXE, common::SERVE_LOOPBACK, &[], dir);
    let pid = child.id();
    let _guard = Guard(vec![child]);
    let c = common::client();
    let _ = get(&c, &format!("{api}/metrics")).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let b = smaps::breakdown(pid);
    println!("  idle, no scheduled target: {}", b.line());
    serde_json::json!(b)
}

/// `n` scheduled targets every `interval` (distinct URLs on the fixture), `vantage serve`
/// started with `env` on top of the bench's: TOKIO_WORKER_THREADS sets the runtime's worker
/// threads (by default one per core, at most 2); MALLOC_ARENA_MAX bounds glibc's malloc
/// arenas (by default one per thread that allocates, up to 8 per core).
async fn scheduled(
    n: usize,
    interval: Duration,
    env: &[(&str, &str)],
    fixture: &str,
    dir: &Path,
) -> serde_json::Value {
    let mut config = common::SERVE_LOOPBACK.to_string();
    for i in 0..n {
        config.push_str(&format!(
            "[[checks]]\ntarget = \"{fixture}?t={i}\"\ninterval = \"{}ms\"\n",
            interval.as_millis()
        ));
    }
    let workers: Option<usize> = env
        .iter()
        .find(|(k, _)| *k == "TOKIO_WORKER_THREADS")
        .and_then(|(_, v)| v.parse().ok());
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (child, api, _) = common::serve(EXE, &config, &env, dir);
    let pid = child.id();
    let _guard = Guard(vec![child]);
    let c = common::client();
    tokio::time::sleep(interval + Duration::from_secs(2)).await;
    let (_, hwm_before, rss) = accounting(pid);
    let at_rest = smaps::breakdown(pid);
    let mut bytes = 0;
    for _ in 0..3 {
        bytes = get(&c, &format!("{api}/metrics")).await.len();
    }
    let (_, hwm_after, _) = accounting(pid);
    let threads = if env.is_empty() {
        "defaults".to_string()
    } else {
        env.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "  {n:>5} targets every {} s ({threads}), after every target ran once: RSS {:.1} MiB; 3 scrapes of {} KiB each raised the peak by {:.1} MiB",
        interval.as_secs(),
        mib(rss),
        bytes / 1024,
        mib(hwm_after.saturating_sub(hwm_before))
    );
    println!("        {}", at_rest.line());
    serde_json::json!({
        "targets": n,
        "workers": workers,
        "env": env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "rss_kib": rss,
        "hwm_before_scrape_kib": hwm_before,
        "hwm_after_scrape_kib": hwm_after,
        "exposition_bytes": bytes,
        "memory": at_rest,
    })
}

/// RSS growth per stored on-demand report.
async fn store(reports: usize, fixture: &str, dir: &Path) -> serde_json::Value {
    let warm = 20;
    let config = common::SERVE_LOOPBACK.replace(
        "[probe]",
        &format!(
            "checks_per_target_per_minute = 1000000\n[store]\nmax_reports = {}\n[probe]",
            reports + warm + 1
        ),
    );
    let (child, api, _) = common::serve(EXE, &config, &[], dir);
    let pid = child.id();
    let _guard = Guard(vec![child]);
    let c = common::client();
    let check = || async {
        let r = c
            .post(format!("{api}/v1/checks?wait=30s"))
            .bearer_auth("bench-api-token")
            .body(serde_json::json!({ "target": fixture }).to_string())
            .send()
            .await;
        matches!(r, Ok(r) if r.status() == 200)
    };
    for _ in 0..warm {
        check().await;
    }
    let (_, _, rss0) = accounting(pid);
    let mut stored = 0;
    for _ in 0..reports {
        stored += usize::from(check().await);
    }
    let (_, _, rss1) = accounting(pid);
    let per = rss1.saturating_sub(rss0) as f64 / stored.max(1) as f64;
    println!(
        "  report store: {stored} on-demand reports kept grew RSS by {:.1} MiB: {per:.1} KiB per report ({:.1} MiB at the default max_reports = 1000)",
        mib(rss1.saturating_sub(rss0)),
        per * 1000.0 / 1024.0
    );
    serde_json::json!({ "reports": stored, "rss_growth_kib": rss1.saturating_sub(rss0), "per_report_kib": per })
}

/// In a process of its own: memory and CPU of building TLS client configurations.
fn tls_worker() {
    let (cpu0, _, rss0) = accounting(std::process::id());
    let kept: Vec<_> = (0..300)
        .map(|_| vantage_agent::probe::tls::client_config(None).expect("tls"))
        .collect();
    let (_, _, rss1) = accounting(std::process::id());
    let builds = 100_000;
    for _ in 0..builds {
        drop(vantage_agent::probe::tls::client_config(None).expect("tls"));
    }
    let (cpu1, _, _) = accounting(std::process::id());
    let per_kib = rss1.saturating_sub(rss0) as f64 / kept.len() as f64;
    let us = (cpu1 - cpu0) * 1e6 / (builds + kept.len()) as f64;
    println!("{per_kib} {us}");
}

fn tls() -> serde_json::Value {
    let me = std::env::current_exe().expect("exe");
    let out = std::process::Command::new(me)
        .arg("--tls-worker")
        .output()
        .expect("worker");
    let v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let (kib, us) = (
        v.first().copied().unwrap_or(f64::NAN),
        v.get(1).copied().unwrap_or(f64::NAN),
    );
    println!("  TLS client configuration (web PKI roots): {kib:.1} KiB and {us:.0} µs of CPU per build; built once per process now (it was built for every run)");
    serde_json::json!({ "per_config_kib": kib, "cpu_us_per_build": us })
}

fn main() {
    if std::env::args().any(|a| a == "--tls-worker") {
        tls_worker();
        return;
    }
    let dir = std::env::temp_dir().join(format!("vantage-memory-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (fixture, url) = common::fixture(EXE);
    let _fixture = Guard(vec![fixture]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!("bench memory: where the memory of vantage serve goes (kernel accounting: /proc/PID/status, /proc/PID/smaps)");
    let interval = Duration::from_secs(20);
    let (fixed, small, large, threads, one_arena, store) = rt.block_on(async {
        let fixed = fixed(&dir).await;
        let small = scheduled(10, interval, &[], &url, &dir).await;
        let large = scheduled(1000, interval, &[], &url, &dir).await;
        let threads = scheduled(1000, interval, &[("TOKIO_WORKER_THREADS", "8")], &url, &dir).await;
        // What bounding glibc's arenas would save (the coordinator cannot call mallopt: the
        // workspace forbids unsafe code; the environment variable does the same).
        let one_arena = scheduled(1000, interval, &[("MALLOC_ARENA_MAX", "1")], &url, &dir).await;
        let store = store(300, &url, &dir).await;
        (fixed, small, large, threads, one_arena, store)
    });
    let per_target = (large["rss_kib"].as_f64().unwrap_or(0.0)
        - small["rss_kib"].as_f64().unwrap_or(0.0))
        / 990.0;
    println!(
        "  per scheduled target: {per_target:.2} KiB (RSS at 1,000 targets minus at 10, over 990)"
    );
    let tls = tls();
    common::write_results(
        "memory",
        &serde_json::json!({
            "fixed": fixed,
            "scheduled": [small, large],
            "eight_workers": threads,
            "one_arena": one_arena,
            "per_target_kib": per_target,
            "store": store,
            "tls": tls,
        }),
    );
    let _ = std::fs::remove_dir_all(&dir);
}
