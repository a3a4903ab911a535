//! The command line. Every exit code comes from `vantage_coordinator::exit`.

use std::io::Write;

use anyhow::{bail, Context};
use clap::Parser;
use vantage_agent::probe::dns::ResolverChoice;
use vantage_agent::probe::http::LISTEN_WINDOW;
use vantage_agent::{Engine, Job, Policy, ProbeOptions, Target};
use vantage_coordinator::exit::{self, Gate};
use vantage_coordinator::report::Report;
use vantage_coordinator::{explain, local, report};
use vantage_fixture::{Fault, Fixture, Hostile, HostileServer};

use crate::args::*;
use crate::output::{check_output_path, discard_stale, emit, live, to_stdout};

/// Parse arguments and run; returns the process exit code.
pub fn main() -> u8 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
        }
    };
    // The daemon logs its lifecycle at info; one-shot commands only warnings.
    match &cli.command {
        Command::Serve(a) => vantage_agent::logging::init_daemon(a.log_format, "info"),
        _ => vantage_agent::logging::init(vantage_agent::logging::LogFormat::Text, "warn"),
    }
    let runtime = match crate::runtime::build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return exit::USAGE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::USAGE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Check(args) => check(*args).await,
        Command::Baseline(args) => crate::endpoints::write_baseline(&args),
        Command::Serve(args) => serve(args).await,
        Command::Demo(args) => demo(args).await,
        Command::Fixture(args) => fixture(args).await,
        Command::Schema => {
            let text = serde_json::to_string_pretty(&report::json_schema())?;
            to_stdout(format!("{text}\n").as_bytes())
        }
        Command::Explain(args) => {
            let text = match args.id {
                Some(id) => explain::explain(&id)?,
                None => explain::table(),
            };
            to_stdout(text.as_bytes())
        }
        Command::Completions(args) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "vantage", &mut script);
            to_stdout(&script)
        }
        Command::Man(args) => crate::manpage::write(args.command.as_deref(), args.dir.as_deref()),
    }
}

/// This machine's vantage: its own settings. The target the operator names is probed
/// whatever its address; every other address obeys the egress policy (`--allow-non-global`
/// widens it). The job brings the deadline, policy and credentials.
fn engine(probe: &Probe, region: &str) -> anyhow::Result<Engine> {
    let listen_window = probe.listen_window.unwrap_or(LISTEN_WINDOW);
    if listen_window >= probe.deadline() {
        let f = |d| humantime::format_duration(d).to_string();
        let (w, t) = (f(listen_window), f(probe.deadline()));
        let given = if probe.timeout.is_some() {
            ""
        } else {
            " by default"
        };
        bail!("--listen-window {w} is not shorter than --timeout {t}{given}: the listen stream would be watched as long as the whole check or longer, so the check's own deadline would always end the watch (listen.sse unknown); lower --listen-window below {t} or raise --timeout above {w}");
    }
    let extra_ca_pem =
        vantage_agent::pem::read_certificates_opt("--ca-file", probe.ca_file.as_deref())?;
    Ok(Engine::new(ProbeOptions {
        region: region.to_string(),
        check_timeout: probe.exchange_timeout(),
        extra_ca_pem,
        allow_named_target: true,
        resolver: ResolverChoice {
            nameservers: probe.nameserver.clone(),
        },
        ipv6: !probe.no_ipv6,
        listen_window,
        ..ProbeOptions::default()
    })?)
}

/// The job the flags describe (tokens are read here, before any traffic).
fn job(probe: &Probe, target: Target) -> anyhow::Result<Job> {
    Ok(job_with(probe, target, probe.auth.credentials()?))
}

fn job_with(probe: &Probe, target: Target, credentials: vantage_agent::Credentials) -> Job {
    Job {
        target,
        deadline: probe.deadline(),
        expect_auth: probe.auth.expect_auth,
        policy: Policy {
            assume_global: probe.assume_global.clone(),
            allow_non_global: probe.allow_non_global.clone(),
        },
        credentials,
    }
}

