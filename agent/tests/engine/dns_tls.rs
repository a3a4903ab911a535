//! DNS and TLS against real servers on loopback (the fixture's lab): a small authoritative
//! DNS server answering per name, and a TLS front with a lab CA (trusted, or not).

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_fixture::lab::LabDns;
use vantage_fixture::Fixture;

use crate::run::{
    assert_problem_severities, assert_problems, assert_seen, both_families_global, check,
    fleet_vantage, front, lab, named_target, resolving_with, run_with, trusting,
};

use Outcome::{Fail, Warn};
use Severity::{High, Low, Medium};

#[tokio::test]
async fn a_named_https_target_in_the_lab_passes() {
    let lab = lab().await;
    let named = named_target(&lab).await;
    let region = run_with(&named.url, named.clean).await;
    assert_problems(&region, &[]);
    let dns_obs = region.dns.as_ref().unwrap();
    assert_eq!(dns_obs.a, vec!["127.0.0.1".to_string()]);
    assert!(dns_obs.has_a && dns_obs.all_global);
    assert_eq!(check(&region, CheckId::TlsHandshake).outcome, Outcome::Pass);
    assert_eq!(check(&region, CheckId::TlsExpiry).outcome, Outcome::Pass);

    let region = run_with(&named.url, named.not_global).await;
    assert_problem_severities(&region, &[(CheckId::DnsGlobalAddresses, Some(High))]);
    assert!(check(&region, CheckId::DnsGlobalAddresses)
        .observed
        .contains("127.0.0.1 is loopback"));

    let region = run_with(&named.url, named.untrusted).await;
    assert_problems(
        &region,
        &[(CheckId::TlsHandshake, Fail, Some(High), Some(Cause::Tls))],
    );
    let hs = check(&region, CheckId::TlsHandshake);
    assert!(
        hs.observed.contains("UnknownIssuer") || hs.observed.contains("issuer"),
        "{}",
        hs.observed
    );
    assert_eq!(check(&region, CheckId::EraDetect).outcome, Outcome::Skip);
}

#[tokio::test]
async fn a_certificate_for_another_name_or_expiring_soon() {
    let lab = lab().await;
    let opts = trusting(&lab);

    let (_front, url) = front(&lab, &["other.vantage.test"], 90).await;
    let hs = check(&run_with(&url, opts.clone()).await, CheckId::TlsHandshake);
    assert_eq!(hs.outcome, Fail);
    assert!(
        hs.observed.contains("NotValidForName") || hs.observed.contains("name"),
        "{}",
        hs.observed
    );

    let (_front, url) = front(&lab, &["mcp.vantage.test"], 5).await;
    let region = run_with(&url, opts).await;
    let exp = check(&region, CheckId::TlsExpiry);
    assert_eq!((exp.outcome, exp.severity), (Warn, Some(Medium)));
    assert_problems(
        &region,
        &[(CheckId::TlsExpiry, Warn, Some(Medium), exp.cause)],
    );
}

#[tokio::test]
async fn nxdomain_and_aaaa_only_answers() {
    let lab = lab().await;
    let opts = both_families_global(&lab);

    let region = run_with(&lab.url("absent.vantage.test"), opts.clone()).await;
    assert_problems(
        &region,
        &[(CheckId::DnsResolve, Fail, Some(High), Some(Cause::Nxdomain))],
    );
    assert_eq!(region.dns.as_ref().unwrap().rcode, "NXDOMAIN");
    assert_eq!(check(&region, CheckId::NetConnect).outcome, Outcome::Skip);

    let region = run_with(&lab.url("v6only.vantage.test"), opts.clone()).await;
    let a = check(&region, CheckId::DnsARecord);
    assert_seen(
        &a,
        (a.outcome, a.severity),
        (Fail, Some(High)),
        "AAAA only (::1)",
    );
    let dns_obs = region.dns.as_ref().unwrap();
    assert!(!dns_obs.has_a);
    assert_eq!(dns_obs.aaaa, vec!["::1".to_string()]);
    // The fixture listens on IPv4 only: ::1 refuses, so net.connect fails, and net.ipv6 has
    // no IPv4 address to compare with: a skip, never "0 of 1 connected" as a pass.
    assert_eq!(check(&region, CheckId::NetConnect).outcome, Fail);
    let v6 = check(&region, CheckId::NetIpv6);
    assert_eq!(v6.outcome, Outcome::Skip, "{}", v6.observed);

    // Both families resolve; the fixture listens on IPv4 only, so IPv6 fails while IPv4 works.
    let region = run_with(&lab.url("dual.vantage.test"), opts).await;
    let v6 = check(&region, CheckId::NetIpv6);
    assert_seen(
        &v6,
        (v6.outcome, v6.severity),
        (Warn, Some(Low)),
        "every IPv6 connect failed while IPv4 works",
    );
    assert_eq!(check(&region, CheckId::NetConnect).outcome, Outcome::Pass);
    // A plain-http named target is a finding of its own.
    assert_eq!(check(&region, CheckId::TlsPlainHttp).outcome, Fail);
}

#[tokio::test]
async fn a_fleet_vantage_refuses_non_global_addresses() {
    let lab = lab().await;
    let opts = fleet_vantage(resolving_with(&lab.dns));
    let region = run_with(&lab.url("mcp.vantage.test"), opts).await;
    // A refusal is no evidence either way: unknown, with the address, its class and the fix.
    let c = check(&region, CheckId::NetConnect);
    assert_eq!(
        (c.outcome, c.cause),
        (Outcome::Unknown, Some(Cause::PolicyRefused))
    );
    assert_eq!(
        c.observed,
        "refused by egress policy: 127.0.0.1 is loopback (RFC 1122); allow it with probe.allow_non_global"
    );
    let era = check(&region, CheckId::EraDetect);
    assert_seen(&era, era.outcome, Outcome::Skip, "egress policy refused");
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
    let mut opts = resolving_with(&dns);
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];
    let url = format!("http://many.vantage.test:{}/mcp", fixture.addr.port());
    let region = run_with(&url, opts).await;
    let d = region.dns.as_ref().unwrap();
    assert_eq!(
        d.a.len(),
        300,
        "every record arrived (over TCP after the truncated UDP answer)"
    );
    let c = check(&region, CheckId::NetConnect);
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
    assert_eq!((c.outcome, c.cause), (Fail, Some(Cause::Refused)));
}
