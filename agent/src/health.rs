//! The agent's own endpoints: `/healthz` (alive), `/readyz` (registered with the
//! coordinator) and `/metrics` (its own state, the process collector's `process_*` and
//! `vantage_build_info`, Prometheus text format).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use prometheus::{Encoder, GaugeVec, IntCounter, IntGauge, Opts, Registry, TextEncoder};

use crate::client::AgentState;

/// `vantage_build_info{version, component} 1`, on the agent and the coordinator.
pub const BUILD_INFO: &str = "vantage_build_info";

/// Register the process collector (`process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, `process_open_fds`, …) and `vantage_build_info` into `r`.
pub fn register_process(r: &Registry, component: &str) -> Result<(), prometheus::Error> {
    #[cfg(target_os = "linux")]
    r.register(Box::new(PreciseCpu(
        prometheus::process_collector::ProcessCollector::for_self(),
    )))?;
    let info = GaugeVec::new(
        Opts::new(BUILD_INFO, "The running build (always 1)."),
        &["version", "component"],
    )?;
    info.with_label_values(&[env!("CARGO_PKG_VERSION"), component])
        .set(1.0);
    r.register(Box::new(info))
}

/// The process collector with `process_cpu_seconds_total` in fractions of a second: the
/// `prometheus` crate's counts whole seconds only (`(utime + stime) / CLK_TCK` in integers),
/// so a daemon that used 0.9 s of CPU said 0 and `rate()` over it was steps.
#[cfg(target_os = "linux")]
struct PreciseCpu(prometheus::process_collector::ProcessCollector);

#[cfg(target_os = "linux")]
impl prometheus::core::Collector for PreciseCpu {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        self.0.desc()
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        let mut families = self.0.collect();
        if let Some(seconds) = cpu_seconds() {
            for f in families
                .iter_mut()
                .filter(|f| f.name() == "process_cpu_seconds_total")
            {
                for m in f.mut_metric().iter_mut() {
                    let mut counter = prometheus::proto::Counter::default();
                    counter.set_value(seconds);
                    m.set_counter(counter);
                }
            }
        }
        families
    }
}

/// User and system CPU time of this process, in seconds (`/proc/self/stat`, fields 14 and
/// 15 after the command name, in clock ticks).
#[cfg(target_os = "linux")]
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    cpu_seconds_of(&stat, USER_HZ)
}

/// The clock ticks per second of `/proc/PID/stat`: USER_HZ, which Linux fixes at 100 in its
/// user-space ABI on every architecture it exports `/proc` times for (`sysconf(_SC_CLK_TCK)`
/// says the same; this crate forbids `unsafe`, which calling it would need).
#[cfg(target_os = "linux")]
const USER_HZ: f64 = 100.0;

/// The CPU seconds a `/proc/PID/stat` line says, at `ticks` per second. The command name
/// (in parentheses) may hold spaces and parentheses: fields count from its last `)`.
fn cpu_seconds_of(stat: &str, ticks: f64) -> Option<f64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    // After the name: state is field 3, utime field 14, stime field 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / ticks)
}

struct Ctx {
    state: Arc<AgentState>,
    region: String,
}

pub fn router(state: Arc<AgentState>, region: String) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(Arc::new(Ctx { state, region }))
}

async fn readyz(State(ctx): State<Arc<Ctx>>) -> Response {
    if ctx.state.ready.load(Ordering::SeqCst) {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        let why = ctx
            .state
            .last_error
            .lock()
            .ok()
            .and_then(|e| e.clone())
            .unwrap_or_else(|| "not registered yet".into());
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        )
            .into_response()
    }
}

