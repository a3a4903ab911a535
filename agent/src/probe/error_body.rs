//! `jsonrpc.error-body`: the MCP-level refusals of the transport checks carry a JSON-RPC
//! error body that echoes the request's id; a bare 4xx points to an intermediary. It counts
//! what it saw: a refusal that carried a body, a bare one, one whose error names another
//! id, and the probes that saw nothing about it (no answer, or an answer for another
//! reason), which leave it `unknown`, never a pass with a count it did not observe
//! (`checks.md` 4.1).

use serde_json::Value;

use super::http::{Exchange, Rpc};
use super::transport::{bare_4xx, TransportProbe};
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

/// The id the JSON-RPC error in `ex` carries when it is not `id`, the request's (spec 2.4:
/// "Error responses MUST echo the request id, except when the id cannot be read";
/// headers.error-id). The vantage's requests are valid JSON with a readable id, so `null` is
/// allowed only with -32700 (a parse error: the server says it could not read the body at
/// all). Numbers compare as numbers (`100` and `100.0` are the same id to a client).
pub fn error_id_mismatch(ex: &Exchange, id: &Value) -> Option<Value> {
    let Some(Rpc::Error { id: got, code, .. }) = ex.rpc() else {
        return None;
    };
    let same = match (&got, id) {
        (Value::Number(_), Value::Number(_)) => super::http::same_id(&got, id),
        (Value::Null, _) => code == -32700,
        _ => &got == id,
    };
    (!same).then_some(got)
}

/// The media type a JSON-RPC error body was served as, when it is not one an MCP client
/// reads as JSON-RPC (`application/json`, `+json`, or an event stream): e.g. `text/html`.
/// The body is parsed whatever the label says, but a client that reads a refusal by its
/// media type sees an HTML (or text) error page, not MCP (rt15 #9). An answer without a
/// `Content-Type` is not judged here.
pub fn mislabelled_error(ex: &Exchange) -> Option<&str> {
    if !matches!(ex.rpc(), Some(Rpc::Error { .. })) {
        return None;
    }
    let ct = ex.content_type.as_deref()?;
    let rpc_media = ct == "application/json" || ct.ends_with("+json") || ct == "text/event-stream";
    (!rpc_media).then_some(ct)
}

/// The outcome [`error_body`] reads for a transport check whose verdict is `v` and whose
/// answer is `ex`: the check's own, except a refusal whose body could not be read as a
/// JSON-RPC error (the check `unknown`, cause `malformed`: its code was not observed) was
/// seen all the same: it is the bare 4xx this check names (a warning), not an answer that
/// was not observed (red team round 18, D4).
pub fn seen_outcome(v: &Verdict, ex: Option<&Exchange>) -> Outcome {
    match (v.outcome, v.cause, ex) {
        (Outcome::Unknown, Some(Cause::Malformed), Some(ex))
            if (400..500).contains(&ex.status) && !matches!(ex.rpc(), Some(Rpc::Error { .. })) =>
        {
            Outcome::Warn
        }
        _ => v.outcome,
    }
}

