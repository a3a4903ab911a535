//! Which metadata answers are evidence and which are not (red team round 3, defects 3, 4
//! and 6), and the challenge's reading of an answer given for another reason.

use serde_json::json;
use url::Url;

use super::*;
use crate::model::{Outcome, Severity};
use crate::probe::auth::challenge_verdict;
use crate::probe::http::{Body, ExchangeError};
use crate::probe::test_support::{answer_with, json_answer};

const PRM: &str = "http://127.0.0.1:4714/.well-known/oauth-protected-resource/mcp";

fn fetched(outcome: Result<Exchange, ExchangeError>) -> Fetched {
    Fetched {
        url: Url::parse(PRM).unwrap(),
        outcome,
        peer: None,
    }
}

fn answered(status: u16, headers: &[(&'static str, &str)]) -> Fetched {
    fetched(Ok(answer_with(status, None, Body::Empty, headers)))
}

fn failed(cause: Cause, message: &str) -> Fetched {
    fetched(Err(ExchangeError {
        cause,
        message: message.into(),
    }))
}

fn unseen(f: &Fetched) -> Option<Unseen> {
    f.unseen(&EgressPolicy::default())
}

#[test]
fn answers_for_another_reason_and_no_answer_are_not_observed() {
    let cases: Vec<(Fetched, Cause, &str)> = vec![
        (
            answered(429, &[("retry-after", "60")]),
            Cause::OtherReason,
            "rate limited: answered 429 (empty body), Retry-After: 60: the document was not observed",
        ),
        (answered(503, &[]), Cause::OtherReason, "unavailable"),
        (answered(502, &[]), Cause::OtherReason, "a gateway answered 502"),
        (answered(504, &[]), Cause::OtherReason, "a gateway answered 504"),
        (
            answered(500, &[]),
            Cause::OtherReason,
            "a server error without an MCP answer",
        ),
        (
            fetched(Ok(answer_with(
                200,
                Some("application/json"),
                Body::Other {
                    excerpt: "(40 bytes in Content-Encoding gzip, not decoded)".into(),
                    len: 40,
                    invalid_json: false,
                },
                &[("content-encoding", "gzip")],
            ))),
            Cause::OtherReason,
            "Content-Encoding gzip",
        ),
        (
            failed(Cause::Timeout, "accepted the connection, never answered within 2 s"),
            Cause::Timeout,
            "never answered within 2 s: no answer, so the document was not observed",
        ),
        (
            failed(
                Cause::Reset,
                "the connection was closed before a response (no status line)",
            ),
            Cause::Reset,
            "closed before a response",
        ),
        (
            failed(Cause::PolicyRefused, "refused by egress policy: 100.64.0.10"),
            Cause::PolicyRefused,
            "nothing was sent",
        ),
        (
            answered(301, &[("location", "/.well-known/oauth-protected-resource/mcp/")]),
            Cause::SameHost,
            "301 (empty body) to /.well-known/oauth-protected-resource/mcp/ (not followed: redirects never are",
        ),
        (
            answered(302, &[("location", "https://other.example/prm")]),
            Cause::CrossHost,
            "redirected, so the document was not observed",
        ),
        (
            answered(307, &[]),
            Cause::SameHost,
            "307 without a Location",
        ),
    ];
    for (f, cause, says) in cases {
        let u = unseen(&f).unwrap_or_else(|| panic!("{f:?} was taken as evidence"));
        assert_eq!(u.cause, cause, "{}", u.line);
        assert!(u.line.starts_with(PRM), "{}", u.line);
        assert!(u.line.contains(says), "{says:?} not in {}", u.line);
    }
}

#[test]
fn answers_a_client_gets_too_are_evidence() {
    let gzip = [("content-encoding", "gzip")];
    for f in [
        answered(404, &[]),
        answered(404, &gzip),
        answered(401, &[("www-authenticate", "Bearer")]),
        answered(403, &[]),
        answered(403, &gzip),
        answered(410, &[]),
        fetched(Ok(json_answer(200, json!({"resource": "x"})))),
        fetched(Ok(crate::probe::test_support::html_answer(200))),
        // A JSON-RPC 500: the MCP layer answered the metadata URL (it serves no document).
        fetched(Ok(json_answer(
            500,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "x"}}),
        ))),
        failed(Cause::Refused, "connect: Connection refused"),
        failed(Cause::Tls, "TLS handshake: the certificate is not trusted"),
        failed(Cause::Nxdomain, "NXDOMAIN"),
        failed(Cause::Malformed, "the answer was not valid HTTP"),
    ] {
        assert_eq!(unseen(&f), None, "{f:?}");
    }
}

