//! Merge: region results -> findings -> decision. Pure: no I/O, no clock.
//! The rules are `checks.md` sections 3 and 4.

use std::collections::{BTreeMap, BTreeSet};

use vantage_agent::catalog::{CheckId, FindingId, Stage};
use vantage_agent::model::{Cause, Era, Outcome, RegionResult, Severity};

use crate::findings;
use crate::report::{Decision, Finding, Scope};

/// What the merge needs besides the results.
#[derive(Debug, Clone)]
pub struct MergeInput<'a> {
    /// The regions the caller asked for.
    pub requested: &'a [String],
    /// What arrived (a region may be absent, or present with a non-reporting status).
    pub results: &'a [RegionResult],
    /// Regions the fleet knows to be failing most targets while others succeed.
    pub degraded: &'a BTreeSet<String>,
}

/// The merge's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub findings: Vec<Finding>,
    pub decision: Decision,
    pub reason: String,
    pub era: Era,
}

/// Findings keyed by id while they are assembled.
#[derive(Default)]
struct Acc {
    by_id: BTreeMap<FindingId, Finding>,
}

impl Acc {
    fn add(
        &mut self,
        id: FindingId,
        severity: Severity,
        scope: Scope,
        regions: &[String],
        evidence: Vec<String>,
    ) {
        let spec = findings::spec(id);
        debug_assert!(
            severity <= spec.severity,
            "{id}: severity {severity:?} above the catalogue's highest"
        );
        let entry = self.by_id.entry(id).or_insert_with(|| Finding {
            id,
            severity,
            scope,
            regions: Vec::new(),
            title: spec.title.to_string(),
            evidence: Vec::new(),
            remediation: spec.remediation.to_string(),
            spec: spec.spec.to_string(),
            stack: None,
            accepted: None,
        });
        entry.severity = entry.severity.max(severity);
        if scope == Scope::Regional {
            entry.scope = Scope::Regional;
        }
        for r in regions {
            if !entry.regions.contains(r) {
                entry.regions.push(r.clone());
            }
        }
        for e in evidence {
            if !entry.evidence.contains(&e) {
                entry.evidence.push(e);
            }
        }
    }
}

/// The finding id a failed (or warned) check maps to (`checks.md` section 3, second
/// table): the catalogue's default, or one of the conditional findings it declares.
pub fn finding_id(
    check: CheckId,
    outcome: Outcome,
    regional: bool,
    cause: Option<Cause>,
    era: Era,
) -> FindingId {
    match check {
        CheckId::DnsResolve if regional => FindingId::DnsSplitHorizon,
        CheckId::NetConnect if regional => FindingId::EgressBlocked,
        CheckId::RedirectNone if cause == Some(Cause::CrossHost) => FindingId::RedirectCrossHost,
        CheckId::SecurityOrigin if outcome != Outcome::Fail => FindingId::SecurityOrigin,
        CheckId::EraDetect if matches!(era, Era::Legacy | Era::HttpSse) => FindingId::EraLegacyOnly,
        CheckId::AuthGarbageToken | CheckId::AuthWrongAudience
            if cause == Some(Cause::TokenAccepted) =>
        {
            FindingId::AuthInvalidTokenAccepted
        }
        _ => check.spec().finding,
    }
}

/// The class of a region's DNS answer, for split-horizon comparison.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum DnsClass {
    Global { has_a: bool },
    NonGlobal,
    Nxdomain,
    NoAnswer(String),
}

fn dns_class(r: &RegionResult) -> Option<DnsClass> {
    let dns = r.dns.as_ref()?;
    Some(if dns.rcode == "NXDOMAIN" {
        DnsClass::Nxdomain
    } else if dns.a.is_empty() && dns.aaaa.is_empty() {
        DnsClass::NoAnswer(dns.rcode.clone())
    } else if !dns.all_global {
        DnsClass::NonGlobal
    } else {
        DnsClass::Global { has_a: dns.has_a }
    })
}

fn describe_dns(r: &RegionResult) -> String {
    match &r.dns {
        None => format!("{}: no DNS data", r.region),
        Some(d) => {
            let addrs: Vec<&String> = d.addresses().collect();
            if addrs.is_empty() {
                format!("{}: {} (no addresses)", r.region, d.rcode)
            } else {
                let class = if d.all_global { "global" } else { "non-global" };
                let joined: Vec<&str> = addrs.iter().map(|s| s.as_str()).collect();
                format!("{}: {} ({class})", r.region, joined.join(", "))
            }
        }
    }
}

