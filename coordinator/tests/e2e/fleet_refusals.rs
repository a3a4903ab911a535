//! Red team round 12 (D3, N3): an agent that refuses every job is counted per region on
//! both sides (the coordinator's `vantage_region_jobs_refused_total`, the agent's
//! `vantage_agent_jobs_refused_total`), and a region's block in the report names the agent
//! that served it, as `GET /v1/agents` lists it.

use std::time::Duration;

use serde_json::{json, Value};
use vantage_fixture::Fixture;

use crate::evidence_support::finding;
use crate::fleet::{check, wait_agents};
use crate::procs::{agent_health, agent_token, agent_with, coordinator, API_TOKEN};
use crate::support::{http, regions_of, tmpdir};

async fn text(url: String, token: Option<&str>) -> String {
    let mut req = http().get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.expect("GET");
    assert_eq!(resp.status(), 200);
    resp.text().await.expect("a body")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_jobs_are_counted_per_region_and_the_report_names_the_serving_agent() {
    let dir = tmpdir("fleet-refusals");
    // The coordinator's policy allows 127.0.0.0/8; d's agent allows no non-global address.
    let c = coordinator(&dir, &["eu", "d"], "127.0.0.1:0", "127.0.0.1:0", "");
    let id = |s: &str| vec!["--id".to_string(), s.to_string()];
    let _eu = agent_with(&c.grpc, "eu", &agent_token("eu"), &id("ag-eu"));
    let mut d_args = id("ag-d");
    d_args.extend(["--allow-non-global-max".to_string(), "none".to_string()]);
    let d = agent_with(&c.grpc, "d", &agent_token("d"), &d_args);
    wait_agents(&c, 2, Duration::from_secs(15)).await;
    let fixture = Fixture::start(&[]).await.unwrap();
    let report = check(&c, json!({"target": fixture.url(), "regions": ["eu", "d"]})).await;
    assert_eq!(report["decision"], "unknown", "{report}");
    assert_eq!(
        regions_of(&report),
        [
            ("d".to_string(), "error".to_string()),
            ("eu".to_string(), "complete".to_string())
        ]
    );
    let missing = finding(&report, "fleet.region-missing");
    assert_eq!(missing["regions"], json!(["d"]));
    assert!(missing.to_string().contains("refused the job"), "{missing}");
    // N3: the block of eu names its agent; d's names the agent that refused (fresh eyes
    // round 14, item 3: it named none, so which of a region's agents refused was unknown).
    let block = |name: &str| -> Value {
        report["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["region"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(block("eu")["agent"], "ag-eu", "{report}");
    assert_eq!(block("d")["agent"], "ag-d", "{report}");
    let agents: Value =
        serde_json::from_str(&text(format!("{}/v1/agents", c.api), Some(API_TOKEN)).await).unwrap();
    assert!(
        agents["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == "ag-eu" && a["region"] == "eu"),
        "{agents}"
    );
    // D3: the coordinator counts d's refusal (and none for eu); so does d's agent.
    let metrics = text(format!("{}/metrics", c.api), None).await;
    for line in [
        "vantage_region_jobs_refused_total{region=\"d\"} 1",
        "vantage_region_jobs_refused_total{region=\"eu\"} 0",
    ] {
        assert!(metrics.contains(line), "{line} missing:\n{metrics}");
    }
    let own = text(format!("http://{}/metrics", agent_health(&d)), None).await;
    for line in [
        "vantage_agent_jobs_refused_total{region=\"d\"} 1",
        "vantage_agent_jobs_total{region=\"d\"} 0",
    ] {
        assert!(own.contains(line), "{line} missing:\n{own}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
