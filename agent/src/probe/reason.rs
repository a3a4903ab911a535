//! The one decision "this answer was given for another reason than the rule a probe asks
//! about" (`checks.md` 4.1): a rate limit, an unavailable server or gateway, a server error
//! with no MCP answer in it, a refusal in front of the MCP layer, or the authorization layer
//! answering a probe that is not about authorization. Such an answer is no evidence either
//! way: the check is `unknown` with the reason (the merge names `probe.incomplete`), never a
//! pass and never a failure. Discovery ([`super::era::other_reason`]), the transport checks,
//! the token probes and the listing all ask here.

use super::http::{clip, Exchange, ExchangeError};
use crate::model::Cause;

/// What the probe asks about, as far as "another reason" depends on it: an answer that is
/// the probe's own subject is never another reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// A valid `server/discover` (or a list request): does the endpoint speak MCP? Any 403
    /// is a refusal in front of it; a 500 is left to the era rules (a 2025-11-25 server may
    /// answer an unknown method with one).
    Discover,
    /// The 2025-11-25 `initialize` sent beside `server/discover` to tell dual-era from
    /// modern-only: as for [`Subject::Rule`], a bare 500 (a framework's or gateway's generic
    /// error, which a modern-only server may give an unknown method too) says nothing about
    /// whether the legacy path works. Discovery's exemption for a 500 is about
    /// `server/discover` sent to a 2025-11-25 server, not about `initialize`.
    Initialize,
    /// A request changed in one way, asking about an MCP rule (headers, version, method,
    /// transport verbs, CORS): 401, a 403 without a JSON-RPC body, 429, 502-504 and a 500
    /// without a JSON-RPC body say nothing about the rule.
    Rule,
    /// The Origin guard: a 403 is its subject, whatever its body.
    Origin,
    /// A token probe: 401 and 403 are its subject (the authorization layer's answer), and so
    /// is a 500 (the server's own answer to the token).
    Token,
}

/// Why an answer says nothing about the rule under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Other {
    pub cause: Cause,
    /// What happened, e.g. `rate limited: answered 429 application/json …, Retry-After: 60`.
    pub head: String,
    /// What to do about it.
    pub advice: &'static str,
}

impl Other {
    /// `head (advice)`: for a check's evidence.
    pub fn explain(&self, what: &str) -> String {
        format!("{}: {what} was not observed; {}", self.head, self.advice)
    }
}

