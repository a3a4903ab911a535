//! Each fixture fault, switched on alone, fails or warns exactly its own checks, with their
//! severity and cause; the clean fixture passes every check it runs; eras are told apart; a
//! redirect hides what comes after it; nothing listening is a refused connection.

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Era, Outcome, Severity};
use vantage_fixture::{Fault, Fixture};

use crate::run::{assert_problems, check, closed_port, problems, run, unknowns};
use crate::shared_faults::{Unobserved, ERAS, FAULTS, UNOBSERVED};

use Outcome::{Fail, Warn};
use Severity::{High, Info};

#[tokio::test]
async fn the_clean_fixture_passes_every_check_it_runs() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let region = run(&fixture.url()).await;
    assert_problems(&region, &[]);
    assert_eq!(region.era, Era::Dual);
    // Every check either passed or was skipped for a stated reason; nothing errored.
    for c in &region.checks {
        assert!(matches!(c.outcome, Outcome::Pass | Outcome::Skip), "{c:?}");
        if c.outcome == Outcome::Skip {
            assert!(!c.observed.is_empty(), "{} skipped without a reason", c.id);
        }
    }
    // The checks that prove the protocol actually ran (not skipped), the listing's too.
    for id in [
        CheckId::EraDetect,
        CheckId::DiscoverShape,
        CheckId::HeadersMissingMethod,
        CheckId::VersionUnsupported,
        CheckId::MethodUnknown,
        CheckId::SecurityOrigin,
        CheckId::CapsDiscoverMatchesHandlers,
        CheckId::ToolsListShape,
        CheckId::ToolsDeterministicOrder,
        CheckId::ToolsNoPerConnectionVariance,
        CheckId::PaginationCursor,
        CheckId::PaginationInvalidCursor,
        CheckId::CacheHints,
        CheckId::ToolsXMcpHeaderValid,
        CheckId::ToolsSchemaValid,
        CheckId::ListenSse,
        CheckId::ListenAckFirst,
    ] {
        assert_eq!(check(&region, id).outcome, Outcome::Pass, "{id}");
    }
}

/// The engine's side of the fault table (`tests/shared/faults.rs`, shared with
/// `coordinator/tests/e2e/fixture_faults.rs`): which checks each fault breaks, how (fail or
/// warn), how badly, and why (the cause), with nothing else failing above info and nothing
/// left without evidence.
#[tokio::test]
async fn each_fault_breaks_its_own_checks_alone() {
    let mut failures = Vec::new();
    for row in FAULTS {
        let (fault, expected) = (&row.fault, row.problems);
        let fixture = Fixture::start(&[*fault]).await.unwrap();
        let region = run(&fixture.url()).await;
        let got = problems(&region);
        if got != *expected {
            failures.push(format!(
                "{}: expected {expected:?}, got {got:?}",
                fault.name()
            ));
        }
        // Every problem says what was seen; nothing is left without evidence.
        for c in region.checks.iter().filter(|c| c.outcome.is_problem()) {
            assert!(
                !c.observed.is_empty(),
                "{}: {} observed nothing",
                fault.name(),
                c.id
            );
        }
        let unknown = unknowns(&region);
        let meant: &[Unobserved] = UNOBSERVED
            .iter()
            .find(|(f, _)| f == fault)
            .map_or(&[], |(_, u)| u);
        if unknown != meant {
            failures.push(format!(
                "{}: no evidence for {unknown:?}, expected {meant:?}",
                fault.name()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn sse_without_accel_buffering_is_an_info_warning() {
    let fixture = Fixture::start(&[Fault::SseNoAccelBuffering]).await.unwrap();
    let c = check(&run(&fixture.url()).await, CheckId::TransportSseBuffering);
    assert_eq!(
        (c.outcome, c.severity),
        (Warn, Some(Info)),
        "{}",
        c.observed
    );
    let clean = Fixture::start(&[]).await.unwrap();
    let c = check(&run(&clean.url()).await, CheckId::TransportSseBuffering);
    assert_eq!(c.outcome, Outcome::Pass, "{}", c.observed);
}

#[tokio::test]
async fn eras_are_told_apart() {
    for (faults, era) in ERAS {
        let fixture = Fixture::start(faults).await.unwrap();
        assert_eq!(run(&fixture.url()).await.era, *era, "{faults:?}");
    }
    // A legacy server gets the 2026 checks skipped, with the reason.
    let fixture = Fixture::start(&[Fault::LegacyOnly]).await.unwrap();
    let region = run(&fixture.url()).await;
    let c = check(&region, CheckId::HeadersMissingMethod);
    assert_eq!(c.outcome, Outcome::Skip);
    assert!(c.observed.contains("2026-07-28"), "{}", c.observed);
    // ... while the Origin rule, which 2025-11-25 shares, still runs.
    assert_eq!(
        check(&region, CheckId::SecurityOrigin).outcome,
        Outcome::Pass
    );
}

#[tokio::test]
async fn a_redirect_hides_what_comes_after_it() {
    let fixture = Fixture::start(&[Fault::RedirectCrossHost]).await.unwrap();
    let region = run(&fixture.url()).await;
    let c = check(&region, CheckId::RedirectNone);
    assert!(
        c.observed.contains("www.vantage-fixture.invalid"),
        "{}",
        c.observed
    );
    let later = check(&region, CheckId::TransportGet);
    assert_eq!(later.outcome, Outcome::Skip);
    assert!(later.observed.contains("redirect"), "{}", later.observed);
}

#[tokio::test]
async fn nothing_listening_is_a_refused_connection() {
    let port = closed_port();
    let region = run(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_problems(
        &region,
        &[(CheckId::NetConnect, Fail, Some(High), Some(Cause::Refused))],
    );
    assert_eq!(check(&region, CheckId::EraDetect).outcome, Outcome::Skip);
}
