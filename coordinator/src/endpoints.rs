//! Many endpoints, one gate: the endpoints of `vantage check URL… --targets FILE` (every one
//! validated before any traffic), and the end of a run: the baseline applied, the reports
//! written (one, or several with a summary), the exit code of the worst gate.

use std::path::Path;

use anyhow::{bail, Context};
use vantage_agent::Target;
use vantage_coordinator::baseline::{self, Baseline};
use vantage_coordinator::exit::Gate;
use vantage_coordinator::render::{render_many, RenderOptions, Summary};
use vantage_coordinator::report::Report;

use crate::args::Output;
use crate::cli::{emit, render_options};

/// One line of a targets file: the URL, without a `#` comment.
fn line_url(line: &str) -> Option<&str> {
    let line = match line.find(" #").or_else(|| line.find("\t#")) {
        Some(i) => &line[..i],
        None => line,
    };
    let line = line.trim();
    (!line.is_empty() && !line.starts_with('#')).then_some(line)
}

/// The endpoints named on the command line, then those of `--targets FILE`, each parsed;
/// an error names the argument or the file and line, and the fix.
pub fn targets(urls: &[String], file: Option<&Path>) -> anyhow::Result<Vec<Target>> {
    fn push(out: &mut Vec<(Target, String)>, t: Target, where_: String) -> anyhow::Result<()> {
        if let Some((_, first)) = out.iter().find(|(x, _)| *x == t) {
            bail!("{where_}: {t} is already named by {first}; name each endpoint once");
        }
        out.push((t, where_));
        Ok(())
    }
    let mut out: Vec<(Target, String)> = Vec::new();
    for u in urls {
        let t = Target::parse(u).with_context(|| format!("endpoint `{u}`"))?;
        push(&mut out, t, format!("the argument `{u}`"))?;
    }
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--targets {}", path.display()))?;
        let before = out.len();
        for (i, line) in text.lines().enumerate() {
            let Some(url) = line_url(line) else { continue };
            let where_ = format!("--targets {}:{}", path.display(), i + 1);
            let t = Target::parse(url).with_context(|| format!("{where_}: `{url}`"))?;
            push(&mut out, t, where_)?;
        }
        if out.len() == before {
            bail!(
                "--targets {}: no endpoint in it; write one URL per line (`#` starts a comment)",
                path.display()
            );
        }
    }
    Ok(out.into_iter().map(|(t, _)| t).collect())
}

/// The baseline `--baseline` names, read before any traffic.
pub fn baseline(path: Option<&Path>) -> anyhow::Result<Option<Baseline>> {
    Ok(path.map(Baseline::load).transpose()?)
}

/// Apply the baseline, write the report(s), and return the exit code: the report's gate,
/// or the worst of several.
pub fn finish(
    mut reports: Vec<Report>,
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
    if let [one] = reports.as_mut_slice() {
        // One endpoint: the entries for others are stale in its report.
        if let Some(status) = one.baseline.as_mut() {
            status.stale.append(&mut unchecked);
        }
        emit(one, output, gate)?;
        return Ok(gate.exit_code(one));
    }
    let opts: RenderOptions = render_options(output, gate);
    let text = render_many(&reports, &opts, &unchecked);
    let summary = Summary::new(&reports, &gate).with_stale(&unchecked);
    match output.file() {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("{}: reports written to {}", summary.line(), path.display());
        }
        None => {
            use std::io::Write;
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
        }
    }
    Ok(summary.exit_code)
}

/// `vantage baseline --from REPORT…`: a starting baseline.
pub fn write_baseline(args: &crate::args::BaselineArgs) -> anyhow::Result<u8> {
    let mut reports: Vec<Report> = Vec::new();
    for path in &args.from {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("--from {}", path.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
            format!(
                "--from {}: not JSON; write the report with `vantage check -f json -o FILE`",
                path.display()
            )
        })?;
        let found: Vec<serde_json::Value> = match v.get("schema").and_then(|s| s.as_str()) {
            Some(vantage_coordinator::report::SCHEMA_ID) => vec![v],
            Some(vantage_coordinator::render::MANY_SCHEMA) => v
                .get("reports")
                .and_then(|r| r.as_array())
                .cloned()
                .unwrap_or_default(),
            other => bail!(
                "--from {}: not a vantage report (schema {}); write it with `vantage check -f json -o FILE`",
                path.display(),
                other.map(|s| format!("`{s}`")).unwrap_or_else(|| "missing".into())
            ),
        };
        for r in found {
            reports.push(serde_json::from_value(r).with_context(|| {
                format!("--from {}: not a vantage.report/v1 report", path.display())
            })?);
        }
    }
    let expires = match args.expires {
        Some(d) => d,
        None => baseline::today() + time::Duration::days(i64::from(args.days)),
    };
    if expires < baseline::today() {
        bail!(
            "--expires {}: the date has passed; give a future date",
            baseline::date_text(expires)
        );
    }
    let refs: Vec<&Report> = reports.iter().collect();
    let text = baseline::starting(&refs, &args.reason, expires);
    match &args.output {
        Some(path) if path.exists() && !args.force => bail!(
            "-o {}: the file exists; edit it, or give --force to replace it (its reasons and dates are lost)",
            path.display()
        ),
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
            let entries = text.matches("[[accept]]").count();
            eprintln!(
                "baseline: {entries} entr{} written to {}; give each its real reason before you commit it",
                if entries == 1 { "y" } else { "ies" },
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(vantage_coordinator::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_lines_and_comments() {
        assert_eq!(
            line_url("https://a.example/mcp"),
            Some("https://a.example/mcp")
        );
        assert_eq!(
            line_url("  https://a.example/mcp   # the main one"),
            Some("https://a.example/mcp")
        );
        assert_eq!(line_url("# staging"), None);
        assert_eq!(line_url("   "), None);
    }
}
