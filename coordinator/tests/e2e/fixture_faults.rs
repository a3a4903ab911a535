//! Each fixture fault, switched on alone, yields its finding with its severity and nothing
//! else above info, and its decision; the clean fixture passes. What the engine observed
//! (each check's outcome, severity, cause and observation) is the agent's own test
//! (`agent/tests/engine/faults.rs`, `listing.rs`); here is what the merge makes of it.

use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Era, Severity};
use vantage_coordinator::report::Decision;
use vantage_fixture::{Fault, Fixture};

use crate::support::shared_faults::{ERAS, FAULTS};
use crate::support::{above_info, check, closed_port, ids};

use Severity::High;

#[tokio::test]
async fn the_clean_fixture_passes_with_nothing_above_info() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let report = check(&fixture.url()).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.decision, Decision::Pass);
    assert_eq!(report.era, Era::Dual);
}

/// The report's side of the fault table (`agent/tests/shared/faults.rs`, shared with the
/// engine's `agent/tests/engine/faults.rs`): each fault's findings above info and decision.
#[tokio::test]
async fn each_fault_is_caught_alone() {
    let mut failures = Vec::new();
    for row in FAULTS {
        let (fault, expected, decision) = (&row.fault, row.findings, row.decision);
        let fixture = Fixture::start(&[*fault]).await.unwrap();
        let report = check(&fixture.url()).await;
        let got = above_info(&report);
        if got != ids(expected) || report.decision.as_str() != decision {
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
    for (faults, era) in ERAS {
        let fixture = Fixture::start(faults).await.unwrap();
        let report = check(&fixture.url()).await;
        assert_eq!(report.era, *era, "{faults:?}");
    }
}

#[tokio::test]
async fn nothing_listening_is_a_refused_connection() {
    let port = closed_port();
    let report = check(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_eq!(above_info(&report), ids(&[("net.connect", High)]));
}

/// The listing benchmark's server (`benches/listing.rs`: 200 tools, 50 a page) read whole
/// (`agent/tests/engine/listing.rs`): every rule has its evidence, so the decision is `pass`
/// (the bench asserts it on every run; this keeps it true without running the bench).
#[tokio::test]
async fn the_listing_benchmarks_200_tool_server_is_read_whole_and_passes() {
    let surface = vantage_fixture::SurfaceConfig {
        extra_tools: 195,
        page_size: 50,
    };
    let fixture = Fixture::start_with(&[], surface).await.unwrap();
    let report = check(&fixture.url()).await;
    assert_eq!(report.decision, Decision::Pass, "{}", report.reason);
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.id == FindingId::ProbeIncomplete),
        "{:#?}",
        report.findings
    );
}
