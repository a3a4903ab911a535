//! The cross-region comparison, table-driven.

use vantage_agent::model::RegionStatus;
use vantage_agent::surface::{item_digest, list_digests, ListingBounds, SurfaceItem};

use super::*;

fn list(kind: ListKind, items: &[(&str, &str)], complete: bool) -> ListSurface {
    let items: Vec<SurfaceItem> = items
        .iter()
        .map(|(n, body)| SurfaceItem {
            name: n.to_string(),
            digest: item_digest(&serde_json::json!({"name": n, "v": body})),
        })
        .collect();
    let digests: Vec<String> = items.iter().map(|i| i.digest.clone()).collect();
    let (digest, set_digest) = list_digests(&digests);
    ListSurface {
        kind,
        digest,
        set_digest,
        count: items.len() as u32,
        pages: 1,
        bytes: 100,
        complete,
        stopped: (!complete).then(|| "stopped at the page cap (100 pages)".into()),
        items,
        items_truncated: false,
    }
}

fn region(name: &str, era: Era, lists: Vec<ListSurface>) -> RegionResult {
    let mut r = RegionResult::absent(name, RegionStatus::Complete);
    r.surface = Some(Surface {
        era,
        bounds: ListingBounds::default(),
        lists,
    });
    r
}

fn tools(items: &[(&str, &str)]) -> ListSurface {
    list(ListKind::Tools, items, true)
}

const NEW: &[(&str, &str)] = &[("add", "1"), ("sub", "1"), ("mul", "1")];

#[test]
fn the_same_surface_everywhere_is_no_finding() {
    let (eu, us) = (
        region("eu", Era::Dual, vec![tools(NEW)]),
        region("us", Era::Dual, vec![tools(NEW)]),
    );
    assert!(compare(&[&eu, &us]).is_empty());
}

#[test]
fn a_stale_edge_in_one_region_is_edge_divergent_with_the_names() {
    let eu = region("eu", Era::Dual, vec![tools(NEW)]);
    let us = region("us", Era::Dual, vec![tools(NEW)]);
    let ap = region(
        "ap",
        Era::Dual,
        vec![tools(&[("add", "0"), ("sub", "1"), ("legacy_div", "1")])],
    );
    let found = compare(&[&eu, &us, &ap]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(
        (f.id, f.severity),
        (FindingId::EdgeDivergent, Severity::Medium)
    );
    assert_eq!(f.regions, vec!["ap"]);
    assert_eq!(
        f.evidence,
        vec!["ap: tools/list differs from eu, us: added legacy_div; removed mul; changed add"]
    );
}

#[test]
fn order_alone_is_its_own_low_finding() {
    let eu = region("eu", Era::Modern, vec![tools(NEW)]);
    let us = region(
        "us",
        Era::Modern,
        vec![tools(&[("mul", "1"), ("add", "1"), ("sub", "1")])],
    );
    let ap = region("ap", Era::Modern, vec![tools(NEW)]);
    let found = compare(&[&eu, &us, &ap]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].id, found[0].severity),
        (FindingId::SurfaceOrderDiffers, Severity::Low)
    );
    assert_eq!(found[0].regions, vec!["us"]);
    assert!(
        found[0].evidence[0].contains("same 3 items as ap, eu"),
        "{:?}",
        found[0].evidence
    );
}

#[test]
fn a_capability_missing_in_one_region_is_a_difference() {
    let prompts = list(ListKind::Prompts, &[("greet", "1")], true);
    let eu = region("eu", Era::Dual, vec![tools(NEW), prompts.clone()]);
    let us = region("us", Era::Dual, vec![tools(NEW), prompts]);
    let ap = region("ap", Era::Dual, vec![tools(NEW)]);
    let found = compare(&[&eu, &us, &ap]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].regions, vec!["ap"]);
    assert!(
        found[0].evidence[0].contains("prompts is not advertised in ap"),
        "{:?}",
        found[0].evidence
    );
}

