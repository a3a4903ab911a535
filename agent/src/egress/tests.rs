//! The egress policy, address by address: every IANA special-purpose block of the table,
//! the IPv4-mapped and NAT64 forms, allowed and assumed-global prefixes, the named target,
//! URLs in every spelling of an address, and the agent's ceiling.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::netclass::special_purpose;

fn policy(assume: &[&str], allow: &[&str]) -> EgressPolicy {
    EgressPolicy::new(&Policy {
        assume_global: assume.iter().map(|p| p.parse().unwrap()).collect(),
        allow_non_global: allow.iter().map(|p| p.parse().unwrap()).collect(),
    })
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn mapped(v4: Ipv4Addr) -> IpAddr {
    IpAddr::V6(v4.to_ipv6_mapped())
}

fn nat64(v4: Ipv4Addr) -> IpAddr {
    let o = v4.octets();
    IpAddr::V6(Ipv6Addr::new(
        0x64,
        0xff9b,
        0,
        0,
        0,
        0,
        u16::from_be_bytes([o[0], o[1]]),
        u16::from_be_bytes([o[2], o[3]]),
    ))
}

/// An address the entry itself decides (not a more specific entry listed before it).
fn sample(net: IpNet, class: AddrClass) -> IpAddr {
    let candidates = [net.network(), net.broadcast()];
    *candidates
        .iter()
        .find(|a| netclass::classify(**a, &[]) == class)
        .unwrap_or_else(|| panic!("{net}: no address of its own"))
}

#[test]
fn every_special_purpose_block_is_refused_unless_the_registry_says_global() {
    let none = policy(&[], &[]);
    let mut blocks = 0;
    for (net, class) in special_purpose() {
        blocks += 1;
        let a = sample(net, class);
        match none.check(a) {
            Ok(()) => assert!(class.global, "{net} ({}) admitted", class.label),
            Err(r) => {
                assert!(!class.global, "{net} ({}) refused", class.label);
                assert_eq!((r.addr, r.class), (a, class));
                assert_eq!(
                    r.to_string(),
                    format!(
                        "refused by egress policy: {a} is {} ({}); allow it with probe.allow_non_global",
                        class.label, class.source
                    )
                );
                // Allowing the block admits it, and only it.
                let allowed = policy(&[], &[&net.to_string()]);
                assert_eq!(allowed.check(a), Ok(()), "{net}");
                // Assuming it global admits it as well (an assumed-global address is
                // connected to like any global one).
                assert_eq!(policy(&[&net.to_string()], &[]).check(a), Ok(()), "{net}");
            }
        }
    }
    assert_eq!(
        blocks,
        18 + 23,
        "the table has one entry per registry block"
    );
    // Outside every block: global unicast.
    for a in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450::1"] {
        assert_eq!(none.check(ip(a)), Ok(()), "{a}");
    }
    // Outside 2000::/3 nothing is allocated: refused.
    let r = none.check(ip("4000::1")).unwrap_err();
    assert!(r.to_string().contains("reserved by the IETF"), "{r}");
}

#[test]
fn mapped_and_nat64_forms_are_judged_as_their_ipv4_address() {
    let none = policy(&[], &[]);
    for (net, class) in special_purpose() {
        let IpNet::V4(_) = net else { continue };
        let IpAddr::V4(v4) = sample(net, class) else {
            unreachable!()
        };
        if class.global {
            // A mapped form of a global address is not an IPv6 destination (RFC 4291): refused.
            assert!(none.check(mapped(v4)).is_err(), "{v4}");
            assert_eq!(none.check(nat64(v4)), Ok(()), "NAT64 of {v4}");
            continue;
        }
        for form in [mapped(v4), nat64(v4)] {
            let r = none.check(form).unwrap_err();
            assert_eq!(r.class, class, "{form} is judged as {v4}");
            assert!(r.to_string().contains(class.label), "{r}");
            // The IPv4 prefix covers its mapped and NAT64 forms, as allowed and as assumed.
            let p = net.to_string();
            assert_eq!(policy(&[], &[&p]).check(form), Ok(()), "{form} under {p}");
            assert_eq!(policy(&[&p], &[]).check(form), Ok(()), "{form} assumed");
        }
    }
}

