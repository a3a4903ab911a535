//! A list read in part (`checks.md` 4.1): what stopped the read, whether the server itself
//! left the list without its end or the rest exists unseen, and what that means to the rules
//! that needed all of it. Never a pass: `unknown` with the stop's cause for an unseen rest, a
//! skip naming the failure for a list the server broke or left without a usable answer.

use super::pages::{ListRead, Stop};
use crate::catalog::CheckId;
use crate::probe::verdict::Verdict;
use crate::surface::ListKind;

impl ListRead {
    /// What stopped the read before the end of a list that goes on: a bound, the deadline,
    /// no answer, an answer for another reason. Not a list the server refused or broke:
    /// there is no rest a client could read, and that failure is a finding of its own.
    pub(crate) fn unseen_rest(&self) -> Option<&Stop> {
        self.stop
            .as_ref()
            .filter(|s| !matches!(s, Stop::Refused { .. } | Stop::Broken(_)))
    }

    /// The optional templates list, not served (-32601) by a server without templates: no
    /// list to read, and no failure (see `caps.discover-matches-handlers`).
    pub(crate) fn optional_unserved(&self) -> bool {
        self.kind == ListKind::ResourceTemplates
            && !self.answered()
            && matches!(
                self.stop,
                Some(Stop::Refused {
                    code: Some(-32601),
                    ..
                })
            )
    }

    /// What the server did to leave this list without its end: its first page refused (or
    /// answered with no usable answer), or a later page that broke it. No rest any client
    /// could read; the failure is a finding of its own ([`ListRead::own_finding`]).
    pub(crate) fn server_failed(&self) -> Option<&Stop> {
        self.stop
            .as_ref()
            .filter(|s| matches!(s, Stop::Refused { .. } | Stop::Broken(_)))
            .filter(|_| !self.optional_unserved())
    }

    /// The check whose failure names what [`ListRead::server_failed`] returns: an unusable
    /// first answer fails `caps.discover-matches-handlers`, a cursor the server broke
    /// `pagination.cursor`, a page without its array `tools.list-shape` (tools) or
    /// `caps.discover-matches-handlers` (the other lists).
    pub(crate) fn own_finding(&self) -> CheckId {
        if !self.answered() {
            CheckId::CapsDiscoverMatchesHandlers
        } else if !self.cursor_problems.is_empty() {
            CheckId::PaginationCursor
        } else if self.kind == ListKind::Tools {
            CheckId::ToolsListShape
        } else {
            CheckId::CapsDiscoverMatchesHandlers
        }
    }
}

/// A rule that needed the whole of a list judged by the listing itself (its first reading),
/// with nothing found in `seen`, the part read before `stop` (`checks.md` 4.1):
/// - the server broke the list (a cursor it issued and then refused, or issued twice; a page
///   without its array): there is no rest any client could read, and the failure that broke
///   it is already a finding of its own, medium or above (`pagination.cursor`,
///   `tools.list-shape`, `caps.discover-matches-handlers`), which keeps the decision from
///   `pass`. The rule is skipped, pointing there, rather than named a second time.
/// - anything else (a listing bound, the deadline, no answer): the rest exists and was not
///   seen, so the rule is `unknown` with the stop's cause (`size-cap`, `deadline`, the
///   exchange's own), which the merge names `probe.incomplete`.
pub(crate) fn unfinished(stop: &Stop, seen: String) -> Verdict {
    match stop {
        Stop::Broken(why) => Verdict::skip(format!(
            "{seen}; the server broke the list there ({why}), which is its own finding"
        )),
        _ => Verdict::unknown(
            stop.cause(),
            format!("{seen}; the rest was not seen ({})", stop.describe()),
        ),
    }
}

/// The first list whose rest was not read, with what stopped it ([`ListRead::unseen_rest`]).
pub(crate) fn first_unseen<'a>(reads: &[&'a ListRead]) -> Option<(&'a ListRead, &'a Stop)> {
    reads
        .iter()
        .find_map(|r| r.unseen_rest().map(|stop| (*r, stop)))
}

/// The first list the server left without a usable answer or broke
/// ([`ListRead::server_failed`]), with how.
pub(crate) fn first_failed<'a>(reads: &[&'a ListRead]) -> Option<(&'a ListRead, &'a Stop)> {
    reads
        .iter()
        .find_map(|r| r.server_failed().map(|stop| (*r, stop)))
}

/// A list the server left without a usable answer, or broke after `r.pages` pages, named with
/// the check whose failure it is.
pub(crate) fn read_in_part(r: &ListRead, stop: &Stop) -> String {
    let m = r.kind.method();
    let what = if r.answered() {
        format!(
            "{m} was read in part ({} page(s), then {})",
            r.pages,
            stop.describe()
        )
    } else {
        format!("{m} had no usable answer ({})", stop.describe())
    };
    format!("{what}, which is the failure of {}", r.own_finding())
}
