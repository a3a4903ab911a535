//! What the agent knows of itself, read by its health endpoints and metrics: registered,
//! connected, reconnects, jobs run, refused, running and queued, results dropped, the last error.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// What the agent's health endpoints and metrics read.
#[derive(Debug, Default)]
pub struct AgentState {
    pub ready: AtomicBool,
    pub connected: AtomicBool,
    pub reconnects: AtomicU64,
    pub jobs_run: AtomicU64,
    /// Jobs refused without running them (a policy wider than `--allow-non-global-max`, a
    /// job that does not convert).
    pub jobs_refused: AtomicU64,
    pub in_flight: AtomicU32,
    pub queued: AtomicU32,
    pub dropped: AtomicU64,
    pub last_error: Mutex<Option<String>>,
}

impl AgentState {
    pub(crate) fn set_error(&self, e: String) {
        if let Ok(mut g) = self.last_error.lock() {
            *g = Some(e);
        }
    }
}

/// One job counted in a gauge (`queued`, `in_flight`) for as long as this lives: also when
/// the job's task is aborted (a cancel, the end of its session), which a decrement after
/// an `.await` would miss.
pub(crate) struct Counted<'a>(&'a AtomicU32);

impl<'a> Counted<'a> {
    pub(crate) fn enter(gauge: &'a AtomicU32) -> Self {
        gauge.fetch_add(1, Ordering::Relaxed);
        Counted(gauge)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
