//! Raw probing against blackbox_exporter (Debian's `prometheus-blackbox-exporter`, the tool
//! users already run): the same no-redirect HTTP GET of the same loopback target, a fresh
//! connection for every probe, at equal concurrency, measured in the same run.
//!
//! Both probers run as their own processes, so that each one's CPU time and peak memory come
//! from the kernel's accounting of that process alone (`/proc/PID/stat`, `VmHWM`); the target
//! (`vantage fixture`) is a third process. Prints probes per second per core, peak memory and
//! the ratios. Asserts nothing.
//!
//! Run: `cargo bench -p vantage-coordinator --bench probe_rate`
//! (VANTAGE_BENCH_SECONDS, VANTAGE_BENCH_CONCURRENCY to change the load).

mod common;

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{accounting, env_or};
use http::Method;
use vantage_agent::egress::{ClientSettings, EgressClient, EgressPolicy};
use vantage_agent::probe::http::{exchange, Limits, ProbeRequest, SseRead};

/// The Vantage side, in its own process: probe `url` with `concurrency` loops for `seconds`.
fn worker(url: &str, concurrency: u64, seconds: u64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let done = rt.block_on(async {
        let tls = vantage_agent::probe::tls::client_config(None).expect("tls");
        // The engine's client and egress policy (the named loopback target allowed). No idle
        // connections kept: every probe connects afresh, as blackbox_exporter does.
        let client = EgressClient::new(
            EgressPolicy::default()
                .allowing_named_target(&[std::net::IpAddr::from([127, 0, 0, 1])]),
            ClientSettings {
                tls,
                connect_timeout: Duration::from_secs(5),
                resolver: Default::default(),
                pinned: Vec::new(),
                idle_per_host: 0,
            },
        )
        .expect("client");
        let url = url::Url::parse(url).expect("url");
        let count = Arc::new(AtomicU64::new(0));
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let loops = (0..concurrency).map(|_| {
            let (client, url, count) = (client.clone(), url.clone(), count.clone());
            tokio::spawn(async move {
                let req = ProbeRequest::bare(Method::GET, &[("Accept", "*/*")]);
                while Instant::now() < deadline {
                    let ex = exchange(
                        &client,
                        &url,
                        &req,
                        &Limits::default(),
                        Duration::from_secs(5),
                        SseRead::HeadersOnly,
                    )
                    .await;
                    if ex.is_ok_and(|e| e.status == 405) {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        });
        futures::future::join_all(loops).await;
        count.load(Ordering::Relaxed)
    });
    let (cpu, hwm, _) = accounting(std::process::id());
    println!("{done} {cpu} {hwm}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--worker") {
        worker(
            &args[i + 1],
            args[i + 2].parse().unwrap_or(8),
            args[i + 3].parse().unwrap_or(5),
        );
        return;
    }
    let seconds = env_or("VANTAGE_BENCH_SECONDS", 5);
    let concurrency = env_or("VANTAGE_BENCH_CONCURRENCY", 8);
    let Some(blackbox) = ["prometheus-blackbox-exporter", "blackbox_exporter"]
        .iter()
        .find(|b| {
            Command::new("sh")
                .args(["-c", &format!("command -v {b}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!("probe_rate: blackbox_exporter is not installed (apt-get install prometheus-blackbox-exporter); nothing to compare");
        std::process::exit(2);
    };

    // The target: the fixture, in its own process. GET /mcp answers 405 with Allow.
    let (mut fixture, url) = common::fixture(env!("CARGO_BIN_EXE_vantage"));

    // Vantage.
    let me = std::env::current_exe().expect("exe");
    let out = Command::new(me)
        .args([
            "--worker",
            &url,
            &concurrency.to_string(),
            &seconds.to_string(),
        ])
        .output()
        .expect("worker");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let (v_probes, v_cpu, v_hwm) = (v[0], v[1].max(0.01), v[2]);

    // blackbox_exporter: a module that does the same GET, no redirects, 405 expected.
    let dir = std::env::temp_dir().join(format!("vantage-bb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("blackbox.yml"),
        "modules:\n  same_get:\n    prober: http\n    timeout: 5s\n    http:\n      method: GET\n      no_follow_redirects: true\n      valid_status_codes: [405]\n      preferred_ip_protocol: ip4\n",
    )
    .expect("config");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let mut bb = Command::new(blackbox)
        .arg(format!(
            "--config.file={}",
            dir.join("blackbox.yml").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("blackbox_exporter");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (b_probes, b_cpu, b_hwm) = rt.block_on(async {
        let tls = vantage_agent::probe::tls::client_config(None).expect("tls");
        let client = reqwest::Client::builder()
            .use_preconfigured_tls((*tls).clone())
            .no_proxy()
            .build()
            .expect("client");
        let probe_url = format!("http://127.0.0.1:{port}/probe?module=same_get&target={url}");
        let start = Instant::now();
        while client
            .get(format!("http://127.0.0.1:{port}/metrics"))
            .send()
            .await
            .is_err()
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "blackbox_exporter did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (cpu_before, _, _) = accounting(bb.id());
        let count = Arc::new(AtomicU64::new(0));
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let loops = (0..concurrency).map(|_| {
            let (client, probe_url, count) = (client.clone(), probe_url.clone(), count.clone());
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    if let Ok(r) = client.get(&probe_url).send().await {
                        if r.text().await.is_ok_and(|t| t.contains("probe_success 1")) {
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        });
        futures::future::join_all(loops).await;
        let (cpu_after, hwm, _) = accounting(bb.id());
        (
            count.load(Ordering::Relaxed) as f64,
            (cpu_after - cpu_before).max(0.01),
            hwm as f64,
        )
    });
    let _ = bb.kill();
    let _ = bb.wait();
    let _ = fixture.kill();
    let _ = fixture.wait();
    let _ = std::fs::remove_dir_all(&dir);

    let v_rate = v_probes / v_cpu;
    let b_rate = b_probes / b_cpu;
    println!("bench probe_rate (GET of a loopback target, fresh connection per probe, concurrency {concurrency}, {seconds} s each)");
    println!("  vantage            {v_probes:>8.0} probes  {v_cpu:6.2} CPU-s  {v_rate:8.0} probes/s per core  peak RSS {:6.1} MiB", v_hwm / 1024.0);
    println!("  blackbox_exporter  {b_probes:>8.0} probes  {b_cpu:6.2} CPU-s  {b_rate:8.0} probes/s per core  peak RSS {:6.1} MiB", b_hwm / 1024.0);
    println!("  ratio: {:.2}x the probes per second per core (goal >= 3x), {:.2}x the peak memory (goal <= 0.5x)", v_rate / b_rate, v_hwm / b_hwm.max(1.0));
}
