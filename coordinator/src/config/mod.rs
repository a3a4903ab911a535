//! The coordinator's configuration: a TOML file plus `VANTAGE_`-prefixed environment
//! overrides (`VANTAGE_SERVER__API_LISTEN=…`), unknown keys refused, defaults in one place
//! (`Default`, shared by serde). Every key is documented in `vantage.example.toml`, which a
//! test parses. Secrets are never in the file: entries name an environment variable or a
//! file that holds them. Values are parsed into trusted types on load (a scheduled
//! target is a [`Target`]); errors name the file or the variable and the key path.

#[cfg(test)]
mod agents_tests;
mod error;
#[cfg(test)]
mod limits_tests;
mod load;
#[cfg(test)]
mod origin_tests;
#[cfg(test)]
mod same_target_tests;
#[cfg(test)]
mod tests;
mod validate;
#[cfg(test)]
mod wait_tests;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use vantage_agent::Target;

pub use error::{ConfigError, Origin};
pub use validate::{egress_catch_all, resolve};

/// The whole configuration.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
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
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scheduled {
    /// The MCP endpoint URL, validated on load.
    pub target: Target,
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
    /// Accepted findings (a `vantage check --baseline` file): marked accepted in the
    /// reports, and exported with `accepted="true"` on `vantage_finding_active`.
    #[serde(default)]
    pub baseline: Option<crate::baseline::BaselineFile>,
}

/// Listeners and API access.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
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
    /// On-demand checks running at once, whatever their targets (scheduled runs are not
    /// counted): past it `POST /v1/checks` gets 429 `busy`, so a token holder cannot start
    /// checks of thousands of targets at once.
    pub max_checks_in_flight: usize,
    /// TLS for the gRPC listener.
    pub tls: Option<Tls>,
    /// A second listener for /metrics, /healthz and /readyz only (a port a monitoring
    /// namespace may reach while the API stays closed to it). None: the API port serves them.
    pub metrics_listen: Option<SocketAddr>,
    /// On SIGTERM: how long running checks may take to finish before agents are told to
    /// reconnect elsewhere and the process exits. Keep it under the orchestrator's grace
    /// period (the chart sets terminationGracePeriodSeconds from it).
    #[serde(with = "humantime_serde")]
    pub drain_timeout: Duration,
    /// Where a generated API token is written when api_tokens is empty (mode 0600, removed
    /// at exit). None: `$XDG_RUNTIME_DIR/vantage/api-token-<port>`, else `/tmp/vantage-<uid>/api-token-<port>` (the API's port).
    pub generated_token_file: Option<PathBuf>,
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
            max_checks_in_flight: 32,
            tls: None,
            metrics_listen: None,
            drain_timeout: Duration::from_secs(20),
            generated_token_file: None,
        }
    }
}

/// A PEM certificate chain and key.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tls {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// Require agents to present a client certificate signed by this CA (mutual TLS).
    #[serde(default)]
    pub client_ca_file: Option<PathBuf>,
}

/// Fleet behaviour.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
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
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Store {
    /// On-demand reports kept at most (scheduled runs are not stored).
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
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Probe {
    /// Timeout of one exchange.
    #[serde(with = "humantime_serde")]
    pub check_timeout: Duration,
    /// Prefixes treated as globally routable (laboratories only); a bare address is its
    /// /32 or /128 ([`parse_prefix`]).
    #[serde(deserialize_with = "prefixes")]
    pub assume_global: Vec<IpNet>,
    /// Non-global prefixes every fleet vantage may still connect to, for the target and
    /// every URL it names (the egress policy's exceptions; `vantage_agent::egress`); a bare
    /// address is its /32 or /128.
    #[serde(deserialize_with = "prefixes")]
    pub allow_non_global: Vec<IpNet>,
    /// Extra CA (PEM) the in-process vantage trusts for targets.
    pub ca_file: Option<PathBuf>,
    /// Whether the in-process vantage has IPv6: false leaves IPv6 out of its verdicts
    /// (agents say so with `vantage-agent --no-ipv6`).
    pub ipv6: bool,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            check_timeout: Duration::from_secs(5),
            assume_global: Vec::new(),
            allow_non_global: Vec::new(),
            ca_file: None,
            ipv6: true,
        }
    }
}

/// The one grammar of an egress prefix, for the configuration (`probe.allow_non_global`,
/// `probe.assume_global`), `vantage check --allow-non-global` / `--assume-global` and the
/// chart: a CIDR prefix (`198.51.100.0/24`, `2001:db8::/32`), or a bare address, which is
/// that address alone (`203.0.113.7` is `203.0.113.7/32`, `2001:db8::7` a /128). An
/// unparsable one is ipnet's "invalid IP address syntax".
pub fn parse_prefix(s: &str) -> Result<IpNet, ipnet::AddrParseError> {
    s.parse::<IpNet>().or_else(|e| {
        if s.contains('/') {
            return Err(e);
        }
        s.parse::<std::net::IpAddr>()
            .map(IpNet::from)
            .map_err(|_| e)
    })
}

/// A list of [`parse_prefix`] entries, each refused at its index (`probe.allow_non_global[1]`).
fn prefixes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<IpNet>, D::Error> {
    struct Prefix(IpNet);
    impl<'de> Deserialize<'de> for Prefix {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let s = String::deserialize(d)?;
            parse_prefix(&s).map(Prefix).map_err(|e| {
                serde::de::Error::custom(format!(
                    "`{}`: {e}; write a prefix (198.51.100.0/24, 2001:db8::/32) or an address (203.0.113.7, a /32; 2001:db8::7, a /128)",
                    s.escape_debug()
                ))
            })
        }
    }
    Ok(Vec::<Prefix>::deserialize(d)?
        .into_iter()
        .map(|p| p.0)
        .collect())
}

/// Where a secret lives: an environment variable or a file. Never the value itself.
#[derive(Debug, Clone, Deserialize, Serialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SecretSource {
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
}

/// An agent allowed to attach.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// A name for logs.
    pub name: String,
    /// The region its token is bound to.
    pub region: String,
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
}

/// A named credential for authenticated checks.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
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
    /// Read every secret this entry names: the main token, and optionally the two negative
    /// tokens of `checks.md` 2.5 (each from an environment variable or a file, never from
    /// the API body), so fleet jobs run the same auth checks as `vantage check`.
    pub fn resolve(&self) -> Result<vantage_agent::Credentials, ConfigError> {
        let what = |part: &str| format!("[[credentials]] `{}`{part}", self.name);
        let optional = |part: &str, env: &Option<String>, file: &Option<PathBuf>| {
            if env.is_none() && file.is_none() {
                Ok(None)
            } else {
                validate::resolve(&what(part), env, file).map(Some)
            }
        };
        Ok(vantage_agent::Credentials {
            token: Some(validate::resolve(
                &what(""),
                &self.token_env,
                &self.token_file,
            )?),
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

impl Config {
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
