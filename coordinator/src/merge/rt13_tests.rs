//! Red team round 13 (DNS and network edges), the merge's side: a metadata host missing from
//! one region's view is no edge difference (#5), a resolver failure every region shares
//! points at the zone (N1), an address only one region was given is named (N4), and a family
//! answered NXDOMAIN in one region only is a split horizon (#2).

use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Cause, Outcome, RegionResult, Severity};

use super::Merged;
use crate::report::{Decision, Finding, Scope};
use crate::test_reports::{clean, fail, merge_of, set};

const EU_US_AP: &[&str] = &["eu", "us", "ap"];

fn find(m: &Merged, id: FindingId) -> Option<&Finding> {
    m.findings.iter().find(|f| f.id == id)
}

/// `f` names ap alone, regional, at `severity`.
#[track_caller]
fn assert_ap_alone(f: &Finding, severity: Severity) {
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (severity, Scope::Regional, vec!["ap".to_string()])
    );
}

/// A protected endpoint whose `auth.prm` fails in ap with `observed`.
fn prm_fails_in_ap(observed: &str) -> Merged {
    let regions: Vec<RegionResult> = ["eu", "us", "ap"]
        .into_iter()
        .map(|name| {
            let mut r = clean(name);
            r.protected = true;
            if name == "ap" {
                fail(&mut r, "auth.prm", Severity::High, observed);
            }
            r
        })
        .collect();
    merge_of(regions, EU_US_AP, &[])
}

/// #5: the metadata host is NXDOMAIN in ap's view only. The evidence explains the difference
/// by DNS (`checks.md` 3: no `edge.divergent` then); `auth.prm` stays, high, regional ap, and
/// blocks. The control: the same failure for another reason (a 404 there) is an edge
/// difference.
#[test]
fn a_metadata_host_missing_from_one_regions_view_is_no_edge_difference() {
    let m = prm_fails_in_ap(
        "no protected resource metadata: https://meta.lab13.test/.well-known/oauth-protected-resource: DNS: meta.lab13.test: NXDOMAIN: the name does not exist",
    );
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    let f = find(&m, FindingId::AuthPrm).expect("auth.prm");
    assert_ap_alone(f, Severity::High);
    assert!(
        find(&m, FindingId::EdgeDivergent).is_none(),
        "{:?}",
        m.findings
    );
    for observed in [
        "no protected resource metadata: https://meta.lab13.test/x: DNS: meta.lab13.test: NOERROR but no A or AAAA records",
        "no protected resource metadata: https://meta.lab13.test/x: DNS: meta.lab13.test: CNAME loop a -> b -> a: the chain never reaches an address",
    ] {
        let m = prm_fails_in_ap(observed);
        assert!(find(&m, FindingId::EdgeDivergent).is_none(), "{observed}");
        assert!(find(&m, FindingId::AuthPrm).is_some());
    }
    let m = prm_fails_in_ap(
        "no protected resource metadata: https://meta.lab13.test/.well-known/oauth-protected-resource: 404 text/html",
    );
    let f = find(&m, FindingId::EdgeDivergent).expect("an edge difference");
    assert_eq!(
        (f.severity, f.regions.clone()),
        (Severity::High, vec!["ap".to_string()])
    );
    // A cause that says so is enough, whatever the text.
    let mut ap = clean("ap");
    ap.protected = true;
    set(
        &mut ap,
        "auth.prm",
        Outcome::Fail,
        Some(Severity::High),
        Some(Cause::Nxdomain),
        "no protected resource metadata",
    );
    let mut eu = clean("eu");
    eu.protected = true;
    let m = merge_of(vec![eu, ap], &["eu", "ap"], &[]);
    assert!(find(&m, FindingId::EdgeDivergent).is_none());
}

/// `name`'s resolver answered `a` for the A query and `aaaa` for the AAAA query
/// ("NOERROR" with 198.51.100.10, or a failure: dns.resolve unknown, the rest skipped).
fn resolver_answered(name: &str, a: &str, aaaa: &str) -> RegionResult {
    let mut r = crate::test_reports::resolver_failed(name);
    let d = r.dns.as_mut().unwrap();
    d.rcode = if a != "NOERROR" { a } else { aaaa }.into();
    d.a_rcode = a.into();
    d.aaaa_rcode = aaaa.into();
    if a == "NOERROR" {
        d.a = vec!["198.51.100.10".into()];
    }
    r
}

