//! A vantage's own TLS clock or trust store, told from the target's certificate (`checks.md`
//! 4.1: a fault of the vantage never becomes a finding about the target). One certificate has
//! one validity window and one issuer: when a region refuses (or judges near expiry) the very
//! chain another region accepted (the same SHA-256 fingerprints, leaf first), the difference
//! is in the vantages, not in the target. That region's TLS failures then are no evidence
//! about the target: they become gaps with the vantage's cause (`probe.clock-skew`,
//! `probe.trust-store`), which make the decision at least `unknown`, never `pass`. A clock
//! is blamed only when it is the odd one: it agrees with at most half of the regions
//! presented that chain (two regions that disagree are both in doubt). A region
//! that was presented another chain stays a finding about the target (a different edge), and
//! so does a region alone (nothing to compare with).

use std::borrow::Cow;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, Outcome, RegionResult, TlsObservation, TlsVerdict};

use super::evidence::{reading, Reading};

/// Clocks closer than this are the same clock (the regions of one job run seconds apart): a
/// verdict that differs with clocks this close is not blamed on a clock.
pub const CLOCK_TOLERANCE_S: i64 = 600;

/// What is wrong with a vantage, and the words for its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub cause: Cause,
    /// The checks whose problem it explains.
    pub checks: Vec<CheckId>,
    pub words: String,
}

/// The finding that names a fault's gaps (`evidence::gap_finding`).
pub fn finding_of(cause: Cause) -> FindingId {
    match cause {
        Cause::TrustStore => FindingId::ProbeTrustStore,
        _ => FindingId::ProbeClockSkew,
    }
}

/// The region's own TLS evidence, when it can be compared (one chain on every address).
fn seen(r: &RegionResult) -> Option<&TlsObservation> {
    r.tls
        .as_ref()
        .filter(|t| !t.mixed && !t.chain_sha256.is_empty())
}

fn problem(r: &RegionResult, id: CheckId) -> bool {
    r.check(id).is_some_and(|c| reading(c) == Reading::Problem)
}

fn passed(r: &RegionResult, id: CheckId) -> bool {
    r.check(id).is_some_and(|c| reading(c) == Reading::Pass)
}

fn day(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .map(|t| t.date().to_string())
        .unwrap_or_else(|_| unix.to_string())
}

/// Whether `own`'s clock agrees (within the tolerance) with at most half of the regions
/// presented the same chain, itself included.
fn odd_clock(own: &TlsObservation, regions: &[&RegionResult]) -> bool {
    let same: Vec<i64> = regions
        .iter()
        .filter_map(|o| seen(o))
        .filter(|t| t.chain_sha256 == own.chain_sha256)
        .map(|t| t.clock)
        .collect();
    let agreeing = same
        .iter()
        .filter(|c| (**c - own.clock).abs() <= CLOCK_TOLERANCE_S)
        .count();
    2 * agreeing <= same.len()
}

