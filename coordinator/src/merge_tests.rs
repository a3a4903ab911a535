//! Table-driven tests of the merge: every derived finding, its scope and its regions, and
//! the decision order.

use std::collections::BTreeSet;

use vantage_agent::model::{
    Cause, CheckResult, DnsObservation, Era, Outcome, RegionResult, RegionStatus, Severity,
};

use vantage_agent::catalog::{CheckId, FindingId};

use super::*;
use crate::report::{Decision, Scope};

/// A region where every catalogued check passed.
fn clean(region: &str) -> RegionResult {
    RegionResult {
        region: region.into(),
        status: RegionStatus::Complete,
        agent: None,
        duration_ms: 10,
        era: Era::Modern,
        protected: false,
        authenticated: false,
        dns: Some(DnsObservation {
            rcode: "NOERROR".into(),
            a: vec!["198.51.100.10".into()],
            aaaa: vec![],
            cname: vec![],
            has_a: true,
            all_global: true,
            min_ttl_s: Some(60),
            ..Default::default()
        }),
        tls: None,
        phases_ms: Default::default(),
        checks: CheckId::ALL
            .iter()
            .map(|&c| CheckResult {
                id: c,
                outcome: Outcome::Pass,
                observed: "ok".into(),
                expected: c.expected().into(),
                duration_ms: 1,
                severity: None,
                cause: None,
            })
            .collect(),
        surface: None,
        stacks: Vec::new(),
    }
}

fn set(
    r: &mut RegionResult,
    id: CheckId,
    outcome: Outcome,
    severity: Option<Severity>,
    cause: Option<Cause>,
) {
    let c = r
        .checks
        .iter_mut()
        .find(|c| c.id == id)
        .expect("catalogued check");
    c.outcome = outcome;
    c.severity = severity;
    c.cause = cause;
    c.observed = format!("{id} {outcome:?}");
}

fn fail(r: &mut RegionResult, id: CheckId, severity: Severity, cause: Option<Cause>) {
    set(r, id, Outcome::Fail, Some(severity), cause);
}

/// The region's resolver answered an internal (CGNAT) address, as split-horizon DNS does.
fn resolved_internal(r: &mut RegionResult) {
    non_global(r, Severity::High);
}

/// The region's resolver answered a CGNAT address; its agent judged that at `severity`.
fn non_global(r: &mut RegionResult, severity: Severity) {
    let dns = r.dns.as_mut().expect("dns");
    dns.a = vec!["100.64.0.10".into()];
    dns.all_global = false;
    fail(
        r,
        CheckId::DnsGlobalAddresses,
        severity,
        Some(Cause::NonGlobal),
    );
}

/// The region's resolver answered AAAA only: no A record in its DNS section.
fn aaaa_only_answer(r: &mut RegionResult) {
    let dns = r.dns.as_mut().expect("dns");
    dns.a.clear();
    dns.aaaa = vec!["2001:db8:b::10".into()];
    dns.has_a = false;
}

/// AAAA only, judged by the agent as `outcome` at `severity`.
fn aaaa_only(r: &mut RegionResult, outcome: Outcome, severity: Severity) {
    aaaa_only_answer(r);
    set(
        r,
        CheckId::DnsARecord,
        outcome,
        Some(severity),
        Some(Cause::NoAnswer),
    );
}

/// `id` fails, and the engine skips every check after it.
fn stop_at(r: &mut RegionResult, id: CheckId, severity: Severity, cause: Option<Cause>) {
    fail(r, id, severity, cause);
    skip_after(r, id);
}

/// Skip every check after the DNS and connect stages, as the engine does.
fn skip_after(r: &mut RegionResult, stage_end: CheckId) {
    let mut after = false;
    for c in &mut r.checks {
        if after {
            c.outcome = Outcome::Skip;
        }
        if c.id == stage_end {
            after = true;
        }
    }
}

use crate::test_reports::merge_of as run;

/// A finding as the tables state it: (id, severity, scope, regions).
type Shape = (FindingId, Severity, Scope, Vec<String>);

/// The shape of every finding above info, sorted.
fn shape(m: &Merged) -> Vec<Shape> {
    let mut v: Vec<_> = m
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .map(|f| (f.id, f.severity, f.scope, f.regions.clone()))
        .collect();
    v.sort_by_key(|a| a.0.as_str());
    v
}