fn split_horizon(effective: &[&RegionResult], acc: &mut Acc) {
    let classes: Vec<(&RegionResult, DnsClass)> = effective
        .iter()
        .filter_map(|r| dns_class(r).map(|c| (*r, c)))
        .collect();
    let distinct: BTreeSet<&DnsClass> = classes.iter().map(|(_, c)| c).collect();
    if distinct.len() > 1 {
        let best = DnsClass::Global { has_a: true };
        let reference = if distinct.contains(&best) {
            best
        } else {
            // The plurality class stands for "normal"; ties go to the first in order.
            let mut counts: BTreeMap<&DnsClass, usize> = BTreeMap::new();
            for (_, c) in &classes {
                *counts.entry(c).or_default() += 1;
            }
            let max = counts.values().copied().max().unwrap_or(0);
            counts
                .into_iter()
                .find(|(_, n)| *n == max)
                .map(|(c, _)| c.clone())
                .unwrap_or(best)
        };
        let odd: Vec<String> = classes
            .iter()
            .filter(|(_, c)| *c != reference)
            .map(|(r, _)| r.region.clone())
            .collect();
        let evidence = classes.iter().map(|(r, _)| describe_dns(r)).collect();
        acc.add(
            FindingId::DnsSplitHorizon,
            Severity::High,
            Scope::Regional,
            &odd,
            evidence,
        );
    } else if classes.len() > 1 && matches!(distinct.iter().next(), Some(DnsClass::Global { .. })) {
        let sets: BTreeSet<BTreeSet<&String>> = classes
            .iter()
            .filter_map(|(r, _)| r.dns.as_ref().map(|d| d.addresses().collect()))
            .collect();
        if sets.len() > 1 {
            let regions: Vec<String> = classes.iter().map(|(r, _)| r.region.clone()).collect();
            let evidence = classes.iter().map(|(r, _)| describe_dns(r)).collect();
            acc.add(
                FindingId::DnsAnswersDiffer,
                Severity::Info,
                Scope::Global,
                &regions,
                evidence,
            );
        }
    }
}

/// Whether a region's failures are explained by DNS or connectivity (so a divergent check
/// there is not an edge difference).
fn network_explained(r: &RegionResult) -> bool {
    r.checks.iter().any(|c| {
        c.outcome == Outcome::Fail && matches!(c.id.stage(), Stage::Dns | Stage::Net | Stage::Tls)
    })
}

