//! Red team round 13, items 2 and 6, through the merge: several in-process regions against
//! the named https target, merged into one report.
//!
//! - 2: a zone answering NXDOMAIN for AAAA while A has records, in one region only, passed
//!   (exit 0). That region's `dns.resolve` now fails (the zone's answer, cause `nxdomain`),
//!   so the merge classes its answer NXDOMAIN against the others' addresses:
//!   `dns.split-horizon` regional, blocked; in every region, `dns.resolve` global.
//! - 6: an A set with one global and one non-global address passed `net.connect` with the
//!   refused address unobserved. `net.connect` is now `unknown` (policy-refused): the merge
//!   names `probe.policy-refused`, and `dns.non-global-address` still blocks.

use hickory_proto as dnsproto;
use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_coordinator::report::{Decision, Scope};

use crate::dns_resolver_faults_support::{check, fleet, named, region};
use crate::support::shared::lab_with;
use crate::support::{above_info, ids};

#[path = "../../../agent/tests/shared/family_dns.rs"]
mod family_dns;
use family_dns::{records, FamilyDns, TypeAnswer};

#[tokio::test]
async fn rt13_2_nxdomain_for_aaaa_in_one_region_is_a_split_horizon() {
    let lab = lab_with(&[]).await;
    let host = "aaaanx.vantage.test";
    let good = FamilyDns::start(&[(host, records(&["127.0.0.1"]), records(&[]))]).await;
    let nx = FamilyDns::start(&[(host, records(&["127.0.0.1"]), TypeAnswer::Nxdomain)]).await;
    let (_front, url, opts) = named(&lab, host, good.addr).await;
    let mut ap_opts = opts.clone();
    ap_opts.resolver.nameservers = vec![nx.addr];
    let eu = region(&url, opts.clone(), "eu").await;
    let us = region(&url, opts.clone(), "us").await;
    let ap = region(&url, ap_opts.clone(), "ap").await;
    let report = fleet(&url, vec![eu, us, ap]);
    let resolve = check(&report, "ap", CheckId::DnsResolve);
    assert_eq!(
        (resolve.outcome, resolve.severity, resolve.cause),
        (Outcome::Fail, Some(Severity::High), Some(Cause::Nxdomain)),
        "{}",
        resolve.observed
    );
    assert_eq!(
        check(&report, "eu", CheckId::DnsResolve).outcome,
        Outcome::Pass
    );
    let f = report
        .finding(FindingId::DnsSplitHorizon)
        .unwrap_or_else(|| panic!("dns.split-horizon: {:#?}", report.findings));
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::High, Scope::Regional, vec!["ap".to_string()])
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("AAAA answered NXDOMAIN while A answered NOERROR")),
        "{:?}",
        f.evidence
    );
    assert_eq!(
        above_info(&report),
        ids(&[("dns.split-horizon", Severity::High)])
    );
    assert_eq!(report.decision, Decision::Blocked);

    // Every region gets it: the zone's own fault, dns.resolve global.
    let regions = vec![
        region(&url, ap_opts.clone(), "eu").await,
        region(&url, ap_opts, "ap").await,
    ];
    let report = fleet(&url, regions);
    let f = report
        .finding(FindingId::DnsResolve)
        .unwrap_or_else(|| panic!("dns.resolve: {:#?}", report.findings));
    assert_eq!((f.severity, f.scope), (Severity::High, Scope::Global));
    assert!(report.finding(FindingId::DnsSplitHorizon).is_none());
    assert_eq!(report.decision, Decision::Blocked);
}

#[tokio::test]
async fn rt13_6_an_address_refused_by_policy_beside_a_working_one_is_policy_refused() {
    let host = "multing.vantage.test";
    let lab = lab_with(&[(host, &["127.0.0.1", "100.64.13.10"])]).await;
    let (_front, url, mut opts) = named(&lab, host, lab.dns.addr).await;
    // A fleet agent: the policy applies to the target too (nothing is sent to 100.64/10).
    opts.allow_named_target = false;
    let eu = region(&url, opts.clone(), "eu").await;
    let us = region(&url, opts, "us").await;
    let report = fleet(&url, vec![eu, us]);
    let connect = check(&report, "eu", CheckId::NetConnect);
    assert_eq!(
        (connect.outcome, connect.cause),
        (Outcome::Unknown, Some(Cause::PolicyRefused)),
        "{}",
        connect.observed
    );
    assert!(
        connect
            .observed
            .contains("refused by egress policy: 100.64.13.10 is shared address space"),
        "{}",
        connect.observed
    );
    let refused = report
        .finding(FindingId::ProbePolicyRefused)
        .unwrap_or_else(|| panic!("probe.policy-refused: {:#?}", report.findings));
    assert_eq!(refused.regions, vec!["eu".to_string(), "us".to_string()]);
    let ng = report
        .finding(FindingId::DnsNonGlobalAddress)
        .unwrap_or_else(|| panic!("dns.non-global-address: {:#?}", report.findings));
    assert_eq!((ng.severity, ng.scope), (Severity::High, Scope::Global));
    assert_eq!(
        above_info(&report),
        ids(&[
            ("dns.non-global-address", Severity::High),
            ("probe.policy-refused", Severity::Medium)
        ])
    );
    assert_eq!(report.decision, Decision::Blocked);
}
