//! Property tests of merge + decision over generated region outcomes (issue 12, "never pass
//! what was not seen"), with the invariants of `checks.md` 4.1 as this module reads them:
//!
//! - (a) `pass` implies every requested region reported and observed the target (4.1: it
//!   resolved or was given an address, connected, completed the TLS handshake for https,
//!   and an MCP request got an answer whose era is known) and no finding is at `medium` or
//!   above. The issue says "no finding above info"; that would contradict `checks.md` 4
//!   step 4 (low findings still pass) and the Python SDK control (its stateless 405 on
//!   DELETE lacks `Allow`, a low finding, and it passes): the contract wins.
//! - (b) making any check outcome worse never improves the decision, in the order
//!   pass < review < unknown < blocked. "Worse" is pass -> warn -> fail with a severity that
//!   never drops ("adding a failure", `checks.md` 4.1). Losing positive evidence (pass ->
//!   skip/unknown/error) is checked too, with a floor: it may remove a comparison finding
//!   that needed that region's answer (a split horizon, an egress block, a divergence), so
//!   `blocked` may become `unknown`, but never `review` or `pass`. Turning a check with no
//!   evidence into a failure is more knowledge, not a worse outcome, and is not generated.
//! - (c) a per-check finding is `global` iff every effective (reporting, not degraded)
//!   region has evidence for that check and failed it the way that maps to this finding; a
//!   region without evidence prevents `global` but creates no `egress.blocked`,
//!   `edge.divergent` or `dns.split-horizon` (those need a region that passed, or answers to
//!   compare).
//! - (d) a warning never yields a finding above its own severity (`edge.divergent` only from
//!   `fail`, never above the failing check's severity).
//! - (e) a vantage-side fault (resolver error, policy refusal, the vantage's own deadline)
//!   never puts a region into a `dns.*`, `net.*` or `egress.*` finding: every region such a
//!   finding names has target-side evidence for it.
//!
//! Shrunk counterexamples found on the way are table tests in `merge_tests.rs`
//! (`counterexample_*`).
//!
//! Mutation testing (`cargo mutants -f coordinator/src/merge.rs -f coordinator/src/merge/decide.rs
//! -f coordinator/src/merge/evidence.rs -f coordinator/src/merge/dns.rs`, not in CI): see
//! the result recorded at the end of this comment.
//!
//! MUTANTS-RESULT

use std::collections::BTreeSet;

use proptest::prelude::*;
use vantage_agent::catalog::{self, CheckId, FindingId, Stage};
use vantage_agent::model::{
    Cause, CheckResult, DnsObservation, Era, Outcome, RegionResult, RegionStatus, Severity,
};

use super::evidence::{self, reading, Reading};
use super::{finding_id, merge, MergeInput, Merged};
use crate::report::{Decision, Scope};

const SEVERITIES: [Severity; 5] = [
    Severity::Info,
    Severity::Low,
    Severity::Medium,
    Severity::High,
    Severity::Critical,
];

fn severity() -> impl Strategy<Value = Severity> {
    prop::sample::select(SEVERITIES.to_vec())
}

fn cause() -> impl Strategy<Value = Option<Cause>> {
    prop::sample::select(vec![
        None,
        None,
        None,
        Some(Cause::Timeout),
        Some(Cause::Refused),
        Some(Cause::CrossHost),
        Some(Cause::SameHost),
        Some(Cause::TokenAccepted),
        Some(Cause::NonGlobal),
        Some(Cause::Nxdomain),
        Some(Cause::NoAnswer),
        Some(Cause::ResolverFailure),
        Some(Cause::Deadline),
        Some(Cause::PolicyRefused),
        Some(Cause::ResolverError),
        Some(Cause::CredentialRefused),
        Some(Cause::OtherReason),
    ])
}

/// One generated check result: outcome, severity, cause.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Gen {
    outcome: Outcome,
    severity: Option<Severity>,
    cause: Option<Cause>,
}

fn gen() -> impl Strategy<Value = Gen> {
    let judged = |outcome: Outcome| {
        (severity(), cause()).prop_map(move |(s, c)| Gen {
            outcome,
            severity: Some(s),
            cause: c,
        })
    };
    prop_oneof![
        8 => Just(Gen { outcome: Outcome::Pass, severity: None, cause: None }),
        2 => judged(Outcome::Warn),
        2 => judged(Outcome::Fail),
        1 => Just(Gen { outcome: Outcome::Skip, severity: None, cause: None }),
        1 => cause().prop_map(|c| Gen { outcome: Outcome::Unknown, severity: None, cause: c }),
        1 => Just(Gen { outcome: Outcome::Error, severity: None, cause: None }),
    ]
}

