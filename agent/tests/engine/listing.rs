//! The listing stage against the fixture: each listing fault's observation names what is
//! wrong, a 2025-11-25 server is listed in a session, and a large surface is read whole.

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Era, Outcome};
use vantage_agent::surface::ListKind;
use vantage_fixture::{Fault, Fixture, SurfaceConfig};

use crate::run::{check, run};

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
            Fault::ListenCloses,
            CheckId::ListenSse,
            "the stream ended 0 ms after its acknowledgement, inside the 250 ms listen window, without a final result",
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
        let c = check(&run(&fixture.url()).await, *id);
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
    let region = run(&fixture.url()).await;
    let surface = region.surface.as_ref().expect("a surface");
    assert_eq!(surface.era, Era::Legacy);
    let tools = surface.list(ListKind::Tools).unwrap();
    assert!(
        tools.complete && tools.count == 5 && tools.pages == 3,
        "{tools:?}"
    );
    assert_eq!(
        check(&region, CheckId::ToolsNoPerConnectionVariance).observed,
        "the same 5 tools over a second session"
    );
    for id in [
        CheckId::CacheHints,
        CheckId::ListenSse,
        CheckId::ToolsXMcpHeaderValid,
    ] {
        let c = check(&region, id);
        assert_eq!(c.outcome, Outcome::Skip, "{id}");
        assert!(c.observed.contains("2025-11-25"), "{}", c.observed);
    }
}

/// The listing benchmark's server (`benches/listing.rs`: 200 tools, 50 a page) is read
/// whole, and every rule has its evidence (no check is `unknown`).
#[tokio::test]
async fn the_listing_benchmarks_200_tool_server_is_read_whole() {
    let surface = SurfaceConfig {
        extra_tools: 195,
        page_size: 50,
    };
    let fixture = Fixture::start_with(&[], surface).await.unwrap();
    let region = run(&fixture.url()).await;
    let tools = region
        .surface
        .as_ref()
        .and_then(|s| s.list(ListKind::Tools).cloned())
        .expect("tools listed");
    assert_eq!((tools.complete, tools.count, tools.pages), (true, 200, 4));
    assert!(region.checks.iter().all(|c| c.outcome != Outcome::Unknown));
}
