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

/// Standard error for log lines; a line that cannot be written is lost, never a panic (exit
/// 101). For a daemon (`daemon`), a reader that went away (`vantage-agent … 2>&1 | head -3`)
/// ends the process quietly (exit 0), as a closed pipe ends any command-line tool: with
/// nobody reading its logs it would otherwise run on unseen, and its pipeline never end. A
/// one-shot command goes on to its own exit code (a gate's verdict is never turned into 0).
struct Stderr {
    daemon: bool,
}

struct StderrWriter {
    stderr: std::io::Stderr,
    daemon: bool,
}

impl StderrWriter {
    fn seen<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if self.daemon && e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
        r
    }
}

impl std::io::Write for StderrWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.stderr.write(buf);
        self.seen(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.stderr.flush();
        self.seen(r)
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = StderrWriter;

    fn make_writer(&'a self) -> Self::Writer {
        StderrWriter {
            stderr: std::io::stderr(),
            daemon: self.daemon,
        }
    }
}

/// Install the global subscriber of a daemon (`vantage serve`, `vantage-agent`); `default`
/// is the filter when `VANTAGE_LOG` is unset. A closed log pipe ends it quietly.
pub fn init_daemon(format: LogFormat, default: &str) {
    install(format, default, true)
}

/// Install the global subscriber of a one-shot command: a closed log pipe loses the lines.
pub fn init(format: LogFormat, default: &str) {
    install(format, default, false)
}

fn install(format: LogFormat, default: &str, daemon: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("VANTAGE_LOG")
        .unwrap_or_else(|_| default_filter(default).into());
    // Another write error (a full disk) loses the line, never panics.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Stderr { daemon })
        .log_internal_errors(false);
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
