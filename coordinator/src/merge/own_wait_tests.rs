//! A region's own short connect wait is not the target's silence (red team round 18, D8);
//! a wait at least as long as the others' connect stays `egress.blocked` (the firewall).

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, Outcome, RegionResult, Severity};

use super::*;
use crate::merge::Merged;
use crate::report::{Decision, Finding, Scope};
use crate::test_reports::{clean, merge_of, set, skip, unreachable};

const EU_US_AP: &[&str] = &["eu", "us", "ap"];
const ADDR: &str = "198.51.100.10:443";

/// The agent's words for a connect that timed out after `after` ms, set to wait `within`.
fn timed_out(addr: &str, after: u64, within: &str) -> String {
    format!(
        "{addr} timeout after {after} ms (connect: no answer to the TCP handshake within {within}; a firewall that drops packets looks like this)"
    )
}

/// `region` connected to `observed`'s addresses (`net.connect` passed with those words).
fn connected(region: &str, observed: &str) -> RegionResult {
    let mut r = clean(region);
    set(&mut r, "net.connect", Outcome::Pass, None, None, observed);
    skip(&mut r, "net.ipv6", "no IPv6 address");
    r
}

/// `region` connected nowhere: `net.connect` failed (high) with `observed`, the rest not run.
fn cut_off(region: &str, cause: Cause, observed: &str) -> RegionResult {
    let mut r = unreachable(region, Some(cause), observed);
    skip(&mut r, "net.ipv6", "no IPv6 address");
    r
}

fn only(m: &Merged, id: FindingId) -> &Finding {
    m.findings.iter().find(|f| f.id == id).unwrap_or_else(|| {
        panic!(
            "{id} in {:?}",
            m.findings.iter().map(|f| f.id.as_str()).collect::<Vec<_>>()
        )
    })
}

fn has(m: &Merged, id: FindingId) -> bool {
    m.findings.iter().any(|f| f.id == id)
}

/// The D8 reproduction (lab/scen3.sh): ap (`--check-timeout 500ms`) gave up on the address
/// after 518 ms; eu connected to it in 1007 ms (a slow accept queue), us in 0 ms. Before the
/// fix: `egress.blocked` high in ap ("a firewall that drops packets"), decision blocked.
#[test]
fn a_wait_shorter_than_anothers_connect_is_the_regions_own() {
    let eu = connected("eu", &format!("{ADDR} connected in 1007 ms"));
    let us = connected("us", &format!("{ADDR} connected in 0 ms"));
    let ap = cut_off("ap", Cause::Timeout, &timed_out(ADDR, 518, "500 ms"));
    let m = merge_of(vec![eu, us, ap], EU_US_AP, &[]);

    assert!(
        !has(&m, FindingId::EgressBlocked),
        "no egress.blocked: {:?}",
        m.findings
    );
    assert!(!has(&m, FindingId::NetConnect));
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    let f = only(&m, FindingId::ProbeIncomplete);
    assert_eq!(f.severity, Severity::Medium);
    assert_eq!(f.scope, Scope::Regional);
    assert_eq!(f.regions, ["ap"]);
    // ap's wait next to eu's connect time, and the fix that names the region's timeout.
    let line = f
        .evidence
        .iter()
        .find(|e| e.starts_with("ap: net.connect ("))
        .unwrap_or_else(|| panic!("{:?}", f.evidence));
    assert!(
        line.contains(&format!(
            "gave up on {ADDR} after 518 ms (its connect wait: 500 ms), and eu connected to the same address in 1007 ms"
        )),
        "{line}"
    );
    assert!(line.contains("above 1007 ms"), "{line}");
    assert!(
        !line.contains("a firewall that drops packets looks like this"),
        "{line}"
    );
    assert_eq!(f.remediation, OWN_WAIT_FIX);
    assert!(m.reason.contains("probe.incomplete in ap"), "{}", m.reason);
}

/// The firewall: ap waited at least as long as every connect the others measured to the
/// same address (equal waits; a short wait where the others connected at once; the same
/// number of ms). `egress.blocked`, high, regional in ap, as before.
#[test]
fn a_wait_at_least_as_long_as_the_others_connect_stays_egress_blocked() {
    let cases: &[(&str, &str, u64, &str)] = &[
        // (eu's time, us's time, ap's wait, ap's set wait)
        ("1007", "0", 5001, "5 s"), // equal waits (5 s each): a silent drop
        ("0", "3", 500, "500 ms"),  // lab runs 3 and 6: the others connected at once
        ("518", "12", 518, "500 ms"), // waited exactly as long as the slowest connect
        ("40", "40", 2000, "2 s"),
    ];
    for &(eu_ms, us_ms, ap_ms, within) in cases {
        let eu = connected("eu", &format!("{ADDR} connected in {eu_ms} ms"));
        let us = connected("us", &format!("{ADDR} connected in {us_ms} ms"));
        let ap = cut_off("ap", Cause::Timeout, &timed_out(ADDR, ap_ms, within));
        let m = merge_of(vec![eu, us, ap], EU_US_AP, &[]);
        let f = only(&m, FindingId::EgressBlocked);
        assert_eq!(f.severity, Severity::High, "{eu_ms}/{us_ms}/{ap_ms}");
        assert_eq!(f.scope, Scope::Regional);
        assert_eq!(f.regions, ["ap"]);
        assert!(f.evidence[0].starts_with(&format!("ap: {ADDR} timeout after {ap_ms} ms")));
        assert_eq!(m.decision, Decision::Blocked, "{eu_ms}/{us_ms}/{ap_ms}");
        assert_eq!(m.reason, "egress.blocked in ap");
    }
}

