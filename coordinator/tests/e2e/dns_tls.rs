//! DNS and TLS against real servers on loopback: a small authoritative DNS server answering
//! per name, and a TLS front with a lab CA (trusted with --ca-file, or not).

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_agent::probe::dns::ResolverChoice;
use vantage_coordinator::report::Decision;
use vantage_fixture::Fixture;

use crate::support::{above_info, check_with, ids, options, outcome, LabCa, LabDns, TlsFront};

async fn lab() -> (Fixture, LabCa, LabDns) {
    let fixture = Fixture::start(&[]).await.unwrap();
    let ca = LabCa::new();
    let dns = LabDns::start(&[
        ("mcp.vantage.test", &["127.0.0.1"]),
        ("v6only.vantage.test", &["::1"]),
        ("dual.vantage.test", &["127.0.0.1", "::1"]),
    ])
    .await;
    (fixture, ca, dns)
}

#[tokio::test]
async fn a_named_https_target_in_the_lab_passes_end_to_end() {
    let (fixture, ca, dns) = lab().await;
    let (cert, key) = ca.leaf(&["mcp.vantage.test"], 90);
    let front = TlsFront::start(fixture.addr, &cert, &key).await;
    let url = format!("https://mcp.vantage.test:{}/mcp", front.addr.port());
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    opts.extra_ca_pem = Some(ca.ca_pem.clone().into_bytes());
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];
    let report = check_with(&url, opts.clone()).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.decision, Decision::Pass);
    let dns_obs = report.regions[0].dns.as_ref().unwrap();
    assert_eq!(dns_obs.a, vec!["127.0.0.1".to_string()]);
    assert!(dns_obs.has_a && dns_obs.all_global);
    assert_eq!(
        outcome(&report, CheckId::TlsHandshake).outcome,
        Outcome::Pass
    );
    assert_eq!(outcome(&report, CheckId::TlsExpiry).outcome, Outcome::Pass);

    // Without --assume-global, loopback is what it is: not globally routable.
    opts.assume_global.clear();
    let report = check_with(&url, opts.clone()).await;
    assert_eq!(
        above_info(&report),
        ids(&[("dns.non-global-address", Severity::High)])
    );
    assert!(outcome(&report, CheckId::DnsGlobalAddresses)
        .observed
        .contains("127.0.0.1 is loopback"));

    // Without the lab CA, the chain is untrusted.
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];
    opts.extra_ca_pem = None;
    let report = check_with(&url, opts).await;
    assert_eq!(
        above_info(&report),
        ids(&[("tls.handshake", Severity::High)])
    );
    let hs = outcome(&report, CheckId::TlsHandshake);
    assert_eq!(hs.cause, Some(Cause::Tls));
    assert!(
        hs.observed.contains("UnknownIssuer") || hs.observed.contains("issuer"),
        "{}",
        hs.observed
    );
    assert_eq!(outcome(&report, CheckId::EraDetect).outcome, Outcome::Skip);
}

#[tokio::test]
async fn a_certificate_for_another_name_or_expiring_soon() {
    let (fixture, ca, dns) = lab().await;
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    opts.extra_ca_pem = Some(ca.ca_pem.clone().into_bytes());
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];

    let (cert, key) = ca.leaf(&["other.vantage.test"], 90);
    let front = TlsFront::start(fixture.addr, &cert, &key).await;
    let report = check_with(
        &format!("https://mcp.vantage.test:{}/mcp", front.addr.port()),
        opts.clone(),
    )
    .await;
    let hs = outcome(&report, CheckId::TlsHandshake);
    assert_eq!(hs.outcome, Outcome::Fail);
    assert!(
        hs.observed.contains("NotValidForName") || hs.observed.contains("name"),
        "{}",
        hs.observed
    );

    let (cert, key) = ca.leaf(&["mcp.vantage.test"], 5);
    let front = TlsFront::start(fixture.addr, &cert, &key).await;
    let report = check_with(
        &format!("https://mcp.vantage.test:{}/mcp", front.addr.port()),
        opts,
    )
    .await;
    let exp = outcome(&report, CheckId::TlsExpiry);
    assert_eq!(
        (exp.outcome, exp.severity),
        (Outcome::Warn, Some(Severity::Medium))
    );
    assert_eq!(
        above_info(&report),
        ids(&[("tls.expiry", Severity::Medium)])
    );
    assert_eq!(report.decision, Decision::Review);
}

