//! The command line's arguments (clap), with the parsers that give each bad value its fix.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use ipnet::IpNet;
use vantage_agent::credentials;
use vantage_agent::logging::LogFormat;
use vantage_agent::Credentials;
use vantage_coordinator::exit::{FailOn, FailOnSeverity};
use vantage_coordinator::render::Format;
use vantage_fixture::{Fault, Hostile};

#[derive(Debug, Parser)]
#[command(
    name = "vantage",
    version,
    about = "Check a remote MCP endpoint (2026-07-28, Streamable HTTP) from the outside",
    long_about = "Check a remote MCP endpoint (Model Context Protocol 2026-07-28, Streamable HTTP) \
from the outside: DNS, connectivity, TLS, redirects, era, and the transport and header rules, \
each probe changing one thing in an otherwise valid request. The report says pass, review, \
blocked or unknown, with evidence and a fix for every finding.",
    after_help = "Examples:\n  vantage demo                                   # a built-in target with a few faults\n  vantage check https://mcp.example.com/mcp\n  vantage check https://mcp.example.com/mcp -f json -o report.json\n  vantage check http://127.0.0.1:3000/mcp --fail-on review   # a CI gate\n  vantage check --targets endpoints.txt --baseline baseline.toml   # many endpoints, a baseline\n  vantage completions bash > /etc/bash_completion.d/vantage\n\nExit codes of check: 0 gate passed, 1 usage or internal error, 2 gate failed,\n3 unknown (authorization required and no credential, or the credential refused),\n4 unknown (a region did not report or did not observe the target, or a check had no evidence)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check MCP endpoints (one, or several under one gate): from this machine (one
    /// in-process vantage named `local`), or from a fleet's regions with --coordinator.
    #[command(
        override_usage = "vantage check [OPTIONS] <URL>...\n       vantage check [OPTIONS] --targets <FILE> [URL]..."
    )]
    Check(Box<CheckArgs>),
    /// Run the coordinator: agent gRPC, the HTTP API, /metrics and an in-process vantage.
    Serve(ServeArgs),
    /// Serve the built-in fixture on loopback with a few faults switched on, and check it.
    Demo(DemoArgs),
    /// Serve the fixture MCP server (or a hostile target) until interrupted.
    Fixture(FixtureArgs),
    /// Print the JSON Schema of the report (vantage.report/v1).
    Schema,
    /// Explain a check id or a finding id: what it means, how bad it can be, the rule, the
    /// fix, the checks that raise it and the source file that observes it.
    Explain(ExplainArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print a man page (roff), or write one page per command into a directory.
    Man(ManArgs),
    /// Write a starting baseline (accepted findings) from finished JSON reports.
    Baseline(BaselineArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vantage check https://mcp.example.com/mcp -f json -o report.json\n  vantage baseline --from report.json --reason \"known, tracked in OPS-123\" -o vantage-baseline.toml\n  vantage check https://mcp.example.com/mcp --baseline vantage-baseline.toml"
)]
pub struct BaselineArgs {
    /// A JSON report of `vantage check -f json` (one endpoint, or several). Repeatable.
    #[arg(long = "from", value_name = "REPORT", required = true)]
    pub from: Vec<PathBuf>,
    /// Write the baseline to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace FILE if it exists (its reasons and dates are lost).
    #[arg(long)]
    pub force: bool,
    /// The reason written into every entry (edit each before you commit the file).
    #[arg(
        long,
        default_value = "accepted when the baseline was written; replace with the real reason"
    )]
    pub reason: String,
    /// The expiry date of every entry (YYYY-MM-DD).
    #[arg(long, value_name = "DATE", conflicts_with = "days", value_parser = parse_date)]
    pub expires: Option<time::Date>,
    /// Days from today until the entries expire.
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u16).range(1..=3650))]
    pub days: u16,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (default: vantage itself), e.g. `check`.
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,
    /// Write vantage.1 and vantage-<command>.1 for every command into DIR instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct Output {
    /// Report format.
    #[arg(short = 'f', long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report to FILE instead of standard output (`-` is standard output); a
    /// one-line summary then goes to standard error.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Colour in text output: auto (only on a terminal, and not with NO_COLOR), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Summary only: the decision, why, and the gate line (text); no progress, no notes.
    /// Other formats print their whole document.
    #[arg(short = 'q', long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// List every check of every region with its outcome and reason, skipped ones included.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub struct Probe {
    /// Treat CIDR as globally routable (laboratories whose "public" addresses come from
    /// documentation ranges). Repeatable. Never on by default.
    #[arg(long = "assume-global", value_name = "CIDR", value_parser = parse_egress_cidr)]
    pub assume_global: Vec<IpNet>,
    /// Let the probe connect to non-global addresses in CIDR (the probe.allow_non_global of
    /// this check). The target you name is always probed; URLs it names (metadata,
    /// authorization servers) on other non-global addresses are refused unless allowed
    /// here. Repeatable.
    #[arg(long = "allow-non-global", value_name = "CIDR", value_parser = parse_egress_cidr)]
    pub allow_non_global: Vec<IpNet>,
    /// Trust the CA certificates in PEM (in addition to the public web PKI roots) for the
    /// target. With --coordinator: the CA of an https:// coordinator's API (refused with
    /// http://; the agents trust a lab CA with vantage-agent --target-ca-file).
    #[arg(long = "ca-file", value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
    /// Overall deadline for one endpoint's whole check, e.g. 30s, 2m (default 30s, at most
    /// 10m); several endpoints run one after another, each with its own.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Deadline for one exchange (one request, connect, handshake or DNS query). Default 5s;
    /// given with --timeout, it must be shorter (refused otherwise). A connect that never
    /// answers counts against the target only when this runs out well inside --timeout; an
    /// MCP request or TLS handshake it cut is unknown (listen.ack-first: never the target's,
    /// however long the wait), and so is any exchange --timeout ended. Not with --coordinator
    /// (each agent has its own).
    #[arg(long = "check-timeout", value_name = "DURATION", value_parser = parse_duration)]
    pub check_timeout: Option<Duration>,
    /// Ask this DNS server (IP:PORT, e.g. 198.51.100.53:53) instead of the system resolver.
    /// Repeatable. Not with --coordinator (each agent has its own --nameserver).
    #[arg(long, value_name = "IP:PORT", value_parser = parse_nameserver)]
    pub nameserver: Vec<SocketAddr>,
    /// This machine has no IPv6 (a CI runner without it, an IPv4-only network): IPv6
    /// addresses are not tried and net.ipv6 is left out, saying so. Without it, a name with
    /// IPv6 addresses that this machine cannot reach ends `unknown` (exit 4): never seen,
    /// never passed. Not with --coordinator (vantage-agent --no-ipv6 per agent).
    #[arg(long = "no-ipv6")]
    pub no_ipv6: bool,
    #[command(flatten)]
    pub auth: AuthArgs,
    /// How long the subscriptions/listen stream is watched after its acknowledgement
    /// (listen.sse: a stream that ends inside the window fails; one still open at its end
    /// passes for that long, and a later end is not seen). Default 250ms; greater than zero
    /// (the old minimal wait is 2ms), shorter than --timeout (refused otherwise). It runs
    /// beside the rest of the listing. Not with --coordinator (vantage-agent --listen-window).
    #[arg(long = "listen-window", value_name = "DURATION", value_parser = parse_duration)]
    pub listen_window: Option<Duration>,
}

