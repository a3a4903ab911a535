//! The command line. Every exit code comes from `vantage_coordinator::exit`.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use ipnet::IpNet;
use vantage_agent::credentials;
use vantage_agent::probe::dns::ResolverChoice;
use vantage_agent::{Credentials, Engine, ProbeOptions, Target};
use vantage_coordinator::exit::{self, FailOn};
use vantage_coordinator::fixture::{Fault, Fixture, Hostile, HostileServer};
use vantage_coordinator::render::{render, Format};
use vantage_coordinator::report::Report;
use vantage_coordinator::{local, report};

#[derive(Debug, Parser)]
#[command(
    name = "vantage",
    version,
    about = "Check a remote MCP endpoint (2026-07-28, Streamable HTTP) from the outside",
    long_about = "Check a remote MCP endpoint (Model Context Protocol 2026-07-28, Streamable HTTP) \
from the outside: DNS, connectivity, TLS, redirects, era, and the transport and header rules, \
each probe changing one thing in an otherwise valid request. The report says pass, review, \
blocked or unknown, with evidence and a fix for every finding.",
    after_help = "Examples:\n  vantage demo                                   # a built-in target with a few faults\n  vantage check https://mcp.example.com/mcp\n  vantage check https://mcp.example.com/mcp --format json --output report.json\n  vantage check http://127.0.0.1:3000/mcp --fail-on review   # a CI gate\n\nExit codes of check: 0 gate passed, 1 usage or internal error, 2 gate failed,\n3 unknown (authorization required, no credential), 4 unknown (a region did not report)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check one MCP endpoint: from this machine (one in-process vantage named `local`),
    /// or from a fleet's regions with --coordinator.
    Check(Box<CheckArgs>),
    /// Run the coordinator: agent gRPC, the HTTP API, /metrics and an in-process vantage.
    Serve(ServeArgs),
    /// Serve the built-in fixture on loopback with a few faults switched on, and check it.
    Demo(DemoArgs),
    /// Serve the fixture MCP server (or a hostile target) until interrupted.
    Fixture(FixtureArgs),
    /// Print the JSON Schema of the report (vantage.report/v1).
    Schema,
}

#[derive(Debug, Args)]
pub struct Output {
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Colour in text output: auto (only on a terminal, and not with NO_COLOR), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub struct Probe {
    /// Treat CIDR as globally routable (laboratories whose "public" addresses come from
    /// documentation ranges). Repeatable. Never on by default.
    #[arg(long = "assume-global", value_name = "CIDR", value_parser = parse_cidr)]
    assume_global: Vec<IpNet>,
    /// Trust the CA certificates in PEM (in addition to the public web PKI roots).
    #[arg(long = "ca-file", value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
    /// Overall deadline for the whole check, e.g. 30s, 2m.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Deadline for one exchange (one request, connect, handshake or DNS query).
    #[arg(long = "check-timeout", value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    check_timeout: Duration,
    /// Ask this DNS server (IP:PORT) instead of the system resolver. Repeatable.
    #[arg(long, value_name = "IP:PORT")]
    nameserver: Vec<SocketAddr>,
    #[command(flatten)]
    pub auth: AuthArgs,
}

/// Tokens are named, never given: the flags name an environment variable or a file that
/// holds the token, and the token never appears in output, logs or reports.
#[derive(Debug, Args, Default)]
pub struct AuthArgs {
    /// Run the checks authenticated with the bearer token in environment variable NAME.
    #[arg(long = "token-env", value_name = "NAME", conflicts_with = "token_file")]
    token_env: Option<String>,
    /// Like --token-env, reading the token from PATH.
    #[arg(long = "token-file", value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// A token issued for another audience (auth.wrong-audience must get 401).
    #[arg(
        long = "other-audience-token-env",
        value_name = "NAME",
        conflicts_with = "other_audience_token_file"
    )]
    other_audience_token_env: Option<String>,
    /// Like --other-audience-token-env, from a file.
    #[arg(long = "other-audience-token-file", value_name = "PATH")]
    other_audience_token_file: Option<PathBuf>,
    /// A valid token lacking a required scope (auth.insufficient-scope wants 403).
    #[arg(
        long = "missing-scope-token-env",
        value_name = "NAME",
        conflicts_with = "missing_scope_token_file"
    )]
    missing_scope_token_env: Option<String>,
    /// Like --missing-scope-token-env, from a file.
    #[arg(long = "missing-scope-token-file", value_name = "PATH")]
    missing_scope_token_file: Option<PathBuf>,
    /// The endpoint must be protected: an unauthenticated answer is a finding.
    #[arg(long = "expect-auth")]
    pub expect_auth: bool,
}