/// N1: SERVFAIL from every region's (independent) resolver is still `probe.resolver-failed`
/// and `unknown` (nothing about the target was observed), but the title, the reason and the
/// fix point at the zone's authoritative servers, not at the vantages. A failure only some
/// regions share, a different one, a timeout everywhere, or one region alone keep the
/// vantage's title.
#[test]
fn servfail_from_every_regions_resolver_points_at_the_zone() {
    let all = |a: &str, aaaa: &str| {
        merge_of(
            EU_US_AP
                .iter()
                .map(|r| resolver_answered(r, a, aaaa))
                .collect(),
            EU_US_AP,
            &[],
        )
    };
    for (a, aaaa) in [("SERVFAIL", "SERVFAIL"), ("NOERROR", "SERVFAIL")] {
        let m = all(a, aaaa);
        assert_eq!(m.decision, Decision::Unknown, "{}", m.reason);
        let f = find(&m, FindingId::ProbeResolverFailed).expect("resolver-failed");
        assert_eq!((f.scope, f.regions.len()), (Scope::Global, 3));
        assert!(
            m.reason
                .starts_with("Every region's resolver failed the same way: likely the zone's authoritative servers"),
            "{}",
            m.reason
        );
        assert!(f.remediation.contains("DNSSEC"), "{}", f.remediation);
        assert!(
            f.evidence.iter().any(|e| e
                .starts_with("every region's resolver failed the same way (")
                && e.contains("SERVFAIL")),
            "{:?}",
            f.evidence
        );
        assert!(find(&m, FindingId::DnsResolve).is_none());
    }
    // A timeout everywhere, a failure only some regions share, a different one, or one region
    // alone: the vantage's title. Each region's resolver answered (A and AAAA alike), or None:
    // a clean region.
    for (case, answers) in [
        (
            "timeout everywhere",
            &[
                ("eu", Some("TIMEOUT")),
                ("us", Some("TIMEOUT")),
                ("ap", Some("TIMEOUT")),
            ][..],
        ),
        (
            "mixed",
            &[
                ("eu", Some("SERVFAIL")),
                ("us", Some("SERVFAIL")),
                ("ap", Some("TIMEOUT")),
            ],
        ),
        (
            "some",
            &[
                ("eu", None),
                ("us", Some("SERVFAIL")),
                ("ap", Some("SERVFAIL")),
            ],
        ),
        ("alone", &[("eu", Some("SERVFAIL"))]),
    ] {
        let regions = answers
            .iter()
            .map(|&(name, rcode)| match rcode {
                Some(rcode) => resolver_answered(name, rcode, rcode),
                None => clean(name),
            })
            .collect();
        let names: Vec<&str> = answers.iter().map(|(name, _)| *name).collect();
        let m = merge_of(regions, &names, &[]);
        let f = find(&m, FindingId::ProbeResolverFailed)
            .unwrap_or_else(|| panic!("{case}: resolver-failed: {:?}", m.findings));
        assert_eq!(m.decision, Decision::Unknown, "{case}: {}", m.reason);
        assert_eq!(f.title, "The vantage's own resolver failed", "{case}");
    }
}

/// `name` given `addr` (its DNS answer), its connect as `observed` says.
fn given(name: &str, addr: &str, observed: &str) -> RegionResult {
    let mut r = if observed.contains(" connected in ") {
        let mut r = clean(name);
        set(&mut r, "net.connect", Outcome::Pass, None, None, observed);
        r
    } else {
        crate::test_reports::unreachable(name, Some(Cause::Timeout), observed)
    };
    r.dns.as_mut().unwrap().a = vec![addr.to_string()];
    r
}

/// N4: GeoDNS sends ap to a dead edge (198.51.100.139) nobody else is given. It stays
/// `egress.blocked` (high, regional ap: `checks.md` 3 maps `net.connect` failing in some
/// regions only there, and `edge.divergent` is for transport and auth checks), but the
/// evidence says ap was given an address no other region was, and the fix looks at the
/// target's DNS for ap first. The same timeout on the address the others reach keeps the
/// plain egress wording.
#[test]
fn an_address_only_one_region_was_given_is_named_in_egress_blocked() {
    let eu = || {
        given(
            "eu",
            "198.51.100.131",
            "198.51.100.131:443 connected in 1 ms",
        )
    };
    let us = || {
        given(
            "us",
            "198.51.100.131",
            "198.51.100.131:443 connected in 2 ms",
        )
    };
    let ap = given(
        "ap",
        "198.51.100.139",
        "198.51.100.139:443 timeout after 2001 ms (connect: no answer)",
    );
    let m = merge_of(vec![eu(), us(), ap], EU_US_AP, &[]);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
    let f = find(&m, FindingId::EgressBlocked).expect("egress.blocked");
    assert_ap_alone(f, Severity::High);
    assert!(
        f.evidence.iter().any(|e| e
            == "ap was given 198.51.100.139, which no other region was given: a dead edge or POP that the target's DNS sends ap to, not necessarily ap's egress"),
        "{:?}",
        f.evidence
    );
    assert!(
        f.remediation
            .starts_with("ap connected to addresses no other region was given")
            && f.remediation.contains("GeoDNS"),
        "{}",
        f.remediation
    );
    assert!(find(&m, FindingId::EdgeDivergent).is_none());

    let ap = given(
        "ap",
        "198.51.100.131",
        "198.51.100.131:443 timeout after 2001 ms (connect: no answer)",
    );
    let m = merge_of(vec![eu(), us(), ap], EU_US_AP, &[]);
    let f = find(&m, FindingId::EgressBlocked).expect("egress.blocked");
    assert!(
        !f.evidence
            .iter()
            .any(|e| e.contains("no other region was given")),
        "{:?}",
        f.evidence
    );
    assert!(!f.remediation.contains("GeoDNS"), "{}", f.remediation);
}

