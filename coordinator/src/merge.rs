//! Merge: region results -> findings -> decision. Pure: no I/O, no clock.
//! The rules are `checks.md` sections 3 and 4, and 4.1 above all: never pass what was not
//! seen. Only results that are evidence about the target vote ([`evidence`]); a finding is
//! global only when every effective region has evidence for its check and failed it; only a
//! `fail` creates `edge.divergent`; a fault of the vantage never becomes a finding about the
//! target; the decision is monotone.
//!
//! One rule keeps it monotone where regions are compared: **a comparison finding is never
//! worse than the failures it compares** (`dns.split-horizon`, `edge.divergent`; see
//! `dns::departure` and `check_findings`). A comparison needs a region that saw otherwise;
//! when that region later fails the same way (a worse observation), the comparison ends and
//! only the per-check finding is left, which carries the worst severity of every region that
//! failed. Were the comparison above its failures, a milder failure elsewhere would lower
//! the decision.

pub mod blame;
mod decide;
pub mod degraded;
mod dns;
pub mod evidence;
pub mod own_wait;
mod resolver;
pub mod vantage_tls;

use std::collections::{BTreeMap, BTreeSet};

use vantage_agent::catalog::{CheckId, FindingId, Stage};
use vantage_agent::model::{
    Cause, CheckResult, Era, Outcome, RegionResult, RegionStatus, Severity,
};

use crate::findings;
use crate::report::{Decision, Finding, Scope};
pub use decide::UNKNOWN_FINDINGS;
use evidence::{reading, Reading};

/// What the merge needs besides the results.
#[derive(Debug, Clone)]
pub struct MergeInput<'a> {
    /// The regions the caller asked for.
    pub requested: &'a [String],
    /// What arrived (a region may be absent, or present with a non-reporting status).
    pub results: &'a [RegionResult],
    /// Regions the fleet knows to be failing most targets while others succeed (their
    /// egress failures on a target they did not observe are discounted: `degraded`).
    pub degraded: &'a BTreeSet<String>,
    /// Why a region has no result, when the dispatcher knows more than its status (the agent
    /// refused the job and said why; it went away mid-job).
    pub absent: &'a BTreeMap<String, Absence>,
}

/// Why a region has no result, in words for the report: evidence and the fix that fits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absence {
    /// What happened, after `REGION: STATUS: ` in the evidence.
    pub what: String,
    /// What to do about it.
    pub fix: String,
    /// The fleet's own doing, as the run saw it: the region's connected agents refused the
    /// job (`VantageRegionRefusingJobs` names the region). Not the target's, never
    /// evidence; `vantage_region_unknown_fleet` reads it for the run.
    pub fleet: bool,
}

/// The merge's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub findings: Vec<Finding>,
    pub decision: Decision,
    pub reason: String,
    pub era: Era,
    /// Regions that reported `complete` but did not observe the target with no failure of
    /// the target's to say why (`evidence::observed_nothing`, a discounted degraded region
    /// included): the report says `partial` for them (`checks.md` 5).
    pub partial: Vec<String>,
}

/// Findings keyed by id while they are assembled.
#[derive(Default)]
pub(crate) struct Acc {
    by_id: BTreeMap<FindingId, Finding>,
}

impl Acc {
    pub(crate) fn add(
        &mut self,
        id: FindingId,
        severity: Severity,
        scope: Scope,
        regions: &[String],
        evidence: Vec<String>,
    ) {
        let spec = findings::spec(id);
        // Results come from agents over the wire: a severity above what the catalogue
        // allows is capped, never trusted.
        let severity = severity.min(spec.severity);
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
        CheckId::DnsResolve if regional && outcome == Outcome::Fail => FindingId::DnsSplitHorizon,
        CheckId::NetConnect if regional && outcome == Outcome::Fail => FindingId::EgressBlocked,
        CheckId::RedirectNone if cause == Some(Cause::CrossHost) => FindingId::RedirectCrossHost,
        CheckId::SecurityOrigin if outcome != Outcome::Fail => FindingId::SecurityOrigin,
        CheckId::EraDetect if matches!(era, Era::Legacy | Era::HttpSse) => FindingId::EraLegacyOnly,
        CheckId::AuthGarbageToken | CheckId::AuthWrongAudience
            if outcome == Outcome::Fail && cause == Some(Cause::TokenAccepted) =>
        {
            FindingId::AuthInvalidTokenAccepted
        }
        _ => check.spec().finding,
    }
}

