//! What the baseline's tests share: a baseline file's entries as text, parsed and applied.

use std::path::Path;

use super::*;
use crate::report::Report;

/// The endpoint the test reports are of.
pub const T: &str = "http://127.0.0.1:9/mcp";

pub fn parse(text: &str) -> Result<Baseline, BaselineError> {
    Baseline::parse(text, Path::new("b.toml"))
}

pub fn day(s: &str) -> time::Date {
    parse_date(s).unwrap()
}

/// An `[[accept]]` entry for `finding` at `endpoint` (in `region` when given).
fn entry_for(endpoint: &str, finding: &str, region: Option<&str>, expires: &str) -> String {
    let region = region
        .map(|r| format!("region = \"{r}\"\n"))
        .unwrap_or_default();
    format!("[[accept]]\nendpoint = \"{endpoint}\"\nfinding = \"{finding}\"\n{region}reason = \"known, OPS-1\"\nexpires = {expires}\n")
}

/// An entry for `finding` at [`T`], expiring on `expires` (a TOML date, or a quoted one).
pub fn entry(finding: &str, region: Option<&str>, expires: &str) -> String {
    entry_for(T, finding, region, expires)
}

/// An entry for `finding` at `endpoint`, expiring at the end of 2026.
pub fn entry_at(endpoint: &str, finding: &str, region: Option<&str>) -> String {
    entry_for(endpoint, finding, region, "2026-12-31")
}

/// The baseline of `entries`, applied to `r` on 2026-11-30.
pub fn apply_on_30_nov(r: &mut Report, entries: &[String]) {
    parse(&entries.concat())
        .unwrap()
        .apply(r, day("2026-11-30"));
}
