//! The surface across regions: each list (tools, resources, templates, prompts) as every
//! region read it, compared by digest. A region whose list differs from the others' (a
//! stale edge, an old replica, another backend) is `edge.divergent` with the names added,
//! removed and changed there; the same items in another order is `surface.order-differs`
//! (low). Only whole lists read in the same era are compared: a list a region could not
//! finish decides nothing. When no reading is shared by more regions than another (two
//! regions that disagree), which region diverges cannot be told: every region is named, and
//! the evidence says so.
//!
//! A difference between regions is only evidence of an edge when each region's reading is
//! stable. When a compared region's own reads show the list changing from one connection to
//! the next (`tools.no-per-connection-variance` failed there), the regions' readings of it
//! differ for that reason, and the list is not compared; when they show its order changing
//! (`tools.deterministic-order` warned there), only its items are compared, never its order.
//! The variance finding names the fault. A finding that names every region compared is
//! `global`: a `regional` finding naming every region would say the fault is at an edge and
//! everywhere at once. Pure, like the merge that calls it.

use std::collections::{BTreeMap, BTreeSet};

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Era, Outcome, RegionResult, Severity};
use vantage_agent::surface::{diff, ListKind, ListSurface, Surface};

use crate::report::Scope;

/// A finding the comparison derives: regional, or global when it names every region compared.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceFinding {
    pub id: FindingId,
    pub severity: Severity,
    pub scope: Scope,
    pub regions: Vec<String>,
    pub evidence: Vec<String>,
}

/// What one region read of one list: the list, or nothing because the capability is not
/// advertised there.
#[derive(Clone, Copy)]
enum Seen<'a> {
    List(&'a ListSurface),
    NotAdvertised,
}

impl Seen<'_> {
    fn digests(&self) -> (&str, &str) {
        match self {
            Seen::List(l) => (l.digest.as_str(), l.set_digest.as_str()),
            Seen::NotAdvertised => ("-", "-"),
        }
    }

    /// What the comparison tells readings apart by: the items in order, or the items alone
    /// when the order is known not to hold still.
    fn key(&self, by_items: bool) -> &str {
        if by_items {
            self.digests().1
        } else {
            self.digests().0
        }
    }

    fn pairs(&self) -> Vec<(String, String)> {
        match self {
            Seen::List(l) => l
                .items
                .iter()
                .map(|i| (i.name.clone(), i.digest.clone()))
                .collect(),
            Seen::NotAdvertised => Vec::new(),
        }
    }

    fn truncated(&self) -> bool {
        matches!(self, Seen::List(l) if l.items_truncated)
    }
}

/// The era most surfaces were read in (the others are not compared with them).
fn common_era(surfaces: &[(&RegionResult, &Surface)]) -> Option<Era> {
    let mut counts: Vec<(Era, usize)> = Vec::new();
    for (_, s) in surfaces {
        match counts.iter_mut().find(|(e, _)| *e == s.era) {
            Some((_, n)) => *n += 1,
            None => counts.push((s.era, 1)),
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(e, _)| e)
}

/// How a list varied within one region, by that region's own reads of it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Varies {
    /// Its items (names or definitions) changed from one connection to the next.
    Items,
    /// The same items came in another order on another read.
    Order,
}

/// How `kind` varied within `region`, by the region's own checks (only tools/list is read
/// twice): the worse of the two, if any.
fn varies(region: &RegionResult, kind: ListKind) -> Option<Varies> {
    if kind != ListKind::Tools {
        return None;
    }
    let shows = |id: CheckId| {
        region
            .checks
            .iter()
            .any(|c| c.id == id && matches!(c.outcome, Outcome::Fail | Outcome::Warn))
    };
    if shows(CheckId::ToolsNoPerConnectionVariance) {
        Some(Varies::Items)
    } else if shows(CheckId::ToolsDeterministicOrder) {
        Some(Varies::Order)
    } else {
        None
    }
}

