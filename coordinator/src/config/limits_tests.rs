//! Values that would switch a protection off or make the coordinator useless, and
//! environment variables that look like overrides but would be ignored: refused, with the
//! key (or the variable) and the fix.

use super::tests::{load_text, var};
use super::*;

#[test]
fn values_that_switch_a_protection_off_or_do_nothing_are_refused() {
    let check = "[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\n";
    let cases: Vec<(String, &str)> = vec![
        (
            "[fleet]\nlocal_agent = false\n".into(),
            "key `fleet.local_agent`: no region would run checks",
        ),
        (
            "[probe]\nallow_non_global = [\"0.0.0.0/0\"]\n".into(),
            "key `probe.allow_non_global`: 0.0.0.0/0 covers every address",
        ),
        (
            "[probe]\nassume_global = [\"::/0\"]\n".into(),
            "key `probe.assume_global`: ::/0 covers every address",
        ),
        // Everything, spelt another way (a fresh user's round 8, item 8).
        (
            "[probe]\nallow_non_global = [\"::ffff:0:0/96\"]\n".into(),
            "key `probe.allow_non_global`: ::ffff:0.0.0.0/96 covers more than a /8 of the IPv4 space (or all of it, through IPv4-mapped IPv6)",
        ),
        (
            "[probe]\nallow_non_global = [\"198.51.100.0/24\", \"0.0.0.0/1\", \"128.0.0.0/1\"]\n".into(),
            "key `probe.allow_non_global`: 0.0.0.0/1 covers more than a /8",
        ),
        (
            "[probe]\nassume_global = [\"8000::/1\"]\n".into(),
            "key `probe.assume_global`: 8000::/1 covers more than a /8",
        ),
        (
            "[probe]\nassume_global = [\"::/80\"]\n".into(),
            "key `probe.assume_global`: ::/80 covers more than a /8",
        ),
        (
            "[probe]\ncheck_timeout = \"99h\"\n".into(),
            "key `probe.check_timeout`: 4days 3h is out of bounds: one exchange's timeout is greater than zero and at most 10m",
        ),
        (
            "[probe]\ncheck_timeout = \"0s\"\n".into(),
            "key `probe.check_timeout`: 0s is out of bounds",
        ),
        (
            format!("{check}deadline = \"2m\"\n"),
            "key `checks[0].deadline`: https://a.example/mcp: 2m is longer than its interval (1m)",
        ),
        (
            "[server]\nmax_body_bytes = 0\n".into(),
            "key `server.max_body_bytes`: must be greater than zero",
        ),
        (
            "[store]\nmax_reports = 0\n".into(),
            "key `store.max_reports`: must be greater than zero",
        ),
        (
            "[server]\nchecks_per_target_per_minute = 0\n".into(),
            "key `server.checks_per_target_per_minute`: must be greater than zero",
        ),
        (
            "[server]\nmax_checks_in_flight = 0\n".into(),
            "key `server.max_checks_in_flight`: must be greater than zero (0 would refuse every on-demand check); omit it for the default",
        ),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let e = load_text(&format!("guard{i}"), text, vec![]).unwrap_err();
        assert!(matches!(e, ConfigError::Invalid { .. }), "{text:?}: {e:?}");
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
    }
    // The bounds themselves are fine (a deadline at its interval, longer than the wait).
    let ok = "[probe]\ncheck_timeout = \"10m\"\nallow_non_global = [\"127.0.0.0/8\"]\n[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"20m\"\ndeadline = \"20m\"\n";
    load_text("guard-ok", ok, vec![]).unwrap();
}

#[test]
fn misspelt_overrides_are_refused_not_ignored() {
    for (variable, needle) in [
        (
            "VANTAGE_BOGUS__X",
            "environment variable VANTAGE_BOGUS__X: key `bogus.x`: `bogus` is not a configuration section",
        ),
        (
            "VANTAGE_SERVER_API_LISTEN",
            "environment variable VANTAGE_SERVER_API_LISTEN: key `server.api_listen`: looks like an override of server.api_listen with one underscore after the section, so it would be ignored; write VANTAGE_SERVER__API_LISTEN",
        ),
    ] {
        let e = Config::load_with_env(None, vec![var(variable, "127.0.0.1:1")]).unwrap_err();
        assert!(e.to_string().starts_with(needle), "{e}");
    }
    // Not configuration: passes.
    let env = vec![
        var("VANTAGE_LOG", "debug"),
        var("VANTAGE_LOG_FORMAT", "json"),
        var("VANTAGE_API_TOKEN", "x"),
        var("VANTAGE_AGENT_TOKEN_EU_WEST", "y"),
        var("VANTAGE_FUZZ_SECONDS", "3"),
    ];
    Config::load_with_env(None, env).unwrap();
}

#[test]
fn the_lab_prefixes_a_user_names_stay_accepted() {
    for ok in [
        "127.0.0.0/8",
        "100.64.0.0/10",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "::ffff:100.64.0.0/112",
        "::ffff:127.0.0.0/104",
        "2001:db8::/32",
        "fc00::/7",
    ] {
        let prefix: ipnet::IpNet = ok.parse().unwrap();
        assert_eq!(egress_catch_all(&prefix), None, "{ok}");
    }
}

/// One grammar for an egress entry, as `vantage check --allow-non-global` has it (fresh eyes
/// round 17, nit 2: a bare address was "invalid IP address syntax" here): a CIDR prefix, or
/// a bare address, which is that address alone (/32, /128); in the file and in a variable,
/// for both lists. An unparsable one is still refused at its index.
#[test]
fn an_egress_entry_is_a_prefix_or_a_bare_address_as_on_the_command_line() {
    let net = |s: &str| s.parse::<ipnet::IpNet>().unwrap();
    let cfg = load_text(
        "bare",
        "[probe]\nallow_non_global = [\"203.0.113.7\", \"2001:db8::7\", \"198.51.100.0/24\"]\nassume_global = [\"192.0.2.1\"]\n",
        vec![],
    )
    .unwrap();
    assert_eq!(
        cfg.probe.allow_non_global,
        [
            net("203.0.113.7/32"),
            net("2001:db8::7/128"),
            net("198.51.100.0/24")
        ]
    );
    assert_eq!(cfg.probe.assume_global, [net("192.0.2.1/32")]);
    let cfg = Config::load_with_env(
        None,
        vec![
            var(
                "VANTAGE_PROBE__ALLOW_NON_GLOBAL",
                "203.0.113.7,2001:db8:b::/64",
            ),
            var("VANTAGE_PROBE__ASSUME_GLOBAL", "::ffff:198.51.100.7"),
        ],
    )
    .unwrap();
    assert_eq!(
        cfg.probe.allow_non_global,
        [net("203.0.113.7/32"), net("2001:db8:b::/64")]
    );
    assert_eq!(cfg.probe.assume_global, [net("::ffff:198.51.100.7/128")]);
    for (text, key) in [
        (
            "[probe]\nallow_non_global = [\"198.51.100.0/24\", \"203.0.113.300\"]\n",
            "probe.allow_non_global[1]",
        ),
        (
            "[probe]\nassume_global = [\"203.0.113.7/\"]\n",
            "probe.assume_global[0]",
        ),
    ] {
        let e = load_text("bare-bad", text, vec![]).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Value { key: k, .. } if k == key),
            "{text:?}: {e:?}"
        );
        let said = e.to_string();
        assert!(
            said.contains("invalid IP address syntax")
                && said.contains("or an address (203.0.113.7, a /32"),
            "{said}"
        );
    }
}
