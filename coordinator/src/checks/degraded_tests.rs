//! The degraded-region detector (`degraded.rs`): what makes a region degraded, what never
//! does, and how it heals.

use super::*;
use crate::report::{Decision, SCHEMA_ID};
use vantage_agent::model::{
    Cause, CheckResult, Era, Outcome, RegionResult, RegionStatus, TlsVerdict,
};

fn region(name: &str, connect: Outcome) -> RegionResult {
    let mut r = RegionResult::absent(name, RegionStatus::Complete);
    r.checks.push(CheckResult {
        id: CheckId::NetConnect,
        outcome: connect,
        observed: String::new(),
        expected: String::new(),
        duration_ms: 0,
        severity: None,
        cause: None,
    });
    r
}

fn report(target: &str, regions: Vec<RegionResult>) -> Report {
    Report {
        schema: SCHEMA_ID.into(),
        id: "x".into(),
        target: target.into(),
        started_at: String::new(),
        duration_ms: 0,
        state: None,
        decision: Decision::Pass,
        reason: String::new(),
        era: Era::Modern,
        regions,
        findings: vec![],
        baseline: None,
        gate: None,
    }
}

/// A run of each of `targets` whose region results are `regions()`, recorded in `h`.
fn record_each(h: &Degraded, targets: &[&str], regions: impl Fn() -> Vec<RegionResult>) {
    for t in targets {
        h.record(&report(t, regions()));
    }
}

/// The targets a, b and c scheduled, and a run of each whose region results are `regions()`.
fn all_three(regions: impl Fn() -> Vec<RegionResult>) -> Degraded {
    let h = scheduled(&["a", "b", "c"]);
    record_each(&h, &["a", "b", "c"], regions);
    h
}

/// The scheduled targets `targets`, each checked from eu and ap.
fn scheduled(targets: &[&str]) -> Degraded {
    let h = Degraded::default();
    let regions = vec!["eu".to_string(), "ap".to_string()];
    let checks: Vec<(String, Vec<String>)> = targets
        .iter()
        .map(|t| (t.to_string(), regions.clone()))
        .collect();
    h.schedule(&checks);
    h
}

#[test]
fn a_region_failing_most_targets_alone_is_degraded() {
    let h = scheduled(&["a", "b", "c"]);
    record_each(&h, &["a", "b"], || {
        vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)]
    });
    assert!(
        h.regions().is_empty(),
        "two targets are not enough to judge"
    );
    h.record(&report(
        "c",
        vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)],
    ));
    assert_eq!(h.regions(), BTreeSet::from(["ap".to_string()]));
    h.forget("a");
    h.forget("b");
    assert!(h.regions().is_empty());
}

#[test]
fn a_target_down_everywhere_degrades_nobody() {
    let h = all_three(|| vec![region("eu", Outcome::Fail), region("ap", Outcome::Fail)]);
    assert!(h.regions().is_empty());
}

/// Red team round 6 (#13): reports of targets the schedule does not list (on-demand
/// checks of a caller's choosing, a run that ended after its target left) and of regions
/// a check does not run from teach nothing, however many there are.
#[test]
fn only_scheduled_targets_and_their_regions_are_learned() {
    let h = scheduled(&["a"]);
    for i in 0..50 {
        h.record(&report(
            &format!("http://x{i}.lab/mcp"),
            vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)],
        ));
    }
    assert!(h.regions().is_empty());
    assert!(h.is_empty(), "{} verdicts kept", h.len());
    // A region the check does not run from.
    h.record(&report(
        "a",
        vec![region("eu", Outcome::Pass), region("us", Outcome::Fail)],
    ));
    assert_eq!(h.len(), 1, "eu's verdict on a, and nothing of us");
    // Without a schedule, nothing at all.
    let h = Degraded::default();
    record_each(&h, &["a", "b", "c"], || {
        vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)]
    });
    assert!(h.is_empty());
}

