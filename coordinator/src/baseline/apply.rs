//! Applying a baseline: entries matched on the normalised endpoint (and the finding's
//! severity, up to an entry's ceiling), findings marked accepted or expired, and every entry
//! that accepts nothing reported stale with why.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use vantage_agent::Target;

use super::{date_text, Baseline, Entry};
use crate::report::{Acceptance, AcceptanceStatus, BaselineEntry, BaselineStatus, Report};

/// Entries with their index in the file.
type Indexed<'a> = Vec<(usize, &'a Entry)>;

/// The normalised endpoint of a report's target (its text if it does not parse).
fn endpoint_key(target: &str) -> String {
    Target::parse(target)
        .map(|t| crate::rate::key(&t))
        .unwrap_or_else(|_| target.to_string())
}

impl Baseline {
    /// Mark `report`'s findings as the entries for its endpoint say, on `today`, and record
    /// what was accepted, expired and stale in `report.baseline`. Entries are matched on the
    /// normalised endpoint. An entry for one region of a finding seen in more regions
    /// accepts nothing (the gate judges the finding, not a region of it): it is reported
    /// stale with that reason, unless other entries cover the finding's other regions.
    /// Entries for other endpoints are left to [`Baseline::unchecked`].
    pub fn apply(&self, report: &mut Report, today: time::Date) {
        let key = endpoint_key(&report.target);
        let mine: Vec<(usize, &Entry)> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.key == key)
            .collect();
        let mut used: BTreeSet<usize> = BTreeSet::new();
        let mut partial: Vec<BaselineEntry> = Vec::new();
        let mut status = BaselineStatus {
            file: self.path.display().to_string(),
            accepted: Vec::new(),
            expired: Vec::new(),
            stale: Vec::new(),
        };
        for f in &mut report.findings {
            let (matching, too_mild): (Indexed, Indexed) = mine
                .iter()
                .filter(|(_, e)| {
                    e.finding == f.id && e.region.as_ref().is_none_or(|r| f.regions.contains(r))
                })
                .copied()
                .partition(|(_, e)| e.severity.is_none_or(|ceiling| f.severity <= ceiling));
            // An entry accepted the finding up to a severity; worse is a new fault.
            for (i, e) in &too_mild {
                used.insert(*i);
                partial.push(e.stale(format!(
                    "accepts nothing: {} was accepted up to {} and is now {}; review it, then fix it or raise the entry's severity",
                    f.id,
                    e.severity.map(|s| s.as_str()).unwrap_or_default(),
                    f.severity.as_str()
                )));
            }
            if matching.is_empty() {
                continue;
            }
            let (valid, expired): (Vec<&Entry>, Vec<&Entry>) = matching
                .iter()
                .map(|(_, e)| *e)
                .partition(|e| e.expires >= today);
            let covers_all = valid.iter().any(|e| e.region.is_none())
                || (!f.regions.is_empty()
                    && f.regions
                        .iter()
                        .all(|r| valid.iter().any(|e| e.region.as_ref() == Some(r))));
            let reasons = |v: &[&Entry]| {
                let mut r: Vec<&str> = v.iter().map(|e| e.reason.as_str()).collect();
                r.dedup();
                r.join("; ")
            };
            let earliest = |v: &[&Entry]| {
                v.iter()
                    .map(|e| e.expires)
                    .min()
                    .map(date_text)
                    .unwrap_or_default()
            };
            if covers_all {
                used.extend(matching.iter().map(|(i, _)| *i));
                f.accepted = Some(Acceptance {
                    status: AcceptanceStatus::Accepted,
                    reason: reasons(&valid),
                    expires: earliest(&valid),
                });
                status.accepted.push(f.id.to_string());
                continue;
            }
            // Expired entries are judged (they fail the gate); valid entries for some of the
            // finding's regions accept nothing, and say why.
            for (i, e) in &matching {
                if e.expires < today {
                    used.insert(*i);
                    continue;
                }
                let missing: Vec<&str> = f
                    .regions
                    .iter()
                    .filter(|r| !valid.iter().any(|v| v.region.as_ref() == Some(*r)))
                    .map(String::as_str)
                    .collect();
                partial.push(e.stale(format!(
                    "accepts nothing: {} is seen in {}, and the gate judges the whole finding; add an entry for {} too, or omit `region` to accept it everywhere",
                    f.id,
                    f.regions.join(", "),
                    missing.join(", ")
                )));
                used.insert(*i);
            }
            if !expired.is_empty() {
                f.accepted = Some(Acceptance {
                    status: AcceptanceStatus::Expired,
                    reason: reasons(&expired),
                    expires: earliest(&expired),
                });
                status.expired.extend(expired.iter().map(|e| e.reported()));
            }
        }
        status.stale = mine
            .iter()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, e)| e.reported())
            .collect();
        partial.dedup();
        status.stale.extend(partial);
        report.baseline = Some(status);
    }

    /// The entries for endpoints none of `targets` names (normalised), each stale with its
    /// endpoint and the reason: a baseline written for `…/mcp/` or another host name must
    /// not vanish silently.
    pub fn unchecked(&self, targets: &[&str]) -> Vec<BaselineEntry> {
        let keys: BTreeSet<String> = targets.iter().map(|t| endpoint_key(t)).collect();
        self.entries
            .iter()
            .filter(|e| !keys.contains(&e.key))
            .map(|e| BaselineEntry {
                endpoint: Some(e.endpoint.clone()),
                ..e.stale(
                    "its endpoint was not checked in this run; endpoints match on scheme, host, port and path (host names are not resolved: `localhost` is not `127.0.0.1`)"
                        .to_string(),
                )
            })
            .collect()
    }
}

/// The entries of the baselines scheduled checks name (`(target, baseline)` per check) for
/// endpoints no check naming that baseline checks, by file: the schedule logs them as stale
/// when it starts (and on every reload), so they do not vanish silently.
pub fn unscheduled<'a>(
    checks: impl IntoIterator<Item = (&'a str, &'a Baseline)>,
) -> Vec<(PathBuf, BaselineEntry)> {
    let mut by_file: std::collections::BTreeMap<&Path, (&Baseline, Vec<&str>)> = Default::default();
    for (target, b) in checks {
        by_file
            .entry(&b.path)
            .or_insert((b, Vec::new()))
            .1
            .push(target);
    }
    by_file
        .into_iter()
        .flat_map(|(path, (b, targets))| {
            b.unchecked(&targets)
                .into_iter()
                .map(move |e| (path.to_path_buf(), e))
        })
        .collect()
}
