//! `vantage-agent`: one region's vantage. It dials the coordinator, runs the jobs it is
//! given with the probe engine, and serves `/healthz`, `/readyz` and `/metrics`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use vantage_agent::client::{self, AgentConfig, AgentState};
use vantage_agent::egress::Ceiling;
use vantage_agent::logging::{self, LogFormat};
use vantage_agent::probe::dns::parse_nameserver;
use vantage_agent::{credentials, pem, Engine, ProbeOptions};

#[derive(Debug, Parser)]
#[command(
    name = "vantage-agent",
    version,
    about = "A Vantage agent: probes MCP endpoints from this region for a coordinator",
    long_about = "A Vantage agent dials its coordinator (no inbound port needed), registers for \
its region, runs the checks it is sent with the same probe engine as `vantage check`, and \
reports the results. Its token is read from an environment variable or a file, never from \
the command line.",
    after_help = "Examples:\n  VANTAGE_AGENT_TOKEN=… vantage-agent --coordinator https://vantage.example:50051 --region eu\n  vantage-agent --coordinator http://127.0.0.1:50051 --region eu --token-file eu.token\n  vantage-agent --coordinator http://127.0.0.1:50051 --region lab --target-ca-file lab-ca.pem\n\n--ca-file and --cert-file/--key-file are for the connection to a TLS coordinator;\n--target-ca-file is the CA this agent trusts for the MCP endpoints it probes."
)]
struct Args {
    /// The coordinator's gRPC address (server.grpc_listen, not the API), e.g.
    /// http://127.0.0.1:50051 or https://vantage.example.com:50051
    #[arg(long, value_name = "URL", value_parser = parse_coordinator)]
    coordinator: String,
    /// This agent's region (the coordinator checks it against the region bound to the token):
    /// 1 to 63 letters, digits, `-`, `_` or `.`, not only dots.
    #[arg(long, value_parser = region_label)]
    region: String,
    /// Environment variable holding the agent token.
    #[arg(
        long = "token-env",
        value_name = "NAME",
        default_value = "VANTAGE_AGENT_TOKEN"
    )]
    token_env: String,
    /// Read the agent token from this file instead; re-read before each (re)connect, so a
    /// rotated file (a mounted Secret updated in place) is presented without a restart.
    #[arg(long = "token-file", value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// A stable agent id (default: hostname-pid): 1 to 128 letters, digits, `-`, `_` or `.`
    /// (`~` is the coordinator's suffix for a second session with one id).
    #[arg(long, value_parser = agent_id)]
    id: Option<String>,
    /// Where to serve /healthz, /readyz and /metrics.
    #[arg(long, default_value = "127.0.0.1:9101")]
    listen: SocketAddr,
    /// Trust these CA certificates (PEM) for a TLS (https://) coordinator. For the targets
    /// this agent probes, use --target-ca-file.
    #[arg(long = "ca-file", value_name = "PEM")]
    ca_file: Option<PathBuf>,
    /// A client certificate (PEM) for a coordinator that requires mutual TLS.
    #[arg(long = "cert-file", value_name = "PEM", requires = "key_file")]
    cert_file: Option<PathBuf>,
    /// The key of --cert-file (PEM).
    #[arg(long = "key-file", value_name = "PEM", requires = "cert_file")]
    key_file: Option<PathBuf>,
    /// Jobs run at once; more wait in a queue until their deadline.
    #[arg(long, default_value_t = 16, value_parser = at_least_one)]
    concurrency: usize,
    /// First reconnect wait (jittered, doubling).
    #[arg(long = "backoff-min", default_value = "500ms", value_parser = up_to_an_hour)]
    backoff_min: Duration,
    /// Longest reconnect wait; also the retry interval after the coordinator refuses the token
    /// (with --token-file holding a new token since that attempt: the shortest backoff instead).
    #[arg(long = "backoff-max", default_value = "30s", value_parser = up_to_an_hour)]
    backoff_max: Duration,
    /// Timeout of one exchange (request, connect, handshake, DNS query); at most 10m.
    #[arg(long = "check-timeout", default_value = "5s", value_parser = up_to_ten_minutes)]
    check_timeout: Duration,
    /// Trust this CA (PEM) when probing targets, besides the public roots (a lab CA).
    #[arg(long = "target-ca-file", value_name = "PEM")]
    target_ca_file: Option<PathBuf>,
    /// On SIGTERM: how long running jobs may take to finish before the agent exits (jobs
    /// still running then are reported missing by the coordinator).
    #[arg(long = "drain-timeout", value_name = "DURATION", default_value = "20s", value_parser = humantime::parse_duration)]
    drain_timeout: Duration,
    /// Log lines as text (colour only on a terminal) or one JSON object per line.
    #[arg(long = "log-format", value_enum, default_value_t = LogFormat::Text, env = "VANTAGE_LOG_FORMAT")]
    log_format: LogFormat,
    /// The widest egress policy this agent accepts from its coordinator: a job whose
    /// probe.allow_non_global or probe.assume_global names a prefix outside these CIDRs is
    /// refused. Repeatable; `none` accepts no exception at all. Without the flag the
    /// coordinator's policy is taken as it comes.
    #[arg(long = "allow-non-global-max", value_name = "CIDR|none", value_parser = ceiling_entry)]
    allow_non_global_max: Vec<Option<ipnet::IpNet>>,
    /// Ask this DNS server (IP:PORT) instead of the system resolver; repeatable.
    #[arg(long = "nameserver", value_name = "IP:PORT", value_parser = parse_nameserver)]
    nameserver: Vec<SocketAddr>,
    /// This agent's network has no IPv6 (an IPv4-only cluster): IPv6 addresses are not tried
    /// and net.ipv6 is left out of its region's verdicts, saying so. Without it, a target
    /// with IPv6 addresses this agent cannot reach is `unknown` in its region (never seen,
    /// never passed).
    #[arg(long = "no-ipv6")]
    no_ipv6: bool,
    /// How long the subscriptions/listen stream is watched after its acknowledgement
    /// (listen.sse: a stream that ends inside it fails; one open at its end passes for that
    /// long). Default 250ms; greater than zero, at most 10m; a job's deadline cuts it (then
    /// listen.sse is unknown).
    #[arg(long = "listen-window", value_name = "DURATION", value_parser = up_to_ten_minutes)]
    listen_window: Option<Duration>,
}

