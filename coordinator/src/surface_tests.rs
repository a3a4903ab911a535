//! The cross-region comparison, table-driven.

use vantage_agent::model::RegionStatus;
use vantage_agent::surface::{item_digest, list_digests, ListingBounds, SurfaceItem};

use super::*;

pub(super) fn list(kind: ListKind, items: &[(&str, &str)], complete: bool) -> ListSurface {
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

pub(super) fn tools(items: &[(&str, &str)]) -> ListSurface {
    list(ListKind::Tools, items, true)
}

pub(super) const NEW: &[(&str, &str)] = &[("add", "1"), ("sub", "1"), ("mul", "1")];
/// NEW as a stale edge serves it: `add` changed, `mul` gone, `legacy_div` still there.
pub(super) const STALE: &[(&str, &str)] = &[("add", "0"), ("sub", "1"), ("legacy_div", "1")];
/// NEW's items in another order.
pub(super) const REORDERED: &[(&str, &str)] = &[("mul", "1"), ("add", "1"), ("sub", "1")];

/// `name` in `era`, whose tools list read `items` whole (and nothing else advertised).
fn with_tools(name: &str, era: Era, items: &[(&str, &str)]) -> RegionResult {
    region(name, era, vec![tools(items)])
}

/// The comparison of regions that each read their tools list whole, in `era`, in this order.
fn compare_tools(era: Era, readings: &[(&str, &[(&str, &str)])]) -> Vec<SurfaceFinding> {
    let regions: Vec<RegionResult> = readings
        .iter()
        .map(|(name, items)| with_tools(name, era, items))
        .collect();
    compare(&regions.iter().collect::<Vec<_>>())
}

/// The one finding of `found`, checked for its id, severity and the regions it names.
fn only<'a>(
    found: &'a [SurfaceFinding],
    id: FindingId,
    severity: Severity,
    regions: &[&str],
) -> &'a SurfaceFinding {
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!((f.id, f.severity), (id, severity), "{f:?}");
    assert_eq!(f.regions, regions, "{f:?}");
    f
}

/// That the first line of `f`'s evidence says `needle`.
fn says(f: &SurfaceFinding, needle: &str) {
    assert!(f.evidence[0].contains(needle), "{:?}", f.evidence);
}

#[test]
fn the_same_surface_everywhere_is_no_finding() {
    assert!(compare_tools(Era::Dual, &[("eu", NEW), ("us", NEW)]).is_empty());
}

#[test]
fn a_stale_edge_in_one_region_is_edge_divergent_with_the_names() {
    let found = compare_tools(Era::Dual, &[("eu", NEW), ("us", NEW), ("ap", STALE)]);
    let f = only(&found, FindingId::EdgeDivergent, Severity::Medium, &["ap"]);
    assert_eq!(
        f.evidence,
        vec!["ap: tools/list differs from eu, us: added legacy_div; removed mul; changed add"]
    );
}

#[test]
fn order_alone_is_its_own_low_finding() {
    let found = compare_tools(Era::Modern, &[("eu", NEW), ("us", REORDERED), ("ap", NEW)]);
    let f = only(
        &found,
        FindingId::SurfaceOrderDiffers,
        Severity::Low,
        &["us"],
    );
    says(f, "same 3 items as ap, eu");
}

#[test]
fn a_capability_missing_in_one_region_is_a_difference() {
    let prompts = list(ListKind::Prompts, &[("greet", "1")], true);
    let eu = region("eu", Era::Dual, vec![tools(NEW), prompts.clone()]);
    let us = region("us", Era::Dual, vec![tools(NEW), prompts]);
    let ap = with_tools("ap", Era::Dual, NEW);
    let found = compare(&[&eu, &us, &ap]);
    let f = only(&found, FindingId::EdgeDivergent, Severity::Medium, &["ap"]);
    says(f, "prompts is not advertised in ap");
}

#[test]
fn what_was_not_read_whole_or_in_the_same_era_is_not_compared() {
    let eu = with_tools("eu", Era::Dual, NEW);
    let cut = region(
        "ap",
        Era::Dual,
        vec![list(ListKind::Tools, &[("add", "1")], false)],
    );
    assert!(compare(&[&eu, &cut]).is_empty());
    let legacy = with_tools("us", Era::Legacy, &[("other", "1")]);
    let eu2 = with_tools("eu2", Era::Dual, NEW);
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
    let found = compare_tools(Era::Modern, &[("us", STALE), ("eu", NEW)]);
    assert_eq!(
        found,
        compare_tools(Era::Modern, &[("eu", NEW), ("us", STALE)])
    );
    let f = only(
        &found,
        FindingId::EdgeDivergent,
        Severity::Medium,
        &["eu", "us"],
    );
    // Naming every region compared, it is global: no edge of one region is the fault.
    assert_eq!(f.scope, Scope::Global);
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
    let found = compare_tools(Era::Modern, &[("eu", NEW), ("us", REORDERED)]);
    let f = only(
        &found,
        FindingId::SurfaceOrderDiffers,
        Severity::Low,
        &["eu", "us"],
    );
    says(f, "which region diverges cannot be told");
    assert_eq!(f.scope, Scope::Global);
}

/// Regions -> the regions `edge.divergent` names: a plurality names the others (regional);
/// a tie at the top (2 against 2, three different readings) names every region (global).
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
        let found = compare_tools(Era::Modern, regions);
        let f = only(&found, FindingId::EdgeDivergent, Severity::Medium, named);
        let tied = named.len() == regions.len();
        let scope = if tied { Scope::Global } else { Scope::Regional };
        assert_eq!(f.scope, scope, "{f:?}");
        assert_eq!(
            f.evidence[0].contains("cannot be told"),
            tied,
            "{:?}",
            f.evidence
        );
    }
}
