//! Every exit-code decision of `vantage check`, in one place: the gate. The exit code, the
//! text report's gate line and the JUnit `failure` elements all come from one [`Gate`], so a
//! CI dashboard and the job's status never disagree.

use vantage_agent::catalog::FindingId;
use vantage_agent::model::Severity;

use crate::report::{Decision, Finding, Report};

/// The gate passed.
pub const OK: u8 = 0;
/// A usage error or an internal error; the message says which.
pub const USAGE: u8 = 1;
/// The gate failed.
pub const GATE_FAILED: u8 = 2;
/// `unknown`: authorization required and no credential given, or the credential refused.
pub const UNKNOWN_AUTH: u8 = 3;
/// `unknown`: a region did not report, or did not observe the target (`checks.md` 4.1).
pub const UNKNOWN_REGION: u8 = 4;

/// Which decision fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FailOn {
    /// Only `blocked` fails (the default).
    #[default]
    Blocked,
    /// `review` fails too.
    Review,
}

impl FailOn {
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Blocked => "blocked",
            FailOn::Review => "review",
        }
    }

    /// The least severe finding that makes this decision.
    fn threshold(self) -> Severity {
        match self {
            FailOn::Blocked => Severity::High,
            FailOn::Review => Severity::Medium,
        }
    }
}

/// A finding severity that also fails the gate when the decision is pass or review
/// (`--fail-on-severity`); `unknown` stays exit 3 or 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOnSeverity {
    Low,
    Medium,
    High,
    Critical,
}

impl FailOnSeverity {
    pub fn severity(self) -> Severity {
        match self {
            FailOnSeverity::Low => Severity::Low,
            FailOnSeverity::Medium => Severity::Medium,
            FailOnSeverity::High => Severity::High,
            FailOnSeverity::Critical => Severity::Critical,
        }
    }
}

/// Findings that make the decision `unknown` (nothing was decided about the target): in
/// JUnit they are errors, never failures, and no baseline may accept them. The merge's own
/// typed list, not a copy.
pub use crate::merge::UNKNOWN_FINDINGS as UNKNOWN_CAUSES;

/// The `unknown` findings of the authorization boundary: exit 3 when they are the only ones.
const UNKNOWN_AUTH_CAUSES: &[FindingId] = &[
    FindingId::AuthCredentialRequired,
    FindingId::AuthCredentialRefused,
];

/// Findings about the vantage itself, never about the target: they never fail the gate.
pub const NOT_ABOUT_THE_TARGET: &[FindingId] = &[FindingId::FleetVantageDegraded];

/// Whether a finding says nothing about the endpoint (nothing was observed, or the fault is
/// the vantage's): it never fails the gate on its own and no baseline may accept it.
pub fn says_nothing_about_the_target(id: FindingId) -> bool {
    UNKNOWN_CAUSES.contains(&id) || NOT_ABOUT_THE_TARGET.contains(&id)
}

pub use crate::report::GateResult;

/// The gate of `vantage check`: one value that decides the exit code, the text report's gate
/// line and which JUnit test cases are failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gate {
    pub fail_on: FailOn,
    pub fail_on_severity: Option<FailOnSeverity>,
}

impl Gate {
    pub fn new(fail_on: FailOn, fail_on_severity: Option<FailOnSeverity>) -> Self {
        Gate {
            fail_on,
            fail_on_severity,
        }
    }

    /// The least severe finding that fails the gate.
    pub fn threshold(&self) -> Severity {
        let by_decision = self.fail_on.threshold();
        match self.fail_on_severity {
            Some(s) => by_decision.min(s.severity()),
            None => by_decision,
        }
    }

    /// Whether this finding, on its own, fails the gate (a JUnit `failure`). A finding a
    /// baseline accepts never does; one whose acceptance expired always does.
    pub fn fails_on(&self, f: &Finding) -> bool {
        if f.is_expired() {
            return true;
        }
        f.severity >= self.threshold() && !f.is_accepted() && !says_nothing_about_the_target(f.id)
    }

    /// The decision the gate judges: the report's, or, when a baseline accepted some of its
    /// findings, the one the other findings make on the report's own evidence (`checks.md`
    /// section 4, in order, by the merge's own rules): accepting what blocked a target never
    /// makes a pass of what no region observed (a refused connection, a degraded region).
    pub fn decision(&self, report: &Report) -> Decision {
        if !report.findings.iter().any(Finding::is_accepted) {
            return report.decision;
        }
        crate::merge::decide_keeping(report, |f| !f.is_accepted()).0
    }

    /// The flags that make up this gate, as a user would type them.
    pub fn flags(&self) -> String {
        let mut s = format!("--fail-on {}", self.fail_on.as_str());
        if let Some(sev) = self.fail_on_severity {
            s.push_str(&format!(" --fail-on-severity {}", sev.severity().as_str()));
        }
        s
    }

    pub fn result(&self, report: &Report) -> GateResult {
        if report.findings.iter().any(Finding::is_expired) {
            return GateResult::Failed;
        }
        match self.decision(report) {
            Decision::Blocked => GateResult::Failed,
            Decision::Unknown => GateResult::Unknown,
            Decision::Review if self.fail_on == FailOn::Review => GateResult::Failed,
            Decision::Review | Decision::Pass => {
                if report.findings.iter().any(|f| self.fails_on(f)) {
                    GateResult::Failed
                } else {
                    GateResult::Passed
                }
            }
        }
    }

