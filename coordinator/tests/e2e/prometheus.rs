//! Prometheus: the alert rules under `promtool`, the exposition under `promtool check
//! metrics`, the dashboard against the exported names, and a real Prometheus server
//! scraping a real coordinator whose scheduled check finds a fault, fires the alert (the
//! shipped rules with every `for` shortened to 2 s, in a test-only copy), and resolves it
//! when the fault is repaired.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use vantage_fixture::{Fault, Fixture};

use crate::procs::{free_addr, serve_config, Proc};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn tool(name: &str) -> String {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .unwrap();
    assert!(
        found.status.success(),
        "`{name}` is missing: apt-get install prometheus (bash .ci/run does)"
    );
    String::from_utf8_lossy(&found.stdout).trim().to_string()
}

const RULES: &str = "charts/vantage/files/vantage-rules.yaml";

#[test]
fn promtool_checks_and_unit_tests_every_alert() {
    let promtool = tool("promtool");
    let check = Command::new(&promtool)
        .args(["check", "rules"])
        .arg(repo().join(RULES))
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let test = Command::new(&promtool)
        .args(["test", "rules", "rules-test.yaml"])
        .current_dir(repo().join("coordinator/tests/alerts"))
        .output()
        .unwrap();
    let out =
        String::from_utf8_lossy(&test.stdout).to_string() + &String::from_utf8_lossy(&test.stderr);
    assert!(test.status.success() && out.contains("SUCCESS"), "{out}");
    // Every alert in the file has a unit test.
    let rules = std::fs::read_to_string(repo().join(RULES)).unwrap();
    let tests =
        std::fs::read_to_string(repo().join("coordinator/tests/alerts/rules-test.yaml")).unwrap();
    for line in rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
    {
        assert!(
            tests.contains(&format!("alertname: {line}")),
            "alert {line} has no promtool test"
        );
    }
}

#[tokio::test]
async fn the_exposition_passes_promtool_check_metrics() {
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let report = crate::support::check(&fixture.url()).await;
    let metrics = vantage_coordinator::metrics::Metrics::new(prometheus::Registry::new()).unwrap();
    // Per-target series exist for scheduled targets only: schedule it, then observe.
    metrics.set_schedule(&[(
        report.target.clone(),
        60.0,
        [("team".to_string(), "platform".to_string())].into(),
    )]);
    metrics.observe(&report);
    metrics.set_in_process(Some("local".into()));
    let fleet = vantage_coordinator::fleet::Registry::default();
    let text = metrics.render(&fleet, &["local".to_string()]);
    // A local target has no DNS section, no agent has been seen, nothing was degraded.
    let absent_here = [
        "vantage_dns_all_global",
        "vantage_dns_has_a_record",
        "vantage_agent_last_seen_timestamp_seconds",
        "vantage_region_degraded",
    ];
    for family in vantage_coordinator::metrics::ALL
        .iter()
        .filter(|f| !absent_here.contains(f))
    {
        assert!(
            text.contains(&format!("{family}{{")),
            "{family} missing from the exposition:\n{text}"
        );
    }
    assert!(text.contains("vantage_target_info{target="), "{text}");
    assert!(
        text.contains(&format!(
            "vantage_scheduled_runs_skipped_total{{target=\"{}\"}} 0",
            report.target
        )),
        "a counter starts at 0: {text}"
    );
    assert!(text.contains("\nprocess_cpu_seconds_total "), "{text}");
    assert!(text.contains("team=\"platform\""));
    // Bounded label values: no addresses, error strings or report ids.
    assert!(!text.contains(&report.id));
    assert!(
        !text.contains("127.0.0.1:")
            || text
                .lines()
                .all(|l| !l.contains("127.0.0.1:") || l.contains("target=\"http://127.0.0.1:"))
    );
    let mut child = Command::new(tool("promtool"))
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let msg =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "promtool check metrics: {msg}");
}

#[test]
fn the_dashboard_queries_only_exported_metrics() {
    let text = std::fs::read_to_string(repo().join("charts/vantage/files/dashboard.json")).unwrap();
    let dash: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    assert!(exprs.len() >= 10);
    let mut used = std::collections::BTreeSet::new();
    for e in &exprs {
        let bytes = e.as_bytes();
        let mut i = 0;
        while let Some(pos) = e[i..].find("vantage_") {
            let start = i + pos;
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            used.insert(e[start..end].to_string());
            i = end;
        }
    }
    for m in &used {
        assert!(
            vantage_coordinator::metrics::ALL.contains(&m.as_str()),
            "the dashboard queries {m}, which is not exported"
        );
    }
    for needed in [
        "vantage_decision",
        "vantage_gate_decision",
        "vantage_check_success",
        "vantage_dns_all_global",
        "vantage_agents_connected",
    ] {
        assert!(used.contains(needed), "the dashboard lacks {needed}");
    }
}

