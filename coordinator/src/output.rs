//! Where a report goes: standard output (no `--output`, or `-`) or a file, checked before any
//! traffic; rendered as `--format`, `--color`, `-q`/`-v` say; one report or several with a
//! summary (`finish`); the live progress line on a terminal.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::bail;
use vantage_coordinator::baseline::{self, Baseline};
use vantage_coordinator::exit::{self, Gate};
use vantage_coordinator::render::{
    render, render_run, Detail, Format, RenderOptions, Summary, Undecided,
};
use vantage_coordinator::report::Report;

use crate::args::{ColorChoice, Output};
use crate::terminal::{stderr_is_live, Live};

impl Output {
    /// The file to write, or `None` for standard output (no flag, or `-`).
    pub fn file(&self) -> Option<&Path> {
        self.output
            .as_deref()
            .filter(|p| p.as_os_str() != std::ffi::OsStr::new("-"))
    }

    /// `-o -`: the report goes to standard output, and its one-line summary with the gate
    /// line to standard error, as with `-o FILE` (a CI log that pipes the document to `jq`
    /// still shows the gate).
    pub fn to_stdout_named(&self) -> bool {
        self.output
            .as_deref()
            .is_some_and(|p| p.as_os_str() == std::ffi::OsStr::new("-"))
    }
}

/// Write a document to standard output. A reader that stops early (`| head`) closes the pipe:
/// that is not an error, so nothing is printed and the exit code is 0.
pub fn to_stdout(bytes: &[u8]) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(exit::OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(exit::OK),
        Err(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
    }
}

/// Write a report to standard output. A reader that stops early (`| head`) is not an error:
/// the exit code stays the gate's. Any other failure (a full disk behind `> report.json`,
/// `/dev/full`) is: the report that a next CI step reads is missing or cut, so the run must
/// not end with the gate's code as if it had been written.
fn report_to_stdout(text: &str, gate_line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => bail!(
            "writing the report to standard output: {e}; the report is missing or cut short ({gate_line}); free space where standard output goes, or write it with -o FILE"
        ),
    }
}

/// `--output FILE` names a file (not a directory) in an existing directory, and not one of the
/// run's own input files (`inputs`: the flag and its path), so that a report never replaces
/// the baseline or the target list it was read from. Checked before any traffic.
pub fn check_output_path(output: &Output, inputs: &[(&str, Option<&Path>)]) -> anyhow::Result<()> {
    let Some(path) = output.file() else {
        return Ok(());
    };
    if path.is_dir() {
        bail!(
            "--output {}: is a directory; name a file (for example {}/report.json)",
            path.display(),
            path.display().to_string().trim_end_matches('/')
        );
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        bail!(
            "--output {}: the directory {} does not exist",
            path.display(),
            parent.display()
        );
    }
    // A file that does not exist yet cannot be an input that was already read.
    let Ok(out) = path.canonicalize() else {
        return Ok(());
    };
    for (flag, input) in inputs {
        if let Some(input) = input {
            if input.canonicalize().is_ok_and(|i| i == out) {
                bail!(
                    "--output {} is the {flag} file {}; write the report elsewhere",
                    path.display(),
                    input.display()
                );
            }
        }
    }
    Ok(())
}

/// Write `bytes` to `path` whole or not at all: into a temporary file beside it, renamed over
/// it, so a reader never sees a document cut short, nor half of this run over an earlier one.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = dir.join(format!(".{name}.vantage-{}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = renamed {
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow::Error::new(e).context(format!("writing {}", path.display())));
    }
    Ok(())
}

/// A run that ends in an error before its document is written (exit 1) leaves no `--output`
/// FILE behind: one from an earlier run (a pass, perhaps) would otherwise read as this run's.
/// Called only once the path was checked (`check_output_path`), so it is never a directory nor
/// the run's own input. Says on stderr what it removed.
pub fn discard_stale(output: &Output) {
    let Some(path) = output.file() else {
        return;
    };
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() {
        return;
    }
    match std::fs::remove_file(path) {
        Ok(()) => eprintln!(
            "vantage: no report was written; removed {} (left by an earlier run, it is not this run's)",
            path.display()
        ),
        Err(e) => eprintln!(
            "vantage: no report was written, and {} from an earlier run could not be removed ({e}); it is not this run's",
            path.display()
        ),
    }
}

