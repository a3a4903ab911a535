//! The fleet as separate processes on loopback: a coordinator and agents in regions `eu`,
//! `us` and `ap`, the HTTP API, agent loss, a coordinator restart, refused agents, bad API
//! input, and secrets that never appear anywhere.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use vantage_fixture::{Fault, Fixture, FIXTURE_TOKEN};

use crate::evidence_support::finding;
use crate::procs::{
    agent, agent_health, agent_per_region, agent_token, coordinator, free_addr, serve_api,
    start_coordinator, Coordinator, Proc, API_TOKEN,
};
use crate::support::{assert_valid, http, regions_of, tmpdir};

async fn call(
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http().request(method, url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send().await.expect("the API answers");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// GET `path` of the API with the API token (200): the answer.
async fn api_get(c: &Coordinator, path: &str) -> Value {
    let (st, v) = call(
        reqwest::Method::GET,
        format!("{}{path}", c.api),
        Some(API_TOKEN),
        None,
    )
    .await;
    assert_eq!(st, 200, "{path}: {v}");
    v
}

async fn agents(c: &Coordinator) -> Vec<Value> {
    api_get(c, "/v1/agents").await["agents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

pub(crate) async fn wait_agents(c: &Coordinator, n: usize, within: Duration) -> Duration {
    let start = Instant::now();
    while agents(c).await.len() != n {
        assert!(
            start.elapsed() < within,
            "{n} agents did not register within {within:?}:\n{}",
            c.proc.output()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed()
}

/// Wait until the agent `p` runs at least `n` jobs (`vantage_agent_jobs_in_flight` on its
/// `/metrics`): the jobs have arrived. Polled, at most `within`.
pub(crate) async fn wait_in_flight(p: &Proc, n: u32, within: Duration) {
    let url = format!("http://{}/metrics", agent_health(p));
    let start = Instant::now();
    loop {
        let (_, m) = call(reqwest::Method::GET, url.clone(), None, None).await;
        let running = m
            .as_str()
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("vantage_agent_jobs_in_flight{"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0);
        if running >= n {
            return;
        }
        assert!(
            start.elapsed() < within,
            "the agent did not run {n} job(s) within {within:?}:\n{}",
            p.output()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// POST /v1/checks with the API token, not waiting: the status and the answer.
async fn post_check(c: &Coordinator, body: Value) -> (u16, Value) {
    call(
        reqwest::Method::POST,
        format!("{}/v1/checks", c.api),
        Some(API_TOKEN),
        Some(body),
    )
    .await
}

/// GET /v1/checks/{id} (200): the check's state or its report.
async fn get_check(c: &Coordinator, id: &str) -> Value {
    api_get(c, &format!("/v1/checks/{id}")).await
}

pub(crate) async fn check(c: &Coordinator, body: Value) -> Value {
    let (st, v) = call(
        reqwest::Method::POST,
        format!("{}/v1/checks?wait=30s", c.api),
        Some(API_TOKEN),
        Some(body),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    assert_valid(&v);
    v
}

/// `vantage check … --coordinator` with the test API token; asserts the exit code.
async fn fleet_cli(args: &[&str], code: i32) -> std::process::Output {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let out = crate::support::vantage_env(&all, &[("VANTAGE_API_TOKEN", API_TOKEN)]).await;
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`fleet_cli`] with `--format json`: the document on stdout.
async fn fleet_json(args: &[&str], code: i32) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let out = fleet_cli(&all, code).await;
    serde_json::from_slice(&out.stdout).unwrap()
}

fn complete(regions: &[&str]) -> Vec<(String, String)> {
    regions
        .iter()
        .map(|r| (r.to_string(), "complete".to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_agents_check_and_merge() {
    let dir = tmpdir("fleet3");
    let c = coordinator(&dir, &["eu", "us", "ap"], "127.0.0.1:0", "127.0.0.1:0", "");
    let _agents = agent_per_region(&c.grpc, &["eu", "us", "ap"]);
    wait_agents(&c, 3, Duration::from_secs(15)).await;
    let listed = agents(&c).await;
    for a in &listed {
        for key in ["id", "region", "version", "connected_since", "in_flight"] {
            assert!(a.get(key).is_some(), "agent lacks {key}: {a}");
        }
    }
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let report = check(&c, json!({"target": fixture.url()})).await;
    assert_eq!(regions_of(&report), complete(&["ap", "eu", "us"]));
    let f = finding(&report, "transport.get");
    assert_eq!(f["scope"], "global");
    assert_eq!(f["regions"], json!(["ap", "eu", "us"]));
    assert_eq!(report["decision"], "review");

    // The command line in fleet mode renders the same merged report.
    let (api, url) = (c.api.clone(), fixture.url());
    let cli = fleet_json(&[&url, "--coordinator", &api, "--regions", "eu,us"], 0).await;
    assert_valid(&cli);
    assert_eq!(regions_of(&cli), complete(&["eu", "us"]));

    // Several endpoints through the fleet: one API check each, one gate, the worst exit.
    let clean = Fixture::start(&[]).await.unwrap();
    let clean_url = clean.url();
    let doc = fleet_json(
        &[
            &clean_url,
            &url,
            "--coordinator",
            &api,
            "--regions",
            "eu,us",
            "--fail-on",
            "review",
        ],
        2,
    )
    .await;
    assert_eq!(doc["schema"], "vantage.reports/v1");
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2);
    for r in reports {
        assert_valid(r);
        assert_eq!(regions_of(r), complete(&["eu", "us"]));
    }
    assert_eq!(
        (
            reports[0]["decision"].as_str(),
            reports[1]["decision"].as_str()
        ),
        (Some("pass"), Some("review"))
    );

    // Metrics carry the fleet gauges.
    let (st, metrics) = call(
        reqwest::Method::GET,
        format!("{}/metrics", c.api),
        None,
        None,
    )
    .await;
    assert_eq!(st, 200);
    let text = metrics.as_str().unwrap();
    assert!(
        text.contains("vantage_agents_connected{region=\"ap\"} 1"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_killed_mid_job_leaves_its_region_missing_and_the_decision_unknown() {
    let dir = tmpdir("fleetkill");
    let c = coordinator(&dir, &["eu", "us", "ap"], "127.0.0.1:0", "127.0.0.1:0", "");
    let mut agents_ = agent_per_region(&c.grpc, &["eu", "us", "ap"]);
    wait_agents(&c, 3, Duration::from_secs(15)).await;
    let fixture = Fixture::start(&[Fault::Slow]).await.unwrap();
    let (st, v) = post_check(&c, json!({"target": fixture.url()})).await;
    assert_eq!(st, 202, "{v}");
    let id = v["id"].as_str().unwrap().to_string();
    wait_in_flight(&agents_[2], 1, Duration::from_secs(10)).await;
    agents_[2].kill(); // ap, mid-job
    let started = Instant::now();
    let report = loop {
        let r = get_check(&c, &id).await;
        if r.get("state").is_none() {
            break r;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the report never finished"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_valid(&report);
    assert_eq!(report["decision"], "unknown", "{report:#}");
    let missing = finding(&report, "fleet.region-missing");
    assert_eq!(missing["regions"], json!(["ap"]));
    let statuses = regions_of(&report);
    assert!(
        statuses.contains(&("ap".into(), "error".into())),
        "{statuses:?}"
    );
    assert!(statuses.contains(&("eu".into(), "complete".into())));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_reconnect_after_a_coordinator_restart() {
    let dir = tmpdir("fleetrestart");
    let (api, grpc) = (free_addr(), free_addr());
    let mut c = coordinator(&dir, &["eu", "us", "ap"], &api, &grpc, "");
    let _agents = agent_per_region(&c.grpc, &["eu", "us", "ap"]);
    wait_agents(&c, 3, Duration::from_secs(15)).await;
    c.proc.kill();
    let config = c.config.clone();
    drop(c);
    let c = start_coordinator(&config, &["eu", "us", "ap"]);
    let took = wait_agents(&c, 3, Duration::from_secs(15)).await;
    eprintln!("agents re-registered {took:?} after the coordinator came back (backoff 100ms..1s)");
    let fixture = Fixture::start(&[]).await.unwrap();
    let report = check(&c, json!({"target": fixture.url()})).await;
    assert_eq!(regions_of(&report), complete(&["ap", "eu", "us"]));
    assert_eq!(report["decision"], "pass");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_agents_stay_up_and_unready() {
    let dir = tmpdir("fleetrefused");
    let c = coordinator(&dir, &["eu", "us"], "127.0.0.1:0", "127.0.0.1:0", "");
    let mut wrong = agent(&c.grpc, "eu", "not-a-valid-agent-token");
    let mut mismatch = agent(&c.grpc, "us", &agent_token("eu"));
    wrong.wait_for("unknown agent token", Duration::from_secs(10));
    mismatch.wait_for("bound to region `eu`, not `us`", Duration::from_secs(10));
    // Each is refused a second time (after --backoff-max 1s): alive, and retrying.
    for p in [&wrong, &mismatch] {
        let start = Instant::now();
        while p.output().matches("refused by the coordinator").count() < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "a refused agent did not retry:\n{}",
                p.output()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    assert!(
        wrong.alive() && mismatch.alive(),
        "a refused agent must not exit"
    );
    for p in [&wrong, &mismatch] {
        let health = agent_health(p);
        let (st, body) = call(
            reqwest::Method::GET,
            format!("http://{health}/readyz"),
            None,
            None,
        )
        .await;
        assert_eq!(st, 503, "{body}");
        assert!(body.as_str().unwrap().contains("refused"), "{body}");
        let (st, _) = call(
            reqwest::Method::GET,
            format!("http://{health}/healthz"),
            None,
            None,
        )
        .await;
        assert_eq!(st, 200);
    }
    assert!(agents(&c).await.is_empty());
    // A good agent next to them registers and is ready.
    let good = agent(&c.grpc, "eu", &agent_token("eu"));
    wait_agents(&c, 1, Duration::from_secs(10)).await;
    let health = agent_health(&good);
    let start = Instant::now();
    loop {
        let (st, _) = call(
            reqwest::Method::GET,
            format!("http://{health}/readyz"),
            None,
            None,
        )
        .await;
        if st == 200 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_refuses_bad_callers_and_bad_input_by_shape() {
    let dir = tmpdir("fleetapi");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let post = |token: Option<&'static str>, body: Value| {
        let url = format!("{}/v1/checks", c.api);
        async move { call(reqwest::Method::POST, url, token, Some(body)).await }
    };
    let (st, v) = post(None, json!({"target": "http://127.0.0.1:1/mcp"})).await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let (st, _) = post(
        Some("wrong-token"),
        json!({"target": "http://127.0.0.1:1/mcp"}),
    )
    .await;
    assert_eq!(st, 401);
    let (st, _) = call(
        reqwest::Method::GET,
        format!("{}/v1/agents", c.api),
        None,
        None,
    )
    .await;
    assert_eq!(st, 401);
    let cases: &[(Value, u16, &str)] = &[
        (json!({"target": "not a url"}), 400, "invalid_target"),
        (
            json!({"target": "ftp://example.invalid/x"}),
            400,
            "invalid_target",
        ),
        (
            json!({"target": "file:///etc/passwd"}),
            400,
            "invalid_target",
        ),
        (
            json!({"target": "https://user:pw@example.invalid/mcp"}),
            400,
            "invalid_target",
        ),
        (
            json!({"target": "http://127.0.0.1:1/mcp", "regions": ["mars"]}),
            400,
            "unknown_region",
        ),
        (
            json!({"target": "http://127.0.0.1:1/mcp", "regions": []}),
            400,
            "invalid_regions",
        ),
        (
            json!({"target": "http://127.0.0.1:1/mcp", "credential": "nope"}),
            400,
            "unknown_credential",
        ),
        (
            json!({"target": "http://127.0.0.1:1/mcp", "deadline": "soon"}),
            400,
            "invalid_duration",
        ),
        (
            json!({"target": "http://127.0.0.1:1/mcp", "surprise": 1}),
            400,
            "invalid_json",
        ),
        (json!({"regions": ["eu"]}), 400, "invalid_json"),
        (json!({"target": "x".repeat(70_000)}), 413, "body_too_large"),
    ];
    for (body, status, code) in cases {
        let (st, v) = post(Some(API_TOKEN), body.clone()).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (*status, Some(*code)),
            "{v}"
        );
        assert!(v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    let (st, v) = call(
        reqwest::Method::GET,
        format!("{}/v1/checks/01NOTANID", c.api),
        Some(API_TOKEN),
        None,
    )
    .await;
    assert_eq!((st, v["error"]["code"].as_str()), (404, Some("not_found")));
    // No check was started by any of the refusals, and a region without an agent is missing.
    let report = check(
        &c,
        json!({"target": "http://127.0.0.1:1/mcp", "deadline": "2s"}),
    )
    .await;
    assert_eq!(report["decision"], "unknown");
    assert_eq!(
        regions_of(&report),
        vec![("eu".to_string(), "no-agent".to_string())]
    );
    // Exit code 4 from the command line for a region that did not report.
    fleet_cli(
        &[
            "http://127.0.0.1:1/mcp",
            "--coordinator",
            &c.api,
            "--timeout",
            "2s",
        ],
        4,
    )
    .await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_appear_in_responses_reports_logs_or_metrics() {
    let dir = tmpdir("fleetsecrets");
    let extra = "[[credentials]]\nname = \"prod\"\ntoken_env = \"T_CRED_PROD\"\n";
    let c = coordinator(&dir, &["eu", "us"], "127.0.0.1:0", "127.0.0.1:0", extra);
    let agents_ = agent_per_region(&c.grpc, &["eu", "us"]);
    wait_agents(&c, 2, Duration::from_secs(15)).await;
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let report = check(&c, json!({"target": fixture.url(), "credential": "prod"})).await;
    // The credential travelled: the checks ran authenticated in both regions.
    assert_eq!(report["decision"], "pass", "{report:#}");
    for r in report["regions"].as_array().unwrap() {
        assert_eq!(r["authenticated"], true);
    }
    let mut seen = vec![report.to_string()];
    let (_, a) = call(
        reqwest::Method::GET,
        format!("{}/v1/agents", c.api),
        Some(API_TOKEN),
        None,
    )
    .await;
    seen.push(a.to_string());
    let (_, m) = call(
        reqwest::Method::GET,
        format!("{}/metrics", c.api),
        None,
        None,
    )
    .await;
    seen.push(m.to_string());
    let (_, e) = call(
        reqwest::Method::POST,
        format!("{}/v1/checks", c.api),
        Some("wrong"),
        Some(json!({})),
    )
    .await;
    seen.push(e.to_string());
    seen.push(c.proc.output());
    for a in &agents_ {
        seen.push(a.output());
        let (_, am) = call(
            reqwest::Method::GET,
            format!("http://{}/metrics", agent_health(a)),
            None,
            None,
        )
        .await;
        seen.push(am.to_string());
    }
    let secrets = [
        API_TOKEN.to_string(),
        agent_token("eu"),
        agent_token("us"),
        FIXTURE_TOKEN.to_string(),
    ];
    for text in &seen {
        for s in &secrets {
            assert!(!text.contains(s.as_str()), "a secret leaked:\n{text}");
        }
    }
    assert!(
        seen.iter().any(|t| t.contains("agent registered")),
        "debug logs were captured"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_works_with_no_config_file() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let dir = tmpdir("fleetnoconfig");
    let mut cmd = std::process::Command::new(crate::procs::bin("vantage"));
    cmd.arg("serve")
        .env(
            "VANTAGE_SERVER__GENERATED_TOKEN_FILE",
            dir.join("api-token").display().to_string(),
        )
        .env("VANTAGE_SERVER__API_LISTEN", "127.0.0.1:0")
        .env("VANTAGE_SERVER__GRPC_LISTEN", "127.0.0.1:0")
        .env("VANTAGE_PROBE__ALLOW_NON_GLOBAL", "127.0.0.0/8");
    let p = Proc::spawn(cmd);
    let api = serve_api(&p);
    let token_line = p.wait_for("API token written to", Duration::from_secs(5));
    let path = token_line.rsplit(' ').next().unwrap().to_string();
    let token = std::fs::read_to_string(&path).unwrap();
    let (st, report) = call(
        reqwest::Method::POST,
        format!("{api}/v1/checks?wait=20s"),
        Some(&token),
        Some(json!({"target": fixture.url()})),
    )
    .await;
    assert_eq!(st, 200, "{report}");
    assert_eq!(regions_of(&report), complete(&["local"]));
    assert_eq!(report["decision"], "pass");
    assert!(
        !p.output().contains(&token),
        "the generated token is never printed"
    );
    // The in-process region is labelled as such (no agent alert for it); a check submitted
    // through the API adds no per-target series; the process and the build are exported.
    let (_, m) = call(reqwest::Method::GET, format!("{api}/metrics"), None, None).await;
    let m = m.as_str().unwrap().to_string();
    assert!(
        m.contains("vantage_region_info{region=\"local\",vantage=\"in-process\"} 1"),
        "{m}"
    );
    assert!(
        !m.contains(&fixture.url()),
        "API checks are not exported:\n{m}"
    );
    assert!(
        m.contains("vantage_build_info{component=\"coordinator\""),
        "{m}"
    );
    assert!(m.contains("\nprocess_resident_memory_bytes "), "{m}");
    drop(p);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_attach_over_tls_with_the_lab_ca() {
    let dir = tmpdir("fleettls");
    let ca = crate::support::LabCa::new();
    let (cert, key) = ca.leaf(&["localhost"], 30);
    std::fs::write(dir.join("tls.crt"), cert).unwrap();
    std::fs::write(dir.join("tls.key"), key).unwrap();
    std::fs::write(dir.join("ca.pem"), &ca.ca_pem).unwrap();
    let extra = format!(
        "[server.tls]\ncert_file = \"{}\"\nkey_file = \"{}\"\n",
        dir.join("tls.crt").display(),
        dir.join("tls.key").display()
    );
    // [server.tls] belongs to [server]; put it after the generated sections.
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", &extra);
    let port = c.grpc.rsplit(':').next().unwrap().to_string();
    let url = format!("https://localhost:{port}");
    let ca = vec![
        "--ca-file".to_string(),
        dir.join("ca.pem").display().to_string(),
    ];
    let _a = crate::procs::agent_with(&url, "eu", &agent_token("eu"), &ca);
    wait_agents(&c, 1, Duration::from_secs(15)).await;
    // Without the lab CA the handshake fails and the agent never registers.
    let untrusted = agent(&url, "eu", &agent_token("eu"));
    untrusted.wait_for("coordinator connection", Duration::from_secs(10));
    assert_eq!(agents(&c).await.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_agent_is_dropped_within_the_heartbeat_timeout() {
    let dir = tmpdir("fleetfrozen");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let a = agent(&c.grpc, "eu", &agent_token("eu"));
    wait_agents(&c, 1, Duration::from_secs(15)).await;
    let pid = a.child.id().to_string();
    // Freeze the agent we started (by its pid): its connection stays open, its heartbeats stop.
    assert!(std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    let start = Instant::now();
    while !agents(&c).await.is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "a silent agent was not dropped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!(
        "a frozen agent was dropped {:?} after it stopped (agent_timeout 3s)",
        start.elapsed()
    );
    let _ = std::process::Command::new("kill")
        .args(["-CONT", &pid])
        .status();
    // Thawed, it notices and registers again.
    wait_agents(&c, 1, Duration::from_secs(15)).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_scheduled_checks_without_dropping_agents() {
    let dir = tmpdir("fleethup");
    let a = Fixture::start(&[]).await.unwrap();
    let b = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let check_a = format!("[[checks]]\ntarget = \"{}\"\ninterval = \"1s\"\n", a.url());
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", &check_a);
    let _agent = agent(&c.grpc, "eu", &agent_token("eu"));
    wait_agents(&c, 1, Duration::from_secs(15)).await;
    let since = agents(&c).await[0]["connected_since"].clone();
    let metrics = || async {
        let (_, m) = call(
            reqwest::Method::GET,
            format!("{}/metrics", c.api),
            None,
            None,
        )
        .await;
        m.as_str().unwrap_or_default().to_string()
    };
    let series = |url: &str| format!("vantage_decision{{decision=\"pass\",target=\"{url}\"}}");
    let start = Instant::now();
    while !metrics().await.contains(&series(&a.url())) {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "the scheduled check of a never ran"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Swap the scheduled target and send SIGHUP to the coordinator we started.
    let text = std::fs::read_to_string(&c.config)
        .unwrap()
        .replace(&a.url(), &b.url());
    std::fs::write(&c.config, text).unwrap();
    let pid = c.proc.child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap()
        .success());
    c.proc
        .wait_for("configuration reloaded", Duration::from_secs(10));
    let start = Instant::now();
    loop {
        let m = metrics().await;
        let b_in = m.contains(&format!(
            "vantage_decision{{decision=\"review\",target=\"{}\"}} 1",
            b.url()
        ));
        let a_out = !m.contains(&format!("target=\"{}\"", a.url()));
        if b_in && a_out {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "after SIGHUP: b present {b_in}, a gone {a_out}\n{m}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let after = agents(&c).await;
    assert_eq!(after.len(), 1);
    assert_eq!(
        after[0]["connected_since"], since,
        "the agent was not dropped"
    );
    // A change of the file alone (no signal) is noticed as well.
    let text = std::fs::read_to_string(&c.config)
        .unwrap()
        .replace(&b.url(), &a.url());
    std::fs::write(&c.config, text).unwrap();
    c.proc.wait_for(
        "the configuration file changed: configuration reloaded",
        Duration::from_secs(10),
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_check_never_overlaps_itself() {
    let dir = tmpdir("fleetoverlap");
    let fixture = Fixture::start(&[]).await.unwrap();
    let check = format!(
        "[[checks]]\ntarget = \"{}\"\ninterval = \"1s\"\n",
        fixture.url()
    );
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", &check);
    let a = agent(&c.grpc, "eu", &agent_token("eu"));
    wait_agents(&c, 1, Duration::from_secs(15)).await;
    // Freeze the agent (our own child, by pid): each run now waits out its deadline and
    // grace (about 3 s), so the next ticks find it still going.
    let pid = a.child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    let needle = format!(
        "vantage_scheduled_runs_skipped_total{{target=\"{}\"}}",
        fixture.url()
    );
    let start = Instant::now();
    loop {
        let (_, m) = call(
            reqwest::Method::GET,
            format!("{}/metrics", c.api),
            None,
            None,
        )
        .await;
        let skipped = m
            .as_str()
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with(&needle))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0);
        if skipped >= 1.0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "no overlapping run was skipped"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let _ = std::process::Command::new("kill")
        .args(["-CONT", &pid])
        .status();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_tokens_rotate_and_checks_are_rate_limited_per_target() {
    let dir = tmpdir("fleetrotate");
    // Two API tokens valid at once (a rotation), and two on-demand checks per target a minute.
    let extra = "";
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", extra);
    let cfg = std::fs::read_to_string(&c.config)
        .unwrap()
        .replace(
            "api_tokens = [{ token_env = \"T_API\" }]",
            "api_tokens = [{ token_env = \"T_API\" }, { token_file = \"ROTATED\" }]\nchecks_per_target_per_minute = 2",
        )
        .replace("ROTATED", &dir.join("next-token").display().to_string());
    std::fs::write(dir.join("next-token"), "vantage-next-api-token-7a1c\n").unwrap();
    drop(c);
    std::fs::write(dir.join("coordinator.toml"), cfg).unwrap();
    let c = crate::procs::start_coordinator(&dir.join("coordinator.toml"), &["eu"]);
    for token in [API_TOKEN, "vantage-next-api-token-7a1c"] {
        let (st, _) = call(
            reqwest::Method::GET,
            format!("{}/v1/agents", c.api),
            Some(token),
            None,
        )
        .await;
        assert_eq!(st, 200, "token {token} is valid during the rotation");
    }
    let body = json!({"target": "http://127.0.0.1:1/mcp", "deadline": "1s"});
    for _ in 0..2 {
        let (st, v) = post_check(&c, body.clone()).await;
        assert_eq!(st, 202, "{v}");
    }
    let (st, v) = post_check(&c, body).await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (429, Some("rate_limited")),
        "{v}"
    );
    // Other spellings of the same endpoint share its budget (they used to get around it).
    for spelling in [
        "http://127.0.0.1:1/mcp/",
        "http://127.0.0.1:1/mcp?x=1",
        "HTTP://127.0.0.1:1/mcp/?y=2",
    ] {
        let (st, v) = post_check(&c, json!({"target": spelling, "deadline": "1s"})).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (429, Some("rate_limited")),
            "{spelling}: {v}"
        );
    }
    // Another target is not limited by the first one's budget.
    let other = json!({"target": "http://127.0.0.2:1/mcp", "deadline": "1s"});
    let (st, _) = post_check(&c, other).await;
    assert_eq!(st, 202);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_refuses_an_agent_without_a_client_certificate() {
    let dir = tmpdir("fleetmtls");
    let ca = crate::support::LabCa::new();
    let (cert, key) = ca.leaf(&["localhost"], 30);
    let (client_cert, client_key) = ca.leaf(&["agent-eu"], 30);
    for (name, text) in [
        ("tls.crt", &cert),
        ("tls.key", &key),
        ("ca.pem", &ca.ca_pem),
        ("client.crt", &client_cert),
        ("client.key", &client_key),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let extra = format!(
        "[server.tls]\ncert_file = \"{}\"\nkey_file = \"{}\"\nclient_ca_file = \"{}\"\n",
        dir.join("tls.crt").display(),
        dir.join("tls.key").display(),
        dir.join("ca.pem").display()
    );
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", &extra);
    let url = format!("https://localhost:{}", c.grpc.rsplit(':').next().unwrap());
    let spawn = |with_cert: bool| {
        let mut extra = vec![
            "--ca-file".to_string(),
            dir.join("ca.pem").display().to_string(),
        ];
        if with_cert {
            for (flag, file) in [("--cert-file", "client.crt"), ("--key-file", "client.key")] {
                extra.push(flag.to_string());
                extra.push(dir.join(file).display().to_string());
            }
        }
        crate::procs::agent_with(&url, "eu", &agent_token("eu"), &extra)
    };
    let without = spawn(false);
    without.wait_for("coordinator connection", Duration::from_secs(10));
    assert!(
        agents(&c).await.is_empty(),
        "an agent without a client certificate got in"
    );
    let _with = spawn(true);
    wait_agents(&c, 1, Duration::from_secs(15)).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_busy_with_a_hostile_target_keeps_serving_other_jobs() {
    let dir = tmpdir("fleetbusy");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let _a = agent(&c.grpc, "eu", &agent_token("eu"));
    wait_agents(&c, 1, Duration::from_secs(15)).await;
    let hostile = vantage_fixture::HostileServer::start(vantage_fixture::Hostile::NeverAnswers)
        .await
        .unwrap();
    let clean = Fixture::start(&[]).await.unwrap();
    // Three checks of a target that never answers occupy the agent for their deadline...
    let mut hostile_ids = Vec::new();
    for i in 0..3 {
        let body = json!({"target": format!("{}?i={i}", hostile.url()), "deadline": "8s"});
        let (st, v) = post_check(&c, body).await;
        assert_eq!(st, 202);
        hostile_ids.push(v["id"].as_str().unwrap().to_string());
    }
    // ... while a check of a healthy target still comes back: it is not queued behind them,
    // so when its report arrives the hostile checks are still running (an order, not a time).
    let report = check(&c, json!({"target": clean.url()})).await;
    assert_eq!(report["decision"], "pass");
    for id in &hostile_ids {
        let v = get_check(&c, id).await;
        assert_eq!(
            v["state"], "running",
            "the healthy check waited behind the hostile ones: {v}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_restart_with_a_hundred_checks_in_flight_never_yields_a_false_pass() {
    let dir = tmpdir("fleet100");
    let (api, grpc) = (free_addr(), free_addr());
    // A hundred on-demand checks of one endpoint (the query only tells them apart, and no
    // longer gets around the per-target limit): the limit is raised for this test.
    let mut c = coordinator(
        &dir,
        &["eu", "us"],
        &api,
        &grpc,
        "[server]\nchecks_per_target_per_minute = 1000\nmax_checks_in_flight = 1000\n",
    );
    let regions = agent_per_region(&c.grpc, &["eu", "us"]);
    wait_agents(&c, 2, Duration::from_secs(15)).await;
    let fixture = Fixture::start(&[Fault::Slow]).await.unwrap();
    let calls = (0..100).map(|i| {
        let url = format!("{}/v1/checks?wait=30s", c.api);
        let body = json!({"target": format!("{}?i={i}", fixture.url())});
        async move {
            let r = http()
                .post(url)
                .bearer_auth(API_TOKEN)
                .body(body.to_string())
                .send()
                .await;
            match r {
                Ok(resp) => Ok((
                    resp.status().as_u16(),
                    resp.text().await.unwrap_or_default(),
                )),
                Err(e) => Err(e.to_string()),
            }
        }
    });
    let all = tokio::spawn(futures::future::join_all(calls));
    for a in &regions {
        wait_in_flight(a, 1, Duration::from_secs(15)).await;
    }
    c.proc.kill();
    let results = all.await.unwrap();
    let (mut reports, mut errors) = (0, 0);
    for r in results {
        match r {
            Ok((200, text)) => {
                let v: Value = serde_json::from_str(&text).unwrap();
                let complete = v["regions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|r| r["status"] == "complete");
                assert!(
                    v["decision"] != "pass" || complete,
                    "a pass with a region missing: {v}"
                );
                reports += 1;
            }
            Ok((status, text)) => panic!("an unexpected answer {status}: {text}"),
            Err(_) => errors += 1,
        }
    }
    eprintln!(
        "100 checks in flight across a coordinator kill: {reports} reports, {errors} clear errors"
    );
    assert_eq!(reports + errors, 100);
    assert!(errors > 0, "the kill happened while checks were in flight");
    // The agents come back to a new coordinator and the next check runs in both regions.
    let config = c.config.clone();
    drop(c);
    let c = start_coordinator(&config, &["eu", "us"]);
    wait_agents(&c, 2, Duration::from_secs(15)).await;
    let report = check(&c, json!({"target": fixture.url()})).await;
    assert_eq!(regions_of(&report), complete(&["eu", "us"]));
    std::fs::remove_dir_all(&dir).unwrap();
}
