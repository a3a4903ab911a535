//! One target spelt twice in `[[checks]]`: the refusal names both entries by index and as
//! written (as the chart and Terraform do), the form they share, and what to do.

use super::tests::load_text;
use super::{ConfigError, Origin};

fn two_checks(a: &str, b: &str) -> String {
    format!("[[checks]]\ntarget = \"{a}\"\ninterval = \"1m\"\n[[checks]]\ntarget = \"{b}\"\ninterval = \"1m\"\n")
}

/// The refusal of `a` then `b`: its key and message (the origin is the file).
fn refusal(name: &str, a: &str, b: &str) -> (String, String) {
    match load_text(name, &two_checks(a, b), vec![]).unwrap_err() {
        ConfigError::Invalid {
            origin: Origin::File(_),
            key,
            message,
        } => (key, message),
        other => panic!("{a} {b}: {other:?}"),
    }
}

#[test]
fn a_target_spelt_twice_names_both_entries_as_written() {
    let (key, message) = refusal(
        "twice-spelt",
        "https://H.example/mcp",
        "https://h.example:443/mcp",
    );
    assert_eq!(key, "checks[1].target");
    assert!(
        message.starts_with("`https://h.example:443/mcp` is the same target as checks[0].target `https://H.example/mcp`: the coordinator compares targets as `https://h.example/mcp` ("),
        "{message}"
    );
    // The words the chart's test and an operator look for.
    assert!(
        message.contains("appears twice") && message.ends_with("keep one entry per target"),
        "{message}"
    );
    let (key, message) = refusal(
        "twice-dots",
        "https://a.example/x/../mcp",
        "https://a.example/mcp",
    );
    assert_eq!(key, "checks[1].target");
    assert!(
        message.contains("`https://a.example/mcp` is the same target as checks[0].target `https://a.example/x/../mcp`")
            && message.contains(". and .. resolved"),
        "{message}"
    );
}

#[test]
fn one_spelling_twice_says_so_without_a_comparison() {
    let (key, message) = refusal(
        "twice-same",
        "https://a.example/mcp",
        "https://a.example/mcp",
    );
    assert_eq!(key, "checks[1].target");
    assert_eq!(
        message,
        "`https://a.example/mcp` appears twice (also checks[0].target); keep one entry per target"
    );
}

/// Two tenants' `?token=` values: one target (reports and metrics hide the value), said so,
/// and neither value is echoed.
#[test]
fn targets_that_differ_only_in_a_credential_say_so_and_hide_it() {
    let (key, message) = refusal(
        "twice-token",
        "https://a.example/mcp?token=s3cr3t-one",
        "https://a.example/mcp?token=s3cr3t-two",
    );
    assert_eq!(key, "checks[1].target");
    assert!(
        message.contains("`https://a.example/mcp?token=[redacted]` is the same target as checks[0].target `https://a.example/mcp?token=[redacted]`: they differ only in a credential value in the query")
            && message.contains("[[credentials]]"),
        "{message}"
    );
    assert!(!message.contains("s3cr3t"), "{message}");
}

/// `host.` is the fully qualified spelling of `host` (one name to DNS) and `[::ffff:a.b.c.d]`
/// the IPv4 address it maps: one endpoint, probed twice (red team 16, nit 8).
#[test]
fn a_trailing_dot_or_a_mapped_ipv4_address_is_the_same_target() {
    let (key, message) = refusal(
        "twice-fqdn",
        "https://mcp.example.com/mcp",
        "https://mcp.example.com./mcp",
    );
    assert_eq!(key, "checks[1].target");
    assert!(
        message.starts_with("`https://mcp.example.com./mcp` is the same target as checks[0].target `https://mcp.example.com/mcp`: the coordinator compares targets as `https://mcp.example.com/mcp` (")
            && message.contains("no trailing dot on the name")
            && message.ends_with("keep one entry per target"),
        "{message}"
    );
    let (key, message) = refusal(
        "twice-mapped",
        "http://[::ffff:127.0.0.1]:8080/mcp",
        "http://127.0.0.1:8080/mcp",
    );
    assert_eq!(key, "checks[1].target");
    assert!(
        message.starts_with("`http://127.0.0.1:8080/mcp` is the same target as checks[0].target `http://[::ffff:127.0.0.1]:8080/mcp`: the coordinator compares targets as `http://127.0.0.1:8080/mcp` (")
            && message.contains("an IPv4-mapped IPv6 address as IPv4"),
        "{message}"
    );
}
