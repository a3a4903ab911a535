//! "Adding a failure never improves the decision" (`checks.md` 4.1) as tables: the shrunk
//! counterexamples of `a_worse_outcome_never_improves_the_decision` (`merge_props.rs`).
//! Each sequence is a list of steps, each step one region observing something worse than
//! in the step before; every step states its findings (id, severity, scope, regions, info
//! included) and its decision, and the decision never improves along a sequence.

use super::*;

type Change = fn(&mut RegionResult);

/// One step: what changes (cumulatively) in `eu` and in `us`, and what the merge says then.
struct Step {
    eu: &'static [Change],
    us: &'static [Change],
    findings: Vec<Shape>,
    decision: Decision,
}

/// (id, severity, scope, regions) of every finding, info included, sorted by id.
fn all(m: &Merged) -> Vec<Shape> {
    let mut v: Vec<_> = m
        .findings
        .iter()
        .map(|f| (f.id, f.severity, f.scope, f.regions.clone()))
        .collect();
    v.sort_by_key(|a| a.0.as_str());
    v
}

fn rank(d: Decision) -> u8 {
    match d {
        Decision::Pass => 0,
        Decision::Review => 1,
        Decision::Unknown => 2,
        Decision::Blocked => 3,
    }
}

fn non_global_info(r: &mut RegionResult) {
    non_global(r, Severity::Info);
}

fn non_global_high(r: &mut RegionResult) {
    non_global(r, Severity::High);
}

fn aaaa_only_info_warning(r: &mut RegionResult) {
    aaaa_only(r, Outcome::Warn, Severity::Info);
}

fn aaaa_only_high_failure(r: &mut RegionResult) {
    aaaa_only(r, Outcome::Fail, Severity::High);
}

/// The overall deadline ran out before `listen.ack-first` (a gap: `probe.incomplete`).
fn deadline_before_listen(r: &mut RegionResult) {
    set(
        r,
        CheckId::ListenAckFirst,
        Outcome::Unknown,
        None,
        Some(Cause::Deadline),
    );
}

fn check(name: &str, steps: Vec<Step>) {
    let mut previous: Option<Decision> = None;
    for (i, step) in steps.iter().enumerate() {
        let (mut eu, mut us) = (clean("eu"), clean("us"));
        step.eu.iter().for_each(|c| c(&mut eu));
        step.us.iter().for_each(|c| c(&mut us));
        let m = run(vec![eu, us], &["eu", "us"], &[]);
        assert_eq!(all(&m), step.findings, "{name}, step {i}");
        assert_eq!(m.decision, step.decision, "{name}, step {i}: {}", m.reason);
        if let Some(p) = previous {
            assert!(
                rank(m.decision) >= rank(p),
                "{name}, step {i}: {p:?} improved to {:?}",
                m.decision
            );
        }
        previous = Some(m.decision);
    }
}

/// Counterexample (CHANGELOG "Known issues", found with a random seed): `eu` got a
/// non-global answer its agent judged `info`, `us` a global one and a deadline. The split
/// horizon was `high` whatever the failure behind it, so the decision was `blocked`; when
/// `us` then got a non-global answer too (a worse observation), the disagreement ended,
/// only the info finding was left and the decision "improved" to `unknown`. The split
/// horizon now carries the severity of the failures it compares.
#[test]
fn counterexample_a_milder_failure_elsewhere_never_lowers_a_non_global_answer() {
    check(
        "non-global at info",
        vec![
            Step {
                eu: &[non_global_info],
                us: &[deadline_before_listen],
                findings: vec![
                    f(DnsNonGlobalAddress, Info, Regional, &["eu"]),
                    f(DnsSplitHorizon, Info, Regional, &["eu"]),
                    f(ProbeIncomplete, Medium, Regional, &["us"]),
                ],
                decision: Decision::Unknown,
            },
            Step {
                eu: &[non_global_info],
                us: &[deadline_before_listen, non_global_info],
                findings: vec![
                    f(DnsNonGlobalAddress, Info, Global, &["eu", "us"]),
                    f(ProbeIncomplete, Medium, Regional, &["us"]),
                ],
                decision: Decision::Unknown,
            },
        ],
    );
    // As real agents judge it (high): blocked, and still blocked, at high, when the other
    // region fails the same way more mildly.
    check(
        "non-global at high",
        vec![
            Step {
                eu: &[non_global_high],
                us: &[],
                findings: vec![
                    f(DnsNonGlobalAddress, High, Regional, &["eu"]),
                    f(DnsSplitHorizon, High, Regional, &["eu"]),
                ],
                decision: Decision::Blocked,
            },
            Step {
                eu: &[non_global_high],
                us: &[non_global_info],
                findings: vec![f(DnsNonGlobalAddress, High, Global, &["eu", "us"])],
                decision: Decision::Blocked,
            },
        ],
    );
}

