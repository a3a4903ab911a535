//! `net.connect` and `net.ipv6` (red team round 13, items 3, 4, 6, 7 and nit 3): what was
//! not tried is never passed, a failed IPv6 address is never a silent pass, an IPv4 address
//! written as IPv6 is never IPv6 evidence, and the vantage's own routing is its own.

use super::*;
use crate::job::Policy;
use crate::model::{Outcome, Severity};
use crate::netclass::AddrClass;
use crate::probe::test_support::expect;

/// Only a failure of this host's own routing is "no route here": the kernel still has a
/// route to loopback, so an ENETUNREACH for it would be a router's answer (evidence),
/// and other errors never ask.
#[test]
fn no_route_here_asks_the_kernel_for_the_route() {
    let lo: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let e = |k| std::io::Error::from(k);
    assert!(!no_route_here(
        &e(std::io::ErrorKind::NetworkUnreachable),
        lo
    ));
    assert!(!no_route_here(&e(std::io::ErrorKind::AddrNotAvailable), lo));
    assert!(!no_route_here(
        &e(std::io::ErrorKind::ConnectionRefused),
        lo
    ));
    assert!(!no_route_here(&e(std::io::ErrorKind::HostUnreachable), lo));
    assert!(!no_route_here(&e(std::io::ErrorKind::InvalidInput), lo));
    assert!(!no_route_here(&e(std::io::ErrorKind::PermissionDenied), lo));
}

pub(super) fn ok(addr: &str) -> Attempt {
    Attempt {
        addr: SocketAddr::new(addr.parse().unwrap(), 443),
        elapsed_ms: 1,
        result: Ok(()),
        route: None,
    }
}

pub(super) fn failed(addr: &str, cause: Cause) -> Attempt {
    Attempt {
        addr: SocketAddr::new(addr.parse().unwrap(), 443),
        elapsed_ms: 2000,
        result: Err((cause, "connect: no answer".into())),
        route: None,
    }
}

fn ips(addrs: &[&str]) -> Vec<IpAddr> {
    addrs.iter().map(|a| a.parse().unwrap()).collect()
}

pub(super) fn refusal(addr: &str) -> egress::Refused {
    egress::Refused {
        addr: addr.parse().unwrap(),
        class: AddrClass {
            global: false,
            label: "shared address space",
            source: "RFC 6598",
        },
    }
}

pub(super) fn verdicts(
    all: &[&str],
    attempts: &[Attempt],
    refused: &[egress::Refused],
    untried: &[&str],
) -> (Verdict, Verdict) {
    let all = ips(all);
    let untried = ips(untried);
    let t = Tried {
        all: &all,
        attempts,
        refused,
        untried: &untried,
        localhost: false,
    };
    (
        connect_verdict::net_connect(&t),
        connect_verdict::net_ipv6(&t, None),
    )
}

pub(super) fn shape(v: &Verdict) -> (Outcome, Option<Severity>, Option<Cause>) {
    (v.outcome, v.severity, v.cause)
}

/// Item 3: one of two IPv6 addresses dead while the other connects (and IPv4 works):
/// net.ipv6 warns "1 of 2 IPv6 addresses failed", naming the address; net.connect's pass
/// says the failure is net.ipv6's. Every IPv6 address failing keeps its own warning.
#[test]
fn a_dead_ipv6_address_beside_a_working_one_is_a_warning() {
    let attempts = [
        ok("198.51.100.131"),
        ok("2001:db8:b13::10"),
        failed("2001:db8:b13::99", Cause::Timeout),
    ];
    let all = ["198.51.100.131", "2001:db8:b13::10", "2001:db8:b13::99"];
    let (connect, v6) = verdicts(&all, &attempts, &[], &[]);
    assert_eq!(
        shape(&v6),
        (Outcome::Warn, Some(Severity::Low), Some(Cause::Timeout))
    );
    assert!(
        v6.observed.starts_with(
            "1 of 2 IPv6 addresses failed while IPv4 works: [2001:db8:b13::99]:443 timeout"
        ),
        "{}",
        v6.observed
    );
    assert!(
        !v6.observed.contains("[2001:db8:b13::10]:443"),
        "{}",
        v6.observed
    );
    assert_eq!(shape(&connect), (Outcome::Pass, None, None));
    assert!(
        connect
            .observed
            .ends_with("(the IPv6 failures are judged by net.ipv6)"),
        "{}",
        connect.observed
    );

    let attempts = [
        ok("198.51.100.131"),
        failed("2001:db8:b13::10", Cause::Refused),
        failed("2001:db8:b13::99", Cause::Timeout),
    ];
    let (_, v6) = verdicts(&all, &attempts, &[], &[]);
    assert_eq!(
        shape(&v6),
        (Outcome::Warn, Some(Severity::Low), Some(Cause::Refused))
    );
    assert!(
        v6.observed
            .starts_with("every IPv6 connect failed while IPv4 works"),
        "{}",
        v6.observed
    );

    // Every IPv6 address connected: the pass counts them.
    let attempts = [ok("198.51.100.131"), ok("2001:db8:b13::10")];
    let (connect, v6) = verdicts(&all[..2], &attempts, &[], &[]);
    assert_eq!(shape(&v6), (Outcome::Pass, None, None));
    assert_eq!(v6.observed, "1 of 1 IPv6 addresses connected");
    assert_eq!(shape(&connect), (Outcome::Pass, None, None));
    assert!(
        !connect.observed.contains("net.ipv6"),
        "{}",
        connect.observed
    );
}

