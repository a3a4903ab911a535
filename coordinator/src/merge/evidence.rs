//! Evidence (`checks.md` 4.1): which check results say something about the target, whether a
//! region observed the target, and the findings that name why a region or a check has no
//! evidence. A skip is never evidence; neither is an `unknown`, an `error`, or a result whose
//! cause is the vantage's own (its resolver, its egress policy, its deadline).

use vantage_agent::catalog::{CheckId, Evidence, FindingId, Stage};
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult, Severity};

use super::Acc;
use crate::report::Scope;

/// Whether a cause, on this check, means "no evidence about the target": the vantage's own
/// faults and decisions, a refused credential, or an answer for another reason. On a DNS
/// check a timeout or a resolver failure (SERVFAIL, REFUSED) is the resolver's, not the
/// zone's: reports from agents older than `probe.resolver-failed` still carry them as
/// failures.
pub fn no_evidence_cause(check: CheckId, cause: Option<Cause>) -> bool {
    match cause {
        None => false,
        Some(c) if c.is_vantage_side() => true,
        Some(Cause::CredentialRefused | Cause::OtherReason) => true,
        Some(Cause::Timeout | Cause::ResolverFailure) => check.stage() == Stage::Dns,
        Some(_) => false,
    }
}

/// What a check result says about the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Positive evidence: the rule was met.
    Pass,
    /// Evidence of a problem: `fail` (or `warn`, at its own severity).
    Problem,
    /// Not applicable here (`skip`): no evidence, and nothing missing.
    NotApplicable,
    /// Due, but no evidence either way: `unknown`, `error`, or a vantage-side cause.
    Gap,
}

/// How earlier agents reported the listing of a server whose `server/discover` declared no
/// capabilities: every listing check skipped with this reason, though the lists were due.
/// Such a skip is no "not applicable": nothing was read (fresh-user round 8, item 10).
const UNREAD_LISTING_SKIP: &str = "server/discover declared no capabilities";

pub fn reading(c: &CheckResult) -> Reading {
    match c.outcome {
        Outcome::Skip
            if c.id.stage() == Stage::Listing && c.observed.starts_with(UNREAD_LISTING_SKIP) =>
        {
            Reading::Gap
        }
        Outcome::Skip => Reading::NotApplicable,
        Outcome::Unknown | Outcome::Error => Reading::Gap,
        _ if no_evidence_cause(c.id, c.cause) => Reading::Gap,
        Outcome::Pass => Reading::Pass,
        // A name that does not resolve is the zone's fault only when the zone answered
        // so (NXDOMAIN, or NOERROR without addresses); any other failure is the resolver's.
        Outcome::Fail | Outcome::Warn
            if c.id == CheckId::DnsResolve
                && !matches!(c.cause, Some(Cause::Nxdomain | Cause::NoAnswer)) =>
        {
            Reading::Gap
        }
        Outcome::Fail | Outcome::Warn => Reading::Problem,
    }
}

/// Whether a region has evidence (either way) for this check.
pub fn has_evidence(c: &CheckResult) -> bool {
    matches!(reading(c), Reading::Pass | Reading::Problem)
}

/// The finding that names why a check has no evidence, by its cause.
pub fn gap_finding(c: &CheckResult) -> FindingId {
    match c.cause {
        Some(Cause::PolicyRefused) => FindingId::ProbePolicyRefused,
        Some(Cause::ResolverError | Cause::ResolverFailure) => FindingId::ProbeResolverFailed,
        Some(Cause::Deadline) => FindingId::ProbeIncomplete,
        Some(c @ (Cause::ClockSkew | Cause::TrustStore)) => super::vantage_tls::finding_of(c),
        _ if c.id.stage() == Stage::Dns && c.outcome != Outcome::Skip => {
            FindingId::ProbeResolverFailed
        }
        Some(Cause::CredentialRefused) => FindingId::AuthCredentialRefused,
        _ => FindingId::ProbeIncomplete,
    }
}

/// The conditions of 4.1 a region proved, and whether it observed the target: it connected
/// (an address it resolved or was given), completed the TLS handshake when the target is
/// https (its handshake check was not skipped as plain http), and an MCP request got an
/// HTTP answer that told the era.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub observed: bool,
    /// The conditions not proven, in order.
    pub missing: Vec<Evidence>,
}