/// Red team round 6 (#13): the state heals. A scheduled run in which the degraded region
/// connects clears that target's failure; once most targets are clear, the region is not
/// degraded. A reload that drops a target or a region forgets its verdicts.
#[test]
fn a_region_that_connects_again_heals() {
    let h = all_three(|| vec![region("eu", Outcome::Pass), region("ap", Outcome::Fail)]);
    assert_eq!(h.regions(), BTreeSet::from(["ap".to_string()]));
    h.record(&report(
        "a",
        vec![region("eu", Outcome::Pass), region("ap", Outcome::Pass)],
    ));
    assert_eq!(
        h.regions(),
        BTreeSet::from(["ap".to_string()]),
        "two of three targets still fail in ap alone"
    );
    h.record(&report(
        "b",
        vec![region("eu", Outcome::Pass), region("ap", Outcome::Pass)],
    ));
    assert!(h.regions().is_empty());
    // A region without a result this time keeps no verdict for that target.
    h.record(&report("c", vec![region("eu", Outcome::Pass)]));
    assert_eq!(h.len(), 5, "eu: a, b, c; ap: a, b");
    // The reload: c leaves, a is checked from eu only.
    h.schedule(&[
        ("a".into(), vec!["eu".into()]),
        ("b".into(), vec!["eu".into(), "ap".into()]),
    ]);
    assert_eq!(h.len(), 3, "eu: a, b; ap: b");
}

/// `region` at the DNS stage: dns.resolve `unknown` with `cause` (as the engine reports a
/// resolver of its own that failed, or a deadline), and nothing connected.
fn no_address(name: &str, cause: Cause) -> RegionResult {
    let mut r = region(name, Outcome::Skip);
    r.checks.insert(
        0,
        CheckResult {
            id: CheckId::DnsResolve,
            outcome: Outcome::Unknown,
            observed: "the resolver did not answer within 2 s".into(),
            expected: String::new(),
            duration_ms: 0,
            severity: None,
            cause: Some(cause),
        },
    );
    r
}

/// Red team round 10 (#2): a region whose own resolver fails every scheduled target
/// (`probe.resolver-failed`) while another region reaches them is degraded, like one whose
/// connections fail; it heals when it resolves and connects again.
#[test]
fn a_region_whose_own_resolver_fails_most_targets_is_degraded() {
    let h = all_three(|| {
        vec![
            region("eu", Outcome::Pass),
            no_address("ap", Cause::ResolverError),
        ]
    });
    assert_eq!(h.regions(), BTreeSet::from(["ap".to_string()]));
    // The older agents' spelling of the same fault (dns.resolve `unknown`, resolver failure).
    let h2 = all_three(|| {
        vec![
            region("eu", Outcome::Pass),
            no_address("ap", Cause::ResolverFailure),
        ]
    });
    assert_eq!(h2.regions(), BTreeSet::from(["ap".to_string()]));
    // Its resolver is back: two of three targets clear.
    record_each(&h, &["a", "b"], || {
        vec![region("eu", Outcome::Pass), region("ap", Outcome::Pass)]
    });
    assert!(h.regions().is_empty());
}

/// What is not the vantage's resolver never makes it degraded: every region's resolver
/// failing (no region reached the target: its zone, not one vantage), and a run whose
/// deadline ran out at the DNS stage (`probe.incomplete`, not `probe.resolver-failed`).
#[test]
fn a_resolver_failure_everywhere_or_a_deadline_degrades_nobody() {
    for (regions, verdicts, why) in [
        (
            [
                no_address("eu", Cause::ResolverError),
                no_address("ap", Cause::ResolverError),
            ],
            6,
            "a verdict (not failing alone) per region and target",
        ),
        (
            [
                region("eu", Outcome::Pass),
                no_address("ap", Cause::Deadline),
            ],
            3,
            "eu's verdicts only: a deadline says nothing of ap",
        ),
    ] {
        let h = all_three(|| regions.to_vec());
        assert!(h.regions().is_empty(), "{why}");
        assert_eq!(h.len(), verdicts, "{why}");
    }
}

