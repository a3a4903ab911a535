//! `jsonrpc.error-body`: the MCP-level refusals of the transport checks carry a JSON-RPC
//! error body; a bare 4xx points to an intermediary. It counts what it saw: a refusal that
//! carried a body, a bare one, and the probes that saw nothing about it (no answer, or an
//! answer for another reason), which leave it `unknown`, never a pass with a count it did
//! not observe (`checks.md` 4.1).

use super::http::{Exchange, Rpc};
use super::transport::bare_4xx;
use super::verdict::Verdict;
use crate::catalog::CheckId;
use crate::model::{Cause, Outcome, Severity};

/// The checks whose refusals must carry a JSON-RPC error body.
pub const RPC_ERROR_CHECKS: &[CheckId] = &[
    CheckId::HeadersMissingMethod,
    CheckId::HeadersMethodMismatch,
    CheckId::HeadersMethodCase,
    CheckId::HeadersNameMismatch,
    CheckId::HeadersMissingVersion,
    CheckId::HeadersVersionMismatch,
    CheckId::VersionUnsupported,
    CheckId::MetaMissing,
    CheckId::MethodUnknown,
];

/// `jsonrpc.error-body` over each transport check's outcome and its answer (`None`: no
/// answer). A bare 4xx of a check that already failed on it is not named twice.
pub fn error_body(seen: &[(CheckId, Outcome, Option<&Exchange>)]) -> Verdict {
    let mut carried = 0usize;
    let mut bare = Vec::new();
    let mut already_failed = 0usize;
    let mut not_seen = Vec::new();
    for (id, outcome, ex) in seen
        .iter()
        .filter(|(id, _, _)| RPC_ERROR_CHECKS.contains(id))
    {
        let ex = match (outcome, ex) {
            // Not applicable here (e.g. no request carries Mcp-Name): nothing was due.
            (Outcome::Skip, _) => continue,
            (Outcome::Unknown | Outcome::Error, _) | (_, None) => {
                not_seen.push(id.to_string());
                continue;
            }
            (_, Some(ex)) => ex,
        };
        if !(400..500).contains(&ex.status) {
            continue;
        }
        if matches!(ex.rpc(), Some(Rpc::Error { .. })) {
            carried += 1;
        } else if bare_4xx(ex) && *outcome == Outcome::Fail {
            already_failed += 1;
        } else if bare_4xx(ex) {
            bare.push(format!("{id}: {}", ex.summary()));
        }
    }
    if !bare.is_empty() {
        return Verdict::warn(
            Severity::Low,
            format!(
                "bare 4xx without a JSON-RPC body (an intermediary answering?): {}",
                bare.join("; ")
            ),
        );
    }
    let failed = match already_failed {
        0 => String::new(),
        n => format!("; {n} bare refusal(s) already failed under their own check"),
    };
    if !not_seen.is_empty() {
        return Verdict::unknown(
            Cause::OtherReason,
            format!(
                "{carried} refusal(s) carried a JSON-RPC error body{failed}, but the answers of {} were not observed (no answer, or answered for another reason), so whether every refusal carries one is not known",
                not_seen.join(", ")
            ),
        );
    }
    if carried == 0 {
        return Verdict::skip(format!(
            "no MCP-level refusal carrying a JSON-RPC body was observed{failed}"
        ));
    }
    Verdict::pass(format!(
        "{carried} refusal(s) carried JSON-RPC error bodies{failed}"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::probe::http::Body;
    use crate::probe::test_support::answer_with;

    fn ex(status: u16, body: Body) -> Exchange {
        answer_with(status, None, body, &[])
    }

    fn rpc(status: u16) -> Exchange {
        ex(
            status,
            Body::Json(
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "m"}}),
            ),
        )
    }

    #[test]
    fn bare_refusals_warn_unless_already_failed() {
        let bare = ex(400, Body::Empty);
        let good = rpc(400);
        let v = error_body(&[
            (CheckId::HeadersMissingMethod, Outcome::Pass, Some(&bare)),
            (CheckId::MetaMissing, Outcome::Pass, Some(&good)),
        ]);
        assert_eq!(
            (v.outcome, v.severity),
            (Outcome::Warn, Some(Severity::Low))
        );
        assert!(v.observed.contains("headers.missing-method"));
        // 403 and 405 bodies of other checks are not MCP-level refusals.
        let v = error_body(&[(
            CheckId::SecurityOrigin,
            Outcome::Pass,
            Some(&ex(403, Body::Empty)),
        )]);
        assert_eq!(v.outcome, Outcome::Skip);
    }

    /// Red-team defect 4: it said "7 refusals carried JSON-RPC error bodies" while all seven
    /// were empty 503s, or a failed bare 404 and nothing else.
    #[test]
    fn it_counts_only_the_bodies_it_saw() {
        // A check that already failed on its bare 404 is not named twice, and not counted
        // as a body either.
        let v = error_body(&[(
            CheckId::MethodUnknown,
            Outcome::Fail,
            Some(&ex(404, Body::Empty)),
        )]);
        assert_eq!(v.outcome, Outcome::Skip, "{}", v.observed);
        assert!(v.observed.contains("already failed"), "{}", v.observed);
        // Every refusal answered for another reason (front.py unavail): nothing observed.
        let unavailable = ex(503, Body::Empty);
        let all: Vec<_> = RPC_ERROR_CHECKS
            .iter()
            .map(|id| (*id, Outcome::Unknown, Some(&unavailable)))
            .collect();
        let v = error_body(&all);
        assert_eq!(
            (v.outcome, v.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "{}",
            v.observed
        );
        assert!(v.observed.starts_with("0 refusal(s)"), "{}", v.observed);
        // Two bodies seen, one probe unanswered: the count is what was seen, and no pass.
        let good = rpc(400);
        let v = error_body(&[
            (CheckId::HeadersMissingMethod, Outcome::Pass, Some(&good)),
            (CheckId::MetaMissing, Outcome::Pass, Some(&good)),
            (CheckId::MethodUnknown, Outcome::Unknown, None),
        ]);
        assert_eq!(v.outcome, Outcome::Unknown);
        assert!(
            v.observed.starts_with("2 refusal(s) carried") && v.observed.contains("method.unknown"),
            "{}",
            v.observed
        );
        // All seen, all with bodies: a pass with the true count.
        let v = error_body(&[
            (CheckId::HeadersMissingMethod, Outcome::Pass, Some(&good)),
            (CheckId::MetaMissing, Outcome::Fail, Some(&good)),
            (
                CheckId::TransportGet,
                Outcome::Pass,
                Some(&ex(405, Body::Empty)),
            ),
        ]);
        assert_eq!(v.outcome, Outcome::Pass);
        assert!(v.observed.starts_with("2 refusal(s)"), "{}", v.observed);
        // A check that did not apply is not a gap.
        let v = error_body(&[
            (CheckId::HeadersMissingMethod, Outcome::Pass, Some(&good)),
            (CheckId::HeadersNameMismatch, Outcome::Skip, None),
        ]);
        assert_eq!(v.outcome, Outcome::Pass);
    }
}
