//! The async runtime of the `vantage` command: how many worker threads.
//!
//! tokio starts one worker per core by default. Each worker costs a stack and, once it has
//! allocated under load, a malloc arena of its own; the coordinator's work is I/O-bound (10,000
//! merged checks a minute take about a tenth of a core), so on a large machine the extra
//! workers only cost memory (BENCHMARKS.md, "Where the memory goes"). At most `MAX_WORKERS`
//! then, unless TOKIO_WORKER_THREADS says otherwise.

/// Worker threads by default, at most.
pub const MAX_WORKERS: usize = 2;

/// The worker count to set, or `None` to let tokio read TOKIO_WORKER_THREADS.
pub fn worker_threads(env: Option<&std::ffi::OsStr>, cores: usize) -> Option<usize> {
    match env {
        Some(_) => None,
        None => Some(cores.clamp(1, MAX_WORKERS)),
    }
}

/// The multi-threaded runtime, its workers bounded as above.
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = worker_threads(std::env::var_os("TOKIO_WORKER_THREADS").as_deref(), cores) {
        builder.worker_threads(n);
    }
    builder.enable_all().build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_follow_the_cores_up_to_the_cap_unless_the_environment_says() {
        assert_eq!(worker_threads(None, 1), Some(1));
        assert_eq!(worker_threads(None, 2), Some(2));
        assert_eq!(worker_threads(None, 64), Some(MAX_WORKERS));
        assert_eq!(
            worker_threads(Some("8".as_ref()), 64),
            None,
            "tokio reads it"
        );
    }
}
