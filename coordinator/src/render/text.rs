//! The text report: the decision, one "because" line, the gate line, then findings by
//! severity with where they were seen, evidence, fix and the spec rule; then per region the
//! checks that did not run and why (`-v`: every check with its outcome and reason).

use std::fmt::Write;

use vantage_agent::model::{Outcome, RegionResult, Severity};

use super::summary::{
    because, outcome_word, seen_from, skipped_by_reason, status_word, unknown_fix,
};
use super::{Detail, RenderOptions};
use crate::exit::GateResult;
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
    fn gate(&self, result: GateResult, line: &str) -> String {
        let code = match result {
            GateResult::Passed => "32",
            GateResult::Failed => "1;31",
            GateResult::Unknown => "35",
        };
        self.wrap(code, line)
    }
    fn outcome(&self, o: Outcome) -> String {
        let code = match o {
            Outcome::Pass => "32",
            Outcome::Fail => "31",
            Outcome::Warn | Outcome::Unknown => "33",
            Outcome::Skip | Outcome::Error => "2",
        };
        self.wrap(code, &format!("{:<5}", outcome_word(o)))
    }
}

/// The decision, the because line and the gate line: all of `-q`, and the head of the rest.
fn head(out: &mut String, report: &Report, opts: &RenderOptions, p: &Paint) {
    let _ = writeln!(out, "{}  {}", p.decision(report.decision), report.target);
    let _ = writeln!(out, "  because: {}", because(report));
    let result = opts.gate.result(report);
    let _ = writeln!(out, "  {}", p.gate(result, &opts.gate.line(report)));
    // Nothing was decided: what to do about it belongs on the first screen.
    if let Some(fix) = unknown_fix(report) {
        let _ = writeln!(out, "  fix: {fix}");
    }
}

pub fn text(report: &Report, opts: &RenderOptions) -> String {
    let p = Paint { on: opts.color };
    let mut out = String::new();
    head(&mut out, report, opts, &p);
    if opts.detail == Detail::Summary {
        return out;
    }
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
        let _ = writeln!(
            out,
            "  {} {}  {}",
            p.severity(f.severity),
            p.wrap("1", f.id.as_str()),
            seen_from(f, report)
        );
        let _ = writeln!(out, "           {}", f.title);
        if let Some(a) = &f.accepted {
            let _ = writeln!(
                out,
                "           {}",
                p.wrap("1", &super::summary::acceptance(a))
            );
        }
        for e in &f.evidence {
            let _ = writeln!(out, "           - {e}");
        }
        let _ = writeln!(out, "           fix: {}", f.remediation);
        if let Some(st) = &f.stack {
            let _ = writeln!(
                out,
                "           stack: {} ({})",
                st.stack.label(),
                st.evidence
            );
        }
        let _ = writeln!(out, "           spec: {}", f.spec);
    }
    if let Some(b) = report
        .baseline
        .as_ref()
        .filter(|b| !(b.accepted.is_empty() && b.expired.is_empty() && b.stale.is_empty()))
    {
        let _ = writeln!(out, "\n{}", super::summary::baseline_line(b));
        for e in &b.stale {
            let _ = writeln!(out, "  {}", super::summary::stale_words(e));
        }
    }
    let _ = writeln!(out, "\nRegions:");
    for r in &report.regions {
        region(&mut out, r, opts.detail, &p);
    }
    out
}

fn region(out: &mut String, r: &RegionResult, detail: Detail, p: &Paint) {
    let count = |o: Outcome| r.checks.iter().filter(|c| c.outcome == o).count();
    let _ = writeln!(
        out,
        "  {:<12} {:<9} {:>6} ms  {} passed, {} failed, {} warned, {} skipped, {} unknown, {} could not run",
        r.region,
        status_word(r),
        r.duration_ms,
        count(Outcome::Pass),
        count(Outcome::Fail),
        count(Outcome::Warn),
        count(Outcome::Skip),
        count(Outcome::Unknown),
        count(Outcome::Error),
    );
    if detail == Detail::Verbose {
        let width = r
            .checks
            .iter()
            .map(|c| c.id.as_str().len())
            .max()
            .unwrap_or(0);
        for c in &r.checks {
            let sev = c
                .severity
                .filter(|_| c.outcome.is_problem())
                .map(|s| format!(" [{}]", s.as_str()))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {} {:<width$}  {}{sev}",
                p.outcome(c.outcome),
                c.id,
                c.observed
            );
        }
        return;
    }
    for (reason, ids) in skipped_by_reason(r) {
        match reason.strip_prefix("no evidence: ") {
            Some(why) => {
                let _ = writeln!(out, "    unknown ({why}): {}", ids.join(", "));
            }
            None => {
                let _ = writeln!(out, "    skipped ({reason}): {}", ids.join(", "));
            }
        }
    }
}
