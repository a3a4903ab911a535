//! Which findings a region's check stands behind, so a JUnit test case (or a `-v` line) can
//! carry the verdict of the finding it maps to; and the findings no check stands behind.

use vantage_agent::catalog::{FindingId, Stage};
use vantage_agent::model::{CheckResult, Outcome, RegionResult};

use crate::merge::finding_id;
use crate::report::{Finding, Report};

/// The findings that `check`, as observed in `region`, contributed to.
pub fn findings_of<'r>(
    report: &'r Report,
    region: &RegionResult,
    check: &CheckResult,
) -> Vec<&'r Finding> {
    if !check.outcome.is_problem() {
        return Vec::new();
    }
    // The merge names the finding by the check, whether the failure is regional, its cause
    // and the era; both scopes are tried, and the finding must name this region.
    let mut ids: Vec<FindingId> = vec![
        finding_id(check.id, check.outcome, false, check.cause, region.era),
        finding_id(check.id, check.outcome, true, check.cause, region.era),
    ];
    ids.extend(check.id.findings());
    let stage = check.id.stage();
    if check.outcome == Outcome::Fail
        && matches!(
            stage,
            Stage::Shape | Stage::Era | Stage::Transport | Stage::Auth | Stage::Listing
        )
    {
        ids.push(FindingId::EdgeDivergent);
    }
    if stage == Stage::Dns {
        ids.push(FindingId::DnsSplitHorizon);
    }
    ids.push(FindingId::FleetVantageDegraded);
    // edge.divergent gathers several checks: it is this check's only when its evidence says
    // so (the merge writes `region: check observed`).
    let divergent_here = format!("{}: {} ", region.region, check.id);
    report
        .findings
        .iter()
        .filter(|f| ids.contains(&f.id) && f.regions.contains(&region.region))
        .filter(|f| {
            f.id != FindingId::EdgeDivergent
                || f.evidence.iter().any(|e| e.starts_with(&divergent_here))
        })
        .collect()
}

/// Findings with no check behind them in a region they name (a region that did not report,
/// a missing credential, answers that differ): each becomes a test case of its own there.
pub fn unattributed(report: &Report) -> Vec<(&Finding, String)> {
    let mut out = Vec::new();
    for f in &report.findings {
        if f.regions.is_empty() {
            out.push((f, String::new()));
        }
        for region in &f.regions {
            let explained = report
                .regions
                .iter()
                .filter(|r| &r.region == region)
                .flat_map(|r| r.checks.iter().map(move |c| (r, c)))
                .any(|(r, c)| findings_of(report, r, c).iter().any(|g| g.id == f.id));
            if !explained {
                out.push((f, region.clone()));
            }
        }
    }
    out
}