/// Whether a region's failures are explained by DNS or connectivity (so a divergent check
/// there is not an edge difference). Only failures with evidence count, and only at high:
/// the explaining finding then blocks on its own, so dropping the divergence for it never
/// improves the decision.
fn network_explained(r: &RegionResult) -> bool {
    r.checks.iter().any(|c| {
        c.outcome == Outcome::Fail
            && reading(c) == Reading::Problem
            && c.severity.unwrap_or(Severity::Medium) >= Severity::High
            && matches!(c.id.stage(), Stage::Dns | Stage::Net | Stage::Tls)
    })
}

/// The `fleet.region-missing` finding for requested regions that did not report.
fn missing_regions(
    input: &MergeInput<'_>,
    reported: &[&RegionResult],
    acc: &mut Acc,
) -> Vec<String> {
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
                    Some(r) => {
                        let status = serde_json::to_string(&r.status).unwrap_or_default();
                        let status = status.trim_matches('"');
                        match input.absent.get(name) {
                            Some(a) => format!("{name}: {status}: {}", a.what),
                            None => match r.status {
                                RegionStatus::NoAgent => format!(
                                    "{name}: {status}: no agent of this region is connected"
                                ),
                                RegionStatus::Timeout => {
                                    format!("{name}: {status}: no result by the job's deadline")
                                }
                                _ => format!("{name}: {status}"),
                            },
                        }
                    }
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
        // The fix that fits each region the dispatcher could explain; the generic one
        // ("check that an agent is connected") for the others.
        let fixes: Vec<String> = missing
            .iter()
            .filter_map(|name| input.absent.get(name).map(|a| format!("{name}: {}", a.fix)))
            .collect();
        if !fixes.is_empty() {
            if let Some(f) = acc.by_id.get_mut(&FindingId::FleetRegionMissing) {
                if fixes.len() < missing.len() {
                    let generic = f.remediation.clone();
                    f.remediation = format!("{}; other regions: {generic}", fixes.join("; "));
                } else {
                    f.remediation = fixes.join("; ");
                }
            }
        }
    }
    missing
}

