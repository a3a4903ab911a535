//! `vantage explain ID`: from a check id or a finding id, in one step, to what it means, how
//! bad it can be, the rule and the fix, the checks that raise it, and the source file that
//! observes it. Also the README's finding table, generated from the same catalogues so that
//! it cannot drift.

use std::fmt::Write;

use vantage_agent::catalog::{self, CheckId, FindingId};

use crate::findings;

/// Where the code of a finding lives: the files of the checks that observe it, then the
/// merge when it names the finding by a condition or derives it.
fn code_of(id: FindingId) -> Vec<&'static str> {
    let raising = catalog::raising(id);
    let conditional = raising.iter().any(|(_, when)| when.is_some());
    let raised = raising.iter().map(|(c, _)| c.spec().source);
    let merge = findings::spec(id)
        .derived
        .map(|(file, _)| file)
        .or(conditional.then_some(findings::MERGE));
    let mut files = Vec::new();
    for file in raised.chain(merge) {
        if !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

fn check_text(id: CheckId) -> String {
    let c = id.spec();
    let mut out = format!("{id}: a check, stage {}\n", c.stage.as_str());
    let _ = writeln!(out, "  passes when  {}", c.expected);
    let f = findings::spec(c.finding);
    if f.severity > c.max_severity {
        // The merge raises it (an auth check diverging, a protected endpoint, ...).
        let _ = writeln!(
            out,
            "  severity     up to {} as judged in a region; its finding up to {} once merged",
            c.max_severity.as_str(),
            f.severity.as_str()
        );
    } else {
        let _ = writeln!(out, "  severity     up to {}", c.max_severity.as_str());
    }
    let _ = writeln!(out, "  finding      {} ({})", c.finding, f.title);
    for (other, when) in c.also {
        let _ = writeln!(out, "               {other} {when}");
    }
    let _ = writeln!(out, "  rule         {}", f.spec);
    let _ = writeln!(out, "  fix          {}", f.remediation);
    let evidence = match c.evidence {
        Some(e) => format!(
            "a pass proves {}, one of the conditions for a region to have observed the target (never pass what was not seen)",
            e.describe()
        ),
        None => "a pass proves none of the conditions for a region to have observed the target on its own (never pass what was not seen)".to_string(),
    };
    let _ = writeln!(out, "  evidence     {evidence}");
    let _ = writeln!(out, "  code         {}", c.source);
    out
}

fn finding_text(id: FindingId) -> String {
    let f = findings::spec(id);
    let mut out = format!("{id}: a finding, up to {}\n", f.severity.as_str());
    let _ = writeln!(out, "  title        {}", f.title);
    let _ = writeln!(out, "  rule         {}", f.spec);
    let _ = writeln!(out, "  fix          {}", f.remediation);
    for (i, (check, when)) in catalog::raising(id).into_iter().enumerate() {
        let label = if i == 0 { "raised by" } else { "" };
        let _ = writeln!(
            out,
            "  {label:<12} {check} {}(stage {}, {})",
            when.map(|w| format!("{w} ")).unwrap_or_default(),
            check.stage().as_str(),
            check.spec().source
        );
    }
    if let Some((file, how)) = f.derived {
        let _ = writeln!(out, "  derived      {how} ({file})");
    }
    let _ = writeln!(out, "  code         {}", code_of(id).join(", "));
    out
}

/// An id `vantage explain` does not know, with the id it most likely meant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown check or finding id `{id}`{}; `vantage explain --table` lists every id", .suggestion.map(|s| format!("; did you mean {s}?")).unwrap_or_default())]
pub struct UnknownExplainId {
    pub id: String,
    /// The known id it most likely meant: the same once `_` is `-` and case is ignored, or
    /// within two edits.
    pub suggestion: Option<&'static str>,
}

/// Edit distance (insertions, deletions, substitutions) between two short ids.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The known id `id` most likely meant.
fn suggest(id: &str) -> Option<&'static str> {
    let wanted = id.trim().to_ascii_lowercase().replace('_', "-");
    let known = CheckId::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(FindingId::ALL.iter().map(|f| f.as_str()));
    known
        .map(|k| (distance(&wanted, k), k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

/// Explain a check id, a finding id, or an id that is both (a check's own finding).
pub fn explain(id: &str) -> Result<String, UnknownExplainId> {
    let check = id.parse::<CheckId>().ok().map(check_text);
    let finding = id.parse::<FindingId>().ok().map(finding_text);
    match (check, finding) {
        (None, None) => Err(UnknownExplainId {
            id: id.to_string(),
            suggestion: suggest(id),
        }),
        (c, f) => Ok([c, f].into_iter().flatten().collect::<Vec<_>>().join("\n")),
    }
}

/// The README's table: every finding, how bad it can be, what raises it and where the code
/// is (Markdown).
pub fn table() -> String {
    let mut out = String::from("| finding | up to | raised by | code |\n|---|---|---|---|\n");
    let mut ids = FindingId::ALL.to_vec();
    ids.sort_by_key(|id| id.as_str());
    for id in ids {
        let f = findings::spec(id);
        let mut raised: Vec<String> = catalog::raising(id)
            .into_iter()
            .map(|(c, when)| match when {
                Some(w) => format!("`{c}` {w}"),
                None => format!("`{c}`"),
            })
            .collect();
        if let Some((_, how)) = f.derived {
            raised.push(format!("merge: {how}"));
        }
        let code: Vec<String> = code_of(id).iter().map(|p| format!("`{p}`")).collect();
        let _ = writeln!(
            out,
            "| `{id}` | {} | {} | {} |",
            f.severity.as_str(),
            raised.join("; "),
            code.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (id, what its explanation starts with, what it contains, what it must not contain)
    const CASES: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "egress.blocked",
            "egress.blocked: a finding, up to high",
            &[
                "net.connect when it fails in some regions only",
                "code         agent/src/probe/connect.rs, coordinator/src/merge.rs",
            ],
            &["a check"],
        ),
        (
            "edge.divergent",
            "edge.divergent: a finding, up to high",
            &["derived", "coordinator/src/merge.rs"],
            &["raised by"],
        ),
        // A check id that is also a finding id explains both.
        (
            "transport.get",
            "transport.get: a check, stage transport",
            &[
                "\ntransport.get: a finding, up to medium",
                "agent/src/probe/transport.rs",
            ],
            &[],
        ),
        // A check whose failure is always named otherwise.
        (
            "dns.a-record",
            "dns.a-record: a check, stage dns",
            &["finding      dns.no-a-record"],
            &["a finding, up to"],
        ),
        (
            "dns.resolve",
            "dns.resolve: a check, stage dns",
            &["a pass proves the name resolved"],
            &[],
        ),
        // A check whose finding the merge raises above the check's own severity says so.
        (
            "security.origin",
            "security.origin: a check, stage transport",
            &["up to medium as judged in a region; its finding up to high once merged"],
            &[],
        ),
    ];

    #[test]
    fn ids_lead_to_their_checks_and_code() {
        for (id, head, has, lacks) in CASES {
            let text = explain(id).unwrap();
            assert!(text.starts_with(head), "{id}: {text}");
            for needle in *has {
                assert!(text.contains(needle), "{id} lacks {needle:?}: {text}");
            }
            for needle in *lacks {
                assert!(!text.contains(needle), "{id} has {needle:?}: {text}");
            }
        }
    }

    /// Users have no `checks.md`: every explanation cites the rule in words.
    #[test]
    fn no_explanation_cites_an_internal_document() {
        let ids = CheckId::ALL
            .iter()
            .map(|c| c.as_str())
            .chain(FindingId::ALL.iter().map(|f| f.as_str()));
        for id in ids {
            let text = explain(id).unwrap();
            assert!(!text.contains("checks.md"), "{id}: {text}");
        }
        assert!(!table().contains("checks.md"));
    }

    #[test]
    fn an_unknown_id_is_an_error_that_names_it_and_the_list() {
        let err = explain("egress.blockd").unwrap_err();
        assert_eq!(err.id, "egress.blockd");
        assert!(err.to_string().contains("vantage explain --table"), "{err}");
        assert_eq!(err.suggestion, Some("egress.blocked"));
        for (typed, meant) in [
            ("tools.schema_valid", "tools.schema-valid"),
            ("TOOLS.SCHEMA-VALID", "tools.schema-valid"),
            ("transport.gett", "transport.get"),
        ] {
            let err = explain(typed).unwrap_err();
            assert_eq!(err.suggestion, Some(meant), "{typed}");
            assert_eq!(
                err.to_string(),
                format!("unknown check or finding id `{typed}`; did you mean {meant}?; `vantage explain --table` lists every id")
            );
        }
        let err = explain("nothing.like-it").unwrap_err();
        assert_eq!(err.suggestion, None);
        assert_eq!(
            err.to_string(),
            "unknown check or finding id `nothing.like-it`; `vantage explain --table` lists every id"
        );
    }

    #[test]
    fn the_table_has_a_row_per_finding() {
        let t = table();
        assert_eq!(t.lines().count(), 2 + FindingId::ALL.len());
        let row = "| `auth.invalid-token-accepted` | critical | `auth.garbage-token` when the token is let through (any answer but 401/403 from the authorization layer); `auth.wrong-audience` when the token is let through (any answer but 401/403 from the authorization layer) | `agent/src/probe/auth/tokens.rs`, `coordinator/src/merge.rs` |";
        assert!(t.contains(row), "{t}");
    }
}
