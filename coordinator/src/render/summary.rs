//! The words every renderer shares: the one "because" line under the decision, where a
//! finding was seen, and skipped checks grouped by their reason.

use vantage_agent::model::{Outcome, RegionResult, Severity};

use crate::report::{
    Acceptance, AcceptanceStatus, BaselineEntry, BaselineStatus, Decision, Finding, Report,
};

/// Findings that drive `decision`, most severe first (the merge sorts them so).
fn decisive(report: &Report, at_least: Severity) -> Vec<&Finding> {
    report
        .findings
        .iter()
        .filter(|f| {
            f.severity >= at_least
                && f.id != vantage_agent::catalog::FindingId::FleetVantageDegraded
        })
        .collect()
}

/// One sentence that says why the decision is what it is: the decisive finding (or reason).
pub fn because(report: &Report) -> String {
    let lead = |fs: Vec<&Finding>, level: &str| -> String {
        let Some(first) = fs.first() else {
            return report.reason.clone();
        };
        let mut s = format!(
            "{} ({}, {}, {})",
            first.title,
            first.id,
            first.severity.as_str(),
            seen_from(first, report)
        );
        if fs.len() > 1 {
            s.push_str(&format!(
                "; {} more finding(s) at {level}{}",
                fs.len() - 1,
                if level == "the same level" {
                    ""
                } else {
                    " or above"
                }
            ));
        }
        s
    };
    match report.decision {
        Decision::Blocked => lead(decisive(report, Severity::High), "high"),
        Decision::Review => lead(decisive(report, Severity::Medium), "medium"),
        Decision::Unknown => {
            let fs: Vec<&Finding> = report
                .findings
                .iter()
                .filter(|f| crate::merge::UNKNOWN_FINDINGS.contains(&f.id))
                .collect();
            if fs.is_empty() {
                report.reason.clone()
            } else {
                lead(fs, "the same level")
            }
        }
        Decision::Pass => {
            let low = report
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Low)
                .count();
            let skipped = skipped_count(report);
            let mut s = if low == 0 {
                "every check that ran met its rule (no finding above info)".to_string()
            } else {
                format!("{low} low-severity finding(s), nothing above low")
            };
            if skipped > 0 {
                s.push_str(&format!(
                    "; {skipped} check(s) did not apply here or could not run, each with its reason in the report"
                ));
            }
            s
        }
    }
}

/// The fix that goes with the `because` line when nothing was decided: the first finding
/// that names why the target was not observed (`checks.md` 4.1), so the first screen says
/// what to do (e.g. `probe.allow_non_global` for a vantage that refused by policy).
pub fn unknown_fix(report: &Report) -> Option<&str> {
    if report.decision != Decision::Unknown {
        return None;
    }
    // The finding that names why, else one about a region that did not observe the target
    // (a degraded vantage, a redirect there), never another region's fault.
    let gaps = crate::merge::not_observing(report);
    report
        .findings
        .iter()
        .find(|f| crate::merge::UNKNOWN_FINDINGS.contains(&f.id))
        .or_else(|| {
            report
                .findings
                .iter()
                .find(|f| f.severity >= Severity::Low && f.regions.iter().any(|r| gaps.contains(r)))
        })
        .or_else(|| {
            report
                .findings
                .iter()
                .find(|f| f.severity >= Severity::Medium)
        })
        .map(|f| f.remediation.as_str())
}

fn skipped_count(report: &Report) -> usize {
    report
        .regions
        .iter()
        .flat_map(|r| r.checks.iter())
        .filter(|c| matches!(c.outcome, Outcome::Skip | Outcome::Error | Outcome::Unknown))
        .count()
}