/// The findings of one check across the effective regions: per mapped finding id, and
/// `edge.divergent` when it fails (not warns) somewhere and passes elsewhere.
fn check_findings(id: CheckId, effective: &[&RegionResult], protected: bool, acc: &mut Acc) {
    let mut failing: Vec<(&RegionResult, &CheckResult)> = Vec::new();
    let mut passing: Vec<String> = Vec::new();
    for r in effective {
        match r.check(id).map(|c| (c, reading(c))) {
            Some((c, Reading::Problem)) => failing.push((r, c)),
            Some((_, Reading::Pass)) => passing.push(r.region.clone()),
            _ => {}
        }
    }
    if failing.is_empty() {
        return;
    }
    // "Regional" in the catalogue's sense (egress.blocked, split horizon): some region with
    // evidence passed. A region without evidence neither passes nor fails.
    let passed_somewhere = !passing.is_empty();
    // Group by mapped finding id (regions may fail the same check for different reasons).
    let mut groups: BTreeMap<FindingId, (Severity, Vec<String>, Vec<String>)> = BTreeMap::new();
    let mut causes: BTreeMap<FindingId, Vec<Option<Cause>>> = BTreeMap::new();
    let mut observed: BTreeMap<FindingId, Vec<&str>> = BTreeMap::new();
    for (r, c) in &failing {
        let fid = finding_id(id, c.outcome, passed_somewhere, c.cause, r.era);
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
        observed.entry(fid).or_default().push(c.observed.as_str());
    }
    for (fid, (sev, regions, evidence)) in groups {
        // Global when every region that weighs on this check's scope failed it this way: a
        // region without evidence for the vantage's own reasons neither makes it global nor
        // regional (checks.md 4.1).
        let weighing = effective
            .iter()
            .filter(|r| evidence::weighs_on_scope(r, id))
            .count();
        let scope = if regions.len() == weighing {
            Scope::Global
        } else {
            Scope::Regional
        };
        acc.add(fid, sev, scope, &regions, evidence);
        // The fix follows the evidence when the cause decides it (same finding id).
        let cause_fix = observed
            .get(&fid)
            .and_then(|o| crate::remediation::for_observed(fid, o))
            .or_else(|| {
                causes
                    .get(&fid)
                    .and_then(|c| crate::remediation::for_causes(fid, c))
            });
        if let (Some(fix), Some(f)) = (cause_fix, acc.by_id.get_mut(&fid)) {
            f.remediation = fix.to_string();
        }
    }
    // A check that passes somewhere and fails elsewhere: a different edge, unless DNS or
    // connectivity already explains the difference (the region's own DNS, connect or TLS
    // failure, or this check failing on a name with no address in that region's view). Only
    // a `fail` counts; a warning is reported at its own severity, and the divergence is never
    // worse than the failure.
    let stage = id.stage();
    if !passed_somewhere
        || !matches!(
            stage,
            Stage::Shape | Stage::Era | Stage::Transport | Stage::Auth | Stage::Listing
        )
    {
        return;
    }
    let unexplained: Vec<&(&RegionResult, &CheckResult)> = failing
        .iter()
        .filter(|(r, c)| {
            c.outcome == Outcome::Fail && !network_explained(r) && !dns::failed_at_dns(c)
        })
        .collect();
    // Each failure counts at the severity its own finding carries (capped by that finding's
    // catalogue entry, as `Acc::add` caps it): the divergence is never worse than the
    // finding it stands beside.
    let Some(worst) = unexplained
        .iter()
        .map(|(r, c)| {
            let own = finding_id(id, c.outcome, true, c.cause, r.era);
            c.severity
                .unwrap_or(Severity::Medium)
                .min(findings::spec(own).severity)
        })
        .max()
    else {
        return;
    };
    let by_stage = if stage == Stage::Auth {
        Severity::High
    } else {
        Severity::Medium
    };
    let regions: Vec<String> = unexplained.iter().map(|(r, _)| r.region.clone()).collect();
    let mut evidence: Vec<String> = unexplained
        .iter()
        .map(|(r, c)| format!("{}: {id} {}", r.region, c.observed))
        .collect();
    evidence.push(format!("{id} passes in {}", passing.join(", ")));
    acc.add(
        FindingId::EdgeDivergent,
        by_stage.min(worst),
        Scope::Regional,
        &regions,
        evidence,
    );
}

