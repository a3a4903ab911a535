//! The egress policy's URL and address parsing: whatever a target writes (a URL in a
//! challenge, a PRM, a Location; an address in any spelling), the policy's answer agrees
//! with the class of the address it names, mapped and NAT64 forms agree with their IPv4
//! address, and a refusal always says why and how to allow it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};
use vantage_agent::egress::{location_note, EgressPolicy};
use vantage_agent::{netclass, Policy};

use crate::fuzz;

fn policy() -> EgressPolicy {
    EgressPolicy::new(&Policy {
        assume_global: vec!["198.51.100.0/24".parse().unwrap()],
        allow_non_global: vec![
            "100.64.0.0/10".parse().unwrap(),
            "::ffff:127.0.0.2/128".parse().unwrap(),
            "fd00::/8".parse().unwrap(),
        ],
    })
}

/// The address a URL's host names, if it is a literal.
fn literal(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        Host::Ipv4(a) => Some(IpAddr::V4(a)),
        Host::Ipv6(a) => Some(IpAddr::V6(a)),
        Host::Domain(_) => None,
    }
}

fn nat64(v4: Ipv4Addr) -> IpAddr {
    let o = v4.octets();
    let mut seg = [0x64, 0xff9b, 0, 0, 0, 0, 0, 0];
    seg[6] = u16::from_be_bytes([o[0], o[1]]);
    seg[7] = u16::from_be_bytes([o[2], o[3]]);
    IpAddr::V6(Ipv6Addr::from(seg))
}

/// What holds for any one address.
fn address_invariants(p: &EgressPolicy, a: IpAddr) {
    let class = p.class(a);
    match p.check(a) {
        Ok(()) => {}
        Err(r) => {
            assert!(!class.global, "{a}: a global address refused");
            assert_eq!(r.addr, a);
            let text = r.to_string();
            assert!(
                text.starts_with(&format!("refused by egress policy: {a} is "))
                    && text.ends_with("; allow it with probe.allow_non_global"),
                "{text}"
            );
        }
    }
    if let IpAddr::V4(v4) = a {
        // A non-global IPv4 address and its mapped and NAT64 forms get the same answer.
        if !class.global {
            let plain = p.check(a).is_ok();
            assert_eq!(
                p.check(IpAddr::V6(v4.to_ipv6_mapped())).is_ok(),
                plain,
                "mapped {a}"
            );
            assert_eq!(p.check(nat64(v4)).is_ok(), plain, "NAT64 {a}");
        } else {
            assert!(p.check(nat64(v4)).is_ok(), "NAT64 of global {a}");
        }
    }
    if let IpAddr::V6(v6) = a {
        if let Some((v4, _)) = netclass::embedded_v4(v6) {
            let inner = p.class(IpAddr::V4(v4));
            if !inner.global {
                assert_eq!(class, inner, "{a} is judged as {v4}");
            }
        }
    }
}

#[test]
fn fuzz_egress_urls_and_addresses() {
    let p = policy();
    let base = Url::parse("http://127.0.0.2:8080/mcp").unwrap();
    fuzz(
        "egress",
        &[
            b"http://127.0.0.1:18082/latest/meta-data/iam",
            b"http://[::ffff:127.0.0.1]/x",
            b"http://[64:ff9b::7f00:1]/",
            b"http://0x7f.1/",
            b"http://2130706433/",
            b"https://169.254.169.254/",
            b"http://user:pw@8.8.8.8/",
            b"//internal.lab.test:80/prm",
            b"file:///etc/passwd",
            b"100.64.0.10",
            b"::ffff:100.64.0.10",
            b"fe80::1%eth0",
        ],
        &[
            b"[",
            b"]",
            b":",
            b"::",
            b"ffff:",
            b"64:ff9b::",
            b".",
            b"0x",
            b"%",
            b"@",
            b"/",
            b"http://",
            b"127.",
            b"255",
            b"0",
        ],
        |input| {
            let text = String::from_utf8_lossy(input);
            if let Ok(a) = text.trim().parse::<IpAddr>() {
                address_invariants(&p, a);
            }
            // Raw bytes as addresses: every IPv4 and IPv6 value is judged.
            if input.len() >= 4 {
                address_invariants(&p, IpAddr::from([input[0], input[1], input[2], input[3]]));
            }
            if input.len() >= 16 {
                let mut o = [0u8; 16];
                o.copy_from_slice(&input[..16]);
                address_invariants(&p, IpAddr::from(o));
            }
            if let Ok(url) = Url::parse(&text) {
                let verdict = p.check_url(&url);
                if verdict.is_ok() {
                    assert!(matches!(url.scheme(), "http" | "https"));
                    assert!(url.username().is_empty() && url.password().is_none());
                }
                if let Some(a) = literal(&url) {
                    if matches!(url.scheme(), "http" | "https")
                        && url.username().is_empty()
                        && url.password().is_none()
                    {
                        assert_eq!(verdict.is_ok(), p.check(a).is_ok(), "{url}");
                    }
                }
            }
            let note = location_note(&p, &base, &text);
            assert!(note.contains("not followed"), "{note}");
        },
    );
}
