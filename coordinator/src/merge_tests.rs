//! Table-driven tests of the merge: every derived finding, its scope and its regions, and
//! the decision order.

use std::collections::BTreeSet;

use vantage_agent::model::{
    Cause, CheckResult, DnsObservation, Era, Outcome, RegionResult, RegionStatus, Severity,
};

use super::*;
use crate::report::{Decision, Scope};

/// A region where every catalogued check passed.
fn clean(region: &str) -> RegionResult {
    RegionResult {
        region: region.into(),
        status: RegionStatus::Complete,
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
        }),
        phases_ms: Default::default(),
        checks: vantage_agent::catalog::CHECKS
            .iter()
            .map(|c| CheckResult {
                id: c.id.into(),
                outcome: Outcome::Pass,
                observed: "ok".into(),
                expected: c.expected.into(),
                duration_ms: 1,
                severity: None,
                cause: None,
            })
            .collect(),
    }
}

fn set(
    r: &mut RegionResult,
    id: &str,
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

fn fail(r: &mut RegionResult, id: &str, severity: Severity, cause: Option<Cause>) {
    set(r, id, Outcome::Fail, Some(severity), cause);
}

/// The region's resolver answered an internal (CGNAT) address, as split-horizon DNS does.
fn resolved_internal(r: &mut RegionResult) {
    let dns = r.dns.as_mut().expect("dns");
    dns.a = vec!["100.64.0.10".into()];
    dns.all_global = false;
    fail(
        r,
        "dns.global-addresses",
        Severity::High,
        Some(Cause::NonGlobal),
    );
}

/// Skip every check after the DNS and connect stages, as the engine does.
fn skip_after(r: &mut RegionResult, stage_end: &str) {
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

fn run(regions: Vec<RegionResult>, requested: &[&str], degraded: &[&str]) -> Merged {
    let requested: Vec<String> = requested.iter().map(|s| s.to_string()).collect();
    let degraded: BTreeSet<String> = degraded.iter().map(|s| s.to_string()).collect();
    merge(&MergeInput {
        requested: &requested,
        results: &regions,
        degraded: &degraded,
    })
}

/// (id, severity, scope, regions) of every finding above info, sorted.
fn shape(m: &Merged) -> Vec<(String, Severity, Scope, Vec<String>)> {
    let mut v: Vec<_> = m
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .map(|f| (f.id.clone(), f.severity, f.scope, f.regions.clone()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn f(
    id: &str,
    sev: Severity,
    scope: Scope,
    regions: &[&str],
) -> (String, Severity, Scope, Vec<String>) {
    (
        id.into(),
        sev,
        scope,
        regions.iter().map(|s| s.to_string()).collect(),
    )
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
    skip_after(&mut ap, "dns.global-addresses");
    let m = run(vec![clean("eu"), clean("us"), ap], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![
            f(
                "dns.non-global-address",
                Severity::High,
                Scope::Regional,
                &["ap"]
            ),
            f(
                "dns.split-horizon",
                Severity::High,
                Scope::Regional,
                &["ap"]
            ),
        ]
    );
    assert_eq!(m.decision, Decision::Blocked);
    assert!(m.reason.contains("dns.split-horizon in ap"), "{}", m.reason);
    let sh = m
        .findings
        .iter()
        .find(|f| f.id == "dns.split-horizon")
        .unwrap();
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
    fail(
        &mut us,
        "dns.resolve",
        Severity::High,
        Some(Cause::Nxdomain),
    );
    skip_after(&mut us, "dns.resolve");
    let m = run(vec![clean("eu"), us, clean("ap")], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "dns.split-horizon",
            Severity::High,
            Scope::Regional,
            &["us"]
        )]
    );
}

#[test]
fn split_horizon_a_vs_aaaa_only() {
    let mut eu = clean("eu");
    let d = eu.dns.as_mut().unwrap();
    d.a.clear();
    d.aaaa = vec!["2001:db8:b::10".into()];
    d.has_a = false;
    fail(
        &mut eu,
        "dns.a-record",
        Severity::High,
        Some(Cause::NoAnswer),
    );
    let m = run(vec![eu, clean("us"), clean("ap")], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![
            f("dns.no-a-record", Severity::High, Scope::Regional, &["eu"]),
            f(
                "dns.split-horizon",
                Severity::High,
                Scope::Regional,
                &["eu"]
            ),
        ]
    );
}

#[test]
fn no_a_record_everywhere_is_global_and_not_split() {
    let regions: Vec<RegionResult> = EU_US_AP
        .iter()
        .map(|r| {
            let mut x = clean(r);
            let d = x.dns.as_mut().unwrap();
            d.a.clear();
            d.aaaa = vec!["2001:db8:b::10".into()];
            d.has_a = false;
            fail(
                &mut x,
                "dns.a-record",
                Severity::High,
                Some(Cause::NoAnswer),
            );
            x
        })
        .collect();
    let m = run(regions, EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "dns.no-a-record",
            Severity::High,
            Scope::Global,
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
    let differ = m
        .findings
        .iter()
        .find(|f| f.id == "dns.answers-differ")
        .expect("answers-differ");
    assert_eq!(differ.severity, Severity::Info);
    assert_eq!(m.decision, Decision::Pass);
}

#[test]
fn egress_timeout_and_refused_in_one_region() {
    for (cause, word) in [(Cause::Timeout, "timeout"), (Cause::Refused, "refused")] {
        let mut us = clean("us");
        fail(&mut us, "net.connect", Severity::High, Some(cause));
        us.checks
            .iter_mut()
            .find(|c| c.id == "net.connect")
            .unwrap()
            .observed = format!("198.51.100.10:443 {word} after 5000 ms");
        skip_after(&mut us, "net.connect");
        let m = run(vec![clean("eu"), us, clean("ap")], EU_US_AP, &[]);
        assert_eq!(
            shape(&m),
            vec![f(
                "egress.blocked",
                Severity::High,
                Scope::Regional,
                &["us"]
            )]
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
            fail(&mut x, "net.connect", Severity::High, Some(Cause::Timeout));
            skip_after(&mut x, "net.connect");
            x
        })
        .collect();
    let m = run(regions, EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "net.connect",
            Severity::High,
            Scope::Global,
            &["ap", "eu", "us"]
        )]
    );
}

#[test]
fn a_check_failing_in_one_region_is_an_edge_divergence() {
    let mut ap = clean("ap");
    fail(&mut ap, "headers.missing-method", Severity::Medium, None);
    let m = run(vec![clean("eu"), clean("us"), ap], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![
            f("edge.divergent", Severity::Medium, Scope::Regional, &["ap"]),
            f(
                "headers.missing-method",
                Severity::Medium,
                Scope::Regional,
                &["ap"]
            ),
        ]
    );
    assert_eq!(m.decision, Decision::Review);
}

#[test]
fn an_auth_check_diverging_is_high() {
    let mut ap = clean("ap");
    fail(
        &mut ap,
        "auth.garbage-token",
        Severity::Critical,
        Some(Cause::TokenAccepted),
    );
    let eu = clean("eu");
    let m = run(vec![eu, ap], &["eu", "ap"], &[]);
    assert_eq!(
        shape(&m),
        vec![
            f(
                "auth.invalid-token-accepted",
                Severity::Critical,
                Scope::Regional,
                &["ap"]
            ),
            f("edge.divergent", Severity::High, Scope::Regional, &["ap"]),
        ]
    );
}

#[test]
fn divergence_explained_by_dns_is_not_an_edge_fault() {
    let mut ap = clean("ap");
    resolved_internal(&mut ap);
    fail(&mut ap, "headers.missing-method", Severity::Medium, None);
    let m = run(vec![clean("eu"), ap], &["eu", "ap"], &[]);
    assert!(
        !m.findings.iter().any(|f| f.id == "edge.divergent"),
        "{:?}",
        shape(&m)
    );
}

#[test]
fn a_missing_region_makes_the_decision_unknown_never_pass() {
    let m = run(vec![clean("eu"), clean("us")], EU_US_AP, &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "fleet.region-missing",
            Severity::Medium,
            Scope::Regional,
            &["ap"]
        )]
    );
    assert_eq!(m.decision, Decision::Unknown);
    let timed_out = RegionResult::absent("ap", RegionStatus::Timeout);
    let m = run(vec![clean("eu"), clean("us"), timed_out], EU_US_AP, &[]);
    assert_eq!(m.decision, Decision::Unknown);
    assert!(
        m.findings[0].evidence.iter().any(|e| e == "ap: timeout"),
        "{:?}",
        m.findings[0].evidence
    );
}