fn token(
    env: &Option<String>,
    file: &Option<PathBuf>,
) -> anyhow::Result<Option<secrecy::SecretString>> {
    Ok(match (env, file) {
        (Some(name), _) => Some(credentials::from_env(name)?),
        (None, Some(path)) => Some(credentials::from_file(path)?),
        (None, None) => None,
    })
}

impl AuthArgs {
    /// Whether any token flag was given.
    pub fn names_a_token(&self) -> bool {
        self.token_env.is_some()
            || self.token_file.is_some()
            || self.other_audience_token_env.is_some()
            || self.other_audience_token_file.is_some()
            || self.missing_scope_token_env.is_some()
            || self.missing_scope_token_file.is_some()
    }

    fn credentials(&self) -> anyhow::Result<Credentials> {
        Ok(Credentials {
            token: token(&self.token_env, &self.token_file)?,
            other_audience: token(
                &self.other_audience_token_env,
                &self.other_audience_token_file,
            )?,
            missing_scope: token(
                &self.missing_scope_token_env,
                &self.missing_scope_token_file,
            )?,
        })
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The MCP endpoint, e.g. https://mcp.example.com/mcp
    pub url: String,
    /// Which decision fails the gate (exit 2).
    #[arg(long = "fail-on", value_enum, default_value_t = FailOn::Blocked)]
    pub fail_on: FailOn,
    /// The region label of this vantage in the report.
    #[arg(long, default_value = "local")]
    region: String,
    #[command(flatten)]
    pub probe: Probe,
    #[command(flatten)]
    pub fleet: Fleet,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The configuration file (TOML). Without one: an in-process vantage named `local`, the
    /// API on 127.0.0.1:8080 and agent gRPC on 127.0.0.1:50051 (see vantage.example.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Only validate the configuration (keys, values, cross-references) and exit; secrets
    /// are not read.
    #[arg(long)]
    check: bool,
}

/// Fleet mode of `vantage check`.
#[derive(Debug, Args)]
pub struct Fleet {
    /// Submit the check to this coordinator's API (e.g. http://127.0.0.1:8080) instead of
    /// probing from here.
    #[arg(long, value_name = "URL")]
    pub coordinator: Option<String>,
    /// Regions to check from (default: every configured region). Needs --coordinator.
    #[arg(long, value_delimiter = ',', requires = "coordinator")]
    pub regions: Vec<String>,
    /// A credential configured on the coordinator, by name. Needs --coordinator.
    #[arg(long, value_name = "NAME", requires = "coordinator")]
    pub credential: Option<String>,
    /// Environment variable holding the coordinator's API token.
    #[arg(
        long = "api-token-env",
        value_name = "NAME",
        default_value = "VANTAGE_API_TOKEN"
    )]
    pub api_token_env: String,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// Faults to switch on (default: get-html, unknown-method-html404, origin-accepted).
    #[arg(long = "fault", value_enum)]
    faults: Vec<Fault>,
    /// Check the fixture with no fault at all.
    #[arg(long, conflicts_with = "faults")]
    clean: bool,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
struct FixtureArgs {
    /// Address to listen on (loopback only).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Faults to switch on. Repeatable.
    #[arg(long = "fault", value_enum)]
    faults: Vec<Fault>,
    /// Serve a hostile target instead of the MCP fixture.
    #[arg(long, value_enum, conflicts_with = "faults")]
    hostile: Option<Hostile>,
}

fn parse_cidr(s: &str) -> Result<IpNet, String> {
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(IpNet::from))
        .map_err(|_| {
            format!("`{s}` is not a CIDR prefix; write e.g. 198.51.100.0/24 or 2001:db8:b::/64")
        })
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("`{s}`: {e}; write e.g. 500ms, 5s, 2m"))?;
    if d.is_zero() {
        return Err("a duration must be greater than zero".into());
    }
    Ok(d)
}

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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VANTAGE_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
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
        Command::Check(args) if args.fleet.coordinator.is_some() => {
            crate::remote::check(*args).await
        }
        Command::Check(args) => check(*args).await,
        Command::Serve(args) => serve(args).await,
        Command::Demo(args) => demo(args).await,
        Command::Fixture(args) => fixture(args).await,
        Command::Schema => {
            println!("{}", serde_json::to_string_pretty(&report::json_schema())?);
            Ok(exit::OK)
        }
    }
}

