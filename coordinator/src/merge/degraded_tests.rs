//! What a degraded region's result counts for (red team round 6, #13): its egress failures
//! on a target it did not observe are discounted; what it observed counts in full.

use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Cause, RegionResult, Severity};

use crate::merge::Merged;
use crate::report::{Decision, Scope};
use crate::test_reports::{clean, fail, merge_of, nxdomain, unreachable};

const ABC: &[&str] = &["a", "b", "c"];

fn run(regions: Vec<RegionResult>, degraded: &[&str]) -> Merged {
    merge_of(regions, ABC, degraded)
}

fn find(m: &Merged, id: FindingId) -> Option<&crate::report::Finding> {
    m.findings.iter().find(|f| f.id == id)
}

/// b answered an unknown method with an HTML 404 (a different edge there): b resolved,
/// connected and got answers, so its high failure blocks whether or not b is degraded. The
/// red team's case: three on-demand checks had made b degraded, and this became a pass.
#[test]
fn a_degraded_region_that_observed_the_target_reports_with_full_weight() {
    let edge = || {
        let mut b = clean("b");
        fail(&mut b, "method.unknown", Severity::High, "404 text/html");
        vec![clean("a"), b, clean("c")]
    };
    let plain = run(edge(), &[]);
    let degraded = run(edge(), &["b"]);
    assert_eq!(degraded, plain, "being degraded changes nothing here");
    assert_eq!(degraded.decision, Decision::Blocked, "{}", degraded.reason);
    let f = find(&degraded, FindingId::MethodUnknown).expect("method.unknown");
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::High, Scope::Regional, vec!["b".to_string()])
    );
    assert!(f.evidence.iter().any(|e| e.contains("404 text/html")));
    assert!(find(&degraded, FindingId::EdgeDivergent).is_some());
    assert!(find(&degraded, FindingId::FleetVantageDegraded).is_none());
}

/// Red team round 13, #1: a degraded region whose resolver got NXDOMAIN for a name the
/// others resolve got the zone's answer (a GeoDNS view or a provider failing in one region):
/// evidence about the target, never discounted as the vantage's egress. The split horizon
/// blocks whether or not the region is degraded (it was `unknown` with
/// `fleet.vantage-degraded`, and nothing paged for the target).
#[test]
fn a_degraded_regions_nxdomain_is_the_zones_answer_and_blocks() {
    let plain = run(vec![clean("a"), nxdomain("b"), clean("c")], &[]);
    let m = run(vec![clean("a"), nxdomain("b"), clean("c")], &["b"]);
    assert_eq!(m, plain, "being degraded changes nothing here");
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    let f = find(&m, FindingId::DnsSplitHorizon).expect("split horizon");
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::High, Scope::Regional, vec!["b".to_string()])
    );
    assert!(find(&m, FindingId::FleetVantageDegraded).is_none());
}

/// Red team round 13, #1 (second reproduction): a degraded region that cannot connect to an
/// address no other region was given (GeoDNS sends it to a dead edge or POP) has evidence
/// about the target: `egress.blocked` blocks as for any region. The same timeout on the
/// address the others connected to is its own egress: discounted.
#[test]
fn a_degraded_regions_failed_connect_to_an_address_only_it_was_given_counts() {
    let given = |r: &mut RegionResult, addr: &str| {
        r.dns.as_mut().unwrap().a = vec![addr.to_string()];
    };
    let ok = |name: &str| {
        let mut r = clean(name);
        crate::test_reports::set(
            &mut r,
            "net.connect",
            vantage_agent::model::Outcome::Pass,
            None,
            None,
            "198.51.100.131:443 connected in 1 ms",
        );
        given(&mut r, "198.51.100.131");
        r
    };
    let dead_pop = || {
        let mut b = unreachable(
            "b",
            Some(Cause::Timeout),
            "198.51.100.139:443 timeout after 2001 ms (connect: no answer)",
        );
        given(&mut b, "198.51.100.139");
        b
    };
    let m = run(vec![ok("a"), dead_pop(), ok("c")], &["b"]);
    assert_eq!(m, run(vec![ok("a"), dead_pop(), ok("c")], &[]));
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    let f = find(&m, FindingId::EgressBlocked).expect("egress.blocked");
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::High, Scope::Regional, vec!["b".to_string()])
    );
    assert!(find(&m, FindingId::FleetVantageDegraded).is_none());

    let mut own = unreachable(
        "b",
        Some(Cause::Timeout),
        "198.51.100.131:443 timeout after 2001 ms (connect: no answer)",
    );
    given(&mut own, "198.51.100.131");
    let m = run(vec![ok("a"), own, ok("c")], &["b"]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert!(find(&m, FindingId::EgressBlocked).is_none());
    let f = find(&m, FindingId::FleetVantageDegraded).expect("the note");
    assert!(
        f.evidence.iter().any(
            |e| e.starts_with("b: net.connect 198.51.100.131:443 timeout")
                && e.contains("other regions connected where it failed")
        ),
        "{:?}",
        f.evidence
    );
}