/// `jsonrpc.error-body` over each transport check's outcome and its answer (`None`: no
/// answer). A bare 4xx of a check that already failed on it is not named twice. A refusal
/// whose error carries another id than its request's fails (medium: a client matching
/// answers to requests by id never sees it), though it still counts as a refusal for its
/// own check's rule.
pub fn error_body(seen: &[(CheckId, Outcome, Option<&Exchange>)]) -> Verdict {
    let mut carried = 0usize;
    let mut bare = Vec::new();
    let mut already_failed = 0usize;
    let mut not_seen = Vec::new();
    let mut wrong_id = Vec::new();
    let mut labelled = Vec::new();
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
        // A request without MCP-Protocol-Version may go to a dual-era server's 2025-11-25
        // path, whose session layer refuses it before reading the id (both SDKs answer
        // -32600/-32000 with id null): only its 2026-07-28 refusal (-32020) is held to the id.
        // On a modern-only server any other code already fails headers.missing-version.
        let legacy_path =
            *id == CheckId::HeadersMissingVersion && ex.rpc_error_code() != Some(-32020);
        if let Some(probe) = TransportProbe::of_check(*id).filter(|_| !legacy_path) {
            let asked = Value::from(probe.rpc_id());
            if let Some(got) = error_id_mismatch(ex, &asked) {
                wrong_id.push(format!(
                    "{id}: {} carries id {got}, not the request's {asked}",
                    ex.summary()
                ));
            }
        }
        if !(400..500).contains(&ex.status) {
            continue;
        }
        if matches!(ex.rpc(), Some(Rpc::Error { .. })) {
            carried += 1;
            if let Some(media) = mislabelled_error(ex) {
                labelled.push(format!("{id}: {} served as {media}", ex.summary()));
            }
        } else if bare_4xx(ex) && *outcome == Outcome::Fail {
            already_failed += 1;
        } else if bare_4xx(ex) {
            let both = match &ex.body {
                super::http::Body::Json(v) => v.get("error").is_some_and(Value::is_object),
                _ => false,
            };
            bare.push(if both {
                format!(
                    "{id}: {}: its error object comes with a result (a JSON-RPC message carries one or the other, never both)",
                    ex.summary()
                )
            } else {
                format!("{id}: {}", ex.summary())
            });
        }
    }
    // What a wrong id or a mislabelled error body adds about the bare 4xx beside it.
    let also = match bare.len() {
        0 => String::new(),
        n => format!("; also {n} bare 4xx without a JSON-RPC body"),
    };
    if !wrong_id.is_empty() {
        return Verdict::fail(
            Severity::Medium,
            format!(
                "an error does not echo the request id (a client matching answers by id never sees it; an error MUST echo the request id): {}{also}",
                wrong_id.join("; ")
            ),
        );
    }
    if !labelled.is_empty() {
        return Verdict::warn(
            Severity::Low,
            format!(
                "a JSON-RPC error body served as another media type than application/json (a client that reads a refusal by its Content-Type sees an error page, not MCP): {}{also}",
                labelled.join("; ")
            ),
        );
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
    use crate::probe::test_support::{answer_with, expect};

    fn ex(status: u16, body: Body) -> Exchange {
        answer_with(status, None, body, &[])
    }

    /// A refusal of `check`'s probe with a JSON-RPC error echoing its id.
    fn rpc(check: CheckId, status: u16) -> Exchange {
        let id = TransportProbe::of_check(check).unwrap().rpc_id();
        with_id(status, json!(id), -32020)
    }

    fn with_id(status: u16, id: Value, code: i64) -> Exchange {
        ex(
            status,
            Body::Json(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "m"}}),
            ),
        )
    }

    /// A wrong id (fail, medium) and a mislabelled error body (warn, low) each name the bare
    /// 4xx beside them in the same words at the end, and add nothing when there is none.
    #[test]
    fn a_wrong_id_and_a_mislabelled_body_name_the_bare_4xx_beside_them_alike() {
        const ALSO: &str = "; also 1 bare 4xx without a JSON-RPC body";
        let bare = ex(400, Body::Empty);
        let wrong = with_id(400, json!(999), -32020);
        let html = answer_with(
            404,
            Some("text/html"),
            Body::Json(
                json!({"jsonrpc": "2.0", "id": TransportProbe::UnknownMethod.rpc_id(),
                "error": {"code": -32601, "message": "Method not found"}}),
            ),
            &[],
        );
        for (what, check, answer, want, needle) in [
            (
                "wrong id",
                CheckId::HeadersMissingMethod,
                &wrong,
                (Outcome::Fail, Some(Severity::Medium), None),
                "does not echo the request id",
            ),
            (
                "mislabelled",
                CheckId::MethodUnknown,
                &html,
                (Outcome::Warn, Some(Severity::Low), None),
                "served as text/html",
            ),
        ] {
            let alone = error_body(&[(check, Outcome::Pass, Some(answer))]);
            expect(what, &alone, want, &[needle]);
            assert!(
                !alone.observed.contains("; also"),
                "{what}: {}",
                alone.observed
            );
            let v = error_body(&[
                (check, Outcome::Pass, Some(answer)),
                (CheckId::MetaMissing, Outcome::Pass, Some(&bare)),
            ]);
            expect(what, &v, want, &[needle]);
            assert!(v.observed.ends_with(ALSO), "{what}: {}", v.observed);
        }
    }

    /// rt15 #9: refusals whose JSON-RPC error body is labelled `text/html` passed both
    /// checks. jsonrpc.error-body warns naming the media type; method.unknown fails (medium:
    /// "an HTML 404 fails"); JSON, `+json` and an event stream stay clean, and an answer
    /// without a Content-Type is not judged on it.
    #[test]
    fn a_refusal_labelled_html_is_not_a_clean_json_rpc_refusal() {
        use crate::model::Era;
        let labelled = |ct: Option<&str>, check: CheckId, code: i64| {
            let id = TransportProbe::of_check(check).unwrap().rpc_id();
            answer_with(
                404,
                ct,
                Body::Json(
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "Method not found"}}),
                ),
                &[],
            )
        };
        let html = labelled(Some("text/html"), CheckId::MethodUnknown, -32601);
        let v = error_body(&[(CheckId::MethodUnknown, Outcome::Fail, Some(&html))]);
        expect(
            "labelled text/html",
            &v,
            (Outcome::Warn, Some(Severity::Low), None),
            &["method.unknown: 404 text/html", "served as text/html"],
        );
        let m = TransportProbe::UnknownMethod.evaluate(&html, Era::Modern);
        assert_eq!(
            (m.outcome, m.severity),
            (Outcome::Fail, Some(Severity::Medium)),
            "{}",
            m.observed
        );
        assert!(m.observed.contains("labelled text/html"), "{}", m.observed);
        for ct in [
            Some("application/json"),
            Some("application/problem+json"),
            Some("text/event-stream"),
            None,
        ] {
            let ok = labelled(ct, CheckId::MethodUnknown, -32601);
            let v = error_body(&[(CheckId::MethodUnknown, Outcome::Pass, Some(&ok))]);
            assert_eq!(v.outcome, Outcome::Pass, "{ct:?}: {}", v.observed);
            let m = TransportProbe::UnknownMethod.evaluate(&ok, Era::Modern);
            assert_eq!(m.outcome, Outcome::Pass, "{ct:?}: {}", m.observed);
        }
    }

    /// rt15 #15: an error object that also carries a result is no valid refusal (JSON-RPC 2.0:
    /// never both): jsonrpc.error-body warns naming it, method.unknown does not pass; a
    /// `"result": null` beside the error is still read as the error.
    #[test]
    fn an_error_that_also_carries_a_result_is_no_refusal() {
        use crate::model::Era;
        let id = TransportProbe::UnknownMethod.rpc_id();
        let body = |result: Value| {
            answer_with(
                404,
                Some("application/json"),
                Body::Json(json!({"jsonrpc": "2.0", "id": id, "result": result,
                    "error": {"code": -32601, "message": "Method not found"}})),
                &[],
            )
        };
        let both = body(json!({"resultType": "complete"}));
        assert_eq!(both.rpc(), None);
        let m = TransportProbe::UnknownMethod.evaluate(&both, Era::Modern);
        assert!(m.outcome.is_problem(), "{}", m.observed);
        let v = error_body(&[(CheckId::MethodUnknown, Outcome::Pass, Some(&both))]);
        expect(
            "error and result",
            &v,
            (Outcome::Warn, Some(Severity::Low), None),
            &["its error object comes with a result"],
        );
        let null = body(Value::Null);
        assert_eq!(
            TransportProbe::UnknownMethod
                .evaluate(&null, Era::Modern)
                .outcome,
            Outcome::Pass
        );
    }

    #[test]
    fn bare_refusals_warn_unless_already_failed() {
        let bare = ex(400, Body::Empty);
        let good = rpc(CheckId::MetaMissing, 400);
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
        let good = rpc(CheckId::HeadersMissingMethod, 400);
        let good_meta = rpc(CheckId::MetaMissing, 400);
        let v = error_body(&[
            (CheckId::HeadersMissingMethod, Outcome::Pass, Some(&good)),
            (CheckId::MetaMissing, Outcome::Pass, Some(&good_meta)),
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
            (CheckId::MetaMissing, Outcome::Fail, Some(&good_meta)),
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

    /// Red-team round 9 defect 3: errors carrying another id (999, 0, or null although the
    /// id was readable) passed every check. Each refusal still counts for its own check;
    /// jsonrpc.error-body fails medium naming the check and both ids. A parse error may
    /// carry null; the same number written as a float is the same id.
    #[test]
    fn an_error_that_does_not_echo_the_request_id_fails() {
        let request = json!(TransportProbe::MissingMethod.rpc_id());
        for other in [json!(999), json!(0), Value::Null, json!("103")] {
            let answer = with_id(400, other.clone(), -32020);
            let v = error_body(&[
                (CheckId::HeadersMissingMethod, Outcome::Pass, Some(&answer)),
                (
                    CheckId::MetaMissing,
                    Outcome::Pass,
                    Some(&rpc(CheckId::MetaMissing, 400)),
                ),
            ]);
            assert_eq!(
                (v.outcome, v.severity),
                (Outcome::Fail, Some(Severity::Medium)),
                "{other}: {}",
                v.observed
            );
            for needle in [
                "does not echo the request id".to_string(),
                "headers.missing-method: 400".to_string(),
                format!("carries id {other}, not the request's {request}"),
            ] {
                assert!(v.observed.contains(&needle), "{needle}: {}", v.observed);
            }
            assert!(!v.observed.contains("meta.missing"), "{}", v.observed);
        }
        // A request without the version header: its -32020 refusal is held to the id; a
        // dual-era server's 2025-11-25 session layer (the Python SDK: 400 -32600 "Missing
        // session ID", id null) is not.
        let v = error_body(&[(
            CheckId::HeadersMissingVersion,
            Outcome::Pass,
            Some(&with_id(400, Value::Null, -32020)),
        )]);
        assert_eq!(v.outcome, Outcome::Fail, "{}", v.observed);
        let v = error_body(&[(
            CheckId::HeadersMissingVersion,
            Outcome::Pass,
            Some(&with_id(400, Value::Null, -32600)),
        )]);
        assert_eq!(v.outcome, Outcome::Pass, "{}", v.observed);
        // Allowed: a parse error with null; the same number as a float; an answer that is
        // not an error (judged by its own check).
        for (answer, what) in [
            (with_id(400, Value::Null, -32700), "parse error"),
            (with_id(400, json!(103.0), -32020), "float"),
            (ex(400, Body::Empty), "bare"),
        ] {
            assert!(error_id_mismatch(&answer, &request).is_none(), "{what}");
        }
    }
}
