//! The text report: the decision first, then findings by severity with their regions,
//! evidence and fix, then one line per region.

use std::fmt::Write;

use vantage_agent::model::{Outcome, Severity};

use crate::report::{Decision, Report};

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn decision(&self, d: Decision) -> String {
        let code = match d {
            Decision::Pass => "1;32",
            Decision::Review => "1;33",
            Decision::Blocked => "1;31",
            Decision::Unknown => "1;35",
        };
        self.wrap(code, &d.as_str().to_uppercase())
    }
    fn severity(&self, s: Severity) -> String {
        let code = match s {
            Severity::Critical | Severity::High => "31",
            Severity::Medium => "33",
            Severity::Low => "36",
            Severity::Info => "2",
        };
        self.wrap(code, &format!("{:<8}", s.as_str().to_uppercase()))
    }
}

pub fn text(report: &Report, color: bool) -> String {
    let p = Paint { on: color };
    let mut out = String::new();
    let _ = writeln!(out, "{}  {}", p.decision(report.decision), report.target);
    let _ = writeln!(out, "  {}", report.reason);
    let _ = writeln!(
        out,
        "  era {}, {} region(s), {} ms, report {}",
        serde_json::to_string(&report.era)
            .unwrap_or_default()
            .trim_matches('"'),
        report.regions.len(),
        report.duration_ms,
        report.id
    );
    if report.findings.is_empty() {
        let _ = writeln!(out, "\nNo findings.");
    } else {
        let _ = writeln!(out, "\nFindings:");
    }
    for f in &report.findings {
        let scope = f.scope_label();
        let _ = writeln!(
            out,
            "  {} {}  [{}]",
            p.severity(f.severity),
            p.wrap("1", f.id.as_str()),
            scope
        );
        let _ = writeln!(out, "           {}", f.title);
        for e in &f.evidence {
            let _ = writeln!(out, "           - {e}");
        }
        let _ = writeln!(out, "           fix: {}", f.remediation);
        let _ = writeln!(out, "           rule: {}", f.spec);
    }
    let _ = writeln!(out, "\nRegions:");
    for r in &report.regions {
        let count = |o: Outcome| r.checks.iter().filter(|c| c.outcome == o).count();
        let _ = writeln!(
            out,
            "  {:<12} {:<9} {:>6} ms  {} pass, {} fail, {} warn, {} skip, {} error",
            r.region,
            serde_json::to_string(&r.status)
                .unwrap_or_default()
                .trim_matches('"'),
            r.duration_ms,
            count(Outcome::Pass),
            count(Outcome::Fail),
            count(Outcome::Warn),
            count(Outcome::Skip),
            count(Outcome::Error),
        );
    }
    out
}
