//! The Markdown report, for pull-request comments and CI job summaries.

use std::fmt::Write;

use crate::report::Report;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Vantage: **{}** for `{}`\n",
        report.decision.as_str(),
        report.target
    );
    let _ = writeln!(out, "{}\n", cell(&report.reason));
    if !report.findings.is_empty() {
        let _ = writeln!(out, "| severity | finding | scope | evidence | fix |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for f in &report.findings {
            let scope = f.scope_label();
            let _ = writeln!(
                out,
                "| {} | `{}` {} | {} | {} | {} |",
                f.severity.as_str(),
                f.id,
                cell(&f.title),
                scope,
                cell(&f.evidence.join("; ")),
                cell(&f.remediation)
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
            let outcome = serde_json::to_string(&c.outcome).unwrap_or_default();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                c.id,
                outcome.trim_matches('"'),
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