    /// What this gate concluded on `report`, for the report itself (its `gate` field).
    pub fn outcome(&self, report: &Report) -> crate::report::GateOutcome {
        crate::report::GateOutcome {
            result: self.result(report),
            exit_code: self.exit_code(report),
            flags: self.flags(),
            line: self.line(report),
        }
    }

    /// The exit code for a finished report.
    pub fn exit_code(&self, report: &Report) -> u8 {
        match self.result(report) {
            GateResult::Passed => OK,
            GateResult::Failed => GATE_FAILED,
            GateResult::Unknown => unknown_code(report),
        }
    }

    /// The flag that failed the gate, as typed: the decision rule when the decision fails
    /// it, else the severity rule.
    fn failed_by(&self, report: &Report) -> String {
        if let Some(f) = report.findings.iter().find(|f| f.is_expired()) {
            let until = f
                .accepted
                .as_ref()
                .map(|a| a.expires.as_str())
                .unwrap_or("");
            return format!(
                "baseline: the acceptance of {} expired on {until}; fix it, or renew the entry with a new date",
                f.id
            );
        }
        let by_decision = match self.decision(report) {
            Decision::Blocked => true,
            Decision::Review => self.fail_on == FailOn::Review,
            _ => false,
        };
        match self.fail_on_severity {
            Some(sev) if !by_decision => {
                format!("--fail-on-severity {}", sev.severity().as_str())
            }
            _ => format!("--fail-on {}", self.fail_on.as_str()),
        }
    }

    /// One line for people: `gate: passed`, `gate: failed (--fail-on review)`, or
    /// `gate: unknown (exit 4: not everything due was observed: a region, or a check)`.
    pub fn line(&self, report: &Report) -> String {
        let accepted = report.findings.iter().filter(|f| f.is_accepted()).count();
        match self.result(report) {
            GateResult::Passed if accepted > 0 => {
                format!("gate: passed ({accepted} finding(s) accepted by the baseline)")
            }
            GateResult::Passed => "gate: passed".to_string(),
            GateResult::Failed => format!("gate: failed ({})", self.failed_by(report)),
            GateResult::Unknown => {
                let code = unknown_code(report);
                let why = if code == UNKNOWN_AUTH {
                    if report.finding(FindingId::AuthCredentialRefused).is_some() {
                        "the credential given was refused"
                    } else {
                        "authorization required and no credential given"
                    }
                } else if report.decision != Decision::Unknown {
                    // The merge decided, and the baseline accepted what it decided on: what
                    // is left was not observed.
                    let accepted: Vec<&str> = report
                        .findings
                        .iter()
                        .filter(|f| f.is_accepted())
                        .map(|f| f.id.as_str())
                        .collect();
                    let regions = crate::merge::not_observing(report).join(", ");
                    // Every region observed the target, but checks went without evidence
                    // (a listing nobody read): name them, from the findings that say so.
                    let gaps: Vec<&str> = report
                        .findings
                        .iter()
                        .filter(|f| crate::merge::UNKNOWN_FINDINGS.contains(&f.id))
                        .flat_map(|f| f.evidence.iter().map(String::as_str))
                        .collect();
                    if regions.is_empty() && !gaps.is_empty() {
                        return format!(
                            "gate: unknown (exit {code}: with {} accepted by the baseline, what is left was not observed: {}; a baseline accepts a fault, it does not stand in for an observation)",
                            accepted.join(", "),
                            gaps.join("; ")
                        );
                    }
                    return format!(
                        "gate: unknown (exit {code}: with {} accepted by the baseline, nothing else was observed{}; a baseline accepts a fault, it does not stand in for an observation)",
                        accepted.join(", "),
                        if regions.is_empty() {
                            String::new()
                        } else {
                            format!(" from {regions}")
                        }
                    );
                } else {
                    "not everything due was observed: a region, or a check"
                };
                format!("gate: unknown (exit {code}: {why})")
            }
        }
    }
}

/// 3 when the only reasons are at the authorization boundary (no credential, or a refused
/// one); 4 for every other reason (a region missing, a region or check without evidence).
fn unknown_code(report: &Report) -> u8 {
    let unknown: Vec<FindingId> = report
        .findings
        .iter()
        .map(|f| f.id)
        .filter(|id| crate::merge::UNKNOWN_FINDINGS.contains(id))
        .collect();
    if !unknown.is_empty() && unknown.iter().all(|id| UNKNOWN_AUTH_CAUSES.contains(id)) {
        UNKNOWN_AUTH
    } else {
        UNKNOWN_REGION
    }
}

/// The worst of several endpoints' exit codes: an error (1), then a failed gate (2), then
/// a region that did not report (4), then a missing credential (3), then a pass (0).
pub fn worst(codes: impl IntoIterator<Item = u8>) -> u8 {
    let rank = |c: u8| match c {
        USAGE => 4,
        GATE_FAILED => 3,
        UNKNOWN_REGION => 2,
        UNKNOWN_AUTH => 1,
        _ => 0,
    };
    codes.into_iter().max_by_key(|c| rank(*c)).unwrap_or(OK)
}

/// The exit code for a finished report under `--fail-on` alone.
pub fn for_report(report: &Report, fail_on: FailOn) -> u8 {
    Gate::new(fail_on, None).exit_code(report)
}

#[cfg(test)]
#[path = "exit_tests.rs"]
mod tests;