/// `--region`: the configuration's rule for a region label.
fn region_label(s: &str) -> Result<String, String> {
    vantage_agent::region::label_problem(s).map_or(Ok(s.to_string()), Err)
}

/// `--id`: what the coordinator keeps intact in `GET /v1/agents`, the reports' `"agent"` and
/// its log lines. `~` is refused: the coordinator names a second session with an id already
/// connected `ID~2`, so `--id same~2` could not be told from that suffix (fresh eyes round
/// 17, nit 3); so are spaces, control characters and the rest, which a log line or a
/// terminal would not show as written.
fn agent_id(s: &str) -> Result<String, String> {
    const RULE: &str = "an agent id is 1 to 128 letters, digits, `-`, `_` or `.` (e.g. eu-west-1a)";
    if s.is_empty() {
        return Err(format!(
            "the agent id is empty; {RULE}, or omit --id for hostname-pid"
        ));
    }
    if let Some(bad) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        let why = if bad == '~' {
            format!(
                "`~` is the coordinator's suffix for a second session with an id already connected (`ID~2`), so this id could not be told from it; {RULE}: write e.g. `{}`",
                s.replace('~', "-")
            )
        } else if bad.is_ascii_graphic() {
            format!("it has `{bad}`; {RULE}")
        } else {
            format!("it has U+{:04X}; {RULE}", bad as u32)
        };
        return Err(why);
    }
    if s.chars().count() > 128 {
        return Err(format!(
            "the agent id is {} characters long; {RULE}",
            s.chars().count()
        ));
    }
    Ok(s.to_string())
}

/// `--concurrency`: at least one job at a time.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 would run no job at all; write at least 1, e.g. --concurrency 16".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "`{s}` is not a number of jobs; write e.g. --concurrency 16"
        )),
    }
}

/// Settings that are each valid alone but not together; refused before anything starts.
fn check_together(args: &Args) -> Result<(), String> {
    if args.backoff_min > args.backoff_max {
        return Err(format!(
            "--backoff-min {} is longer than --backoff-max {}: make --backoff-min at most --backoff-max",
            humantime::format_duration(args.backoff_min),
            humantime::format_duration(args.backoff_max)
        ));
    }
    Ok(())
}

/// One `--allow-non-global-max` value: a CIDR prefix, or `none`.
fn ceiling_entry(s: &str) -> Result<Option<ipnet::IpNet>, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    s.parse::<ipnet::IpNet>().map(Some).map_err(|_| {
        format!("`{s}` is not a CIDR prefix; write e.g. 100.64.0.0/10 or 2001:db8::/32, or `none`")
    })
}