pub fn observation(r: &RegionResult) -> Observation {
    let mut proven = r.proven();
    // A completed handshake or an HTTP answer needs a completed connection, whatever
    // net.connect says of the target's other addresses (one refused by policy, or beyond the
    // cap of addresses tried, leaves it unknown while another one answered).
    if proven.contains(&Evidence::Handshake) || proven.contains(&Evidence::Answered) {
        proven.insert(Evidence::Connected);
    }
    let handshake_due = r
        .check(CheckId::TlsHandshake)
        .is_none_or(|c| c.outcome != Outcome::Skip || !c.observed.contains("plain http"));
    let resolved_or_given = proven.contains(&Evidence::Resolved)
        || r.check(CheckId::DnsResolve)
            .is_some_and(|c| c.outcome == Outcome::Skip && r.dns.is_none())
        || proven.contains(&Evidence::Connected);
    let mut missing = Vec::new();
    if !resolved_or_given {
        missing.push(Evidence::Resolved);
    }
    for e in [Evidence::Connected, Evidence::Handshake, Evidence::Answered] {
        if e == Evidence::Handshake && !handshake_due {
            continue;
        }
        if !proven.contains(&e) {
            missing.push(e);
        }
    }
    Observation {
        observed: missing.is_empty(),
        missing,
    }
}

/// Whether a failure with evidence, about the target, explains why this region did not
/// observe it (a name that does not resolve, a refused connection, a failed handshake, an
/// endpoint that is not MCP): then that finding names why.
fn explained_by_the_target(r: &RegionResult) -> bool {
    r.checks.iter().any(|c| {
        reading(c) == Reading::Problem
            && (matches!(c.id.stage(), Stage::Dns | Stage::Net | Stage::Tls)
                || c.id == CheckId::EraDetect
                || c.id == CheckId::RedirectNone)
    })
}

/// Whether a region's result, whatever its run finished, is no observation of the target
/// (`checks.md` 4.1 and 5: its status then reads `partial`, not `complete`): it did not
/// observe the target, and nothing the target did says why (no failure with evidence about
/// its DNS, connect, TLS, era or redirect) nor a missing credential; what is left is the
/// vantage's own (its wait, its resolver, its policy, its trust store or clock, its routes)
/// or answers for another reason (a gateway's bare 403, a 429): no observation either way.
pub fn observed_nothing(r: &RegionResult) -> bool {
    !observation(r).observed && !explained_by_the_target(r) && !credential_required(r)
}

/// Whether a region weighs on the scope of a finding of this check (`checks.md` 4.1: "regions
/// without evidence neither make it global nor make it regional"). It does when it has
/// evidence for the check (either way); when it observed the target and the check did not
/// apply there (a real difference between regions); and when it did not observe the target
/// because of something the target did (a name the zone does not resolve there, a refused
/// connection: a different fault of the target in that region). It does not when its lack of
/// evidence is the vantage's own (its resolver, its policy, its deadline, its trust store):
/// a vantage's fault never changes where the target's fault is said to live (red team round
/// 12, item 1).
pub fn weighs_on_scope(r: &RegionResult, check: CheckId) -> bool {
    let Some(c) = r.check(check) else {
        return false;
    };
    match reading(c) {
        Reading::Pass | Reading::Problem => true,
        Reading::Gap => false,
        Reading::NotApplicable => {
            if observation(r).observed {
                true
            } else {
                explained_by_the_target(r)
            }
        }
    }
}

/// Whether the region stopped at the authorization boundary without a credential (the
/// merge names that `auth.credential-required`).
pub fn credential_required(r: &RegionResult) -> bool {
    r.protected
        && !r.authenticated
        && !r
            .checks
            .iter()
            .any(|c| c.cause == Some(Cause::CredentialRefused))
}

