//! Every fixture fault under every gate setting: the JUnit verdict agrees with the exit code.
//! Exit 0 has no failure and no error; exit 2 has a failure; exit 3 and 4 (`unknown`, nothing
//! was decided) have an error case that says why, naming the region that did not observe.

use clap::ValueEnum;
use vantage_agent::catalog::FindingId;
use vantage_coordinator::exit::{FailOn, FailOnSeverity, Gate};
use vantage_coordinator::render::junit;
use vantage_coordinator::report::Decision;
use vantage_fixture::{Fault, Fixture};

use crate::junit_consumer::{cases_with, consume};
use crate::support::check;

/// The value of `name="…"` on the root element.
fn total(xml: &str, name: &str) -> usize {
    let root = xml.split("<testsuites ").nth(1).unwrap_or_default();
    let root = root.split('>').next().unwrap_or_default();
    let key = format!(" {name}=\"");
    root.split(&key)
        .nth(1)
        .and_then(|v| v.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} on <testsuites>: {xml}"))
}

fn gates() -> Vec<Gate> {
    let mut v = Vec::new();
    for fail_on in [FailOn::Blocked, FailOn::Review] {
        v.push(Gate::new(fail_on, None));
        for sev in FailOnSeverity::value_variants() {
            v.push(Gate::new(fail_on, Some(*sev)));
        }
    }
    v
}

#[tokio::test]
async fn junit_agrees_with_the_exit_code_for_every_fault_and_gate() {
    let mut disagreements = Vec::new();
    let mut codes_seen = std::collections::BTreeSet::new();
    for fault in Fault::value_variants() {
        let fixture = Fixture::start(&[*fault]).await.unwrap();
        let report = check(&fixture.url()).await;
        // An `unknown` decision always has a finding that says why (checks.md 4.1).
        if report.decision == Decision::Unknown {
            assert!(
                report
                    .findings
                    .iter()
                    .any(|f| vantage_coordinator::merge::UNKNOWN_FINDINGS.contains(&f.id)),
                "{}: unknown with no finding naming why: {:#?}",
                fault.name(),
                report.findings
            );
        }
        for (i, gate) in gates().iter().enumerate() {
            let code = gate.exit_code(&report);
            codes_seen.insert(code);
            let xml = junit(&report, gate);
            let (failures, errors) = (total(&xml, "failures"), total(&xml, "errors"));
            let agrees = match code {
                0 => failures == 0 && errors == 0,
                2 => failures > 0,
                3 | 4 => errors > 0,
                _ => false,
            };
            if !agrees {
                disagreements.push(format!(
                    "{} {}: exit {code}, failures={failures} errors={errors} ({:?})",
                    fault.name(),
                    gate.flags(),
                    report.decision
                ));
            }
            // The consumers read one rendering per fault the same way.
            if i == 0 {
                let seen = consume(&xml);
                assert_eq!(seen["failures"], failures, "{}", fault.name());
                assert_eq!(seen["errors"], errors, "{}", fault.name());
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    // The sweep covers every kind of verdict.
    for code in [0, 2, 3, 4] {
        assert!(codes_seen.contains(&code), "no fault gave exit {code}");
    }
}

#[tokio::test]
async fn a_same_origin_redirect_is_unknown_with_an_error_case_and_a_finding_that_says_why() {
    let fixture = Fixture::start(&[Fault::RedirectSameHost]).await.unwrap();
    let report = check(&fixture.url()).await;
    assert_eq!(report.decision, Decision::Unknown);
    let f = report
        .finding(FindingId::ProbeIncomplete)
        .expect("a finding names why nothing was decided");
    assert_eq!(f.regions, vec!["local".to_string()]);
    assert_eq!(f.severity, vantage_agent::model::Severity::Medium);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("local: did not observe the target")
                && e.contains("what it saw instead: redirect.none")),
        "{:?}",
        f.evidence
    );
    assert!(f.remediation.contains("redirect.none"), "{}", f.remediation);
    let gate = Gate::default();
    assert_eq!(gate.exit_code(&report), 4);
    let seen = consume(&junit(&report, &gate));
    assert_eq!(
        cases_with(&seen, "error"),
        vec![("vantage.local".to_string(), "probe.incomplete".to_string())]
    );
    assert_eq!(cases_with(&seen, "failure"), vec![]);
}
