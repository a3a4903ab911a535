//! Generators for the merge property tests: region results as the engine records them
//! (DNS sections consistent with the DNS checks, eras with era.detect), and what "worse"
//! means for one check.

use std::collections::BTreeSet;

use proptest::prelude::*;
use vantage_agent::catalog::{self, CheckId, FindingId, Stage};
use vantage_agent::model::{
    Cause, CheckResult, DnsObservation, Era, Outcome, RegionResult, RegionStatus, Severity,
    TlsObservation, TlsVerdict,
};

use super::super::{merge, MergeInput, Merged};
use crate::report::Decision;

pub(super) const SEVERITIES: [Severity; 5] = [
    Severity::Info,
    Severity::Low,
    Severity::Medium,
    Severity::High,
    Severity::Critical,
];

pub(super) fn severity() -> impl Strategy<Value = Severity> {
    prop::sample::select(SEVERITIES.to_vec())
}

/// The causes the generators draw from, none included; the catalogue test
/// (`merge_tests.rs`) maps each of them through `finding_id` too.
pub(in crate::merge) const CAUSES: [Option<Cause>; 15] = [
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
];

pub(super) fn cause() -> impl Strategy<Value = Option<Cause>> {
    // None three times in every seventeen draws, as a check passes more often than not.
    prop::sample::select([None, None].into_iter().chain(CAUSES).collect::<Vec<_>>())
}

/// One generated check result: outcome, severity, cause.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Gen {
    pub(super) outcome: Outcome,
    pub(super) severity: Option<Severity>,
    pub(super) cause: Option<Cause>,
}