fn engine(probe: &Probe, region: &str) -> anyhow::Result<Engine> {
    let extra_ca_pem = match &probe.ca_file {
        Some(path) => {
            Some(std::fs::read(path).with_context(|| format!("--ca-file {}", path.display()))?)
        }
        None => None,
    };
    let opts = ProbeOptions {
        region: region.to_string(),
        deadline: probe.timeout,
        check_timeout: probe.check_timeout.min(probe.timeout),
        assume_global: probe.assume_global.clone(),
        extra_ca_pem,
        connect_non_global: true,
        resolver: ResolverChoice {
            nameservers: probe.nameserver.clone(),
        },
        credentials: probe.auth.credentials()?,
        expect_auth: probe.auth.expect_auth,
        ..ProbeOptions::default()
    };
    Ok(Engine::new(opts)?)
}

pub fn check_output_path(output: &Output) -> anyhow::Result<()> {
    if let Some(path) = &output.output {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            bail!(
                "--output {}: the directory {} does not exist",
                path.display(),
                parent.display()
            );
        }
    }
    Ok(())
}

pub fn emit(report: &Report, output: &Output) -> anyhow::Result<()> {
    let to_terminal = output.output.is_none() && std::io::stdout().is_terminal();
    let color = match output.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => to_terminal && std::env::var_os("NO_COLOR").is_none(),
    };
    let text = render(report, output.format, color);
    match &output.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "{} for {}: report written to {}",
                report.decision.as_str(),
                report.target,
                path.display()
            );
        }
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = out.write_all(text.as_bytes());
        }
    }
    Ok(())
}

async fn check(args: CheckArgs) -> anyhow::Result<u8> {
    let target = Target::parse(&args.url)?;
    check_output_path(&args.output)?;
    // Credentials and the CA file are read before any traffic: bad input changes nothing.
    let engine = engine(&args.probe, &args.region)?;
    if std::io::stderr().is_terminal() {
        eprintln!("checking {target} from {} …", args.region);
    }
    let report = local::check(&engine, &target).await;
    emit(&report, &args.output)?;
    Ok(exit::for_report(&report, args.fail_on))
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
    vantage_coordinator::serve::serve(cfg, args.config.clone(), shutdown_signal(), |bound| {
        println!(
            "vantage serve: api http://{} grpc http://{}",
            bound.api, bound.grpc
        );
        let _ = std::io::stdout().flush();
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
        args.faults
    };
    check_output_path(&args.output)?;
    let fixture = Fixture::start(&faults)
        .await
        .context("starting the demo fixture on 127.0.0.1")?;
    let names: Vec<String> = faults.iter().map(|f| f.name()).collect();
    eprintln!(
        "demo: fixture MCP server at {} with faults: {}",
        fixture.url(),
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    );
    let probe = Probe {
        assume_global: Vec::new(),
        ca_file: None,
        timeout: Duration::from_secs(30),
        check_timeout: Duration::from_secs(5),
        nameserver: Vec::new(),
        auth: AuthArgs::default(),
    };
    let target = Target::parse(&fixture.url())?;
    let report = local::check(&engine(&probe, "local")?, &target).await;
    emit(&report, &args.output)?;
    eprintln!(
        "demo: as a CI gate, `vantage check` would exit {} here; try `vantage demo --clean`, or `vantage fixture --help` to serve it yourself",
        exit::for_report(&report, FailOn::Blocked)
    );
    Ok(exit::OK)
}

async fn fixture(args: FixtureArgs) -> anyhow::Result<u8> {
    if !args.listen.ip().is_loopback() {
        bail!(
            "--listen {}: the fixture serves loopback only; use 127.0.0.1:PORT or [::1]:PORT",
            args.listen
        );
    }
    let url;
    let _guard: Box<dyn std::any::Any> = match args.hostile {
        Some(kind) => {
            let server = HostileServer::start(kind).await?;
            url = server.url();
            Box::new(server)
        }
        None => {
            let listener = tokio::net::TcpListener::bind(args.listen)
                .await
                .with_context(|| format!("binding {}", args.listen))?;
            let f = Fixture::serve(listener, &args.faults);
            url = f.url();
            Box::new(f)
        }
    };
    println!("listening {url}");
    let _ = std::io::stdout().flush();
    tokio::signal::ctrl_c().await?;
    Ok(exit::OK)
}
