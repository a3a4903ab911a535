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
    assert_eq!(
        (f.severity, f.scope, f.regions.clone()),
        (Severity::High, Scope::Regional, vec!["ap".to_string()])
    );
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