/// The fix for checks with no evidence, by what stopped them: the one under the gate line
/// fits the run at hand rather than every way a check can go unobserved.
fn incomplete_fix(cause: Option<Cause>) -> &'static str {
    match cause {
        Some(Cause::Deadline) => {
            "The run's deadline ran out before these checks: raise --timeout (or the job's deadline)."
        }
        Some(Cause::Timeout) => {
            "The endpoint did not answer within the per-exchange timeout: check that it answers (a stuck process, or a proxy that holds requests without a live backend, looks like this), or raise --check-timeout if it answers slowly."
        }
        Some(Cause::NoRoute) => {
            "Nothing was sent to these addresses: this vantage has no route (or no source address) for their family, or a blackhole, prohibit or unreachable route of its own for them (connect() failed on the vantage itself), or it is set to have no IPv6 and the target has only IPv6 addresses. Check from a vantage that has a route for that family (for an IPv6-only target, one with IPv6), or give this vantage's network that route; the target was not judged. A vantage without IPv6 that checks dual-stack targets says so with --no-ipv6 (vantage check, vantage-agent; the chart's agent.ipv6: false) or probe.ipv6 = false (the coordinator's in-process vantage), so IPv6 is left out of its verdicts instead of leaving them unknown."
        }
        Some(Cause::Unsendable) => {
            "This vantage could not build its requests (a token it was given cannot go in an HTTP header: a newline or a control character inside it), so nothing was sent: fix the credential (one line, no control characters) where it is configured; the target was not judged."
        }
        Some(Cause::SizeCap) => {
            "An answer or a list was larger than a client should have to read (the read stopped at one of its bounds): shrink or paginate it; the unread rest is never passed. For net.connect: the name has more addresses than a check tries (16, the evidence names the rest); those were not judged."
        }
        Some(Cause::Malformed) => {
            "An answer could not be read as what the next step needs (a body that broke off, or a result that lacks what the rule reads, such as a server/discover without capabilities: its own finding names it): fix the server, or what stands in front of it, then run the check again."
        }
        Some(Cause::Reset | Cause::Refused | Cause::Unreachable) => {
            "The exchange broke before an answer could be judged: look at the server and at what stands in front of it (a proxy, a gateway), then run the check again."
        }
        _ => {
            "Look at what answered in the probes' place (a rate limit, an unavailable gateway, the authorization layer, a refusal before the MCP layer) and let those requests through before trusting a pass."
        }
    }
}

/// The fix when a region's result lacks checks (`NOT_IN_RESULT`).
const NOT_IN_RESULT_FIX: &str = "Checks missing from a region's result were not run by its agent (an older version): run the same Vantage version on the agents and the coordinator.";

/// Why a catalogued check is missing from a region's result.
pub const NOT_IN_RESULT: &str = "not in this region's result: its vantage did not run them (an agent older than the coordinator does not know them); run the same Vantage version on the agents and the coordinator";

