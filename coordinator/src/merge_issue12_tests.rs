//! Issue 12, "never pass what was not seen": each numbered reproduction as a merge table
//! (the end-to-end reproductions with real processes are in `tests/e2e/evidence*.rs`), and
//! the shrunk counterexamples the property tests (`merge_props.rs`) found on the way.

use super::*;

fn unknown(r: &mut RegionResult, id: CheckId, cause: Cause, why: &str) {
    set(r, id, Outcome::Unknown, None, Some(cause));
    r.checks.iter_mut().find(|c| c.id == id).unwrap().observed = why.into();
}

fn skip_from(r: &mut RegionResult, from: CheckId) {
    for c in r.checks.iter_mut().filter(|c| c.id >= from) {
        c.outcome = Outcome::Skip;
        c.severity = None;
        c.cause = None;
    }
}

/// `name`'s own resolver failed with `rcode`: dns.resolve unknown, the rest skipped.
fn resolver_failed(name: &str, rcode: &str, why: &str) -> RegionResult {
    let mut r = clean(name);
    r.dns = Some(DnsObservation {
        rcode: rcode.into(),
        ..Default::default()
    });
    skip_from(&mut r, CheckId::DnsARecord);
    unknown(&mut r, CheckId::DnsResolve, Cause::ResolverError, why);
    r
}

/// `name`'s resolver answered NXDOMAIN: no address, dns.resolve failed, the rest skipped.
fn nxdomain(name: &str) -> RegionResult {
    let mut r = clean(name);
    let d = r.dns.as_mut().unwrap();
    d.rcode = "NXDOMAIN".into();
    d.a.clear();
    d.has_a = false;
    stop_at(
        &mut r,
        CheckId::DnsResolve,
        Severity::High,
        Some(Cause::Nxdomain),
    );
    r
}