#[test]
fn blocked_takes_precedence_over_unknown() {
    let mut eu = clean("eu");
    fail(&mut eu, "method.unknown", Severity::High, None);
    let m = run(vec![eu], &["eu", "us"], &[]);
    assert_eq!(m.decision, Decision::Blocked);
}

#[test]
fn a_degraded_vantage_does_not_block() {
    let mut ap = clean("ap");
    fail(&mut ap, "net.connect", Severity::High, Some(Cause::Timeout));
    skip_after(&mut ap, "net.connect");
    let m = run(vec![clean("eu"), clean("us"), ap], EU_US_AP, &["ap"]);
    assert_eq!(
        shape(&m),
        vec![f(
            "fleet.vantage-degraded",
            Severity::Low,
            Scope::Regional,
            &["ap"]
        )]
    );
    assert_eq!(m.decision, Decision::Pass);
    assert!(m.findings[0]
        .evidence
        .iter()
        .any(|e| e.contains("net.connect")));
}

#[test]
fn cross_host_redirect_and_origin_severity_by_protection() {
    let mut eu = clean("eu");
    fail(
        &mut eu,
        "redirect.none",
        Severity::High,
        Some(Cause::CrossHost),
    );
    let m = run(vec![eu], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "redirect.cross-host",
            Severity::High,
            Scope::Global,
            &["eu"]
        )]
    );

    let mut open = clean("eu");
    fail(&mut open, "security.origin", Severity::Medium, None);
    let m = run(vec![open.clone()], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "security.origin-not-validated",
            Severity::Medium,
            Scope::Global,
            &["eu"]
        )]
    );
    open.protected = true;
    open.authenticated = true;
    let m = run(vec![open], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "security.origin-not-validated",
            Severity::High,
            Scope::Global,
            &["eu"]
        )]
    );
}