#[test]
fn what_was_not_read_whole_or_in_the_same_era_is_not_compared() {
    let eu = region("eu", Era::Dual, vec![tools(NEW)]);
    let cut = region(
        "ap",
        Era::Dual,
        vec![list(ListKind::Tools, &[("add", "1")], false)],
    );
    assert!(compare(&[&eu, &cut]).is_empty());
    let legacy = region("us", Era::Legacy, vec![tools(&[("other", "1")])]);
    let eu2 = region("eu2", Era::Dual, vec![tools(NEW)]);
    assert!(compare(&[&eu, &eu2, &legacy]).is_empty());
    // One region alone has nothing to be compared with.
    assert!(compare(&[&eu]).is_empty());
    // A region without a surface (the listing did not run) is left out.
    let none = RegionResult::absent("x", RegionStatus::Complete);
    assert!(compare(&[&eu, &none]).is_empty());
}

/// Two regions that disagree: no reading is shared by more regions, so neither is "the
/// divergent one" (it used to be the region whose name sorts later). Both are named, the
/// evidence says which view is the odd one cannot be told, and the answer does not depend on
/// the order the regions arrive in.
#[test]
fn two_regions_that_disagree_are_both_named_with_no_majority() {
    let eu = region("eu", Era::Modern, vec![tools(NEW)]);
    let us = region(
        "us",
        Era::Modern,
        vec![tools(&[("add", "0"), ("sub", "1"), ("legacy_div", "1")])],
    );
    let found = compare(&[&us, &eu]);
    assert_eq!(found, compare(&[&eu, &us]));
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(
        (f.id, f.severity, f.regions.clone()),
        (
            FindingId::EdgeDivergent,
            Severity::Medium,
            vec!["eu".to_string(), "us".to_string()]
        )
    );
    assert_eq!(
        f.evidence,
        vec![
            "tools/list: eu, us read it 2 ways, none shared by more regions than another, so \
             which region diverges cannot be told; compared with what eu read",
            "us: tools/list differs from eu: added legacy_div; removed mul; changed add",
        ]
    );
}

/// The same with only the order differing: `surface.order-differs` names both regions.
#[test]
fn two_regions_listing_in_different_orders_are_both_named() {
    let eu = region("eu", Era::Modern, vec![tools(NEW)]);
    let us = region(
        "us",
        Era::Modern,
        vec![tools(&[("mul", "1"), ("add", "1"), ("sub", "1")])],
    );
    let found = compare(&[&eu, &us]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].id, found[0].severity, found[0].regions.clone()),
        (
            FindingId::SurfaceOrderDiffers,
            Severity::Low,
            vec!["eu".to_string(), "us".to_string()]
        )
    );
    assert!(
        found[0].evidence[0].contains("which region diverges cannot be told"),
        "{:?}",
        found[0].evidence
    );
}

/// Regions -> the regions `edge.divergent` names: a plurality names the others; a tie at
/// the top (2 against 2, three different readings) names every region.
#[test]
fn only_a_reading_more_regions_share_makes_the_others_divergent() {
    const OLD: &[(&str, &str)] = &[("add", "1"), ("sub", "1")];
    const ODD: &[(&str, &str)] = &[("add", "2")];
    type Readings = &'static [(&'static str, &'static [(&'static str, &'static str)])];
    let cases: &[(Readings, &[&str])] = &[
        (&[("eu", NEW), ("us", NEW), ("ap", OLD)], &["ap"]),
        (
            &[("eu", NEW), ("us", NEW), ("ap", OLD), ("sa", ODD)],
            &["ap", "sa"],
        ),
        (
            &[("eu", NEW), ("us", NEW), ("ap", OLD), ("sa", OLD)],
            &["ap", "eu", "sa", "us"],
        ),
        (
            &[("eu", NEW), ("us", OLD), ("ap", ODD)],
            &["ap", "eu", "us"],
        ),
    ];
    for (regions, named) in cases {
        let rs: Vec<RegionResult> = regions
            .iter()
            .map(|(name, items)| region(name, Era::Modern, vec![tools(items)]))
            .collect();
        let refs: Vec<&RegionResult> = rs.iter().collect();
        let found = compare(&refs);
        assert_eq!(found.len(), 1, "{regions:?}: {found:#?}");
        assert_eq!(found[0].id, FindingId::EdgeDivergent);
        assert_eq!(found[0].regions, *named, "{regions:?}");
        let tied = named.len() == regions.len();
        assert_eq!(
            found[0].evidence[0].contains("cannot be told"),
            tied,
            "{:?}",
            found[0].evidence
        );
    }
}
