//! The listing checks' verdicts, from the lists as read (spec sections 3.3 and 3.4): each a
//! pure function of what was observed. A rule judged on part of a list fails on what it saw
//! but never passes: the unread rest may break it (`unknown`, with what stopped the read and
//! its cause), unless the server itself broke the list, which its own failure names.

use serde_json::Value;

use super::pages::{ListRead, Stop};
pub(crate) use super::partial::unfinished;
use super::partial::{first_failed, first_unseen, read_in_part};
use super::problems::Problems;
use crate::catalog::CheckId;
use crate::model::{Cause, Severity};
use crate::probe::http::{Exchange, ExchangeError, Rpc};
use crate::probe::reason::{self, Subject};
use crate::probe::verdict::Verdict;
use crate::surface::ListKind;

/// Problems of a rule as a verdict: a SHOULD (low) warns, a MUST fails; nothing found on a
/// part of the list is not a pass ([`unfinished`]); nothing found on all of it passes.
pub(crate) fn judge(problems: &Problems, read: &ListRead, pass: String) -> Verdict {
    match problems.worst() {
        Some(s @ (Severity::Info | Severity::Low)) => Verdict::warn(s, problems.summary()),
        Some(s) => Verdict::fail(s, problems.summary()),
        None => match &read.stop {
            Some(stop) => unfinished(
                stop,
                format!(
                    "{} of {} read, none breaking the rule",
                    read.items.len(),
                    read.kind.method()
                ),
            ),
            None => Verdict::pass(pass),
        },
    }
}

/// An answer to a list request that says nothing about the list (`checks.md` 4.1), as the
/// engine's one rule ([`reason::another_reason`], as for discovery) decides: a rate limit,
/// an unavailable server or gateway, a refusal in front of the MCP layer, or the
/// authorization layer. A 401/403 when a credential was given is that credential refused
/// (`credential-refused`); a 401 without one is `other-reason`, naming the flag (the region
/// is not known to be protected, since its discovery was served without a credential).
/// Returns the cause and why.
pub(crate) fn another_reason(ex: &Exchange, method: &str, token: bool) -> Option<(Cause, String)> {
    // A redirect says nothing about the list (never followed); redirect.none names it.
    if let Some(o) = reason::redirected(ex) {
        return Some((
            o.cause,
            format!(
                "{method} {}, so nothing about it was observed; {}",
                o.head, o.advice
            ),
        ));
    }
    let o = reason::another_reason(ex, Subject::Discover, token)?;
    let s = ex.summary();
    if o.cause == Cause::CredentialRefused {
        return Some((
            o.cause,
            format!("{method} answered {s}: the credential given was refused there, although the server's discovery accepted it; check the token named by --token-env (its audience and scopes)"),
        ));
    }
    if ex.status == 401 {
        return Some((
            o.cause,
            format!("{method}: {}, although the server's discovery (server/discover or initialize) was served without one; name a credential with --token-env", o.head),
        ));
    }
    Some((
        o.cause,
        format!(
            "{method}: {}; nothing about the list was observed, check again later",
            o.head
        ),
    ))
}

/// One probe of a list method whose capability the server does not advertise.
pub(crate) type Absent = (ListKind, Result<Exchange, ExchangeError>);

