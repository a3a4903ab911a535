//! Global routability of an address, from our own table of the IANA special-purpose address
//! registries (IPv4 and IPv6), plus multicast and the IPv6 global-unicast allocation.
//! The standard library's `is_global` is unstable, and a prober must be exact about this.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

/// What the table says about one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddrClass {
    /// Whether the address is globally routable.
    pub global: bool,
    /// The registry entry it falls in (`global unicast` when none).
    pub label: &'static str,
    /// The defining document.
    pub source: &'static str,
}

const GLOBAL_UNICAST: AddrClass = AddrClass {
    global: true,
    label: "global unicast",
    source: "IANA address space",
};

/// IPv4 entries, most specific first: the first match wins. `true` marks the entries the
/// registry lists as globally reachable inside an otherwise special block.
const V4: &[(&str, bool, &str, &str)] = &[
    (
        "192.0.0.9/32",
        true,
        "port control protocol anycast",
        "RFC 7723",
    ),
    ("192.0.0.10/32", true, "TURN anycast", "RFC 8155"),
    ("0.0.0.0/8", false, "\"this network\"", "RFC 791"),
    ("10.0.0.0/8", false, "private-use", "RFC 1918"),
    ("100.64.0.0/10", false, "shared address space", "RFC 6598"),
    ("127.0.0.0/8", false, "loopback", "RFC 1122"),
    ("169.254.0.0/16", false, "link-local", "RFC 3927"),
    ("172.16.0.0/12", false, "private-use", "RFC 1918"),
    (
        "192.0.0.0/24",
        false,
        "IETF protocol assignments",
        "RFC 6890",
    ),
    (
        "192.0.2.0/24",
        false,
        "documentation (TEST-NET-1)",
        "RFC 5737",
    ),
    (
        "192.88.99.0/24",
        false,
        "deprecated 6to4 relay anycast",
        "RFC 7526",
    ),
    ("192.168.0.0/16", false, "private-use", "RFC 1918"),
    ("198.18.0.0/15", false, "benchmarking", "RFC 2544"),
    (
        "198.51.100.0/24",
        false,
        "documentation (TEST-NET-2)",
        "RFC 5737",
    ),
    (
        "203.0.113.0/24",
        false,
        "documentation (TEST-NET-3)",
        "RFC 5737",
    ),
    ("224.0.0.0/4", false, "multicast", "RFC 5771"),
    ("255.255.255.255/32", false, "limited broadcast", "RFC 919"),
    ("240.0.0.0/4", false, "reserved", "RFC 1112"),
];

/// IPv6 entries, most specific first. IPv4-mapped, IPv4-compatible and NAT64 well-known
/// prefix addresses are classified by their embedded IPv4 address before this table.
const V6: &[(&str, bool, &str, &str)] = &[
    ("::/128", false, "unspecified", "RFC 4291"),
    ("::1/128", false, "loopback", "RFC 4291"),
    (
        "64:ff9b:1::/48",
        false,
        "local-use IPv4/IPv6 translation",
        "RFC 8215",
    ),
    ("100::/64", false, "discard-only", "RFC 6666"),
    ("100:0:0:1::/64", false, "dummy IPv6 prefix", "RFC 9780"),
    (
        "2001:1::1/128",
        true,
        "port control protocol anycast",
        "RFC 7723",
    ),
    ("2001:1::2/128", true, "TURN anycast", "RFC 8155"),
    (
        "2001:1::3/128",
        true,
        "DNS-SD service registration anycast",
        "RFC 9665",
    ),
    ("2001:3::/32", true, "AMT", "RFC 7450"),
    ("2001:4:112::/48", true, "AS112-v6", "RFC 7535"),
    ("2001:20::/28", true, "ORCHIDv2", "RFC 7343"),
    ("2001:30::/28", true, "drone remote ID DETs", "RFC 9374"),
    ("2001::/32", false, "TEREDO", "RFC 4380"),
    ("2001:2::/48", false, "benchmarking", "RFC 5180"),
    ("2001:db8::/32", false, "documentation", "RFC 3849"),
    ("2001::/23", false, "IETF protocol assignments", "RFC 2928"),
    ("2002::/16", false, "6to4", "RFC 3056"),
    ("3fff::/20", false, "documentation", "RFC 9637"),
    (
        "5f00::/16",
        false,
        "segment routing (SRv6) SIDs",
        "RFC 9602",
    ),
    ("fc00::/7", false, "unique local", "RFC 4193"),
    ("fe80::/10", false, "link-local unicast", "RFC 4291"),
    ("fec0::/10", false, "deprecated site-local", "RFC 3879"),
    ("ff00::/8", false, "multicast", "RFC 4291"),
];

struct Table<N> {
    entries: Vec<(N, AddrClass)>,
}

fn build<N: std::str::FromStr>(rows: &[(&str, bool, &'static str, &'static str)]) -> Table<N>
where
    N::Err: std::fmt::Debug,
{
    let entries = rows
        .iter()
        .map(|&(net, global, label, source)| {
            #[allow(clippy::expect_used)]
            let net = net.parse::<N>().expect("the table holds valid prefixes");
            (
                net,
                AddrClass {
                    global,
                    label,
                    source,
                },
            )
        })
        .collect();
    Table { entries }
}

