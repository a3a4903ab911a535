//! The comparison when a region's own reads show a list varying within it (red team round
//! 12, item 7): the difference between regions is the connection's, not an edge's, so no
//! `edge.divergent` or `surface.order-differs` comes of it; a difference each region reads
//! stably still does. And a finding naming every region compared is never `regional`.

use std::collections::{BTreeMap, BTreeSet};

use vantage_agent::model::Outcome;
use vantage_agent::surface::ListingBounds;

use super::tests::{list, tools, NEW, REORDERED, STALE};
use super::*;
use crate::merge::{merge, MergeInput};
use crate::test_reports::{clean, set};

/// What a region's own two reads of tools/list (two connections) showed.
#[derive(Clone, Copy, Debug)]
enum Own {
    /// The same list twice.
    Stable,
    /// Other tools on the second connection (`tools.no-per-connection-variance` failed).
    Items,
    /// The same tools in another order (`tools.deterministic-order` warned).
    Order,
}

/// The `per-connection-variance` fixture: a tool named for the connection, first.
const CONN_1: &[(&str, &str)] = &[("session_41001", "1"), ("add", "1"), ("sub", "1")];
const CONN_3: &[(&str, &str)] = &[("session_41003", "1"), ("add", "1"), ("sub", "1")];
const CONN_5: &[(&str, &str)] = &[("session_41005", "1"), ("add", "1"), ("sub", "1")];
/// The `unstable-order` fixture: NEW rotated once more per list served.
const ROTATED: &[(&str, &str)] = &[("sub", "1"), ("mul", "1"), ("add", "1")];

type Reading = (&'static str, &'static [(&'static str, &'static str)], Own);

/// A clean region (every check passed) whose tools list read `items` whole, and whose own
/// reads showed `own`.
fn read(name: &str, items: &[(&str, &str)], own: Own) -> RegionResult {
    let mut r = clean(name);
    r.surface = Some(Surface {
        era: r.era,
        bounds: ListingBounds::default(),
        lists: vec![tools(items)],
    });
    match own {
        Own::Stable => {}
        Own::Items => set(
            &mut r,
            "tools.no-per-connection-variance",
            Outcome::Fail,
            Some(Severity::Medium),
            None,
            "the tools differ over a second connection: added session_41002; removed session_41001",
        ),
        Own::Order => set(
            &mut r,
            "tools.deterministic-order",
            Outcome::Warn,
            Some(Severity::Low),
            None,
            "tools/list changed its order between two listings: position 1 was add then sub",
        ),
    }
    r
}

fn regions(readings: &[Reading]) -> Vec<RegionResult> {
    readings.iter().map(|(n, i, o)| read(n, i, *o)).collect()
}

/// The comparison's findings as (id, scope, regions).
fn compared(readings: &[Reading]) -> Vec<(FindingId, Scope, Vec<String>)> {
    let rs = regions(readings);
    compare(&rs.iter().collect::<Vec<_>>())
        .into_iter()
        .map(|f| (f.id, f.scope, f.regions))
        .collect()
}

