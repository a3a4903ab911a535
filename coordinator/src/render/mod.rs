//! Report renderers: JSON for machines, text for people, JUnit for CI, Markdown for PRs.
//! Every renderer that shows a verdict takes it from the same [`Gate`] as the exit code.

mod attribution;
mod junit;
mod many;
mod markdown;
mod summary;
mod text;
mod xml;

pub use junit::{junit, junit_many, junit_run};
pub use many::{render_many, render_run, Summary, SummaryRow, Undecided, MANY_SCHEMA};
pub use markdown::markdown;
pub use summary::{because, stale_words};
pub use text::text;

use crate::exit::Gate;
use crate::report::Report;

/// Output formats of `vantage check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Decision first, then findings by severity, for people (colour only on a terminal).
    #[default]
    Text,
    /// The `vantage.report/v1` JSON document.
    Json,
    /// JUnit XML: a test suite per region, a test case per check; failures are exactly the
    /// checks whose finding fails the gate.
    Junit,
    /// Markdown for pull-request comments and job summaries.
    Markdown,
}

/// How much of the text report to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// The decision, the "because" line and the gate line only (`-q`).
    Summary,
    /// Decision, findings, and per region the skipped checks with their reasons.
    #[default]
    Normal,
    /// Also every check of every region with its outcome and reason (`-v`).
    Verbose,
}

/// Everything that shapes one rendering.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    pub format: Format,
    /// ANSI colour, text only.
    pub color: bool,
    pub gate: Gate,
    /// Text only.
    pub detail: Detail,
}

/// Render `report` as `opts` say.
pub fn render(report: &Report, opts: &RenderOptions) -> String {
    match opts.format {
        Format::Text => text(report, opts),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Junit => junit(report, &opts.gate),
        Format::Markdown => markdown(report, &opts.gate),
    }
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
