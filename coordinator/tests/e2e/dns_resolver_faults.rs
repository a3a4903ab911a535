//! Red team round 6, defects 6, 8 and 2: what a vantage's resolver did is told apart from
//! what the zone holds. A tiny UDP responder on loopback (`dns_resolver_faults_support`)
//! plays the faulty resolver: a failed AAAA (or A) query beside a good answer, SERVFAIL on a
//! metadata host, an answer whose records belong to another owner, a CNAME loop and a
//! dangling CNAME. The lab's DNS server is the good resolver of the other region. Each case
//! asserts the checks, the findings (id, severity, regions), the decision and the exit
//! code; the zone's faults (NXDOMAIN, the CNAME faults) stay findings.

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_coordinator::exit::{for_report, FailOn};
use vantage_coordinator::report::Decision;

use crate::dns_resolver_faults_support::{check, dns_of, fleet, hostile_dns, named, region};
use crate::evidence_support::canned;
use crate::support::shared::{assert_not_seen, assert_seen, assert_seen_all, lab_with};
use crate::support::{above_info, check_with, ids};

/// 6: a failed AAAA query beside a good A answer was "NOERROR: 1 A, 0 AAAA" (pass), net.ipv6
/// "no IPv6 address" and a PASS. Now the AAAA leg is unknown, net.ipv6 unknown, the dns
/// block says which query failed, and `probe.resolver-failed` makes the decision unknown.
#[tokio::test]
async fn rt6_6_a_failed_aaaa_query_is_unknown_never_no_ipv6() {
    let lab = lab_with(&[]).await;
    let hostile = hostile_dns().await;
    for (label, rcode, words) in [
        ("aaaasf", "SERVFAIL", "the resolver answered SERVFAIL"),
        ("aaaadrop", "TIMEOUT", "no usable answer from the resolver"),
    ] {
        let host = format!("{label}.vantage.test");
        let (_front, url, opts) = named(&lab, &host, hostile.addr).await;
        let report = check_with(&url, opts).await;
        let resolve = check(&report, "local", CheckId::DnsResolve);
        assert_eq!(
            (resolve.outcome, resolve.cause),
            (Outcome::Unknown, Some(Cause::ResolverError)),
            "{label}: {}",
            resolve.observed
        );
        assert!(
            resolve
                .observed
                .contains(&format!("the AAAA query failed ({rcode}): {words}"))
                && resolve.observed.contains("A answered (127.0.0.1)")
                && !resolve.observed.contains("0 AAAA"),
            "{label}: {}",
            resolve.observed
        );
        let v6 = check(&report, "local", CheckId::NetIpv6);
        assert_eq!(
            (v6.outcome, v6.cause),
            (Outcome::Unknown, Some(Cause::ResolverError)),
            "{label}: {}",
            v6.observed
        );
        assert!(!v6.observed.contains("no IPv6 address"), "{}", v6.observed);
        assert_eq!(
            check(&report, "local", CheckId::DnsARecord).outcome,
            Outcome::Pass
        );
        let dns = dns_of(&report, "local");
        assert_eq!(
            (
                dns.rcode.as_str(),
                dns.a_rcode.as_str(),
                dns.aaaa_rcode.as_str()
            ),
            (rcode, "NOERROR", rcode)
        );
        assert_eq!(dns.a, vec!["127.0.0.1".to_string()]);
        // The target itself is clean: only the vantage's resolver is named.
        assert_eq!(
            above_info(&report),
            ids(&[("probe.resolver-failed", Severity::Medium)]),
            "{label}: {:#?}",
            report.findings
        );
        assert_eq!(report.decision, Decision::Unknown, "{label}");
        assert_eq!(for_report(&report, FailOn::Blocked), 4, "{label}");
    }

    // The nit: the A query failed and AAAA answered "no data": the dns block's rcode is the
    // failure, never a clean NOERROR.
    let (_front, url, opts) = named(&lab, "asf.vantage.test", hostile.addr).await;
    let report = check_with(&url, opts).await;
    let dns = dns_of(&report, "local");
    assert_eq!(
        (
            dns.rcode.as_str(),
            dns.a_rcode.as_str(),
            dns.aaaa_rcode.as_str()
        ),
        ("SERVFAIL", "SERVFAIL", "NOERROR")
    );
    assert_eq!(
        check(&report, "local", CheckId::DnsResolve).outcome,
        Outcome::Unknown
    );
    assert_eq!(report.decision, Decision::Unknown);
}

