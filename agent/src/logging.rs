//! Logs of the daemons (`vantage serve`, `vantage-agent`): to stderr, as text for people or
//! one JSON object per line for collectors (`--log-format json`). Colour only when stderr is
//! a terminal and `NO_COLOR` is unset: a log file or a pipe never gets escape codes.
//! `VANTAGE_LOG` sets the filter (`info`, `debug`, `vantage_agent=trace`, …).

use std::io::IsTerminal;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// `2026-11-30T10:00:00Z  INFO agent registered agent=eu-1 region=eu`
    #[default]
    Text,
    /// `{"timestamp":…,"level":"INFO","message":"agent registered","agent":"eu-1",…}`
    Json,
}

/// Whether text logs may carry colour: stderr is a terminal and `NO_COLOR` is unset.
pub fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Library targets kept quiet at the default level: hickory warns about every answer it
/// drops (a forged question section, a malformed record), which is the probe's evidence
/// (`dns.resolve` or `probe.resolver-failed` say what happened), not a fault of Vantage.
/// `VANTAGE_LOG` still shows them (`VANTAGE_LOG=warn,hickory_proto=warn`).
pub const QUIET_LIBRARIES: &str = "hickory_proto=error,hickory_resolver=error";

/// The filter when `VANTAGE_LOG` is unset: `default` for Vantage, [`QUIET_LIBRARIES`] for
/// the libraries that report the target's faults as their own warnings.
pub fn default_filter(default: &str) -> String {
    format!("{default},{QUIET_LIBRARIES}")
}

/// Install the global subscriber; `default` is the filter when `VANTAGE_LOG` is unset.
pub fn init(format: LogFormat, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("VANTAGE_LOG")
        .unwrap_or_else(|_| default_filter(default).into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(colour()).init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .init(),
    }
}