/// `caps.discover-matches-handlers`: each advertised list works, and each unadvertised one
/// answers 404 with -32601 (probed on 2026-07-28 servers only). `token`: a credential was
/// given (see [`another_reason`]).
pub(crate) fn caps(
    reads: &[&ListRead],
    absent: &[Absent],
    probed_absent: bool,
    token: bool,
) -> Verdict {
    let mut p = Problems::default();
    let mut seen = Vec::new();
    let mut unseen = Vec::new();
    // Lists the server broke after a page that worked: never a pass (read in part).
    let mut broken = Vec::new();
    // The cause of the first list or probe that went unanswered.
    let mut unseen_cause = None;
    for r in reads {
        let m = r.kind.method();
        match (&r.stop, r.answered()) {
            (_, true) if r.kind != ListKind::Tools && !r.shape.is_empty() => p.push(
                Severity::High,
                format!(
                    "{} is advertised, but {m} answered without a list: {}",
                    r.kind.capability(),
                    r.shape.summary()
                ),
            ),
            // A list read in part works, but the unread rest may break the rule; a list the
            // server broke after a page that worked is no pass either.
            (_, true) => match (r.unseen_rest(), r.server_failed()) {
                (Some(stop), _) => {
                    unseen_cause = unseen_cause.or(Some(stop.cause()));
                    unseen.push(format!(
                        "{m} works, but only {} page(s) were read ({})",
                        r.pages,
                        stop.describe()
                    ));
                }
                (None, Some(stop)) => broken.push(read_in_part(r, stop)),
                (None, None) => seen.push(format!("{m} works")),
            },
            // Templates are optional under `resources`: a server without any may not serve
            // the method at all (the capability rule names tools/list, resources/list and
            // prompts/list).
            (
                Some(Stop::Refused {
                    code: Some(-32601), ..
                }),
                false,
            ) if r.kind == ListKind::ResourceTemplates => seen.push(format!(
                "{m} not served (optional: the server has no templates)"
            )),
            (Some(Stop::Refused { summary, .. }), false) => p.push(
                Severity::High,
                format!(
                    "{} is advertised, but {m} answered {summary}",
                    r.kind.capability()
                ),
            ),
            (Some(Stop::Broken(why)), false) => p.push(
                Severity::High,
                format!(
                    "{} is advertised, but {m} did not answer a list: {why}",
                    r.kind.capability()
                ),
            ),
            (stop, false) => {
                unseen_cause = unseen_cause.or(stop.as_ref().map(Stop::cause));
                unseen.push(format!(
                    "{m}: {}",
                    stop.as_ref().map(Stop::describe).unwrap_or_default()
                ))
            }
        }
    }
    for (kind, got) in absent {
        let m = kind.method();
        match got {
            Err(e) => {
                unseen_cause = unseen_cause.or(Some(e.cause));
                unseen.push(format!("{m}: {}", e.message))
            }
            Ok(ex) => {
                if let Some((cause, why)) = another_reason(ex, m, token) {
                    unseen_cause = unseen_cause.or(Some(cause));
                    unseen.push(why);
                    continue;
                }
                let s = ex.summary();
                match (ex.status, ex.rpc()) {
                    (404, Some(Rpc::Error { code: -32601, .. })) => {
                        seen.push(format!("{m} 404 -32601 ({} not advertised)", kind.capability()))
                    }
                    (200..=299, Some(Rpc::Result { .. })) => p.push(
                        Severity::Medium,
                        format!("{m} is served although {} is not advertised: declare the capability, or answer 404 with -32601 ({s})", kind.capability()),
                    ),
                    (_, Some(Rpc::Error { code: -32601, .. })) => p.push(
                        Severity::Medium,
                        format!("{m} ({} not advertised): -32601 MUST come with HTTP 404 ({s})", kind.capability()),
                    ),
                    _ => p.push(
                        Severity::Medium,
                        format!("{m} ({} not advertised): expected 404 with JSON-RPC -32601, got {s}", kind.capability()),
                    ),
                }
            }
        }
    }
    if let Some(worst) = p.worst() {
        return Verdict::fail(worst, p.summary());
    }
    if !unseen.is_empty() {
        return Verdict::unknown(
            unseen_cause.unwrap_or(Cause::Malformed),
            format!("not seen whole: {}", unseen.join("; ")),
        );
    }
    if !broken.is_empty() {
        seen.splice(0..0, broken);
        return Verdict::skip(format!(
            "not passed while a list was read in part: {}",
            seen.join("; ")
        ));
    }
    if seen.is_empty() {
        return Verdict::skip("the server advertises no tools, resources or prompts");
    }
    let mut s = seen.join("; ");
    if !probed_absent {
        s.push_str(" (unadvertised methods are not probed on a 2025-11-25 server)");
    }
    Verdict::pass(s)
}