#[test]
fn a_check_with_an_unseen_url_is_unknown_with_its_cause() {
    let u = |cause| Unseen {
        cause,
        line: "x".into(),
    };
    assert_eq!(not_observed("prm", &[], &["404".into()]), None);
    let v = not_observed("prm", &[u(Cause::OtherReason)], &["a".into(), "b".into()]).unwrap();
    assert_eq!(
        (v.outcome, v.cause, v.severity),
        (Outcome::Unknown, Some(Cause::OtherReason), None)
    );
    assert_eq!(v.observed, "prm not observed: a; b");
    let v = not_observed("prm", &[u(Cause::Timeout), u(Cause::PolicyRefused)], &[]).unwrap();
    assert_eq!(v.cause, Some(Cause::PolicyRefused));
    assert!(v.observed.starts_with("prm not fetched"), "{}", v.observed);
    let v = not_observed("prm", &[u(Cause::SameHost), u(Cause::Timeout)], &[]).unwrap();
    assert_eq!(v.cause, Some(Cause::SameHost));
}

/// Defect 4: with --expect-auth, an unauthenticated request answered for another reason
/// says nothing about the boundary; one the server or MCP layer answered is a failure.
#[test]
fn expect_auth_reads_another_reason_as_unknown() {
    let retry = [("retry-after", "60")];
    for (ex, says) in [
        (answer_with(429, None, Body::Empty, &retry), "rate limited"),
        (answer_with(502, None, Body::Empty, &[]), "a gateway"),
        (answer_with(503, None, Body::Empty, &[]), "unavailable"),
        (answer_with(504, None, Body::Empty, &[]), "a gateway"),
        (answer_with(500, None, Body::Empty, &[]), "a server error"),
        (
            answer_with(403, None, Body::Empty, &[]),
            "refused before the MCP layer",
        ),
    ] {
        let (v, rm) = challenge_verdict(&ex, true);
        assert_eq!(
            (v.outcome, v.cause, v.severity, rm),
            (Outcome::Unknown, Some(Cause::OtherReason), None, None),
            "{}: {}",
            ex.status,
            v.observed
        );
        assert!(
            v.observed.starts_with(says)
                && v.observed.contains(
                    "whether an unauthenticated request is refused with 401 was not observed"
                ),
            "{}",
            v.observed
        );
        // Without --expect-auth the boundary is not due: a skip, as before.
        assert_eq!(challenge_verdict(&ex, false).0.outcome, Outcome::Skip);
    }
    let gzip = [("content-encoding", "gzip")];
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    for ex in [
        json_answer(200, rpc.clone()),
        answer_with(200, None, Body::Empty, &gzip),
        json_answer(
            400,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "x"}}),
        ),
        json_answer(
            403,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "x"}}),
        ),
        answer_with(404, None, Body::Empty, &[]),
    ] {
        let (v, _) = challenge_verdict(&ex, true);
        assert_eq!(
            (v.outcome, v.severity),
            (Outcome::Fail, Some(Severity::High)),
            "{}: {}",
            ex.status,
            v.observed
        );
        assert!(v.observed.contains("--expect-auth"), "{}", v.observed);
    }
}