/// The rules file at `path` with every `for:` set to `wait`: the same alerts and
/// expressions, firing within seconds instead of minutes.
fn short_for(path: &str, wait: &str) -> String {
    let rules = std::fs::read_to_string(repo().join(path)).unwrap();
    let mut changed = 0;
    let out: Vec<String> = rules
        .lines()
        .map(|l| match l.find("for: ") {
            Some(i) if l[..i].trim().is_empty() => {
                changed += 1;
                format!("{}for: {wait}", &l[..i])
            }
            _ => l.to_string(),
        })
        .collect();
    let blocked = rules.find("alert: VantageTargetBlocked").unwrap();
    let next = rules[blocked..]
        .find("- alert:")
        .unwrap_or(rules.len() - blocked);
    assert!(
        rules[blocked..blocked + next].contains("for: "),
        "VantageTargetBlocked waits for a `for` in {path}: this test shortens it"
    );
    assert!(changed >= 1);
    out.join("\n") + "\n"
}

async fn query(prom: &str, q: &str) -> Vec<serde_json::Value> {
    let Ok(resp) = crate::support::http()
        .get(format!("http://{prom}/api/v1/query"))
        .query(&[("query", q)])
        .send()
        .await
    else {
        return Vec::new();
    };
    let v: serde_json::Value = resp.json().await.unwrap_or_default();
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

/// [`crate::procs::until`], polled every 250 ms (Prometheus evaluates every second).
async fn until(what: &str, within: Duration, f: impl AsyncFnMut() -> bool) -> Duration {
    crate::procs::until(what, within, Duration::from_millis(250), f).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_prometheus_fires_and_resolves_the_alert() {
    let prometheus = tool("prometheus");
    let fixture = Fixture::start(&[Fault::UnknownMethodHtml404])
        .await
        .unwrap();
    let dir = std::env::temp_dir().join(format!("vantage-prom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _cleanup = RemoveOnDrop(dir.clone());
    let api = free_addr();
    std::fs::write(
        dir.join("coordinator.toml"),
        format!(
            "[server]\napi_listen = \"{api}\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{{ token_env = \"T_API\" }}]\n\
             [fleet]\nheartbeat_interval = \"1s\"\nagent_timeout = \"5s\"\n\
             [probe]\ncheck_timeout = \"2s\"\nallow_non_global = [\"127.0.0.0/8\"]\n\
             [[checks]]\ntarget = \"{}\"\ninterval = \"1s\"\nlabels = {{ team = \"platform\" }}\n",
            fixture.url()
        ),
    )
    .unwrap();
    let coordinator = serve_config(&dir.join("coordinator.toml"));
    let prom = free_addr();
    std::fs::write(dir.join("rules-short-for.yaml"), short_for(RULES, "2s")).unwrap();
    std::fs::write(
        dir.join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {}\nscrape_configs:\n  - job_name: vantage\n    static_configs:\n      - targets: ['{api}']\n",
            dir.join("rules-short-for.yaml").display()
        ),
    )
    .unwrap();
    let mut cmd = Command::new(prometheus);
    cmd.arg(format!(
        "--config.file={}",
        dir.join("prometheus.yml").display()
    ))
    .arg(format!(
        "--storage.tsdb.path={}",
        dir.join("data").display()
    ))
    .arg(format!("--web.listen-address={prom}"));
    let server = Proc::spawn(cmd);
    server.wait_for(
        "Server is ready to receive web requests",
        Duration::from_secs(30),
    );

    let blocked = format!(
        "vantage_decision{{decision=\"blocked\",target=\"{}\"}} == 1",
        fixture.url()
    );
    until(
        "the blocked decision in Prometheus",
        Duration::from_secs(30),
        async || !query(&prom, &blocked).await.is_empty(),
    )
    .await;
    let alert = "ALERTS{alertname=\"VantageTargetBlocked\"}";
    let firing = async || {
        query(&prom, alert).await.iter().any(|s| {
            s["metric"]["target"] == fixture.url().as_str()
                && s["metric"]["alertstate"] == "firing"
                && s["metric"]["severity"] == "critical"
        })
    };
    let t = until(
        "the VantageTargetBlocked alert firing",
        Duration::from_secs(30),
        firing,
    )
    .await;
    eprintln!("alert firing {t:?} after the decision");
    let info = query(&prom, "vantage_target_info{team=\"platform\"}").await;
    assert_eq!(info.len(), 1, "{info:?}");

    // Repair the fault: the next scheduled runs pass and the alert resolves.
    fixture.set_faults(&[]);
    let pass = format!(
        "vantage_decision{{decision=\"pass\",target=\"{}\"}} == 1",
        fixture.url()
    );
    until("the pass decision", Duration::from_secs(30), async || {
        !query(&prom, &pass).await.is_empty()
    })
    .await;
    until(
        "the alert to resolve",
        Duration::from_secs(30),
        async || query(&prom, alert).await.is_empty(),
    )
    .await;
    drop(server);
    drop(coordinator);
}

/// Removes a directory when dropped: on success and when an assertion fails alike.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_port_serves_monitoring_only_with_the_same_auth() {
    let dir = crate::support::Scratch::new("prom-metricsport");
    let c = crate::procs::coordinator(
        &dir,
        &["eu"],
        "127.0.0.1:0",
        "127.0.0.1:0",
        "[server]\nmetrics_listen = \"127.0.0.1:0\"\nmetrics_require_auth = true\n",
    );
    let line = c
        .proc
        .wait_for("vantage serve: api", Duration::from_secs(5));
    let metrics = line
        .split_whitespace()
        .skip_while(|w| *w != "metrics")
        .nth(1)
        .expect("the ready line names the metrics port")
        .to_string();
    assert_ne!(metrics, c.api);
    // `vantage check --coordinator` pointed at the metrics port without a token names the
    // port, not a token file.
    let out = std::process::Command::new(crate::procs::bin("vantage"))
        .args(["check", "http://127.0.0.1:9/mcp", "--coordinator", &metrics])
        .env_remove("VANTAGE_API_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(
        e.contains("the metrics port serves GET /metrics") && !e.contains("needs a token"),
        "{e}"
    );
    let get = |url: String, token: Option<&'static str>| async move {
        let mut req = crate::support::http().get(url);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    };
    let token = Some(crate::procs::API_TOKEN);
    let (st, body) = get(format!("{metrics}/metrics"), token).await;
    assert_eq!(st, 200, "{body}");
    assert!(
        body.contains("vantage_region_info{region=\"eu\",vantage=\"agents\"} 1"),
        "{body}"
    );
    // The same rule as the API port: /metrics wants the token when metrics_require_auth.
    let (st, _) = get(format!("{metrics}/metrics"), None).await;
    assert_eq!(st, 401);
    assert_eq!(get(format!("{metrics}/readyz"), None).await.0, 200);
    assert_eq!(get(format!("{metrics}/healthz"), None).await.0, 200);
    // Only monitoring here: the API stays on its own port.
    let (st, body) = get(format!("{metrics}/v1/agents"), token).await;
    assert_eq!(st, 404, "{body}");
    assert!(body.contains("the API is on server.api_listen"), "{body}");
    assert_eq!(get(format!("{}/v1/agents", c.api), token).await.0, 200);
    drop(c);
}

/// A scheduled check that names a baseline: the finding it accepts is exported with
/// `accepted="true"`, the others with `accepted="false"` (the finding alerts skip the first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_baseline_marks_accepted_findings_in_the_metrics() {
    let fixture = Fixture::start(&[Fault::GetHtml, Fault::Delete200])
        .await
        .unwrap();
    let dir = crate::support::Scratch::new("sched-baseline");
    let baseline = dir.join("baseline.toml");
    std::fs::write(
        &baseline,
        format!(
            "[[accept]]\nendpoint = \"{}\"\nfinding = \"transport.get\"\nreason = \"the gateway page, OPS-9\"\nexpires = 2099-12-31\n",
            fixture.url()
        ),
    )
    .unwrap();
    let api = free_addr();
    let config = dir.join("coordinator.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\napi_listen = \"{api}\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{{ token_env = \"T_API\" }}]\n\
             [probe]\ncheck_timeout = \"2s\"\nallow_non_global = [\"127.0.0.0/8\"]\n\
             [[checks]]\ntarget = \"{}\"\ninterval = \"1s\"\nbaseline = \"{}\"\n",
            fixture.url(),
            baseline.display()
        ),
    )
    .unwrap();
    let _coordinator = serve_config(&config);
    let client = crate::support::http();
    let series = |accepted: &str, finding: &str| {
        format!(
            "vantage_finding_active{{accepted=\"{accepted}\",finding=\"{finding}\",scope=\"global\",severity=\"medium\",target=\"{}\"}} 1",
            fixture.url()
        )
    };
    let mut text = String::new();
    until(
        "the scheduled run's findings",
        Duration::from_secs(30),
        async || {
            text = match client.get(format!("http://{api}/metrics")).send().await {
                Ok(r) => r.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            text.contains("vantage_finding_active{")
        },
    )
    .await;
    assert!(text.contains(&series("true", "transport.get")), "{text}");
    assert!(
        text.contains(&series("false", "transport.delete")),
        "{text}"
    );
}