#[test]
fn legacy_era_maps_to_legacy_only() {
    let mut eu = clean("eu");
    eu.era = Era::Legacy;
    fail(&mut eu, "era.detect", Severity::Medium, None);
    let m = run(vec![eu], &["eu"], &[]);
    assert_eq!(
        shape(&m),
        vec![f(
            "era.legacy-only",
            Severity::Medium,
            Scope::Global,
            &["eu"]
        )]
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
        .any(|f| f.id == "auth.credential-required"));
}

#[test]
fn info_and_low_do_not_change_a_pass() {
    let mut eu = clean("eu");
    set(
        &mut eu,
        "transport.sse-buffering",
        Outcome::Warn,
        Some(Severity::Info),
        None,
    );
    set(
        &mut eu,
        "transport.delete",
        Outcome::Warn,
        Some(Severity::Low),
        None,
    );
    let m = run(vec![eu], &["eu"], &[]);
    assert_eq!(m.decision, Decision::Pass);
    assert_eq!(
        shape(&m),
        vec![f("transport.delete", Severity::Low, Scope::Global, &["eu"])]
    );
}

#[test]
fn every_check_maps_to_a_catalogued_finding() {
    for check in vantage_agent::catalog::CHECKS {
        for regional in [false, true] {
            for era in [Era::Modern, Era::Legacy, Era::NotMcp] {
                for cause in [None, Some(Cause::CrossHost), Some(Cause::TokenAccepted)] {
                    let id = finding_id(check.id, regional, cause, era);
                    assert!(
                        crate::findings::FINDINGS.iter().any(|f| f.id == id),
                        "{} maps to {id}, which has no catalogue entry",
                        check.id
                    );
                }
            }
        }
    }
}
