use std::path::Path;
use std::time::Duration;

use super::*;

fn example(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

pub(super) fn var(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// Write `text` to a fresh file and load it with `env`.
/// The error loading `text` (with no environment) ends in.
fn refused(name: &str, text: &str) -> ConfigError {
    load_text(name, text, vec![]).unwrap_err()
}

pub(super) fn load_text(
    name: &str,
    text: &str,
    env: Vec<(String, String)>,
) -> Result<Config, ConfigError> {
    let dir = std::env::temp_dir().join(format!("vantage-cfg-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("vantage.toml");
    std::fs::write(&p, text).unwrap();
    let r = Config::load_with_env(Some(&p), env);
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

#[test]
fn the_example_config_parses_and_documents_every_key() {
    let path = example("vantage.example.toml");
    let cfg = Config::load_with_env(Some(&path), Vec::new()).expect("the example parses");
    assert_eq!(cfg.agents.len(), 3);
    assert_eq!(cfg.checks.len(), 1);
    assert_eq!(cfg.checks[0].target.host, "mcp.example.com");
    assert_eq!(cfg.checks[0].interval, Duration::from_secs(60));
    assert_eq!(
        cfg.checks[0].labels.get("team").map(String::as_str),
        Some("platform")
    );
    assert_eq!(cfg.regions(), ["ap-south", "eu-west", "local", "us-east"]);
    let text = std::fs::read_to_string(&path).unwrap();
    for key in [
        "api_listen",
        "grpc_listen",
        "metrics_listen",
        "api_tokens",
        "metrics_require_auth",
        "max_body_bytes",
        "checks_per_target_per_minute",
        "max_checks_in_flight",
        "drain_timeout",
        "generated_token_file",
        "cert_file",
        "key_file",
        "client_ca_file",
        "local_agent",
        "local_region",
        "heartbeat_interval",
        "agent_timeout",
        "default_deadline",
        "max_reports",
        "max_age",
        "check_timeout",
        "assume_global",
        "allow_non_global",
        "ca_file",
        "ipv6",
        "other_audience_env",
        "missing_scope_file",
        "token_env",
        "token_file",
        "baseline",
    ] {
        assert!(
            text.contains(key),
            "vantage.example.toml does not document `{key}`"
        );
    }
}

#[test]
fn the_quickstart_config_parses_for_one_machine_and_two_agents() {
    let cfg = Config::load_with_env(Some(&example("vantage.quickstart.toml")), Vec::new())
        .expect("the quick-start config parses");
    assert_eq!(cfg.regions(), ["eu", "us"]);
    assert!(!cfg.fleet.local_agent);
    assert!(cfg.server.api_listen.ip().is_loopback() && cfg.server.grpc_listen.ip().is_loopback());
    assert!(cfg.agents.iter().all(|a| a.token_file.is_some()));
}

#[test]
fn defaults_work_without_a_file() {
    let cfg = Config::load_with_env(None, Vec::new()).unwrap();
    assert!(cfg.fleet.local_agent);
    assert_eq!(cfg.regions(), ["local"]);
    assert_eq!(cfg.server.api_listen.port(), 8080);
    assert_eq!(cfg.server.drain_timeout, Duration::from_secs(20));
}

#[test]
fn environment_overrides_known_sections_only() {
    let env = vec![
        var("VANTAGE_SERVER__API_LISTEN", "127.0.0.1:9999"),
        var("VANTAGE_SERVER__MAX_BODY_BYTES", "1024"),
        var("VANTAGE_SERVER__METRICS_REQUIRE_AUTH", "true"),
        // A region named like a number stays a string.
        var("VANTAGE_FLEET__LOCAL_REGION", "123"),
        var("VANTAGE_PROBE__ALLOW_NON_GLOBAL", "127.0.0.0/8,::1/128"),
        var("VANTAGE_SERVER__TLS__CERT_FILE", "/c"),
        var("VANTAGE_SERVER__TLS__KEY_FILE", "/k"),
        var("VANTAGE_LOG", "debug"),
        var("VANTAGE_API_TOKEN", "x"),
        var("VANTAGE_AGENT_TOKEN_EU_WEST", "y"),
    ];
    let cfg = Config::load_with_env(None, env).unwrap();
    assert_eq!(cfg.server.api_listen.port(), 9999);
    assert_eq!(cfg.server.max_body_bytes, 1024);
    assert!(cfg.server.metrics_require_auth);
    assert_eq!(cfg.fleet.local_region, "123");
    assert_eq!(cfg.probe.allow_non_global.len(), 2);
    assert_eq!(
        cfg.server.tls.map(|t| t.key_file),
        Some(std::path::PathBuf::from("/k"))
    );
}

#[test]
fn an_unknown_override_names_its_variable_and_key() {
    let e = Config::load_with_env(None, vec![var("VANTAGE_SERVER__BOGUS", "1")]).unwrap_err();
    match &e {
        ConfigError::UnknownKey { origin, key, .. } => {
            assert_eq!(origin, &Origin::Variable("VANTAGE_SERVER__BOGUS".into()));
            assert_eq!(key, "server.bogus");
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.starts_with("environment variable VANTAGE_SERVER__BOGUS: unknown key `server.bogus`"),
        "{text}"
    );
    assert!(text.contains("api_listen"), "lists the known keys: {text}");
    // A bad value from a variable, beside a good file.
    let e = load_text(
        "badvar",
        "[fleet]\nlocal_region = \"lab\"\n",
        vec![var("VANTAGE_FLEET__AGENT_TIMEOUT", "soon")],
    )
    .unwrap_err();
    assert!(
        matches!(&e, ConfigError::Value { origin: Origin::Variable(v), key, .. }
            if v == "VANTAGE_FLEET__AGENT_TIMEOUT" && key == "fleet.agent_timeout"),
        "{e:?}"
    );
}

#[test]
fn a_list_override_in_list_syntax_says_how_the_variable_spells_a_list() {
    for (variable, raw) in [
        ("VANTAGE_PROBE__ALLOW_NON_GLOBAL", r#"["0.0.0.0/0"]"#),
        ("VANTAGE_PROBE__ASSUME_GLOBAL", "['198.51.100.0/24']"),
    ] {
        let e = Config::load_with_env(None, vec![var(variable, raw)]).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Value { origin: Origin::Variable(v), key, .. }
                if v == variable && key.starts_with("probe.")),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(text.contains("invalid IP address syntax"), "{text}");
        assert!(
            text.contains(&format!(
                "{variable} takes a comma-separated list without brackets or quotes, e.g. {variable}=100.64.0.0/10,fc00::/7"
            )),
            "{text}"
        );
    }
    // A bad value of a key that is not a list gets no list hint.
    let e =
        Config::load_with_env(None, vec![var("VANTAGE_FLEET__AGENT_TIMEOUT", "[1s]")]).unwrap_err();
    assert!(!e.to_string().contains("comma-separated"), "{e}");
}

#[test]
fn file_errors_name_the_file_the_key_path_and_the_line() {
    let e = refused(
        "unknown",
        "[server]\nmax_body_bytes = 10\napi_lissen = \"127.0.0.1:1\"\n",
    );
    match &e {
        ConfigError::UnknownKey {
            origin, key, line, ..
        } => {
            assert!(matches!(origin, Origin::File(p) if p.ends_with("vantage.toml")));
            assert_eq!(key, "server.api_lissen");
            assert_eq!(*line, Some(3));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string()
            .contains("vantage.toml: unknown key `server.api_lissen` (line 3)"),
        "{e}"
    );
    let e = refused(
        "nested",
        "[[agents]]\nname = \"a\"\nregion = \"r\"\ntoken_env = \"X\"\nbogus = 1\n",
    );
    assert!(
        matches!(&e, ConfigError::UnknownKey { key, .. } if key == "agents[0].bogus"),
        "{e:?}"
    );
    let e = refused("value", "[fleet]\nagent_timeout = \"soon\"\n");
    assert!(
        matches!(&e, ConfigError::Value { key, line: Some(2), .. } if key == "fleet.agent_timeout"),
        "{e:?}"
    );
    let e = refused(
        "target",
        "[[checks]]\ntarget = \"ftp://h/x\"\ninterval = \"1m\"\n",
    );
    assert!(
        matches!(&e, ConfigError::Value { key, .. } if key == "checks[0].target"),
        "{e:?}"
    );
    assert!(e.to_string().contains("scheme `ftp` is not probed"), "{e}");
    let e = refused("syntax", "[server\n");
    assert!(matches!(&e, ConfigError::Syntax { line: 1, .. }), "{e:?}");
    let e = Config::load_with_env(Some(Path::new("/nonexistent.toml")), Vec::new()).unwrap_err();
    assert!(
        matches!(
            &e,
            ConfigError::ReadFile {
                what: "--config",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "--config /nonexistent.toml");
}

#[test]
fn inconsistent_values_are_refused_with_their_key() {
    let cases: &[(&str, &str)] = &[
        (
            "[fleet]\nheartbeat_interval = \"20s\"\nagent_timeout = \"10s\"\n",
            "key `fleet.heartbeat_interval`: must be shorter than fleet.agent_timeout",
        ),
        (
            "[fleet]\nheartbeat_interval = \"0s\"\n",
            "key `fleet.heartbeat_interval`: must be greater than zero, e.g. 5s",
        ),
        (
            "[[agents]]\nname = \"a\"\nregion = \"\"\ntoken_env = \"X\"\n",
            "key `agents[0].region`",
        ),
        (
            "[[agents]]\nname = \"a\"\nregion = \"a/b\"\ntoken_env = \"X\"\n",
            "key `agents[0].region`: `a`: the region label `a/b` has `/`; a region label is 1 to 63 letters",
        ),
        (
            "[fleet]\nlocal_region = \"eu west\"\n",
            "key `fleet.local_region`: the region label `eu west` has U+0020; a region label is",
        ),
        (
            "[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\nregions = [\"mars\"]\n",
            "key `checks[0].regions`: https://a.example/mcp: unknown region `mars`; configured: local",
        ),
        (
            "[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\nlabels = { target = \"x\" }\n",
            "key `checks[0].labels.target`",
        ),
        // Prometheus' own target labels: renamed exported_job on vantage_target_info.
        (
            "[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\nlabels = { job = \"x\" }\n",
            "key `checks[0].labels.job`: https://a.example/mcp: `job` is a label Prometheus sets on every scraped series (job, instance): on vantage_target_info the check's value would be renamed exported_job",
        ),
        (
            "[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\nlabels = { team = \"a\", instance = \"x\" }\n",
            "rename it, e.g. `service` or `team`",
        ),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let e = load_text(&format!("inv{i}"), text, vec![]).unwrap_err();
        assert!(matches!(e, ConfigError::Invalid { .. }), "{e:?}");
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
    }
    let e = refused("dup", "[[agents]]\nname = \"a\"\nregion = \"r\"\ntoken_env = \"X\"\n[[agents]]\nname = \"a\"\nregion = \"s\"\ntoken_env = \"Y\"\n");
    assert!(
        matches!(&e, ConfigError::DuplicateName { section: "agents", name } if name == "a"),
        "{e:?}"
    );
    let e = refused("dupcheck", "[[checks]]\ntarget = \"https://A.example/mcp\"\ninterval = \"1m\"\n[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\n");
    assert!(
        matches!(&e, ConfigError::Invalid { key, .. } if key == "checks[1].target"),
        "{e:?}"
    );
}

#[test]
fn a_missing_secret_names_the_entry_and_the_config_fix_once() {
    let e = resolve(
        "[[agents]] `eu-west-1`",
        &Some("VANTAGE_TEST_SURELY_UNSET_AGENT_TOKEN".into()),
        &None,
    )
    .unwrap_err();
    let text = e.to_string();
    assert_eq!(
        text,
        "[[agents]] `eu-west-1`: environment variable VANTAGE_TEST_SURELY_UNSET_AGENT_TOKEN is not set or empty; export it with the token, or name a file with token_file instead"
    );
    assert!(
        std::error::Error::source(&e).is_none(),
        "said once, not repeated by a source"
    );
    assert!(
        !text.contains("--"),
        "no command-line flag in a config error: {text}"
    );
    let e = resolve(
        "[[credentials]] `prod`",
        &None,
        &Some("/nonexistent/t".into()),
    )
    .unwrap_err();
    // The cause is the source: the whole chain, as the command and the reload log print it.
    let text = crate::reload::chain(&e);
    assert!(
        text.starts_with("[[credentials]] `prod`: token file /nonexistent/t: "),
        "{text}"
    );
    assert_eq!(text.matches("os error 2").count(), 1, "{text}");
    assert!(
        matches!(&e, ConfigError::SecretFile { reason: vantage_agent::credentials::CredentialError::ReadFile { source, .. }, .. }
            if source.kind() == std::io::ErrorKind::NotFound),
        "{e:?}"
    );
    let e = resolve("server.api_tokens[0]", &None, &None).unwrap_err();
    assert!(matches!(e, ConfigError::SecretSource { .. }));
}

#[test]
fn a_scheduled_check_reads_its_baseline_when_the_configuration_loads() {
    let dir = std::env::temp_dir().join(format!("vantage-cfg-{}-baseline", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.toml");
    std::fs::write(&good, "[[accept]]\nendpoint = \"https://a.example/mcp\"\nfinding = \"transport.get\"\nreason = \"edge page, OPS-7\"\nexpires = 2030-01-01\n").unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[[accept]]\nendpoint = \"https://a.example/mcp\"\nfinding = \"transport.gett\"\nreason = \"r\"\nexpires = 2030-01-01\n").unwrap();
    let text = |p: &std::path::Path| {
        format!("[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\nbaseline = \"{}\"\n", p.display())
    };
    let cfg = load_text("baseline-good", &text(&good), Vec::new()).unwrap();
    let b = cfg.checks[0].baseline.as_ref().expect("loaded");
    assert_eq!(b.0.entries.len(), 1);
    let err = load_text("baseline-bad", &text(&bad), Vec::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("checks[0].baseline"), "{err}");
    assert!(
        err.contains("accept[0].finding: unknown finding id `transport.gett`"),
        "{err}"
    );
    let missing = dir.join("missing.toml");
    let err = load_text("baseline-missing", &text(&missing), Vec::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing.toml"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 12: `[[credentials]]` names the negative tokens too, from env or files, so a fleet
/// job carries every credential the auth checks need; a half-named source is an error that
/// says what to give.
#[test]
fn a_credential_carries_its_other_audience_and_missing_scope_tokens() {
    let dir = std::env::temp_dir().join(format!("vantage-cred-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scope = dir.join("scope");
    std::fs::write(&scope, "scope-secret\n").unwrap();
    std::env::set_var("VANTAGE_TEST_CRED_MAIN", "main-secret");
    std::env::set_var("VANTAGE_TEST_CRED_OTHER", "other-secret");
    let c = Credential {
        name: "prod".into(),
        token_env: Some("VANTAGE_TEST_CRED_MAIN".into()),
        token_file: None,
        other_audience_env: Some("VANTAGE_TEST_CRED_OTHER".into()),
        other_audience_file: None,
        missing_scope_env: None,
        missing_scope_file: Some(scope.clone()),
    };
    let got = c.resolve().unwrap();
    assert_eq!(
        got.secrets(),
        ["main-secret", "other-secret", "scope-secret"]
    );
    let both = Credential {
        other_audience_file: Some(scope),
        ..c.clone()
    };
    let e = both.resolve().unwrap_err().to_string();
    assert!(
        e.contains("[[credentials]] `prod` other_audience") && e.contains("exactly one"),
        "{e}"
    );
    let bare = Credential {
        other_audience_env: None,
        missing_scope_file: None,
        ..c
    };
    let got = bare.resolve().unwrap();
    assert!(got.other_audience.is_none() && got.missing_scope.is_none());
    std::fs::remove_dir_all(&dir).ok();
}
