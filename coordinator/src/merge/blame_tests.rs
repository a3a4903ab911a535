//! Whose fault a failed connect is (`blame.rs`), from the addresses the regions tried.

use super::*;
use crate::test_reports::{clean, set, unreachable};
use vantage_agent::model::{Cause, Outcome, Severity};

/// `region` given `addrs`, connecting as `observed` says (`net.connect` failed when any
/// part of it is not "connected").
fn tried(region: &str, addrs: &[&str], observed: &str) -> RegionResult {
    let mut r = if observed.split("; ").all(|p| p.contains(" connected in ")) {
        let mut r = clean(region);
        set(&mut r, "net.connect", Outcome::Pass, None, None, observed);
        r
    } else {
        unreachable(region, Some(Cause::Timeout), observed)
    };
    let dns = r.dns.as_mut().unwrap();
    dns.a = addrs.iter().map(|a| a.to_string()).collect();
    r
}

#[test]
fn the_addresses_are_read_from_net_connects_evidence() {
    let r = tried(
        "ap",
        &[],
        "198.51.100.131:443 connected in 0 ms; [2001:db8:b13::99]:443 timeout after 2001 ms (connect: no answer; gave up); 198.51.100.139:443 not tried (no route from this vantage) after 0 ms (x) (+1 more addresses not tried: the cap is 16); not connected: refused by egress policy: 100.64.13.10 is shared address space",
    );
    let (ok, bad) = attempts(&r);
    assert_eq!(
        ok.into_iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        ["198.51.100.131"]
    );
    assert_eq!(
        bad.into_iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        ["198.51.100.139", "2001:db8:b13::99"]
    );
}

/// Red team round 13, #1 (second reproduction) and N4: ap was given 198.51.100.139, which
/// no other region was given (GeoDNS to a dead POP): the target's fault, not ap's. The same
/// failure on the address eu and us connected to is ap's own egress.
#[test]
fn a_failed_address_only_this_region_was_given_is_the_targets() {
    let eu = tried(
        "eu",
        &["198.51.100.131"],
        "198.51.100.131:443 connected in 1 ms",
    );
    let us = tried(
        "us",
        &["198.51.100.131"],
        "198.51.100.131:443 connected in 2 ms",
    );
    let ap = tried(
        "ap",
        &["198.51.100.139"],
        "198.51.100.139:443 timeout after 2001 ms (connect: no answer)",
    );
    let all = [&eu, &us, &ap];
    let c = ap.check(CheckId::NetConnect).unwrap();
    assert_eq!(connect_blame(&ap, c, &all), Blame::Target);
    assert_eq!(
        given_only_here(&ap, &all),
        vec!["198.51.100.139".parse::<IpAddr>().unwrap()]
    );
    assert_eq!(connect_blame(&ap, c, &[&ap]), Blame::Alone);

    let ap = tried(
        "ap",
        &["198.51.100.131"],
        "198.51.100.131:443 timeout after 2001 ms (connect: no answer)",
    );
    let c = ap.check(CheckId::NetConnect).unwrap();
    assert_eq!(connect_blame(&ap, c, &[&eu, &us, &ap]), Blame::Vantage);
    assert!(given_only_here(&ap, &[&eu, &us, &ap]).is_empty());
    // Every region failing that address: the target's (down everywhere).
    let eu = tried(
        "eu",
        &["198.51.100.131"],
        "198.51.100.131:443 timeout after 2001 ms (connect: no answer)",
    );
    assert_eq!(connect_blame(&ap, c, &[&eu, &ap]), Blame::Target);
}

/// Evidence that names no address (an older format) is compared by the target: another
/// region that reached it makes the failure the vantage's; no region reaching it, the
/// target's. A region that passed with such evidence connected to one of its DNS answer's
/// addresses.
#[test]
fn evidence_without_addresses_is_compared_by_the_target() {
    let ap = unreachable("ap", Some(Cause::Timeout), "no answer within 5 s");
    let c = ap.check(CheckId::NetConnect).unwrap();
    assert_eq!(connect_blame(&ap, c, &[&clean("eu"), &ap]), Blame::Vantage);
    let eu = unreachable("eu", Some(Cause::Timeout), "no answer within 5 s");
    assert_eq!(connect_blame(&ap, c, &[&eu, &ap]), Blame::Target);
    let ap = tried(
        "ap",
        &["198.51.100.10"],
        "198.51.100.10:443 refused after 1 ms (connection refused)",
    );
    let c = ap.check(CheckId::NetConnect).unwrap();
    assert_eq!(connect_blame(&ap, c, &[&clean("eu"), &ap]), Blame::Vantage);
    let mut ipv6 = ap.clone();
    set(
        &mut ipv6,
        "net.ipv6",
        Outcome::Warn,
        Some(Severity::Low),
        Some(Cause::Timeout),
        "every IPv6 connect failed while IPv4 works",
    );
    // net.ipv6 is judged on the IPv6 addresses alone: ap's evidence names none it failed, so
    // it is compared by the target, which eu reached.
    let c = ipv6.check(CheckId::NetIpv6).unwrap();
    assert_eq!(
        connect_blame(&ipv6, c, &[&clean("eu"), &ipv6]),
        Blame::Vantage
    );
}
