//! Fleet benchmarks, with the real coordinator (`vantage serve`, release build) as its own
//! process so that its CPU and memory come from the kernel's accounting of it alone:
//!
//! 1. Multi-region overhead: on-demand checks through the coordinator with 3 and 10 real
//!    agent processes; wall time at the API caller minus the slowest region's own duration.
//!    Goal: under 20 ms at 10 regions.
//! 2. Fleet scale: 1,000 agents speaking the real gRPC protocol (many per process, answering
//!    every job at once with a canned region result) and 10,000 scheduled checks per minute.
//!    Coordinator CPU, peak memory, memory per connected agent, and the latency of an
//!    on-demand check answered by a fake agent (dispatch, answer, merge), p50 and p99.
//!    Goal: one core, 512 MiB, p99 under 5 ms.
//!
//! Run: `cargo bench -p vantage-coordinator --bench fleet` (VANTAGE_BENCH_SCALE_AGENTS,
//! VANTAGE_BENCH_SCALE_SECONDS to change the scale run). Asserts nothing.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{accounting, client, env_or, percentile, Guard};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::{CheckResult, Era, Outcome, RegionResult, RegionStatus};
use vantage_proto::v1 as pb;
use vantage_proto::v1::fleet_client::FleetClient;

fn agent_bin() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_BIN_EXE_vantage")).with_file_name("vantage-agent");
    if !p.exists() {
        let ok = Command::new(env!("CARGO"))
            .args(["build", "--release", "-q", "-p", "vantage-agent"])
            .status()
            .expect("cargo");
        assert!(ok.success());
    }
    p
}

fn serve(config: &str, env: &[(String, String)], dir: &std::path::Path) -> (Child, String, String) {
    common::serve(env!("CARGO_BIN_EXE_vantage"), config, env, dir)
}

async fn agents_connected(api: &str) -> usize {
    let r = client()
        .get(format!("{api}/v1/agents"))
        .bearer_auth("bench-api-token")
        .send()
        .await;
    match r {
        Ok(r) => r
            .json::<serde_json::Value>()
            .await
            .ok()
            .and_then(|v| v["agents"].as_array().map(Vec::len))
            .unwrap_or(0),
        Err(_) => 0,
    }
}

/// Goals, stated once: here, in the output and (through fleet.json) in BENCHMARKS.md.
const GOAL_OVERHEAD_MS_AT_10: f64 = 20.0;
const GOAL_CORES: f64 = 1.0;
const GOAL_PEAK_MIB: f64 = 512.0;
const GOAL_P99_MS: f64 = 5.0;
const GOAL_RUNS_PER_MIN: f64 = 10_000.0;

