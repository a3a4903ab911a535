//! Assembling reports, and the single-machine default: one in-process vantage named `local`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use vantage_agent::model::RegionResult;
use vantage_agent::{Engine, Job, Target};

use crate::merge::{merge, Absence, MergeInput};
use crate::report::{Report, SCHEMA_ID};

/// The current time as RFC 3339 UTC, second precision.
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc());
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Merge region results into a final report.
pub fn assemble(
    target: &Target,
    started_at: String,
    duration_ms: u64,
    requested: &[String],
    regions: Vec<RegionResult>,
    degraded: &BTreeSet<String>,
) -> Report {
    assemble_with(
        target,
        started_at,
        duration_ms,
        requested,
        regions,
        degraded,
        &BTreeMap::new(),
    )
}

/// Like [`assemble`], with what the dispatcher knows about regions that have no result.
pub fn assemble_with(
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
    }
}

/// Run `job` on one in-process vantage and merge its result.
pub async fn check(engine: &Engine, job: &Job) -> Report {
    let started_at = now_rfc3339();
    let started = Instant::now();
    let region = engine.run_job(job).await;
    finish(job, started_at, started, region)
}

/// Like [`check`], telling `progress` when each stage starts.
pub async fn check_with_progress(
    engine: &Engine,
    job: &Job,
    progress: std::sync::Arc<dyn vantage_agent::progress::Progress>,
) -> Report {
    let started_at = now_rfc3339();
    let started = Instant::now();
    let region = engine.run_job_with_progress(job, progress).await;
    finish(job, started_at, started, region)
}

fn finish(job: &Job, started_at: String, started: Instant, region: RegionResult) -> Report {
    let requested = vec![region.region.clone()];
    assemble(
        &job.target,
        started_at,
        started.elapsed().as_millis() as u64,
        &requested,
        vec![region],
        &BTreeSet::new(),
    )
}