fn f(id: FindingId, sev: Severity, scope: Scope, regions: &[&str]) -> Shape {
    (
        id,
        sev,
        scope,
        regions.iter().map(|s| s.to_string()).collect(),
    )
}

/// A regional finding `id` at `sev` in `regions`, and a global one.
fn regional(id: FindingId, sev: Severity, regions: &[&str]) -> Shape {
    f(id, sev, Scope::Regional, regions)
}
fn global(id: FindingId, sev: Severity, regions: &[&str]) -> Shape {
    f(id, sev, Scope::Global, regions)
}

impl Merged {
    /// The finding `id`, which must be there.
    fn found(&self, id: FindingId) -> &Finding {
        self.findings
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no {id}: {:?}", self.findings))
    }
}

const EU_US_AP: &[&str] = &["eu", "us", "ap"];

#[test]
fn clean_regions_pass() {
    let m = run(vec![clean("eu"), clean("us"), clean("ap")], EU_US_AP, &[]);
    assert!(m.findings.is_empty(), "{:?}", m.findings);
    assert_eq!(m.decision, Decision::Pass);
    assert_eq!(m.era, Era::Modern);
}

#[test]
fn split_horizon_global_vs_non_global() {
    let mut ap = clean("ap");
    resolved_internal(&mut ap);
    skip_after(&mut ap, CheckId::DnsGlobalAddresses);
    let m = run(vec![clean("eu"), clean("us"), ap], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![
            regional(FindingId::DnsNonGlobalAddress, Severity::High, &["ap"]),
            regional(FindingId::DnsSplitHorizon, Severity::High, &["ap"]),
        ]
    );
    assert_eq!(m.decision, Decision::Blocked);
    assert!(m.reason.contains("dns.split-horizon in ap"), "{}", m.reason);
    let sh = m.found(FindingId::DnsSplitHorizon);
    assert!(
        sh.evidence
            .iter()
            .any(|e| e.contains("100.64.0.10 (non-global)")),
        "{:?}",
        sh.evidence
    );
}

#[test]
fn split_horizon_answer_vs_nxdomain() {
    let mut us = clean("us");
    us.dns = Some(DnsObservation {
        rcode: "NXDOMAIN".into(),
        ..Default::default()
    });
    stop_at(
        &mut us,
        CheckId::DnsResolve,
        Severity::High,
        Some(Cause::Nxdomain),
    );
    let m = run(vec![clean("eu"), us, clean("ap")], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![regional(
            FindingId::DnsSplitHorizon,
            Severity::High,
            &["us"]
        )]
    );
}

#[test]
fn split_horizon_a_vs_aaaa_only() {
    let mut eu = clean("eu");
    aaaa_only(&mut eu, Outcome::Fail, Severity::High);
    let m = run(vec![eu, clean("us"), clean("ap")], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![
            regional(FindingId::DnsNoARecord, Severity::High, &["eu"]),
            regional(FindingId::DnsSplitHorizon, Severity::High, &["eu"]),
        ]
    );
}

#[test]
fn no_a_record_everywhere_is_global_and_not_split() {
    let regions: Vec<RegionResult> = EU_US_AP
        .iter()
        .map(|r| {
            let mut x = clean(r);
            aaaa_only(&mut x, Outcome::Fail, Severity::High);
            x
        })
        .collect();
    let m = run(regions, EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![global(
            FindingId::DnsNoARecord,
            Severity::High,
            &["ap", "eu", "us"]
        )]
    );
}

#[test]
fn different_global_answers_are_info_only() {
    let mut us = clean("us");
    us.dns.as_mut().unwrap().a = vec!["198.51.100.20".into()];
    let m = run(vec![clean("eu"), us, clean("ap")], EU_US_AP, &[]);
    assert!(shape(&m).is_empty());
    let differ = m.found(FindingId::DnsAnswersDiffer);
    assert_eq!(differ.severity, Severity::Info);
    assert_eq!(m.decision, Decision::Pass);
}

