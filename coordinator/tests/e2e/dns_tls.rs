//! DNS and TLS against real servers on loopback (the fixture's lab): what the merge makes of
//! a named target behind a TLS front, a lab CA trusted or not, NXDOMAIN, AAAA-only answers
//! and a fleet vantage's egress refusal. Each check's own outcome, cause and observation is
//! the agent's test (`agent/tests/engine/dns_tls.rs`).

use vantage_agent::model::Severity;
use vantage_coordinator::report::Decision;

use crate::support::shared::{both_families_global, fleet_vantage};
use crate::support::{
    above_info, check_with, front, ids, lab, named_target, resolving_with, trusting,
};

#[tokio::test]
async fn a_named_https_target_in_the_lab_passes_end_to_end() {
    let lab = lab().await;
    let named = named_target(&lab).await;
    let report = check_with(&named.url, named.clean).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.decision, Decision::Pass);

    let report = check_with(&named.url, named.not_global).await;
    assert_eq!(
        above_info(&report),
        ids(&[("dns.non-global-address", Severity::High)])
    );

    let report = check_with(&named.url, named.untrusted).await;
    assert_eq!(
        above_info(&report),
        ids(&[("tls.handshake", Severity::High)])
    );
}

#[tokio::test]
async fn a_certificate_expiring_soon_needs_review() {
    let lab = lab().await;
    let (_front, url) = front(&lab, &["mcp.vantage.test"], 5).await;
    let report = check_with(&url, trusting(&lab)).await;
    assert_eq!(
        above_info(&report),
        ids(&[("tls.expiry", Severity::Medium)])
    );
    assert_eq!(report.decision, Decision::Review);
}

#[tokio::test]
async fn nxdomain_and_aaaa_only_answers() {
    let lab = lab().await;
    let opts = both_families_global(&lab);

    let report = check_with(&lab.url("absent.vantage.test"), opts.clone()).await;
    assert_eq!(above_info(&report), ids(&[("dns.resolve", Severity::High)]));

    let report = check_with(&lab.url("v6only.vantage.test"), opts).await;
    let found = above_info(&report);
    assert!(
        found.contains(&("dns.no-a-record".to_string(), Severity::High)),
        "{found:?}"
    );
}

#[tokio::test]
async fn a_fleet_vantage_refuses_non_global_addresses() {
    let lab = lab().await;
    let opts = fleet_vantage(resolving_with(&lab.dns));
    let report = check_with(&lab.url("mcp.vantage.test"), opts).await;
    // The refusal (net.connect unknown, policy-refused: the agent's test) is a finding of
    // its own, with the fix.
    let f = report
        .finding(vantage_agent::catalog::FindingId::ProbePolicyRefused)
        .expect("probe.policy-refused");
    assert!(
        f.remediation.contains("probe.allow_non_global"),
        "{}",
        f.remediation
    );
    assert_eq!(report.decision, Decision::Blocked);
}
