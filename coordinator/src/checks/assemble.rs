//! Assembling a report: region results merged into findings and a decision, with the fixes
//! that name the stack the wire proved.

use std::collections::{BTreeMap, BTreeSet};

use vantage_agent::model::{RegionResult, RegionStatus};
use vantage_agent::Target;

use crate::merge::{merge, Absence, MergeInput};
use crate::report::{Report, SCHEMA_ID};

/// Merge region results into a final report; `absent` is what the dispatcher knows about
/// regions that have no result (empty where there is no dispatcher: a local check, tests).
pub fn assemble(
    target: &Target,
    started_at: String,
    duration_ms: u64,
    requested: &[String],
    regions: Vec<RegionResult>,
    degraded: &BTreeSet<String>,
    absent: &BTreeMap<String, Absence>,
) -> Report {
    let mut merged = merge(&MergeInput {
        requested,
        results: &regions,
        degraded,
        absent,
    });
    // Fixes that name the stack the wire proved (coordinator/src/stacks.rs).
    crate::stacks::annotate(&mut merged.findings, &regions);
    // A region whose run finished but did not observe the target, with no failure of the
    // target's to say why, is `partial` (checks.md 5), never `complete`.
    let mut regions = regions;
    for r in regions
        .iter_mut()
        .filter(|r| merged.partial.contains(&r.region))
    {
        r.status = RegionStatus::Partial;
    }
    Report {
        schema: SCHEMA_ID.to_string(),
        id: ulid::Ulid::new().to_string(),
        target: target.to_string(),
        started_at,
        duration_ms,
        state: None,
        decision: merged.decision,
        reason: merged.reason,
        era: merged.era,
        regions,
        findings: merged.findings,
        baseline: None,
        gate: None,
    }
}