#[test]
fn allowed_prefixes_admit_exactly_their_addresses_however_written() {
    let p = policy(&[], &["127.0.0.2/32", "100.64.0.0/10", "fd00::/8"]);
    for a in [
        "127.0.0.2",
        "::ffff:127.0.0.2",
        "64:ff9b::7f00:2",
        "100.64.0.10",
        "100.127.255.255",
        "fd12::1",
    ] {
        assert_eq!(p.check(ip(a)), Ok(()), "{a}");
    }
    for a in [
        "127.0.0.1",
        "::ffff:127.0.0.1",
        "::127.0.0.2", // the deprecated IPv4-compatible form carries nothing
        "::1",
        "192.168.1.1",
        "fc00::1",
        "169.254.169.254",
        "0.0.0.0",
        "::",
    ] {
        assert!(p.check(ip(a)).is_err(), "{a}");
    }
    // A prefix written in the mapped form is the IPv4 prefix.
    let m = policy(&[], &["::ffff:127.0.0.0/104"]);
    assert_eq!(m.check(ip("127.9.9.9")), Ok(()));
    assert_eq!(m.check(ip("::ffff:127.9.9.9")), Ok(()));
    assert!(m.check(ip("128.0.0.1")).is_ok(), "global anyway");
    assert!(m.check(ip("10.0.0.1")).is_err());
    // Host bits in a prefix do not widen or narrow it.
    assert_eq!(policy(&[], &["127.0.0.9/8"]).check(ip("127.1.2.3")), Ok(()));
}

#[test]
fn the_named_target_is_allowed_on_the_operators_machine_and_nothing_else() {
    let local = policy(&[], &[]).allowing_named_target(&[ip("127.0.0.2")]);
    assert_eq!(local.check(ip("127.0.0.2")), Ok(()));
    assert_eq!(local.check(ip("::ffff:127.0.0.2")), Ok(()));
    let r = local.check(ip("127.0.0.1")).unwrap_err();
    assert_eq!(
        r.to_string(),
        "refused by egress policy: 127.0.0.1 is loopback (RFC 1122); allow it with probe.allow_non_global"
    );
    assert!(local.check(ip("169.254.169.254")).is_err());
}

#[test]
fn urls_are_checked_by_scheme_userinfo_and_literal_host_in_every_spelling() {
    let p = policy(&["127.0.0.2/32"], &[]);
    let check = |u: &str| p.check_url(&Url::parse(u).unwrap());
    for u in [
        "http://127.0.0.1:18082/latest/meta-data/iam",
        "http://[::ffff:127.0.0.1]/x",
        "http://[::ffff:7f00:1]/x",
        "http://[64:ff9b::127.0.0.1]/x",
        "http://0x7f.1/x",      // WHATWG: 127.0.0.1
        "http://2130706433/x",  // WHATWG: 127.0.0.1
        "http://017700000001/", // octal
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "https://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
    ] {
        let e = check(u).unwrap_err();
        assert!(e.is_refusal(), "{u}: {e}");
        assert_eq!(e.cause(), Cause::PolicyRefused);
        assert!(
            e.to_string().starts_with("refused by egress policy: ")
                && e.to_string()
                    .ends_with("; allow it with probe.allow_non_global"),
            "{u}: {e}"
        );
    }
    for u in [
        "http://127.0.0.2:1/mcp",
        "http://[::ffff:127.0.0.2]/",
        "https://8.8.8.8/",
        "https://mcp.example.com/x", // a name is checked when it is resolved
        "http://localhost/",
    ] {
        assert_eq!(check(u), Ok(()), "{u}");
    }
    for (u, word) in [
        ("file:///etc/passwd", "not an http or https URL"),
        ("ftp://8.8.8.8/x", "not an http or https URL"),
        ("gopher://8.8.8.8/x", "not an http or https URL"),
        ("http://user:pw@8.8.8.8/", "user information"),
        ("http://user@mcp.example.com/", "user information"),
    ] {
        let e = check(u).unwrap_err();
        assert!(!e.is_refusal() && e.to_string().contains(word), "{u}: {e}");
        assert_eq!(e.cause(), Cause::Malformed);
    }
}