/// Row of an expected finding: id, severity, scope, regions.
type Row = (&'static str, Severity, Scope, &'static [&'static str]);

/// The merged report's findings about the lists (the comparison's and the variance checks').
fn merged(readings: &[Reading]) -> Vec<(String, Severity, Scope, Vec<String>)> {
    let rs = regions(readings);
    let requested: Vec<String> = rs.iter().map(|r| r.region.clone()).collect();
    let m = merge(&MergeInput {
        requested: &requested,
        results: &rs,
        degraded: &BTreeSet::new(),
        absent: &BTreeMap::new(),
    });
    m.findings
        .into_iter()
        .filter(|f| {
            [
                FindingId::EdgeDivergent,
                FindingId::SurfaceOrderDiffers,
                FindingId::ToolsNoPerConnectionVariance,
                FindingId::ToolsDeterministicOrder,
            ]
            .contains(&f.id)
        })
        .map(|f| (f.id.as_str().to_string(), f.severity, f.scope, f.regions))
        .collect()
}

fn rows(want: &[Row]) -> Vec<(String, Severity, Scope, Vec<String>)> {
    want.iter()
        .map(|(id, sev, scope, rs)| {
            let rs = rs.iter().map(|r| r.to_string()).collect();
            (id.to_string(), *sev, *scope, rs)
        })
        .collect()
}

use Own::{Items, Order, Stable};
use Scope::{Global, Regional};
use Severity::{Low, Medium};

/// Regions (reading, own reads) -> the merged findings about the lists. Each fixture shape
/// of the red team's repro, the unlucky draws of it, and the stable differences that stay.
#[test]
fn variance_within_regions_is_no_regional_difference_a_stable_one_is() {
    let cases: &[(&str, &[Reading], &[Row])] = &[
        (
            // Was also edge.divergent medium regional [a, b, d] "read it 3 ways".
            "per-connection-variance fixture",
            &[
                ("a", CONN_1, Items),
                ("b", CONN_3, Items),
                ("d", CONN_5, Items),
            ],
            &[(
                "tools.no-per-connection-variance",
                Medium,
                Global,
                &["a", "b", "d"],
            )],
        ),
        (
            // Was also surface.order-differs low regional [b].
            "unstable-order fixture",
            &[("a", NEW, Order), ("b", ROTATED, Order), ("d", NEW, Order)],
            &[("tools.deterministic-order", Low, Global, &["a", "b", "d"])],
        ),
        (
            // a and b drew the same order twice; d was the unlucky draw (was order-differs [d]).
            "unstable-order, one region saw it",
            &[
                ("a", NEW, Stable),
                ("b", NEW, Stable),
                ("d", REORDERED, Order),
            ],
            &[("tools.deterministic-order", Low, Regional, &["d"])],
        ),
        (
            // The order varies, but d's edge serves other tools: that is d's, by the items
            // (was edge.divergent [a, d] and order-differs [b]: three orders, no majority).
            "unstable order and a stale edge in d",
            &[
                ("a", NEW, Order),
                ("b", REORDERED, Order),
                ("d", STALE, Stable),
            ],
            &[
                ("edge.divergent", Medium, Regional, &["d"]),
                ("tools.deterministic-order", Low, Regional, &["a", "b"]),
            ],
        ),
        (
            "a stale edge in d, every region stable",
            &[("a", NEW, Stable), ("b", NEW, Stable), ("d", STALE, Stable)],
            &[("edge.divergent", Medium, Regional, &["d"])],
        ),
        (
            // Two stable regions that disagree: which one diverges cannot be told, and a
            // finding naming both is not "regional" (was regional [a, b]).
            "two stable regions that disagree",
            &[("a", NEW, Stable), ("b", STALE, Stable)],
            &[("edge.divergent", Medium, Global, &["a", "b"])],
        ),
        (
            "three stable readings",
            &[
                ("a", NEW, Stable),
                ("b", STALE, Stable),
                ("d", CONN_1, Stable),
            ],
            &[("edge.divergent", Medium, Global, &["a", "b", "d"])],
        ),
        (
            "two stable orders",
            &[("a", NEW, Stable), ("b", REORDERED, Stable)],
            &[("surface.order-differs", Low, Global, &["a", "b"])],
        ),
    ];
    for (name, readings, want) in cases {
        assert_eq!(merged(readings), rows(want), "{name}");
    }
}

/// One region whose own reads varied is enough: the others' readings of the same server
/// differ for the same reason, and the variance finding (regional there) names it.
#[test]
fn variance_in_one_compared_region_leaves_the_list_uncompared() {
    assert!(compared(&[("a", NEW, Stable), ("b", NEW, Stable), ("d", CONN_5, Items)]).is_empty());
    assert!(compared(&[
        ("a", NEW, Stable),
        ("b", STALE, Stable),
        ("d", CONN_5, Items)
    ])
    .is_empty());
    assert!(compared(&[("a", NEW, Order), ("b", REORDERED, Stable)]).is_empty());
}

/// Only tools/list is read twice: its variance says nothing of the other lists, which are
/// still compared (and tools/list's variance does not make that finding global).
#[test]
fn the_variance_of_tools_leaves_the_other_lists_compared() {
    let prompts = |body| list(ListKind::Prompts, &[("greet", body)], true);
    let mut rs = regions(&[
        ("a", CONN_1, Items),
        ("b", CONN_3, Items),
        ("d", CONN_5, Items),
    ]);
    for (r, body) in rs.iter_mut().zip(["1", "1", "2"]) {
        r.surface.as_mut().unwrap().lists.push(prompts(body));
    }
    let found = compare(&rs.iter().collect::<Vec<_>>());
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(
        (f.id, f.severity, f.scope, f.regions.clone()),
        (
            FindingId::EdgeDivergent,
            Medium,
            Regional,
            vec!["d".to_string()]
        )
    );
    assert_eq!(
        f.evidence,
        vec!["d: prompts/list differs from a, b: changed greet"]
    );
}

/// A finding is global exactly when it names every region compared: a plurality against one
/// region stays regional, and a region that was not compared (its list read in part) does
/// not keep a finding naming all the others regional.
#[test]
fn a_finding_is_global_only_when_it_names_every_region_compared() {
    assert_eq!(
        compared(&[("a", NEW, Stable), ("b", NEW, Stable), ("d", STALE, Stable)]),
        vec![(FindingId::EdgeDivergent, Regional, vec!["d".to_string()])]
    );
    let mut rs = regions(&[("a", NEW, Stable), ("b", STALE, Stable)]);
    let mut cut = clean("d");
    cut.surface = Some(Surface {
        era: cut.era,
        bounds: ListingBounds::default(),
        lists: vec![list(ListKind::Tools, &[("add", "1")], false)],
    });
    rs.push(cut);
    let found = compare(&rs.iter().collect::<Vec<_>>());
    let shape: Vec<_> = found
        .iter()
        .map(|f| (f.id, f.scope, f.regions.clone()))
        .collect();
    assert_eq!(
        shape,
        vec![(
            FindingId::EdgeDivergent,
            Global,
            vec!["a".to_string(), "b".to_string()]
        )]
    );
}