/// The merge of `regions`, each requested under its own name, none degraded.
fn merged(regions: Vec<RegionResult>) -> Merged {
    let names: Vec<String> = regions.iter().map(|r| r.region.clone()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    run(regions, &names, &[])
}

/// The one finding above info is `id` at medium over `scope` in `region`, and the decision
/// is unknown.
#[track_caller]
fn assert_unknown_by(m: &Merged, id: FindingId, scope: Scope, region: &str) {
    assert_eq!(shape(m), vec![f(id, Severity::Medium, scope, &[region])]);
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
}

fn has(m: &Merged, id: FindingId) -> bool {
    m.findings.iter().any(|f| f.id == id)
}

#[track_caller]
fn assert_no_dns_finding(m: &Merged) {
    assert!(
        m.findings
            .iter()
            .all(|f| !f.id.as_str().starts_with("dns.")),
        "{:?}",
        shape(m)
    );
}

/// 1: the in-process vantage refused a loopback target by policy and skipped every check:
/// it was `pass`. It did not observe the target: `probe.policy-refused`, unknown.
#[test]
fn reproduction_1_a_refusal_by_policy_is_unknown_never_pass() {
    let mut local = clean("local");
    local.dns = None;
    skip_from(&mut local, CheckId::DnsResolve);
    unknown(
        &mut local,
        CheckId::NetConnect,
        Cause::PolicyRefused,
        "127.0.0.1 is non-global",
    );
    let m = merged(vec![local]);
    assert_unknown_by(&m, FindingId::ProbePolicyRefused, Scope::Global, "local");
    assert!(m.reason.contains("probe.policy-refused"), "{}", m.reason);
    let fix = &m.findings[0].remediation;
    assert!(
        fix.contains("probe.allow_non_global") && fix.contains("--assume-global"),
        "{fix}"
    );
    // In a fleet the flags are refused: the fix names the configuration keys there.
    assert!(
        fix.contains(
            "In a fleet (vantage serve, agents), the policy is the coordinator's configuration"
        ) && fix.contains("probe.assume_global (VANTAGE_PROBE__ASSUME_GLOBAL)")
            && fix.contains("`vantage check --coordinator` refuses the flags"),
        "{fix}"
    );
}

/// 2: a resolver that never answers, and a deadline that runs out: every check unrun. The
/// region was `partial` with every check skipped, and the decision `pass`.
#[test]
fn reproduction_2_a_deadline_leaves_unrun_checks_unknown_and_the_decision_unknown() {
    let mut eu = clean("eu");
    eu.status = RegionStatus::Partial;
    eu.dns = Some(DnsObservation {
        rcode: "TIMEOUT".into(),
        ..Default::default()
    });
    for c in eu.checks.iter_mut() {
        c.outcome = Outcome::Unknown;
        c.cause = Some(Cause::Deadline);
        c.observed = "not run: the overall deadline (8 s) ran out first".into();
    }
    let m = merged(vec![eu]);
    assert_unknown_by(&m, FindingId::ProbeIncomplete, Scope::Global, "eu");
    let ev = &m.findings[0].evidence;
    assert!(
        ev[0].contains("dns.resolve, dns.a-record") && ev[0].contains("deadline"),
        "{ev:?}"
    );
    // And a resolver that failed on its own: probe.resolver-failed, never dns.resolve.
    let us = resolver_failed("us", "TIMEOUT", "the resolver did not answer");
    let m = merged(vec![us]);
    assert_unknown_by(&m, FindingId::ProbeResolverFailed, Scope::Global, "us");
}

/// 3: `edge.divergent` from warnings: an info warning made the decision `review`, a low one
/// on an auth check a high divergence and `blocked`.
#[test]
fn reproduction_3_warnings_never_diverge_and_a_divergence_is_never_worse_than_its_failure() {
    for (id, sev) in [
        (CheckId::TransportSseBuffering, Severity::Info),
        (CheckId::AuthMetadataRedirect, Severity::Low),
        (CheckId::AuthInsufficientScope, Severity::Low),
    ] {
        let mut eu = clean("eu");
        set(&mut eu, id, Outcome::Warn, Some(sev), None);
        let m = merged(vec![eu, clean("us")]);
        assert!(!has(&m, FindingId::EdgeDivergent), "{id}: {:?}", shape(&m));
        assert_eq!(m.decision, Decision::Pass, "{id}: {}", m.reason);
        assert!(m.findings.iter().all(|f| f.severity <= sev), "{id}");
    }
    // A medium failure of an auth check diverges at medium, not high (auth.garbage-token
    // answered 403: refused, but not with the 401 it MUST get).
    let mut eu = clean("eu");
    fail(&mut eu, CheckId::AuthGarbageToken, Severity::Medium, None);
    let m = merged(vec![eu, clean("us")]);
    assert!(shape(&m).contains(&regional(
        FindingId::EdgeDivergent,
        Severity::Medium,
        &["eu"]
    )));
    assert_eq!(m.decision, Decision::Review);
}

/// 4: eu times out on connect while us gets NXDOMAIN: a global `net.connect` ("no vantage
/// can connect") came out. us has no evidence about connecting: regional findings.
#[test]
fn reproduction_4_a_region_without_evidence_makes_nothing_global() {
    let mut eu = clean("eu");
    stop_at(
        &mut eu,
        CheckId::NetConnect,
        Severity::High,
        Some(Cause::Timeout),
    );
    let m = merged(vec![eu, nxdomain("us")]);
    assert_eq!(
        shape(&m),
        vec![
            regional(FindingId::DnsSplitHorizon, Severity::High, &["us"]),
            regional(FindingId::NetConnect, Severity::High, &["eu"]),
        ]
    );
    assert_eq!(m.decision, Decision::Blocked);
}

/// 5: a failed A query (timeout, SERVFAIL) while AAAA answers was `dns.no-a-record` plus
/// `dns.split-horizon`; a local resolver error was split horizon against the target; with
/// no region holding a global answer, the plurality picked the odd region.
#[test]
fn reproduction_5_a_failed_query_is_not_an_absent_record() {
    let mut ap = clean("ap");
    aaaa_only_answer(&mut ap);
    unknown(
        &mut ap,
        CheckId::DnsARecord,
        Cause::ResolverError,
        "the A query failed (TIMEOUT)",
    );
    let m = merged(vec![clean("eu"), clean("us"), ap]);
    assert_unknown_by(&m, FindingId::ProbeResolverFailed, Scope::Regional, "ap");

    // rcode ERROR (the vantage's own resolver could not be used): no class, no split horizon.
    let ap = resolver_failed("ap", "ERROR", "could not be used");
    let m = merged(vec![clean("eu"), clean("us"), ap]);
    assert_no_dns_finding(&m);
    assert!(shape(&m).contains(&regional(
        FindingId::ProbeResolverFailed,
        Severity::Medium,
        &["ap"]
    )));

    // No region holds a global answer: eu non-global, us and ap NXDOMAIN. Which view is odd
    // cannot be told, so every region is named (the plurality named eu alone).
    let mut eu = clean("eu");
    resolved_internal(&mut eu);
    let m = merged(vec![eu, nxdomain("us"), nxdomain("ap")]);
    let split = m.found(FindingId::DnsSplitHorizon);
    assert_eq!(split.regions, ["ap", "eu", "us"]);
    assert!(
        split.evidence.iter().any(|e| e.contains("cannot be told")),
        "{:?}",
        split.evidence
    );
}

/// 7: a credential that was given and refused was "no credential was given".
#[test]
fn reproduction_7_a_refused_credential_is_named_as_refused() {
    let mut eu = clean("eu");
    eu.protected = true;
    eu.era = Era::Unknown;
    skip_from(&mut eu, CheckId::EraDetect);
    unknown(
        &mut eu,
        CheckId::EraDetect,
        Cause::CredentialRefused,
        "401 to the given token",
    );
    let m = merged(vec![eu]);
    assert_unknown_by(&m, FindingId::AuthCredentialRefused, Scope::Global, "eu");
    assert!(!has(&m, FindingId::AuthCredentialRequired));
}

/// 8: the Origin probe refused for another reason (a gateway stripped Mcp-Method) was a low
/// `security.origin`, and the server passed.
#[test]
fn reproduction_8_a_probe_answered_for_another_reason_is_no_pass() {
    let mut eu = clean("eu");
    unknown(
        &mut eu,
        CheckId::SecurityOrigin,
        Cause::OtherReason,
        "400 -32020: another rule",
    );
    let m = merged(vec![eu]);
    assert_unknown_by(&m, FindingId::ProbeIncomplete, Scope::Global, "eu");
    assert!(!has(&m, FindingId::SecurityOrigin));
}

/// Counterexample (proptest): a warning on dns.resolve in one region was merged into the
/// high split-horizon finding; a warning never yields more than its own severity.
#[test]
fn counterexample_a_dns_resolve_warning_is_not_split_horizon() {
    let mut us = clean("us");
    set(
        &mut us,
        CheckId::DnsResolve,
        Outcome::Warn,
        Some(Severity::Info),
        Some(Cause::NoAnswer),
    );
    let m = merged(vec![clean("eu"), us]);
    assert!(
        m.findings.iter().all(|f| f.severity <= Severity::Info),
        "{:?}",
        shape(&m)
    );
}

/// Counterexample (proptest): an info-level DNS failure "explained" a divergence away, so a
/// worse outcome turned `blocked` into `unknown`. Only a blocking failure explains one.
#[test]
fn counterexample_only_a_blocking_network_failure_explains_a_divergence() {
    let mut eu = clean("eu");
    fail(&mut eu, CheckId::AuthChallenge, Severity::High, None);
    let before = merged(vec![eu.clone(), clean("us")]);
    fail(&mut eu, CheckId::DnsGlobalAddresses, Severity::Info, None);
    let after = merged(vec![eu, clean("us")]);
    assert_eq!(
        (before.decision, after.decision),
        (Decision::Blocked, Decision::Blocked)
    );
    assert!(has(&after, FindingId::EdgeDivergent));
}

/// Counterexample (proptest): a dns.resolve failure whose cause is not the zone's answer
/// (an old agent's `refused`, `servfail`, `timeout`) named the region in a split horizon.
#[test]
fn counterexample_a_dns_failure_without_a_zone_answer_is_the_resolvers() {
    let mut us = clean("us");
    us.dns.as_mut().unwrap().rcode = "SERVFAIL".into();
    stop_at(
        &mut us,
        CheckId::DnsResolve,
        Severity::High,
        Some(Cause::ResolverFailure),
    );
    let m = merged(vec![clean("eu"), us]);
    assert_no_dns_finding(&m);
    assert!(has(&m, FindingId::ProbeResolverFailed));
    assert_eq!(m.decision, Decision::Unknown);
}

/// Counterexample (proptest, found after the egress merge): a failure reported above its
/// finding's own ceiling (`auth.wrong-audience` answered with a non-401 is at most medium;
/// only a token accepted is critical, under another finding) raised a **high**
/// `edge.divergent` beside a medium finding, so a later warning elsewhere "improved" the
/// decision from blocked to unknown. The divergence now counts each failure at the severity
/// its own finding carries.
#[test]
fn counterexample_a_divergence_is_capped_by_the_failures_own_finding() {
    let mut eu = clean("eu");
    fail(&mut eu, CheckId::AuthWrongAudience, Severity::High, None);
    let m = merged(vec![eu, clean("us")]);
    let shape = shape(&m);
    assert!(
        shape.contains(&regional(
            FindingId::AuthWrongAudience,
            Severity::Medium,
            &["eu"]
        )),
        "{shape:?}"
    );
    assert!(
        shape.contains(&regional(
            FindingId::EdgeDivergent,
            Severity::Medium,
            &["eu"]
        )),
        "{shape:?}"
    );
    assert_eq!(m.decision, Decision::Review);
}

/// Red team round 12, item 1: a region whose own resolver failed has no evidence for any
/// later check; it made the target's own faults (a foreign Origin served, plain http in every
/// region that reached it) "regional" in the other regions, so the report and the metric's
/// `scope` label said the fault lived at an edge near those regions. Regions without evidence
/// for the vantage's own reasons neither make a finding global nor regional (4.1); a region
/// stopped by the target (NXDOMAIN, reproduction 4) still keeps it regional.
#[test]
fn counterexample_a_vantages_resolver_failure_leaves_the_targets_fault_global() {
    let failing = |name: &str| {
        let mut r = clean(name);
        set(
            &mut r,
            CheckId::SecurityOrigin,
            Outcome::Fail,
            Some(Severity::Medium),
            None,
        );
        r
    };
    let dead = resolver_failed("c", "TIMEOUT", "the resolver did not answer within 2 s");
    let m = merged(vec![failing("a"), failing("b"), dead.clone(), failing("d")]);
    let origin = m
        .findings
        .iter()
        .find(|f| f.id == FindingId::SecurityOriginNotValidated)
        .expect("the target's own Origin fault is a finding");
    assert_eq!(origin.scope, Scope::Global, "{origin:?}");
    assert_eq!(origin.regions, vec!["a", "b", "d"]);
    assert!(has(&m, FindingId::ProbeResolverFailed), "{:?}", shape(&m));
    assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);

    // The same failure where c's name does not exist (the zone's answer there): a different
    // fault of the target in c, so the Origin finding is regional to the regions it was seen in.
    let m = merged(vec![
        failing("a"),
        failing("b"),
        nxdomain("c"),
        failing("d"),
    ]);
    let origin = m
        .findings
        .iter()
        .find(|f| f.id == FindingId::SecurityOriginNotValidated)
        .unwrap();
    assert_eq!(origin.scope, Scope::Regional, "{origin:?}");
}
