//! Each fixture fault, switched on alone, yields its finding with its severity and nothing
//! else above info; the clean fixture passes.

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Era, Outcome, Severity};
use vantage_coordinator::fixture::{Fault, Fixture};
use vantage_coordinator::report::Decision;

use crate::support::{above_info, check, ids, outcome};

use Severity::{High, Low, Medium};

#[tokio::test]
async fn the_clean_fixture_passes_with_nothing_above_info() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let report = check(&fixture.url()).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.decision, Decision::Pass);
    assert_eq!(report.era, Era::Dual);
    // Every check either passed or was skipped for a stated reason; nothing errored.
    for c in &report.regions[0].checks {
        assert!(matches!(c.outcome, Outcome::Pass | Outcome::Skip), "{c:?}");
        if c.outcome == Outcome::Skip {
            assert!(!c.observed.is_empty(), "{} skipped without a reason", c.id);
        }
    }
    // The checks that prove the protocol actually ran (not skipped).
    for id in [
        CheckId::EraDetect,
        CheckId::DiscoverShape,
        CheckId::HeadersMissingMethod,
        CheckId::VersionUnsupported,
        CheckId::MethodUnknown,
        CheckId::SecurityOrigin,
    ] {
        assert_eq!(outcome(&report, id).outcome, Outcome::Pass, "{id}");
    }
}

#[tokio::test]
async fn each_fault_is_caught_alone() {
    type Row = (Fault, &'static [(&'static str, Severity)], Decision);
    let table: &[Row] = &[
        (
            Fault::GetHtml,
            &[("transport.get", Medium)],
            Decision::Review,
        ),
        (
            Fault::Delete200,
            &[("transport.delete", Medium)],
            Decision::Review,
        ),
        (
            Fault::UnknownMethodHtml404,
            &[("method.unknown", High)],
            Decision::Blocked,
        ),
        (
            Fault::NoMethodValidation,
            &[
                ("headers.method-mismatch", Medium),
                ("headers.missing-method", Medium),
            ],
            Decision::Review,
        ),
        (
            Fault::NoNameValidation,
            &[("headers.name-mismatch", Medium)],
            Decision::Review,
        ),
        (
            Fault::AcceptAnyVersion,
            &[("version.unsupported", High)],
            Decision::Blocked,
        ),
        (
            Fault::OriginAccepted,
            &[("security.origin-not-validated", Medium)],
            Decision::Review,
        ),
        (
            Fault::Notification200Body,
            &[("transport.notification", Medium)],
            Decision::Review,
        ),
        (
            Fault::RedirectCrossHost,
            &[("redirect.cross-host", High)],
            Decision::Blocked,
        ),
        (
            Fault::RedirectSameHost,
            &[("probe.incomplete", Medium), ("redirect.none", Medium)],
            // Redirects are never followed: no MCP answer, so the region did not observe
            // the target, and nothing passes or merely needs review (checks.md 4.1); a
            // finding says so (probe.incomplete, with redirect.none as what it saw).
            Decision::Unknown,
        ),
        (Fault::SseNoAccelBuffering, &[], Decision::Pass),
        (
            Fault::Bare400,
            &[("jsonrpc.error-body", Low)],
            Decision::Pass,
        ),
        (
            Fault::LegacyOnly,
            &[("era.legacy-only", Medium)],
            Decision::Review,
        ),
        (Fault::ModernOnly, &[], Decision::Pass),
        (
            Fault::HttpSseOnly,
            &[("era.legacy-only", Medium)],
            Decision::Review,
        ),
    ];
    let mut failures = Vec::new();
    for (fault, expected, decision) in table {
        let fixture = Fixture::start(&[*fault]).await.unwrap();
        let report = check(&fixture.url()).await;
        let got = above_info(&report);
        if got != ids(expected) || report.decision != *decision {
            failures.push(format!(
                "{}: expected {:?} ({:?}), got {:?} ({:?})\n{:#?}",
                fault.name(),
                expected,
                decision,
                got,
                report.decision,
                report.findings
            ));
        }
        // Every finding above info names the local region and carries evidence.
        for f in report
            .findings
            .iter()
            .filter(|f| f.severity > Severity::Info)
        {
            assert_eq!(f.regions, vec!["local".to_string()], "{}", f.id);
            assert!(!f.evidence.is_empty(), "{} has no evidence", f.id);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn sse_without_accel_buffering_is_an_info_observation() {
    let fixture = Fixture::start(&[Fault::SseNoAccelBuffering]).await.unwrap();
    let report = check(&fixture.url()).await;
    let f = report
        .finding(FindingId::TransportSseBuffering)
        .expect("the observation is reported");
    assert_eq!(f.severity, Severity::Info);
    let clean = Fixture::start(&[]).await.unwrap();
    assert!(check(&clean.url())
        .await
        .finding(FindingId::TransportSseBuffering)
        .is_none());
}

#[tokio::test]
async fn eras_are_told_apart() {
    for (faults, era) in [
        (vec![], Era::Dual),
        (vec![Fault::ModernOnly], Era::Modern),
        (vec![Fault::LegacyOnly], Era::Legacy),
        (vec![Fault::HttpSseOnly], Era::HttpSse),
    ] {
        let fixture = Fixture::start(&faults).await.unwrap();
        let report = check(&fixture.url()).await;
        assert_eq!(report.era, era, "{faults:?}");
    }
    // A legacy server gets the 2026 checks skipped, with the reason.
    let fixture = Fixture::start(&[Fault::LegacyOnly]).await.unwrap();
    let report = check(&fixture.url()).await;
    let c = outcome(&report, CheckId::HeadersMissingMethod);
    assert_eq!(c.outcome, Outcome::Skip);
    assert!(c.observed.contains("2026-07-28"), "{}", c.observed);
    // ... while the Origin rule, which 2025-11-25 shares, still runs.
    assert_eq!(
        outcome(&report, CheckId::SecurityOrigin).outcome,
        Outcome::Pass
    );
}

#[tokio::test]
async fn a_redirect_hides_what_comes_after_it() {
    let fixture = Fixture::start(&[Fault::RedirectCrossHost]).await.unwrap();
    let report = check(&fixture.url()).await;
    let c = outcome(&report, CheckId::RedirectNone);
    assert!(
        c.observed.contains("www.vantage-fixture.invalid"),
        "{}",
        c.observed
    );
    let later = outcome(&report, CheckId::TransportGet);
    assert_eq!(later.outcome, Outcome::Skip);
    assert!(later.observed.contains("redirect"), "{}", later.observed);
}

#[tokio::test]
async fn nothing_listening_is_a_refused_connection() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let report = check(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_eq!(above_info(&report), ids(&[("net.connect", High)]));
    assert_eq!(
        outcome(&report, CheckId::NetConnect).cause,
        Some(vantage_agent::model::Cause::Refused)
    );
    assert_eq!(outcome(&report, CheckId::EraDetect).outcome, Outcome::Skip);
}
