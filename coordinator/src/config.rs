//! The coordinator's configuration: a TOML file plus `VANTAGE_`-prefixed environment
//! overrides (`VANTAGE_SERVER__API_LISTEN=…`), unknown keys refused, defaults in one place
//! (`Default`, shared by serde). Every key is documented in `vantage.example.toml`, which a
//! test parses. Secrets are never in the file: entries name an environment variable or a
//! file that holds them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;
use secrecy::SecretString;
use serde::Deserialize;

/// The whole configuration.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub server: Server,
    pub fleet: Fleet,
    pub store: Store,
    pub probe: Probe,
    /// Agents allowed to attach, each bound to one region by its token.
    pub agents: Vec<Agent>,
    /// Named credentials for authenticated checks (referenced by name in the API).
    pub credentials: Vec<Credential>,
    /// Scheduled checks.
    pub checks: Vec<Scheduled>,
}

/// A check the coordinator runs on its own, every `interval`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scheduled {
    /// The MCP endpoint URL.
    pub target: String,
    /// How often; runs are spread over the interval and never overlap.
    #[serde(with = "humantime_serde")]
    pub interval: Duration,
    /// Regions to check from (default: all).
    #[serde(default)]
    pub regions: Vec<String>,
    /// A credential name from [[credentials]].
    #[serde(default)]
    pub credential: Option<String>,
    #[serde(default)]
    pub expect_auth: bool,
    /// Deadline of one run (default: fleet.default_deadline, at most the interval).
    #[serde(default, with = "humantime_serde::option")]
    pub deadline: Option<Duration>,
    /// Labels exported on `vantage_target_info` (for alert routing).
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Listeners and API access.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Server {
    /// HTTP API, /metrics and health.
    pub api_listen: SocketAddr,
    /// Agents' gRPC stream.
    pub grpc_listen: SocketAddr,
    /// Bearer tokens accepted by the API (two at once during a rotation).
    pub api_tokens: Vec<SecretSource>,
    /// Whether /metrics also requires an API token.
    pub metrics_require_auth: bool,
    /// Largest accepted API request body, in bytes.
    pub max_body_bytes: usize,
    /// On-demand checks accepted per target per minute (scheduled checks are not counted):
    /// a probe fleet must not be a way to flood a host.
    pub checks_per_target_per_minute: u32,
    /// TLS for the gRPC listener.
    pub tls: Option<Tls>,
}

impl Default for Server {
    fn default() -> Self {
        Server {
            api_listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            grpc_listen: SocketAddr::from(([127, 0, 0, 1], 50051)),
            api_tokens: Vec::new(),
            metrics_require_auth: false,
            max_body_bytes: 64 * 1024,
            checks_per_target_per_minute: 30,
            tls: None,
        }
    }
}

/// A PEM certificate chain and key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tls {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// Require agents to present a client certificate signed by this CA (mutual TLS).
    #[serde(default)]
    pub client_ca_file: Option<PathBuf>,
}

/// Fleet behaviour.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Fleet {
    /// Run an in-process vantage (so one machine works with no agent).
    pub local_agent: bool,
    /// The region name of the in-process vantage.
    pub local_region: String,
    /// How often agents send heartbeats.
    #[serde(with = "humantime_serde")]
    pub heartbeat_interval: Duration,
    /// An agent silent this long is dropped.
    #[serde(with = "humantime_serde")]
    pub agent_timeout: Duration,
    /// Deadline of an on-demand check when the caller gives none.
    #[serde(with = "humantime_serde")]
    pub default_deadline: Duration,
}

impl Default for Fleet {
    fn default() -> Self {
        Fleet {
            local_agent: true,
            local_region: "local".into(),
            heartbeat_interval: Duration::from_secs(5),
            agent_timeout: Duration::from_secs(15),
            default_deadline: Duration::from_secs(30),
        }
    }
}

/// The bounded store of finished reports.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Store {
    /// Reports kept at most.
    pub max_reports: usize,
    /// Reports older than this are dropped.
    #[serde(with = "humantime_serde")]
    pub max_age: Duration,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            max_reports: 1000,
            max_age: Duration::from_secs(3600),
        }
    }
}

/// Probe settings sent with every job.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Probe {
    /// Timeout of one exchange.
    #[serde(with = "humantime_serde")]
    pub check_timeout: Duration,
    /// Prefixes treated as globally routable (laboratories only).
    pub assume_global: Vec<IpNet>,
    /// Non-global prefixes agents may still connect to (SSRF guard exceptions).
    pub allow_non_global: Vec<IpNet>,
    /// Extra CA (PEM) the in-process vantage trusts for targets.
    pub ca_file: Option<PathBuf>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            check_timeout: Duration::from_secs(5),
            assume_global: Vec::new(),
            allow_non_global: Vec::new(),
            ca_file: None,
        }
    }
}

/// Where a secret lives: an environment variable or a file. Never the value itself.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SecretSource {
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
}

