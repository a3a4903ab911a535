//! A baseline: findings a team has accepted on an endpoint, each with a reason and an expiry
//! date. An accepted finding stays in the report, marked accepted, and does not fail the
//! gate; an entry past its date that still matches fails it until it is renewed or removed;
//! an entry that matches nothing is reported as stale. `vantage check --baseline FILE` and a
//! scheduled check's `baseline = "FILE"` read the same file; `vantage baseline --from
//! report.json` writes a starting one.
//!
//! ```toml
//! [[accept]]
//! endpoint = "https://mcp.example.com/mcp"
//! finding = "transport.delete"
//! region = "eu"                 # optional: only there
//! severity = "low"              # optional: accepted up to this severity, no worse
//! reason = "the gateway answers DELETE; fix tracked in OPS-123"
//! expires = 2026-12-31
//! ```
//!
//! `severity` is the ceiling of what was accepted: the same finding at a higher severity
//! (a low one that became high) is a new fault, not the accepted one: it is not accepted,
//! the gate judges it as it would without the entry, and the entry is reported stale with
//! both severities.
//! `vantage baseline --from` writes each finding's severity; an entry without one accepts
//! the finding at any severity.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use vantage_agent::catalog::FindingId;
use vantage_agent::model::Severity;
use vantage_agent::Target;

use crate::exit::says_nothing_about_the_target;
use crate::report::{BaselineEntry, Report};

/// Why a baseline cannot be used. Every message names the file and the entry, and says the
/// cause itself: a configuration error shows only this text (serde's custom error), so the
/// I/O error is part of it and not also a `source` (which `{:#}` would print twice).
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("baseline {}: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("baseline {}: {message}", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("baseline {}: accept[{index}].{key}: {message}", path.display())]
    Entry {
        path: PathBuf,
        index: usize,
        key: &'static str,
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    #[serde(default)]
    accept: Vec<EntryShape>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryShape {
    endpoint: String,
    finding: String,
    #[serde(default)]
    region: Option<String>,
    #[serde(default)]
    severity: Option<String>,
    reason: String,
    /// A TOML date (`2026-12-31`) or the same as a string.
    expires: toml::Value,
}

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The endpoint, as a report names it.
    pub endpoint: String,
    /// The endpoint normalised as `rate::key` does (`scheme://host:port/path`, no trailing
    /// slash, no query): what an entry is matched on, so `…/mcp/` and `…:443/mcp` name the
    /// endpoint `…/mcp`. Host names are not resolved: `localhost` is not `127.0.0.1`.
    pub key: String,
    pub finding: FindingId,
    pub region: Option<String>,
    /// The highest severity accepted (`None`: any).
    pub severity: Option<Severity>,
    pub reason: String,
    pub expires: time::Date,
}

impl Entry {
    fn reported(&self) -> BaselineEntry {
        BaselineEntry {
            finding: self.finding.to_string(),
            region: self.region.clone(),
            reason: self.reason.clone(),
            expires: date_text(self.expires),
            endpoint: None,
            note: None,
        }
    }

    /// As reported, stale for `note`.
    fn stale(&self, note: String) -> BaselineEntry {
        BaselineEntry {
            note: Some(note),
            ..self.reported()
        }
    }
}

/// A parsed baseline file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    pub path: PathBuf,
    pub entries: Vec<Entry>,
}

