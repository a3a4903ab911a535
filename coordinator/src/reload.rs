//! Re-reading the configuration while the coordinator runs (SIGHUP, or the file changed).
//! Scheduled checks, agents, credentials, API tokens and the drain timeout take effect at
//! once, and connected agents stay unless their token was revoked or moved to another region
//! (those are cut off at once). Every other key (listeners, fleet timing, the store, the
//! probe settings such as `probe.allow_non_global`) needs a restart: the log names those
//! keys, and the running values stay until then. A bad file changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use secrecy::{ExposeSecret, SecretString};
use tokio::task::JoinHandle;

use crate::api::Api;
use crate::config::{resolve, Config, ConfigError};
use crate::fleet::AgentAuth;

/// Keys of the four sections that take effect on reload; the others need a restart.
const LIVE: &[&str] = &["server.api_tokens", "server.drain_timeout"];

/// The secrets a configuration names, resolved.
pub(crate) struct Secrets {
    pub agents: Vec<AgentAuth>,
    pub tokens: Vec<SecretString>,
    pub credentials: BTreeMap<String, vantage_agent::Credentials>,
}

pub(crate) fn secrets(cfg: &Config) -> Result<Secrets, ConfigError> {
    let agents = cfg
        .agents
        .iter()
        .map(|a| {
            Ok(AgentAuth {
                name: a.name.clone(),
                region: a.region.clone(),
                token: resolve(
                    &format!("[[agents]] `{}`", a.name),
                    &a.token_env,
                    &a.token_file,
                )?,
            })
        })
        .collect::<Result<Vec<AgentAuth>, ConfigError>>()?;
    // Two sources (files, variables) can still hold one value: refused as at load.
    for (index, b) in agents.iter().enumerate() {
        let same = |a: &AgentAuth| a.token.expose_secret() == b.token.expose_secret();
        if let Some(first) = agents[..index].iter().position(same) {
            return Err(ConfigError::SharedToken {
                index,
                name: b.name.clone(),
                key: "token",
                first,
                first_name: agents[first].name.clone(),
            });
        }
    }
    let tokens = cfg
        .server
        .api_tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            resolve(
                &format!("server.api_tokens[{i}]"),
                &t.token_env,
                &t.token_file,
            )
        })
        .collect::<Result<_, _>>()?;
    let credentials = cfg
        .credentials
        .iter()
        .map(|c| Ok((c.name.clone(), c.resolve()?)))
        .collect::<Result<_, ConfigError>>()?;
    Ok(Secrets {
        agents,
        tokens,
        credentials,
    })
}

/// An error and its causes on one line.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

pub(crate) fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Entries added, removed and changed, by name.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Delta {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

fn delta<T: PartialEq>(old: &[T], new: &[T], name: impl Fn(&T) -> String) -> Delta {
    let before: BTreeMap<String, &T> = old.iter().map(|t| (name(t), t)).collect();
    let after: BTreeMap<String, &T> = new.iter().map(|t| (name(t), t)).collect();
    Delta {
        added: after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .cloned()
            .collect(),
        removed: before
            .keys()
            .filter(|k| !after.contains_key(*k))
            .cloned()
            .collect(),
        changed: after
            .iter()
            .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
            .map(|(k, _)| k.clone())
            .collect(),
    }
}

impl std::fmt::Display for Delta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty() {
            return f.write_str("unchanged");
        }
        let mut parts = Vec::new();
        for (what, names) in [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ] {
            if !names.is_empty() {
                parts.push(format!("{what} {}", names.join(", ")));
            }
        }
        f.write_str(&parts.join("; "))
    }
}

/// What a reload changes.
#[derive(Debug, PartialEq)]
pub(crate) struct Changes {
    pub checks: Delta,
    pub agents: Delta,
    pub credentials: Delta,
    pub api_tokens: bool,
    /// Agents (`region/name`) whose entry is unchanged but whose token is another value
    /// now (the file it names was rewritten, the variable re-exported): cut off too.
    pub agent_tokens: Vec<String>,
    /// Keys that changed but take effect only after a restart.
    pub restart: Vec<String>,
}