/// 6, in a fleet: region b's AAAA query failed while a got A and AAAA. That was
/// `dns.answers-differ` with "b: 127.0.0.1 (global)", a claim about the zone b never
/// received. Now b's AAAA is left out of the comparison: no DNS finding, only
/// `probe.resolver-failed` in b.
#[tokio::test]
async fn rt6_6_a_failed_aaaa_query_is_left_out_of_answer_comparisons() {
    let lab = lab_with(&[("aaaasf.vantage.test", &["127.0.0.1", "::1"])]).await;
    let good = &lab.dns;
    let hostile = hostile_dns().await;
    let host = "aaaasf.vantage.test";
    let (_front, url, mut opts) = named(&lab, host, good.addr).await;
    opts.assume_global.push("::1/128".parse().unwrap());
    let a = region(&url, opts.clone(), "a").await;
    let mut bad = opts;
    bad.resolver.nameservers = vec![hostile.addr];
    let b = region(&url, bad, "b").await;
    let report = fleet(&url, vec![a, b]);
    for id in [FindingId::DnsAnswersDiffer, FindingId::DnsSplitHorizon] {
        assert!(report.finding(id).is_none(), "{id}: {:#?}", report.findings);
    }
    let f = report
        .finding(FindingId::ProbeResolverFailed)
        .expect("probe.resolver-failed");
    assert_eq!(
        (f.severity, f.regions.clone()),
        (Severity::Medium, vec!["b".to_string()])
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("the AAAA query failed (SERVFAIL)")),
        "{:?}",
        f.evidence
    );
    assert_eq!(report.decision, Decision::Unknown);
}

/// 8: SERVFAIL while resolving the metadata host named by the challenge was "no A or AAAA
/// records": `auth.prm` high, blocked. Now `auth.prm` is unknown, `probe.resolver-failed`
/// says the resolver answered SERVFAIL, exit 4. NXDOMAIN for the host stays a failure.
#[tokio::test]
async fn rt6_8_a_resolver_failure_on_a_metadata_host_is_the_vantages() {
    let hostile = hostile_dns().await;
    for (challenge, zone_fault) in [
        (
            r#"Bearer resource_metadata="http://metasf.vantage.test:9/.well-known/oauth-protected-resource/mcp""#,
            false,
        ),
        (
            r#"Bearer resource_metadata="http://metanx.vantage.test:9/.well-known/oauth-protected-resource/mcp""#,
            true,
        ),
    ] {
        let (addr, _) = canned(401, Box::leak(Box::new([("www-authenticate", challenge)]))).await;
        let url = format!("http://{addr}/mcp");
        let mut opts = crate::support::options();
        opts.resolver.nameservers = vec![hostile.addr];
        let report = check_with(&url, opts.clone()).await;
        let prm = check(&report, "local", CheckId::AuthPrm);
        if zone_fault {
            assert_seen(
                &prm,
                (prm.outcome, prm.severity),
                (Outcome::Fail, Some(Severity::High)),
                "NXDOMAIN",
            );
            assert!(report.finding(FindingId::AuthPrm).is_some());
            assert!(report.finding(FindingId::ProbeResolverFailed).is_none());
            continue;
        }
        assert_seen_all(
            &prm,
            (prm.outcome, prm.cause),
            (Outcome::Unknown, Some(Cause::ResolverError)),
            &["the resolver answered SERVFAIL"],
        );
        assert_not_seen(&prm, &["no A or AAAA records"]);
        assert!(
            report.finding(FindingId::AuthPrm).is_none(),
            "{:#?}",
            report.findings
        );
        let f = report
            .finding(FindingId::ProbeResolverFailed)
            .expect("probe.resolver-failed");
        assert!(f.evidence[0].contains("auth.prm"), "{:?}", f.evidence);
        assert_eq!(report.decision, Decision::Unknown);
        assert_eq!(for_report(&report, FailOn::Blocked), 4);

        // In a fleet where another region read the document (its auth.prm passed), b's
        // resolver failure is no divergence of the edge: edge.divergent needs a failure.
        let b = region(&url, opts.clone(), "b").await;
        let mut a = b.clone();
        a.region = "a".into();
        // (auth.metadata-redirect had the same unresolved URL: a read it too.)
        for c in a
            .checks
            .iter_mut()
            .filter(|c| c.cause == Some(Cause::ResolverError))
        {
            (c.outcome, c.cause) = (Outcome::Pass, None);
        }
        assert_eq!(a.check(CheckId::AuthPrm).unwrap().outcome, Outcome::Pass);
        let report = fleet(&url, vec![a, b]);
        for id in [FindingId::EdgeDivergent, FindingId::AuthPrm] {
            assert!(report.finding(id).is_none(), "{id}: {:#?}", report.findings);
        }
        let f = report.finding(FindingId::ProbeResolverFailed).unwrap();
        assert_eq!(f.regions, vec!["b".to_string()]);
        assert_eq!(report.decision, Decision::Unknown);
    }
}

