//! Issue 12 in fleet mode, with real processes: `vantage serve` (its in-process vantage or
//! real `vantage-agent`s, each with its own lab resolver), `vantage check --coordinator`,
//! and the helpers the reproductions share: a gateway that strips one request header, and
//! the TypeScript SDK 1.x example server with its demo authorization server.

use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use vantage_fixture::{Fault, Fixture, FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN};

use crate::evidence_support::{
    check_came_out, check_of, finding, free_port, json_check, row, s, shape,
};
use crate::fleet::{check, wait_agents};
use crate::procs::{agent_token, agent_with, coordinator, start_coordinator_env, Proc, API_TOKEN};
use crate::support::{tmpdir, vantage_env, LabDns};

/// 1: `vantage serve` with its in-process vantage and `vantage check --coordinator` on a
/// loopback target. The vantage refused the address by policy and skipped every check: it
/// was PASS, exit 0, and the text never said why. It is `probe.policy-refused`, unknown,
/// exit 4, and the first screen says why and names `probe.allow_non_global`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reproduction_1_a_fleet_vantage_that_refused_by_policy_never_passes() {
    let dir = tmpdir("ev-policy");
    let config = dir.join("serve.toml");
    std::fs::write(
        &config,
        "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{ token_env = \"T_API\" }]\n",
    )
    .unwrap();
    let c = start_coordinator_env(&config, &[], &[]);
    let target = format!("http://127.0.0.1:{}/mcp", free_port());
    let env = [("VANTAGE_API_TOKEN", API_TOKEN)];
    let (code, report) = json_check(&[&target, "--coordinator", &c.api], &env).await;
    assert_eq!(
        shape(&report),
        vec![row("probe.policy-refused", "medium", "global", &["local"])]
    );
    assert_eq!((code, report["decision"].as_str()), (4, Some("unknown")));
    check_came_out(&report, "local", "net.connect", "unknown", "policy-refused");
    let out = vantage_env(&["check", &target, "--coordinator", &c.api], &env).await;
    assert_eq!(out.status.code(), Some(4));
    let text = s(&out.stdout);
    let first: Vec<&str> = text.lines().take(5).collect();
    let first = first.join("\n");
    assert!(first.starts_with("UNKNOWN"), "{text}");
    assert!(first.contains("probe.policy-refused"), "{text}");
    assert!(
        first.contains("probe.allow_non_global") && first.contains("--assume-global"),
        "{text}"
    );
    let md = vantage_env(
        &["check", &target, "--coordinator", &c.api, "-f", "markdown"],
        &env,
    )
    .await;
    let md = s(&md.stdout);
    assert!(
        md.lines()
            .take(8)
            .any(|l| l.contains("probe.allow_non_global")),
        "{md}"
    );
    drop(c);
    std::fs::remove_dir_all(&dir).ok();
}

/// The report of a check of `http://mcp.vantage.test:PORT/mcp` by two agents, each asking
/// its own lab resolver: `eu` and `us` get the views given. The fleet is gone when it
/// returns.
async fn two_regions_report(
    name: &str,
    port: u16,
    eu: &[(&str, &[&str])],
    us: &[(&str, &[&str])],
) -> serde_json::Value {
    let dir = tmpdir(name);
    let c = coordinator(
        &dir,
        &["eu", "us"],
        "127.0.0.1:0",
        "127.0.0.1:0",
        "assume_global = [\"127.0.0.0/8\"]\n",
    );
    let dns = vec![LabDns::start(eu).await, LabDns::start(us).await];
    let agents: Vec<Proc> = [("eu", &dns[0]), ("us", &dns[1])]
        .iter()
        .map(|(r, d)| {
            agent_with(
                &c.grpc,
                r,
                &agent_token(r),
                &["--nameserver".into(), d.addr.to_string()],
            )
        })
        .collect();
    wait_agents(&c, 2, Duration::from_secs(15)).await;
    let report = check(
        &c,
        json!({"target": format!("http://mcp.vantage.test:{port}/mcp")}),
    )
    .await;
    drop((agents, dns, c));
    std::fs::remove_dir_all(&dir).ok();
    report
}