/// The faults of `r`'s vantage: its TLS problems that are the same chain judged differently
/// from another region that accepted it (its trust store for the issuer, its clock for the
/// dates; both when both).
pub fn faults(r: &RegionResult, regions: &[&RegionResult]) -> Vec<Fault> {
    let Some(own) = seen(r) else {
        return Vec::new();
    };
    // The regions that were presented the same chain and verified it.
    let accepting: Vec<(&RegionResult, &TlsObservation)> = regions
        .iter()
        .filter(|o| o.region != r.region)
        .filter_map(|o| seen(o).map(|t| (*o, t)))
        .filter(|(o, t)| {
            t.chain_sha256 == own.chain_sha256
                && t.verdict == TlsVerdict::Accepted
                && passed(o, CheckId::TlsHandshake)
        })
        .collect();
    if accepting.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let names = |list: &[&(&RegionResult, &TlsObservation)]| {
        list.iter()
            .map(|(o, _)| o.region.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let leaf = format!(
        "leaf sha256 {}, valid {} to {}",
        &own.leaf_sha256[..own.leaf_sha256.len().min(16)],
        day(own.leaf_not_before),
        day(own.leaf_not_after)
    );
    let handshake = problem(r, CheckId::TlsHandshake);
    // A vantage on the public roots alone refused what only vantages given a CA of their own
    // accepted: it judged as every public client does. Which side is wrong depends on who
    // the endpoint serves, which no vantage can see: the words say both (red team round 12,
    // item 6; round 6, item 5), and the decision stays unknown, never pass.
    let public_refusal = !own.extra_roots && accepting.iter().all(|(_, t)| t.extra_roots);
    if handshake && own.verdict == TlsVerdict::UnknownIssuer && public_refusal {
        let all: Vec<_> = accepting.iter().collect();
        out.push(Fault {
            cause: Cause::TrustStore,
            checks: vec![CheckId::TlsHandshake],
            words: format!(
                "this vantage does not trust the issuer of the chain {} verified (the same chain: {leaf}) only with a CA they were given: it checks with the public roots alone, as public clients do. If public clients use the endpoint, its certificate is not publicly trusted: serve a chain from a public CA. If only clients given that CA use it, give this vantage the CA too (an agent: vantage-agent --target-ca-file, the chart's agent.targetCaSecret; the coordinator's in-process vantage: probe.ca_file, the chart's coordinator.probe.caSecret). Nothing about the target's TLS was decided here",
                names(&all)
            ),
        });
    } else if handshake && own.verdict == TlsVerdict::UnknownIssuer {
        let all: Vec<_> = accepting.iter().collect();
        out.push(Fault {
            cause: Cause::TrustStore,
            checks: vec![CheckId::TlsHandshake],
            words: format!(
                "this vantage does not trust the issuer of the chain {} verified (the same chain: {leaf}); give this vantage the CA that issued it (an agent: vantage-agent --target-ca-file, the chart's agent.targetCaSecret; the coordinator's in-process vantage: probe.ca_file, the chart's coordinator.probe.caSecret); nothing about the target's TLS was decided here",
                names(&all)
            ),
        });
    }
    // The clock: a chain judged expired or not yet valid, or a leaf judged near its end,
    // where a region whose clock is far away accepted the same chain.
    let clock_handshake =
        handshake && matches!(own.verdict, TlsVerdict::Expired | TlsVerdict::NotYetValid);
    let expiry = problem(r, CheckId::TlsExpiry);
    if !clock_handshake && !expiry {
        return out;
    }
    // The odd clock only: when most regions presented this chain read the time as this one
    // does, its judgement stands (an accepting region's clock is the odd one then). With two
    // regions that disagree, neither is the majority: both judgements are the vantages'.
    if !odd_clock(own, regions) {
        return out;
    }
    // Whatever the others' own tls.expiry says: this region's judgement was made with its
    // clock either way (and a failure elsewhere never takes the fault away, so adding one
    // never improves the decision).
    let far: Vec<&(&RegionResult, &TlsObservation)> = accepting
        .iter()
        .filter(|(_, t)| (own.clock - t.clock).abs() > CLOCK_TOLERANCE_S)
        .collect();
    // The clock the others agree on: their median.
    let mut clocks: Vec<i64> = far.iter().map(|(_, t)| t.clock).collect();
    clocks.sort_unstable();
    let Some(&theirs) = clocks.get(clocks.len() / 2) else {
        return out;
    };
    let skew = own.clock - theirs;
    let mut checks = Vec::new();
    if clock_handshake {
        checks.push(CheckId::TlsHandshake);
    }
    if expiry {
        checks.push(CheckId::TlsExpiry);
    }
    out.push(Fault {
        cause: Cause::ClockSkew,
        checks,
        words: format!(
            "this vantage's clock read {}, {:.1} days {} the clocks of {} ({}), which accepted the same certificate ({leaf}): the certificate was judged with this vantage's clock; set its clock right (NTP); nothing about the target's certificate was decided here",
            day(own.clock),
            skew.abs() as f64 / 86_400.0,
            if skew > 0 { "ahead of" } else { "behind" },
            names(&far),
            day(theirs),
        ),
    });
    out
}

/// The regions with their vantage's TLS faults turned into gaps: each problem the fault
/// explains becomes `unknown` with the vantage's cause and the fault's words (what the
/// vantage saw stays in the report's region section; the rest of
/// the merge names it `probe.clock-skew` or `probe.trust-store`). Regions without such a
/// fault are borrowed unchanged.
pub fn excuse<'a>(regions: &[&'a RegionResult]) -> Vec<Cow<'a, RegionResult>> {
    regions
        .iter()
        .map(|r| {
            let faults = faults(r, regions);
            if faults.is_empty() {
                return Cow::Borrowed(*r);
            }
            let mut owned = (*r).clone();
            for f in faults {
                for c in owned.checks.iter_mut().filter(|c| f.checks.contains(&c.id)) {
                    c.outcome = Outcome::Unknown;
                    c.severity = None;
                    c.cause = Some(f.cause);
                    c.observed = f.words.clone();
                }
            }
            Cow::Owned(owned)
        })
        .collect()
}

#[cfg(test)]
#[path = "vantage_tls_tests.rs"]
mod tests;
