//! Address-by-address tests of the routability table: every special-purpose block, both
//! families, with the boundary addresses on either side.

use super::*;

fn v4(s: &str) -> AddrClass {
    classify_v4(s.parse().unwrap())
}
fn v6(s: &str) -> AddrClass {
    classify_v6(s.parse().unwrap())
}

#[test]
fn ipv4_special_blocks_and_their_boundaries() {
    // (address, global?, label fragment)
    let cases: &[(&str, bool, &str)] = &[
        ("0.0.0.0", false, "this network"),
        ("0.255.255.255", false, "this network"),
        ("1.0.0.0", true, "global"),
        ("9.255.255.255", true, "global"),
        ("10.0.0.0", false, "private"),
        ("10.255.255.255", false, "private"),
        ("11.0.0.0", true, "global"),
        ("100.63.255.255", true, "global"),
        ("100.64.0.0", false, "shared"),
        ("100.64.0.10", false, "shared"),
        ("100.127.255.255", false, "shared"),
        ("100.128.0.0", true, "global"),
        ("126.255.255.255", true, "global"),
        ("127.0.0.1", false, "loopback"),
        ("127.255.255.255", false, "loopback"),
        ("128.0.0.0", true, "global"),
        ("169.253.255.255", true, "global"),
        ("169.254.0.0", false, "link-local"),
        ("169.254.255.255", false, "link-local"),
        ("169.255.0.0", true, "global"),
        ("172.15.255.255", true, "global"),
        ("172.16.0.0", false, "private"),
        ("172.31.255.255", false, "private"),
        ("172.32.0.0", true, "global"),
        ("191.255.255.255", true, "global"),
        ("192.0.0.0", false, "IETF protocol"),
        ("192.0.0.8", false, "IETF protocol"),
        ("192.0.0.9", true, "port control"),
        ("192.0.0.10", true, "TURN"),
        ("192.0.0.11", false, "IETF protocol"),
        ("192.0.0.170", false, "IETF protocol"),
        ("192.0.0.255", false, "IETF protocol"),
        ("192.0.1.0", true, "global"),
        ("192.0.2.0", false, "TEST-NET-1"),
        ("192.0.2.255", false, "TEST-NET-1"),
        ("192.0.3.0", true, "global"),
        ("192.31.196.1", true, "global"),
        ("192.52.193.1", true, "global"),
        ("192.88.98.255", true, "global"),
        ("192.88.99.0", false, "6to4"),
        ("192.88.99.255", false, "6to4"),
        ("192.88.100.0", true, "global"),
        ("192.167.255.255", true, "global"),
        ("192.168.0.0", false, "private"),
        ("192.168.255.255", false, "private"),
        ("192.169.0.0", true, "global"),
        ("192.175.48.1", true, "global"),
        ("198.17.255.255", true, "global"),
        ("198.18.0.0", false, "benchmarking"),
        ("198.19.255.255", false, "benchmarking"),
        ("198.20.0.0", true, "global"),
        ("198.51.99.255", true, "global"),
        ("198.51.100.0", false, "TEST-NET-2"),
        ("198.51.100.255", false, "TEST-NET-2"),
        ("198.51.101.0", true, "global"),
        ("203.0.112.255", true, "global"),
        ("203.0.113.0", false, "TEST-NET-3"),
        ("203.0.113.255", false, "TEST-NET-3"),
        ("203.0.114.0", true, "global"),
        ("223.255.255.255", true, "global"),
        ("224.0.0.0", false, "multicast"),
        ("239.255.255.255", false, "multicast"),
        ("240.0.0.0", false, "reserved"),
        ("255.255.255.254", false, "reserved"),
        ("255.255.255.255", false, "broadcast"),
    ];
    for (addr, global, label) in cases {
        let c = v4(addr);
        assert_eq!(c.global, *global, "{addr}: {c:?}");
        assert!(
            c.label.contains(label),
            "{addr}: label {:?} lacks {label:?}",
            c.label
        );
    }
}

