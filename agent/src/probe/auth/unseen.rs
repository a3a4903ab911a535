//! Why a metadata document was not observed (`checks.md` 4.1): a URL the egress policy
//! refused, a URL that gave no answer (timeout, closed connection, the vantage's own
//! resolver or deadline), a redirect (never followed), or an answer given for another
//! reason than "is the document here" (a rate limit, an unavailable server or gateway, a
//! server error without an MCP answer, a body in a content coding that was not decoded).
//! Such a URL is no evidence either way: a check with nothing else to judge is `unknown`
//! with the cause, never "no metadata" (`auth.prm`, `auth.as-metadata`).
//!
//! What is evidence: a document, a 404 or any other status that says "not here", a 401 or
//! 403 (metadata must be readable without a credential: a client gets the same refusal), a
//! refused connection, a failed TLS handshake, a name that does not exist, an answer that is
//! not HTTP.

use super::metadata::Fetched;
use crate::egress::{refused_verdict, EgressPolicy};
use crate::model::Cause;
use crate::probe::http::Exchange;
use crate::probe::reason::{self, Other, Subject};
use crate::probe::verdict::Verdict;

/// One metadata URL whose document was not observed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    pub cause: Cause,
    /// `URL (at ADDRESS) -> what happened: the document was not observed; what to do`.
    pub line: String,
}

/// Whether `cause`, on an exchange that failed, means "no answer" (nothing about the URL
/// was learnt) rather than an answer a client gets too (a refused connection, a failed TLS
/// handshake, a name that does not exist, an answer that is not HTTP).
fn no_answer(cause: Cause) -> bool {
    cause.is_vantage_side()
        || matches!(
            cause,
            Cause::Timeout | Cause::Reset | Cause::ResolverFailure
        )
}

/// Whether a metadata answer was given for another reason ([`reason::another_reason`]).
/// A 401 or 403 is no other reason here: metadata must be readable without a credential,
/// so that refusal is what every client gets. Only a 200 (the document) and a 500 (a
/// JSON-RPC answer or not) need their body; on any other status a body in a content coding
/// that was not decoded changes nothing.
pub fn metadata_other_reason(ex: &Exchange) -> Option<Other> {
    if matches!(ex.status, 401 | 403) {
        return None;
    }
    if ex.encoding().is_some() && !matches!(ex.status, 200 | 500) {
        let mut plain = ex.clone();
        plain.headers.remove(http::header::CONTENT_ENCODING);
        return reason::another_reason(&plain, Subject::Rule, false);
    }
    reason::another_reason(ex, Subject::Rule, false)
}

impl Fetched {
    /// Why this URL's document was not observed, or `None` when what came back is evidence.
    pub fn unseen(&self, policy: &EgressPolicy) -> Option<Unseen> {
        if let Some(u) = self.cut_by_cap() {
            return Some(u);
        }
        let ex = match &self.outcome {
            Err(e) if e.cause == Cause::PolicyRefused => {
                return Some(Unseen {
                    cause: e.cause,
                    line: format!(
                        "{} -> {}: nothing was sent, so the document was not observed",
                        self.url, e.message
                    ),
                })
            }
            Err(e) if no_answer(e.cause) => {
                return Some(Unseen {
                    cause: e.cause,
                    line: format!(
                        "{} -> {}: no answer, so the document was not observed",
                        self.url, e.message
                    ),
                })
            }
            Err(_) => return None,
            Ok(ex) => ex,
        };
        if let Some((status, location, cross)) = self.redirect() {
            let line = if location.is_empty() {
                format!(
                    "{} -> {status} without a Location: the document was not observed",
                    self.place()
                )
            } else {
                format!(
                    "{}: redirected, so the document was not observed",
                    self.describe(policy)
                )
            };
            let cause = if cross {
                Cause::CrossHost
            } else {
                Cause::SameHost
            };
            return Some(Unseen { cause, line });
        }
        let o = metadata_other_reason(ex)?;
        Some(Unseen {
            cause: o.cause,
            line: format!("{} -> {}", self.place(), o.explain("the document")),
        })
    }

    /// `URL (at ADDRESS)`: where an answer came from.
    pub fn place(&self) -> String {
        match self.peer {
            Some(p) => format!("{} (at {p})", self.url),
            None => self.url.to_string(),
        }
    }
}

/// The verdict of a check none of whose URLs served the document, when some were not
/// observed: `unknown`, never "no metadata". A refusal by the egress policy names the
/// policy (cause `policy-refused`, "`what` not fetched"); otherwise the first URL's cause.
/// `None` when every URL was observed (the caller's failure stands).
pub fn not_observed(what: &str, unseen: &[Unseen], tried: &[String]) -> Option<Verdict> {
    let first = unseen.first()?;
    let list = tried.join("; ");
    Some(if unseen.iter().any(|u| u.cause == Cause::PolicyRefused) {
        refused_verdict(format!("{what} not fetched: {list}"))
    } else {
        Verdict::unknown(first.cause, format!("{what} not observed: {list}"))
    })
}

#[cfg(test)]
#[path = "unseen_tests.rs"]
mod tests;