/// Where a finding was seen, in plain words: `seen from local`, `seen from every region (eu,
/// us)`, `seen from eu only` (us had evidence and did not see it), `seen from eu; no evidence
/// from us` (us could not observe what the finding is about: checks.md 3, a region without
/// evidence is neither for nor against), `seen from eu; us degraded (its evidence does not
/// count)`, `ap did not report`.
pub fn seen_from(f: &Finding, report: &Report) -> String {
    use vantage_agent::catalog::{CheckId, FindingId};
    let regions = f.regions.join(", ");
    if regions.is_empty() {
        return "not tied to a region".into();
    }
    if f.id == FindingId::FleetRegionMissing {
        return format!("{regions} did not report");
    }
    // Requested regions that did not report are not in `report.regions`.
    let missing: Vec<&str> = report
        .findings
        .iter()
        .filter(|m| m.id == FindingId::FleetRegionMissing)
        .flat_map(|m| m.regions.iter().map(String::as_str))
        .filter(|r| !report.regions.iter().any(|x| x.region == *r))
        .collect();
    if report.regions.len() + missing.len() <= 1 {
        return format!("seen from {regions}");
    }
    let degraded: Vec<&str> = report
        .findings
        .iter()
        .filter(|d| d.id == FindingId::FleetVantageDegraded && d.id != f.id)
        .flat_map(|d| d.regions.iter().map(String::as_str))
        .filter(|r| !f.regions.iter().any(|x| x == r))
        .collect();
    // The checks a failure of which is this finding: a region has evidence about it when
    // one of them passed or failed there. Findings no check maps to (comparisons between
    // regions, the vantage's own gaps) say nothing of the others.
    let checks: Vec<CheckId> = CheckId::ALL
        .iter()
        .copied()
        .filter(|c| c.findings().any(|x| x == f.id))
        .collect();
    let evidence_in = |r: &RegionResult| {
        checks.is_empty()
            || (r.reported()
                && r.checks.iter().any(|c| {
                    checks.contains(&c.id)
                        && matches!(
                            crate::merge::evidence::reading(c),
                            crate::merge::evidence::Reading::Pass
                                | crate::merge::evidence::Reading::Problem
                        )
                }))
    };
    let others: Vec<&RegionResult> = report
        .regions
        .iter()
        .filter(|r| !f.regions.contains(&r.region) && !degraded.contains(&r.region.as_str()))
        .collect();
    let silent: Vec<&str> = others
        .iter()
        .filter(|r| !evidence_in(r))
        .map(|r| r.region.as_str())
        .chain(missing.iter().copied())
        .collect();
    let looked = others.iter().filter(|r| evidence_in(r)).count();
    let mut out = if looked > 0 {
        format!("seen from {regions} only")
    } else if silent.is_empty() && degraded.is_empty() {
        format!("seen from every region ({regions})")
    } else {
        format!("seen from {regions}")
    };
    if !silent.is_empty() {
        out.push_str(&format!("; no evidence from {}", silent.join(", ")));
    }
    if !degraded.is_empty() {
        out.push_str(&format!(
            "; {} degraded (its evidence does not count)",
            degraded.join(", ")
        ));
    }
    out
}

/// A region's skipped (or not run, or unknown) checks, grouped by reason, in check order.
pub fn skipped_by_reason(r: &RegionResult) -> Vec<(String, Vec<&str>)> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for c in &r.checks {
        let reason = match c.outcome {
            Outcome::Skip => c.observed.clone(),
            Outcome::Error => format!("could not run here: {}", c.observed),
            Outcome::Unknown => format!("no evidence: {}", c.observed),
            _ => continue,
        };
        match groups.iter_mut().find(|(why, _)| *why == reason) {
            Some((_, ids)) => ids.push(c.id.as_str()),
            None => groups.push((reason, vec![c.id.as_str()])),
        }
    }
    groups
}

/// `pass`, `fail`, … as a word.
pub fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Warn => "warn",
        Outcome::Skip => "skip",
        Outcome::Error => "error",
        Outcome::Unknown => "unknown",
    }
}

/// The region's status as a word (`complete`, `no-agent`, …).
pub fn status_word(r: &RegionResult) -> String {
    serde_json::to_string(&r.status)
        .unwrap_or_default()
        .trim_matches('"')
        .to_string()
}

/// `accepted by the baseline until 2026-12-31: reason`, or that it expired.
pub fn acceptance(a: &Acceptance) -> String {
    match a.status {
        AcceptanceStatus::Accepted => {
            format!("accepted by the baseline until {}: {}", a.expires, a.reason)
        }
        AcceptanceStatus::Expired => format!(
            "ACCEPTANCE EXPIRED on {} (fails the gate; fix it or renew the entry): {}",
            a.expires, a.reason
        ),
    }
}

/// `baseline b.toml: 2 accepted, 1 expired, 1 stale entry`.
pub fn baseline_line(b: &BaselineStatus) -> String {
    format!(
        "baseline {}: {} finding(s) accepted, {} expired entr{}, {} stale entr{}",
        b.file,
        b.accepted.len(),
        b.expired.len(),
        if b.expired.len() == 1 { "y" } else { "ies" },
        b.stale.len(),
        if b.stale.len() == 1 { "y" } else { "ies" },
    )
}

/// One baseline entry in words.
pub fn entry_words(e: &BaselineEntry) -> String {
    let region = e
        .region
        .as_ref()
        .map(|r| format!(" in {r}"))
        .unwrap_or_default();
    let endpoint = e
        .endpoint
        .as_ref()
        .map(|u| format!(" on {u}"))
        .unwrap_or_default();
    format!(
        "{}{region}{endpoint} (until {}: {})",
        e.finding, e.expires, e.reason
    )
}

/// A stale entry in words: `stale entry (matches nothing; remove it): …`, or its note.
pub fn stale_words(e: &BaselineEntry) -> String {
    format!(
        "stale entry ({}): {}",
        e.note.as_deref().unwrap_or("matches nothing; remove it"),
        entry_words(e)
    )
}
