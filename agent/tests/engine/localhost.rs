//! `localhost` names the loopback of both families (RFC 6761 section 6.3): a client that
//! resolves it tries 127.0.0.1 and ::1, so a local server listening on either one is
//! reachable (rt15 #11). The vantage tries both, and a loopback that refuses beside one
//! that accepts is no fault: `net.connect` passes, `net.ipv6` never warns about it.

use std::net::{Ipv6Addr, SocketAddr};

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Outcome, RegionResult};
use vantage_fixture::Fixture;

use crate::run::{assert_problems, check, options, run_with};

/// A clean fixture on `addr`'s loopback only, on a port the other loopback refuses; `None`
/// (with a line saying why) when this machine has no such loopback, never under CI.
async fn on_one_loopback(addr: SocketAddr) -> Option<Fixture> {
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run this: it binds {addr}: {e}"
            );
            eprintln!("SKIPPED: this machine cannot bind {addr}: {e}");
            return None;
        }
    };
    let port = listener.local_addr().unwrap().port();
    let other: SocketAddr = if addr.is_ipv6() {
        ([127, 0, 0, 1], port).into()
    } else {
        (Ipv6Addr::LOCALHOST, port).into()
    };
    // The other loopback must refuse (someone else's listener on it would answer instead).
    if tokio::net::TcpStream::connect(other).await.is_ok() {
        eprintln!("SKIPPED: {other} is taken by another listener");
        return None;
    }
    Some(Fixture::serve(listener, &[]))
}

fn shape(region: &RegionResult, id: CheckId) -> (Outcome, String) {
    let c = check(region, id);
    (c.outcome, c.observed)
}

/// A server on ::1 only (Node's `listen(port, "localhost")` on most systems) checked as
/// `localhost` is clean, as `http://[::1]:PORT/mcp` is: never "127.0.0.1 refused" (high).
#[tokio::test]
async fn a_server_on_ipv6_loopback_only_serves_localhost() {
    let Some(fixture) = on_one_loopback((Ipv6Addr::LOCALHOST, 0).into()).await else {
        return;
    };
    let port = fixture.addr.port();
    let region = run_with(&format!("http://localhost:{port}/mcp"), options()).await;
    assert_problems(&region, &[]);
    let (outcome, observed) = shape(&region, CheckId::NetConnect);
    assert_eq!(outcome, Outcome::Pass, "{observed}");
    assert!(
        observed.contains("localhost names both loopbacks"),
        "{observed}"
    );
    // net.ipv6 compares the families: with no IPv4 loopback that connects, nothing to
    // compare with (a skip, as for any name whose IPv4 addresses all refuse).
    assert_eq!(shape(&region, CheckId::NetIpv6).0, Outcome::Skip);
    assert_eq!(shape(&region, CheckId::EraDetect).0, Outcome::Pass);
}

/// A server on 127.0.0.1 only checked as `localhost` is clean: ::1 refusing is no IPv6 fault
/// of a deployment (`net.ipv6` is skipped, saying so, never a warning); with --no-ipv6 ::1
/// is not tried at all.
#[tokio::test]
async fn a_server_on_ipv4_loopback_only_serves_localhost_without_an_ipv6_warning() {
    let Some(fixture) = on_one_loopback(([127, 0, 0, 1], 0).into()).await else {
        return;
    };
    let url = format!("http://localhost:{}/mcp", fixture.addr.port());
    let region = run_with(&url, options()).await;
    assert_problems(&region, &[]);
    assert_eq!(shape(&region, CheckId::NetConnect).0, Outcome::Pass);
    let (outcome, observed) = shape(&region, CheckId::NetIpv6);
    assert_eq!(outcome, Outcome::Skip, "{observed}");
    assert!(
        observed.starts_with("localhost: ::1 did not accept while 127.0.0.1 did"),
        "{observed}"
    );

    let mut opts = options();
    opts.ipv6 = false;
    let region = run_with(&url, opts).await;
    assert_problems(&region, &[]);
    let (outcome, observed) = shape(&region, CheckId::NetConnect);
    assert_eq!(outcome, Outcome::Pass, "{observed}");
    assert!(!observed.contains("::1"), "{observed}");
    let (outcome, observed) = shape(&region, CheckId::NetIpv6);
    assert_eq!(outcome, Outcome::Skip, "{observed}");
    assert!(observed.contains("--no-ipv6"), "{observed}");
}