/// Whether `ex`, an answer to a probe about `subject`, was given for another reason.
/// `token`: the probe carried the operator's credential (a 401/403 is then that credential
/// refused, `credential-refused`).
pub fn another_reason(ex: &Exchange, subject: Subject, token: bool) -> Option<Other> {
    let seen = ex.summary();
    let retry = ex
        .header("retry-after")
        .map(|r| format!(", Retry-After: {}", clip(r, 40)))
        .unwrap_or_default();
    let mcp_body = ex.rpc().is_some();
    let other = |head: String, advice: &'static str| {
        Some(Other {
            cause: Cause::OtherReason,
            head,
            advice,
        })
    };
    // A body in a content coding the vantage did not ask for (it sends Accept-Encoding:
    // identity) was not observed. The token probes and the Origin guard's 403 are judged
    // on the status alone.
    if let Some(coding) = ex.encoding() {
        let status_only =
            subject == Subject::Token || (subject == Subject::Origin && ex.status == 403);
        if !status_only {
            return other(
                format!(
                    "answered {} with its body in Content-Encoding {} although only identity was accepted (Accept-Encoding: identity), so the body was not observed",
                    ex.status,
                    clip(coding, 20)
                ),
                "serve the endpoint's answers uncompressed to a client that asks for identity",
            );
        }
    }
    match ex.status {
        429 => other(
            format!("rate limited: answered {seen}{retry}"),
            "check again after the Retry-After time, or ask its operator to allow this vantage's address",
        ),
        503 => other(
            format!("unavailable: answered {seen}{retry} (the server, or a gateway in front of it, is overloaded or down)"),
            "check again later",
        ),
        // Statuses about the request the vantage sent, not about the rule a probe asks
        // about: its timing (408: the server, or a proxy in front of it, did not receive it
        // whole in the time it was prepared to wait) or its size (413: the body; 431: the
        // header fields). Whatever the subject, even a token probe's or the Origin guard's,
        // they say nothing about the rule (red team round 18, D5).
        408 => other(
            format!("the request was refused for its timing, not for the rule: answered {seen}{retry} (Request Timeout: the server, or a proxy in front of it, did not receive the request whole in the time it was prepared to wait)"),
            "this concerns the request this vantage sent, not the target's MCP rules: check the path between this vantage and the server (a slow link, a proxy's request timeout), then check again",
        ),
        413 => other(
            format!("the request was refused for its size, not for the rule: answered {seen} (Content Too Large: the request body is over a limit of the server or of a proxy in front of it)"),
            "this concerns the request this vantage sent, not the target's MCP rules: check the body size limit of the server and of any proxy in front of it",
        ),
        431 => other(
            format!("the request was refused for its size, not for the rule: answered {seen} (Request Header Fields Too Large: the request's header fields are over a limit of the server or of a proxy in front of it)"),
            "this concerns the request this vantage sent, not the target's MCP rules: check the header size limit of the server and of any proxy in front of it (a long credential named by --token-env counts)",
        ),
        502 | 504 => other(
            format!("a gateway answered {seen}: its upstream (the MCP server behind it) failed or did not answer in time"),
            "check the upstream and the gateway's timeout",
        ),
        // A bare 500 is no MCP answer to a changed request (a gateway's or framework's
        // generic error). Not for a token probe: the same request without a token got its
        // 401, so a 500 is the server's own answer to the token (not a 401, and no claim that
        // it was accepted); nor for discovery, left to the era rules.
        500 if matches!(subject, Subject::Rule | Subject::Origin | Subject::Initialize)
            && !mcp_body =>
        {
            other(
            format!("a server error without an MCP answer: answered {seen}"),
                "check the server's log and check again",
            )
        }
        401 | 403 if subject == Subject::Token => None,
        // The Origin guard's answer, with or without a credential.
        403 if subject == Subject::Origin => None,
        401 | 403 if token => Some(Other {
            cause: Cause::CredentialRefused,
            head: format!("the credential given was refused: answered {seen}"),
            advice: "check the token named by --token-env (its audience and scopes)",
        }),
        401 => {
            let challenge = ex
                .header("www-authenticate")
                .map(|c| format!(" (WWW-Authenticate: {})", clip(c, 120)))
                .unwrap_or_default();
            other(
                format!("the authorization layer answered {seen}{challenge}"),
                "name a credential with --token-env",
            )
        }
        403 if subject == Subject::Discover || !mcp_body => other(
            format!("refused before the MCP layer: answered {seen} (an access rule, a WAF or a gateway in front of the server refuses this vantage)"),
            "allow this vantage's address; if the endpoint needs a credential, it must answer 401 with a Bearer challenge (a credential named by --token-env is sent only after one)",
        ),
        _ => None,
    }
}

/// A redirect (3xx) in answer to a probe: never followed, so the rule the probe asks about
/// was not observed (`checks.md` 2.3, 4.1). The redirect itself is `redirect.none`'s (or
/// `redirect.cross-host`'s) finding, judged on every request the run sent; the probe's own
/// check is `unknown`, cause `other-reason`, never a failure under its id.
pub fn redirected(ex: &Exchange) -> Option<Other> {
    if !(300..400).contains(&ex.status) {
        return None;
    }
    let to = ex
        .header("location")
        .map(|l| format!(" to {}", clip(l, 200)))
        .unwrap_or_default();
    Some(Other {
        cause: Cause::OtherReason,
        head: format!(
            "answered with a redirect ({}{to}), which is never followed",
            ex.status
        ),
        advice: "the redirect itself is reported under redirect.none (redirect.cross-host for another origin)",
    })
}