fn result(id: CheckId, g: Gen) -> CheckResult {
    // The agent never records a severity above the catalogue's highest for its check.
    let severity = g.severity.map(|s| s.min(id.spec().max_severity));
    CheckResult {
        id,
        outcome: g.outcome,
        observed: format!("{id} {:?}", g.outcome),
        expected: id.expected().into(),
        duration_ms: 1,
        severity,
        cause: g.cause,
    }
}

/// The DNS section that goes with the DNS checks' outcomes (as the engine records them).
fn dns_for(checks: &[CheckResult], literal: bool) -> Option<DnsObservation> {
    if literal {
        return None;
    }
    let get = |id| checks.iter().find(|c| c.id == id).expect("every check");
    let resolve = get(CheckId::DnsResolve);
    let mut dns = DnsObservation {
        rcode: "NOERROR".into(),
        ..Default::default()
    };
    match (resolve.outcome, resolve.cause) {
        (Outcome::Pass, _) => {
            let non_global = get(CheckId::DnsGlobalAddresses).outcome == Outcome::Fail;
            let no_a = get(CheckId::DnsARecord).outcome != Outcome::Pass;
            if !no_a {
                dns.a = vec![if non_global {
                    "100.64.0.10"
                } else {
                    "198.51.100.10"
                }
                .into()];
            }
            dns.aaaa = vec!["2001:db8:b::10".into()];
            dns.has_a = !no_a;
            dns.all_global = !non_global;
        }
        (_, Some(Cause::Nxdomain)) => dns.rcode = "NXDOMAIN".into(),
        (Outcome::Fail | Outcome::Warn, Some(Cause::NoAnswer) | None) => {}
        _ => dns.rcode = "TIMEOUT".into(),
    }
    Some(dns)
}

fn region(name: String, gens: Vec<Gen>, literal: bool, flags: (bool, bool, bool)) -> RegionResult {
    let mut checks: Vec<CheckResult> = CheckId::ALL
        .iter()
        .zip(gens)
        .map(|(&id, g)| result(id, g))
        .collect();
    if literal {
        for c in checks.iter_mut().filter(|c| c.id.stage() == Stage::Dns) {
            *c = result(
                c.id,
                Gen {
                    outcome: Outcome::Skip,
                    severity: None,
                    cause: None,
                },
            );
            c.observed = "local target".into();
        }
    }
    let era = match checks.iter().find(|c| c.id == CheckId::EraDetect) {
        Some(c) if c.outcome == Outcome::Pass => Era::Modern,
        Some(c) if c.outcome.is_problem() && flags.2 => Era::Legacy,
        Some(c) if c.outcome.is_problem() => Era::NotMcp,
        _ => Era::Unknown,
    };
    RegionResult {
        dns: dns_for(&checks, literal),
        region: name,
        status: RegionStatus::Complete,
        duration_ms: 1,
        era,
        protected: flags.0,
        authenticated: flags.0 && flags.1,
        phases_ms: Default::default(),
        checks,
    }
}

/// A generated merge input: regions, the requested names (sometimes one more, missing),
/// and the degraded ones.
#[derive(Debug, Clone)]
struct Input {
    regions: Vec<RegionResult>,
    requested: Vec<String>,
    degraded: BTreeSet<String>,
}

impl Input {
    fn merge(&self) -> Merged {
        merge(&MergeInput {
            requested: &self.requested,
            results: &self.regions,
            degraded: &self.degraded,
        })
    }
    fn effective(&self) -> Vec<&RegionResult> {
        self.regions
            .iter()
            .filter(|r| r.reported() && !self.degraded.contains(&r.region))
            .collect()
    }
}

fn input() -> impl Strategy<Value = Input> {
    let one = (
        prop::collection::vec(gen(), CheckId::ALL.len()),
        prop::bool::weighted(0.15),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        prop::bool::weighted(0.1),
    );
    (
        prop::collection::vec(one, 1..=3),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(specs, extra_missing, one_partial)| {
            let mut regions = Vec::new();
            let mut degraded = BTreeSet::new();
            for (i, (gens, literal, flags, is_degraded)) in specs.into_iter().enumerate() {
                let name = format!("r{i}");
                if is_degraded {
                    degraded.insert(name.clone());
                }
                regions.push(region(name, gens, literal, flags));
            }
            if one_partial {
                regions[0].status = RegionStatus::Partial;
            }
            let mut requested: Vec<String> = regions.iter().map(|r| r.region.clone()).collect();
            if extra_missing {
                requested.push("gone".into());
            }
            Input {
                regions,
                requested,
                degraded,
            }
        })
}