/// `check` of `r` set to `outcome` with `cause` and `observed`.
fn with(
    mut r: RegionResult,
    id: CheckId,
    outcome: Outcome,
    cause: Option<Cause>,
    observed: &str,
) -> RegionResult {
    r.checks.retain(|c| c.id != id);
    r.checks.push(CheckResult {
        id,
        outcome,
        observed: observed.into(),
        expected: String::new(),
        duration_ms: 0,
        severity: (outcome == Outcome::Fail).then_some(vantage_agent::model::Severity::High),
        cause,
    });
    r
}

/// Three scheduled targets, each run with eu as `eu` and ap as `ap` see them.
fn three_runs(eu: impl Fn() -> RegionResult, ap: impl Fn() -> RegionResult) -> Degraded {
    let h = scheduled(&["a", "b", "c"]);
    for t in ["a", "b", "c"] {
        h.record(&report(t, vec![eu(), ap()]));
    }
    h
}

/// Red team round 13, #1: the zone's answer in one region (NXDOMAIN, no data, a non-global
/// address: a GeoDNS view or a DNS provider failing there) is evidence about the targets, not
/// the vantage's network: however many scheduled targets it hits, the region is not
/// degraded (it was, and the split horizon then disappeared from every report).
#[test]
fn the_zones_answer_never_makes_a_region_degraded() {
    let zone = |cause: Cause, check: CheckId| {
        move || {
            let r = with(
                region("ap", Outcome::Skip),
                CheckId::DnsResolve,
                Outcome::Pass,
                None,
                "",
            );
            let r = with(r, check, Outcome::Fail, Some(cause), "the zone's answer");
            with(r, CheckId::NetConnect, Outcome::Skip, None, "not run")
        }
    };
    for (cause, check) in [
        (Cause::Nxdomain, CheckId::DnsResolve),
        (Cause::NoAnswer, CheckId::DnsResolve),
        (Cause::NonGlobal, CheckId::DnsGlobalAddresses),
    ] {
        let h = three_runs(|| region("eu", Outcome::Pass), zone(cause, check));
        assert!(h.regions().is_empty(), "{cause:?}");
        assert_eq!(
            h.len(),
            6,
            "{cause:?}: a verdict (its network did its job) per run"
        );
    }
}

/// Red team round 13, #1 (second reproduction): a region that cannot connect to an address
/// no other region was given (GeoDNS sends it to a dead POP) has evidence about the target,
/// not a fault of its own; one that cannot connect to the address the others connected to
/// is degraded.
#[test]
fn only_connects_to_addresses_others_reached_make_a_region_degraded() {
    let eu = || {
        with(
            region("eu", Outcome::Pass),
            CheckId::NetConnect,
            Outcome::Pass,
            None,
            "198.51.100.131:443 connected in 1 ms",
        )
    };
    let ap = |addr: &'static str| {
        move || {
            with(
                region("ap", Outcome::Pass),
                CheckId::NetConnect,
                Outcome::Fail,
                Some(Cause::Timeout),
                &format!("{addr}:443 timeout after 2001 ms (connect: no answer)"),
            )
        }
    };
    assert!(three_runs(eu, ap("198.51.100.139")).regions().is_empty());
    assert_eq!(
        three_runs(eu, ap("198.51.100.131")).regions(),
        BTreeSet::from(["ap".to_string()])
    );
}

/// No route from the vantage (nothing was sent) is its own network, like its resolver.
#[test]
fn no_route_makes_a_region_degraded() {
    let ap = || {
        with(
            region("ap", Outcome::Pass),
            CheckId::NetConnect,
            Outcome::Unknown,
            Some(Cause::NoRoute),
            "198.51.100.131:443 not tried (no route from this vantage) after 0 ms (Network is unreachable)",
        )
    };
    assert_eq!(
        three_runs(|| region("eu", Outcome::Pass), ap).regions(),
        BTreeSet::from(["ap".to_string()])
    );
}

