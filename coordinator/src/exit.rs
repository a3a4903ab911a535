//! Every exit-code decision of `vantage check`, in one place (`checks.md` section 6).

use vantage_agent::catalog::FindingId;

use crate::report::{Decision, Report};

/// The gate passed.
pub const OK: u8 = 0;
/// A usage error or an internal error; the message says which.
pub const USAGE: u8 = 1;
/// The gate failed.
pub const GATE_FAILED: u8 = 2;
/// `unknown`: authorization required and no credential given.
pub const UNKNOWN_AUTH: u8 = 3;
/// `unknown`: a region did not report.
pub const UNKNOWN_REGION: u8 = 4;

/// What fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FailOn {
    /// Only `blocked` fails (the default).
    #[default]
    Blocked,
    /// `review` fails too.
    Review,
}

/// The exit code for a finished report.
pub fn for_report(report: &Report, fail_on: FailOn) -> u8 {
    match report.decision {
        Decision::Pass => OK,
        Decision::Review if fail_on == FailOn::Review => GATE_FAILED,
        Decision::Review => OK,
        Decision::Blocked => GATE_FAILED,
        Decision::Unknown if report.finding(FindingId::FleetRegionMissing).is_some() => {
            UNKNOWN_REGION
        }
        Decision::Unknown if report.finding(FindingId::AuthCredentialRequired).is_some() => {
            UNKNOWN_AUTH
        }
        Decision::Unknown => UNKNOWN_REGION,
    }
}
