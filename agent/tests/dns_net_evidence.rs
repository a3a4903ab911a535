//! Red team round 13: what a vantage's DNS and connect evidence says, through the engine.
//!
//! - Item 2 / nit 5: a zone answering NXDOMAIN for one family while the other has records
//!   passed `dns.resolve` with an observed "NOERROR". Now `dns.resolve` fails (high, cause
//!   `nxdomain`) naming each family's rcode; the addresses it gave are still tried.
//! - Nit 3: a `blackhole` (EINVAL), `prohibit` (EACCES) or `unreachable` (EHOSTUNREACH) route
//!   on the vantage itself stops connect() before anything is sent: that is the vantage's
//!   own routing, `unknown` for cause `no-route` (the merge's `probe.incomplete`), never
//!   `net.connect` failing about the target (`egress.blocked`). Run inside a network
//!   namespace of its own (`unshare --net`, only `lo`, no default route, gone with the
//!   process), with documentation addresses (198.51.100.0/24, 2001:db8::/32).

// The lab and the engine are a test's setup: they unwrap.
#![allow(clippy::unwrap_used)]

use hickory_resolver::proto as dnsproto;
use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, RegionResult, Severity};
use vantage_fixture::lab::LabDns;
use vantage_fixture::Fixture;

#[path = "shared/probe.rs"]
mod shared;

#[path = "shared/family_dns.rs"]
mod family_dns;
use family_dns::{records, FamilyDns, TypeAnswer};

async fn run(url: &str, resolver: std::net::SocketAddr) -> RegionResult {
    let global = ["127.0.0.0/8", "::1/128", "2001:db8::/32", "198.51.100.0/24"];
    shared::run_resolving(url, resolver, &global, true).await
}

use shared::problems;

#[tokio::test]
async fn nxdomain_for_one_family_while_the_other_has_records_fails_dns_resolve() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let port = fixture.addr.port();
    let dns = FamilyDns::start(&[
        (
            "aaaa-nx.vantage.test",
            records(&["127.0.0.1"]),
            TypeAnswer::Nxdomain,
        ),
        ("a-nx.vantage.test", TypeAnswer::Nxdomain, records(&["::1"])),
        ("nodata.vantage.test", records(&["127.0.0.1"]), records(&[])),
    ])
    .await;

    // AAAA NXDOMAIN, A answered: a fail naming both rcodes; the A address is still tried.
    let r = run(&format!("http://aaaa-nx.vantage.test:{port}/mcp"), dns.addr).await;
    let resolve = r.check(CheckId::DnsResolve).unwrap();
    shared::assert_seen(
        resolve,
        (resolve.outcome, resolve.severity, resolve.cause),
        (Outcome::Fail, Some(Severity::High), Some(Cause::Nxdomain)),
        "AAAA answered NXDOMAIN while A answered NOERROR with records (1 A, 0 AAAA)",
    );
    assert!(
        !resolve.observed.starts_with("NOERROR"),
        "{}",
        resolve.observed
    );
    let d = r.dns.as_ref().unwrap();
    assert_eq!(
        (d.rcode.as_str(), d.a_rcode.as_str(), d.aaaa_rcode.as_str()),
        ("NXDOMAIN", "NOERROR", "NXDOMAIN")
    );
    assert_eq!(r.check(CheckId::NetConnect).unwrap().outcome, Outcome::Pass);
    assert_eq!(
        problems(&r),
        vec![CheckId::DnsResolve, CheckId::TlsPlainHttp]
    );

    // The reverse: A NXDOMAIN, AAAA answered; no A record is its own finding too.
    let r = run(&format!("http://a-nx.vantage.test:{port}/mcp"), dns.addr).await;
    let resolve = r.check(CheckId::DnsResolve).unwrap();
    shared::assert_seen(
        resolve,
        (resolve.outcome, resolve.severity, resolve.cause),
        (Outcome::Fail, Some(Severity::High), Some(Cause::Nxdomain)),
        "A answered NXDOMAIN while AAAA answered NOERROR with records (0 A, 1 AAAA)",
    );
    assert!(
        problems(&r).contains(&CheckId::DnsARecord),
        "{:?}",
        r.checks
    );

    // A control: AAAA answered NOERROR without data is a clean answer.
    let r = run(&format!("http://nodata.vantage.test:{port}/mcp"), dns.addr).await;
    let resolve = r.check(CheckId::DnsResolve).unwrap();
    shared::assert_seen(
        resolve,
        (resolve.outcome, resolve.severity, resolve.cause),
        (Outcome::Pass, None, None),
        "NOERROR: 1 A, 0 AAAA",
    );
}

#[test]
fn a_blackhole_or_prohibit_route_is_the_vantages_own_routing() {
    shared::in_a_namespace(
        "ip route add blackhole 198.51.100.20/32 \
         && ip route add prohibit 198.51.100.21/32 \
         && ip route add unreachable 198.51.100.22/32 \
         && ip -6 route add blackhole 2001:db8::30/128",
        "inside_a_namespace_with_local_routes",
    );
}

#[tokio::test]
#[ignore = "runs inside a network namespace with local routes: started by a_blackhole_or_prohibit_route_is_the_vantages_own_routing"]
async fn inside_a_namespace_with_local_routes() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let port = fixture.addr.port();
    let dns = LabDns::start(&[
        ("bh.vantage.test", &["198.51.100.20"]),
        ("pr.vantage.test", &["198.51.100.21"]),
        ("ur.vantage.test", &["198.51.100.22"]),
        ("mixbh.vantage.test", &["127.0.0.1", "198.51.100.20"]),
        ("bh6.vantage.test", &["127.0.0.1", "2001:db8::30"]),
    ])
    .await;

    for (name, words) in [
        ("bh", "a blackhole route on this vantage"),
        ("pr", "a prohibit route on this vantage"),
        ("ur", "an unreachable route on this vantage"),
    ] {
        let r = run(&format!("http://{name}.vantage.test:{port}/mcp"), dns.addr).await;
        let connect = r.check(CheckId::NetConnect).unwrap();
        shared::assert_seen(
            connect,
            (connect.outcome, connect.severity, connect.cause),
            (Outcome::Unknown, None, Some(Cause::NoRoute)),
            words,
        );
        assert!(
            connect.observed.contains("nothing was sent"),
            "{}",
            connect.observed
        );
        assert_eq!(problems(&r), vec![], "{name}: {:?}", r.checks);
    }

    // One IPv4 address blackholed here, the other connects: still no evidence about it.
    let r = run(&format!("http://mixbh.vantage.test:{port}/mcp"), dns.addr).await;
    let connect = r.check(CheckId::NetConnect).unwrap();
    shared::assert_seen(
        connect,
        (connect.outcome, connect.severity, connect.cause),
        (Outcome::Unknown, None, Some(Cause::NoRoute)),
        "a blackhole route on this vantage",
    );
    assert!(
        connect.observed.contains("127.0.0.1:") && connect.observed.contains("connected"),
        "{}",
        connect.observed
    );

    // The only IPv6 address blackholed here while IPv4 works: net.ipv6 is unknown, not a
    // warning about the target's IPv6.
    let r = run(&format!("http://bh6.vantage.test:{port}/mcp"), dns.addr).await;
    let v6 = r.check(CheckId::NetIpv6).unwrap();
    assert_eq!(
        (v6.outcome, v6.severity, v6.cause),
        (Outcome::Unknown, None, Some(Cause::NoRoute)),
        "{}",
        v6.observed
    );
    assert_eq!(r.check(CheckId::NetConnect).unwrap().outcome, Outcome::Pass);
}