/// 2: an answer whose A record belongs to another owner was the zone's "NOERROR (no
/// addresses)": `dns.resolve` high, and in a fleet `dns.split-horizon` high. Now it is the
/// resolver's fault, named with the owner; the other region's clean answer stands.
#[tokio::test]
async fn rt6_2_an_answer_for_another_owner_is_the_resolvers_fault() {
    let lab = lab_with(&[("other.vantage.test", &["127.0.0.1"])]).await;
    let good = &lab.dns;
    let hostile = hostile_dns().await;
    let (_front, url, opts) = named(&lab, "other.vantage.test", hostile.addr).await;
    let report = check_with(&url, opts.clone()).await;
    let resolve = check(&report, "local", CheckId::DnsResolve);
    assert_seen_all(
        &resolve,
        (resolve.outcome, resolve.cause),
        (Outcome::Unknown, Some(Cause::ResolverError)),
        &["answer for other.vantage.test", "elsewhere.vantage.test A"],
    );
    assert_not_seen(&resolve, &["no A or AAAA"]);
    assert_eq!(dns_of(&report, "local").a_rcode, "MISMATCH");
    assert_eq!(
        above_info(&report),
        ids(&[("probe.resolver-failed", Severity::Medium)])
    );
    assert_eq!(for_report(&report, FailOn::Blocked), 4);

    let mut clean = opts.clone();
    clean.resolver.nameservers = vec![good.addr];
    let a = region(&url, clean, "a").await;
    let b = region(&url, opts, "b").await;
    let report = fleet(&url, vec![a, b]);
    assert!(
        report.finding(FindingId::DnsSplitHorizon).is_none(),
        "{:#?}",
        report.findings
    );
    assert!(
        report.finding(FindingId::DnsResolve).is_none(),
        "{:#?}",
        report.findings
    );
    let f = report.finding(FindingId::ProbeResolverFailed).unwrap();
    assert_eq!(f.regions, vec!["b".to_string()]);
    assert_eq!(report.decision, Decision::Unknown);

    // Control: an owner written in other letter case is the name asked, not another owner.
    let (_front, url, opts) = named(&lab, "upper.vantage.test", hostile.addr).await;
    let report = check_with(&url, opts).await;
    let resolve = check(&report, "local", CheckId::DnsResolve);
    assert_eq!(resolve.outcome, Outcome::Pass, "{}", resolve.observed);
    assert_eq!(dns_of(&report, "local").a, vec!["127.0.0.1".to_string()]);
    assert_eq!(report.decision, Decision::Pass, "{:#?}", report.findings);
}
/// 2 (the zone's CNAME faults): a CNAME loop was "NOERROR but no A or AAAA records" with
/// `cname: []` and a delegation fix; a dangling CNAME was "the name does not exist". Now the
/// chain is recorded and named, with a fix for that fault.
#[tokio::test]
async fn rt6_2_cname_loops_and_dangling_cnames_are_named_with_their_chain() {
    let hostile = hostile_dns().await;
    let port = crate::support::closed_port();
    let mut opts = crate::support::options();
    opts.resolver.nameservers = vec![hostile.addr];
    for (label, cause, words, cname, fix) in [
        (
            "loop",
            Cause::NoAnswer,
            "CNAME loop loop.vantage.test -> loop2.vantage.test -> loop.vantage.test",
            vec!["loop2.vantage.test.", "loop.vantage.test."],
            "break the loop",
        ),
        (
            "dangle",
            Cause::Nxdomain,
            "CNAME (dangle.vantage.test -> gone.vantage.test) to gone.vantage.test, which does not exist",
            vec!["gone.vantage.test."],
            "dangling CNAME",
        ),
    ] {
        let url = format!("http://{label}.vantage.test:{port}/mcp");
        let report = check_with(&url, opts.clone()).await;
        let resolve = check(&report, "local", CheckId::DnsResolve);
        assert_eq!(
            (resolve.outcome, resolve.severity, resolve.cause),
            (Outcome::Fail, Some(Severity::High), Some(cause)),
            "{label}: {}",
            resolve.observed
        );
        assert!(resolve.observed.contains(words), "{label}: {}", resolve.observed);
        assert_eq!(dns_of(&report, "local").cname, cname, "{label}");
        let f = report.finding(FindingId::DnsResolve).expect("dns.resolve");
        assert_eq!(f.severity, Severity::High);
        assert!(f.remediation.contains(fix), "{label}: {}", f.remediation);
        assert!(!f.remediation.contains("delegation"), "{}", f.remediation);
        assert_eq!(report.decision, Decision::Blocked);
    }
}

/// The nit: hickory's own WARN lines ("detected forged question section") reached the
/// CLI's stderr at the default log level, and the evidence said "no answer" although answers
/// arrived. An answer with a forged question leaves stderr quiet; the run still ends as the
/// vantage's resolver failure, whose evidence says such answers are dropped.
#[tokio::test]
async fn rt6_hickory_warnings_stay_out_of_the_clis_stderr() {
    let hostile = hostile_dns().await;
    let port = crate::support::closed_port();
    let url = format!("http://forged.vantage.test:{port}/mcp");
    let ns = hostile.addr.to_string();
    let out = crate::support::vantage_env(
        &[
            "check",
            &url,
            "--nameserver",
            &ns,
            "--check-timeout",
            "1s",
            "-f",
            "json",
        ],
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("hickory") && !stderr.contains("forged"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["decision"], "unknown");
    // What the vantage cannot tell apart from silence is said, not "no answer" flatly.
    let resolve = report["regions"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "dns.resolve")
        .unwrap()
        .clone();
    assert_eq!(
        (resolve["outcome"].as_str(), resolve["cause"].as_str()),
        (Some("unknown"), Some("resolver-error"))
    );
    let observed = resolve["observed"].as_str().unwrap();
    assert!(
        observed.contains("did not match the question or could not be read"),
        "{observed}"
    );
}