/// Run one in-process vantage, with the stage and elapsed time on a terminal.
async fn check_here(engine: &Engine, job: &Job, output: &Output) -> Report {
    let region = engine.options().region.clone();
    let progress = live(
        output,
        &format!("checking {} from {region}", job.target),
        "starting",
    );
    let report =
        local::check_with_progress(engine, job, std::sync::Arc::new(progress.clone())).await;
    progress.finish();
    report
}

async fn check(args: CheckArgs) -> anyhow::Result<u8> {
    check_output_path(
        &args.output,
        &[
            ("--baseline", args.baseline.as_deref()),
            ("--targets", args.targets.as_deref()),
        ],
    )?;
    // From here on, a run that ends in an error has no document: an `--output` FILE left by
    // an earlier run is removed, so it never reads as this run's (a pass it did not see).
    let result = check_checked(&args).await;
    if result.is_err() {
        discard_stale(&args.output);
    }
    result
}

async fn check_checked(args: &CheckArgs) -> anyhow::Result<u8> {
    // Every endpoint, the baseline, the credentials and the CA file are read before any
    // traffic: bad input changes nothing (but an earlier run's report, see `check`).
    let targets = crate::endpoints::targets(&args.urls, args.targets.as_deref())?;
    let baseline = crate::endpoints::baseline(args.baseline.as_deref())?;
    let (reports, undecided, gone) = if args.fleet.coordinator.is_some() {
        let run = crate::remote::check(args, &targets).await?;
        (run.reports, run.undecided, run.gone)
    } else {
        // Refused before any traffic; with one of the two a default, a note.
        match args.probe.wait_within_deadline() {
            Err(why) => bail!(why),
            Ok(Some(note)) if !args.output.quiet => {
                // Never a panic on a closed stderr: the gate's exit code stands.
                let _ = writeln!(std::io::stderr(), "{note}");
            }
            Ok(_) => {}
        }
        let engine = engine(&args.probe, args.region.as_deref().unwrap_or("local"))?;
        let credentials = args.probe.auth.credentials()?;
        let mut reports = Vec::with_capacity(targets.len());
        for target in &targets {
            let job = job_with(&args.probe, target.clone(), credentials.clone());
            reports.push(check_here(&engine, &job, &args.output).await);
        }
        (reports, Vec::new(), false)
    };
    // A coordinator that went away leaves the endpoints it did not finish undecided: exit 4
    // at least, and the document written says so (a row `unknown` for each of them).
    let code = if reports.is_empty() && undecided.is_empty() {
        exit::OK
    } else {
        crate::output::finish(
            reports,
            &undecided,
            &args.output,
            args.gate(),
            baseline.as_ref(),
        )?
    };
    Ok(if gone {
        exit::worst([code, exit::UNKNOWN_REGION])
    } else {
        code
    })
}

async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    let cfg = vantage_coordinator::config::Config::load(args.config.as_deref())?;
    if args.check {
        println!(
            "configuration valid: {} region(s) ({}), {} agent(s), {} credential(s), {} scheduled check(s)",
            cfg.regions().len(),
            cfg.regions().join(", "),
            cfg.agents.len(),
            cfg.credentials.len(),
            cfg.checks.len()
        );
        return Ok(exit::OK);
    }
    let json_logs = args.log_format == vantage_agent::logging::LogFormat::Json;
    vantage_coordinator::serve::serve(cfg, args.config.clone(), shutdown_signal(), |bound| {
        let metrics = bound
            .metrics
            .map(|m| format!(" metrics http://{m}"))
            .unwrap_or_default();
        println!(
            "vantage serve: api http://{} grpc http://{}{metrics}",
            bound.api, bound.grpc
        );
        let _ = std::io::stdout().flush();
        // For people; with JSON logs stderr is JSON only (the log event carries the path).
        if let (Some(path), false) = (&bound.generated_token, json_logs) {
            eprintln!("vantage serve: API token written to {}", path.display());
        }
    })
    .await?;
    Ok(exit::OK)
}

/// Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        if let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

async fn demo(args: DemoArgs) -> anyhow::Result<u8> {
    let faults = if args.clean {
        Vec::new()
    } else if args.faults.is_empty() {
        vec![
            Fault::GetHtml,
            Fault::UnknownMethodHtml404,
            Fault::OriginAccepted,
        ]
    } else {
        args.faults.clone()
    };
    check_output_path(&args.output, &[])?;
    let result = demo_checked(&args, faults).await;
    if result.is_err() {
        discard_stale(&args.output);
    }
    result
}

async fn demo_checked(args: &DemoArgs, faults: Vec<Fault>) -> anyhow::Result<u8> {
    let fixture = Fixture::start(&faults)
        .await
        .context("starting the demo fixture on 127.0.0.1")?;
    let names: Vec<String> = faults.iter().map(|f| f.name()).collect();
    if !args.output.quiet {
        eprintln!(
            "demo: fixture MCP server at {} with faults: {}",
            fixture.url(),
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        );
    }
    let probe = Probe {
        assume_global: Vec::new(),
        allow_non_global: Vec::new(),
        ca_file: None,
        timeout: None,
        check_timeout: None,
        nameserver: Vec::new(),
        no_ipv6: false,
        auth: AuthArgs::default(),
        listen_window: None,
    };
    let job = job(&probe, Target::parse(&fixture.url())?)?;
    let report = check_here(&engine(&probe, "local")?, &job, &args.output).await;
    let gate = Gate::default();
    emit(&report, &args.output, gate)?;
    if !args.output.quiet {
        let next = if faults.is_empty() {
            "try `vantage demo` to see the faults it finds"
        } else {
            "try `vantage demo --clean` for a server without faults"
        };
        eprintln!(
            "demo: as a CI gate, `vantage check` would exit {} here; {next}, or `vantage fixture --help` to serve it yourself",
            gate.exit_code(&report)
        );
    }
    Ok(exit::OK)
}

/// The protected fixture's tokens (test values, not secrets), so `--token-env` can be tried.
fn fixture_tokens(url: &str) -> String {
    use vantage_fixture::{FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN, FIXTURE_TOKEN};
    format!(
        "bearer token accepted: {FIXTURE_TOKEN} (another audience: {FIXTURE_OTHER_AUDIENCE_TOKEN}; lacking the scope: {FIXTURE_NO_SCOPE_TOKEN})\n\
         try: FIXTURE_TOKEN={FIXTURE_TOKEN} vantage check {url} --token-env FIXTURE_TOKEN\n"
    )
}

async fn fixture(args: FixtureArgs) -> anyhow::Result<u8> {
    if !args.listen.ip().is_loopback() {
        bail!(
            "--listen {}: the fixture serves loopback only; use 127.0.0.1:PORT or [::1]:PORT",
            args.listen
        );
    }
    let url;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let _guard: Box<dyn std::any::Any> = match args.hostile {
        Some(kind) => {
            let server = HostileServer::serve(listener, kind)?;
            // A target that speaks (or stalls) TLS is checked over https://.
            url = if kind == Hostile::TlsNeverCompletes {
                server.https_url()
            } else {
                server.url()
            };
            Box::new(server)
        }
        None => {
            let f = Fixture::serve(listener, &args.faults);
            url = f.url();
            Box::new(f)
        }
    };
    // One write: a reader that takes the first line and closes the pipe ends nothing.
    let mut start = format!("listening {url}\n");
    if args.faults.iter().any(|f| f.protects()) {
        start.push_str(&fixture_tokens(&url));
    }
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(start.as_bytes());
    let _ = stdout.flush();
    tokio::signal::ctrl_c().await?;
    Ok(exit::OK)
}