/// `pagination.cursor` over every list read.
pub(crate) fn pagination(reads: &[&ListRead]) -> Verdict {
    let mut p = Problems::default();
    let mut capped = false;
    for r in reads {
        p.extend(&r.cursor_problems);
        if let Some(Stop::Cap(what)) = &r.stop {
            if what.starts_with("page cap") {
                capped = true;
                p.push(
                    Severity::Low,
                    format!(
                        "{} has more than {} pages; the listing stopped at the {what}",
                        r.kind.method(),
                        r.pages
                    ),
                );
            }
        }
    }
    if let Some(worst) = p.worst() {
        let v = if worst <= Severity::Low {
            Verdict::warn(worst, p.summary())
        } else {
            Verdict::fail(worst, p.summary())
        };
        return if capped { v.cause(Cause::SizeCap) } else { v };
    }
    let paged: Vec<String> = reads
        .iter()
        .filter(|r| r.cursors_followed > 0)
        .map(|r| format!("{} ({} pages)", r.kind.method(), r.pages))
        .collect();
    // A list whose rest was not read may paginate there, or break its cursors there.
    if let Some((r, stop)) = first_unseen(reads) {
        return unfinished(
            stop,
            format!(
                "{} was not read to its end ({} cursors followed)",
                r.kind.method(),
                r.cursors_followed
            ),
        );
    }
    // A list the server left without a usable answer, or broke, may paginate in what was
    // not read: a cursor it broke is a problem above; an unusable first answer or a page
    // without its array is the failure of another check, which the skip names.
    if let Some((r, stop)) = first_failed(reads) {
        return Verdict::skip(format!(
            "{} ({} cursors followed), so whether its cursors work is unknown",
            read_in_part(r, stop),
            r.cursors_followed
        ));
    }
    if paged.is_empty() {
        return Verdict::skip("no list was paginated (every list served was read whole, its one page without nextCursor), so there was no cursor to follow");
    }
    Verdict::pass(format!(
        "cursors followed to the end of {}",
        paged.join(", ")
    ))
}

/// The cursor `pagination.invalid-cursor` sends: one no server issues.
pub const BOGUS_CURSOR: &str = "!!vantage-bogus-cursor!!";

/// `pagination.invalid-cursor`: a cursor the server never issued gets -32602. `token`: a
/// credential was given (see [`another_reason`]).
pub(crate) fn invalid_cursor(
    method: &str,
    got: &Result<Exchange, ExchangeError>,
    token: bool,
) -> Verdict {
    let ex = match got {
        Ok(ex) => ex,
        Err(e) => {
            return Verdict::unknown(
                e.cause,
                format!("{method} with a bogus cursor got no answer: {}", e.message),
            )
        }
    };
    if let Some((cause, why)) = another_reason(ex, method, token) {
        return Verdict::unknown(cause, format!("with a bogus cursor, {why}"));
    }
    let s = ex.summary();
    let rpc = ex.rpc();
    // The listing's own rule for a page (`pages::read`): an error status without a JSON-RPC
    // error is an answer from something else than the MCP layer (an expired session's empty
    // 404, a proxy), so nothing says the server judged the cursor.
    if rpc.is_none() && !(200..300).contains(&ex.status) {
        return Verdict::unknown(
            Cause::OtherReason,
            format!("with a bogus cursor, {method} answered {s} without a JSON-RPC error, so nothing says the server judged the cursor"),
        );
    }
    match rpc {
        Some(Rpc::Error { code: -32602, .. }) => Verdict::pass(s),
        Some(Rpc::Result { .. }) => Verdict::warn(
            Severity::Low,
            format!("{method} with a cursor the server never issued was served ({s}); it SHOULD answer -32602"),
        ),
        _ => Verdict::warn(Severity::Low, format!("{method} with a bogus cursor: expected JSON-RPC -32602, got {s}")),
    }
}