fn rank(d: Decision) -> u8 {
    match d {
        Decision::Pass => 0,
        Decision::Review => 1,
        Decision::Unknown => 2,
        Decision::Blocked => 3,
    }
}

fn outcome_rank(o: Outcome) -> u8 {
    match o {
        Outcome::Pass => 0,
        Outcome::Warn => 1,
        _ => 2,
    }
}

/// The outcomes strictly worse than `g` (see (b) in the module docs).
fn worse(g: Gen) -> Vec<Gen> {
    let mut out = Vec::new();
    match g.outcome {
        Outcome::Pass => {
            for outcome in [Outcome::Skip, Outcome::Unknown, Outcome::Error] {
                out.push(Gen {
                    outcome,
                    severity: None,
                    cause: None,
                });
            }
            for outcome in [Outcome::Warn, Outcome::Fail] {
                for s in SEVERITIES {
                    out.push(Gen {
                        outcome,
                        severity: Some(s),
                        cause: None,
                    });
                }
            }
        }
        Outcome::Warn | Outcome::Fail => {
            let sev = g.severity.unwrap_or(Severity::Medium);
            for outcome in [Outcome::Warn, Outcome::Fail] {
                for s in SEVERITIES.into_iter().filter(|s| *s >= sev) {
                    let w = Gen {
                        outcome,
                        severity: Some(s),
                        cause: g.cause,
                    };
                    if outcome_rank(outcome) >= outcome_rank(g.outcome) && w != g {
                        out.push(w);
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// Rebuild a region's DNS section after one of its checks changed.
fn refresh(r: &mut RegionResult) {
    let literal = r.dns.is_none();
    r.dns = dns_for(&r.checks, literal);
}

/// The checks whose failure can raise `f` (for `edge.divergent`: any shape, era, transport
/// or authorization check).
fn raisers(f: FindingId) -> Vec<CheckId> {
    if f == FindingId::EdgeDivergent {
        return CheckId::ALL
            .iter()
            .copied()
            .filter(|c| {
                matches!(
                    c.stage(),
                    Stage::Shape | Stage::Era | Stage::Transport | Stage::Auth
                )
            })
            .collect();
    }
    catalog::raising(f).into_iter().map(|(c, _)| c).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_pass_rests_on_every_region_observing_and_nothing_at_medium(input in input()) {
        let m = input.merge();
        if m.decision == Decision::Pass {
            for name in &input.requested {
                let r = input.regions.iter().find(|r| &r.region == name);
                prop_assert!(r.is_some_and(|r| r.reported()), "{name} did not report");
                let r = r.expect("checked");
                prop_assert!(evidence::observation(r).observed, "{name} did not observe: {:?}", evidence::observation(r));
            }
            for f in &m.findings {
                prop_assert!(f.severity < Severity::Medium, "{:?} at {:?}", f.id, f.severity);
            }
        }
    }

    #[test]
    fn a_worse_outcome_never_improves_the_decision(
        input in input(),
        which in any::<prop::sample::Index>(),
        pick in any::<prop::sample::Index>(),
    ) {
        let before = input.merge();
        let mut worse_input = input.clone();
        let gen_of = |c: &CheckResult| Gen { outcome: c.outcome, severity: c.severity, cause: c.cause };
        // Every (region, check) that can get worse; one of them does.
        let candidates: Vec<(usize, usize)> = input
            .regions
            .iter()
            .enumerate()
            .flat_map(|(r, reg)| reg.checks.iter().enumerate().map(move |(c, _)| (r, c)))
            .filter(|&(r, c)| !worse(gen_of(&input.regions[r].checks[c])).is_empty())
            .collect();
        if candidates.is_empty() {
            return Ok(());
        }
        let (r, c) = candidates[which.index(candidates.len())];
        let cur = worse_input.regions[r].checks[c].clone();
        let options = worse(gen_of(&cur));
        let w = options[pick.index(options.len())];
        worse_input.regions[r].checks[c] = result(cur.id, w);
        refresh(&mut worse_input.regions[r]);
        let after = worse_input.merge();
        // Losing evidence (pass -> skip/unknown/error) can remove a comparison that needed
        // it (split horizon, egress, divergence), but never lets the decision drop below
        // `unknown`; adding a failure never improves it at all.
        let floor = if reading(&worse_input.regions[r].checks[c]) == Reading::Problem {
            rank(before.decision)
        } else {
            rank(before.decision).min(rank(Decision::Unknown))
        };
        prop_assert!(
            rank(after.decision) >= floor,
            "{} in {}: {:?} -> {:?} improved {:?} to {:?} ({} -> {})",
            cur.id, worse_input.regions[r].region, cur.outcome, w, before.decision, after.decision,
            before.reason, after.reason
        );
    }

    #[test]
    fn a_finding_is_global_iff_every_effective_region_failed_its_check(input in input()) {
        let m = input.merge();
        let effective = input.effective();
        // Checks whose findings no other check (or derivation) shares.
        let unique = |id: CheckId| !matches!(
            id,
            CheckId::DnsResolve | CheckId::AuthGarbageToken | CheckId::AuthWrongAudience
        );
        for &id in CheckId::ALL.iter().filter(|c| unique(**c)) {
            let passed = effective.iter().any(|r| r.check(id).is_some_and(|c| reading(c) == Reading::Pass));
            for fid in id.findings() {
                let Some(f) = m.findings.iter().find(|f| f.id == fid) else { continue };
                let all_failed_this_way = !effective.is_empty() && effective.iter().all(|r| {
                    r.check(id).is_some_and(|c| {
                        reading(c) == Reading::Problem
                            && finding_id(id, c.outcome, passed, c.cause, r.era) == fid
                    })
                });
                prop_assert_eq!(f.scope == Scope::Global, all_failed_this_way, "{} ({}): {:?}", fid, id, f);
            }
        }
        // No region without evidence creates a comparison finding.
        if m.findings.iter().any(|f| f.id == FindingId::EgressBlocked) {
            prop_assert!(effective.iter().any(|r| r.check(CheckId::NetConnect).is_some_and(|c| reading(c) == Reading::Pass)));
        }
        if m.findings.iter().any(|f| f.id == FindingId::EdgeDivergent) {
            prop_assert!(effective.iter().any(|r| r.checks.iter().any(|c| reading(c) == Reading::Pass)));
        }
    }

    #[test]
    fn a_warning_never_yields_a_finding_above_its_own_severity(input in input()) {
        let m = input.merge();
        for f in &m.findings {
            let raisers = raisers(f.id);
            let contributing: Vec<&CheckResult> = input
                .regions
                .iter()
                .filter(|r| f.regions.contains(&r.region))
                .flat_map(|r| r.checks.iter())
                .filter(|c| raisers.contains(&c.id) && reading(c) == Reading::Problem)
                .collect();
            if f.id == FindingId::EdgeDivergent {
                prop_assert!(contributing.iter().any(|c| c.outcome == Outcome::Fail), "edge.divergent from warnings alone");
                let worst_fail = contributing.iter().filter(|c| c.outcome == Outcome::Fail).filter_map(|c| c.severity).max();
                prop_assert!(Some(f.severity) <= worst_fail, "edge.divergent {:?} above the failures {:?}", f.severity, worst_fail);
            }
            if !contributing.is_empty() && contributing.iter().all(|c| c.outcome == Outcome::Warn) {
                let worst = contributing.iter().filter_map(|c| c.severity).max();
                prop_assert!(Some(f.severity) <= worst, "{:?} at {:?} from warnings at most {:?}", f.id, f.severity, worst);
            }
        }
    }

    #[test]
    fn a_vantage_fault_never_names_the_target(input in input()) {
        let m = input.merge();
        for f in &m.findings {
            let s = f.id.as_str();
            if !(s.starts_with("dns.") || s.starts_with("net.") || s.starts_with("egress.")) {
                continue;
            }
            for name in &f.regions {
                let r = input.regions.iter().find(|r| &r.region == name).expect("a named region reported");
                let supported = if matches!(f.id, FindingId::DnsSplitHorizon | FindingId::DnsAnswersDiffer) {
                    super::dns::dns_class(r).is_some()
                } else {
                    let raisers = raisers(f.id);
                    r.checks.iter().any(|c| raisers.contains(&c.id) && reading(c) == Reading::Problem)
                };
                prop_assert!(supported, "{} names {} without target-side evidence: {:?}", f.id, name,
                    r.checks.iter().filter(|c| c.id.stage() <= Stage::Net).map(|c| (c.id, c.outcome, c.cause)).collect::<Vec<_>>());
            }
        }
    }
}