/// The same for a connection only the degraded region cannot open (`egress.blocked`
/// otherwise).
#[test]
fn a_degraded_regions_failed_connect_is_discounted() {
    let b = || unreachable("b", Some(Cause::Timeout), "no answer within 5 s");
    let m = run(vec![clean("a"), b(), clean("c")], &["b"]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert!(find(&m, FindingId::EgressBlocked).is_none());
    let f = find(&m, FindingId::FleetVantageDegraded).expect("the note");
    assert!(f.evidence.iter().any(|e| e.starts_with("b: net.connect ")));
    let m = run(vec![clean("a"), b(), clean("c")], &[]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    assert!(find(&m, FindingId::EgressBlocked).is_some());
}

/// A degraded region that did not observe the target for a reason that is not its egress
/// (its handshake failed: a certificate, another edge) reports with full weight; so does
/// one whose egress failure comes with a failure of another kind. Neither is excused.
#[test]
fn a_degraded_region_failing_more_than_its_egress_is_not_discounted() {
    let mut b = unreachable("b", None, "unused");
    crate::test_reports::set(
        &mut b,
        "net.connect",
        vantage_agent::model::Outcome::Pass,
        None,
        None,
        "connected",
    );
    fail(
        &mut b,
        "tls.handshake",
        Severity::High,
        "certificate expired",
    );
    let m = run(vec![clean("a"), b, clean("c")], &["b"]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    let f = find(&m, FindingId::TlsHandshake).expect("tls.handshake");
    assert_eq!(f.regions, vec!["b".to_string()]);
    assert!(find(&m, FindingId::FleetVantageDegraded).is_none());

    let mut b = nxdomain("b");
    fail(&mut b, "method.unknown", Severity::High, "404 text/html");
    let m = run(vec![clean("a"), b, clean("c")], &["b"]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    assert!(find(&m, FindingId::MethodUnknown).is_some());
    assert!(find(&m, FindingId::FleetVantageDegraded).is_none());
}

/// Red team round 6 (nit): every report carried `fleet.vantage-degraded low [b]` with empty
/// evidence once b was degraded, unrelated targets too. The note belongs only on a report
/// whose region result it discounted: a degraded region that observed the target cleanly
/// adds nothing, and the target passes.
#[test]
fn a_clean_degraded_region_adds_no_note() {
    let m = run(vec![clean("a"), clean("b"), clean("c")], &["b"]);
    assert_eq!(m.decision, Decision::Pass, "{}", m.reason);
    assert!(m.findings.is_empty(), "{:?}", m.findings);
}

/// A degraded region checked alone did report: the reason names it, not "no region
/// reported" (a fresh user's round 8, item 5).
#[test]
fn a_degraded_region_checked_alone_is_named_as_the_reason() {
    let b = unreachable("b", Some(Cause::Timeout), "no answer within 5 s");
    let m = merge_of(vec![b], &["b"], &["b"]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert!(
        m.reason.contains("fleet.vantage-degraded in b") && !m.reason.contains("no region"),
        "{}",
        m.reason
    );
}