/// An agent allowed to attach.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// A name for logs.
    pub name: String,
    /// The region its token is bound to.
    pub region: String,
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
}

/// A named credential for authenticated checks: the main token, and optionally the two
/// negative tokens of `checks.md` 2.5 (each from an environment variable or a file, never
/// from the API body), so fleet jobs run the same auth checks as `vantage check`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credential {
    pub name: String,
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
    /// A token issued for another audience (`auth.wrong-audience`).
    pub other_audience_env: Option<String>,
    pub other_audience_file: Option<PathBuf>,
    /// A token lacking a required scope (`auth.insufficient-scope`).
    pub missing_scope_env: Option<String>,
    pub missing_scope_file: Option<PathBuf>,
}

impl Credential {
    /// Read every secret this entry names.
    pub fn resolve(&self) -> Result<vantage_agent::Credentials, ConfigError> {
        let what = |part: &str| format!("credentials `{}`{part}", self.name);
        let optional = |part: &str, env: &Option<String>, file: &Option<PathBuf>| {
            if env.is_none() && file.is_none() {
                Ok(None)
            } else {
                resolve(&what(part), env, file).map(Some)
            }
        };
        Ok(vantage_agent::Credentials {
            token: Some(resolve(&what(""), &self.token_env, &self.token_file)?),
            other_audience: optional(
                " other_audience",
                &self.other_audience_env,
                &self.other_audience_file,
            )?,
            missing_scope: optional(
                " missing_scope",
                &self.missing_scope_env,
                &self.missing_scope_file,
            )?,
        })
    }
}

/// Why the configuration could not be used. Messages say what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Load(String),
    #[error("{what}: give token_env or token_file (exactly one; other_audience_env/_file and missing_scope_env/_file likewise)")]
    SecretSource { what: String },
    #[error("{what}: {source}")]
    Secret {
        what: String,
        source: vantage_agent::credentials::CredentialError,
    },
    #[error("{0}")]
    Invalid(String),
}

const SECTIONS: &[&str] = &["SERVER", "FLEET", "STORE", "PROBE"];

impl Config {
    /// Load `path` (if any) and the `VANTAGE_<SECTION>__<KEY>` environment overrides.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        Self::load_with_env(path, std::env::vars())
    }

    pub fn load_with_env(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let mut builder = config::Config::builder();
        if let Some(p) = path {
            if !p.is_file() {
                return Err(ConfigError::Load(format!(
                    "--config {}: no such file",
                    p.display()
                )));
            }
            builder = builder.add_source(config::File::from(p).format(config::FileFormat::Toml));
        }
        // Only keys under a known section: other VANTAGE_* variables (VANTAGE_LOG, …) are not
        // configuration.
        let overrides: config::Map<String, String> = env
            .into_iter()
            .filter(|(k, _)| {
                k.strip_prefix("VANTAGE_")
                    .and_then(|rest| rest.split_once("__"))
                    .is_some_and(|(section, _)| SECTIONS.contains(&section))
            })
            .collect();
        builder = builder.add_source(
            config::Environment::with_prefix("VANTAGE")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true)
                .list_separator(",")
                .with_list_parse_key("probe.assume_global")
                .with_list_parse_key("probe.allow_non_global")
                .source(Some(overrides)),
        );
        let built = builder
            .build()
            .map_err(|e| ConfigError::Load(e.to_string()))?;
        let cfg: Config = built
            .try_deserialize()
            .map_err(|e| ConfigError::Load(e.to_string()))?;
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let mut names = std::collections::BTreeSet::new();
        for a in &self.agents {
            if a.region.trim().is_empty() {
                return Err(ConfigError::Invalid(format!(
                    "agents: `{}` has an empty region",
                    a.name
                )));
            }
            if !names.insert(&a.name) {
                return Err(ConfigError::Invalid(format!(
                    "agents: the name `{}` appears twice",
                    a.name
                )));
            }
        }
        let mut creds = std::collections::BTreeSet::new();
        for c in &self.credentials {
            if !creds.insert(&c.name) {
                return Err(ConfigError::Invalid(format!(
                    "credentials: the name `{}` appears twice",
                    c.name
                )));
            }
        }
        let regions = self.regions();
        let mut targets = std::collections::BTreeSet::new();
        for c in &self.checks {
            let t = vantage_agent::Target::parse(&c.target)
                .map_err(|e| ConfigError::Invalid(format!("checks: `{}`: {e}", c.target)))?;
            if !targets.insert(t.to_string()) {
                return Err(ConfigError::Invalid(format!(
                    "checks: `{}` appears twice",
                    c.target
                )));
            }
            if c.interval < Duration::from_secs(1) {
                return Err(ConfigError::Invalid(format!(
                    "checks: `{}`: interval must be at least 1s",
                    c.target
                )));
            }
            if let Some(r) = c.regions.iter().find(|r| !regions.contains(r)) {
                return Err(ConfigError::Invalid(format!(
                    "checks: `{}`: unknown region `{r}`; configured: {}",
                    c.target,
                    regions.join(", ")
                )));
            }
            if let Some(name) = &c.credential {
                if !self.credentials.iter().any(|x| &x.name == name) {
                    return Err(ConfigError::Invalid(format!(
                        "checks: `{}`: unknown credential `{name}`",
                        c.target
                    )));
                }
            }
            for key in c.labels.keys() {
                let valid = key
                    .chars()
                    .next()
                    .is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
                    && key
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                    && !key.starts_with("__")
                    && key != "target";
                if !valid {
                    return Err(ConfigError::Invalid(format!(
                        "checks: `{}`: label `{key}` is not a Prometheus label name (letters, digits, _; not `target`)",
                        c.target
                    )));
                }
            }
        }
        if self.fleet.heartbeat_interval >= self.fleet.agent_timeout {
            return Err(ConfigError::Invalid(
                "fleet.heartbeat_interval must be shorter than fleet.agent_timeout".into(),
            ));
        }
        Ok(())
    }

    /// Every region a check may name: the configured agents' and the local one.
    pub fn regions(&self) -> Vec<String> {
        let mut r: Vec<String> = self.agents.iter().map(|a| a.region.clone()).collect();
        if self.fleet.local_agent {
            r.push(self.fleet.local_region.clone());
        }
        r.sort();
        r.dedup();
        r
    }
}