/// A list result's `resultType` other than `"complete"` on any of `metas` (the pages of
/// `method`), said once: a list is never `input_required` (mrtr.allowed-methods: only
/// tools/call, prompts/get and resources/read), and a type the client does not know leaves
/// it no list to use (a missing one is judged on its own).
pub(crate) fn not_complete(metas: &[super::pages::PageMeta], method: &str) -> Option<String> {
    let bad: Vec<(usize, &Value)> = metas
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.result_type.as_ref().map(|t| (i, t)))
        .filter(|(_, t)| t.as_str() != Some("complete"))
        .collect();
    let (first, t) = bad.first()?;
    let why = if t.as_str() == Some("input_required") {
        "a list result MUST be complete (input_required is allowed only on tools/call, prompts/get and resources/read)"
    } else {
        "not \"complete\", the only result a list may give"
    };
    let t = crate::probe::http::clip(&t.to_string(), 60);
    Some(format!(
        "{} of {} {method} pages carry resultType {t} (page {}): {why}",
        bad.len(),
        metas.len(),
        first + 1
    ))
}

/// `cache.hints`: `ttlMs` and `cacheScope` on every list page (2026-07-28 only), each on a
/// complete result (a page of another `resultType` is no cacheable list result).
///
/// A page whose `resultType` is not `"complete"` fails on its type, and that comes first in
/// the evidence, every list's before any hint (fresh eyes round 17, nit 6: the type's fault
/// read as one more missing hint, or was cut off behind them): such a page is no cacheable
/// result (an `input_required` result carries neither hint), so its hints are not judged.
pub(crate) fn cache_hints(reads: &[&ListRead]) -> Verdict {
    let mut p = Problems::default();
    let mut pages = 0;
    for r in reads {
        if let Some(why) = not_complete(&r.metas, r.kind.method()) {
            p.push(Severity::Medium, why);
        }
    }
    for r in reads {
        for (i, m) in r.metas.iter().enumerate() {
            pages += 1;
            if m.result_type.as_ref().is_some_and(|t| t != "complete") {
                continue;
            }
            let at = format!("{} page {}", r.kind.method(), i + 1);
            if let Some(why) = crate::probe::era::ttl_ms_problem(m.ttl_ms.as_ref()) {
                p.push(Severity::Medium, format!("{at}: {why}"));
            }
            match m.cache_scope.as_ref().and_then(Value::as_str) {
                Some("public" | "private") => {}
                Some(other) => p.push(
                    Severity::Medium,
                    format!("{at}: cacheScope \"{other}\" is neither public nor private"),
                ),
                None => p.push(Severity::Medium, format!("{at}: cacheScope missing")),
            }
        }
    }
    if let Some(s) = p.worst() {
        return Verdict::fail(s, p.summary());
    }
    // Pages not read may lack the hints: what was read is no pass for them.
    if let Some((r, stop)) = first_unseen(reads) {
        return Verdict::unknown(
            stop.cause(),
            format!(
                "{pages} list pages read carried ttlMs and cacheScope; the rest of {} was not seen ({})",
                r.kind.method(),
                stop.describe()
            ),
        );
    }
    // A list the server left unusable, or broke, was not read to its end either.
    if let Some((r, stop)) = first_failed(reads) {
        return Verdict::skip(format!(
            "{pages} list pages read carried ttlMs and cacheScope; {}",
            read_in_part(r, stop)
        ));
    }
    if pages == 0 {
        return Verdict::skip("no list result was read");
    }
    Verdict::pass(format!("{pages} list pages carried ttlMs and cacheScope"))
}

/// The checks of this stage, for recording a reason for all of them at once: the
/// catalogue's listing stage, in client order (a check added there is recorded here too).
pub(crate) fn checks() -> impl Iterator<Item = CheckId> {
    crate::catalog::in_stage(crate::catalog::Stage::Listing)
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "partial_tests.rs"]
mod partial_tests;

#[cfg(test)]
#[path = "redirect_tests.rs"]
mod redirect_tests;