static TABLE_V4: LazyLock<Table<Ipv4Net>> = LazyLock::new(|| build(V4));
static TABLE_V6: LazyLock<Table<Ipv6Net>> = LazyLock::new(|| build(V6));

/// Every entry of the table, IPv4 then IPv6, most specific first within each family: the
/// blocks the egress policy and `dns.global-addresses` judge by (tests walk all of them).
pub fn special_purpose() -> impl Iterator<Item = (IpNet, AddrClass)> {
    let v4 = TABLE_V4.entries.iter().map(|(n, c)| (IpNet::V4(*n), *c));
    let v6 = TABLE_V6.entries.iter().map(|(n, c)| (IpNet::V6(*n), *c));
    v4.chain(v6)
}

/// Classify an IPv4 address.
pub fn classify_v4(addr: Ipv4Addr) -> AddrClass {
    TABLE_V4
        .entries
        .iter()
        .find(|(net, _)| net.contains(&addr))
        .map(|(_, class)| *class)
        .unwrap_or(GLOBAL_UNICAST)
}

/// Which IPv6 form carries an IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d` (RFC 4291): the IPv4 host itself, reached over an IPv6 socket.
    Mapped,
    /// `64:ff9b::a.b.c.d`, the NAT64 well-known prefix (RFC 6052).
    Nat64,
}

/// The IPv4 address an IPv6 address stands for: the IPv4-mapped form and the NAT64
/// well-known prefix carry one, and it is what decides the class (and the egress policy).
pub fn embedded_v4(addr: Ipv6Addr) -> Option<(Ipv4Addr, Embedding)> {
    let seg = addr.segments();
    let o = addr.octets();
    let inner = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if seg[..5] == [0, 0, 0, 0, 0] && seg[5] == 0xffff {
        Some((inner, Embedding::Mapped))
    } else if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        Some((inner, Embedding::Nat64))
    } else {
        None
    }
}

/// Classify an IPv6 address.
pub fn classify_v6(addr: Ipv6Addr) -> AddrClass {
    let seg = addr.segments();
    // IPv4-mapped ::ffff:0:0/96 and the NAT64 well-known prefix 64:ff9b::/96 carry an IPv4
    // address whose class is the answer.
    if let Some((v4, form)) = embedded_v4(addr) {
        let inner = classify_v4(v4);
        if !inner.global || form == Embedding::Nat64 {
            return inner;
        }
        // A mapped form of a global IPv4 address is not a usable IPv6 destination.
        return AddrClass {
            global: false,
            label: "IPv4-mapped",
            source: "RFC 4291",
        };
    }
    if let Some((_, class)) = TABLE_V6.entries.iter().find(|(net, _)| net.contains(&addr)) {
        return *class;
    }
    // Only 2000::/3 is allocated as global unicast; the rest is reserved by the IETF
    // (this covers the deprecated IPv4-compatible ::/96 form as well).
    if seg[0] & 0xe000 == 0x2000 {
        GLOBAL_UNICAST
    } else {
        AddrClass {
            global: false,
            label: "reserved by the IETF",
            source: "RFC 4291",
        }
    }
}

/// Whether `addr` is in one of `nets`, whichever way either is written: an IPv6 address
/// that embeds an IPv4 address (IPv4-mapped, NAT64) is also looked up as that IPv4 address,
/// and an IPv4 address also as its IPv4-mapped form (so `::ffff:127.0.0.0/104` and
/// `127.0.0.0/8` mean the same). The class of an address and the egress policy's answer
/// therefore never depend on how the address was written.
pub fn in_prefixes(addr: IpAddr, nets: &[IpNet]) -> bool {
    let other = match addr {
        IpAddr::V6(v6) => embedded_v4(v6).map(|(v4, _)| IpAddr::V4(v4)),
        IpAddr::V4(v4) => Some(IpAddr::V6(v4.to_ipv6_mapped())),
    };
    nets.iter()
        .any(|net| net.contains(&addr) || other.is_some_and(|o| net.contains(&o)))
}

/// Classify an address, honouring the operator's extra "assume global" prefixes (which
/// cover the IPv4-mapped and NAT64 forms of their IPv4 addresses too).
pub fn classify(addr: IpAddr, assume_global: &[IpNet]) -> AddrClass {
    if in_prefixes(addr, assume_global) {
        return AddrClass {
            global: true,
            label: "assumed global (--assume-global)",
            source: "",
        };
    }
    match addr {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// A short human description, e.g. `100.64.0.10 is shared address space (RFC 6598)`.
pub fn describe(addr: IpAddr, class: AddrClass) -> String {
    if class.source.is_empty() {
        format!("{addr} is {}", class.label)
    } else {
        format!("{addr} is {} ({})", class.label, class.source)
    }
}

#[cfg(test)]
#[path = "netclass_tests.rs"]
mod tests;