/// Item 6: one address connected, another refused by the egress policy: the refused one
/// was never tried, so net.connect is `unknown`, cause `policy-refused` (the merge's
/// probe.policy-refused), as when every address is refused; never a pass.
#[test]
fn an_address_the_policy_refused_leaves_net_connect_unknown() {
    let all = ["198.51.100.131", "100.64.13.10"];
    let (connect, v6) = verdicts(
        &all,
        &[ok("198.51.100.131")],
        &[refusal("100.64.13.10")],
        &[],
    );
    expect(
        "one refused",
        &connect,
        (Outcome::Unknown, None, Some(Cause::PolicyRefused)),
        &[
            "198.51.100.131:443 connected",
            "not connected: refused by egress policy: 100.64.13.10 is shared address space",
            "was not observed",
        ],
    );
    assert_eq!(shape(&v6), (Outcome::Skip, None, None));

    // A failure that counts still fails: evidence of a problem beats a gap.
    let all = ["198.51.100.131", "198.51.100.139", "100.64.13.10"];
    let attempts = [
        ok("198.51.100.131"),
        failed("198.51.100.139", Cause::Timeout),
    ];
    let (connect, _) = verdicts(&all, &attempts, &[refusal("100.64.13.10")], &[]);
    assert_eq!(
        shape(&connect),
        (Outcome::Fail, Some(Severity::High), Some(Cause::Timeout))
    );

    // A refused native IPv6 address while IPv4 connects: both checks say it was not tried.
    let all = ["198.51.100.131", "fd00::10"];
    let (connect, v6) = verdicts(&all, &[ok("198.51.100.131")], &[refusal("fd00::10")], &[]);
    assert_eq!(
        shape(&connect),
        (Outcome::Unknown, None, Some(Cause::PolicyRefused))
    );
    expect(
        "a refused native IPv6 address",
        &v6,
        (Outcome::Unknown, None, Some(Cause::PolicyRefused)),
        &["refused every IPv6 address"],
    );
}

/// Item 7: addresses beyond the cap were not tried: net.connect is `unknown`, cause
/// `size-cap`, naming the cap and the addresses left out.
#[test]
fn addresses_beyond_the_cap_leave_net_connect_unknown() {
    let tried: Vec<String> = (140..156).map(|i| format!("198.51.100.{i}")).collect();
    let attempts: Vec<Attempt> = tried.iter().map(|a| ok(a)).collect();
    let mut all: Vec<&str> = tried.iter().map(String::as_str).collect();
    all.push("198.51.100.139");
    let (connect, _) = verdicts(&all, &attempts, &[], &["198.51.100.139"]);
    expect(
        "beyond the cap",
        &connect,
        (Outcome::Unknown, None, Some(Cause::SizeCap)),
        &[
            "(+1 more addresses not tried: the cap is 16 addresses per check: 198.51.100.139)",
            "was not observed",
        ],
    );
}

/// The cap, with real connections: 17 loopback addresses each with a listener; the 17th in
/// DNS order is not tried and named, and net.connect is `unknown`.
#[tokio::test]
async fn connect_all_names_the_addresses_beyond_the_cap() {
    let first = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = first.local_addr().unwrap().port();
    let mut listeners = vec![first];
    for i in 2..=17u8 {
        match tokio::net::TcpListener::bind((std::net::Ipv4Addr::new(127, 0, 0, i), port)).await {
            Ok(l) => listeners.push(l),
            Err(_) => return, // the port is taken on that address by someone else
        }
    }
    let addrs: Vec<IpAddr> = (1..=17u8).map(|i| IpAddr::from([127, 0, 0, i])).collect();
    let policy = EgressPolicy::new(&Policy {
        assume_global: vec!["127.0.0.0/8".parse().unwrap()],
        allow_non_global: vec![],
    });
    let mut rec = Recorder::default();
    let ok = connect_all(
        &policy,
        &addrs,
        None,
        true,
        false,
        port,
        Duration::from_secs(5),
        &mut rec,
    )
    .await;
    drop(listeners);
    assert_eq!(ok.len(), MAX_ADDRESSES);
    let c = rec.get(CheckId::NetConnect).unwrap();
    assert_eq!(
        (c.outcome, c.cause),
        (Outcome::Unknown, Some(Cause::SizeCap)),
        "{}",
        c.observed
    );
    assert!(
        c.observed
            .contains("the cap is 16 addresses per check: 127.0.0.17)"),
        "{}",
        c.observed
    );
}
