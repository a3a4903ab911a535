//! The daemons' lifecycle as an operator lives it: SIGTERM on the coordinator (bounded drain,
//! agents told to reconnect, a replacement picked up at once), SIGTERM on an agent mid-job
//! (its region reported missing, never lost), and the log lines of register, refuse, drop
//! and reload at the default level, with no escape codes when stderr is not a terminal.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use vantage_fixture::{Fault, Fixture, Hostile, HostileServer};

use crate::evidence_support::finding;
use crate::fleet::wait_in_flight;
use crate::procs::{
    agent, agent_health, agent_per_region, agent_token, agent_with, coordinator, free_addr,
    start_coordinator, start_coordinator_with, Coordinator, Proc, API_TOKEN,
};
use crate::support::{assert_valid, http, regions_of, Scratch};

async fn get(url: String, token: Option<&str>) -> (u16, String) {
    let mut req = http().get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.expect("answers");
    (
        resp.status().as_u16(),
        resp.text().await.unwrap_or_default(),
    )
}

/// POST /v1/checks (`wait`: `?wait=30s`); the status and the JSON answer.
async fn post_check(c: &Coordinator, body: Value, wait: bool) -> (u16, Value) {
    let query = if wait { "?wait=30s" } else { "" };
    let resp = http()
        .post(format!("{}/v1/checks{query}", c.api))
        .bearer_auth(API_TOKEN)
        .body(body.to_string())
        .send()
        .await
        .expect("the API answers");
    let st = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        st,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// POST /v1/checks without waiting: accepted (202); the check's id.
async fn submit(c: &Coordinator, body: Value) -> String {
    let (st, v) = post_check(c, body, false).await;
    assert_eq!(st, 202, "{v}");
    v["id"].as_str().unwrap().to_string()
}

async fn agent_count(c: &Coordinator) -> usize {
    let (st, body) = get(format!("{}/v1/agents", c.api), Some(API_TOKEN)).await;
    assert_eq!(st, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["agents"].as_array().map_or(0, Vec::len)
}

/// [`crate::procs::until`], polled every 50 ms.
async fn until(what: &str, within: Duration, f: impl AsyncFnMut() -> bool) {
    crate::procs::until(what, within, Duration::from_millis(50), f).await;
}

async fn ready(p: &Proc) -> u16 {
    get(format!("http://{}/readyz", agent_health(p)), None)
        .await
        .0
}

/// Wait until the agent reports `n` jobs in flight on its own /metrics.
/// Poll a check until it is finished.
async fn finished(c: &Coordinator, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let (st, body) = get(format!("{}/v1/checks/{id}", c.api), Some(API_TOKEN)).await;
        assert_eq!(st, 200, "{body}");
        let r: Value = serde_json::from_str(&body).unwrap();
        if r.get("state").is_none() {
            assert_valid(&r);
            return r;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "check {id} never finished"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn pair(region: &str, status: &str) -> (String, String) {
    (region.to_string(), status.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_tells_agents_to_reconnect_and_exits_within_the_bound() {
    let dir = Scratch::new("life-sigterm");
    let (api, grpc) = (free_addr(), free_addr());
    // The check below cannot finish within the drain: its target never answers, and one
    // exchange alone waits probe.check_timeout (2 s) > drain_timeout (1 s).
    let drain = Duration::from_secs(1);
    let mut c = coordinator(
        &dir,
        &["eu", "us"],
        &api,
        &grpc,
        "[server]\ndrain_timeout = \"1s\"\n",
    );
    let agents = agent_per_region(&c.grpc, &["eu", "us"]);
    until("two agents", Duration::from_secs(15), async || {
        agent_count(&c).await == 2
    })
    .await;
    // The coordinator counts an agent once it registered; the agent turns ready when the
    // `Registered` answer reaches it, a moment later.
    for a in &agents {
        until("the agent ready", Duration::from_secs(15), async || {
            ready(a).await == 200
        })
        .await;
    }
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    submit(&c, json!({"target": silent.url(), "deadline": "20s"})).await;
    let sent = Instant::now();
    c.proc.signal("TERM");
    // While draining: not ready, and new checks are refused with a retry hint.
    c.proc.wait_for(
        "shutting down: finishing running checks",
        Duration::from_secs(5),
    );
    let (st, body) = get(format!("{}/readyz", c.api), None).await;
    assert_eq!(st, 503, "{body}");
    assert!(body.contains("draining"), "{body}");
    let (st, v) = post_check(&c, json!({"target": silent.url()}), false).await;
    assert_eq!(st, 503, "{v}");
    assert_eq!(v["error"]["code"], "shutting_down", "{v}");
    // The process exits: drain bound, then the listeners' grace, with slack for a busy machine.
    let bound = drain + Duration::from_secs(3) + Duration::from_secs(6);
    let status = c.proc.wait_exit(bound);
    let took = sent.elapsed();
    let out = c.proc.output();
    assert!(
        status.is_some(),
        "still running {bound:?} after SIGTERM:\n{out}"
    );
    assert!(status.unwrap().success(), "{out}");
    eprintln!("coordinator exited {took:?} after SIGTERM (drain_timeout {drain:?})");
    assert!(
        out.contains("drain timeout: 1 check(s) still running end now"),
        "{out}"
    );
    assert!(out.contains("told 2 agent(s) to reconnect"), "{out}");
    assert!(out.contains("stopped"), "{out}");
    // The agents heard it: unready at once, reconnecting.
    for a in &agents {
        a.wait_for("the coordinator is going away", Duration::from_secs(5));
        assert_eq!(
            ready(a).await,
            503,
            "an agent must not stay ready to a coordinator that left"
        );
    }
    // A replacement on the same addresses gets both agents back, and checks pass.
    let config = c.config.clone();
    drop(c);
    let c = start_coordinator(&config, &["eu", "us"]);
    until(
        "the agents to re-register",
        Duration::from_secs(15),
        async || agent_count(&c).await == 2,
    )
    .await;
    let fixture = Fixture::start(&[]).await.unwrap();
    let (st, report) = post_check(&c, json!({"target": fixture.url()}), true).await;
    assert_eq!(st, 200, "{report}");
    assert_eq!(
        regions_of(&report),
        [pair("eu", "complete"), pair("us", "complete")]
    );
    assert_eq!(report["decision"], "pass");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_on_agents_mid_job_drains_or_leaves_the_region_missing() {
    let dir = Scratch::new("life-agentterm");
    let c = coordinator(&dir, &["eu", "us"], "127.0.0.1:0", "127.0.0.1:0", "");
    // eu drains 300 ms, less than its job needs (a target that never answers holds one
    // exchange for the agents' 2 s check timeout): the job is abandoned. us drains up to a
    // minute: its job (a slow but working target) finishes and is reported.
    let drain = |d: &str| vec!["--drain-timeout".to_string(), d.to_string()];
    let mut eu = agent_with(&c.grpc, "eu", &agent_token("eu"), &drain("300ms"));
    let mut us = agent_with(&c.grpc, "us", &agent_token("us"), &drain("60s"));
    until("two agents", Duration::from_secs(15), async || {
        agent_count(&c).await == 2
    })
    .await;
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let slow = Fixture::start(&[Fault::Slow]).await.unwrap();
    let on_eu = submit(
        &c,
        json!({"target": silent.url(), "regions": ["eu"], "deadline": "40s"}),
    )
    .await;
    let on_us = submit(
        &c,
        json!({"target": slow.url(), "regions": ["us"], "deadline": "40s"}),
    )
    .await;
    // Both agents have their job in flight (from their own metrics), then both get SIGTERM.
    wait_in_flight(&eu, 1, Duration::from_secs(10)).await;
    wait_in_flight(&us, 1, Duration::from_secs(10)).await;
    eu.signal("TERM");
    us.signal("TERM");
    let report = finished(&c, &on_eu).await;
    assert_eq!(regions_of(&report), [pair("eu", "error")], "{report:#}");
    assert_eq!(report["decision"], "unknown", "{report:#}");
    let missing = finding(&report, "fleet.region-missing");
    assert_eq!(missing["regions"], json!(["eu"]));
    assert_eq!(missing["severity"], "medium");
    // Why, in the report: not a bare "eu: error".
    let evidence = missing["evidence"][0].as_str().unwrap();
    assert!(
        evidence.starts_with("eu: error: the agent disconnected before it sent a result"),
        "{missing}"
    );
    assert!(
        missing["remediation"]
            .as_str()
            .unwrap()
            .starts_with("eu: run the check again once the region's agent is back"),
        "{missing}"
    );
    let report = finished(&c, &on_us).await;
    assert_eq!(regions_of(&report), [pair("us", "complete")], "{report:#}");
    assert_eq!(report["decision"], "pass", "{report:#}");
    for (a, name) in [(&mut eu, "eu"), (&mut us, "us")] {
        let status = a.wait_exit(Duration::from_secs(15));
        assert!(
            status.is_some_and(|s| s.success()),
            "{name}: {}",
            a.output()
        );
    }
    let eu_out = eu.output();
    assert!(
        eu_out.contains("stopping: draining running jobs") && eu_out.contains("jobs=1"),
        "{eu_out}"
    );
    assert!(
        eu_out.contains("drain timeout: 1 job(s) still running are abandoned"),
        "{eu_out}"
    );
    assert!(
        us.output().contains("drained: every running job answered"),
        "{}",
        us.output()
    );
    let out = c.proc.output();
    assert!(out.contains("agent leaving: no new jobs for it"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("agent disconnected") && l.contains("jobs_lost=1")),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_refuse_drop_and_reload_are_logged_at_the_default_level_without_escapes() {
    let dir = Scratch::new("life-logs");
    let fixture = Fixture::start(&[]).await.unwrap();
    let config = dir.join("coordinator.toml");
    let text = String::from(
        "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{ token_env = \"T_API\" }]\n\
         [fleet]\nlocal_agent = false\nheartbeat_interval = \"500ms\"\nagent_timeout = \"2s\"\n\
         [probe]\ncheck_timeout = \"2s\"\nallow_non_global = [\"127.0.0.0/8\"]\n\
         [[agents]]\nname = \"eu-1\"\nregion = \"eu\"\ntoken_env = \"T_AGENT_EU\"\n"
    );
    std::fs::write(&config, &text).unwrap();
    let c = start_coordinator_with(&config, &["eu"], None, &[]);
    let eu = agent(&c.grpc, "eu", &agent_token("eu"));
    let line = c.proc.wait_for("agent registered", Duration::from_secs(15));
    assert!(
        line.contains("INFO") && line.contains("region=eu") && line.contains("name=eu-1"),
        "{line}"
    );
    // Refused: a token no [[agents]] entry has; the log says where to add it.
    let _wrong = agent(&c.grpc, "eu", "not-a-configured-agent-token");
    let line = c.proc.wait_for("agent refused", Duration::from_secs(10));
    assert!(
        line.contains("unknown agent token") && line.contains("[[agents]]"),
        "{line}"
    );
    // Dropped: a frozen agent (stopped by its pid) is reaped after agent_timeout.
    eu.signal("STOP");
    let line = c.proc.wait_for("agent dropped", Duration::from_secs(10));
    assert!(
        line.contains("fleet.agent_timeout") && line.contains("region=eu"),
        "{line}"
    );
    eu.signal("CONT");
    // Reload: a check added, and probe.allow_non_global emptied. The probe settings need a
    // restart: the log says so and the running value stays (the loopback target is still
    // allowed).
    let next = text.replace(
        "allow_non_global = [\"127.0.0.0/8\"]",
        "allow_non_global = []",
    ) + &format!(
        "[[checks]]\ntarget = \"{}\"\ninterval = \"1h\"\n",
        fixture.url()
    );
    std::fs::write(&config, next).unwrap();
    c.proc.signal("HUP");
    let line = c
        .proc
        .wait_for("SIGHUP: configuration reloaded", Duration::from_secs(10));
    assert!(
        line.contains(&format!("checks added {}", fixture.url()))
            && line.contains("agents unchanged"),
        "{line}"
    );
    let line = c.proc.wait_for("needs a restart", Duration::from_secs(5));
    assert!(
        line.contains("SIGHUP: needs a restart to take effect: probe.allow_non_global"),
        "{line}"
    );
    until(
        "the thawed agent to re-register",
        Duration::from_secs(15),
        async || agent_count(&c).await == 1,
    )
    .await;
    let (_, report) = post_check(&c, json!({"target": fixture.url()}), true).await;
    assert_eq!(regions_of(&report), [pair("eu", "complete")], "{report:#}");
    assert_eq!(
        report["decision"], "pass",
        "the running allow_non_global still applies"
    );
    // stderr is a pipe here: no escape code anywhere.
    for (who, out) in [("coordinator", c.proc.output()), ("agent", eu.output())] {
        assert!(
            !out.contains('\x1b'),
            "{who} wrote an escape code to a pipe:\n{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line() {
    let dir = Scratch::new("life-json");
    let config = dir.join("coordinator.toml");
    // No api_tokens: the generated token's notice must be JSON too (it was a plain line).
    std::fs::write(
        &config,
        format!(
            "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\ngenerated_token_file = \"{}\"\n\
             [fleet]\nlocal_agent = false\n[[agents]]\nname = \"eu-1\"\nregion = \"eu\"\ntoken_env = \"T_AGENT_EU\"\n",
            dir.join("api-token").display()
        ),
    )
    .unwrap();
    let c = start_coordinator_with(&config, &["eu"], None, &["--log-format", "json"]);
    let a = agent_with(
        &c.grpc,
        "eu",
        &agent_token("eu"),
        &["--log-format".to_string(), "json".to_string()],
    );
    c.proc.wait_for("agent registered", Duration::from_secs(15));
    a.wait_for("registered with the coordinator", Duration::from_secs(5));
    for (who, out) in [("coordinator", c.proc.output()), ("agent", a.output())] {
        let mut events = 0;
        // stdout's one `vantage serve: api …` line is not a log line.
        for line in out
            .lines()
            .filter(|l| !l.starts_with("vantage serve: api "))
        {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{who}: not JSON ({e}): {line}"));
            assert!(
                v["level"].is_string() && v["message"].is_string(),
                "{who}: {line}"
            );
            events += 1;
        }
        assert!(events >= 2, "{who}: {out}");
    }
    let out = c.proc.output();
    let registered = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["message"] == "agent registered")
        .expect("a JSON agent registered event");
    assert_eq!(registered["region"], "eu");
    assert_eq!(registered["level"], "INFO");
    // The generated token's path is a field of a JSON event; no field prints Rust's `None`.
    let generated = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| {
            v["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("no server.api_tokens configured"))
        })
        .expect("a JSON event for the generated token");
    assert_eq!(
        generated["path"],
        dir.join("api-token").display().to_string()
    );
    assert!(!out.contains("\"None\""), "{out}");
}
