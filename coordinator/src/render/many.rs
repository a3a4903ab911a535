//! Several endpoints in one run (`vantage check URL… | --targets FILE`): one report per
//! endpoint and a summary, in every format, under one gate; the run's exit code is the
//! worst endpoint's (`exit::worst`).

use std::fmt::Write;

use serde::Serialize;

use super::{junit_run, markdown, text, Format, RenderOptions};
use crate::exit::{self, Gate};
use crate::report::{BaselineEntry, Report};

/// The schema name of the JSON document of a run over several endpoints.
pub const MANY_SCHEMA: &str = "vantage.reports/v1";

/// An endpoint the run was asked to check that has no report: nothing was decided about it
/// (the coordinator went away before it was). It is a summary row `unknown`, exit 4, in
/// every format, never left out: a run that exits 4 never writes a document that passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecided {
    pub target: String,
    /// Why there is no report, for people (`the coordinator at … went away …`).
    pub why: String,
    /// When it was given up (RFC 3339), for JUnit's timestamp.
    pub at: String,
}

impl Undecided {
    /// Its gate line: unknown, exit 4, no report (why is beside it: the summary row's
    /// `reason`, the text and Markdown sections, the JUnit message).
    pub fn gate_line(&self) -> String {
        format!(
            "gate: unknown (exit {}: no report: the coordinator went away before this endpoint was decided)",
            exit::UNKNOWN_REGION
        )
    }
}

/// One endpoint in the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SummaryRow {
    pub target: String,
    pub decision: String,
    /// The gate line (`gate: passed`, `gate: failed (--fail-on review)`, …).
    pub gate: String,
    pub exit_code: u8,
    /// Why an endpoint has no report (the coordinator went away before it was decided);
    /// absent for an endpoint whose report is in the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
                reason: None,
            })
            .collect();
        Summary {
            exit_code: exit::worst(endpoints.iter().map(|e| e.exit_code)),
            endpoints,
            stale: Vec::new(),
        }
    }

    /// The summary, with a row `unknown` (exit 4) for every endpoint that has no report.
    pub fn with_undecided(mut self, undecided: &[Undecided]) -> Self {
        self.endpoints.extend(undecided.iter().map(|u| SummaryRow {
            target: u.target.clone(),
            decision: crate::report::Decision::Unknown.as_str().to_string(),
            gate: u.gate_line(),
            exit_code: exit::UNKNOWN_REGION,
            reason: Some(u.why.clone()),
        }));
        self.exit_code = exit::worst(self.endpoints.iter().map(|e| e.exit_code));
        self
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
            "{} endpoint{}: {}; exit {} (the worst gate){stale}",
            self.endpoints.len(),
            if self.endpoints.len() == 1 { "" } else { "s" },
            parts.join(", "),
            self.exit_code
        )
    }
}

/// Render the reports of several endpoints as `opts` say; `stale` are the baseline's
/// entries for endpoints the run did not check, shown with the summary.
pub fn render_many(reports: &[Report], opts: &RenderOptions, stale: &[BaselineEntry]) -> String {
    render_run(reports, &[], opts, stale)
}

/// [`render_many`] for a run in which some endpoints have no report (`undecided`, after the
/// reports in the run's order): each is a summary row `unknown` (exit 4) with why, a JUnit
/// `vantage.gate` error, and a section in text and Markdown.
pub fn render_run(
    reports: &[Report],
    undecided: &[Undecided],
    opts: &RenderOptions,
    stale: &[BaselineEntry],
) -> String {
    let summary = Summary::new(reports, &opts.gate)
        .with_undecided(undecided)
        .with_stale(stale);
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
        Format::Junit => junit_run(reports, undecided, &opts.gate),
        Format::Text => {
            let mut out = String::new();
            for r in reports {
                out.push_str(&text(r, opts));
                out.push('\n');
            }
            for u in undecided {
                let _ = writeln!(
                    out,
                    "UNKNOWN  {}\n  no report: {}\n  {}\n",
                    u.target,
                    u.why,
                    u.gate_line()
                );
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
                // A gate line that quotes an answer (an endpoint without a report: why) may
                // hold a backtick, which would end a code span: escaped as a cell then.
                let gate = if e.gate.contains('`') {
                    super::markdown::cell(&e.gate)
                } else {
                    format!("`{}`", e.gate)
                };
                let _ = writeln!(
                    out,
                    "| {} | **{}** | {gate} |",
                    super::markdown::cell(&e.target),
                    e.decision,
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
            for u in undecided {
                let _ = writeln!(
                    out,
                    "## Vantage: **unknown** for {}\n\nNo report: {}\n\n{}\n",
                    super::markdown::cell(&u.target),
                    super::markdown::cell(&u.why),
                    super::markdown::cell(&u.gate_line())
                );
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