/// `name` resolved 198.51.100.131 (A answered NOERROR) and got `aaaa` for its AAAA query
/// (NOERROR without records, or NXDOMAIN: RFC 4074 section 4.2), `resolve` being what its
/// agent made of it.
fn aaaa_answered(name: &str, aaaa: &str, resolve: Option<(Severity, Cause)>) -> RegionResult {
    let mut r = clean(name);
    let d = r.dns.as_mut().unwrap();
    d.a = vec!["198.51.100.131".into()];
    d.a_rcode = "NOERROR".into();
    d.aaaa_rcode = aaaa.into();
    d.rcode = aaaa.into();
    if let Some((severity, cause)) = resolve {
        set(
            &mut r,
            "dns.resolve",
            Outcome::Fail,
            Some(severity),
            Some(cause),
            "AAAA NXDOMAIN while A has records",
        );
    }
    r
}

/// [`aaaa_answered`] with an internal (CGNAT) A record in place of the public one, which its
/// agent fails `dns.global-addresses` for.
fn internal(name: &str, aaaa: &str, resolve: Option<(Severity, Cause)>) -> RegionResult {
    let mut r = aaaa_answered(name, aaaa, resolve);
    r.dns.as_mut().unwrap().a = vec!["100.64.0.10".into()];
    r.dns.as_mut().unwrap().all_global = false;
    fail(
        &mut r,
        "dns.global-addresses",
        Severity::High,
        "100.64.0.10 is shared address space",
    );
    r
}

/// #2: ap's AAAA query is answered NXDOMAIN while eu and us get NODATA for it (and the same
/// A record everywhere): the regions disagree on the class of answer, a split horizon naming
/// ap, at the severity of ap's own failure (`checks.md` 3; the comparison is never above
/// it). An agent that fails `dns.resolve` for it (NXDOMAIN) gives that severity; one that
/// passed it (older agents) gives an info finding that still names ap and the answer.
/// Every region getting it is no disagreement.
#[test]
fn a_family_answered_nxdomain_in_one_region_is_a_split_horizon() {
    let with = |ap: RegionResult| {
        merge_of(
            vec![
                aaaa_answered("eu", "NOERROR", None),
                aaaa_answered("us", "NOERROR", None),
                ap,
            ],
            EU_US_AP,
            &[],
        )
    };
    let m = with(aaaa_answered(
        "ap",
        "NXDOMAIN",
        Some((Severity::Medium, Cause::Nxdomain)),
    ));
    let f = find(&m, FindingId::DnsSplitHorizon).expect("split horizon");
    assert_ap_alone(f, Severity::Medium);
    assert!(
        f.evidence
            .iter()
            .any(|e| e
                .starts_with("ap: 198.51.100.131 (global); its AAAA query was answered NXDOMAIN")),
        "{:?}",
        f.evidence
    );
    assert_eq!(m.decision, Decision::Review, "{}", m.reason);

    let m = with(aaaa_answered("ap", "NXDOMAIN", None));
    let f = find(&m, FindingId::DnsSplitHorizon).expect("split horizon");
    assert_ap_alone(f, Severity::Info);

    let m = merge_of(
        EU_US_AP
            .iter()
            .map(|r| aaaa_answered(r, "NXDOMAIN", None))
            .collect(),
        EU_US_AP,
        &[],
    );
    assert!(find(&m, FindingId::DnsSplitHorizon).is_none());
}

/// The family comparison sits beside the class of the addresses, never instead of it: with a
/// server that answers NXDOMAIN for AAAA in every region (dnsmasq's `--address` in the region
/// suite), ap's non-global answer is still the split horizon it was (found by the region
/// suite: folding the family into the class had made every region "NXDOMAIN" alike).
#[test]
fn a_family_nxdomain_everywhere_keeps_a_non_global_answer_a_split_horizon() {
    let ap = internal("ap", "NXDOMAIN", None);
    let m = merge_of(
        vec![
            aaaa_answered("eu", "NXDOMAIN", None),
            aaaa_answered("us", "NXDOMAIN", None),
            ap,
        ],
        EU_US_AP,
        &[],
    );
    let f = find(&m, FindingId::DnsSplitHorizon).expect("split horizon");
    assert_ap_alone(f, Severity::High);
    assert_eq!(m.decision, Decision::Blocked, "{}", m.reason);
}

/// Fresh eyes round 14, item 4: no region got a global answer (a fleet allowed to reach an
/// internal target: the same non-global A record everywhere), and only ap's AAAA query was
/// answered NXDOMAIN, which its agent fails. The NXDOMAIN made ap's answer a class of its
/// own, so the "no global answer" branch named every region. Only ap departs.
#[test]
fn a_family_nxdomain_beside_non_global_answers_names_only_its_region() {
    let m = merge_of(
        vec![
            internal("eu", "NOERROR", None),
            internal("us", "NOERROR", None),
            internal("ap", "NXDOMAIN", Some((Severity::High, Cause::Nxdomain))),
        ],
        EU_US_AP,
        &[],
    );
    let f = find(&m, FindingId::DnsSplitHorizon).expect("split horizon");
    assert_ap_alone(f, Severity::High);
}