/// A probe that got no HTTP answer at all (the vantage's own per-exchange timeout, a
/// connection closed or reset, a body cut short or past a read cap) where its answer was to
/// tell something the rest of the run depends on: nothing was observed, so it is `unknown`
/// for the exchange's own cause, never read as a refusal (the era rules read a missing
/// answer as "does not work" otherwise).
pub fn unanswered(err: &ExchangeError) -> Other {
    Other {
        cause: err.cause,
        head: match err.cause {
            Cause::SizeCap => format!("not seen whole ({})", err.message),
            _ => format!("not answered ({})", err.message),
        },
        advice: match err.cause {
            Cause::Timeout => "check that the server answers this request (a stuck process, or a proxy that holds POST without a live backend, looks like this), or raise --check-timeout if it answers slowly",
            Cause::SizeCap => "nothing was judged on the part that was read; an answer this large (or one that never ends) is worth a look at the server, whose other clients stop reading too",
            _ => "check the server's log and any proxy in front of it (crashes, restarts, connection or size limits), then check again",
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::probe::http::Body;
    use crate::probe::test_support::answer_with;

    fn ex(status: u16, body: Option<Value>) -> Exchange {
        answer_with(
            status,
            body.as_ref().map(|_| "application/json"),
            body.map_or(Body::Empty, Body::Json),
            &[("retry-after", "60")],
        )
    }

    fn rpc_err(status: u16) -> Exchange {
        ex(
            status,
            Some(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}})),
        )
    }

    #[test]
    fn the_table_by_subject() {
        use Subject::*;
        let head = |st: u16, body: Option<Value>, s: Subject, token: bool| {
            another_reason(&ex(st, body), s, token).map(|o| (o.cause, o.head))
        };
        for s in [Discover, Initialize, Rule, Origin, Token] {
            let (cause, h) = head(429, Some(json!({"error": "x"})), s, false).unwrap();
            assert_eq!(cause, Cause::OtherReason);
            assert!(
                h.starts_with("rate limited") && h.contains("Retry-After: 60"),
                "{h}"
            );
            assert!(head(503, None, s, false)
                .unwrap()
                .1
                .starts_with("unavailable"));
            assert!(head(502, None, s, false)
                .unwrap()
                .1
                .starts_with("a gateway"));
            assert!(head(504, None, s, false)
                .unwrap()
                .1
                .starts_with("a gateway"));
            for st in [200, 202, 400, 404, 405] {
                assert!(head(st, None, s, false).is_none(), "{st} {s:?}");
            }
        }
        // A bare 500 is another reason for a probe, not for discovery; a JSON-RPC 500 is the
        // MCP layer answering.
        assert!(head(500, None, Rule, false).is_some());
        assert!(head(500, None, Token, false).is_none());
        assert!(head(500, None, Discover, false).is_none());
        // initialize beside discovery: a bare 500 is no answer about the legacy path.
        assert_eq!(
            head(500, None, Initialize, false).unwrap().0,
            Cause::OtherReason
        );
        assert!(another_reason(&rpc_err(500), Initialize, false).is_none());
        assert!(another_reason(&rpc_err(500), Rule, false).is_none());
        assert!(another_reason(&rpc_err(500), Token, false).is_none());
        // 401: the subject of a token probe; the authorization layer for anything else;
        // the given credential refused when one was sent.
        assert!(head(401, None, Token, false).is_none());
        assert_eq!(head(401, None, Rule, false).unwrap().0, Cause::OtherReason);
        assert_eq!(
            head(401, None, Origin, false).unwrap().0,
            Cause::OtherReason
        );
        assert_eq!(
            head(401, None, Rule, true).unwrap().0,
            Cause::CredentialRefused
        );
        // 403: the Origin guard's subject; a bare one is a refusal in front of the MCP layer
        // for a rule probe; a JSON-RPC 403 is the MCP layer's own answer.
        assert!(head(403, None, Origin, false).is_none());
        assert!(
            head(403, None, Origin, true).is_none(),
            "the guard's 403 is no credential refused"
        );
        assert_eq!(
            head(401, None, Origin, true).unwrap().0,
            Cause::CredentialRefused
        );
        assert!(head(403, None, Token, false).is_none());
        assert!(head(403, None, Rule, false)
            .unwrap()
            .1
            .starts_with("refused before the MCP layer"));
        assert!(another_reason(&rpc_err(403), Rule, false).is_none());
        assert!(another_reason(&rpc_err(403), Discover, false).is_some());
    }

    /// Red team round 18, D5: 408, 413 and 431 describe the request the vantage sent (its
    /// timing, its body's size, its header fields' size), not the rule a probe asks about:
    /// another reason for every subject, with or without a JSON-RPC body, with or without a
    /// credential (never "the credential refused", never the Origin guard's answer).
    #[test]
    fn statuses_about_the_request_sent_are_another_reason_for_every_subject() {
        use Subject::*;
        for (status, what) in [(408, "timing"), (413, "size"), (431, "size")] {
            for s in [Discover, Initialize, Rule, Origin, Token] {
                for token in [false, true] {
                    for answer in [ex(status, None), rpc_err(status)] {
                        let o = another_reason(&answer, s, token)
                            .unwrap_or_else(|| panic!("{status} {s:?} {token}: another reason"));
                        assert_eq!(o.cause, Cause::OtherReason, "{status} {s:?} {token}");
                        assert!(
                            o.head.starts_with(&format!(
                                "the request was refused for its {what}, not for the rule: answered {status}"
                            )),
                            "{}",
                            o.head
                        );
                        assert!(
                            o.advice
                                .starts_with("this concerns the request this vantage sent, not the target's MCP rules"),
                            "{}",
                            o.advice
                        );
                    }
                }
            }
        }
    }

    /// The places that judged these statuses on their own, past this rule, now never get
    /// them: every transport probe on every leg (N2: `transport.notification` "not
    /// accepted, which is compliant", `transport.get`/`transport.delete` "refused by the
    /// 2025-11-25 path", `headers.missing-version` "(refused)"; N4 and D5 (a):
    /// `security.origin` "refused, but a foreign Origin MUST get 403", on tools/call too),
    /// and a token that must be refused ("accepted", critical).
    #[test]
    fn no_judge_reads_a_status_about_the_request_sent_as_the_targets_answer() {
        use crate::model::{Era, Outcome};
        use crate::probe::transport::{Leg, TransportProbe};
        let served = ex(200, Some(json!({"jsonrpc": "2.0", "id": 1, "result": {}})));
        for status in [408, 413, 431] {
            let answer = answer_with(
                status,
                Some("text/plain"),
                Body::Other {
                    excerpt: "request refused".into(),
                    len: 15,
                    invalid_json: false,
                },
                &[],
            );
            for probe in TransportProbe::MODERN {
                for era in [Era::Modern, Era::Dual, Era::Legacy] {
                    for leg in [
                        Leg::Main,
                        Leg::ToolsList,
                        Leg::ToolsCall,
                        Leg::FutureVersion,
                    ] {
                        let v = probe.judge_on(&answer, era, Some(&served), false, leg);
                        assert_eq!(
                            (v.outcome, v.severity, v.cause),
                            (Outcome::Unknown, None, Some(Cause::OtherReason)),
                            "{probe:?} {era:?} {leg:?} {status}: {}",
                            v.observed
                        );
                        assert!(
                            v.observed.starts_with("the request was refused for its"),
                            "{}",
                            v.observed
                        );
                    }
                }
            }
            let v = crate::probe::auth::must_refuse(&answer, "a random token");
            assert_eq!(
                (v.outcome, v.severity, v.cause),
                (Outcome::Unknown, None, Some(Cause::OtherReason)),
                "{status}: {}",
                v.observed
            );
        }
    }

    #[test]
    fn no_answer_keeps_the_exchanges_own_cause() {
        for cause in [Cause::Timeout, Cause::Reset] {
            let o = unanswered(&ExchangeError {
                cause,
                message: "accepted the connection, never answered within 2 s".into(),
            });
            assert_eq!(o.cause, cause);
            assert_eq!(
                o.head,
                "not answered (accepted the connection, never answered within 2 s)"
            );
            assert_eq!(
                o.advice.contains("--check-timeout"),
                cause == Cause::Timeout,
                "{}",
                o.advice
            );
        }
        // A read cap: the answer came, the vantage did not read it whole.
        let o = unanswered(&ExchangeError {
            cause: Cause::SizeCap,
            message: "answered 200 application/json [read stopped at the body size cap]".into(),
        });
        assert_eq!(o.cause, Cause::SizeCap);
        assert!(
            o.head.starts_with("not seen whole (answered 200"),
            "{}",
            o.head
        );
        assert!(!o.advice.contains("--check-timeout"), "{}", o.advice);
    }
}