/// Merge the regions into findings and a decision.
pub fn merge(input: &MergeInput<'_>) -> Merged {
    let mut acc = Acc::default();
    let reported: Vec<&RegionResult> = input.results.iter().filter(|r| r.reported()).collect();
    let missing = missing_regions(input, &reported, &mut acc);
    // The same chain judged differently by two regions is a vantage's clock or trust store:
    // those failures are that vantage's gaps, not findings about the target.
    let excused = vantage_tls::excuse(&reported);
    let reported: Vec<&RegionResult> = excused.iter().map(|r| r.as_ref()).collect();
    // A connect that timed out before another region connected to the same address (after
    // a longer time than this region waited) is the region's own wait, not the target's.
    let waited = own_wait::excuse(&reported);
    let reported: Vec<&RegionResult> = waited.iter().map(|r| r.as_ref()).collect();

    // A degraded vantage's egress failures on a target it did not observe are evidence, not
    // votes; a degraded region that observed the target reports with full weight.
    let (discounted, effective): (Vec<&RegionResult>, Vec<&RegionResult>) = reported
        .iter()
        .partition(|r| degraded::discounted(r, &reported, input.degraded));
    degraded::note(&discounted, &reported, &mut acc);

    // What each region observed, and the findings that name every gap (checks.md 4.1).
    let mut not_observing = evidence::gaps(&effective, &mut acc);
    not_observing.extend(
        // A discounted region never observed the target.
        discounted.iter().map(|r| r.region.clone()),
    );
    not_observing.extend(missing.iter().cloned());
    not_observing.sort();
    not_observing.dedup();
    // A SERVFAIL every region's resolver shares points at the zone (still unknown).
    resolver::same_everywhere(&effective, &mut acc);

    dns::split_horizon(&effective, &mut acc);

    let protected = effective.iter().any(|r| r.protected);
    for &id in CheckId::ALL {
        check_findings(id, &effective, protected, &mut acc);
    }
    blame::name_addresses_given_only_here(&effective, &mut acc);

    // The lists the regions read, compared (coordinator/src/surface.rs).
    for f in crate::surface::compare(&effective) {
        acc.add(f.id, f.severity, f.scope, &f.regions, f.evidence);
    }

    let unauthenticated: Vec<String> = effective
        .iter()
        .filter(|r| evidence::credential_required(r))
        .map(|r| r.region.clone())
        .collect();
    if !unauthenticated.is_empty() {
        let evidence = unauthenticated
            .iter()
            .map(|r| {
                format!("{r}: asked for authorization (401, or 403 with a Bearer challenge) and no credential was given")
            })
            .collect();
        acc.add(
            FindingId::AuthCredentialRequired,
            Severity::Info,
            Scope::Regional,
            &unauthenticated,
            evidence,
        );
    }

    // A region that did not observe the target and that nothing above names (checks.md 4.1;
    // a discounted degraded one is named by fleet.vantage-degraded).
    evidence::unexplained_regions(&effective, &mut acc);

    let mut findings: Vec<Finding> = acc.by_id.into_values().collect();
    for f in &mut findings {
        f.regions.sort();
        // A finding that names why regions have no evidence is global when it names them all.
        if (UNKNOWN_FINDINGS.contains(&f.id) && f.id != FindingId::FleetRegionMissing)
            && !effective.is_empty()
            && f.regions.len() == effective.len()
        {
            f.scope = Scope::Global;
        }
    }
    // By severity, then by id as it reads.
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.id.as_str().cmp(b.id.as_str()))
    });
    let coverage = decide::Coverage {
        not_observing,
        effective: effective.len(),
    };
    let (decision, reason) = decide::decide(&findings, &coverage);
    let partial = effective
        .iter()
        .filter(|r| evidence::observed_nothing(r))
        .chain(discounted.iter())
        .filter(|r| r.status == RegionStatus::Complete)
        .map(|r| r.region.clone())
        .collect();
    Merged {
        findings,
        decision,
        reason,
        era: decide::majority_era(&effective),
        partial,
    }
}

/// The regions of a finished report that did not observe the target (`checks.md` 4.1):
/// every reporting region without the evidence a pass needs, and the requested regions
/// that did not report (named by `fleet.region-missing`).
pub fn not_observing(report: &crate::report::Report) -> Vec<String> {
    let mut regions: Vec<String> = report
        .regions
        .iter()
        .filter(|r| !r.reported() || !evidence::observation(r).observed)
        .map(|r| r.region.clone())
        .chain(
            report
                .findings
                .iter()
                .filter(|f| f.id == FindingId::FleetRegionMissing)
                .flat_map(|f| f.regions.iter().cloned()),
        )
        .collect();
    regions.sort();
    regions.dedup();
    regions
}

/// The decision the findings `keep` leaves, on the report's own evidence (`checks.md` 4, the
/// same rules as [`merge`]): what a gate judges once a baseline accepted the others. Taking
/// a finding away never takes away a region's missing observation: a target no region
/// observed stays `unknown` whatever is accepted.
pub fn decide_keeping(
    report: &crate::report::Report,
    keep: impl Fn(&Finding) -> bool,
) -> (Decision, String) {
    let findings: Vec<Finding> = report
        .findings
        .iter()
        .filter(|f| keep(f))
        .cloned()
        .collect();
    let degraded: Vec<&String> = report
        .findings
        .iter()
        .filter(|f| f.id == FindingId::FleetVantageDegraded)
        .flat_map(|f| f.regions.iter())
        .collect();
    let coverage = decide::Coverage {
        not_observing: not_observing(report),
        effective: report
            .regions
            .iter()
            .filter(|r| r.reported() && !degraded.contains(&&r.region))
            .count(),
    };
    decide::decide(&findings, &coverage)
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "merge_props.rs"]
mod props;

#[cfg(test)]
#[path = "merge/rt13_tests.rs"]
mod rt13_tests;

#[cfg(test)]
#[path = "merge/status_tests.rs"]
mod status_tests;
