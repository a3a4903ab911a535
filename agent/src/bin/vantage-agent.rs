//! `vantage-agent`: one region's vantage. It dials the coordinator, runs the jobs it is
//! given with the probe engine, and serves `/healthz`, `/readyz` and `/metrics`.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use vantage_agent::client::{self, AgentConfig, AgentState};
use vantage_agent::{credentials, Engine, ProbeOptions};

#[derive(Debug, Parser)]
#[command(
    name = "vantage-agent",
    version,
    about = "A Vantage agent: probes MCP endpoints from this region for a coordinator",
    long_about = "A Vantage agent dials its coordinator (no inbound port needed), registers for \
its region, runs the checks it is sent with the same probe engine as `vantage check`, and \
reports the results. Its token is read from an environment variable or a file, never from \
the command line.",
    after_help = "Example:\n  VANTAGE_AGENT_TOKEN=… vantage-agent --coordinator https://vantage.example.com:50051 --region eu-west"
)]
struct Args {
    /// The coordinator's gRPC address, e.g. http://127.0.0.1:50051 or https://vantage.example.com:50051
    #[arg(long)]
    coordinator: String,
    /// This agent's region (the coordinator checks it against the region bound to the token).
    #[arg(long)]
    region: String,
    /// Environment variable holding the agent token.
    #[arg(
        long = "token-env",
        value_name = "NAME",
        default_value = "VANTAGE_AGENT_TOKEN"
    )]
    token_env: String,
    /// Read the agent token from this file instead.
    #[arg(long = "token-file", value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// A stable agent id (default: hostname-pid).
    #[arg(long)]
    id: Option<String>,
    /// Where to serve /healthz, /readyz and /metrics.
    #[arg(long, default_value = "127.0.0.1:9101")]
    listen: SocketAddr,
    /// Trust these CA certificates (PEM) for a TLS coordinator.
    #[arg(long = "ca-file", value_name = "PEM")]
    ca_file: Option<PathBuf>,
    /// A client certificate (PEM) for a coordinator that requires mutual TLS.
    #[arg(long = "cert-file", value_name = "PEM", requires = "key_file")]
    cert_file: Option<PathBuf>,
    /// The key of --cert-file (PEM).
    #[arg(long = "key-file", value_name = "PEM", requires = "cert_file")]
    key_file: Option<PathBuf>,
    /// Jobs run at once; more wait in a queue until their deadline.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// First reconnect wait (jittered, doubling).
    #[arg(long = "backoff-min", default_value = "500ms", value_parser = up_to_an_hour)]
    backoff_min: Duration,
    /// Longest reconnect wait; also the retry interval after the coordinator refuses the token.
    #[arg(long = "backoff-max", default_value = "30s", value_parser = up_to_an_hour)]
    backoff_max: Duration,
    /// Timeout of one exchange (request, connect, handshake, DNS query); at most 10m.
    #[arg(long = "check-timeout", default_value = "5s", value_parser = up_to_ten_minutes)]
    check_timeout: Duration,
    /// Trust this CA (PEM) when probing targets, besides the public roots.
    #[arg(long = "target-ca-file", value_name = "PEM")]
    target_ca_file: Option<PathBuf>,
    /// Ask this DNS server (IP:PORT) instead of the system resolver; repeatable.
    #[arg(long = "nameserver", value_name = "IP:PORT")]
    nameserver: Vec<SocketAddr>,
}

/// A duration flag: greater than zero and at most `max`, or an error that says how to write it.
fn bounded(s: &str, max: Duration) -> Result<Duration, String> {
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("`{s}`: {e}; write e.g. 500ms, 5s, 2m"))?;
    if d.is_zero() {
        return Err("a duration must be greater than zero; write e.g. 500ms, 5s, 2m".into());
    }
    if d > max {
        return Err(format!(
            "`{s}` is longer than the limit of {}",
            humantime::format_duration(max)
        ));
    }
    Ok(d)
}

fn up_to_ten_minutes(s: &str) -> Result<Duration, String> {
    bounded(s, Duration::from_secs(600))
}

fn up_to_an_hour(s: &str) -> Result<Duration, String> {
    bounded(s, Duration::from_secs(3600))
}

fn main() -> std::process::ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return std::process::ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VANTAGE_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    match rt.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let token = match &args.token_file {
        Some(path) => credentials::from_file(path)?,
        None => credentials::from_env(&args.token_env)?,
    };
    let ca_pem = match &args.ca_file {
        Some(p) => Some(std::fs::read(p).with_context(|| format!("--ca-file {}", p.display()))?),
        None => None,
    };
    let identity = match (&args.cert_file, &args.key_file) {
        (Some(c), Some(k)) => Some((
            std::fs::read(c).with_context(|| format!("--cert-file {}", c.display()))?,
            std::fs::read(k).with_context(|| format!("--key-file {}", k.display()))?,
        )),
        _ => None,
    };
    let target_ca = match &args.target_ca_file {
        Some(p) => {
            Some(std::fs::read(p).with_context(|| format!("--target-ca-file {}", p.display()))?)
        }
        None => None,
    };
    let id = args.id.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "agent".into());
        format!("{}-{}", host.trim(), std::process::id())
    });
    // This vantage's own settings; each job sets its deadline, policy and credentials.
    // Built now, so a bad CA file fails here rather than on the first job.
    let engine = Engine::new(ProbeOptions {
        region: args.region.clone(),
        check_timeout: args.check_timeout,
        extra_ca_pem: target_ca,
        connect_non_global: false,
        resolver: vantage_agent::probe::dns::ResolverChoice {
            nameservers: args.nameserver.clone(),
        },
        ..ProbeOptions::default()
    })?;
    let cfg = AgentConfig {
        coordinator: args.coordinator.clone(),
        region: args.region.clone(),
        agent_id: id,
        token,
        ca_pem,
        identity,
        max_concurrency: args.concurrency,
        backoff_min: args.backoff_min,
        backoff_max: args.backoff_max,
        engine,
    };
    let state = Arc::new(AgentState::default());
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("--listen {}", args.listen))?;
    tracing::info!(listen = %listener.local_addr()?, region = %args.region, "health and metrics endpoints up");
    let health = vantage_agent::health::router(state.clone(), args.region.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, health).await;
    });
    tokio::select! {
        _ = client::run(cfg, state) => {}
        _ = shutdown() => tracing::info!("shutting down"),
    }
    Ok(())
}

async fn shutdown() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        if let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = ctrl_c.await;
}