async fn multi_region(
    regions: usize,
    fixture_url: &str,
    dir: &std::path::Path,
) -> serde_json::Value {
    let mut config = "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{ token_env = \"T_API\" }]\nchecks_per_target_per_minute = 100000\n[fleet]\nlocal_agent = false\n[probe]\nallow_non_global = [\"127.0.0.0/8\"]\n".to_string();
    let mut env = Vec::new();
    for i in 0..regions {
        config.push_str(&format!(
            "[[agents]]\nname = \"a{i}\"\nregion = \"r{i}\"\ntoken_env = \"T_{i}\"\n"
        ));
        env.push((format!("T_{i}"), format!("bench-agent-token-{i}")));
    }
    let (coord, api, grpc) = serve(&config, &env, dir);
    let mut procs = vec![coord];
    for i in 0..regions {
        procs.push(
            Command::new(agent_bin())
                .args([
                    "--coordinator",
                    &grpc,
                    "--region",
                    &format!("r{i}"),
                    "--listen",
                    "127.0.0.1:0",
                ])
                .env("VANTAGE_AGENT_TOKEN", format!("bench-agent-token-{i}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("agent"),
        );
    }
    let _guard = Guard(procs);
    while agents_connected(&api).await < regions {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let c = client();
    let mut overheads = Vec::new();
    let mut walls = Vec::new();
    for i in 0..45 {
        let t = Instant::now();
        let report: serde_json::Value = c
            .post(format!("{api}/v1/checks?wait=30s"))
            .bearer_auth("bench-api-token")
            .body(serde_json::json!({"target": fixture_url}).to_string())
            .send()
            .await
            .expect("check")
            .json()
            .await
            .expect("report");
        let wall = t.elapsed().as_secs_f64() * 1000.0;
        let slowest = report["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .filter_map(|r| r["duration_ms"].as_f64())
            .fold(0.0, f64::max);
        if i >= 5 {
            overheads.push((wall - slowest).max(0.0));
            walls.push(wall);
        }
    }
    let (wall, median, p99) = (
        percentile(walls, 0.5),
        percentile(overheads.clone(), 0.5),
        percentile(overheads, 0.99),
    );
    println!(
        "  {regions:>2} regions: wall median {wall:6.2} ms; coordinator overhead (wall - slowest region) median {median:5.2} ms, p99 {p99:5.2} ms (goal < {GOAL_OVERHEAD_MS_AT_10} ms at 10 regions)",
    );
    serde_json::json!({"regions": regions, "wall_median_ms": wall, "overhead_median_ms": median, "overhead_p99_ms": p99})
}

fn canned(region: &str) -> pb::RegionResult {
    let mut r = RegionResult::absent(region, RegionStatus::Complete);
    r.era = Era::Modern;
    for id in [
        CheckId::NetConnect,
        CheckId::EraDetect,
        CheckId::MethodUnknown,
    ] {
        r.checks.push(CheckResult {
            id,
            outcome: Outcome::Pass,
            observed: "ok".into(),
            expected: String::new(),
            duration_ms: 1,
            severity: None,
            cause: None,
        });
    }
    vantage_agent::convert::region_to_pb(&r)
}

/// One fake agent: register, then answer every job at once.
async fn fake_agent(channel: tonic::transport::Channel, region: String, token: String) {
    let header: tonic::metadata::MetadataValue<tonic::metadata::Ascii> =
        format!("Bearer {token}").parse().expect("header");
    let mut client = FleetClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
        req.metadata_mut().insert("authorization", header.clone());
        Ok(req)
    });
    let (tx, rx) = mpsc::channel::<pb::AgentMessage>(64);
    let reg = pb::Register {
        agent_id: format!("fake-{region}-{token}"),
        region: region.clone(),
        version: "bench".into(),
        capabilities: vec![],
        max_concurrency: 64,
    };
    let _ = tx
        .send(pb::AgentMessage {
            kind: Some(pb::agent_message::Kind::Register(reg)),
        })
        .await;
    let Ok(resp) = client.attach(ReceiverStream::new(rx)).await else {
        return;
    };
    let mut inbound = resp.into_inner();
    let answer = canned(&region);
    let hb_tx = tx.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let hb = pb::AgentMessage {
                kind: Some(pb::agent_message::Kind::Heartbeat(pb::Heartbeat::default())),
            };
            if hb_tx.send(hb).await.is_err() {
                return;
            }
        }
    });
    while let Ok(Some(msg)) = inbound.message().await {
        if let Some(pb::coordinator_message::Kind::Job(job)) = msg.kind {
            let result = pb::JobResult {
                job_id: job.job_id,
                region: Some(answer.clone()),
                refused: String::new(),
            };
            if tx
                .send(pb::AgentMessage {
                    kind: Some(pb::agent_message::Kind::Result(result)),
                })
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

/// What one scale run measured.
#[derive(serde::Serialize)]
struct Measure {
    register_s: f64,
    cpu_cores: f64,
    hwm_mib: f64,
    per_agent_kib: f64,
    runs_per_min: f64,
    p50_ms: f64,
    p99_ms: f64,
    samples: usize,
}

/// `agents` fake agents spread over `regions`, `targets` scheduled every 10 s (one region
/// each), and on-demand checks over `check_regions` regions timed for `seconds`.
async fn run_scale(
    dir: &std::path::Path,
    agents: usize,
    regions: usize,
    targets: usize,
    check_regions: usize,
    seconds: u64,
) -> Measure {
    let mut config = "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{ token_env = \"T_API\" }]\nchecks_per_target_per_minute = 100000\n[fleet]\nlocal_agent = false\ndefault_deadline = \"5s\"\n[store]\nmax_reports = 2000\n".to_string();
    let mut env = Vec::new();
    for i in 0..agents {
        config.push_str(&format!(
            "[[agents]]\nname = \"a{i}\"\nregion = \"r{}\"\ntoken_env = \"T_{i}\"\n",
            i % regions
        ));
        env.push((format!("T_{i}"), format!("bench-agent-token-{i}")));
    }
    for i in 0..targets {
        config.push_str(&format!("[[checks]]\ntarget = \"http://127.0.0.1:9/mcp?t={i}\"\ninterval = \"10s\"\nregions = [\"r{}\"]\n", i % regions));
    }
    let (coord, api, grpc) = serve(&config, &env, dir);
    let pid = coord.id();
    let _guard = Guard(vec![coord]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, _, rss_before) = accounting(pid);
    // Many agents per connection, as a load tool would.
    let mut channels = Vec::new();
    for _ in 0..agents.div_ceil(50).min(20) {
        channels.push(
            tonic::transport::Endpoint::from_shared(grpc.clone())
                .expect("endpoint")
                .connect()
                .await
                .expect("connect"),
        );
    }
    let mut tasks = Vec::new();
    for i in 0..agents {
        tasks.push(tokio::spawn(fake_agent(
            channels[i % channels.len()].clone(),
            format!("r{}", i % regions),
            format!("bench-agent-token-{i}"),
        )));
    }
    let start = Instant::now();
    while agents_connected(&api).await < agents {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the fake agents did not all register"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let register_s = start.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (cpu_start, _, rss_connected) = accounting(pid);
    let runs_before = runs_total(&api).await;
    let t0 = Instant::now();
    let c = client();
    let check_regions: Vec<String> = (0..check_regions.min(regions))
        .map(|r| format!("r{r}"))
        .collect();
    let mut latencies = Vec::new();
    let mut n = 0u64;
    while t0.elapsed() < Duration::from_secs(seconds) {
        n += 1;
        let t = Instant::now();
        let r = c
            .post(format!("{api}/v1/checks?wait=10s"))
            .bearer_auth("bench-api-token")
            .body(serde_json::json!({"target": format!("http://127.0.0.1:9/mcp?ondemand={n}"), "regions": check_regions}).to_string())
            .send()
            .await;
        if r.is_ok_and(|r| r.status() == 200) {
            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let (cpu_end, hwm, _) = accounting(pid);
    // vantage_runs_total counts scheduled runs only (an on-demand check is not a scheduled
    // target's run, metrics/targets.rs), so nothing is subtracted for the on-demand checks.
    let runs = runs_total(&api).await - runs_before;
    for t in tasks {
        t.abort();
    }
    Measure {
        register_s,
        cpu_cores: (cpu_end - cpu_start) / elapsed,
        hwm_mib: hwm as f64 / 1024.0,
        per_agent_kib: rss_connected.saturating_sub(rss_before) as f64 / agents as f64,
        runs_per_min: runs / elapsed * 60.0,
        p50_ms: percentile(latencies.clone(), 0.5),
        p99_ms: percentile(latencies.clone(), 0.99),
        samples: latencies.len(),
    }
}

async fn runs_total(api: &str) -> f64 {
    let text = match client().get(format!("{api}/metrics")).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    text.lines()
        .filter(|l| l.starts_with("vantage_runs_total{"))
        .filter_map(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()))
        .sum()
}

async fn scale(dir: &std::path::Path) -> serde_json::Value {
    let agents = env_or("VANTAGE_BENCH_SCALE_AGENTS", 1000) as usize;
    let seconds = env_or("VANTAGE_BENCH_SCALE_SECONDS", 20);
    // 10,000 scheduled checks per minute: 1,667 targets every 10 s, one region each.
    let m = run_scale(dir, agents, (agents / 10).max(1), 1667, 1, seconds).await;
    println!("bench fleet scale ({agents} agents in {} regions, 1,667 targets every 10 s = 10,000 checks/min, {seconds} s)", (agents / 10).max(1));
    println!("  agents registered in {:.2} s", m.register_s);
    println!(
        "  coordinator CPU {:.2} cores (goal <= {GOAL_CORES}); peak RSS {:.1} MiB (goal <= {GOAL_PEAK_MIB}); {:.1} KiB per connected agent",
        m.cpu_cores, m.hwm_mib, m.per_agent_kib
    );
    println!(
        "  scheduled runs merged: {:.0}/min (goal {GOAL_RUNS_PER_MIN}); on-demand check answered by a fake agent: p50 {:.2} ms, p99 {:.2} ms (goal p99 < {GOAL_P99_MS} ms), {} checks",
        m.runs_per_min, m.p50_ms, m.p99_ms, m.samples
    );

    let secs = env_or("VANTAGE_BENCH_GROWTH_SECONDS", 6);
    println!(
        "bench fleet growth ({secs} s per row; fake agents answer at once; 10 agents per region)"
    );
    println!(
        "  {:<28} {:>9} {:>10} {:>12} {:>9} {:>9} {:>11}",
        "row", "CPU cores", "peak MiB", "KiB/agent", "p50 ms", "p99 ms", "runs/min"
    );
    let mut rows: Vec<(String, usize, usize, usize, usize)> = Vec::new();
    for a in [10, 100, 1000] {
        rows.push((
            format!("agents {a} (100 targets)"),
            a,
            (a / 10).max(1),
            100,
            1,
        ));
    }
    for t in [10, 100, 1000] {
        rows.push((format!("targets {t} (100 agents)"), 100, 10, t, 1));
    }
    for r in [1, 3, 10] {
        rows.push((format!("regions per check {r}"), 100, 10, 100, r));
    }
    let mut growth = Vec::new();
    for (label, a, regions, t, cr) in rows {
        let m = run_scale(dir, a, regions, t, cr, secs).await;
        println!(
            "  {:<28} {:>9.3} {:>10.1} {:>12.1} {:>9.2} {:>9.2} {:>11.0}",
            label, m.cpu_cores, m.hwm_mib, m.per_agent_kib, m.p50_ms, m.p99_ms, m.runs_per_min
        );
        growth.push(serde_json::json!({"row": label, "measure": m}));
    }
    serde_json::json!({
        "agents": agents,
        "regions": (agents / 10).max(1),
        "targets": 1667,
        "seconds": seconds,
        "measure": m,
        "growth_seconds": secs,
        "growth": growth,
    })
}

fn main() {
    let dir = std::env::temp_dir().join(format!("vantage-fleet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (fixture, url) = common::fixture(env!("CARGO_BIN_EXE_vantage"));
        let _fixture = Guard(vec![fixture]);
        println!("bench fleet: multi-region overhead (real agents as processes, clean fixture on loopback, 40 checks each)");
        let mut overhead = Vec::new();
        for regions in [3, 10] {
            overhead.push(multi_region(regions, &url, &dir).await);
        }
        let scale = scale(&dir).await;
        common::write_results(
            "fleet",
            &serde_json::json!({
                "goals": {
                    "overhead_ms_at_10_regions": GOAL_OVERHEAD_MS_AT_10,
                    "cores": GOAL_CORES,
                    "peak_mib": GOAL_PEAK_MIB,
                    "p99_ms": GOAL_P99_MS,
                    "runs_per_min": GOAL_RUNS_PER_MIN,
                },
                "overhead": overhead,
                "scale": scale,
            }),
        );
    });
    let _ = std::fs::remove_dir_all(&dir);
}
