//! A listing nobody read is never evidence (fresh-user round 8, item 10).
//!
//! A server whose `server/discover` result lacks `capabilities` had every listing check
//! `skip` ("so the lists to read are unknown"), and a skip is no gap: accepting
//! discover.shape then passed the gate on a tool surface nothing read. Now:
//! - a dual-era server (initialize works and advertises `tools`) is listed in a 2025-11-25
//!   session, on what initialize advertised, as a legacy-only server is: the tool checks
//!   have evidence; the 2026-07-28-only checks (and caps.discover-matches-handlers, whose
//!   rule is what discover declares) are `unknown`, cause `malformed`;
//! - a modern-only server has no other declaration: every listing check is `unknown`.

use vantage_agent::catalog::{in_stage, CheckId, Stage};
use vantage_agent::engine::Engine;
use vantage_agent::model::{Cause, Era, Outcome, RegionResult, Severity};
use vantage_agent::surface::ListKind;
use vantage_fixture::{Fault, Fixture};

#[path = "shared/probe.rs"]
mod shared;

async fn run(faults: &[Fault]) -> RegionResult {
    let fixture = Fixture::start(faults).await.expect("fixture");
    let opts = shared::options();
    let job = shared::job(&fixture.url(), &opts);
    Engine::new(opts).expect("engine").run_job(&job).await
}

fn outcome(r: &RegionResult, id: CheckId) -> (Outcome, Option<Cause>, String) {
    let c = r.check(id).unwrap_or_else(|| panic!("{id} missing"));
    (c.outcome, c.cause, c.observed.clone())
}

/// discover.shape names the missing capabilities, high.
fn assert_shape_fails(r: &RegionResult) {
    let c = r.check(CheckId::DiscoverShape).expect("discover.shape");
    shared::assert_seen(
        c,
        (c.outcome, c.severity),
        (Outcome::Fail, Some(Severity::High)),
        "capabilities missing",
    );
}

#[tokio::test]
async fn a_dual_era_server_whose_discover_declares_nothing_is_listed_in_its_legacy_session() {
    let r = run(&[Fault::DiscoverNoCapabilities]).await;
    assert_eq!(r.era, Era::Dual);
    assert_shape_fails(&r);
    // The lists initialize advertised were read: the tool checks pass on what was read.
    shared::assert_outcomes(
        &r,
        [
            CheckId::ToolsListShape,
            CheckId::ToolsNameFormat,
            CheckId::ToolsDeterministicOrder,
            CheckId::ToolsNoPerConnectionVariance,
            CheckId::ToolsSchemaValid,
            CheckId::PaginationCursor,
            CheckId::PaginationInvalidCursor,
        ],
        Outcome::Pass,
    );
    let surface = r.surface.as_ref().expect("a surface was read");
    assert_eq!(surface.era, Era::Legacy, "read in a 2025-11-25 session");
    let tools = surface.list(ListKind::Tools).expect("tools were read");
    assert!(tools.count > 0 && tools.complete, "{tools:?}");
    // What only discover's declaration or the 2026-07-28 lists can show: not observed.
    for id in [
        CheckId::CapsDiscoverMatchesHandlers,
        CheckId::CacheHints,
        CheckId::ToolsXMcpHeaderValid,
        CheckId::ListenSse,
        CheckId::ListenAckFirst,
    ] {
        let (o, cause, seen) = outcome(&r, id);
        assert_eq!(
            (o, cause),
            (Outcome::Unknown, Some(Cause::Malformed)),
            "{id}: {seen}"
        );
        for needle in [
            "server/discover declared no capabilities",
            "2026-07-28 lists were not read",
        ] {
            assert!(seen.contains(needle), "{id}: {needle}: {seen}");
        }
    }
    // No listing check is a skip: each is due.
    for id in in_stage(Stage::Listing) {
        assert_ne!(outcome(&r, id).0, Outcome::Skip, "{id}");
    }
}

#[tokio::test]
async fn a_modern_only_server_whose_discover_declares_nothing_has_every_listing_check_unknown() {
    let r = run(&[Fault::DiscoverNoCapabilities, Fault::ModernOnly]).await;
    assert_eq!(r.era, Era::Modern);
    assert_shape_fails(&r);
    assert!(r.surface.is_none(), "nothing was read");
    let listing: Vec<CheckId> = in_stage(Stage::Listing).collect();
    assert!(listing.len() >= 10, "{listing:?}");
    for id in listing {
        let (o, cause, seen) = outcome(&r, id);
        assert_eq!(
            (o, cause),
            (Outcome::Unknown, Some(Cause::Malformed)),
            "{id}: {seen}"
        );
        assert!(
            seen.contains("server/discover declared no capabilities")
                && seen.contains("none was read"),
            "{id}: {seen}"
        );
    }
}

#[tokio::test]
async fn a_discover_that_declares_its_capabilities_is_listed_the_modern_way() {
    // The control: the same fixture with capabilities is read in 2026-07-28 requests.
    let r = run(&[]).await;
    let surface = r.surface.as_ref().expect("a surface was read");
    assert_eq!(surface.era, Era::Modern);
    for id in in_stage(Stage::Listing) {
        let (o, _, seen) = outcome(&r, id);
        assert_eq!(o, Outcome::Pass, "{id}: {seen}");
    }
}