impl std::fmt::Display for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "checks {}; agents {}; credentials {}; api tokens {}",
            self.checks,
            AgentChanges(&self.agents, &self.agent_tokens),
            self.credentials,
            if self.api_tokens {
                "changed"
            } else {
                "unchanged"
            }
        )
    }
}

/// The agents part of the reload line: the entries that changed, and the tokens replaced
/// behind an unchanged entry (named, never shown).
struct AgentChanges<'a>(&'a Delta, &'a [String]);

impl std::fmt::Display for AgentChanges<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let AgentChanges(delta, tokens) = self;
        if tokens.is_empty() {
            return delta.fmt(f);
        }
        let replaced = format!("token of {} replaced", tokens.join(", "));
        if delta == &&Delta::default() {
            write!(f, "changed: {replaced}")
        } else {
            write!(f, "{delta}; {replaced}")
        }
    }
}

/// Agents (`region/name`) in both lists with the same entry (not in `delta`) whose token
/// value differs.
pub(crate) fn replaced_tokens(old: &[AgentAuth], new: &[AgentAuth], delta: &Delta) -> Vec<String> {
    new.iter()
        .filter(|n| !delta.changed.contains(&n.name) && !delta.added.contains(&n.name))
        .filter(|n| {
            old.iter()
                .any(|o| o.name == n.name && o.token.expose_secret() != n.token.expose_secret())
        })
        .map(|n| format!("{}/{}", n.region, n.name))
        .collect()
}

