//! Report renderers: JSON for machines, text for people, JUnit for CI, Markdown for PRs.

mod junit;
mod markdown;
mod text;

pub use junit::junit;
pub use markdown::markdown;
pub use text::text;

use crate::report::Report;

/// Output formats of `vantage check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Decision first, then findings by severity, for people (colour only on a terminal).
    #[default]
    Text,
    /// The `vantage.report/v1` JSON document.
    Json,
    /// JUnit XML: a test suite per region, a test case per check.
    Junit,
    /// Markdown for pull-request comments and job summaries.
    Markdown,
}

/// Render `report` in `format`; `color` applies to text only.
pub fn render(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Text => text(report, color),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Junit => junit(report),
        Format::Markdown => markdown(report),
    }
}