/// Add, for every effective region, the findings that name its gaps: every check with no
/// evidence (by cause), and a region that did not observe the target with nothing else to
/// say why. Returns the regions that did not observe the target.
pub(crate) fn gaps(effective: &[&RegionResult], acc: &mut Acc) -> Vec<String> {
    let mut not_observing = Vec::new();
    // The fixes for probe.incomplete's causes, in the order they are first met.
    let mut fixes: Vec<&'static str> = Vec::new();
    for r in effective {
        // Group this region's gaps by finding and reason, in check order.
        let mut groups: Vec<(FindingId, String, Vec<&str>)> = Vec::new();
        for c in r.checks.iter().filter(|c| reading(c) == Reading::Gap) {
            let fid = gap_finding(c);
            if fid == FindingId::ProbeIncomplete {
                // The only skip that is a gap: an earlier agent's unread listing, whose
                // discover lacked what the listing reads.
                let cause = match c.outcome {
                    Outcome::Skip => Some(Cause::Malformed),
                    _ => c.cause,
                };
                fixes.push(if super::own_wait::is_own_wait(c) {
                    super::own_wait::OWN_WAIT_FIX
                } else {
                    incomplete_fix(cause)
                });
            }
            let why = match c.outcome {
                Outcome::Error => format!("could not run: {}", c.observed),
                _ => c.observed.clone(),
            };
            match groups.iter_mut().find(|(f, w, _)| *f == fid && *w == why) {
                Some((_, _, ids)) => ids.push(c.id.as_str()),
                None => groups.push((fid, why, vec![c.id.as_str()])),
            }
        }
        // A check the region's result does not carry was not run there: every engine
        // reports every catalogued check (a skip where it does not apply), so only an agent
        // older than the coordinator, which does not know the check, leaves one out. No
        // evidence, never a pass.
        let absent: Vec<&str> = CheckId::ALL
            .iter()
            .filter(|&&id| r.check(id).is_none())
            .map(|id| id.as_str())
            .collect();
        if !absent.is_empty() {
            fixes.push(NOT_IN_RESULT_FIX);
            groups.push((
                FindingId::ProbeIncomplete,
                NOT_IN_RESULT.to_string(),
                absent,
            ));
        }
        let obs = observation(r);
        if !obs.observed {
            not_observing.push(r.region.clone());
        }
        let named_elsewhere =
            !groups.is_empty() || explained_by_the_target(r) || credential_required(r);
        if !obs.observed && !named_elsewhere {
            let unproven: Vec<&str> = obs.missing.iter().map(|e| e.describe()).collect();
            groups.push((
                FindingId::ProbeIncomplete,
                format!(
                    "did not observe the target: no evidence that {}",
                    unproven.join(", that ")
                ),
                Vec::new(),
            ));
        }
        for (fid, why, ids) in groups {
            let line = if ids.is_empty() {
                format!("{}: {why}", r.region)
            } else {
                format!("{}: {} ({why})", r.region, ids.join(", "))
            };
            acc.add(
                fid,
                Severity::Medium,
                Scope::Regional,
                std::slice::from_ref(&r.region),
                vec![line],
            );
        }
    }
    // Each fix once, in the order first met.
    let mut once: Vec<&str> = Vec::new();
    for f in fixes {
        if !once.contains(&f) {
            once.push(f);
        }
    }
    if let (false, Some(f)) = (
        once.is_empty(),
        acc.by_id.get_mut(&FindingId::ProbeIncomplete),
    ) {
        f.remediation = once.join(" ");
    }
    not_observing
}

/// Name every region that did not observe the target when nothing else makes the decision
/// (`checks.md` 4.1: a finding names why). A region stopped by something the target did
/// (a same-origin redirect, an endpoint that is not MCP) below `high` has a finding about
/// that, but none that says the decision is `unknown` because of it: this adds
/// `probe.incomplete` for it, with what the region saw instead and that finding's fix. When
/// a blocking finding exists the decision is `blocked` and names it already.
pub(crate) fn unexplained_regions(regions: &[&RegionResult], acc: &mut Acc) {
    let blocking = acc
        .by_id
        .values()
        .any(|f| f.severity >= Severity::High && f.id != FindingId::FleetVantageDegraded);
    if blocking {
        return;
    }
    for r in regions {
        let obs = observation(r);
        let named = acc
            .by_id
            .values()
            .any(|f| super::UNKNOWN_FINDINGS.contains(&f.id) && f.regions.contains(&r.region));
        if obs.observed || named {
            continue;
        }
        let seen: Vec<&super::Finding> = acc
            .by_id
            .values()
            .filter(|f| f.severity >= Severity::Low && f.regions.contains(&r.region))
            .collect();
        let unproven: Vec<&str> = obs.missing.iter().map(|e| e.describe()).collect();
        let mut line = format!(
            "{}: did not observe the target: no evidence that {}",
            r.region,
            unproven.join(", that ")
        );
        if !seen.is_empty() {
            let ids: Vec<&str> = seen.iter().map(|f| f.id.as_str()).collect();
            line.push_str(&format!("; what it saw instead: {}", ids.join(", ")));
        }
        let fix = seen.first().map(|f| {
            format!(
                "Nothing was decided in {} because it got no MCP answer: fix what it saw instead ({}): {}",
                r.region, f.id, f.remediation
            )
        });
        let existed = acc.by_id.contains_key(&FindingId::ProbeIncomplete);
        acc.add(
            FindingId::ProbeIncomplete,
            Severity::Medium,
            Scope::Regional,
            std::slice::from_ref(&r.region),
            vec![line],
        );
        if let (false, Some(fix)) = (existed, fix) {
            if let Some(f) = acc.by_id.get_mut(&FindingId::ProbeIncomplete) {
                f.remediation = fix;
            }
        }
    }
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "absent_checks_tests.rs"]
mod absent_checks_tests;