/// Tokens are named, never given: the flags name an environment variable or a file that
/// holds the token, and the token never appears in output, logs or reports.
#[derive(Debug, Args, Default)]
pub struct AuthArgs {
    /// Run the checks authenticated with the bearer token in environment variable NAME.
    #[arg(long = "token-env", value_name = "NAME", conflicts_with = "token_file")]
    pub token_env: Option<String>,
    /// Like --token-env, reading the token from PATH.
    #[arg(long = "token-file", value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// A token issued for another audience (auth.wrong-audience must get 401).
    #[arg(
        long = "other-audience-token-env",
        value_name = "NAME",
        conflicts_with = "other_audience_token_file"
    )]
    pub other_audience_token_env: Option<String>,
    /// Like --other-audience-token-env, from a file.
    #[arg(long = "other-audience-token-file", value_name = "PATH")]
    pub other_audience_token_file: Option<PathBuf>,
    /// A valid token lacking a required scope (auth.insufficient-scope wants 403).
    #[arg(
        long = "missing-scope-token-env",
        value_name = "NAME",
        conflicts_with = "missing_scope_token_file"
    )]
    pub missing_scope_token_env: Option<String>,
    /// Like --missing-scope-token-env, from a file.
    #[arg(long = "missing-scope-token-file", value_name = "PATH")]
    pub missing_scope_token_file: Option<PathBuf>,
    /// The endpoint must be protected: an unauthenticated answer is a finding.
    #[arg(long = "expect-auth")]
    pub expect_auth: bool,
}

