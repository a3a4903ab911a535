//! The same chain judged differently is the vantage's fault; another chain is the target's
//! (red team round 6, #5 and #11).

use vantage_agent::catalog::{CheckId, FindingId, Stage};
use vantage_agent::model::{Cause, Outcome, RegionResult, Severity, TlsVerdict};

use super::{excuse, faults, CLOCK_TOLERANCE_S};
use crate::merge::Merged;
use crate::report::{Decision, Scope};
use crate::test_reports::{clean, fail, merge_of, not_run, set};

const ABC: &[&str] = &["a", "b", "c"];
const NOW: i64 = 1_800_000_000;
const DAY: i64 = 86_400;
const LEAF: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const OTHER_LEAF: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const INT: &str = "3333333333333333333333333333333333333333333333333333333333333333";

/// `r` was presented the chain `leaf` + the intermediate, valid for 20 more days at NOW,
/// judged `verdict` with the clock `clock`.
fn presented(r: RegionResult, leaf: &str, verdict: TlsVerdict, clock: i64) -> RegionResult {
    crate::test_reports::presented(r, &[leaf, INT], NOW, verdict, clock)
}

/// `r` with its vantage given a CA of its own (--target-ca-file) besides the public roots.
fn given_a_ca(mut r: RegionResult) -> RegionResult {
    r.tls.as_mut().unwrap().extra_roots = true;
    r
}

fn accepted(name: &str) -> RegionResult {
    presented(clean(name), LEAF, TlsVerdict::Accepted, NOW)
}

/// A region whose handshake refused the chain (`words`), everything after TLS not run.
fn refused(name: &str, leaf: &str, verdict: TlsVerdict, clock: i64, words: &str) -> RegionResult {
    let mut r = presented(clean(name), leaf, verdict, clock);
    set(
        &mut r,
        "tls.handshake",
        Outcome::Fail,
        Some(Severity::High),
        Some(Cause::Tls),
        words,
    );
    not_run(
        &mut r,
        |id| id.stage() > Stage::Tls,
        "the TLS handshake failed",
    );
    r.era = vantage_agent::model::Era::Unknown;
    r
}

/// b's clock 25 days ahead: the chain is expired there, and the leaf with it.
fn clock_ahead(name: &str, leaf: &str) -> RegionResult {
    let mut r = refused(
        name,
        leaf,
        TlsVerdict::Expired,
        NOW + 25 * DAY,
        "127.0.0.1:443: TLS handshake: the server's certificate was rejected: the leaf certificate (CN=ok.lab) expired",
    );
    fail(
        &mut r,
        "tls.expiry",
        Severity::High,
        "the leaf certificate expired 5.0 days ago",
    );
    r
}

/// `r`'s tls.expiry warned (medium): the leaf expires in `days` days.
fn expiry_warned(r: &mut RegionResult, days: &str) {
    set(
        r,
        "tls.expiry",
        Outcome::Warn,
        Some(Severity::Medium),
        None,
        &format!("the leaf certificate expires in {days} days"),
    );
}

/// b's clock 10 days ahead: the chain a and c accepted is accepted, the leaf expires within
/// 14 days there.
fn clock_ten_days_ahead() -> RegionResult {
    let mut b = presented(clean("b"), LEAF, TlsVerdict::Accepted, NOW + 10 * DAY);
    expiry_warned(&mut b, "10.0");
    b
}

fn run(regions: Vec<RegionResult>) -> Merged {
    merge_of(regions, ABC, &[])
}

fn ids(m: &Merged) -> Vec<&str> {
    m.findings.iter().map(|f| f.id.as_str()).collect()
}

fn only(m: &Merged, id: FindingId) -> &crate::report::Finding {
    m.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{id} in {:?}", ids(m)))
}

/// `m`'s finding `id`: `severity`, regional, in b alone.
fn in_b_alone(m: &Merged, id: FindingId, severity: Severity) -> &crate::report::Finding {
    let f = only(m, id);
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (severity, Scope::Regional, vec!["b".to_string()])
    );
    f
}

