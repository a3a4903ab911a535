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
    r.register(Box::new(
        prometheus::process_collector::ProcessCollector::for_self(),
    ))?;
    let info = GaugeVec::new(
        Opts::new(BUILD_INFO, "The running build (always 1)."),
        &["version", "component"],
    )?;
    info.with_label_values(&[env!("CARGO_PKG_VERSION"), component])
        .set(1.0);
    r.register(Box::new(info))
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
