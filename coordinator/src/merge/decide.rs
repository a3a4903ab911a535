//! The decision (`checks.md` 4), from evidence rather than from the absence of failures:
//! `blocked` on a high finding; `unknown` when a requested region did not report or did not
//! observe the target, or when a check had no evidence (the 4.1 findings); `review` on a
//! medium finding; `pass` only when every requested region observed the target. The order
//! pass < review < unknown < blocked is monotone: adding a failure never improves it.

use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Era, RegionResult, Severity};

use crate::report::{Decision, Finding, Scope};

/// Findings that say nothing was decided about the target (`checks.md` 4.1): each makes the
/// decision at least `unknown`.
pub const UNKNOWN_FINDINGS: &[FindingId] = &[
    FindingId::FleetRegionMissing,
    FindingId::AuthCredentialRequired,
    FindingId::AuthCredentialRefused,
    FindingId::ProbePolicyRefused,
    FindingId::ProbeIncomplete,
    FindingId::ProbeResolverFailed,
    FindingId::ProbeClockSkew,
    FindingId::ProbeTrustStore,
];

/// What the decision rests on besides the findings.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// Requested regions that did not observe the target (missing ones included).
    pub not_observing: Vec<String>,
    /// Effective (reporting, not degraded) regions.
    pub effective: usize,
}

fn name(f: &Finding) -> String {
    match f.scope {
        Scope::Global => f.id.to_string(),
        Scope::Regional => format!("{} in {}", f.id, f.regions.join(", ")),
    }
}

/// `checks.md` section 4, in order.
pub fn decide(findings: &[Finding], coverage: &Coverage) -> (Decision, String) {
    let blocking: Vec<String> = findings
        .iter()
        .filter(|f| f.severity >= Severity::High && f.id != FindingId::FleetVantageDegraded)
        .map(name)
        .collect();
    if !blocking.is_empty() {
        return (Decision::Blocked, blocking.join("; "));
    }
    let unknown: Vec<String> = findings
        .iter()
        .filter(|f| UNKNOWN_FINDINGS.contains(&f.id))
        .map(|f| format!("{} ({})", f.title, name(f)))
        .collect();
    if !unknown.is_empty() {
        return (Decision::Unknown, unknown.join("; "));
    }
    if coverage.effective == 0 {
        // A region set aside as degraded did report: say so rather than "no region".
        let degraded: Vec<String> = findings
            .iter()
            .filter(|f| f.id == FindingId::FleetVantageDegraded)
            .map(|f| format!("{} ({})", f.title, name(f)))
            .collect();
        if !degraded.is_empty() {
            return (Decision::Unknown, degraded.join("; "));
        }
        return (Decision::Unknown, "no region reported".into());
    }
    if !coverage.not_observing.is_empty() {
        // What the findings say about those regions (a redirect, a degraded vantage, …).
        let seen_there: Vec<String> = findings
            .iter()
            .filter(|f| {
                f.severity >= Severity::Low
                    && f.regions.iter().any(|r| coverage.not_observing.contains(r))
            })
            .map(|f| f.id.to_string())
            .collect();
        let mut why = format!(
            "{} did not observe the target (no MCP answer whose era is known), so nothing can pass there",
            coverage.not_observing.join(", ")
        );
        if !seen_there.is_empty() {
            why.push_str(&format!("; seen there: {}", seen_there.join(", ")));
        }
        return (Decision::Unknown, why);
    }
    let review: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == Severity::Medium)
        .map(name)
        .collect();
    if !review.is_empty() {
        return (Decision::Review, review.join("; "));
    }
    let minor = findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .count();
    let why = if minor == 0 {
        "every region observed the target; no finding above info".to_string()
    } else {
        format!(
            "every region observed the target; {minor} low-severity finding(s), nothing above low"
        )
    };
    (Decision::Pass, why)
}

/// The era most regions observed.
pub fn majority_era(effective: &[&RegionResult]) -> Era {
    let mut counts: Vec<(Era, usize)> = Vec::new();
    for r in effective {
        match counts.iter_mut().find(|(e, _)| *e == r.era) {
            Some((_, n)) => *n += 1,
            None => counts.push((r.era, 1)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(e, _)| e)
        .unwrap_or(Era::Unknown)
}
