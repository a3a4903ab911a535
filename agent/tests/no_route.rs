//! Red team round 6, #10: connect() failing on the vantage itself (ENETUNREACH: this host has
//! no route for the address; EADDRNOTAVAIL: no source address) sent nothing, so nothing
//! about the target was observed. It was `net.ipv6` warn "every IPv6 connect failed" and
//! `net.connect` high "There is no route to the address" about the target. Now both are
//! `unknown` for cause `no-route` (the merge's `probe.incomplete`, naming the vantage's
//! network).
//!
//! The engine runs inside a network namespace of its own with only `lo` (`unshare --net`:
//! no default route, nothing leaves it, and it is gone when the process ends): the outer
//! test starts this test binary's inner test there. The addresses are documentation ranges
//! (2001:db8::/32, 198.51.100.0/24), unreachable in that namespace by construction.

// The lab and the engine are a test's setup: they unwrap.
#![allow(clippy::unwrap_used)]

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, RegionResult};
use vantage_fixture::lab::LabDns;
use vantage_fixture::Fixture;

#[path = "shared/probe.rs"]
mod shared;

#[test]
fn a_missing_route_is_the_vantages_own_not_the_targets() {
    shared::in_a_namespace("", "inside_a_namespace_without_routes");
}

async fn run(url: &str, dns: &LabDns) -> RegionResult {
    run_with(url, dns, true).await
}

/// `ipv6` false: the vantage declared it has no IPv6 (`--no-ipv6`).
async fn run_with(url: &str, dns: &LabDns, ipv6: bool) -> RegionResult {
    let global = ["127.0.0.0/8", "2001:db8::/32", "198.51.100.0/24"];
    shared::run_resolving(url, dns.addr, &global, ipv6).await
}

use shared::problems;

#[tokio::test]
#[ignore = "runs inside a network namespace without routes: started by a_missing_route_is_the_vantages_own_not_the_targets"]
async fn inside_a_namespace_without_routes() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let port = fixture.addr.port();
    let dns = LabDns::start(&[
        ("v6doc.vantage.test", &["127.0.0.1", "2001:db8::10"]),
        ("v4doc.vantage.test", &["198.51.100.10"]),
        ("v6only.vantage.test", &["2001:db8::20"]),
    ])
    .await;

    // (a) IPv4 works, this vantage has no IPv6 route: net.ipv6 is unknown, not a warning.
    let r = run(&format!("http://v6doc.vantage.test:{port}/mcp"), &dns).await;
    let v6 = r.check(CheckId::NetIpv6).unwrap();
    shared::assert_seen_all(
        v6,
        (v6.outcome, v6.severity, v6.cause),
        (Outcome::Unknown, None, Some(Cause::NoRoute)),
        &["this vantage has no IPv6 route", "nothing was sent"],
    );
    let connect = r.check(CheckId::NetConnect).unwrap();
    assert_eq!(connect.outcome, Outcome::Pass, "{}", connect.observed);
    assert_eq!(r.check(CheckId::EraDetect).unwrap().outcome, Outcome::Pass);
    // http:// to a name taken as global is its own finding; nothing about IPv6.
    assert_eq!(problems(&r), vec![CheckId::TlsPlainHttp]);

    // (b) The only address has no route from here: net.connect unknown, nothing judged.
    let r = run(&format!("http://v4doc.vantage.test:{port}/mcp"), &dns).await;
    let connect = r.check(CheckId::NetConnect).unwrap();
    shared::assert_seen_all(
        connect,
        (connect.outcome, connect.severity, connect.cause),
        (Outcome::Unknown, None, Some(Cause::NoRoute)),
        &[
            "This vantage has no route to these addresses",
            "198.51.100.10:",
            "nothing was sent",
        ],
    );
    assert_eq!(problems(&r), vec![]);

    // (c) The vantage declared it has no IPv6 (--no-ipv6): the IPv6 address is not tried
    // and net.ipv6 is left out, saying why; nothing unknown, nothing about the target.
    let r = run_with(
        &format!("http://v6doc.vantage.test:{port}/mcp"),
        &dns,
        false,
    )
    .await;
    let v6 = r.check(CheckId::NetIpv6).unwrap();
    shared::assert_seen_all(
        v6,
        (v6.outcome, v6.severity, v6.cause),
        (Outcome::Skip, None, None),
        &[
            "this vantage is set to have no IPv6 (--no-ipv6",
            "1 IPv6 addresses not tried",
        ],
    );
    let connect = r.check(CheckId::NetConnect).unwrap();
    assert_eq!(connect.outcome, Outcome::Pass, "{}", connect.observed);
    shared::assert_not_seen(connect, &["2001:db8"]);
    assert_eq!(problems(&r), vec![CheckId::TlsPlainHttp]);
    assert!(
        r.checks.iter().all(|c| c.outcome != Outcome::Unknown),
        "{:?}",
        r.checks
    );

    // (d) A name with only IPv6 addresses on a vantage without IPv6: nothing was sent,
    // net.connect is unknown (never the target's fault, never a pass).
    let r = run_with(
        &format!("http://v6only.vantage.test:{port}/mcp"),
        &dns,
        false,
    )
    .await;
    let connect = r.check(CheckId::NetConnect).unwrap();
    shared::assert_seen(
        connect,
        (connect.outcome, connect.severity, connect.cause),
        (Outcome::Unknown, None, Some(Cause::NoRoute)),
        "the target has only IPv6 addresses (1) and this vantage is set to have no IPv6",
    );
    // The missing A record is the name's own fault (checks.md: an IPv4 A record present).
    assert_eq!(problems(&r), vec![CheckId::DnsARecord]);
}