#[test]
fn egress_timeout_and_refused_in_one_region() {
    for (cause, word) in [(Cause::Timeout, "timeout"), (Cause::Refused, "refused")] {
        let mut us = clean("us");
        fail(&mut us, CheckId::NetConnect, Severity::High, Some(cause));
        us.checks
            .iter_mut()
            .find(|c| c.id == CheckId::NetConnect)
            .unwrap()
            .observed = format!("198.51.100.10:443 {word} after 5000 ms");
        skip_after(&mut us, CheckId::NetConnect);
        let m = run(vec![clean("eu"), us, clean("ap")], EU_US_AP, &[]);
        assert_eq!(
            shape(&m),
            vec![regional(FindingId::EgressBlocked, Severity::High, &["us"])]
        );
        let e = &m.findings[0];
        assert!(
            e.evidence.iter().any(|x| x.contains(word)),
            "{:?}",
            e.evidence
        );
    }
}

#[test]
fn connect_failing_everywhere_is_net_connect() {
    let regions = EU_US_AP
        .iter()
        .map(|r| {
            let mut x = clean(r);
            stop_at(
                &mut x,
                CheckId::NetConnect,
                Severity::High,
                Some(Cause::Timeout),
            );
            x
        })
        .collect();
    let m = run(regions, EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![global(
            FindingId::NetConnect,
            Severity::High,
            &["ap", "eu", "us"]
        )]
    );
}

#[test]
fn a_check_failing_in_one_region_is_an_edge_divergence() {
    let mut ap = clean("ap");
    fail(
        &mut ap,
        CheckId::HeadersMissingMethod,
        Severity::Medium,
        None,
    );
    let m = run(vec![clean("eu"), clean("us"), ap], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![
            regional(FindingId::EdgeDivergent, Severity::Medium, &["ap"]),
            regional(FindingId::HeadersMissingMethod, Severity::Medium, &["ap"]),
        ]
    );
    assert_eq!(m.decision, Decision::Review);
}

#[test]
fn an_auth_check_diverging_is_high() {
    let mut ap = clean("ap");
    fail(
        &mut ap,
        CheckId::AuthGarbageToken,
        Severity::Critical,
        Some(Cause::TokenAccepted),
    );
    let eu = clean("eu");
    let m = run(vec![eu, ap], &["eu", "ap"], &[]);
    assert_eq!(
        shape(&m),
        vec![
            regional(
                FindingId::AuthInvalidTokenAccepted,
                Severity::Critical,
                &["ap"]
            ),
            regional(FindingId::EdgeDivergent, Severity::High, &["ap"]),
        ]
    );
}

#[test]
fn divergence_explained_by_dns_is_not_an_edge_fault() {
    let mut ap = clean("ap");
    resolved_internal(&mut ap);
    fail(
        &mut ap,
        CheckId::HeadersMissingMethod,
        Severity::Medium,
        None,
    );
    let m = run(vec![clean("eu"), ap], &["eu", "ap"], &[]);
    assert!(
        !m.findings.iter().any(|f| f.id == FindingId::EdgeDivergent),
        "{:?}",
        shape(&m)
    );
}

#[test]
fn a_missing_region_makes_the_decision_unknown_never_pass() {
    let m = run(vec![clean("eu"), clean("us")], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![regional(
            FindingId::FleetRegionMissing,
            Severity::Medium,
            &["ap"]
        )]
    );
    assert_eq!(m.decision, Decision::Unknown);
    let timed_out = RegionResult::absent("ap", RegionStatus::Timeout);
    let m = run(vec![clean("eu"), clean("us"), timed_out], EU_US_AP, &[]);
    assert_eq!(m.decision, Decision::Unknown);
    assert!(
        m.findings[0]
            .evidence
            .iter()
            .any(|e| e == "ap: timeout: no result by the job's deadline"),
        "{:?}",
        m.findings[0].evidence
    );
}

#[test]
fn blocked_takes_precedence_over_unknown() {
    let mut eu = clean("eu");
    fail(&mut eu, CheckId::MethodUnknown, Severity::High, None);
    let m = run(vec![eu], &["eu", "us"], &[]);
    assert_eq!(m.decision, Decision::Blocked);
}