/// Counterexample (proptest, seed 101 at 20,000 cases): an `info` warning that `us` has
/// no A record made a `high` split horizon (A present vs absent), so `eu` getting the same
/// warning ended the disagreement and turned `blocked` into `unknown`.
#[test]
fn counterexample_a_missing_a_record_warning_is_no_high_split_horizon() {
    check(
        "AAAA only",
        vec![
            Step {
                eu: &[],
                us: &[aaaa_only_info_warning],
                findings: vec![
                    f(DnsNoARecord, Info, Regional, &["us"]),
                    f(DnsSplitHorizon, Info, Regional, &["us"]),
                ],
                decision: Decision::Pass,
            },
            Step {
                eu: &[aaaa_only_info_warning],
                us: &[aaaa_only_info_warning],
                findings: vec![f(DnsNoARecord, Info, Global, &["eu", "us"])],
                decision: Decision::Pass,
            },
            Step {
                eu: &[aaaa_only_high_failure],
                us: &[aaaa_only_info_warning],
                findings: vec![f(DnsNoARecord, High, Global, &["eu", "us"])],
                decision: Decision::Blocked,
            },
        ],
    );
}

/// Counterexample (strengthened property (d), seeds 7 to 10 at 20,000 cases): a region whose
/// DNS section listed a non-global address while its `dns.global-addresses` carried a cause
/// of the vantage's own (a resolver failure: no evidence) was still classed non-global, so it
/// was named in a `high` split horizon beside info warnings elsewhere. A fault of the
/// vantage never becomes a finding about the target (`checks.md` 4.1): the answer has no
/// class, and the gap is `probe.resolver-failed`.
#[test]
fn counterexample_a_non_global_answer_without_evidence_has_no_class() {
    fn judged_by_a_failed_resolver(r: &mut RegionResult) {
        non_global_info(r);
        set(
            r,
            CheckId::DnsGlobalAddresses,
            Outcome::Fail,
            Some(Severity::High),
            Some(Cause::ResolverFailure),
        );
    }
    check(
        "non-global without evidence",
        vec![
            Step {
                eu: &[],
                us: &[judged_by_a_failed_resolver],
                findings: vec![f(ProbeResolverFailed, Medium, Regional, &["us"])],
                decision: Decision::Unknown,
            },
            // With an info warning that A is missing in eu: us has no answer to compare
            // eu's with, so there is no split horizon (it was high, naming us).
            Step {
                eu: &[aaaa_only_info_warning],
                us: &[judged_by_a_failed_resolver],
                findings: vec![
                    f(DnsNoARecord, Info, Regional, &["eu"]),
                    f(ProbeResolverFailed, Medium, Regional, &["us"]),
                ],
                decision: Decision::Unknown,
            },
        ],
    );
}

/// The split horizon takes the worst departure among the regions it names.
#[test]
fn a_split_horizon_is_as_severe_as_its_worst_departure() {
    let (mut eu, mut ap) = (clean("eu"), clean("ap"));
    non_global_info(&mut eu);
    non_global_high(&mut ap);
    let m = run(vec![eu, clean("us"), ap], &["eu", "us", "ap"], &[]);
    assert_eq!(
        all(&m),
        vec![
            f(DnsNonGlobalAddress, High, Regional, &["ap", "eu"]),
            f(DnsSplitHorizon, High, Regional, &["ap", "eu"]),
        ]
    );
    assert_eq!(m.decision, Decision::Blocked);
}

use FindingId::*;
use Scope::*;
use Severity::*;
