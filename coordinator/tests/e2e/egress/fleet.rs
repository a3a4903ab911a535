//! The fleet obeys the same policy: the reproduction against a real `vantage serve`
//! with its in-process vantage, and real agents, one of which refuses a job whose policy is
//! wider than its own `--allow-non-global-max`.

use std::time::Duration;

use serde_json::json;

use super::{Hostile, Lab, SECRET};
use crate::evidence_support::{check_came_out, check_of, finding};
use crate::fleet::{check, wait_agents};
use crate::procs::{agent_token, agent_with, free_addr, start_coordinator};
use crate::support::tmpdir;

fn config(local_agent: bool, regions: &[&str]) -> String {
    let mut text = format!(
        "[server]\napi_listen = \"{}\"\ngrpc_listen = \"{}\"\napi_tokens = [{{ token_env = \"T_API\" }}]\n\
         [fleet]\nlocal_agent = {local_agent}\nheartbeat_interval = \"500ms\"\nagent_timeout = \"3s\"\ndefault_deadline = \"10s\"\n\
         [probe]\ncheck_timeout = \"2s\"\nallow_non_global = [\"127.0.0.2/32\"]\n",
        free_addr(),
        free_addr()
    );
    for r in regions {
        text.push_str(&format!(
            "[[agents]]\nname = \"{r}-1\"\nregion = \"{r}\"\ntoken_env = \"T_AGENT_{}\"\n",
            r.to_uppercase()
        ));
    }
    text
}

/// The reproduction: `vantage serve` with `local_agent = true` and
/// `probe.allow_non_global = ["127.0.0.2/32"]`; the target on 127.0.0.2 answers 401 with
/// `resource_metadata` on 127.0.0.1, which the policy does not allow. Before the fix the
/// vantage fetched it and the credential appeared in the report's evidence.
#[tokio::test]
async fn the_in_process_vantage_of_vantage_serve_refuses_the_metadata_url() {
    let lab = Lab::start(|port| {
        Hostile::pointing_at(format!("http://127.0.0.1:{port}/latest/meta-data/iam"))
    })
    .await;
    let dir = tmpdir("egress-serve");
    let path = dir.join("coordinator.toml");
    std::fs::write(&path, config(true, &[])).unwrap();
    let c = start_coordinator(&path, &[]);
    let report = check(
        &c,
        json!({"target": format!("http://127.0.0.2:{}/mcp", lab.port), "regions": ["local"]}),
    )
    .await;
    lab.assert_contained(&format!("{report:#}"));
    let text = report.to_string();
    assert!(!text.contains(SECRET), "{report:#}");
    assert_eq!(report["regions"][0]["region"], "local");
    let prm = check_came_out(&report, "local", "auth.prm", "unknown", "policy-refused");
    let observed = prm["observed"].as_str().unwrap();
    assert!(
        observed.contains("refused by egress policy: 127.0.0.1 is loopback (RFC 1122); allow it with probe.allow_non_global"),
        "{observed}"
    );
    // The target itself is allowed and was observed.
    assert_eq!(check_of(&report, "local", "net.connect")["outcome"], "pass");
    assert_eq!(
        check_of(&report, "local", "auth.challenge")["outcome"],
        "pass"
    );
    assert!(!c.proc.output().contains(SECRET), "the coordinator's log");
    drop(c);
    let _ = std::fs::remove_dir_all(dir);
}

/// Agents take the policy from the job and refuse the internal service (the IPv4-mapped
/// literal here); an agent whose ceiling is narrower than the job's policy refuses the
/// job and says why.
#[tokio::test]
async fn agents_obey_the_job_policy_and_their_own_ceiling() {
    let lab =
        Lab::start(|port| Hostile::pointing_at(format!("http://[::ffff:127.0.0.1]:{port}/prm")))
            .await;
    let dir = tmpdir("egress-agents");
    let path = dir.join("coordinator.toml");
    std::fs::write(&path, config(false, &["eu", "us"])).unwrap();
    let c = start_coordinator(&path, &["eu", "us"]);
    let wide = agent_with(
        &c.grpc,
        "eu",
        &agent_token("eu"),
        &["--allow-non-global-max".into(), "127.0.0.0/8".into()],
    );
    let narrow = agent_with(
        &c.grpc,
        "us",
        &agent_token("us"),
        &["--allow-non-global-max".into(), "none".into()],
    );
    wait_agents(&c, 2, Duration::from_secs(20)).await;
    let report = check(
        &c,
        json!({"target": format!("http://127.0.0.2:{}/mcp", lab.port), "regions": ["eu", "us"]}),
    )
    .await;
    lab.assert_contained(&format!("{report:#}"));
    assert!(!report.to_string().contains(SECRET));
    let regions = report["regions"].as_array().unwrap();
    let us = regions.iter().find(|r| r["region"] == "us").unwrap();
    let prm = check_of(&report, "eu", "auth.prm");
    assert_eq!(prm["cause"], "policy-refused", "{prm}");
    assert!(prm["observed"]
        .as_str()
        .unwrap()
        .contains("refused by egress policy: ::ffff:127.0.0.1 is loopback"));
    assert_eq!(us["status"], "error", "{us}");
    assert!(us["checks"].as_array().unwrap().is_empty());
    // The agent's reason reaches the report, with a fix that fits (not "check that an
    // agent is connected": it is connected and healthy).
    let missing = finding(&report, "fleet.region-missing");
    assert_eq!(missing["regions"], json!(["us"]), "{missing}");
    // The refusing agent is named, in the evidence and as the region's agent (fresh eyes
    // round 14, item 3).
    let agent = us["agent"]
        .as_str()
        .expect("the refusing agent named")
        .to_string();
    assert_eq!(
        missing["evidence"],
        json!([format!("us: error: the agent ({agent}) is connected and refused the job: probe.allow_non_global names 127.0.0.2/32, wider than this agent's --allow-non-global-max (none); narrow probe.allow_non_global in the coordinator's configuration or widen the agent's ceiling")]),
        "{missing}"
    );
    let fix = missing["remediation"].as_str().unwrap();
    assert!(
        fix.starts_with("us: the agent refused the job: widen the agent's --allow-non-global-max or narrow probe.allow_non_global"),
        "{fix}"
    );
    assert!(
        !fix.contains("connected and healthy (GET /v1/agents)"),
        "{fix}"
    );
    narrow.wait_for(
        "probe.allow_non_global names 127.0.0.2/32, wider than this agent's --allow-non-global-max (none)",
        Duration::from_secs(5),
    );
    for p in [&wide, &narrow] {
        assert!(!p.output().contains(SECRET));
    }
    drop((wide, narrow, c));
    let _ = std::fs::remove_dir_all(dir);
}