#[tokio::test]
async fn nxdomain_and_aaaa_only_answers() {
    let (fixture, _ca, dns) = lab().await;
    let port = fixture.addr.port();
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];

    let report = check_with(
        &format!("http://absent.vantage.test:{port}/mcp"),
        opts.clone(),
    )
    .await;
    assert_eq!(above_info(&report), ids(&[("dns.resolve", Severity::High)]));
    assert_eq!(report.regions[0].dns.as_ref().unwrap().rcode, "NXDOMAIN");
    assert_eq!(
        outcome(&report, CheckId::DnsResolve).cause,
        Some(Cause::Nxdomain)
    );
    assert_eq!(outcome(&report, CheckId::NetConnect).outcome, Outcome::Skip);

    let report = check_with(
        &format!("http://v6only.vantage.test:{port}/mcp"),
        opts.clone(),
    )
    .await;
    let found = above_info(&report);
    assert!(
        found.contains(&("dns.no-a-record".to_string(), Severity::High)),
        "{found:?}"
    );
    let dns_obs = report.regions[0].dns.as_ref().unwrap();
    assert!(!dns_obs.has_a);
    assert_eq!(dns_obs.aaaa, vec!["::1".to_string()]);

    // Both families resolve; the fixture listens on IPv4 only, so IPv6 fails while IPv4 works.
    let report = check_with(&format!("http://dual.vantage.test:{port}/mcp"), opts).await;
    let v6 = outcome(&report, CheckId::NetIpv6);
    assert_eq!(
        (v6.outcome, v6.severity),
        (Outcome::Warn, Some(Severity::Low)),
        "{}",
        v6.observed
    );
    assert_eq!(outcome(&report, CheckId::NetConnect).outcome, Outcome::Pass);
    // A plain-http named target is a finding of its own.
    assert_eq!(
        outcome(&report, CheckId::TlsPlainHttp).outcome,
        Outcome::Fail
    );
}

#[tokio::test]
async fn a_fleet_vantage_refuses_non_global_addresses() {
    let (fixture, _ca, dns) = lab().await;
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    opts.allow_named_target = false;
    let report = check_with(
        &format!("http://mcp.vantage.test:{}/mcp", fixture.addr.port()),
        opts,
    )
    .await;
    // A refusal is no evidence either way: unknown, with the address, its class and the fix.
    let c = outcome(&report, CheckId::NetConnect);
    assert_eq!(
        (c.outcome, c.cause),
        (Outcome::Unknown, Some(Cause::PolicyRefused))
    );
    assert_eq!(
        c.observed,
        "refused by egress policy: 127.0.0.1 is loopback (RFC 1122); allow it with probe.allow_non_global"
    );
    let era = outcome(&report, CheckId::EraDetect);
    assert_eq!(era.outcome, Outcome::Skip);
    assert!(
        era.observed.contains("egress policy refused"),
        "{}",
        era.observed
    );
    let f = report
        .finding(vantage_agent::catalog::FindingId::ProbePolicyRefused)
        .expect("probe.policy-refused");
    assert!(
        f.remediation.contains("probe.allow_non_global"),
        "{}",
        f.remediation
    );
    assert_eq!(
        report.decision,
        vantage_coordinator::report::Decision::Blocked
    );
}

#[tokio::test]
async fn a_dns_answer_with_hundreds_of_records_costs_a_bounded_number_of_connections() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let mut addrs: Vec<std::net::IpAddr> = vec!["127.0.0.1".parse().unwrap()];
    addrs.extend(
        (1..300u32).map(|i| std::net::IpAddr::from([127, 0, (i / 250 + 1) as u8, (i % 250) as u8])),
    );
    let table = [("many.vantage.test.".to_string(), addrs)]
        .into_iter()
        .collect();
    let dns = LabDns::start_table(table).await;
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];
    let report = check_with(
        &format!("http://many.vantage.test:{}/mcp", fixture.addr.port()),
        opts,
    )
    .await;
    let d = report.regions[0].dns.as_ref().unwrap();
    assert_eq!(
        d.a.len(),
        300,
        "every record arrived (over TCP after the truncated UDP answer)"
    );
    let c = outcome(&report, CheckId::NetConnect);
    assert!(
        c.observed.contains("more addresses not tried"),
        "{}",
        c.observed
    );
    let tried = c.observed.split("; ").count();
    assert_eq!(
        tried,
        vantage_agent::probe::connect::MAX_ADDRESSES,
        "{}",
        c.observed
    );
    // The fixture listens on 127.0.0.1 only: the other IPv4 addresses tried refuse.
    assert_eq!((c.outcome, c.cause), (Outcome::Fail, Some(Cause::Refused)));
}
