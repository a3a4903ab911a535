//! A SIGHUP that replaces an agent's token cuts off the agent holding the old one (red team
//! round 7, item 5): it leaves GET /v1/agents, its region's next check finds no agent (never
//! the revoked agent, never its credentials), the log says why without the token, the agent
//! is told PERMISSION_DENIED and why, and the agent whose token is unchanged keeps working.

use std::time::Duration;

use serde_json::json;
use vantage_fixture::Fixture;

use crate::fleet::{check, wait_agents};
use crate::procs::{agent, agent_token, coordinator};
use crate::support::{regions_of, tmpdir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_replaces_an_agent_token_cuts_that_agent_off() {
    let dir = tmpdir("reload-revoke");
    let fx = Fixture::start(&[]).await.unwrap();
    let c = coordinator(&dir, &["eu", "us"], "127.0.0.1:0", "127.0.0.1:0", "");
    let eu = agent(&c.grpc, "eu", &agent_token("eu"));
    let us = agent(&c.grpc, "us", &agent_token("us"));
    wait_agents(&c, 2, Duration::from_secs(30)).await;

    // The eu token is rotated: the entry now reads a new token from a file.
    let new_token = "vantage-test-agent-token-eu-rotated-3b7c";
    let file = dir.join("eu-new.token");
    std::fs::write(&file, new_token).unwrap();
    let text = std::fs::read_to_string(&c.config).unwrap().replace(
        "token_env = \"T_AGENT_EU\"",
        &format!("token_file = \"{}\"", file.display()),
    );
    assert!(text.contains("eu-new.token"), "{text}");
    std::fs::write(&c.config, text).unwrap();
    c.proc.signal("HUP");
    c.proc
        .wait_for("configuration reloaded", Duration::from_secs(10));
    let line = c.proc.wait_for(
        "agent disconnected: this agent's token was revoked by a configuration reload",
        Duration::from_secs(10),
    );
    assert!(
        line.contains("region=eu") && line.contains("name=eu-1"),
        "{line}"
    );
    // The agent was told why (it keeps retrying with its old token, refused).
    eu.wait_for(
        "this agent's token was revoked by a configuration reload",
        Duration::from_secs(10),
    );
    wait_agents(&c, 1, Duration::from_secs(10)).await;

    // eu has no agent: its region is missing, never served by the revoked agent.
    let report = check(&c, json!({"target": fx.url(), "regions": ["eu", "us"]})).await;
    let regions = regions_of(&report);
    assert_eq!(
        regions,
        vec![
            ("eu".to_string(), "no-agent".to_string()),
            ("us".to_string(), "complete".to_string())
        ],
        "{report:#}"
    );

    // Only the file's contents change (the entry stays): the reload line says whose token
    // was replaced, not "agents unchanged".
    let third_token = "vantage-test-agent-token-eu-rotated-again-9e1f";
    std::fs::write(&file, third_token).unwrap();
    c.proc.signal("HUP");
    let line = c
        .proc
        .wait_for("token of eu/eu-1 replaced", Duration::from_secs(10));
    assert!(
        line.contains("configuration reloaded")
            && line.contains("agents changed: token of eu/eu-1 replaced;"),
        "{line}"
    );

    // Nothing logged carries a token.
    let log = c.proc.output();
    for secret in [
        agent_token("eu"),
        new_token.to_string(),
        third_token.to_string(),
    ] {
        assert!(!log.contains(&secret), "a token in the log:\n{log}");
    }
    drop((eu, us));
}