/// Compare the lists of the regions that reported (degraded ones left out by the caller).
pub fn compare(regions: &[&RegionResult]) -> Vec<SurfaceFinding> {
    let surfaces: Vec<(&RegionResult, &Surface)> = regions
        .iter()
        .filter_map(|r| r.surface.as_ref().map(|s| (*r, s)))
        .collect();
    let Some(era) = common_era(&surfaces) else {
        return Vec::new();
    };
    let surfaces: Vec<(&RegionResult, &Surface)> =
        surfaces.into_iter().filter(|(_, s)| s.era == era).collect();
    let finding = |id, severity| SurfaceFinding {
        id,
        severity,
        scope: Scope::Regional,
        regions: Vec::new(),
        evidence: Vec::new(),
    };
    let mut divergent = finding(FindingId::EdgeDivergent, Severity::Medium);
    let mut reordered = finding(FindingId::SurfaceOrderDiffers, Severity::Low);
    // The regions whose readings were compared, of any list.
    let mut compared: BTreeSet<&str> = BTreeSet::new();
    for kind in ListKind::ALL {
        let seen: Vec<(&str, Seen)> = surfaces
            .iter()
            .filter_map(|(r, s)| match s.list(kind) {
                Some(l) if l.complete => Some((r.region.as_str(), Seen::List(l))),
                Some(_) => None,
                None => Some((r.region.as_str(), Seen::NotAdvertised)),
            })
            .collect();
        if seen.len() < 2 || seen.iter().all(|(_, s)| matches!(s, Seen::NotAdvertised)) {
            continue;
        }
        // A list a compared region saw vary within itself: its regions' readings differ by
        // the connection, not by the region (the variance finding names it).
        let variance = surfaces
            .iter()
            .filter(|(r, _)| seen.iter().any(|(name, _)| *name == r.region))
            .filter_map(|(r, _)| varies(r, kind))
            .min();
        if variance == Some(Varies::Items) {
            continue;
        }
        let by_items = variance == Some(Varies::Order);
        compared.extend(seen.iter().map(|(r, _)| *r));
        // The reference: the reading most regions share (ties: the first region's).
        let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, s) in &seen {
            *votes.entry(s.key(by_items)).or_default() += 1;
        }
        let (_, reference) = seen
            .iter()
            .max_by(|(ra, a), (rb, b)| {
                votes[a.key(by_items)]
                    .cmp(&votes[b.key(by_items)])
                    .then(rb.cmp(ra))
            })
            .copied()
            .unwrap_or(seen[0]);
        let mut agreeing: Vec<&str> = seen
            .iter()
            .filter(|(_, s)| s.key(by_items) == reference.key(by_items))
            .map(|(r, _)| *r)
            .collect();
        agreeing.sort();
        if agreeing.len() == seen.len() {
            continue;
        }
        let method = kind.method();
        // No majority: another reading has as many regions as the reference, which is then
        // only the point of comparison (the first region's, by name), never the right one.
        let no_majority = votes
            .values()
            .filter(|n| **n == votes[reference.key(by_items)])
            .count()
            > 1;
        if no_majority {
            let sets_differ = seen
                .iter()
                .any(|(_, s)| s.digests().1 != reference.digests().1);
            let f = if sets_differ {
                &mut divergent
            } else {
                &mut reordered
            };
            let mut all: Vec<&str> = seen.iter().map(|(r, _)| *r).collect();
            all.sort();
            f.regions.extend(agreeing.iter().map(|r| r.to_string()));
            f.evidence.push(format!(
                "{method}: {} read it {} ways, none shared by more regions than another, so which region diverges cannot be told; compared with what {} read",
                all.join(", "),
                votes.len(),
                agreeing.join(", ")
            ));
        }
        for (region, s) in &seen {
            if s.key(by_items) == reference.key(by_items) {
                continue;
            }
            let against = agreeing.join(", ");
            if s.digests().1 == reference.digests().1 {
                reordered.regions.push(region.to_string());
                reordered.evidence.push(format!(
                    "{region}: {method} lists the same {} items as {against}, in another order",
                    match s {
                        Seen::List(l) => l.count,
                        Seen::NotAdvertised => 0,
                    }
                ));
                continue;
            }
            let what = match (s, reference) {
                (Seen::NotAdvertised, _) => format!(
                    "{} is not advertised in {region}, while {against} list it",
                    kind.capability()
                ),
                (_, Seen::NotAdvertised) => format!(
                    "{region} lists {} while {against} do not advertise {}",
                    kind.as_str(),
                    kind.capability()
                ),
                _ => {
                    let d = diff(&reference.pairs(), &s.pairs());
                    let mut text = d.describe();
                    if text.is_empty() {
                        text = "the items differ beyond the names kept in the report".into();
                    }
                    if s.truncated() || reference.truncated() {
                        text.push_str(" (among the names kept in the report)");
                    }
                    format!("{method} differs from {against}: {text}")
                }
            };
            divergent.regions.push(region.to_string());
            divergent.evidence.push(format!("{region}: {what}"));
        }
    }
    let mut out = Vec::new();
    for mut f in [divergent, reordered] {
        if !f.regions.is_empty() {
            f.regions.sort();
            f.regions.dedup();
            // Naming every region compared, it is no region's own.
            if compared.iter().all(|c| f.regions.iter().any(|r| r == c)) {
                f.scope = Scope::Global;
            }
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
#[path = "surface_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "surface_variance_tests.rs"]
mod variance_tests;
