//! JUnit XML: one test suite per region, one test case per check; failed checks are
//! failures, skipped checks are skipped, and each finding is a case of a `findings` suite.

use quick_junit::{NonSuccessKind, Report as JReport, TestCase, TestCaseStatus, TestSuite};
use vantage_agent::model::{Outcome, Severity};

use crate::report::Report;

pub fn junit(report: &Report) -> String {
    let mut j = JReport::new(format!("vantage {}", report.target));
    for r in &report.regions {
        let mut suite = TestSuite::new(format!("vantage.{}", r.region));
        for c in &r.checks {
            let status = match c.outcome {
                Outcome::Pass | Outcome::Warn => TestCaseStatus::success(),
                Outcome::Skip => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(c.observed.clone());
                    s
                }
                Outcome::Fail | Outcome::Error => {
                    let kind = if c.outcome == Outcome::Fail {
                        NonSuccessKind::Failure
                    } else {
                        NonSuccessKind::Error
                    };
                    let mut s = TestCaseStatus::non_success(kind);
                    s.set_message(c.observed.clone());
                    s.set_description(format!("expected: {}", c.expected));
                    s
                }
            };
            let mut case = TestCase::new(c.id.as_str(), status);
            case.set_classname(format!("vantage.{}", r.region));
            case.set_time(std::time::Duration::from_millis(c.duration_ms));
            suite.add_test_case(case);
        }
        j.add_test_suite(suite);
    }
    let mut findings = TestSuite::new("vantage.findings");
    for f in &report.findings {
        let status = if f.severity >= Severity::Medium {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!(
                "{} ({}): {}",
                f.title,
                f.severity.as_str(),
                f.evidence.join("; ")
            ));
            s.set_description(format!("fix: {}", f.remediation));
            s
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(f.id.as_str(), status);
        case.set_classname("vantage.findings");
        findings.add_test_case(case);
    }
    j.add_test_suite(findings);
    j.to_string().unwrap_or_default()
}