fn leaves(prefix: &str, v: &toml::Value, out: &mut BTreeMap<String, toml::Value>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                leaves(&format!("{prefix}.{k}"), v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

fn section_leaves(cfg: &Config) -> BTreeMap<String, toml::Value> {
    let mut out = BTreeMap::new();
    let sections = [
        ("server", toml::Value::try_from(&cfg.server)),
        ("fleet", toml::Value::try_from(&cfg.fleet)),
        ("store", toml::Value::try_from(&cfg.store)),
        ("probe", toml::Value::try_from(&cfg.probe)),
    ];
    for (name, value) in sections {
        if let Ok(v) = value {
            leaves(name, &v, &mut out);
        }
    }
    out
}

/// Compare two configurations; `tokens_changed` says whether the API token values differ.
pub(crate) fn changes(old: &Config, new: &Config, tokens_changed: bool) -> Changes {
    let (a, b) = (section_leaves(old), section_leaves(new));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let restart = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .filter(|k| {
            !LIVE
                .iter()
                .any(|l| k.as_str() == *l || k.starts_with(&format!("{l}.")))
        })
        .cloned()
        .collect();
    Changes {
        checks: delta(&old.checks, &new.checks, |c| c.target.to_string()),
        agents: delta(&old.agents, &new.agents, |a| a.name.clone()),
        credentials: delta(&old.credentials, &new.credentials, |c| c.name.clone()),
        api_tokens: tokens_changed || old.server.api_tokens != new.server.api_tokens,
        agent_tokens: Vec::new(),
        restart,
    }
}

/// What a configuration reload changes while the coordinator runs.
pub(crate) struct Live {
    pub path: Option<PathBuf>,
    pub mtime: Option<SystemTime>,
    pub api: Arc<Api>,
    pub agent_auth: Arc<RwLock<Vec<AgentAuth>>>,
    /// Connected agents: those whose token a reload revokes or moves are cut off.
    pub registry: Arc<crate::fleet::Registry>,
    /// The generated API token, kept when the file still configures none.
    pub generated: Option<SecretString>,
    pub current: Config,
    pub scheduled: Vec<JoinHandle<()>>,
}

impl Live {
    /// Re-read the file. Connected agents stay, except those whose token the new file
    /// revokes or binds to another region (cut off at once); a bad file changes nothing.
    pub fn reload(&mut self, why: &str) {
        let Some(path) = self.path.clone() else {
            tracing::warn!("{why}: no configuration file to re-read (started without --config)");
            return;
        };
        self.mtime = mtime(&path);
        let (next, s) = match Config::load(Some(&path)).and_then(|c| secrets(&c).map(|s| (c, s))) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!("{why}: keeping the running configuration: {}", chain(&e));
                return;
            }
        };
        let api = &self.api;
        let mut tokens = s.tokens;
        if tokens.is_empty() {
            tokens.extend(self.generated.clone());
        }
        let tokens_changed = {
            let old = api.tokens.read().unwrap_or_else(|p| p.into_inner());
            old.len() != tokens.len()
                || old
                    .iter()
                    .zip(&tokens)
                    .any(|(a, b)| a.expose_secret() != b.expose_secret())
        };
        let mut changes = changes(&self.current, &next, tokens_changed);
        changes.agent_tokens = {
            let old = self.agent_auth.read().unwrap_or_else(|p| p.into_inner());
            replaced_tokens(&old, &s.agents, &changes.agents)
        };
        for gone in &changes.checks.removed {
            api.checks.metrics.forget_target(gone);
            api.checks.degraded.forget(gone);
        }
        for h in self.scheduled.drain(..) {
            h.abort();
        }
        // Tokens first, then the sweep: an agent attaching meanwhile is checked again by
        // the service against the new tokens once registered.
        *self.agent_auth.write().unwrap_or_else(|p| p.into_inner()) = s.agents;
        let cut = {
            let agents = self.agent_auth.read().unwrap_or_else(|p| p.into_inner());
            self.registry.revoke_stale(&agents)
        };
        *api.tokens.write().unwrap_or_else(|p| p.into_inner()) = tokens;
        *api.checks
            .credentials
            .write()
            .unwrap_or_else(|p| p.into_inner()) = s.credentials;
        // The in-process vantage stays as started: its region stays until a restart.
        let regions = live_regions(&self.current, &next);
        *api.checks
            .regions
            .write()
            .unwrap_or_else(|p| p.into_inner()) = regions.clone();
        self.scheduled = crate::schedule::start(
            &api.checks,
            &next.checks,
            self.current.fleet.default_deadline,
        );
        tracing::info!(
            checks = next.checks.len(),
            regions = ?regions,
            agents_cut = cut.len(),
            "{why}: configuration reloaded: {changes}"
        );
        if !changes.restart.is_empty() {
            tracing::warn!(
                keys = ?changes.restart,
                "{why}: needs a restart to take effect: {} (the running values stay until then)",
                changes.restart.join(", ")
            );
        }
        let mut next = next;
        // Keys that need a restart keep their running values.
        next.server = keep_running(&self.current.server, next.server);
        next.fleet = self.current.fleet.clone();
        next.store = self.current.store.clone();
        next.probe = self.current.probe.clone();
        self.current = next;
    }
}

/// The regions checks may name after a reload that changed [fleet]: the agents' regions from
/// the new file, and the in-process vantage's region as it runs.
fn live_regions(running: &Config, next: &Config) -> Vec<String> {
    let mut r: Vec<String> = next.agents.iter().map(|a| a.region.clone()).collect();
    if running.fleet.local_agent {
        r.push(running.fleet.local_region.clone());
    }
    r.sort();
    r.dedup();
    r
}

/// The [server] section as it runs after a reload: the new tokens and drain timeout, the
/// running values of everything else.
pub(crate) fn keep_running(
    running: &crate::config::Server,
    next: crate::config::Server,
) -> crate::config::Server {
    crate::config::Server {
        api_tokens: next.api_tokens,
        drain_timeout: next.drain_timeout,
        ..running.clone()
    }
}

#[cfg(test)]
#[path = "reload_tests.rs"]
mod tests;