const NOW: i64 = 1_800_000_000;
const DAY: i64 = 86_400;
const LEAF: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const OTHER_LEAF: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// `name` connected and was presented the chain `leaf` (valid 20 more days at NOW), judged
/// `verdict` with the clock `clock`; a refused chain fails tls.handshake (the target's TLS as
/// this region saw it) and leaves the rest not run, as the engine reports it.
fn tls_seen(name: &str, leaf: &str, verdict: TlsVerdict, clock: i64) -> RegionResult {
    let clean = crate::test_reports::clean(name);
    let mut r = crate::test_reports::presented(clean, &[leaf], NOW, verdict, clock);
    if verdict != TlsVerdict::Accepted {
        crate::test_reports::set(
            &mut r,
            "tls.handshake",
            Outcome::Fail,
            Some(vantage_agent::model::Severity::High),
            Some(Cause::Tls),
            "127.0.0.1:443: TLS handshake: the server's certificate was rejected",
        );
        crate::test_reports::not_run(
            &mut r,
            |id| id.stage() > vantage_agent::catalog::Stage::Tls,
            "the TLS handshake failed",
        );
    }
    r
}

/// Red team round 12, D2 (a) and (b): a region that connects to every scheduled target but
/// refuses the chain another region verified (its trust store lacks the issuer:
/// probe.trust-store) or judges it expired with a clock 25 days ahead (probe.clock-skew) left
/// every target unknown while `reached` counted it as a region whose vantage did its job:
/// never degraded, so VantageTargetUnknown fired for each target and no alert named the
/// region. Now it is degraded after MIN_TARGETS targets, and heals when it verifies again.
#[test]
fn a_region_whose_trust_store_or_clock_fails_most_targets_is_degraded() {
    let eu = || tls_seen("eu", LEAF, TlsVerdict::Accepted, NOW);
    for (ap, fault) in [
        (
            tls_seen("ap", LEAF, TlsVerdict::UnknownIssuer, NOW),
            "trust store",
        ),
        (
            tls_seen("ap", LEAF, TlsVerdict::Expired, NOW + 25 * DAY),
            "clock",
        ),
    ] {
        // The premise: the merge names the vantage's fault, not the target's.
        let reported = [eu(), ap.clone()];
        let refs: Vec<&RegionResult> = reported.iter().collect();
        assert_eq!(
            crate::merge::vantage_tls::faults(&reported[1], &refs).len(),
            1,
            "{fault}"
        );
        let h = scheduled(&["a", "b", "c"]);
        record_each(&h, &["a", "b"], || vec![eu(), ap.clone()]);
        assert!(
            h.regions().is_empty(),
            "{fault}: two targets are not enough"
        );
        h.record(&report("c", vec![eu(), ap.clone()]));
        assert_eq!(h.regions(), BTreeSet::from(["ap".to_string()]), "{fault}");
        assert_eq!(h.len(), 6, "{fault}: a verdict per region and target");
        // Its trust store or clock is fixed: two of three targets verify again.
        record_each(&h, &["a", "b"], || {
            vec![eu(), tls_seen("ap", LEAF, TlsVerdict::Accepted, NOW)]
        });
        assert!(h.regions().is_empty(), "{fault}: healed");
    }
}

/// What the merge keeps as the target's TLS never makes a region degraded: a chain refused
/// everywhere (no region verified it: the target's certificate) and another chain refused
/// in one region (a different edge, presented only there).
#[test]
fn a_tls_failure_that_is_the_targets_degrades_nobody() {
    for (eu, ap, why) in [
        (
            tls_seen("eu", LEAF, TlsVerdict::UnknownIssuer, NOW),
            tls_seen("ap", LEAF, TlsVerdict::UnknownIssuer, NOW),
            "the same chain refused everywhere",
        ),
        (
            tls_seen("eu", LEAF, TlsVerdict::Accepted, NOW),
            tls_seen("ap", OTHER_LEAF, TlsVerdict::UnknownIssuer, NOW),
            "another chain in ap",
        ),
        (
            tls_seen("eu", LEAF, TlsVerdict::Accepted, NOW),
            tls_seen("ap", OTHER_LEAF, TlsVerdict::Expired, NOW + 25 * DAY),
            "another chain judged with a far clock",
        ),
    ] {
        let h = all_three(|| vec![eu.clone(), ap.clone()]);
        assert!(h.regions().is_empty(), "{why}");
        assert_eq!(h.len(), 6, "{why}: both connected, a verdict per run");
    }
}
