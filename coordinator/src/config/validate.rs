//! Checks across keys (names unique, regions and credentials that exist, label names), and
//! reading the secrets an entry names.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use vantage_agent::credentials::{from_env, from_file, CredentialError};

use super::{Config, ConfigError, Origin};

fn is_label_name(key: &str) -> bool {
    key.chars()
        .next()
        .is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
        && key
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        && !key.starts_with("__")
        && key != "target"
}

impl Config {
    pub(super) fn validate(&self, origin: &Origin) -> Result<(), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid {
            origin: origin.clone(),
            key,
            message,
        };
        let mut names = BTreeSet::new();
        for (i, a) in self.agents.iter().enumerate() {
            if a.region.trim().is_empty() {
                return Err(invalid(
                    format!("agents[{i}].region"),
                    format!(
                        "`{}` has an empty region; give the region its token is bound to",
                        a.name
                    ),
                ));
            }
            if !names.insert(&a.name) {
                return Err(ConfigError::DuplicateName {
                    section: "agents",
                    name: a.name.clone(),
                });
            }
        }
        let mut creds = BTreeSet::new();
        for c in &self.credentials {
            if !creds.insert(&c.name) {
                return Err(ConfigError::DuplicateName {
                    section: "credentials",
                    name: c.name.clone(),
                });
            }
        }
        let regions = self.regions();
        let mut targets = BTreeSet::new();
        for (i, c) in self.checks.iter().enumerate() {
            if !targets.insert(c.target.to_string()) {
                return Err(ConfigError::DuplicateName {
                    section: "checks",
                    name: c.target.to_string(),
                });
            }
            if c.interval < Duration::from_secs(1) {
                return Err(invalid(
                    format!("checks[{i}].interval"),
                    format!("{}: must be at least 1s", c.target),
                ));
            }
            if let Some(r) = c.regions.iter().find(|r| !regions.contains(r)) {
                return Err(invalid(
                    format!("checks[{i}].regions"),
                    format!(
                        "{}: unknown region `{r}`; configured: {}",
                        c.target,
                        regions.join(", ")
                    ),
                ));
            }
            if let Some(name) = &c.credential {
                if !self.credentials.iter().any(|x| &x.name == name) {
                    return Err(invalid(
                        format!("checks[{i}].credential"),
                        format!(
                            "{}: unknown credential `{name}`; add it to [[credentials]]",
                            c.target
                        ),
                    ));
                }
            }
            if let Some(key) = c.labels.keys().find(|k| !is_label_name(k)) {
                return Err(invalid(
                    format!("checks[{i}].labels.{key}"),
                    "not a Prometheus label name (letters, digits, _; not `target`)".into(),
                ));
            }
        }
        if self.fleet.heartbeat_interval >= self.fleet.agent_timeout {
            return Err(invalid(
                "fleet.heartbeat_interval".into(),
                "must be shorter than fleet.agent_timeout".into(),
            ));
        }
        if self.server.drain_timeout.is_zero() {
            return Err(invalid(
                "server.drain_timeout".into(),
                "must be greater than zero, e.g. 20s".into(),
            ));
        }
        Ok(())
    }
}

/// Read a secret from its source; `what` names the entry (`[[agents]] \`eu-west-1\``).
pub fn resolve(
    what: &str,
    env: &Option<String>,
    file: &Option<PathBuf>,
) -> Result<SecretString, ConfigError> {
    match (env, file) {
        (Some(name), None) => from_env(name).map_err(|_| ConfigError::SecretEnv {
            what: what.into(),
            variable: name.clone(),
        }),
        (None, Some(path)) => {
            from_file(path).map_err(|reason: CredentialError| ConfigError::SecretFile {
                what: what.into(),
                reason,
            })
        }
        _ => Err(ConfigError::SecretSource { what: what.into() }),
    }
}
