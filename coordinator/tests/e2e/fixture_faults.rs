//! Each fixture fault, switched on alone, yields its finding with its severity and nothing
//! else above info; the clean fixture passes.

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Era, Outcome, Severity};
use vantage_coordinator::report::Decision;
use vantage_fixture::{Fault, Fixture};

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
        // The listing faults (spec sections 3.3 to 3.5) and the tool-surface lint.
        (
            Fault::BrokenCursor,
            &[("pagination.cursor", Medium)],
            Decision::Review,
        ),
        (
            Fault::SchemaInvalid,
            &[("tools.schema-valid", Medium)],
            Decision::Review,
        ),
        (
            Fault::UnstableOrder,
            &[("tools.deterministic-order", Low)],
            Decision::Pass,
        ),
        (
            Fault::PerConnectionVariance,
            &[("tools.no-per-connection-variance", Medium)],
            Decision::Review,
        ),
        (
            Fault::InvalidXMcpHeader,
            &[("tools.x-mcp-header-valid", Medium)],
            Decision::Review,
        ),
        (
            Fault::PromptsAdvertised404,
            &[("caps.discover-matches-handlers", High)],
            Decision::Blocked,
        ),
        (
            Fault::ToolWithoutSchema,
            &[("tools.list-shape", High)],
            Decision::Blocked,
        ),
        (
            Fault::BadToolName,
            &[("tools.name-format", Low)],
            Decision::Pass,
        ),
        (
            Fault::InvalidCursorServed,
            &[("pagination.invalid-cursor", Low)],
            Decision::Pass,
        ),
        (
            Fault::NoCacheHints,
            &[("cache.hints", Medium)],
            Decision::Review,
        ),
        (
            Fault::ListenJson,
            &[("listen.sse", Medium)],
            Decision::Review,
        ),
        (
            Fault::ListenNoAck,
            &[("listen.ack-first", Medium)],
            Decision::Review,
        ),
        (
            Fault::UnconstrainedInput,
            &[("tools.input-constrained", Low)],
            Decision::Pass,
        ),
        (
            Fault::HugeDescription,
            &[("tools.surface-size", Low)],
            Decision::Pass,
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

/// Each listing fault's evidence names what is wrong, precisely enough to fix it.
#[tokio::test]
async fn listing_faults_say_what_they_saw() {
    let table: &[(Fault, CheckId, &str)] = &[
        (
            Fault::BrokenCursor,
            CheckId::PaginationCursor,
            "refused the cursor it issued (page 2)",
        ),
        (
            Fault::SchemaInvalid,
            CheckId::ToolsSchemaValid,
            "add: inputSchema does not compile",
        ),
        (
            Fault::UnstableOrder,
            CheckId::ToolsDeterministicOrder,
            "changed its order",
        ),
        (
            Fault::PerConnectionVariance,
            CheckId::ToolsNoPerConnectionVariance,
            "differ over a second connection: added session_",
        ),
        (
            Fault::InvalidXMcpHeader,
            CheckId::ToolsXMcpHeaderValid,
            "\"Region Name\" at .region is not an RFC 9110 token",
        ),
        (
            Fault::PromptsAdvertised404,
            CheckId::CapsDiscoverMatchesHandlers,
            "prompts is advertised, but prompts/list answered 404",
        ),
        (
            Fault::ToolWithoutSchema,
            CheckId::ToolsListShape,
            "broken has no inputSchema",
        ),
        (Fault::BadToolName, CheckId::ToolsNameFormat, "time now"),
        (Fault::NoCacheHints, CheckId::CacheHints, "ttlMs missing"),
        (
            Fault::ListenNoAck,
            CheckId::ListenAckFirst,
            "not notifications/subscriptions/acknowledged",
        ),
        (
            Fault::UnconstrainedInput,
            CheckId::ToolsInputConstrained,
            "run_command",
        ),
        (
            Fault::HugeDescription,
            CheckId::ToolsSurfaceSize,
            "echo: a 4096-byte description",
        ),
    ];
    for (fault, id, needle) in table {
        let fixture = Fixture::start(&[*fault]).await.unwrap();
        let report = check(&fixture.url()).await;
        let c = outcome(&report, *id);
        assert!(c.outcome.is_problem(), "{}: {id} {:?}", fault.name(), c);
        assert!(
            c.observed.contains(needle),
            "{}: {}",
            fault.name(),
            c.observed
        );
    }
}

/// A 2025-11-25 server is listed in a session: initialize, the lists with Mcp-Session-Id,
/// tools again in a second session; the 2026-only rules are skipped with the reason.
#[tokio::test]
async fn a_legacy_server_is_listed_in_a_session() {
    let fixture = Fixture::start(&[Fault::LegacyOnly]).await.unwrap();
    let report = check(&fixture.url()).await;
    let surface = report.regions[0].surface.as_ref().expect("a surface");
    assert_eq!(surface.era, Era::Legacy);
    let tools = surface
        .list(vantage_agent::surface::ListKind::Tools)
        .unwrap();
    assert!(
        tools.complete && tools.count == 5 && tools.pages == 3,
        "{tools:?}"
    );
    assert_eq!(
        outcome(&report, CheckId::ToolsNoPerConnectionVariance).observed,
        "the same 5 tools over a second session"
    );
    for id in [
        CheckId::CacheHints,
        CheckId::ListenSse,
        CheckId::ToolsXMcpHeaderValid,
    ] {
        let c = outcome(&report, id);
        assert_eq!(c.outcome, Outcome::Skip, "{id}");
        assert!(c.observed.contains("2025-11-25"), "{}", c.observed);
    }
}

/// The listing benchmark's server (`benches/listing.rs`: 200 tools, 50 a page) read whole:
/// every rule has its evidence, nothing is `unknown`, so the decision is `pass` (the bench
/// asserts it on every run; this keeps it true without running the bench).
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
    let tools = report.regions[0]
        .surface
        .as_ref()
        .and_then(|s| s.list(vantage_agent::surface::ListKind::Tools).cloned())
        .expect("tools listed");
    assert_eq!((tools.complete, tools.count, tools.pages), (true, 200, 4));
    assert!(report.regions[0]
        .checks
        .iter()
        .all(|c| c.outcome != Outcome::Unknown));
}