/// Read a secret from its source.
pub fn resolve(
    what: &str,
    env: &Option<String>,
    file: &Option<PathBuf>,
) -> Result<SecretString, ConfigError> {
    use vantage_agent::credentials::{from_env, from_file};
    match (env, file) {
        (Some(name), None) => from_env(name).map_err(|source| ConfigError::Secret {
            what: what.into(),
            source,
        }),
        (None, Some(path)) => from_file(path).map_err(|source| ConfigError::Secret {
            what: what.into(),
            source,
        }),
        _ => Err(ConfigError::SecretSource { what: what.into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_parses_and_documents_every_key() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("vantage.example.toml");
        let cfg = Config::load_with_env(Some(&path), Vec::new()).expect("the example parses");
        assert_eq!(cfg.agents.len(), 3);
        assert_eq!(cfg.checks.len(), 1);
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
            "api_tokens",
            "metrics_require_auth",
            "max_body_bytes",
            "cert_file",
            "key_file",
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
            "other_audience_env",
            "missing_scope_file",
            "token_env",
            "token_file",
        ] {
            assert!(
                text.contains(key),
                "vantage.example.toml does not document `{key}`"
            );
        }
    }

    /// Issue 12: `[[credentials]]` names the negative tokens too, from env or files, so a
    /// fleet job carries every credential the auth checks need; a half-named source is an
    /// error that says what to give.
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
            e.contains("credentials `prod` other_audience") && e.contains("exactly one"),
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

    #[test]
    fn defaults_work_without_a_file() {
        let cfg = Config::load_with_env(None, Vec::new()).unwrap();
        assert!(cfg.fleet.local_agent);
        assert_eq!(cfg.regions(), ["local"]);
        assert_eq!(cfg.server.api_listen.port(), 8080);
    }

    #[test]
    fn environment_overrides_known_sections_only() {
        let env = vec![
            (
                "VANTAGE_SERVER__API_LISTEN".to_string(),
                "127.0.0.1:9999".to_string(),
            ),
            ("VANTAGE_FLEET__LOCAL_REGION".to_string(), "lab".to_string()),
            (
                "VANTAGE_PROBE__ALLOW_NON_GLOBAL".to_string(),
                "127.0.0.0/8,::1/128".to_string(),
            ),
            ("VANTAGE_LOG".to_string(), "debug".to_string()),
            ("VANTAGE_API_TOKEN".to_string(), "x".to_string()),
        ];
        let cfg = Config::load_with_env(None, env).unwrap();
        assert_eq!(cfg.server.api_listen.port(), 9999);
        assert_eq!(cfg.fleet.local_region, "lab");
        assert_eq!(cfg.probe.allow_non_global.len(), 2);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused_with_their_name() {
        let dir = std::env::temp_dir().join(format!("vantage-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("[server]\napi_lissen = \"127.0.0.1:1\"\n", "api_lissen"),
            ("[fleet]\nagent_timeout = \"soon\"\n", "agent_timeout"),
            (
                "[fleet]\nheartbeat_interval = \"20s\"\nagent_timeout = \"10s\"\n",
                "shorter than",
            ),
            (
                "[[agents]]\nname = \"a\"\nregion = \"\"\ntoken_env = \"X\"\n",
                "empty region",
            ),
        ];
        for (i, (text, needle)) in cases.iter().enumerate() {
            let p = dir.join(format!("c{i}.toml"));
            std::fs::write(&p, text).unwrap();
            let e = Config::load_with_env(Some(&p), Vec::new())
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        let e =
            Config::load_with_env(Some(Path::new("/nonexistent.toml")), Vec::new()).unwrap_err();
        assert!(e.to_string().contains("no such file"));
    }
}