/// What stays evidence about the target beside a short wait: an answer on another address
/// (refused), an address no other region connected to, and every region failing the same
/// address (the target is down: `net.connect` global).
#[test]
fn only_a_wait_cut_short_is_excused() {
    let other = "198.51.100.11:443";
    // ap: its wait cut 198.51.100.10 (eu needed 1007 ms) but 198.51.100.11 refused it, an
    // answer: that failure decides, egress.blocked stays.
    let eu = connected(
        "eu",
        &format!("{ADDR} connected in 1007 ms; {other} connected in 2 ms"),
    );
    let ap = cut_off(
        "ap",
        Cause::Timeout,
        &format!(
            "{}; {other} refused after 1 ms (connect: Connection refused (os error 111))",
            timed_out(ADDR, 518, "500 ms")
        ),
    );
    let m = merge_of(vec![eu.clone(), ap], &["eu", "ap"], &[]);
    assert_eq!(only(&m, FindingId::EgressBlocked).regions, ["ap"]);
    assert_eq!(m.decision, Decision::Blocked);

    // An address no other region connected to: nothing to compare the wait with.
    let ap = cut_off(
        "ap",
        Cause::Timeout,
        &timed_out("198.51.100.99:443", 518, "500 ms"),
    );
    let m = merge_of(vec![eu, ap], &["eu", "ap"], &[]);
    assert_eq!(only(&m, FindingId::EgressBlocked).regions, ["ap"]);
    assert_eq!(m.decision, Decision::Blocked);

    // Every region timed out on the address: the target's (down everywhere), global.
    let eu = cut_off("eu", Cause::Timeout, &timed_out(ADDR, 5001, "5 s"));
    let ap = cut_off("ap", Cause::Timeout, &timed_out(ADDR, 518, "500 ms"));
    let m = merge_of(vec![eu, ap], &["eu", "ap"], &[]);
    let f = only(&m, FindingId::NetConnect);
    assert_eq!(f.scope, Scope::Global);
    assert!(!has(&m, FindingId::EgressBlocked));
    assert_eq!(m.decision, Decision::Blocked);
}

/// Two addresses both cut by ap's wait before the others connected: both are named, and
/// the fix asks for a wait above the longest connect. IPv6's own check (`net.ipv6`, a low
/// warning beside a working IPv4) follows the same rule: not a warning about the target.
#[test]
fn every_cut_address_is_named_and_ipv6_follows_the_same_rule() {
    let v6 = "[2001:db8::10]:443";
    let eu = connected(
        "eu",
        &format!("{ADDR} connected in 700 ms; {v6} connected in 1200 ms"),
    );
    let ap = cut_off(
        "ap",
        Cause::Timeout,
        &format!(
            "{}; {}",
            timed_out(ADDR, 501, "500 ms"),
            timed_out(v6, 502, "500 ms")
        ),
    );
    let cuts = own_wait(&ap, CheckId::NetConnect, &[&eu, &ap]).expect("ap's own wait");
    assert_eq!(cuts.len(), 2);
    assert_eq!((cuts[1].waited_ms, cuts[1].other_ms), (502, 1200));
    let m = merge_of(vec![eu.clone(), ap], &["eu", "ap"], &[]);
    assert!(!has(&m, FindingId::EgressBlocked));
    let f = only(&m, FindingId::ProbeIncomplete);
    assert!(f.evidence[0].contains("above 1200 ms"), "{:?}", f.evidence);
    assert_eq!(m.decision, Decision::Unknown);

    // ap connected over IPv4; its IPv6 connect gave up before eu's IPv6 connect completed.
    let mut ap = connected(
        "ap",
        &format!("{ADDR} connected in 3 ms; {}", timed_out(v6, 502, "500 ms")),
    );
    set(
        &mut ap,
        "net.ipv6",
        Outcome::Warn,
        Some(Severity::Low),
        Some(Cause::Timeout),
        &format!("every IPv6 connect failed while IPv4 works: {ADDR} connected in 3 ms"),
    );
    let m = merge_of(vec![eu, ap.clone()], &["eu", "ap"], &[]);
    assert!(!has(&m, FindingId::NetIpv6), "{:?}", m.findings);
    let f = only(&m, FindingId::ProbeIncomplete);
    assert!(
        f.evidence.iter().any(|e| e.starts_with("ap: net.ipv6 (")),
        "{:?}",
        f.evidence
    );
    // With eu's IPv6 connect faster than ap's wait, the warning is about the target again.
    let eu = connected(
        "eu",
        &format!("{ADDR} connected in 700 ms; {v6} connected in 20 ms"),
    );
    let m = merge_of(vec![eu, ap], &["eu", "ap"], &[]);
    assert_eq!(only(&m, FindingId::NetIpv6).regions, ["ap"]);
}

/// The evidence is read as the agent writes it (`connect_verdict.rs`), the wait it was set
/// to included; a region alone has nothing to compare with.
#[test]
fn the_times_are_read_from_net_connects_evidence() {
    let ap = cut_off(
        "ap",
        Cause::Timeout,
        &format!(
            "{}; [2001:db8::1]:443 not tried (this vantage's own routing) after 0 ms (x); 198.51.100.12:443 refused after 2 ms (connect: refused)",
            timed_out(ADDR, 518, "500 ms")
        ),
    );
    assert_eq!(
        tries(&ap),
        vec![
            (
                ADDR.parse().unwrap(),
                Try::Timeout(518, Some("500 ms".into()))
            ),
            ("[2001:db8::1]:443".parse().unwrap(), Try::NotTried),
            ("198.51.100.12:443".parse().unwrap(), Try::Answered),
        ]
    );
    let alone = cut_off("ap", Cause::Timeout, &timed_out(ADDR, 518, "500 ms"));
    assert_eq!(own_wait(&alone, CheckId::NetConnect, &[&alone]), None);
}