/// #5: b lacks the lab CA and refuses the chain a and c verified: probe.trust-store in b,
/// medium, naming --target-ca-file; nothing about the target's TLS; unknown, never pass.
#[test]
fn a_region_refusing_the_chain_others_verified_is_its_trust_store() {
    let b = refused(
        "b",
        LEAF,
        TlsVerdict::UnknownIssuer,
        NOW,
        "127.0.0.1:443: TLS handshake: the server's certificate was rejected: it is not signed by an authority this vantage trusts (unknown issuer: …)",
    );
    let m = run(vec![accepted("a"), b, accepted("c")]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert_eq!(ids(&m), vec!["probe.trust-store"], "{:?}", m.findings);
    let f = in_b_alone(&m, FindingId::ProbeTrustStore, Severity::Medium);
    let e = f.evidence.join(" | ");
    assert!(
        e.starts_with(
            "b: tls.handshake (this vantage does not trust the issuer of the chain a, c verified"
        ) && e.contains("vantage-agent --target-ca-file")
            && e.contains("probe.ca_file"),
        "{e}"
    );
    assert!(
        f.remediation.contains("--target-ca-file"),
        "{}",
        f.remediation
    );
    assert!(m.reason.contains("probe.trust-store in b"), "{}", m.reason);
}

/// #11: b's clock is 25 days ahead and judges the leaf a and c accepted (20 days left)
/// expired: probe.clock-skew in b with the days, no tls.expiry or tls.handshake.
#[test]
fn a_region_judging_the_same_chain_expired_with_a_far_clock_is_its_clock() {
    let m = run(vec![accepted("a"), clock_ahead("b", LEAF), accepted("c")]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert_eq!(ids(&m), vec!["probe.clock-skew"], "{:?}", m.findings);
    let f = in_b_alone(&m, FindingId::ProbeClockSkew, Severity::Medium);
    let e = f.evidence.join(" | ");
    assert!(
        e.starts_with("b: tls.handshake, tls.expiry (this vantage's clock read")
            && e.contains("25.0 days ahead of the clocks of a, c")
            && e.contains("leaf sha256 1111111111111111"),
        "{e}"
    );
}

/// #11 at +10 days: the handshake passes everywhere, b alone says the leaf expires within
/// 14 days. The same leaf has one notAfter: b's clock, not a review of the target.
#[test]
fn a_near_expiry_only_a_far_clock_sees_is_its_clock() {
    let b = clock_ten_days_ahead();
    let m = run(vec![accepted("a"), b, accepted("c")]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert_eq!(ids(&m), vec!["probe.clock-skew"], "{:?}", m.findings);
    let e = only(&m, FindingId::ProbeClockSkew).evidence.join(" | ");
    assert!(
        e.starts_with("b: tls.expiry (") && e.contains("10.0 days ahead of"),
        "{e}"
    );
}

/// Controls: b was presented ANOTHER leaf (a different edge) and it is expired or untrusted
/// there: the target's finding, blocked, as before. The same leaf refused everywhere is the
/// target's too (no region accepted it).
#[test]
fn another_chain_or_no_region_accepting_stays_the_targets() {
    let m = run(vec![
        accepted("a"),
        clock_ahead("b", OTHER_LEAF),
        accepted("c"),
    ]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    in_b_alone(&m, FindingId::TlsHandshake, Severity::High);
    assert!(!ids(&m).contains(&"probe.clock-skew"), "{:?}", ids(&m));

    let untrusted = |name: &str| {
        refused(
            name,
            LEAF,
            TlsVerdict::UnknownIssuer,
            NOW,
            "TLS handshake: unknown issuer",
        )
    };
    let m = run(vec![untrusted("a"), untrusted("b"), untrusted("c")]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    let f = only(&m, FindingId::TlsHandshake);
    assert_eq!((f.scope, f.regions.len()), (Scope::Global, 3));
    assert!(!ids(&m).contains(&"probe.trust-store"), "{:?}", ids(&m));

    let m = run(vec![
        accepted("a"),
        refused(
            "b",
            OTHER_LEAF,
            TlsVerdict::UnknownIssuer,
            NOW,
            "unknown issuer",
        ),
        accepted("c"),
    ]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    assert_eq!(only(&m, FindingId::TlsHandshake).regions, vec!["b"]);
    assert!(!ids(&m).contains(&"probe.trust-store"), "{:?}", ids(&m));
}

/// The rule's edges, on [`faults`] itself: clocks within the tolerance are one clock (a
/// verdict that differs there is not blamed on a clock); a region whose addresses presented
/// different chains, or an accepting region whose handshake did not pass, or a result
/// without TLS evidence (an older agent) compares with nothing.
#[test]
fn the_rule_needs_the_same_chain_a_passing_region_and_a_far_clock() {
    let a = accepted("a");
    let near = clock_ahead("b", LEAF);
    let mut near = near.clone();
    near.tls.as_mut().unwrap().clock = NOW + CLOCK_TOLERANCE_S;
    assert_eq!(faults(&near, &[&a, &near]), vec![]);

    let far = clock_ahead("b", LEAF);
    let f = faults(&far, &[&a, &far]).pop().expect("a clock fault");
    assert_eq!(
        (f.cause, f.checks.clone()),
        (
            Cause::ClockSkew,
            vec![CheckId::TlsHandshake, CheckId::TlsExpiry]
        )
    );

    let mut mixed = far.clone();
    mixed.tls.as_mut().unwrap().mixed = true;
    assert_eq!(faults(&mixed, &[&a, &mixed]), vec![]);

    let mut old_agent = far.clone();
    old_agent.tls = None;
    assert_eq!(faults(&old_agent, &[&a, &old_agent]), vec![]);

    let mut a_failed = a.clone();
    fail(&mut a_failed, "tls.handshake", Severity::High, "alert");
    assert_eq!(faults(&far, &[&a_failed, &far]), vec![]);

    // A clock behind: "not yet valid" there, said as behind.
    let mut behind = refused(
        "b",
        LEAF,
        TlsVerdict::NotYetValid,
        NOW - 90 * DAY,
        "not valid yet",
    );
    behind.tls.as_mut().unwrap().leaf_not_before = NOW - 70 * DAY;
    let f = faults(&behind, &[&a, &behind])
        .pop()
        .expect("a clock fault");
    assert!(
        f.words.contains("90.0 days behind the clocks of a"),
        "{}",
        f.words
    );

    // excuse() turns exactly the explained checks into the vantage's gaps.
    let out = excuse(&[&a, &far]);
    let b = out[1].as_ref();
    for id in [CheckId::TlsHandshake, CheckId::TlsExpiry] {
        let c = b.check(id).unwrap();
        assert_eq!(
            (c.outcome, c.cause, c.severity),
            (Outcome::Unknown, Some(Cause::ClockSkew), None)
        );
    }
    assert!(matches!(out[0], std::borrow::Cow::Borrowed(_)));
}

/// An agent without the lab CA whose clock is also far off: the handshake is its trust
/// store, the leaf's expiry its clock; neither is the target's.
#[test]
fn a_vantage_with_both_faults_has_both_findings() {
    let mut b = refused(
        "b",
        LEAF,
        TlsVerdict::UnknownIssuer,
        NOW + 25 * DAY,
        "unknown issuer",
    );
    fail(
        &mut b,
        "tls.expiry",
        Severity::High,
        "the leaf certificate expired 5.0 days ago",
    );
    let f = faults(&b, &[&accepted("a"), &b]);
    assert_eq!(
        f.iter()
            .map(|f| (f.cause, f.checks.clone()))
            .collect::<Vec<_>>(),
        vec![
            (Cause::TrustStore, vec![CheckId::TlsHandshake]),
            (Cause::ClockSkew, vec![CheckId::TlsExpiry]),
        ]
    );
    let m = run(vec![accepted("a"), b, accepted("c")]);
    assert_eq!(
        ids(&m),
        vec!["probe.clock-skew", "probe.trust-store"],
        "{:?}",
        m.findings
    );
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
}

/// Monotone (checks.md 4): a's own tls.expiry getting worse (a warning there too) never takes
/// b's clock fault away. It did when the rule asked a's tls.expiry to pass: b's warning then
/// counted, and the decision improved from unknown to review.
#[test]
fn a_worse_expiry_where_the_chain_was_accepted_keeps_the_clock_fault() {
    let b = clock_ten_days_ahead();
    let mut a = accepted("a");
    expiry_warned(&mut a, "13.0");
    let m = run(vec![a, b, accepted("c")]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert_eq!(
        ids(&m),
        vec!["probe.clock-skew", "tls.expiry"],
        "{:?}",
        m.findings
    );
    assert_eq!(only(&m, FindingId::TlsExpiry).regions, vec!["a"]);
}

/// The odd clock is the one blamed. The chain really expired: a and c (right clocks) refuse
/// it, b (25 days behind) accepts it. b's clock is the odd one, so a's and c's refusals stay
/// the target's (blocked). With only a and b, neither clock is the majority's: a's refusal
/// is in doubt (probe.clock-skew, unknown), never a pass.
#[test]
fn the_majority_of_clocks_decides_which_one_is_odd() {
    let expired = |name: &str| {
        refused(
            name,
            LEAF,
            TlsVerdict::Expired,
            NOW,
            "TLS handshake: the server's certificate was rejected: it has expired",
        )
    };
    let behind = presented(clean("b"), LEAF, TlsVerdict::Accepted, NOW - 25 * DAY);
    let m = run(vec![expired("a"), behind.clone(), expired("c")]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    assert_eq!(only(&m, FindingId::TlsHandshake).regions, vec!["a", "c"]);
    assert!(!ids(&m).contains(&"probe.clock-skew"), "{:?}", ids(&m));

    let m = merge_of(vec![expired("a"), behind], &["a", "b"], &[]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    assert_eq!(ids(&m), vec!["probe.clock-skew"], "{:?}", m.findings);
    let e = only(&m, FindingId::ProbeClockSkew).evidence.join(" | ");
    assert!(e.contains("25.0 days ahead of the clocks of b"), "{e}");
}

/// Red team round 12, item 6: a and c were given the private CA that issued the target's
/// chain, b has the public roots only, as every public client. Whether b's store or the
/// target's certificate is wrong depends on who the endpoint serves: the words say both (the
/// fix never only tells the operator to give b the private CA), unknown, never pass. Given a
/// CA of its own (not the one that issued the chain), or beside a region on the public roots
/// alone that accepted, b's store is the odd one and the words say so alone.
#[test]
fn a_region_on_the_public_roots_refusing_a_private_chain_names_both_sides() {
    let refusing = || {
        refused(
            "b",
            LEAF,
            TlsVerdict::UnknownIssuer,
            NOW,
            "127.0.0.1:443: TLS handshake: the server's certificate was rejected: it is not signed by an authority this vantage trusts (unknown issuer: …)",
        )
    };
    let words = |m: &Merged| only(m, FindingId::ProbeTrustStore).evidence.join(" | ");
    let (a, c) = (given_a_ca(accepted("a")), given_a_ca(accepted("c")));
    let m = run(vec![a.clone(), refusing(), c.clone()]);
    assert_eq!(ids(&m), vec!["probe.trust-store"], "{:?}", m.findings);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
    let e = words(&m);
    assert!(
        e.contains("verified (the same chain")
            && e.contains("only with a CA they were given")
            && e.contains("public roots alone")
            && e.contains("serve a chain from a public CA")
            && e.contains("--target-ca-file"),
        "{e}"
    );

    // b was given a CA too, and not the one that issued the chain: its store is in doubt.
    let m = run(vec![a.clone(), given_a_ca(refusing()), c.clone()]);
    assert_eq!(ids(&m), vec!["probe.trust-store"], "{:?}", m.findings);
    assert!(!words(&m).contains("public CA"), "{}", words(&m));
    // A region on the public roots alone accepted it: b's store is the odd one.
    let m = run(vec![a, refusing(), accepted("c")]);
    assert_eq!(ids(&m), vec!["probe.trust-store"], "{:?}", m.findings);
    assert!(!words(&m).contains("public CA"), "{}", words(&m));
}

/// Red team round 12, D2: a region whose trust store or clock fails most scheduled targets
/// is now degraded (`checks::degraded`). Being degraded hides nothing: a blocking fault
/// another region saw blocks beside b's probe.trust-store or probe.clock-skew, and what b
/// itself observed past its clock's judgement (a high failure) blocks too. The decision is
/// the same whether or not b is degraded, and never pass.
#[test]
fn a_degraded_trust_store_or_clock_region_hides_no_fault() {
    let with_method_unknown = |mut r: RegionResult| {
        fail(
            &mut r,
            "method.unknown",
            Severity::High,
            "an unknown method got 200",
        );
        r
    };
    let trust = refused(
        "b",
        LEAF,
        TlsVerdict::UnknownIssuer,
        NOW,
        "127.0.0.1:443: TLS handshake: the server's certificate was rejected: it is not signed by an authority this vantage trusts (unknown issuer: …)",
    );
    for (regions, vantage, seen_in) in [
        // Another region saw it; b did not get past TLS.
        (
            vec![with_method_unknown(accepted("a")), trust, accepted("c")],
            FindingId::ProbeTrustStore,
            "a",
        ),
        // b saw it itself; its clock judged only tls.expiry.
        (
            vec![
                accepted("a"),
                with_method_unknown(clock_ten_days_ahead()),
                accepted("c"),
            ],
            FindingId::ProbeClockSkew,
            "b",
        ),
    ] {
        let plain = run(regions.clone());
        let degraded = merge_of(regions, ABC, &["b"]);
        assert_eq!(degraded, plain, "{vantage}: being degraded changes nothing");
        assert_eq!(degraded.decision, Decision::Blocked, "{}", degraded.reason);
        let f = only(&degraded, FindingId::MethodUnknown);
        assert_eq!(f.severity, Severity::High);
        assert!(f.regions.contains(&seen_in.to_string()), "{:?}", f.regions);
        in_b_alone(&degraded, vantage, Severity::Medium);
        assert!(
            !ids(&degraded).contains(&"fleet.vantage-degraded"),
            "{:?}",
            ids(&degraded)
        );
    }
}
