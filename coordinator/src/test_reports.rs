//! Reports for unit tests, built the way production builds them: region results through the
//! real merge (`checks::assemble`), so the findings and the decision are the merge's own.

use std::collections::BTreeSet;

use vantage_agent::catalog::{CheckId, Stage};
use vantage_agent::model::{
    Cause, CheckResult, DnsObservation, Era, Outcome, RegionResult, RegionStatus, Severity,
    TlsObservation, TlsVerdict,
};
use vantage_agent::Target;

use crate::report::Report;

/// A region where every catalogued check passed.
pub fn clean(region: &str) -> RegionResult {
    RegionResult {
        region: region.into(),
        status: RegionStatus::Complete,
        agent: None,
        duration_ms: 12,
        era: Era::Modern,
        protected: false,
        authenticated: false,
        dns: Some(DnsObservation {
            rcode: "NOERROR".into(),
            a: vec!["198.51.100.10".into()],
            aaaa: vec![],
            cname: vec![],
            has_a: true,
            all_global: true,
            min_ttl_s: Some(60),
            ..Default::default()
        }),
        tls: None,
        phases_ms: Default::default(),
        checks: CheckId::ALL
            .iter()
            .map(|&c| CheckResult {
                id: c,
                outcome: Outcome::Pass,
                observed: format!("{} as expected", c.as_str()),
                expected: c.expected().into(),
                duration_ms: 1,
                severity: None,
                cause: None,
            })
            .collect(),
        surface: None,
        stacks: Vec::new(),
    }
}

/// Set one check's outcome.
pub fn set(
    r: &mut RegionResult,
    id: &str,
    outcome: Outcome,
    severity: Option<Severity>,
    cause: Option<Cause>,
    observed: &str,
) {
    let c = r
        .checks
        .iter_mut()
        .find(|c| c.id.as_str() == id)
        .expect("catalogued check");
    c.outcome = outcome;
    c.severity = severity;
    c.cause = cause;
    c.observed = observed.into();
}

pub fn fail(r: &mut RegionResult, id: &str, severity: Severity, observed: &str) {
    set(r, id, Outcome::Fail, Some(severity), None, observed);
}

pub fn skip(r: &mut RegionResult, id: &str, reason: &str) {
    set(r, id, Outcome::Skip, None, None, reason);
}

/// `region` could not connect: net.connect failed (high, with `cause` and `observed`) and
/// every check after the connect stage was not run.
pub fn unreachable(region: &str, cause: Option<Cause>, observed: &str) -> RegionResult {
    let mut r = clean(region);
    set(
        &mut r,
        "net.connect",
        Outcome::Fail,
        Some(Severity::High),
        cause,
        observed,
    );
    not_run(
        &mut r,
        |id| id.stage() > Stage::Net,
        "not run: no connection",
    );
    r
}

/// Every check of `r` that `skipped` picks was not run, for `reason`.
pub fn not_run(r: &mut RegionResult, skipped: impl Fn(CheckId) -> bool, reason: &str) {
    for c in r.checks.iter_mut().filter(|c| skipped(c.id)) {
        c.outcome = Outcome::Skip;
        c.severity = None;
        c.cause = None;
        c.observed = reason.into();
    }
}

/// `region`'s resolver got `rcode` and no address: the DNS observation says so and every
/// check but dns.resolve (the caller's to set) was not run, for `reason`.
fn stopped_at_dns(region: &str, rcode: &str, reason: &str) -> RegionResult {
    let mut r = clean(region);
    r.dns = Some(DnsObservation {
        rcode: rcode.into(),
        ..Default::default()
    });
    not_run(&mut r, |id| id != CheckId::DnsResolve, reason);
    r
}

/// `region`'s resolver got NXDOMAIN for the name (the zone's answer): dns.resolve failed
/// (high) and every later check was not run.
pub fn nxdomain(region: &str) -> RegionResult {
    let mut r = stopped_at_dns(region, "NXDOMAIN", "not run: the name did not resolve");
    set(
        &mut r,
        "dns.resolve",
        Outcome::Fail,
        Some(Severity::High),
        Some(Cause::Nxdomain),
        "NXDOMAIN",
    );
    r
}

/// `region`'s own resolver failed (no answer within its timeout): dns.resolve `unknown`
/// with the vantage-side cause, as the engine reports it, no DNS answer, and every later
/// check not run (`probe.resolver-failed`, never a fact about the target).
pub fn resolver_failed(region: &str) -> RegionResult {
    let mut r = stopped_at_dns(
        region,
        "TIMEOUT",
        "this vantage's resolver failed, so there is no address to connect to",
    );
    set(
        &mut r,
        "dns.resolve",
        Outcome::Unknown,
        None,
        Some(Cause::ResolverError),
        "the resolver did not answer within 2 s",
    );
    r
}

/// Merge `regions` (all requested) into a report for `http://127.0.0.1:9/mcp`.
pub fn report(regions: Vec<RegionResult>) -> Report {
    let requested: Vec<String> = regions.iter().map(|r| r.region.clone()).collect();
    report_requested(&requested, regions)
}

/// Merge with an explicit list of requested regions (some may be absent).
pub fn report_requested(requested: &[String], regions: Vec<RegionResult>) -> Report {
    assembled(requested, regions, &BTreeSet::new())
}

/// Merge with the regions requested and the vantages degraded named by the caller.
pub fn report_degraded(
    requested: &[&str],
    regions: Vec<RegionResult>,
    degraded: &[&str],
) -> Report {
    let requested: Vec<String> = requested.iter().map(|r| r.to_string()).collect();
    let degraded = degraded.iter().map(|r| r.to_string()).collect();
    assembled(&requested, regions, &degraded)
}

fn assembled(
    requested: &[String],
    regions: Vec<RegionResult>,
    degraded: &BTreeSet<String>,
) -> Report {
    let target = Target::parse("http://127.0.0.1:9/mcp").expect("target");
    crate::checks::assemble(
        &target,
        "2026-11-30T10:00:00Z".into(),
        40,
        requested,
        regions,
        degraded,
        &Default::default(),
    )
}

/// One region with one failed check of `severity`.
pub fn one_failure(id: &str, severity: Severity) -> Report {
    let mut r = clean("local");
    fail(&mut r, id, severity, &format!("{id} failed here"));
    report(vec![r])
}

/// The merge of `regions`, `requested` by name, with the `degraded` regions set aside.
pub fn merge_of(
    regions: Vec<RegionResult>,
    requested: &[&str],
    degraded: &[&str],
) -> crate::merge::Merged {
    let requested: Vec<String> = requested.iter().map(|s| s.to_string()).collect();
    let degraded: BTreeSet<String> = degraded.iter().map(|s| s.to_string()).collect();
    crate::merge::merge(&crate::merge::MergeInput {
        requested: &requested,
        results: &regions,
        degraded: &degraded,
        absent: &Default::default(),
    })
}

/// `r` was presented `chain` (its leaf first), valid from 70 days before `now` to 20 days
/// after, and judged it `verdict` with the clock `clock`.
pub fn presented(
    mut r: RegionResult,
    chain: &[&str],
    now: i64,
    verdict: TlsVerdict,
    clock: i64,
) -> RegionResult {
    const DAY: i64 = 86_400;
    r.tls = Some(TlsObservation {
        leaf_sha256: chain[0].into(),
        chain_sha256: chain.iter().map(|c| c.to_string()).collect(),
        leaf_not_before: now - 70 * DAY,
        leaf_not_after: now + 20 * DAY,
        clock,
        verdict,
        mixed: false,
        extra_roots: false,
    });
    r
}
