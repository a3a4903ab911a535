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