/// Merge the regions into findings and a decision.
pub fn merge(input: &MergeInput<'_>) -> Merged {
    let mut acc = Acc::default();
    let reported: Vec<&RegionResult> = input.results.iter().filter(|r| r.reported()).collect();

    // Regions asked for that did not report.
    let mut missing: Vec<String> = input
        .requested
        .iter()
        .filter(|name| !reported.iter().any(|r| &&r.region == name))
        .cloned()
        .collect();
    missing.sort();
    missing.dedup();
    if !missing.is_empty() {
        let evidence = missing
            .iter()
            .map(
                |name| match input.results.iter().find(|r| &r.region == name) {
                    Some(r) => format!(
                        "{name}: {}",
                        serde_json::to_string(&r.status)
                            .unwrap_or_default()
                            .trim_matches('"')
                    ),
                    None => format!("{name}: no agent answered"),
                },
            )
            .collect();
        acc.add(
            FindingId::FleetRegionMissing,
            Severity::Medium,
            Scope::Regional,
            &missing,
            evidence,
        );
    }

    // A degraded vantage's failures are evidence, not votes.
    let (degraded, effective): (Vec<&RegionResult>, Vec<&RegionResult>) = reported
        .iter()
        .partition(|r| input.degraded.contains(&r.region));
    for r in &degraded {
        let evidence = r
            .checks
            .iter()
            .filter(|c| c.outcome == Outcome::Fail)
            .map(|c| format!("{}: {} {}", r.region, c.id, c.observed))
            .collect();
        acc.add(
            FindingId::FleetVantageDegraded,
            Severity::Low,
            Scope::Regional,
            std::slice::from_ref(&r.region),
            evidence,
        );
    }

    split_horizon(&effective, &mut acc);

    let protected = effective.iter().any(|r| r.protected);
    for &id in CheckId::ALL {
        let mut failing: Vec<(&RegionResult, &vantage_agent::model::CheckResult)> = Vec::new();
        let mut passing: Vec<String> = Vec::new();
        for r in &effective {
            match r.check(id) {
                Some(c) if c.outcome.is_problem() => failing.push((r, c)),
                Some(c) if c.outcome == Outcome::Pass => passing.push(r.region.clone()),
                _ => {}
            }
        }
        if failing.is_empty() {
            continue;
        }
        let regional = !passing.is_empty();
        let scope = if regional {
            Scope::Regional
        } else {
            Scope::Global
        };
        // Group by mapped finding id (regions may fail the same check for different reasons).
        let mut groups: BTreeMap<FindingId, (Severity, Vec<String>, Vec<String>)> = BTreeMap::new();
        let mut causes: BTreeMap<FindingId, Vec<Option<Cause>>> = BTreeMap::new();
        for (r, c) in &failing {
            let fid = finding_id(id, c.outcome, regional, c.cause, r.era);
            let mut sev = c.severity.unwrap_or(Severity::Medium);
            if fid == FindingId::SecurityOriginNotValidated && protected {
                sev = sev.max(Severity::High);
            }
            if fid == FindingId::AuthInvalidTokenAccepted {
                sev = Severity::Critical;
            }
            let g = groups.entry(fid).or_insert((sev, Vec::new(), Vec::new()));
            g.0 = g.0.max(sev);
            g.1.push(r.region.clone());
            g.2.push(format!("{}: {}", r.region, c.observed));
            causes.entry(fid).or_default().push(c.cause);
        }
        for (fid, (sev, regions, evidence)) in groups {
            acc.add(fid, sev, scope, &regions, evidence);
            // The fix follows the evidence when the cause decides it (same finding id).
            let cause_fix = causes
                .get(&fid)
                .and_then(|c| crate::remediation::for_causes(fid, c));
            if let (Some(fix), Some(f)) = (cause_fix, acc.by_id.get_mut(&fid)) {
                f.remediation = fix.to_string();
            }
        }
        // A check that passes somewhere and fails elsewhere: a different edge, unless DNS or
        // connectivity already explains the difference.
        let stage = id.stage();
        if regional
            && matches!(
                stage,
                Stage::Shape | Stage::Era | Stage::Transport | Stage::Auth | Stage::Listing
            )
        {
            let unexplained: Vec<&(&RegionResult, &vantage_agent::model::CheckResult)> = failing
                .iter()
                .filter(|(r, _)| !network_explained(r))
                .collect();
            if !unexplained.is_empty() {
                let sev = if stage == Stage::Auth {
                    Severity::High
                } else {
                    Severity::Medium
                };
                let regions: Vec<String> =
                    unexplained.iter().map(|(r, _)| r.region.clone()).collect();
                let mut evidence: Vec<String> = unexplained
                    .iter()
                    .map(|(r, c)| format!("{}: {id} {}", r.region, c.observed))
                    .collect();
                evidence.push(format!("{id} passes in {}", passing.join(", ")));
                acc.add(
                    FindingId::EdgeDivergent,
                    sev,
                    Scope::Regional,
                    &regions,
                    evidence,
                );
            }
        }
    }

    // The lists the regions read, compared (coordinator/src/surface.rs).
    for f in crate::surface::compare(&effective) {
        acc.add(f.id, f.severity, Scope::Regional, &f.regions, f.evidence);
    }

    let unauthenticated: Vec<String> = effective
        .iter()
        .filter(|r| r.protected && !r.authenticated)
        .map(|r| r.region.clone())
        .collect();
    if !unauthenticated.is_empty() {
        let scope = if unauthenticated.len() == effective.len() {
            Scope::Global
        } else {
            Scope::Regional
        };
        let evidence = unauthenticated
            .iter()
            .map(|r| format!("{r}: 401 without a credential"))
            .collect();
        acc.add(
            FindingId::AuthCredentialRequired,
            Severity::Info,
            scope,
            &unauthenticated,
            evidence,
        );
    }

    let mut findings: Vec<Finding> = acc.by_id.into_values().collect();
    for f in &mut findings {
        f.regions.sort();
    }
    // By severity, then by id as it reads.
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.id.as_str().cmp(b.id.as_str()))
    });
    let (decision, reason) = decide(&findings, &missing, &unauthenticated, effective.len());
    Merged {
        findings,
        decision,
        reason,
        era: majority_era(&effective),
    }
}

fn majority_era(effective: &[&RegionResult]) -> Era {
    let mut counts: Vec<(Era, usize)> = Vec::new();
    for r in effective {
        match counts.iter_mut().find(|(e, _)| *e == r.era) {
            Some((_, n)) => *n += 1,
            None => counts.push((r.era, 1)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(e, _)| e)
        .unwrap_or(Era::Unknown)
}

fn name(f: &Finding) -> String {
    match f.scope {
        Scope::Global => f.id.to_string(),
        Scope::Regional => format!("{} in {}", f.id, f.regions.join(", ")),
    }
}

/// `checks.md` section 4, in order.
fn decide(
    findings: &[Finding],
    missing: &[String],
    unauthenticated: &[String],
    effective: usize,
) -> (Decision, String) {
    let at_least = |s: Severity| {
        findings
            .iter()
            .filter(move |f| f.severity >= s && f.id != FindingId::FleetVantageDegraded)
    };
    let blocking: Vec<String> = at_least(Severity::High).map(name).collect();
    if !blocking.is_empty() {
        return (Decision::Blocked, blocking.join("; "));
    }
    if !missing.is_empty() {
        return (
            Decision::Unknown,
            format!("no report from {}", missing.join(", ")),
        );
    }
    if effective == 0 {
        return (Decision::Unknown, "no region reported".into());
    }
    if !unauthenticated.is_empty() {
        return (
            Decision::Unknown,
            "the endpoint requires authorization and no credential was given, so the protocol checks could not run".into(),
        );
    }
    let review: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == Severity::Medium)
        .map(name)
        .collect();
    if !review.is_empty() {
        return (Decision::Review, review.join("; "));
    }
    let minor = findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .count();
    let why = if minor == 0 {
        "no finding above info".to_string()
    } else {
        format!("{minor} low-severity finding(s), nothing above low")
    };
    (Decision::Pass, why)
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
