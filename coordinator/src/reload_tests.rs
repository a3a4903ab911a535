//! Tests of what a reload says it changed.

use super::*;

fn cfg(text: &str) -> Config {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("vantage-reload-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{}.toml", text.len()));
    std::fs::write(&p, text).unwrap();
    let c = Config::load_with_env(Some(&p), Vec::new());
    // The directory goes too (it was left in /tmp by every run).
    let _ = std::fs::remove_dir_all(&dir);
    c.unwrap()
}

#[test]
fn a_reload_names_what_changed_and_what_needs_a_restart() {
    let old = cfg("[probe]\nallow_non_global = [\"127.0.0.0/8\"]\n[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\n[[checks]]\ntarget = \"https://c.example/mcp\"\ninterval = \"1m\"\n");
    let new = cfg("[server]\ndrain_timeout = \"5s\"\n[probe]\nallow_non_global = []\n[[checks]]\ntarget = \"https://b.example/mcp\"\ninterval = \"1m\"\n[[checks]]\ntarget = \"https://c.example/mcp\"\ninterval = \"2m\"\n");
    let c = changes(&old, &new, false);
    assert_eq!(c.checks.added, ["https://b.example/mcp"]);
    assert_eq!(c.checks.removed, ["https://a.example/mcp"]);
    assert_eq!(c.checks.changed, ["https://c.example/mcp"]);
    assert_eq!(
        c.restart,
        ["probe.allow_non_global"],
        "drain_timeout applies live"
    );
    assert_eq!(
        c.to_string(),
        "checks added https://b.example/mcp; removed https://a.example/mcp; changed https://c.example/mcp; agents unchanged; credentials unchanged; api tokens unchanged"
    );
    let same = changes(&old, &old, false);
    assert!(same.restart.is_empty());
    assert_eq!(
        same.to_string(),
        "checks unchanged; agents unchanged; credentials unchanged; api tokens unchanged"
    );
    let listen = cfg("[server]\napi_listen = \"127.0.0.1:9\"\n[fleet]\nagent_timeout = \"20s\"\n");
    let c = changes(&Config::default(), &listen, true);
    assert_eq!(c.restart, ["fleet.agent_timeout", "server.api_listen"]);
    assert!(c.api_tokens);
}

fn auth(region: &str, name: &str, token: &str) -> AgentAuth {
    AgentAuth {
        name: name.into(),
        region: region.into(),
        token: SecretString::from(token.to_string()),
    }
}

/// A token file rewritten behind an unchanged [[agents]] entry: the line says which agent's
/// token was replaced (never the token), not "agents unchanged".
#[test]
fn a_token_replaced_behind_an_unchanged_entry_is_named() {
    let text = "[[agents]]\nname = \"eu-1\"\nregion = \"eu\"\ntoken_file = \"/run/eu.token\"\n[[agents]]\nname = \"us-1\"\nregion = \"us\"\ntoken_file = \"/run/us.token\"\n";
    let (old_cfg, new_cfg) = (cfg(text), cfg(text));
    let old = [
        auth("eu", "eu-1", "old-eu-token-5f2a9c"),
        auth("us", "us-1", "us-token-7d1e3b"),
    ];
    let new = [
        auth("eu", "eu-1", "new-eu-token-8b4d0e"),
        auth("us", "us-1", "us-token-7d1e3b"),
    ];
    let mut c = changes(&old_cfg, &new_cfg, false);
    assert_eq!(c.agents, Delta::default(), "the entries are the same");
    c.agent_tokens = replaced_tokens(&old, &new, &c.agents);
    assert_eq!(c.agent_tokens, ["eu/eu-1"]);
    let line = c.to_string();
    assert_eq!(
        line,
        "checks unchanged; agents changed: token of eu/eu-1 replaced; credentials unchanged; api tokens unchanged"
    );
    assert!(!line.contains("token-"), "no token in the line: {line}");
    // Beside an entry change, both are said; an entry that changed is not named twice.
    let moved = cfg(&text.replace("region = \"us\"", "region = \"ap\""));
    let mut c = changes(&old_cfg, &moved, false);
    let new = [
        auth("eu", "eu-1", "new-eu-token-8b4d0e"),
        auth("ap", "us-1", "ap-token-0c9f4a"),
    ];
    c.agent_tokens = replaced_tokens(&old, &new, &c.agents);
    assert_eq!(c.agent_tokens, ["eu/eu-1"]);
    assert!(
        c.to_string()
            .contains("agents changed us-1; token of eu/eu-1 replaced;"),
        "{c}"
    );
    // Nothing replaced: as before.
    assert!(replaced_tokens(&old, &old, &Delta::default()).is_empty());
}
