//! Checks across keys (names unique, regions and credentials that exist, label names), and
//! reading the secrets an entry names.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use vantage_agent::credentials::{from_env, from_file, CredentialError};

use super::{Agent, Config, ConfigError, Origin};

/// What the operator wrote, beside the values (which carry the defaults).
#[derive(Debug, Default)]
pub(super) struct Written {
    /// Each `[[checks]]` entry's target as written, by index.
    pub targets: Vec<String>,
    /// Whether `probe.check_timeout` was given (file or variable), not a default.
    pub check_timeout: bool,
    /// Whether `fleet.default_deadline` was given.
    pub default_deadline: bool,
}

/// Labels Prometheus itself puts on every series it scrapes: a check label of that name
/// would clash with them on `vantage_target_info`.
const SCRAPE_LABELS: &[&str] = &["job", "instance"];

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
    /// `written`: what the operator wrote (each `[[checks]]` target as it reads in the file,
    /// which values were given rather than defaults).
    pub(super) fn validate(&self, origin: &Origin, written: &Written) -> Result<(), ConfigError> {
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
            if let Some(problem) = vantage_agent::region::label_problem(&a.region) {
                return Err(invalid(
                    format!("agents[{i}].region"),
                    format!("`{}`: {problem}", a.name),
                ));
            }
            if !names.insert(&a.name) {
                return Err(ConfigError::DuplicateName {
                    section: "agents",
                    name: a.name.clone(),
                });
            }
            if let Some((first, source)) = same_source(&self.agents[..i], a) {
                return Err(ConfigError::SharedToken {
                    index: i,
                    name: a.name.clone(),
                    key: source,
                    first,
                    first_name: self.agents[first].name.clone(),
                });
            }
        }
        if self.fleet.local_agent {
            if let Some(problem) = vantage_agent::region::label_problem(&self.fleet.local_region) {
                return Err(invalid("fleet.local_region".into(), problem));
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
        if regions.is_empty() {
            return Err(invalid(
                "fleet.local_agent".into(),
                "no region would run checks: fleet.local_agent is false and there is no [[agents]] entry; set local_agent = true or add an [[agents]] entry (name, region, token)".into(),
            ));
        }
        self.validate_limits(origin)?;
        let compared: Vec<String> = self
            .checks
            .iter()
            .map(|c| {
                vantage_agent::target::redacted(crate::rate::canonical_url(&c.target).as_str())
            })
            .collect();
        for (i, c) in self.checks.iter().enumerate() {
            if let Some(first) = compared[..i].iter().position(|e| *e == compared[i]) {
                return Err(invalid(
                    format!("checks[{i}].target"),
                    self.same_target(first, i, &written.targets),
                ));
            }
            if c.interval < Duration::from_secs(1) {
                return Err(invalid(
                    format!("checks[{i}].interval"),
                    format!("{}: must be at least 1s", c.target),
                ));
            }
            if let Some(d) = c.deadline {
                if d > c.interval {
                    return Err(invalid(
                        format!("checks[{i}].deadline"),
                        format!(
                            "{}: {} is longer than its interval ({}); runs never overlap, so a run could not finish before the next is due: shorten the deadline or lengthen the interval",
                            c.target,
                            humantime::format_duration(d),
                            humantime::format_duration(c.interval)
                        ),
                    ));
                }
                if d.is_zero() {
                    return Err(invalid(
                        format!("checks[{i}].deadline"),
                        format!("{}: must be greater than zero, e.g. 30s", c.target),
                    ));
                }
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
            if let Some(key) = c
                .labels
                .keys()
                .find(|k| SCRAPE_LABELS.contains(&k.as_str()))
            {
                return Err(invalid(
                    format!("checks[{i}].labels.{key}"),
                    format!(
                        "{}: `{key}` is a label Prometheus sets on every scraped series (job, instance): on vantage_target_info the check's value would be renamed exported_{key} and routing or grouping by `{key}` would see the scrape's value instead; rename it, e.g. `service` or `team`",
                        c.target
                    ),
                ));
            }
        }
        self.validate_wait(written)
            .map_err(|message| invalid("probe.check_timeout".into(), message))?;
        if self.fleet.heartbeat_interval.is_zero() {
            // A zero period would stop the agent reaper at start (tokio's interval panics):
            // silent agents would never be dropped.
            return Err(invalid(
                "fleet.heartbeat_interval".into(),
                "must be greater than zero, e.g. 5s".into(),
            ));
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

impl Config {
    /// Why `checks[i]` is refused as the target of `checks[first]`: both entries by index and
    /// as written (credential values hidden), the form they share and how targets are
    /// compared. Two entries that differ only in a hidden value (two tenants' `?token=`) are
    /// one target too: reports and metrics show targets with that value hidden.
    fn same_target(&self, first: usize, i: usize, written: &[String]) -> String {
        let spelt = |j: usize| {
            written.get(j).map_or_else(
                || self.checks[j].target.to_string(),
                |w| vantage_agent::target::redacted(w.trim()),
            )
        };
        let (a, b) = (spelt(first), spelt(i));
        let canonical = |j: usize| crate::rate::canonical_url(&self.checks[j].target);
        let shown = vantage_agent::target::redacted(canonical(i).as_str());
        let fix = "keep one entry per target";
        if canonical(first) != canonical(i) {
            return format!(
                "`{b}` is the same target as checks[{first}].target `{a}`: they differ only in a credential value in the query, which reports, metrics and this comparison hide (`{shown}`), so the target appears twice; {fix}, and give each tenant's token in a [[credentials]] entry instead of the URL"
            );
        }
        if a == b {
            return format!("`{b}` appears twice (also checks[{first}].target); {fix}");
        }
        format!(
            "`{b}` is the same target as checks[{first}].target `{a}`: the coordinator compares targets as `{shown}` (scheme and host in lower case, no trailing dot on the name, an IPv4-mapped IPv6 address as IPv4, no default port, . and .. resolved, credential values in the query hidden), so the target appears twice; {fix}"
        )
    }
}

impl Config {
    /// The in-process vantage's wait for one exchange (probe.check_timeout) against the
    /// deadline of a run it makes, as `vantage check` judges --check-timeout against
    /// --timeout: a wait as long as the run or longer can never run out inside it, so a
    /// target that never answers could not be told from the run's own deadline. Both given
    /// so: refused. One a default: accepted, the deadline bounds the wait (never shortened:
    /// it would blame the target for this vantage's own budget), and what it ends is unknown
    /// — as for a remote agent's own --check-timeout against the jobs it is sent.
    fn validate_wait(&self, written: &Written) -> Result<(), String> {
        if !self.fleet.local_agent || !written.check_timeout {
            return Ok(());
        }
        let t = self.probe.check_timeout;
        let f = |d: Duration| humantime::format_duration(d).to_string();
        let refuse = |key: &str, of: &str, d: Duration| {
            Err(format!(
                "{} is not shorter than {key} ({}{of}): the in-process vantage's wait for one exchange would be as long as the whole run or longer, so a target that never answers could not be told from the run's own deadline (what the deadline ends is unknown); lower probe.check_timeout below {} or raise {key} above {}",
                f(t),
                f(d),
                f(d),
                f(t)
            ))
        };
        if written.default_deadline && t >= self.fleet.default_deadline {
            return refuse(
                "fleet.default_deadline",
                ", the deadline of a check that names none",
                self.fleet.default_deadline,
            );
        }
        let local = &self.fleet.local_region;
        for (i, c) in self.checks.iter().enumerate() {
            let runs_here = c.regions.is_empty() || c.regions.contains(local);
            match c.deadline {
                Some(d) if runs_here && t >= d => {
                    return refuse(
                        &format!("checks[{i}].deadline"),
                        &format!(", {}", c.target),
                        d,
                    )
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The longest probe.check_timeout: one exchange that needs longer is stuck, not slow (the
/// command line's bound too).
const MAX_CHECK_TIMEOUT: Duration = Duration::from_secs(600);

/// Why an egress exception (`assume_global`, `allow_non_global`, or their flags) that covers
/// every address, or more than a /8 of IPv4 (written as IPv4, as IPv4-mapped IPv6
/// `::ffff:0:0/96`, or as IPv6 wider than a /7), is refused; `None` for a real prefix. Two
/// halves (`0.0.0.0/1` and `128.0.0.0/1`) are each refused, so no list of them adds up to
/// "everything".
pub fn egress_catch_all(prefix: &ipnet::IpNet) -> Option<String> {
    use ipnet::{IpNet, Ipv6Net};
    let mapped: Ipv6Net = "::ffff:0:0/96".parse().expect("the IPv4-mapped prefix");
    let too_wide = match prefix {
        IpNet::V4(p) => p.prefix_len() < 8,
        IpNet::V6(p) => {
            p.prefix_len() < 7
                || p.contains(&mapped)
                || (mapped.contains(p) && p.prefix_len() < 96 + 8)
        }
    };
    let what = if prefix.prefix_len() == 0 {
        "covers every address".to_string()
    } else {
        "covers more than a /8 of the IPv4 space (or all of it, through IPv4-mapped IPv6)"
            .to_string()
    };
    too_wide.then(|| format!("{prefix} {what}, which switches the egress policy off (every vantage would connect anywhere a target points it, internal services included); name the lab's own prefixes, e.g. 198.51.100.0/24"))
}

impl Config {
    /// Limits that would switch a protection off or make the coordinator useless.
    fn validate_limits(&self, origin: &Origin) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            origin: origin.clone(),
            key: key.into(),
            message,
        };
        for (key, list) in [
            ("probe.assume_global", &self.probe.assume_global),
            ("probe.allow_non_global", &self.probe.allow_non_global),
        ] {
            if let Some(message) = list.iter().find_map(egress_catch_all) {
                return Err(invalid(key, message));
            }
        }
        let t = self.probe.check_timeout;
        if t.is_zero() || t > MAX_CHECK_TIMEOUT {
            return Err(invalid(
                "probe.check_timeout",
                format!(
                    "{} is out of bounds: one exchange's timeout is greater than zero and at most {}, e.g. 5s",
                    humantime::format_duration(t),
                    humantime::format_duration(MAX_CHECK_TIMEOUT)
                ),
            ));
        }
        for (key, zero) in [
            ("server.max_body_bytes", self.server.max_body_bytes == 0),
            ("store.max_reports", self.store.max_reports == 0),
            (
                "server.checks_per_target_per_minute",
                self.server.checks_per_target_per_minute == 0,
            ),
            (
                "server.max_checks_in_flight",
                self.server.max_checks_in_flight == 0,
            ),
        ] {
            if zero {
                return Err(invalid(
                    key,
                    "must be greater than zero (0 would refuse every on-demand check); omit it for the default".into(),
                ));
            }
        }
        Ok(())
    }
}

/// The earlier entry whose token source is `agent`'s (the same variable, or the same file by
/// its canonical path when it exists), and the key that names it.
fn same_source(earlier: &[Agent], agent: &Agent) -> Option<(usize, &'static str)> {
    let canonical = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    earlier.iter().enumerate().find_map(|(j, e)| {
        if agent.token_env.is_some() && e.token_env == agent.token_env {
            return Some((j, "token_env"));
        }
        match (&e.token_file, &agent.token_file) {
            (Some(x), Some(y)) if canonical(x) == canonical(y) => Some((j, "token_file")),
            _ => None,
        }
    })
}

/// Read a secret from its source; `what` names the entry (`[[agents]] \`eu-west-1\``).
pub fn resolve(
    what: &str,
    env: &Option<String>,
    file: &Option<PathBuf>,
) -> Result<SecretString, ConfigError> {
    match (env, file) {
        (Some(name), None) => from_env(name).map_err(|reason| match reason {
            CredentialError::EnvMissing(_) => ConfigError::SecretEnv {
                what: what.into(),
                variable: name.clone(),
            },
            // A token that cannot go in a header: refused when the secrets are read (at
            // start, on a reload), naming the entry and the variable, never the token.
            reason => ConfigError::SecretFile {
                what: what.into(),
                reason,
            },
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
