//! Many endpoints, one gate: the endpoints of `vantage check URL… --targets FILE` (every one
//! validated before any traffic), the baseline `--baseline` names, and `vantage baseline
//! --from` (a starting baseline from reports). The end of a run is `output::finish`.

use std::path::Path;

use anyhow::{bail, Context};
use vantage_agent::target::redacted;
use vantage_agent::Target;
use vantage_coordinator::baseline::{self, Baseline};
use vantage_coordinator::report::Report;

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
        let t = Target::parse(u).with_context(|| format!("endpoint `{}`", redacted(u)))?;
        push(&mut out, t, format!("the argument `{u}`"))?;
    }
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--targets {}", path.display()))?;
        let before = out.len();
        // Every bad line is named at once, not one per run.
        let mut bad: Vec<String> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let Some(url) = line_url(line) else { continue };
            let where_ = format!("--targets {}:{}", path.display(), i + 1);
            let pushed = Target::parse(url)
                .map_err(|e| anyhow::anyhow!("{where_}: `{}`: {e}", redacted(url)))
                .and_then(|t| push(&mut out, t, where_));
            if let Err(e) = pushed {
                bad.push(e.to_string());
            }
        }
        match bad.as_slice() {
            [] => {}
            [one] => bail!("{one}"),
            all => bail!(
                "{} lines of --targets {} are refused, so nothing was checked:\n  {}",
                all.len(),
                path.display(),
                all.join("\n  ")
            ),
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
            // What could not be written says why on the terminal too, not only in the file.
            if let Some(line) = text.lines().find(|l| l.starts_with("# Not written: ")) {
                eprintln!("baseline: {}", &line["# Not written: ".len()..]);
            }
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
