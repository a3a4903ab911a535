//! Red team round 13, #1, with real engines: the zone answering NXDOMAIN in one region (its
//! resolver here is the loopback responder of `dns_resolver_faults_support`, which answers
//! NXDOMAIN for names whose first label is `gone`) for every scheduled target never makes
//! that region degraded, and a region degraded for other reasons keeps the zone's answer as
//! a split horizon about the target (blocked, exit 2), never `fleet.vantage-degraded`; the
//! same for a connect that fails only to an address no other region is given (a dead POP).

use std::collections::BTreeSet;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Outcome, Severity};
use vantage_agent::Target;
use vantage_coordinator::checks::Degraded;
use vantage_coordinator::exit::{for_report, FailOn};
use vantage_coordinator::report::{Decision, Report, Scope};
use vantage_fixture::lab::{LabCa, LabDns};
use vantage_fixture::Fixture;

use crate::dns_resolver_faults_support::{check, hostile_dns, region};
use crate::support::shared::Lab;
use crate::support::{front, trusting};

const HOSTS: [&str; 4] = [
    "gone.x1.vantage.test",
    "gone.x2.vantage.test",
    "gone.x3.vantage.test",
    "gone.x4.vantage.test",
];

fn merged(
    url: &str,
    regions: Vec<vantage_agent::model::RegionResult>,
    degraded: &[&str],
) -> Report {
    let names: Vec<String> = regions.iter().map(|r| r.region.clone()).collect();
    let degraded: BTreeSet<String> = degraded.iter().map(|s| s.to_string()).collect();
    vantage_coordinator::checks::assemble(
        &Target::parse(url).unwrap(),
        "2026-12-02T07:00:00Z".into(),
        100,
        &names,
        regions,
        &degraded,
        &Default::default(),
    )
}

fn assert_split_horizon_in_b(report: &Report) {
    assert_eq!(report.decision, Decision::Blocked, "{}", report.reason);
    assert_eq!(for_report(report, FailOn::Blocked), 2);
    let f = report
        .finding(FindingId::DnsSplitHorizon)
        .expect("dns.split-horizon");
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::High, Scope::Regional, vec!["b".to_string()])
    );
    assert!(report.finding(FindingId::FleetVantageDegraded).is_none());
}

#[tokio::test]
async fn rt13_1_the_zones_nxdomain_in_one_region_never_makes_it_degraded() {
    let records: Vec<(&str, &[&str])> = HOSTS.iter().map(|h| (*h, &["127.0.0.1"][..])).collect();
    let lab = Lab {
        fixture: Fixture::start(&[]).await.unwrap(),
        ca: LabCa::new(),
        dns: LabDns::start(&records).await,
    };
    let hostile = hostile_dns().await;
    let (_front, url) = front(&lab, &HOSTS, 90).await;
    let urls: Vec<String> = HOSTS
        .iter()
        .map(|h| url.replace("mcp.vantage.test", h))
        .collect();
    let good = trusting(&lab);
    let mut bad = good.clone();
    bad.resolver.nameservers = vec![hostile.addr];

    let degraded = Degraded::default();
    let schedule: Vec<(String, Vec<String>)> = urls[..3]
        .iter()
        .map(|u| (u.clone(), vec!["a".into(), "b".into(), "c".into()]))
        .collect();
    degraded.schedule(&schedule);
    let mut last = Vec::new();
    for u in &urls {
        let regions = vec![
            region(u, good.clone(), "a").await,
            region(u, bad.clone(), "b").await,
            region(u, good.clone(), "c").await,
        ];
        let report = merged(u, regions.clone(), &[]);
        let b = check(&report, "b", CheckId::DnsResolve);
        assert_eq!(b.outcome, Outcome::Fail, "{}", b.observed);
        assert!(b.observed.contains("NXDOMAIN"), "{}", b.observed);
        assert_split_horizon_in_b(&report);
        degraded.record(&report);
        last = regions;
    }
    assert_eq!(
        degraded.len(),
        9,
        "a verdict per scheduled target and region"
    );
    assert!(
        degraded.regions().is_empty(),
        "the zone's answer made {:?} degraded",
        degraded.regions()
    );
    // Degraded for another reason (its egress elsewhere), b's NXDOMAIN here is still the
    // zone's answer about this target: the same split horizon, blocked.
    let report = merged(&urls[3], last, &["b"]);
    assert_split_horizon_in_b(&report);
}

/// #1 (second reproduction) and N4, with real engines: GeoDNS sends region b to an address
/// no other region is given (127.0.0.2, where nothing listens: a dead edge or POP), a and c
/// to the front on 127.0.0.1. Every scheduled target fails to connect in b alone, yet b is not
/// degraded: it never failed on an address another region reached. Each report is blocked by
/// `egress.blocked` in b, whose evidence says b was given an address no other region was.
#[tokio::test]
async fn rt13_1_a_dead_pop_only_one_region_is_given_never_makes_it_degraded() {
    let hosts = [
        "pop.x1.vantage.test",
        "pop.x2.vantage.test",
        "pop.x3.vantage.test",
    ];
    let here: Vec<(&str, &[&str])> = hosts.iter().map(|h| (*h, &["127.0.0.1"][..])).collect();
    let dead: Vec<(&str, &[&str])> = hosts.iter().map(|h| (*h, &["127.0.0.2"][..])).collect();
    let lab = Lab {
        fixture: Fixture::start(&[]).await.unwrap(),
        ca: LabCa::new(),
        dns: LabDns::start(&here).await,
    };
    let pop = LabDns::start(&dead).await;
    let (_front, url) = front(&lab, &hosts, 90).await;
    let good = trusting(&lab);
    let mut sent_elsewhere = good.clone();
    sent_elsewhere.resolver.nameservers = vec![pop.addr];
    let urls: Vec<String> = hosts
        .iter()
        .map(|h| url.replace("mcp.vantage.test", h))
        .collect();
    let degraded = Degraded::default();
    let schedule: Vec<(String, Vec<String>)> = urls
        .iter()
        .map(|u| (u.clone(), vec!["a".into(), "b".into(), "c".into()]))
        .collect();
    degraded.schedule(&schedule);
    for u in &urls {
        let regions = vec![
            region(u, good.clone(), "a").await,
            region(u, sent_elsewhere.clone(), "b").await,
            region(u, good.clone(), "c").await,
        ];
        let report = merged(u, regions, &[]);
        let connect = check(&report, "b", CheckId::NetConnect);
        assert_eq!(connect.outcome, Outcome::Fail, "{}", connect.observed);
        assert!(
            connect.observed.starts_with("127.0.0.2:"),
            "{}",
            connect.observed
        );
        assert_eq!(report.decision, Decision::Blocked, "{}", report.reason);
        let f = report
            .finding(FindingId::EgressBlocked)
            .expect("egress.blocked");
        assert_eq!(
            (f.severity, f.scope, f.regions.clone()),
            (Severity::High, Scope::Regional, vec!["b".to_string()])
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.starts_with("b was given 127.0.0.2, which no other region was given")),
            "{:?}",
            f.evidence
        );
        degraded.record(&report);
    }
    assert_eq!(degraded.len(), 9);
    assert!(
        degraded.regions().is_empty(),
        "a dead POP only b is given made {:?} degraded",
        degraded.regions()
    );
}