/// An http:// or https:// URL with a host and nothing after the port.
fn parse_coordinator(s: &str) -> Result<String, String> {
    let shown = vantage_agent::target::redacted(s);
    let fix = |why: &str| {
        format!("`{shown}`: {why}; give the coordinator's gRPC URL with its scheme, e.g. http://127.0.0.1:50051 or https://vantage.example.com:50051")
    };
    let url = url::Url::parse(s).map_err(|_| fix("not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(fix("not an http:// or https:// URL"));
    }

    if url.path() != "/" || url.query().is_some() {
        return Err(fix("a gRPC address has no path"));
    }
    Ok(s.trim_end_matches('/').to_string())
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

/// Test seam (debug builds only; a release build never reads the variable): the end-to-end
/// fleet tests play an agent whose clock is wrong with `VANTAGE_TEST_CLOCK_SKEW_S`.
fn test_clock_skew() {
    if !cfg!(debug_assertions) {
        return;
    }
    if let Some(s) = std::env::var("VANTAGE_TEST_CLOCK_SKEW_S")
        .ok()
        .and_then(|v| v.parse::<i64>().ok())
    {
        tracing::warn!(
            seconds = s,
            "test seam: TLS is judged with this agent's clock shifted"
        );
        vantage_agent::probe::tls_chain::set_test_clock_skew(s);
    }
}

fn main() -> std::process::ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return std::process::ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    if let Err(e) = check_together(&args) {
        eprintln!("error: {e}");
        return std::process::ExitCode::from(1);
    }
    // The hint for an untrusted target names this binary's flag (its --ca-file is the
    // coordinator's CA).
    vantage_agent::probe::tls::set_target_ca_flag("--target-ca-file");
    logging::init_daemon(args.log_format, "info");
    test_clock_skew();
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
    // Checked here, not by the flag's parser: clap repeats a refused value in its error.
    if args.coordinator.contains('@') {
        bail!(
            "--coordinator {}: the URL carries user information (user:password@), which is never sent nor logged; the agent authenticates with its token (--token-env or --token-file)",
            vantage_agent::target::redacted(&args.coordinator)
        );
    }
    let token = match &args.token_file {
        Some(path) => credentials::from_file(path)?,
        None => credentials::from_env(&args.token_env).map_err(|e| match e {
            credentials::CredentialError::EnvMissing(_) => anyhow::anyhow!(
                "the agent token: {e}; export it, name another variable with --token-env, or use --token-file PATH"
            ),
            e => anyhow::anyhow!("the agent token: {e}"),
        })?,
    };
    if args.coordinator.starts_with("http://") {
        for (flag, given) in [
            ("--ca-file", args.ca_file.is_some()),
            ("--cert-file", args.cert_file.is_some()),
        ] {
            if given {
                bail!(
                    "{flag} is for a TLS coordinator, but --coordinator {} is plain http://: use https:// for a TLS coordinator; to trust a lab CA for the targets this agent probes, use --target-ca-file",
                    args.coordinator
                );
            }
        }
    }
    let ca_pem = pem::read_certificates_opt("--ca-file", args.ca_file.as_deref())?;
    let identity = match (&args.cert_file, &args.key_file) {
        (Some(c), Some(k)) => Some((
            pem::read_certificates("--cert-file", c)?,
            pem::read("--key-file", k)?,
        )),
        _ => None,
    };
    let target_ca = pem::read_certificates_opt("--target-ca-file", args.target_ca_file.as_deref())?;
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
        // A fleet vantage: the target obeys the egress policy like every other address.
        allow_named_target: false,
        resolver: vantage_agent::probe::dns::ResolverChoice {
            nameservers: args.nameserver.clone(),
        },
        ipv6: !args.no_ipv6,
        listen_window: args
            .listen_window
            .unwrap_or(vantage_agent::probe::http::LISTEN_WINDOW),
        ..ProbeOptions::default()
    })?;
    let ceiling = (!args.allow_non_global_max.is_empty()).then(|| {
        Ceiling::new(
            args.allow_non_global_max
                .iter()
                .flatten()
                .copied()
                .collect(),
        )
    });
    let cfg = AgentConfig {
        coordinator: args.coordinator.clone(),
        region: args.region.clone(),
        agent_id: id,
        token,
        token_file: args.token_file.clone(),
        ca_pem,
        identity,
        max_concurrency: args.concurrency,
        backoff_min: args.backoff_min,
        backoff_max: args.backoff_max,
        engine,
        drain_timeout: args.drain_timeout,
        ceiling,
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
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown().await;
        tracing::info!("shutdown signal received");
        let _ = stop_tx.send(true);
    });
    client::run(cfg, state, stop_rx).await;
    tracing::info!("stopped");
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The agent's arguments with `--id id`, parsed.
    fn parse_id(id: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from([
            "vantage-agent",
            "--coordinator",
            "http://127.0.0.1:50051",
            "--region",
            "eu",
            "--id",
            id,
        ])
    }

    fn id_error(id: &str) -> String {
        parse_id(id)
            .map(|a| panic!("--id {id:?} was accepted as {:?}", a.id))
            .unwrap_err()
            .to_string()
    }

    /// `--id` refuses what the coordinator would not keep intact: `~` (its duplicate suffix),
    /// spaces and control characters, an empty or an over-long id; each with the rule, and
    /// `~` with a corrected id.
    #[test]
    fn an_id_the_coordinator_could_not_keep_intact_is_refused_at_start() {
        let said = id_error("same~2");
        assert!(
            said.contains("`~` is the coordinator's suffix for a second session")
                && said.contains("write e.g. `same-2`"),
            "{said}"
        );
        for (id, needle) in [
            ("eu west", "it has U+0020"),
            ("eu\u{1b}[31m", "it has U+001B"),
            ("eu/1", "it has `/`"),
            ("", "the agent id is empty"),
            (&"a".repeat(129), "the agent id is 129 characters long"),
        ] {
            let said = id_error(id);
            assert!(
                said.contains(needle) && said.contains("1 to 128 letters, digits"),
                "{id:?}: {said}"
            );
        }
        for ok in [
            "ag-eu",
            "snapshot-eu",
            "host.example_1-4242",
            &"a".repeat(128),
        ] {
            let a = parse_id(ok).unwrap();
            assert_eq!(a.id.as_deref(), Some(ok));
        }
    }
}