/// The token a `--{flag}-env` / `--{flag}-file` pair names, if any.
pub fn token(
    flag: &str,
    env: &Option<String>,
    file: &Option<PathBuf>,
) -> anyhow::Result<Option<secrecy::SecretString>> {
    Ok(match (env, file) {
        (Some(name), _) => Some(credentials::from_env(name).map_err(|e| match e {
            credentials::CredentialError::EnvMissing(_) => {
                anyhow::anyhow!("--{flag}-env {name}: {e}; export it, or use --{flag}-file PATH")
            }
            // Names the variable and the kind of character, never the token.
            e => anyhow::anyhow!("--{flag}-env: {e}"),
        })?),
        (None, Some(path)) => Some(credentials::from_file(path).map_err(|e| match e {
            e @ credentials::CredentialError::Unusable { .. } => {
                anyhow::anyhow!("--{flag}-file: {e}")
            }
            e => anyhow::Error::from(e),
        })?),
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

    pub fn credentials(&self) -> anyhow::Result<Credentials> {
        Ok(Credentials {
            token: token("token", &self.token_env, &self.token_file)?,
            other_audience: token(
                "other-audience-token",
                &self.other_audience_token_env,
                &self.other_audience_token_file,
            )?,
            missing_scope: token(
                "missing-scope-token",
                &self.missing_scope_token_env,
                &self.missing_scope_token_file,
            )?,
        })
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The MCP endpoint(s), e.g. https://mcp.example.com/mcp; several give one report each
    /// and a summary, and the exit code of the worst.
    #[arg(value_name = "URL", required_unless_present = "targets")]
    pub urls: Vec<String>,
    /// Also check the endpoints listed in FILE: one URL per line, `#` starts a comment.
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,
    /// Accepted findings (TOML, `[[accept]]` entries: endpoint, finding, optional region,
    /// optional severity ceiling, reason, expires): they stay in the report, marked, and do not fail the gate; an
    /// expired entry fails it. `vantage baseline --from report.json` writes a first one.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Which decision fails the gate (exit 2).
    #[arg(long = "fail-on", value_enum, default_value_t = FailOn::Blocked)]
    pub fail_on: FailOn,
    /// Also fail the gate (exit 2) on any finding of this severity or above when the decision
    /// is pass or review (unknown stays exit 3 or 4: nothing was decided).
    #[arg(long = "fail-on-severity", value_enum, value_name = "SEVERITY")]
    pub fail_on_severity: Option<FailOnSeverity>,
    /// The region label of this vantage in the report (default `local`). Not with
    /// --coordinator (choose the fleet's regions with --regions). 1 to 63 letters, digits,
    /// `-`, `_` or `.`, not only dots.
    #[arg(long, value_parser = parse_region)]
    pub region: Option<String>,
    #[command(flatten)]
    pub probe: Probe,
    #[command(flatten)]
    pub fleet: Fleet,
    #[command(flatten)]
    pub output: Output,
}

impl CheckArgs {
    /// The gate these flags describe.
    pub fn gate(&self) -> vantage_coordinator::exit::Gate {
        vantage_coordinator::exit::Gate::new(self.fail_on, self.fail_on_severity)
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The configuration file (TOML). Without one: an in-process vantage named `local`, the
    /// API on 127.0.0.1:8080 and agent gRPC on 127.0.0.1:50051 (see vantage.example.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Only validate the configuration (keys, values, cross-references) and exit; secrets
    /// are not read.
    #[arg(long)]
    pub check: bool,
    /// Log lines as text (colour only on a terminal) or one JSON object per line.
    #[arg(long = "log-format", value_enum, default_value_t = LogFormat::Text, env = "VANTAGE_LOG_FORMAT")]
    pub log_format: LogFormat,
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
    /// Environment variable holding the coordinator's API token (default VANTAGE_API_TOKEN;
    /// named here, it must be set). Without it (and without --api-token-file), the token a
    /// local `vantage serve` generated for the URL's port is used if present.
    #[arg(
        long = "api-token-env",
        value_name = "NAME",
        conflicts_with = "api_token_file"
    )]
    pub api_token_env: Option<String>,
    /// Read the coordinator's API token from PATH (e.g. the file `vantage serve` prints).
    #[arg(long = "api-token-file", value_name = "PATH", requires = "coordinator")]
    pub api_token_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vantage explain egress.blocked\n  vantage explain transport.get\n  vantage explain --table"
)]
pub struct ExplainArgs {
    /// A check id (e.g. transport.get) or a finding id (e.g. egress.blocked).
    #[arg(required_unless_present = "table", conflicts_with = "table")]
    pub id: Option<String>,
    /// Print every finding as a Markdown table (the one in README.md) instead.
    #[arg(long)]
    pub table: bool,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Faults to switch on (default: get-html, unknown-method-html404, origin-accepted).
    #[arg(long = "fault", value_enum)]
    pub faults: Vec<Fault>,
    /// Check the fixture with no fault at all.
    #[arg(long, conflicts_with = "faults")]
    pub clean: bool,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct FixtureArgs {
    /// Address to listen on (loopback only).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Faults to switch on. Repeatable. `protected` and every `auth-*` fault accept the bearer
    /// token fxV3f9aQ7twK2m8Lp4vZ (another audience: fxA7c21Hn5rW8zX3qBdJ; lacking the scope:
    /// fxSb604Mj6eT1yR9cVaN), also printed on start.
    #[arg(long = "fault", value_enum)]
    pub faults: Vec<Fault>,
    /// Serve a hostile target instead of the MCP fixture.
    #[arg(long, value_enum, conflicts_with = "faults")]
    pub hostile: Option<Hostile>,
}

/// A CIDR prefix or a bare address (its /32 or /128): the configuration's grammar
/// (`config::parse_prefix`), so a value `vantage check` takes is one `probe.allow_non_global`
/// takes too.
pub fn parse_cidr(s: &str) -> Result<IpNet, String> {
    vantage_coordinator::config::parse_prefix(s).map_err(|_| {
        format!("`{s}` is not a CIDR prefix or an address; write e.g. 198.51.100.0/24, 2001:db8:b::/64 or 203.0.113.7")
    })
}

/// A CIDR for an egress exception: one that covers every address is refused, as the
/// configuration refuses it.
pub fn parse_egress_cidr(s: &str) -> Result<IpNet, String> {
    let prefix = parse_cidr(s)?;
    match vantage_coordinator::config::egress_catch_all(&prefix) {
        Some(why) => Err(why),
        None => Ok(prefix),
    }
}

/// `--region`: the configuration's rule for a region label.
pub fn parse_region(s: &str) -> Result<String, String> {
    vantage_agent::region::label_problem(s).map_or(Ok(s.to_string()), Err)
}

/// The longest duration any flag accepts: a check that needs longer is stuck, not slow.
pub const MAX_DURATION: Duration = Duration::from_secs(600);

pub use vantage_agent::probe::dns::parse_nameserver;

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("`{s}`: {e}; write e.g. 500ms, 5s, 2m"))?;
    if d.is_zero() {
        return Err("a duration must be greater than zero; write e.g. 500ms, 5s, 2m".into());
    }
    if d > MAX_DURATION {
        return Err(format!(
            "`{s}` is longer than the limit of {}; a check that needs longer is stuck, not slow (write e.g. 30s, 2m)",
            humantime::format_duration(MAX_DURATION)
        ));
    }
    Ok(d)
}

pub fn parse_date(s: &str) -> Result<time::Date, String> {
    vantage_coordinator::baseline::parse_date(s)
}
