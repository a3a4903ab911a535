//! The Markdown report, for pull-request comments and CI job summaries.

use std::fmt::Write;

use super::summary::{because, outcome_word, seen_from, unknown_fix};
use crate::exit::Gate;
use crate::report::Report;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn markdown(report: &Report, gate: &Gate) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Vantage: **{}** for `{}`\n",
        report.decision.as_str(),
        report.target
    );
    let _ = writeln!(out, "Because: {}\n", cell(&because(report)));
    if let Some(fix) = unknown_fix(report) {
        let _ = writeln!(out, "Fix: {}\n", cell(fix));
    }
    let _ = writeln!(out, "`{}`\n", gate.line(report));
    if !report.findings.is_empty() {
        let _ = writeln!(
            out,
            "| severity | finding | where | evidence | fix | spec |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        for f in &report.findings {
            let _ = writeln!(
                out,
                "| {} | `{}` {} | {} | {} | {} | {} |",
                f.severity.as_str(),
                f.id,
                cell(&f.title),
                seen_from(f, report),
                cell(&f.evidence.join("; ")),
                cell(&f.remediation),
                cell(&f.spec)
            );
        }
        out.push('\n');
    }
    for r in &report.regions {
        let _ = writeln!(
            out,
            "<details><summary>{} ({} ms)</summary>\n",
            r.region, r.duration_ms
        );
        let _ = writeln!(out, "| check | outcome | observed |");
        let _ = writeln!(out, "|---|---|---|");
        for c in &r.checks {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                c.id,
                outcome_word(c.outcome),
                cell(&c.observed)
            );
        }
        let _ = writeln!(out, "\n</details>\n");
    }
    let _ = writeln!(
        out,
        "<sub>report {} · {}</sub>",
        report.id, report.started_at
    );
    out
}