#[test]
fn a_degraded_vantage_does_not_block() {
    let mut ap = clean("ap");
    stop_at(
        &mut ap,
        CheckId::NetConnect,
        Severity::High,
        Some(Cause::Timeout),
    );
    let m = run(vec![clean("eu"), clean("us"), ap], EU_US_AP, &["ap"]);
    assert_eq!(
        shape(&m),
        vec![regional(
            FindingId::FleetVantageDegraded,
            Severity::Low,
            &["ap"]
        )]
    );
    // It does not block, but it did not observe the target either: never pass
    // (checks.md 4.1, property (a)).
    assert_eq!(m.decision, Decision::Unknown);
    assert!(
        m.reason.contains("ap did not observe the target"),
        "{}",
        m.reason
    );
    assert!(m.findings[0]
        .evidence
        .iter()
        .any(|e| e.contains("net.connect")));

    // A degraded vantage that did observe the target, failing a check others pass: it saw
    // the target, so its failure counts with full weight (red team round 6, #13: its
    // degraded state excuses egress failures only, `merge/degraded.rs`).
    let mut ap = clean("ap");
    fail(&mut ap, CheckId::TransportGet, Severity::Medium, None);
    let m = run(vec![clean("eu"), clean("us"), ap], EU_US_AP, &["ap"]);
    assert_eq!(m.decision, Decision::Review, "{:?}", shape(&m));
    assert!(m
        .findings
        .iter()
        .all(|f| f.id != FindingId::FleetVantageDegraded));
}

#[test]
fn cross_host_redirect_and_origin_severity_by_protection() {
    let mut eu = clean("eu");
    fail(
        &mut eu,
        CheckId::RedirectNone,
        Severity::High,
        Some(Cause::CrossHost),
    );
    let m = run(vec![eu], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![global(
            FindingId::RedirectCrossHost,
            Severity::High,
            &["eu"]
        )]
    );

    let mut open = clean("eu");
    fail(&mut open, CheckId::SecurityOrigin, Severity::Medium, None);
    let m = run(vec![open.clone()], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![global(
            FindingId::SecurityOriginNotValidated,
            Severity::Medium,
            &["eu"]
        )]
    );
    open.protected = true;
    open.authenticated = true;
    let m = run(vec![open], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![global(
            FindingId::SecurityOriginNotValidated,
            Severity::High,
            &["eu"]
        )]
    );
}

#[test]
fn legacy_era_maps_to_legacy_only() {
    let mut eu = clean("eu");
    eu.era = Era::Legacy;
    fail(&mut eu, CheckId::EraDetect, Severity::Medium, None);
    let m = run(vec![eu], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![global(FindingId::EraLegacyOnly, Severity::Medium, &["eu"])]
    );
    assert_eq!(m.era, Era::Legacy);
    assert_eq!(m.decision, Decision::Review);
}

#[test]
fn protected_without_credential_is_unknown() {
    let mut eu = clean("eu");
    eu.protected = true;
    let m = run(vec![eu], &["eu"], &[]);
    assert_eq!(m.decision, Decision::Unknown);
    assert!(m
        .findings
        .iter()
        .any(|f| f.id == FindingId::AuthCredentialRequired));
}

#[test]
fn info_and_low_do_not_change_a_pass() {
    let mut eu = clean("eu");
    set(
        &mut eu,
        CheckId::TransportSseBuffering,
        Outcome::Warn,
        Some(Severity::Info),
        None,
    );
    set(
        &mut eu,
        CheckId::TransportDelete,
        Outcome::Warn,
        Some(Severity::Low),
        None,
    );
    let m = run(vec![eu], &["eu"], &[]);
    assert_eq!(m.decision, Decision::Pass);
    assert_eq!(
        shape(&m),
        vec![global(FindingId::TransportDelete, Severity::Low, &["eu"])]
    );
}

/// The merge names a failed check only as the catalogue says it may: its default finding or
/// one of the conditional ones it declares, and each declared one is reachable.
#[test]
fn finding_ids_follow_the_catalogue() {
    let eras = [
        Era::Modern,
        Era::Dual,
        Era::Legacy,
        Era::HttpSse,
        Era::NotMcp,
        Era::Unknown,
    ];
    for &check in CheckId::ALL {
        let declared: Vec<FindingId> = check.findings().collect();
        let mut reached = BTreeSet::new();
        for outcome in [Outcome::Fail, Outcome::Warn] {
            for regional in [false, true] {
                for era in eras {
                    for cause in super::props::gen::CAUSES {
                        let id = finding_id(check, outcome, regional, cause, era);
                        assert!(declared.contains(&id), "{check} maps to {id}, undeclared");
                        reached.insert(id);
                    }
                }
            }
        }
        assert_eq!(
            reached.len(),
            declared.len(),
            "{check}: declared {declared:?}, reached {reached:?}"
        );
    }
}

#[path = "merge_issue12_tests.rs"]
mod issue12;

#[path = "merge_monotone_tests.rs"]
mod monotone;