/// 3: an info warning (`transport.sse-buffering`) in one region raised `edge.divergent`
/// (medium, review). Warnings never diverge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reproduction_3_a_warning_in_one_region_is_no_divergence() {
    let clean = Fixture::start(&[]).await.unwrap();
    let port = clean.addr.port();
    let other = TcpListener::bind(("127.0.0.2", port)).await.unwrap();
    let buffered = Fixture::serve(other, &[Fault::SseNoAccelBuffering]);
    let report = two_regions_report(
        "ev-warn",
        port,
        &[("mcp.vantage.test", &["127.0.0.1"])],
        &[("mcp.vantage.test", &["127.0.0.2"])],
    )
    .await;
    // A named http:// target is a real high finding everywhere; nothing diverges.
    assert_eq!(
        shape(&report),
        vec![row("tls.plain-http", "high", "global", &["eu", "us"])]
    );
    let sse = finding(&report, "transport.sse-buffering");
    assert_eq!(
        (sse["severity"].as_str(), sse["regions"][0].as_str()),
        (Some("info"), Some("us"))
    );
    assert_eq!(
        check_of(&report, "us", "transport.sse-buffering")["outcome"],
        "warn"
    );
    drop((clean, buffered));
}

/// 4: eu cannot connect while us gets NXDOMAIN: a global `net.connect` ("no vantage can
/// connect") came out. us has no evidence about connecting: regional findings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reproduction_4_a_region_without_evidence_makes_nothing_global() {
    let port = free_port();
    let report = two_regions_report(
        "ev-scope",
        port,
        &[("mcp.vantage.test", &["127.0.0.3"])],
        &[("other.vantage.test", &["127.0.0.1"])],
    )
    .await;
    assert_eq!(
        shape(&report),
        vec![
            row("dns.split-horizon", "high", "regional", &["us"]),
            row("net.connect", "high", "regional", &["eu"]),
        ]
    );
    assert_eq!(report["decision"], "blocked");
}

/// 7: fleet jobs carried only the main token, so `auth.wrong-audience` and
/// `auth.insufficient-scope` were always skipped in fleet mode. `[[credentials]]` names the
/// negative tokens (from env or files), and every agent runs them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reproduction_7_fleet_jobs_carry_the_negative_tokens() {
    let dir = tmpdir("ev-creds");
    let extra = "[[credentials]]\nname = \"prod\"\ntoken_env = \"T_CRED_PROD\"\nother_audience_env = \"T_CRED_OTHER\"\nmissing_scope_env = \"T_CRED_SCOPE\"\n";
    let cfg = coordinator(&dir, &["eu", "us"], "127.0.0.1:0", "127.0.0.1:0", "");
    let config = cfg.config.clone();
    drop(cfg);
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(extra);
    std::fs::write(&config, text).unwrap();
    let c = start_coordinator_env(
        &config,
        &["eu", "us"],
        &[
            ("T_CRED_OTHER", FIXTURE_OTHER_AUDIENCE_TOKEN),
            ("T_CRED_SCOPE", FIXTURE_NO_SCOPE_TOKEN),
        ],
    );
    let _agents: Vec<Proc> = ["eu", "us"]
        .iter()
        .map(|r| agent_with(&c.grpc, r, &agent_token(r), &[]))
        .collect();
    wait_agents(&c, 2, Duration::from_secs(15)).await;
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let report = check(&c, json!({"target": fixture.url(), "credential": "prod"})).await;
    assert_eq!(report["decision"], "pass", "{:?}", shape(&report));
    for region in ["eu", "us"] {
        for id in ["auth.wrong-audience", "auth.insufficient-scope"] {
            assert_eq!(
                check_of(&report, region, id)["outcome"],
                "pass",
                "{region} {id}"
            );
        }
    }
    // And a lax server is caught from the agents too.
    fixture.set_faults(&[Fault::Protected, Fault::AuthWrongAudienceAccepted]);
    let report = check(&c, json!({"target": fixture.url(), "credential": "prod"})).await;
    assert!(
        shape(&report).contains(&row(
            "auth.invalid-token-accepted",
            "critical",
            "global",
            &["eu", "us"]
        )),
        "{:?}",
        shape(&report)
    );
    assert!(!report.to_string().contains(FIXTURE_OTHER_AUDIENCE_TOKEN));
    std::fs::remove_dir_all(&dir).ok();
}