/// The live progress line for one check: on a terminal only, never with `-q`.
pub fn live(output: &Output, label: &str, stage: &str) -> Live {
    Live::start(!output.quiet && stderr_is_live(), label, stage)
}

/// How `output` asks for a report to be rendered under `gate`.
pub fn render_options(output: &Output, gate: Gate) -> RenderOptions {
    let to_terminal = output.file().is_none() && std::io::stdout().is_terminal();
    let color = match output.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => to_terminal && std::env::var_os("NO_COLOR").is_none(),
    };
    let detail = if output.quiet {
        Detail::Summary
    } else if output.verbose {
        Detail::Verbose
    } else {
        Detail::Normal
    };
    RenderOptions {
        format: output.format,
        color: color && output.format == Format::Text,
        gate,
        detail,
    }
}

/// Write the report as `output` says; the gate decides the gate line and JUnit failures.
pub fn emit(report: &Report, output: &Output, gate: Gate) -> anyhow::Result<()> {
    let file = output.file();
    let text = render(report, &render_options(output, gate));
    match file {
        Some(path) => {
            write_atomically(path, text.as_bytes())?;
            eprintln!(
                "{} for {}: report written to {}; {}",
                report.decision.as_str(),
                report.target,
                path.display(),
                gate.line(report)
            );
        }
        None => {
            report_to_stdout(&text, &gate.line(report))?;
            if output.to_stdout_named() {
                eprintln!(
                    "{} for {}: report written to standard output; {}",
                    report.decision.as_str(),
                    report.target,
                    gate.line(report)
                );
            }
        }
    }
    Ok(())
}

/// Apply the baseline, write the report(s), and return the exit code: the report's gate,
/// or the worst of several. `undecided` are the endpoints asked for that have no report (the
/// coordinator went away first): with any, the document is always the one of several
/// endpoints, each of them a row `unknown` (exit 4), even when one endpoint was asked for,
/// so that the file of a run that exits 4 never reads as a pass.
pub fn finish(
    mut reports: Vec<Report>,
    undecided: &[Undecided],
    output: &Output,
    gate: Gate,
    baseline: Option<&Baseline>,
) -> anyhow::Result<u8> {
    let mut unchecked = Vec::new();
    if let Some(b) = baseline {
        let today = baseline::today();
        for r in &mut reports {
            b.apply(r, today);
        }
        let targets: Vec<&str> = reports.iter().map(|r| r.target.as_str()).collect();
        unchecked = b.unchecked(&targets);
    }
    // Each report says what the gate concluded on it (a JSON consumer reads it there).
    for r in &mut reports {
        r.gate = Some(gate.outcome(r));
    }
    if let ([one], []) = (reports.as_mut_slice(), undecided) {
        // One endpoint: the entries for others are stale in its report.
        if let Some(status) = one.baseline.as_mut() {
            status.stale.append(&mut unchecked);
        }
        emit(one, output, gate)?;
        return Ok(gate.exit_code(one));
    }
    let opts: RenderOptions = render_options(output, gate);
    let text = render_run(&reports, undecided, &opts, &unchecked);
    let summary = Summary::new(&reports, &gate)
        .with_undecided(undecided)
        .with_stale(&unchecked);
    match output.file() {
        Some(path) => {
            write_atomically(path, text.as_bytes())?;
            eprintln!("{}: reports written to {}", summary.line(), path.display());
        }
        None => {
            report_to_stdout(&text, &summary.line())?;
            if output.to_stdout_named() {
                eprintln!("{}: reports written to standard output", summary.line());
            }
        }
    }
    Ok(summary.exit_code)
}