#[test]
fn ipv6_special_blocks_and_their_boundaries() {
    let cases: &[(&str, bool, &str)] = &[
        ("::", false, "unspecified"),
        ("::1", false, "loopback"),
        ("::2", false, "reserved"),
        ("::102:304", false, "reserved"), // deprecated IPv4-compatible form
        ("64:ff9b::808:808", true, "global"), // NAT64 of a global IPv4 address
        ("64:ff9b::a00:1", false, "private"), // NAT64 of 10.0.0.1
        ("64:ff9b:1::1", false, "local-use"),
        ("100::", false, "discard"),
        ("100::ffff:ffff:ffff:ffff", false, "discard"),
        ("100:0:0:1::", false, "dummy"),
        ("100:0:0:2::", false, "reserved"),
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "reserved"),
        ("2000::", true, "global"),
        ("2001::", false, "TEREDO"),
        ("2001:0:ffff:ffff:ffff:ffff:ffff:ffff", false, "TEREDO"),
        ("2001:1::1", true, "port control"),
        ("2001:1::2", true, "TURN"),
        ("2001:1::3", true, "DNS-SD"),
        ("2001:1::4", false, "IETF protocol"),
        ("2001:2::", false, "benchmarking"),
        ("2001:2:0:ffff::1", false, "benchmarking"),
        ("2001:3::1", true, "AMT"),
        ("2001:4:112::1", true, "AS112"),
        ("2001:10::1", false, "IETF protocol"),
        ("2001:20::1", true, "ORCHIDv2"),
        ("2001:2f:ffff::1", true, "ORCHIDv2"),
        ("2001:30::1", true, "drone"),
        ("2001:1ff:ffff:ffff::1", false, "IETF protocol"),
        ("2001:200::", true, "global"),
        ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", true, "global"),
        ("2001:db8::", false, "documentation"),
        ("2001:db8:b::10", false, "documentation"),
        (
            "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            false,
            "documentation",
        ),
        ("2001:db9::", true, "global"),
        ("2002::1", false, "6to4"),
        ("2003::1", true, "global"),
        ("2606:4700::1111", true, "global"),
        ("3ffe:ffff::1", true, "global"),
        ("3fff::", false, "documentation"),
        ("3fff:fff:ffff::1", false, "documentation"),
        ("3fff:1000::", true, "global"),
        ("4000::", false, "reserved"),
        ("5f00::1", false, "SRv6"),
        ("fbff:ffff::1", false, "reserved"),
        ("fc00::", false, "unique local"),
        (
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            false,
            "unique local",
        ),
        ("fe00::1", false, "reserved"),
        ("fe80::1", false, "link-local"),
        ("febf:ffff::1", false, "link-local"),
        ("fec0::1", false, "site-local"),
        ("ff02::1", false, "multicast"),
        (
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            false,
            "multicast",
        ),
    ];
    for (addr, global, label) in cases {
        let c = v6(addr);
        assert_eq!(c.global, *global, "{addr}: {c:?}");
        assert!(
            c.label.contains(label),
            "{addr}: label {:?} lacks {label:?}",
            c.label
        );
    }
}

#[test]
fn ipv4_mapped_forms_take_the_class_of_the_inner_address() {
    for (addr, label) in [
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.1.2.3", "private"),
        ("::ffff:100.64.0.10", "shared"),
        ("::ffff:169.254.1.1", "link-local"),
        ("::ffff:198.18.0.1", "benchmarking"),
        ("::ffff:0.0.0.0", "this network"),
        ("::ffff:224.0.0.1", "multicast"),
    ] {
        let c = v6(addr);
        assert!(!c.global, "{addr}");
        assert!(c.label.contains(label), "{addr}: {c:?}");
    }
    // A mapped global address is still not a routable IPv6 destination.
    let c = v6("::ffff:8.8.8.8");
    assert!(!c.global);
    assert_eq!(c.label, "IPv4-mapped");
}

#[test]
fn assume_global_overrides_only_the_named_prefixes() {
    let lab: Vec<IpNet> = vec![
        "198.51.100.0/24".parse().unwrap(),
        "2001:db8:b::/64".parse().unwrap(),
    ];
    assert!(classify("198.51.100.7".parse().unwrap(), &lab).global);
    assert!(classify("2001:db8:b::7".parse().unwrap(), &lab).global);
    assert!(classify("198.51.101.7".parse().unwrap(), &[]).global);
    assert!(!classify("203.0.113.7".parse().unwrap(), &lab).global);
    assert!(!classify("2001:db8:a::7".parse().unwrap(), &lab).global);
    assert!(!classify("100.64.0.10".parse().unwrap(), &lab).global);
    // The IPv4-mapped and NAT64 forms of an assumed-global address are assumed global too,
    // so the class never depends on how a DNS answer wrote the address.
    assert!(classify("::ffff:198.51.100.7".parse().unwrap(), &lab).global);
    assert!(classify("64:ff9b::c633:6407".parse().unwrap(), &lab).global);
    assert!(!classify("::ffff:203.0.113.7".parse().unwrap(), &lab).global);
}

#[test]
fn describe_names_the_block_and_its_source() {
    let a: IpAddr = "100.64.0.10".parse().unwrap();
    assert_eq!(
        describe(a, classify(a, &[])),
        "100.64.0.10 is shared address space (RFC 6598)"
    );
}