/// `YYYY-MM-DD`.
pub fn date_text(d: time::Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Parse `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Result<time::Date, String> {
    let fix = || format!("`{s}` is not a date; write YYYY-MM-DD, e.g. 2026-12-31");
    let parts: Vec<&str> = s.trim().split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(fix());
    };
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i32>(), m.parse::<u8>(), d.parse::<u8>()) else {
        return Err(fix());
    };
    let month = time::Month::try_from(m).map_err(|_| fix())?;
    time::Date::from_calendar_date(y, month, d).map_err(|_| fix())
}

/// A severity name as reports write it (`low`, `medium`, `high`, `critical`); `info` is
/// refused because a baseline accepts only what fails a gate.
pub fn parse_severity(s: &str) -> Result<Severity, String> {
    match s {
        "low" => Ok(Severity::Low),
        "medium" => Ok(Severity::Medium),
        "high" => Ok(Severity::High),
        "critical" => Ok(Severity::Critical),
        "info" => Err("`info` findings never fail a gate and need no entry; write low, medium, high or critical, or remove the entry".into()),
        other => Err(format!("`{other}` is not a severity; write low, medium, high or critical (the highest severity the entry accepts)")),
    }
}

/// Today in UTC.
pub fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

impl Baseline {
    /// Read and check a baseline file.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|error| BaselineError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Self::parse(&text, path)
    }

    /// Check a baseline's text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Baseline, BaselineError> {
        let syntax = |message: String| BaselineError::Syntax {
            path: path.to_path_buf(),
            message,
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| syntax(e.to_string()))?;
        let file: FileShape = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            syntax(format!(
                "{}: {}; each entry is [[accept]] with endpoint, finding, reason, expires and an optional region and severity",
                e.path(),
                e.inner().message().trim()
            ))
        })?;
        let mut entries = Vec::new();
        for (index, e) in file.accept.into_iter().enumerate() {
            let bad = |key: &'static str, message: String| BaselineError::Entry {
                path: path.to_path_buf(),
                index,
                key,
                message,
            };
            let parsed = Target::parse(&e.endpoint).map_err(|err| {
                let shown = vantage_agent::target::redacted(&e.endpoint);
                bad("endpoint", format!("`{shown}`: {err}"))
            })?;
            let (endpoint, key) = (parsed.to_string(), crate::rate::key(&parsed));
            let finding: FindingId = e
                .finding
                .parse()
                .map_err(|err| bad("finding", format!("{err}")))?;
            if says_nothing_about_the_target(finding) {
                return Err(bad(
                    "finding",
                    format!("{finding} says nothing about the endpoint (nothing was observed, or the fault is the vantage's), so it cannot be accepted; remove the entry"),
                ));
            }
            if e.reason.trim().is_empty() {
                return Err(bad("reason", "say why the finding is accepted".into()));
            }
            if e.region.as_deref().is_some_and(|r| r.trim().is_empty()) {
                return Err(bad(
                    "region",
                    "empty; omit it to accept the finding everywhere".into(),
                ));
            }
            let severity = match e.severity.as_deref().map(str::trim) {
                None => None,
                Some(text) => Some(parse_severity(text).map_err(|m| bad("severity", m))?),
            };
            let expires = match &e.expires {
                toml::Value::String(t) => parse_date(t).map_err(|m| bad("expires", m))?,
                toml::Value::Datetime(dt) if dt.time.is_none() && dt.offset.is_none() => {
                    parse_date(&dt.to_string()).map_err(|m| bad("expires", m))?
                }
                other => {
                    return Err(bad(
                        "expires",
                        format!("`{other}` is not a date; write YYYY-MM-DD, e.g. 2026-12-31"),
                    ))
                }
            };
            entries.push(Entry {
                endpoint,
                key,
                finding,
                region: e.region,
                severity,
                reason: e.reason.trim().to_string(),
                expires,
            });
        }
        Ok(Baseline {
            path: path.to_path_buf(),
            entries,
        })
    }
}

/// A starting baseline from finished reports: one entry per finding above info about the
/// endpoint (per region for a regional finding), all with `reason` and `expires` and the
/// finding's severity as the entry's ceiling, as TOML with each finding's title in a comment.
pub fn starting(reports: &[&Report], reason: &str, expires: time::Date) -> String {
    let mut out = String::from(
        "# Accepted findings (vantage baseline). Give each entry its real reason before you\n\
         # commit it; an entry past `expires` fails the gate, one that matches nothing is\n\
         # reported as stale. Use it with `vantage check --baseline FILE`.\n",
    );
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut n = 0;
    let mut unacceptable: Vec<&str> = Vec::new();
    for report in reports {
        for f in &report.findings {
            if f.severity <= Severity::Info {
                continue;
            }
            if says_nothing_about_the_target(f.id) {
                unacceptable.push(f.id.as_str());
                continue;
            }
            let regions: Vec<Option<&String>> = match f.scope {
                crate::report::Scope::Regional if !f.regions.is_empty() => {
                    f.regions.iter().map(Some).collect()
                }
                _ => vec![None],
            };
            for region in regions {
                n += 1;
                out.push_str(&format!(
                    "\n# {} ({}): {}\n[[accept]]\n",
                    f.id,
                    f.severity.as_str(),
                    f.title
                ));
                out.push_str(&format!("endpoint = {}\n", quote(&report.target)));
                out.push_str(&format!("finding = {}\n", quote(f.id.as_str())));
                if let Some(r) = region {
                    out.push_str(&format!("region = {}\n", quote(r)));
                }
                out.push_str(&format!("severity = {}\n", quote(f.severity.as_str())));
                out.push_str(&format!("reason = {}\n", quote(reason)));
                out.push_str(&format!("expires = {}\n", date_text(expires)));
            }
        }
    }
    unacceptable.sort();
    unacceptable.dedup();
    if !unacceptable.is_empty() {
        out.push_str(&format!(
            "\n# Not written: {} say(s) nothing about the endpoint (nothing was observed, or the fault is the vantage's) and cannot be accepted; fix what stopped the observation and check again.\n",
            unacceptable.join(", ")
        ));
    }
    if n == 0 && unacceptable.is_empty() {
        out.push_str("\n# No finding above info: nothing to accept.\n");
    }
    out
}

mod apply;
mod config_file;

pub use apply::unscheduled;
pub use config_file::{relative_to, BaselineFile};

#[cfg(test)]
#[path = "baseline_tests.rs"]
mod tests;

#[cfg(test)]
mod match_tests;
#[cfg(test)]
mod test_support;
