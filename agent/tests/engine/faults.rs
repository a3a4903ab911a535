//! Each fixture fault, switched on alone, fails or warns exactly its own checks, with their
//! severity and cause; the clean fixture passes every check it runs; eras are told apart; a
//! redirect hides what comes after it; nothing listening is a refused connection.

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Era, Outcome, Severity};
use vantage_fixture::{Fault, Fixture};

use crate::run::{check, problems, run, unknowns, Problem};

use Outcome::{Fail, Warn};
use Severity::{High, Info, Low, Medium};

#[tokio::test]
async fn the_clean_fixture_passes_every_check_it_runs() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let region = run(&fixture.url()).await;
    assert_eq!(problems(&region), vec![], "{:#?}", region.checks);
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

/// The engine's side of `coordinator/tests/e2e/fixture_faults.rs`'s table: which checks each
/// fault breaks, how (fail or warn), how badly, and why (the cause), with nothing else
/// failing above info and nothing left without evidence.
#[tokio::test]
async fn each_fault_breaks_its_own_checks_alone() {
    type Row = (Fault, &'static [Problem]);
    let table: &[Row] = &[
        (
            Fault::GetHtml,
            &[(CheckId::TransportGet, Fail, Some(Medium), None)],
        ),
        (
            Fault::Delete200,
            &[(CheckId::TransportDelete, Fail, Some(Medium), None)],
        ),
        (
            Fault::UnknownMethodHtml404,
            &[(CheckId::MethodUnknown, Fail, Some(High), None)],
        ),
        (
            Fault::NoMethodValidation,
            &[
                (CheckId::HeadersMissingMethod, Fail, Some(Medium), None),
                (CheckId::HeadersMethodMismatch, Fail, Some(Medium), None),
            ],
        ),
        (
            Fault::NoNameValidation,
            &[(CheckId::HeadersNameMismatch, Fail, Some(Medium), None)],
        ),
        (
            Fault::AcceptAnyVersion,
            &[(CheckId::VersionUnsupported, Fail, Some(High), None)],
        ),
        (
            Fault::OriginAccepted,
            &[(CheckId::SecurityOrigin, Fail, Some(Medium), None)],
        ),
        (
            Fault::Notification200Body,
            &[(CheckId::TransportNotification, Fail, Some(Medium), None)],
        ),
        (
            Fault::RedirectCrossHost,
            &[(
                CheckId::RedirectNone,
                Fail,
                Some(High),
                Some(Cause::CrossHost),
            )],
        ),
        (
            Fault::RedirectSameHost,
            &[(
                CheckId::RedirectNone,
                Fail,
                Some(Medium),
                Some(Cause::SameHost),
            )],
        ),
        (Fault::SseNoAccelBuffering, &[]),
        (
            Fault::Bare400,
            &[(CheckId::JsonrpcErrorBody, Warn, Some(Low), None)],
        ),
        (
            Fault::LegacyOnly,
            &[(CheckId::EraDetect, Fail, Some(Medium), None)],
        ),
        (Fault::ModernOnly, &[]),
        (
            Fault::HttpSseOnly,
            &[(CheckId::EraDetect, Fail, Some(Medium), None)],
        ),
        // The listing faults (spec sections 3.3 to 3.5) and the tool-surface lint.
        (
            Fault::BrokenCursor,
            &[(CheckId::PaginationCursor, Fail, Some(Medium), None)],
        ),
        (
            Fault::SchemaInvalid,
            &[(CheckId::ToolsSchemaValid, Fail, Some(Medium), None)],
        ),
        (
            Fault::UnstableOrder,
            &[(CheckId::ToolsDeterministicOrder, Warn, Some(Low), None)],
        ),
        (
            Fault::PerConnectionVariance,
            &[(
                CheckId::ToolsNoPerConnectionVariance,
                Fail,
                Some(Medium),
                None,
            )],
        ),
        (
            Fault::InvalidXMcpHeader,
            &[(CheckId::ToolsXMcpHeaderValid, Fail, Some(Medium), None)],
        ),
        (
            Fault::PromptsAdvertised404,
            &[(CheckId::CapsDiscoverMatchesHandlers, Fail, Some(High), None)],
        ),
        (
            Fault::ToolWithoutSchema,
            &[(CheckId::ToolsListShape, Fail, Some(High), None)],
        ),
        (
            Fault::BadToolName,
            &[(CheckId::ToolsNameFormat, Warn, Some(Low), None)],
        ),
        (
            Fault::InvalidCursorServed,
            &[(CheckId::PaginationInvalidCursor, Warn, Some(Low), None)],
        ),
        (
            Fault::NoCacheHints,
            &[(CheckId::CacheHints, Fail, Some(Medium), None)],
        ),
        (
            Fault::ListenJson,
            &[(CheckId::ListenSse, Fail, Some(Medium), None)],
        ),
        (
            Fault::ListenNoAck,
            &[(CheckId::ListenAckFirst, Fail, Some(Medium), None)],
        ),
        (
            Fault::UnconstrainedInput,
            &[(CheckId::ToolsInputConstrained, Warn, Some(Low), None)],
        ),
        (
            Fault::HugeDescription,
            &[(CheckId::ToolsSurfaceSize, Warn, Some(Low), None)],
        ),
    ];
    let mut failures = Vec::new();
    for (fault, expected) in table {
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
        if !unknown.is_empty() {
            failures.push(format!("{}: no evidence for {unknown:?}", fault.name()));
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
    for (faults, era) in [
        (vec![], Era::Dual),
        (vec![Fault::ModernOnly], Era::Modern),
        (vec![Fault::LegacyOnly], Era::Legacy),
        (vec![Fault::HttpSseOnly], Era::HttpSse),
    ] {
        let fixture = Fixture::start(&faults).await.unwrap();
        assert_eq!(run(&fixture.url()).await.era, era, "{faults:?}");
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
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let region = run(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_eq!(
        problems(&region),
        vec![(CheckId::NetConnect, Fail, Some(High), Some(Cause::Refused))]
    );
    assert_eq!(check(&region, CheckId::EraDetect).outcome, Outcome::Skip);
}