pub(super) fn gen() -> impl Strategy<Value = Gen> {
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

pub(super) fn result(id: CheckId, g: Gen) -> CheckResult {
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
pub(super) fn dns_for(checks: &[CheckResult], literal: bool) -> Option<DnsObservation> {
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

/// What a region's TLS handshake was presented: one of two chains, with a clock right or
/// 25 days ahead, and how a refusal was judged (`merge/vantage_tls.rs` compares them).
#[derive(Debug, Clone, Copy)]
pub(super) struct TlsGen {
    other_chain: bool,
    clock_ahead: bool,
    refusal: TlsVerdict,
}

pub(super) fn tls_gen() -> impl Strategy<Value = Option<TlsGen>> {
    let refusal = prop::sample::select(vec![
        TlsVerdict::Expired,
        TlsVerdict::NotYetValid,
        TlsVerdict::UnknownIssuer,
        TlsVerdict::Refused,
    ]);
    prop::option::weighted(
        0.7,
        (
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.3),
            refusal,
        )
            .prop_map(|(other_chain, clock_ahead, refusal)| TlsGen {
                other_chain,
                clock_ahead,
                refusal,
            }),
    )
}

const NOW: i64 = 1_800_000_000;

/// The region's TLS evidence as the engine records it: none when the handshake did not run
/// (skipped), accepted only when it passed.
pub(super) fn tls_for(checks: &[CheckResult], g: Option<TlsGen>) -> Option<TlsObservation> {
    let g = g?;
    let handshake = checks.iter().find(|c| c.id == CheckId::TlsHandshake)?;
    if handshake.outcome == Outcome::Skip {
        return None;
    }
    let leaf = if g.other_chain { "b" } else { "a" }.repeat(64);
    Some(TlsObservation {
        chain_sha256: vec![leaf.clone(), "c".repeat(64)],
        leaf_sha256: leaf,
        leaf_not_before: NOW - 70 * 86_400,
        leaf_not_after: NOW + 20 * 86_400,
        clock: NOW + if g.clock_ahead { 25 * 86_400 } else { 0 },
        verdict: if handshake.outcome == Outcome::Pass {
            TlsVerdict::Accepted
        } else {
            g.refusal
        },
        mixed: false,
        // Property (f) is about stores of one kind; the public-roots rule has its table test
        // (vantage_tls_tests: a_region_on_the_public_roots_refusing_a_private_chain_is_the_targets).
        extra_roots: false,
    })
}

pub(super) fn region(
    name: String,
    gens: Vec<Gen>,
    literal: bool,
    flags: (bool, bool, bool),
    tls: Option<TlsGen>,
) -> RegionResult {
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
        tls: tls_for(&checks, tls),
        region: name,
        status: RegionStatus::Complete,
        agent: None,
        duration_ms: 1,
        era,
        protected: flags.0,
        authenticated: flags.0 && flags.1,
        phases_ms: Default::default(),
        checks,
        // No surfaces: the properties are about check outcomes; the surface comparison
        // (`coordinator/src/surface.rs`) has table tests of its own.
        surface: None,
        stacks: Vec::new(),
    }
}

/// A generated merge input: regions, the requested names (sometimes one more, missing),
/// and the degraded ones.
#[derive(Debug, Clone)]
pub(super) struct Input {
    pub(super) regions: Vec<RegionResult>,
    pub(super) requested: Vec<String>,
    pub(super) degraded: BTreeSet<String>,
}

impl Input {
    pub(super) fn merge(&self) -> Merged {
        merge(&MergeInput {
            requested: &self.requested,
            results: &self.regions,
            degraded: &self.degraded,
            absent: &Default::default(),
        })
    }
    pub(super) fn effective(&self) -> Vec<&RegionResult> {
        let reported: Vec<&RegionResult> = self.regions.iter().filter(|r| r.reported()).collect();
        reported
            .iter()
            .filter(|r| !crate::merge::degraded::discounted(r, &reported, &self.degraded))
            .copied()
            .collect()
    }
}

pub(super) fn input() -> impl Strategy<Value = Input> {
    let one = (
        prop::collection::vec(gen(), CheckId::ALL.len()),
        prop::bool::weighted(0.15),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        prop::bool::weighted(0.1),
        tls_gen(),
    );
    (
        prop::collection::vec(one, 1..=3),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(specs, extra_missing, one_partial)| {
            let mut regions = Vec::new();
            let mut degraded = BTreeSet::new();
            for (i, (gens, literal, flags, is_degraded, tls)) in specs.into_iter().enumerate() {
                let name = format!("r{i}");
                if is_degraded {
                    degraded.insert(name.clone());
                }
                regions.push(region(name, gens, literal, flags, tls));
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

pub(super) fn rank(d: Decision) -> u8 {
    match d {
        Decision::Pass => 0,
        Decision::Review => 1,
        Decision::Unknown => 2,
        Decision::Blocked => 3,
    }
}

pub(super) fn outcome_rank(o: Outcome) -> u8 {
    match o {
        Outcome::Pass => 0,
        Outcome::Warn => 1,
        _ => 2,
    }
}

/// The outcomes strictly worse than `g` (see (b) in the module docs).
pub(super) fn worse(g: Gen) -> Vec<Gen> {
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

/// Rebuild a region's DNS section after one of its checks changed, and its TLS evidence: a
/// handshake that no longer passes did not accept the chain (judged otherwise, for another
/// reason); one that no longer ran has none.
pub(super) fn refresh(r: &mut RegionResult) {
    let literal = r.dns.is_none();
    r.dns = dns_for(&r.checks, literal);
    let handshake = r.check(CheckId::TlsHandshake).map(|c| c.outcome);
    if handshake == Some(Outcome::Skip) {
        r.tls = None;
    }
    if let Some(t) = r.tls.as_mut() {
        if handshake != Some(Outcome::Pass) && t.verdict == TlsVerdict::Accepted {
            t.verdict = TlsVerdict::Refused;
        }
    }
}

/// The checks whose failure can raise `f` (for `edge.divergent`: any shape, era, transport,
/// authorization or listing check; for `dns.split-horizon`, besides `dns.resolve`, the DNS
/// checks whose failure puts a region's answer in another class: `merge/dns.rs`).
pub(super) fn raisers(f: FindingId) -> Vec<CheckId> {
    if f == FindingId::DnsSplitHorizon {
        return vec![
            CheckId::DnsResolve,
            CheckId::DnsARecord,
            CheckId::DnsGlobalAddresses,
        ];
    }
    if f == FindingId::EdgeDivergent {
        return CheckId::ALL
            .iter()
            .copied()
            .filter(|c| {
                matches!(
                    c.stage(),
                    Stage::Shape | Stage::Era | Stage::Transport | Stage::Auth | Stage::Listing
                )
            })
            .collect();
    }
    catalog::raising(f).into_iter().map(|(c, _)| c).collect()
}
