//! `net.ipv6` (red team round 13, item 4, and the evidence rule): an IPv4 address written
//! as IPv6 is never IPv6 evidence, and IPv6 addresses not tried leave the check `unknown`.

use super::tests::{failed, ok, refusal, shape, verdicts};
use super::*;
use crate::model::{Outcome, Severity};
use crate::probe::test_support::expect;

/// What net.ipv6 comes to when an AAAA record carries an IPv4 address: a low warning.
const WARNS: (Outcome, Option<Severity>, Option<Cause>) =
    (Outcome::Warn, Some(Severity::Low), None);
/// How net.ipv6 names the IPv4-mapped form of 198.51.100.131.
const MAPPED_131: &str = "IPv4-mapped address (::ffff:198.51.100.131)";

/// Item 4: an AAAA carrying an IPv4-mapped (or NAT64) address is no IPv6 evidence: the
/// connection to `::ffff:a.b.c.d` is IPv4 on the wire. net.ipv6 warns (low), naming it,
/// never "1 of 1 IPv6 addresses connected"; a failing mapped address is an IPv4 failure.
#[test]
fn an_ipv4_address_written_as_ipv6_is_no_ipv6_evidence() {
    let all = ["198.51.100.131", "::ffff:198.51.100.131"];
    let attempts = [ok("198.51.100.131"), ok("::ffff:198.51.100.131")];
    let (connect, v6) = verdicts(&all, &attempts, &[], &[]);
    expect("mapped", &v6, WARNS, &[]);
    assert!(
        v6.observed.starts_with("AAAA publishes an IPv4-mapped address (::ffff:198.51.100.131); IPv6-only clients cannot reach it"),
        "{}",
        v6.observed
    );
    assert!(
        !v6.observed.contains("IPv6 addresses connected"),
        "{}",
        v6.observed
    );
    assert_eq!(shape(&connect), (Outcome::Pass, None, None));

    // NAT64's well-known prefix: the same, naming the translator.
    let all = ["198.51.100.131", "64:ff9b::c633:6483"];
    let attempts = [ok("198.51.100.131"), ok("64:ff9b::c633:6483")];
    let (_, v6) = verdicts(&all, &attempts, &[], &[]);
    expect("NAT64", &v6, WARNS, &[]);
    assert!(
        v6.observed
            .starts_with("AAAA publishes a NAT64 address (64:ff9b::c633:6483"),
        "{}",
        v6.observed
    );

    // A mapped address that fails is an IPv4 address failing: net.connect fails.
    let all = ["198.51.100.131", "::ffff:198.51.100.139"];
    let attempts = [
        ok("198.51.100.131"),
        failed("::ffff:198.51.100.139", Cause::Timeout),
    ];
    let (connect, _) = verdicts(&all, &attempts, &[], &[]);
    assert_eq!(
        shape(&connect),
        (Outcome::Fail, Some(Severity::High), Some(Cause::Timeout))
    );

    // A native IPv6 address beside a mapped one: judged, and the mapped one still named.
    let all = [
        "198.51.100.131",
        "2001:db8:b13::10",
        "::ffff:198.51.100.131",
    ];
    let attempts = [
        ok("198.51.100.131"),
        ok("2001:db8:b13::10"),
        ok("::ffff:198.51.100.131"),
    ];
    let (_, v6) = verdicts(&all, &attempts, &[], &[]);
    expect(
        "native beside mapped",
        &v6,
        WARNS,
        &["1 of 1 IPv6 addresses connected", MAPPED_131],
    );
}

/// The IPv4-mapped form of a global address is refused by the policy (RFC 4291: not a
/// usable IPv6 destination) while that IPv4 address itself connected: it was observed as
/// that address, so net.connect passes; net.ipv6 still warns about the record.
#[test]
fn a_refused_mapped_form_of_a_connected_address_is_that_address() {
    let all = ["198.51.100.131", "::ffff:198.51.100.131"];
    let (connect, v6) = verdicts(
        &all,
        &[ok("198.51.100.131")],
        &[refusal("::ffff:198.51.100.131")],
        &[],
    );
    assert_eq!(
        shape(&connect),
        (Outcome::Pass, None, None),
        "{}",
        connect.observed
    );
    expect("refused mapped form", &v6, WARNS, &[MAPPED_131]);
}

/// net.ipv6 without evidence for some IPv6 addresses says so, never a pass: one beyond the
/// cap (size-cap), one this vantage's own routing stopped (no-route), one refused by the
/// policy (policy-refused), each while another IPv6 address connected.
#[test]
fn ipv6_addresses_not_tried_leave_net_ipv6_unknown() {
    let all = ["198.51.100.131", "2001:db8:b13::10", "2001:db8:b13::11"];
    let (_, v6) = verdicts(
        &all,
        &[ok("198.51.100.131"), ok("2001:db8:b13::10")],
        &[],
        &["2001:db8:b13::11"],
    );
    expect(
        "beyond the cap",
        &v6,
        (Outcome::Unknown, None, Some(Cause::SizeCap)),
        &["1 more IPv6 addresses not tried (the cap is 16 addresses per check): 2001:db8:b13::11"],
    );

    let mut unrouted = failed("2001:db8:b13::11", Cause::NoRoute);
    unrouted.route = Some(LocalRoute::Blackhole);
    let (connect, v6) = verdicts(
        &all,
        &[ok("198.51.100.131"), ok("2001:db8:b13::10"), unrouted],
        &[],
        &[],
    );
    assert_eq!(shape(&v6), (Outcome::Unknown, None, Some(Cause::NoRoute)));
    assert!(
        v6.observed.starts_with(
            "1 of 2 IPv6 addresses connected; 1 stopped by this vantage's own routing"
        ),
        "{}",
        v6.observed
    );
    // IPv4 connected: the IPv6 address is net.ipv6's to judge.
    assert_eq!(shape(&connect), (Outcome::Pass, None, None));

    let (_, v6) = verdicts(
        &all,
        &[ok("198.51.100.131"), ok("2001:db8:b13::10")],
        &[refusal("2001:db8:b13::11")],
        &[],
    );
    expect(
        "refused",
        &v6,
        (Outcome::Unknown, None, Some(Cause::PolicyRefused)),
        &["1 of 1 IPv6 addresses connected; not tried: refused by egress policy: 2001:db8:b13::11"],
    );
}