#[test]
fn a_location_is_judged_and_never_followed() {
    let p = policy(&[], &[]);
    let base = Url::parse("http://127.0.0.2:8/mcp").unwrap();
    let n = location_note(&p, &base, "http://[::ffff:127.0.0.1]:9/x");
    assert!(
        n.contains("not followed") && n.contains("::ffff:127.0.0.1 is loopback"),
        "{n}"
    );
    // A relative Location is on the base's own (here refused) host.
    assert!(location_note(&p, &base, "/elsewhere").contains("127.0.0.2 is loopback"));
    // A name is not resolved for a note.
    assert_eq!(
        location_note(&p, &base, "https://rebind.lab.test/x"),
        " (not followed: redirects never are)"
    );
}

#[test]
fn partition_keeps_order_and_summarise_bounds_the_line() {
    let p = policy(&[], &["100.64.0.0/10"]);
    let addrs: Vec<IpAddr> = ["8.8.8.8", "127.0.0.1", "100.64.0.1", "10.0.0.1", "::1"]
        .iter()
        .map(|a| ip(a))
        .collect();
    let (ok, refused) = p.partition(&addrs);
    assert_eq!(ok, vec![ip("8.8.8.8"), ip("100.64.0.1")]);
    let refused_addrs: Vec<IpAddr> = refused.iter().map(|r| r.addr).collect();
    assert_eq!(
        refused_addrs,
        vec![ip("127.0.0.1"), ip("10.0.0.1"), ip("::1")]
    );
    let many: Vec<Refused> = (1..=9u8)
        .map(|i| p.check(IpAddr::from([127, 0, 0, i])).unwrap_err())
        .collect();
    let line = summarise(&many);
    assert_eq!(
        line.matches("refused by egress policy").count(),
        4,
        "{line}"
    );
    assert!(line.ends_with("+5 more addresses refused"), "{line}");
}

#[test]
fn the_ceiling_admits_policies_inside_it_only() {
    let pol = |assume: &[&str], allow: &[&str]| Policy {
        assume_global: assume.iter().map(|p| p.parse().unwrap()).collect(),
        allow_non_global: allow.iter().map(|p| p.parse().unwrap()).collect(),
    };
    let c = Ceiling::new(vec![
        "100.64.0.0/10".parse().unwrap(),
        "::ffff:127.0.0.0/104".parse().unwrap(),
    ]);
    assert_eq!(c.admits(&pol(&[], &[])), Ok(()));
    assert_eq!(
        c.admits(&pol(&[], &["100.64.1.0/24", "127.0.0.2/32"])),
        Ok(())
    );
    assert_eq!(c.admits(&pol(&["::ffff:100.64.0.0/112"], &[])), Ok(()));
    let e = c.admits(&pol(&[], &["100.0.0.0/8"])).unwrap_err();
    assert_eq!(
        (e.field, e.prefix.to_string()),
        ("allow_non_global", "100.0.0.0/8".into())
    );
    let e = c.admits(&pol(&["0.0.0.0/0"], &[])).unwrap_err();
    assert_eq!(e.field, "assume_global");
    // `none`: no exception at all.
    let none = Ceiling::new(Vec::new());
    let e = none.admits(&pol(&[], &["127.0.0.1/32"])).unwrap_err();
    assert!(
        e.to_string().contains("--allow-non-global-max (none)"),
        "{e}"
    );
}
