//! `vantage check --coordinator` when the coordinator goes away mid-check (red team round 12,
//! N9): the report that can still be formed, so that `-o FILE` holds one (decision unknown,
//! the finding that says why) instead of nothing.

use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::Target;
use vantage_coordinator::report::Report;

/// The report of a check whose coordinator went away: the regions that had reported (as
/// the coordinator's last answer had them), and every other requested region missing with
/// why. Only when the regions are known (`--regions`): without them the coordinator chose
/// them, and a report of the regions that happened to arrive could pass what was not seen.
pub fn gone_report(
    target: &Target,
    requested: &[String],
    partial: Option<Box<Report>>,
    gone: &str,
) -> Option<Report> {
    if requested.is_empty() {
        return None;
    }
    let mut regions: Vec<String> = Vec::with_capacity(requested.len());
    for r in requested {
        if !regions.contains(r) {
            regions.push(r.clone());
        }
    }
    let (started_at, arrived) = match partial {
        Some(p) => (p.started_at, p.regions),
        None => (vantage_coordinator::clock::now_rfc3339(), Vec::new()),
    };
    // In the requested order: what arrived, and an `error` block for every other region.
    let mut results = Vec::with_capacity(regions.len());
    let mut absent = std::collections::BTreeMap::new();
    for name in &regions {
        match arrived.iter().find(|r| &r.region == name) {
            Some(r) => results.push(r.clone()),
            None => {
                results.push(RegionResult::absent(name, RegionStatus::Error));
                absent.insert(
                    name.clone(),
                    vantage_coordinator::merge::Absence {
                        what: format!("{gone}, before this region's result reached vantage check"),
                        fix: "run the check again once the coordinator is back (its log says why it stopped)".into(),
                        fleet: false,
                    },
                );
            }
        }
    }
    let report = vantage_coordinator::checks::assemble(
        target,
        started_at,
        0,
        &regions,
        results,
        &Default::default(),
        &absent,
    );
    Some(report)
}

#[cfg(test)]
mod tests {
    use vantage_agent::catalog::FindingId;
    use vantage_coordinator::report::{Decision, Report, SCHEMA_ID};

    use super::*;

    const GONE: &str = "the coordinator at http://127.0.0.1:1 went away while check 01X was running (connection refused)";

    fn partial(regions: Vec<RegionResult>) -> Box<Report> {
        Box::new(Report {
            schema: SCHEMA_ID.into(),
            id: "01X".into(),
            target: "https://t.example/mcp".into(),
            started_at: "2026-12-02T07:00:00Z".into(),
            duration_ms: 0,
            state: Some("running".into()),
            decision: Decision::Unknown,
            reason: "running: regions are outstanding".into(),
            era: vantage_agent::model::Era::Unknown,
            regions,
            findings: vec![],
            baseline: None,
            gate: None,
        })
    }

    /// The regions that had not reported are missing, with the coordinator's departure as
    /// the reason; the report is final (no `running` state) and unknown.
    #[test]
    fn the_regions_that_did_not_report_are_missing_because_the_coordinator_went_away() {
        let target = Target::parse("https://t.example/mcp").unwrap();
        let eu = RegionResult::absent("eu", RegionStatus::Timeout);
        let requested = ["eu".to_string(), "us".to_string(), "us".to_string()];
        let r = gone_report(&target, &requested, Some(partial(vec![eu])), GONE).unwrap();
        assert_eq!(r.state, None);
        assert_eq!(r.decision, Decision::Unknown);
        assert_eq!(r.started_at, "2026-12-02T07:00:00Z");
        let names: Vec<&str> = r.regions.iter().map(|r| r.region.as_str()).collect();
        assert_eq!(names, ["eu", "us"]);
        let missing = r
            .findings
            .iter()
            .find(|f| f.id == FindingId::FleetRegionMissing)
            .unwrap_or_else(|| panic!("{:?}", r.findings));
        assert!(missing.regions.contains(&"us".to_string()), "{missing:?}");
        assert!(
            missing.evidence.iter().any(|e| e.starts_with("us:")
                && e.contains(GONE)
                && e.contains("before this region's result reached vantage check")),
            "{missing:?}"
        );
        // Nothing arrived at all: every requested region is missing.
        let r = gone_report(&target, &requested[..1], None, GONE).unwrap();
        assert_eq!(r.decision, Decision::Unknown);
        assert!(r
            .findings
            .iter()
            .any(|f| f.id == FindingId::FleetRegionMissing && f.regions == ["eu".to_string()]));
    }

    /// Without --regions the coordinator chose the regions: the ones that happened to
    /// arrive cannot stand for the check, so no report is formed.
    #[test]
    fn without_the_requested_regions_no_report_is_formed() {
        let target = Target::parse("https://t.example/mcp").unwrap();
        let eu = RegionResult::absent("eu", RegionStatus::Complete);
        assert!(gone_report(&target, &[], Some(partial(vec![eu])), GONE).is_none());
    }
}
