//! The Markdown report, for pull-request comments and CI job summaries.

use std::fmt::Write;

use super::summary::{
    acceptance, baseline_line, because, outcome_word, seen_from, stale_words, unknown_fix,
};
use crate::exit::Gate;
use crate::report::Report;

/// A string from the target, an agent or a config, made inert in GitHub-flavoured Markdown:
/// every character that HTML or Markdown could read as active syntax (tags, entities, code
/// spans, links and images, table cells, mentions, issue references, emphasis and
/// strikethrough) becomes a numeric
/// character reference, which CommonMark renders as that literal character and never
/// as syntax; line breaks become spaces (one table cell, one line). Nothing a target sends can
/// add an image, a link or HTML to a pull-request comment.
pub(crate) fn cell(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &ch) in chars.iter().enumerate() {
        // An underscore inside a word (`allow_non_global`) never opens or closes emphasis
        // in CommonMark: it stays as written, so our own words stay readable.
        let inside_a_word = |i: usize| {
            i > 0
                && chars[i - 1].is_alphanumeric()
                && chars.get(i + 1).is_some_and(|c| c.is_alphanumeric())
        };
        match ch {
            '_' if inside_a_word(i) => out.push(ch),
            '&' | '<' | '>' | '"' | '\'' | '`' | '[' | ']' | '|' | '\\' | '@' | '#' | '*' | '_'
            | '~' => {
                out.push_str(&format!("&#{};", ch as u32));
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

pub fn markdown(report: &Report, gate: &Gate) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Vantage: **{}** for {}\n",
        report.decision.as_str(),
        cell(&report.target)
    );
    let _ = writeln!(out, "Because: {}\n", cell(&because(report)));
    if let Some(fix) = unknown_fix(report) {
        let _ = writeln!(out, "Fix: {}\n", cell(fix));
    }
    // Our own words (the gate line holds only flags and a fixed text): a code span.
    let _ = writeln!(out, "`{}`\n", gate.line(report));
    if !report.findings.is_empty() {
        let _ = writeln!(
            out,
            "| severity | finding | where | evidence | fix | spec |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        for f in &report.findings {
            let severity = match &f.accepted {
                Some(a) => format!("{} ({})", f.severity.as_str(), acceptance(a)),
                None => f.severity.as_str().to_string(),
            };
            let fix = match &f.stack {
                Some(st) => format!(
                    "{} (stack: {}, from {})",
                    f.remediation,
                    st.stack.label(),
                    st.evidence
                ),
                None => f.remediation.clone(),
            };
            let _ = writeln!(
                out,
                "| {} | `{}` {} | {} | {} | {} | {} |",
                cell(&severity),
                f.id,
                cell(&f.title),
                cell(&seen_from(f, report)),
                cell(&f.evidence.join("; ")),
                cell(&fix),
                cell(&f.spec)
            );
        }
        out.push('\n');
    }
    if let Some(b) = report
        .baseline
        .as_ref()
        .filter(|b| !(b.accepted.is_empty() && b.expired.is_empty() && b.stale.is_empty()))
    {
        let _ = writeln!(out, "{}\n", cell(&baseline_line(b)));
        for e in &b.stale {
            let _ = writeln!(out, "- {}", cell(&stale_words(e)));
        }
        if !b.stale.is_empty() {
            out.push('\n');
        }
    }
    for r in &report.regions {
        let _ = writeln!(
            out,
            "<details><summary>{} ({} ms)</summary>\n",
            cell(&r.region),
            r.duration_ms
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
        cell(&report.id),
        cell(&report.started_at)
    );
    out
}

#[cfg(test)]
mod cell_tests {
    use super::cell;

    #[test]
    fn emphasis_is_inert_and_words_stay_readable() {
        assert_eq!(cell("_i_ *b* ~s~"), "&#95;i&#95; &#42;b&#42; &#126;s&#126;");
        // Inside a word an underscore is no emphasis: left as written.
        assert_eq!(cell("probe.allow_non_global"), "probe.allow_non_global");
        assert_eq!(cell("a__b"), "a&#95;&#95;b");
    }
}
