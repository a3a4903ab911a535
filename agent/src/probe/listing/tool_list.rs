//! The verdicts on the tool list as read (spec section 3.4): its shape, its names, its order
//! and its content over two readings, its `x-mcp-header` annotations. Each a pure function of
//! the list; a rule judged on part of the list fails on what it saw but never passes.

use super::audit::ToolAudit;
use super::pages::{ListRead, Stop};
use super::problems::Problems;
use super::rules::{judge, unfinished};
use crate::model::{Cause, Severity};
use crate::probe::verdict::Verdict;

/// A tool rule needs the tool list: why it cannot run, if it cannot.
pub(crate) fn tools_unread(tools: Option<&ListRead>) -> Option<Verdict> {
    match tools {
        None => Some(Verdict::skip("the server does not advertise tools")),
        Some(t) if !t.answered() => Some(match &t.stop {
            Some(stop @ (Stop::Deadline | Stop::NoAnswer { .. } | Stop::Answered { .. })) => {
                Verdict::unknown(
                    stop.cause(),
                    format!("tools/list was not answered ({})", stop.describe()),
                )
            }
            Some(stop @ Stop::Cap(what)) => Verdict::unknown(
                stop.cause(),
                format!("the first tools/list page hit the {what}"),
            ),
            _ => Verdict::skip("tools/list was refused (see caps.discover-matches-handlers)"),
        }),
        Some(_) => None,
    }
}

/// The tool list as read, or the verdict of a tool rule that cannot run ([`tools_unread`]).
pub(crate) fn tools_read(tools: Option<&ListRead>) -> Result<&ListRead, Verdict> {
    if let Some(v) = tools_unread(tools) {
        return Err(v);
    }
    tools.ok_or_else(|| Verdict::skip("the server does not advertise tools"))
}

/// The tool list as read and its audit, or the verdict of an audit rule that cannot run.
pub(crate) fn tools_audited(tools: Option<&ListRead>) -> Result<(&ListRead, &ToolAudit), Verdict> {
    let t = tools_read(tools)?;
    match &t.audit {
        Some(a) => Ok((t, a)),
        None => Err(Verdict::skip("no tool audit")),
    }
}

/// `tools.list-shape`: the shape of every tool, and (2026-07-28) `resultType` on every page.
pub(crate) fn list_shape(tools: Option<&ListRead>, modern: bool) -> Verdict {
    let t = match tools_read(tools) {
        Ok(t) => t,
        Err(v) => return v,
    };
    let mut p = t.shape.clone();
    if let Some(a) = &t.audit {
        p.extend(&a.shape);
    }
    let missing = t.metas.iter().filter(|m| m.result_type.is_none()).count();
    if modern && missing > 0 {
        p.push(
            Severity::Medium,
            format!(
                "{missing} of {} tools/list pages lack result.resultType (MUST on 2026-07-28)",
                t.metas.len()
            ),
        );
    }
    if modern {
        if let Some(why) = super::rules::not_complete(&t.metas, "tools/list") {
            p.push(Severity::Medium, why);
        }
    }
    judge(
        &p,
        t,
        format!(
            "{} tools, each with a name and an object inputSchema",
            t.items.len()
        ),
    )
}

/// `tools.name-format`.
pub(crate) fn name_format(tools: Option<&ListRead>) -> Verdict {
    let t = match tools_read(tools) {
        Ok(t) => t,
        Err(v) => return v,
    };
    let empty = Problems::default();
    let p = t.audit.as_ref().map(|a| &a.names).unwrap_or(&empty);
    judge(
        p,
        t,
        format!(
            "{} tool names, unique, 1-128 characters from [A-Za-z0-9_.-]",
            t.items.len()
        ),
    )
}

/// Two listings compared need both whole. The first is the one the other rules judge, so a
/// list the server broke there is already a finding ([`unfinished`]); the second is read for
/// this comparison only, so whatever stopped it leaves the comparison without evidence.
fn both_complete(a: &ListRead, b: &ListRead) -> Option<Verdict> {
    if let Some(stop) = &a.stop {
        return Some(unfinished(
            stop,
            "the first listing of tools/list was not complete".into(),
        ));
    }
    b.stop.as_ref().map(|stop| {
        Verdict::unknown(
            stop.cause(),
            format!(
                "the second listing of tools/list was not complete ({})",
                stop.describe()
            ),
        )
    })
}

/// Two listings of the tool list, both read whole, or the verdict of a comparison that
/// cannot be made.
fn both_read<'a>(
    a: Option<&'a ListRead>,
    b: Option<&'a ListRead>,
) -> Result<(&'a ListRead, &'a ListRead), Verdict> {
    if let Some(v) = tools_unread(a) {
        return Err(v);
    }
    let (Some(a), Some(b)) = (a, b) else {
        return Err(Verdict::unknown(
            Cause::Malformed,
            "tools/list was listed once only",
        ));
    };
    match both_complete(a, b) {
        Some(v) => Err(v),
        None => Ok((a, b)),
    }
}

/// `tools.deterministic-order`: the names common to two listings, in the same order.
pub(crate) fn order(a: Option<&ListRead>, b: Option<&ListRead>) -> Verdict {
    let (a, b) = match both_read(a, b) {
        Ok(ab) => ab,
        Err(v) => return v,
    };
    let (na, nb) = (a.names(), b.names());
    let common_a: Vec<&str> = na.iter().copied().filter(|n| nb.contains(n)).collect();
    let common_b: Vec<&str> = nb.iter().copied().filter(|n| na.contains(n)).collect();
    match common_a.iter().zip(&common_b).position(|(x, y)| x != y) {
        None => Verdict::pass(format!("{} tools in the same order twice", common_a.len())),
        Some(i) => Verdict::warn(
            Severity::Low,
            format!(
                "tools/list changed its order between two listings: position {} was {} then {}",
                i + 1,
                common_a[i],
                common_b[i]
            ),
        ),
    }
}

/// `tools.no-per-connection-variance`: the same tools (names and definitions) over a second
/// connection (a second session on a 2025-11-25 server).
pub(crate) fn variance(a: Option<&ListRead>, b: Option<&ListRead>, legacy: bool) -> Verdict {
    let (a, b) = match both_read(a, b) {
        Ok(ab) => ab,
        Err(v) => return v,
    };
    let diff = crate::surface::diff(&a.items, &b.items);
    let over = if legacy {
        "a second session"
    } else {
        "a second connection"
    };
    if diff.is_empty() {
        Verdict::pass(format!("the same {} tools over {over}", a.items.len()))
    } else {
        Verdict::fail(
            Severity::Medium,
            format!("the tools differ over {over}: {}", diff.describe()),
        )
    }
}

/// `tools.x-mcp-header-valid` (2026-07-28 only).
pub(crate) fn x_mcp_headers(tools: Option<&ListRead>) -> Verdict {
    let (t, a) = match tools_audited(tools) {
        Ok(ta) => ta,
        Err(v) => return v,
    };
    let pass = if a.with_headers == 0 {
        format!("{} tools, none declares x-mcp-header", a.tools)
    } else {
        format!(
            "{} tool(s) declare valid x-mcp-header annotations",
            a.with_headers
        )
    };
    judge(&a.headers, t, pass)
}