/// Render the agent's metrics into a fresh registry (the values live in `AgentState`).
pub fn render(state: &AgentState, region: &str) -> String {
    let registry = Registry::new();
    let _ = register_process(&registry, "agent");
    let gauge = |name: &str, help: &str, v: i64| {
        if let Ok(g) = IntGauge::with_opts(Opts::new(name, help).const_label("region", region)) {
            g.set(v);
            let _ = registry.register(Box::new(g));
        }
    };
    let counter = |name: &str, help: &str, v: u64| {
        if let Ok(c) = IntCounter::with_opts(Opts::new(name, help).const_label("region", region)) {
            c.inc_by(v);
            let _ = registry.register(Box::new(c));
        }
    };
    gauge(
        "vantage_agent_connected",
        "1 while the stream to the coordinator is up.",
        state.connected.load(Ordering::Relaxed) as i64,
    );
    gauge(
        "vantage_agent_ready",
        "1 while registered with the coordinator.",
        state.ready.load(Ordering::Relaxed) as i64,
    );
    gauge(
        "vantage_agent_jobs_in_flight",
        "Jobs running now.",
        i64::from(state.in_flight.load(Ordering::Relaxed)),
    );
    gauge(
        "vantage_agent_jobs_queued",
        "Jobs waiting for a slot.",
        i64::from(state.queued.load(Ordering::Relaxed)),
    );
    counter(
        "vantage_agent_reconnects_total",
        "Reconnects to the coordinator.",
        state.reconnects.load(Ordering::Relaxed),
    );
    counter(
        "vantage_agent_jobs_total",
        "Jobs run.",
        state.jobs_run.load(Ordering::Relaxed),
    );
    counter(
        "vantage_agent_jobs_refused_total",
        "Jobs refused without running them (a policy wider than --allow-non-global-max, a job this agent cannot read); the coordinator counts them per region too (vantage_region_jobs_refused_total).",
        state.jobs_refused.load(Ordering::Relaxed),
    );
    counter(
        "vantage_agent_results_dropped_total",
        "Results that could not be sent.",
        state.dropped.load(Ordering::Relaxed),
    );
    let mut out = Vec::new();
    let _ = TextEncoder::new().encode(&registry.gather(), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

async fn metrics(State(ctx): State<Arc<Ctx>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        render(&ctx.state, &ctx.region),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_exports_its_state_its_process_and_its_build_with_counters_at_0() {
        let text = render(&AgentState::default(), "eu");
        for line in [
            "vantage_agent_ready{region=\"eu\"} 0",
            "vantage_agent_jobs_total{region=\"eu\"} 0",
            "vantage_agent_jobs_refused_total{region=\"eu\"} 0",
            "vantage_agent_reconnects_total{region=\"eu\"} 0",
            "vantage_agent_results_dropped_total{region=\"eu\"} 0",
        ] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
        assert!(
            text.contains(&format!(
                "vantage_build_info{{component=\"agent\",version=\"{}\"}} 1",
                env!("CARGO_PKG_VERSION")
            )),
            "{text}"
        );
        #[cfg(target_os = "linux")]
        assert!(text.contains("\nprocess_resident_memory_bytes "), "{text}");
    }
}

#[cfg(test)]
mod cpu_tests {
    use super::cpu_seconds_of;

    /// Fields count from the command name's last `)`; ticks become fractions of a second.
    #[test]
    fn cpu_seconds_read_utime_and_stime_after_the_command_name() {
        let stat =
            "4242 (vantage (x) y) S 1 4242 4242 0 -1 4194560 500 0 0 0 23 5 0 0 20 0 3 0 100 0 0";
        assert_eq!(cpu_seconds_of(stat, 100.0), Some(0.28));
        assert_eq!(cpu_seconds_of("garbage", 100.0), None);
        assert_eq!(cpu_seconds_of("1 (a) S 1 2", 100.0), None);
    }

    /// The exported counter is fractional: after burning a little CPU it is not a whole
    /// number of seconds (the crate's own collector would say 0 here).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_cpu_counter_has_fractions_of_a_second() {
        use prometheus::Encoder;
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(150) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let r = prometheus::Registry::new();
        super::register_process(&r, "test").unwrap();
        let mut out = Vec::new();
        prometheus::TextEncoder::new()
            .encode(&r.gather(), &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        let value: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("process_cpu_seconds_total "))
            .expect("the counter")
            .parse()
            .unwrap();
        assert!(value > 0.0 && value.fract() != 0.0, "{value}\n{text}");
    }
}
