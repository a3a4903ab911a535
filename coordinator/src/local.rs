//! The single-machine default: one in-process vantage, its result merged into a report.

use std::collections::BTreeSet;
use std::time::Instant;

use vantage_agent::model::RegionResult;
use vantage_agent::{Engine, Job};

use crate::checks::assemble;
use crate::clock::now_rfc3339;
use crate::report::Report;

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
        &Default::default(),
    )
}
