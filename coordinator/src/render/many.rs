//! Several endpoints in one run (`vantage check URL… | --targets FILE`): one report per
//! endpoint and a summary, in every format, under one gate; the run's exit code is the
//! worst endpoint's (`exit::worst`).

use std::fmt::Write;

use serde::Serialize;

use super::{junit_many, markdown, text, Format, RenderOptions};
use crate::exit::{self, Gate};
use crate::report::{BaselineEntry, Report};

/// The schema name of the JSON document of a run over several endpoints.
pub const MANY_SCHEMA: &str = "vantage.reports/v1";

/// One endpoint in the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SummaryRow {
    pub target: String,
    pub decision: String,
    /// The gate line (`gate: passed`, `gate: failed (--fail-on review)`, …).
    pub gate: String,
    pub exit_code: u8,
}

/// The summary of a run over several endpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The run's exit code: the worst endpoint's.
    pub exit_code: u8,
    pub endpoints: Vec<SummaryRow>,
    /// Baseline entries for endpoints the run did not check (`Baseline::unchecked`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<BaselineEntry>,
}

impl Summary {
    pub fn new(reports: &[Report], gate: &Gate) -> Self {
        let shown = |r: &Report| r.target.clone();
        let endpoints: Vec<SummaryRow> = reports
            .iter()
            .enumerate()
            .map(|(i, r)| SummaryRow {
                // Two endpoints may read alike once a secret query value is `[redacted]`
                // (`?token=a…` and `?token=b…`): such rows say which endpoint of the list
                // they are, so a reader can tell them apart.
                target: if reports.iter().filter(|o| shown(o) == shown(r)).count() > 1 {
                    format!("{} (endpoint {} of the list)", r.target, i + 1)
                } else {
                    r.target.clone()
                },
                decision: r.decision.as_str().to_string(),
                gate: gate.line(r),
                exit_code: gate.exit_code(r),
            })
            .collect();
        Summary {
            exit_code: exit::worst(endpoints.iter().map(|e| e.exit_code)),
            endpoints,
            stale: Vec::new(),
        }
    }

    /// The summary, with the baseline's entries for endpoints the run did not check.
    pub fn with_stale(mut self, stale: &[BaselineEntry]) -> Self {
        self.stale = stale.to_vec();
        self
    }

    /// `3 endpoints: 1 blocked, 2 pass; exit 2 (the worst gate)`.
    pub fn line(&self) -> String {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for e in &self.endpoints {
            match counts.iter_mut().find(|(d, _)| *d == e.decision) {
                Some((_, n)) => *n += 1,
                None => counts.push((e.decision.clone(), 1)),
            }
        }
        let parts: Vec<String> = counts.iter().map(|(d, n)| format!("{n} {d}")).collect();
        let stale = match self.stale.len() {
            0 => String::new(),
            1 => "; 1 baseline entry for an endpoint not checked".into(),
            n => format!("; {n} baseline entries for endpoints not checked"),
        };
        format!(
            "{} endpoints: {}; exit {} (the worst gate){stale}",
            self.endpoints.len(),
            parts.join(", "),
            self.exit_code
        )
    }
}

/// Render the reports of several endpoints as `opts` say; `stale` are the baseline's
/// entries for endpoints the run did not check, shown with the summary.
pub fn render_many(reports: &[Report], opts: &RenderOptions, stale: &[BaselineEntry]) -> String {
    let summary = Summary::new(reports, &opts.gate).with_stale(stale);
    let stale_lines = |prefix: &str| -> String {
        summary
            .stale
            .iter()
            .map(|e| format!("{prefix}{}\n", super::summary::stale_words(e)))
            .collect()
    };
    match opts.format {
        Format::Json => {
            let doc = serde_json::json!({
                "schema": MANY_SCHEMA,
                "exit_code": summary.exit_code,
                "summary": summary.endpoints,
                "baseline_stale": summary.stale,
                "reports": reports,
            });
            let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Junit => junit_many(reports, &opts.gate),
        Format::Text => {
            let mut out = String::new();
            for r in reports {
                out.push_str(&text(r, opts));
                out.push('\n');
            }
            let _ = writeln!(out, "Summary: {}", summary.line());
            let width = summary
                .endpoints
                .iter()
                .map(|e| e.gate.len())
                .max()
                .unwrap_or(0);
            for e in &summary.endpoints {
                let _ = writeln!(out, "  {:<8} {:<width$}  {}", e.decision, e.gate, e.target);
            }
            out.push_str(&stale_lines("  "));
            out
        }
        Format::Markdown => {
            let mut out = format!("## Vantage: {}\n\n", summary.line());
            let _ = writeln!(out, "| endpoint | decision | gate |\n|---|---|---|");
            for e in &summary.endpoints {
                // The target is the user's text: escaped as a cell (a code span would show
                // the escapes literally, and a `|` in it would still split the row).
                let _ = writeln!(
                    out,
                    "| {} | **{}** | `{}` |",
                    super::markdown::cell(&e.target),
                    e.decision,
                    e.gate
                );
            }
            if !summary.stale.is_empty() {
                out.push('\n');
                for line in stale_lines("").lines() {
                    let _ = writeln!(out, "- {}", super::markdown::cell(line));
                }
            }
            out.push('\n');
            for r in reports {
                out.push_str(&markdown(r, &opts.gate));
                out.push('\n');
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_reports::{clean, report};

    #[test]
    fn endpoints_that_read_alike_once_redacted_say_which_of_the_list_they_are() {
        let mut a = report(vec![clean("local")]);
        a.target = "http://127.0.0.1:9/mcp?token=[redacted]".into();
        let b = a.clone();
        let mut c = a.clone();
        c.target = "http://127.0.0.1:9/other".into();
        let s = Summary::new(&[a, b, c], &Gate::default());
        let targets: Vec<&str> = s.endpoints.iter().map(|e| e.target.as_str()).collect();
        assert_eq!(
            targets,
            [
                "http://127.0.0.1:9/mcp?token=[redacted] (endpoint 1 of the list)",
                "http://127.0.0.1:9/mcp?token=[redacted] (endpoint 2 of the list)",
                "http://127.0.0.1:9/other",
            ]
        );
    }
}
