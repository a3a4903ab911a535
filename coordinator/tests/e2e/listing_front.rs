//! A reverse proxy on loopback in front of the fixture that changes one list method's
//! answer and nothing else: a rate limit, a gateway error, an unavailable upstream or an
//! authorization answer, on the first page or on a later one. None of these answers says
//! anything about the list (`checks.md` 4.1), so the rules that needed it are `unknown` with
//! that reason, never a finding about the server and never a pass.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use crate::support::{head_of, pass_on, streamed, Received, Served};

/// What the front answers instead of the upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// 429 with a non-JSON-RPC body and Retry-After.
    RateLimited,
    /// 429 with a JSON-RPC error body (-32000) and Retry-After.
    RateLimitedRpc,
    /// nginx's 502 page.
    BadGateway,
    /// 503 with an HTML body and Retry-After.
    Unavailable,
    /// 401 with a JSON-RPC error and a Bearer challenge.
    Unauthorized,
    /// The upstream's answer, its `nextCursor` (if any) made the number 12345.
    NumericCursor,
}

/// Which requests of `method` get the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Every request (the first page fails).
    Always,
    /// Requests with a cursor the server issued (the first page works, a later one fails).
    LaterPages,
}

#[derive(Debug, Clone, Copy)]
pub struct Mode {
    pub method: &'static str,
    pub when: When,
    pub answer: Answer,
    /// A capability removed from `server/discover`'s answer (its method is then probed as
    /// unadvertised).
    pub unadvertise: Option<&'static str>,
}

struct Front {
    upstream: String,
    mode: Mode,
    client: reqwest::Client,
}

/// A running front; it stops when dropped.
/// The front before the fixture, answering as `mode` says.
pub async fn front(upstream: std::net::SocketAddr, mode: Mode) -> Served {
    Served::start(|_| {
        let front = Arc::new(Front {
            upstream: format!("http://{upstream}"),
            mode,
            client: crate::support::http(),
        });
        axum::Router::new().fallback(handle).with_state(front)
    })
    .await
}

fn reply(status: u16, ctype: &str, body: Vec<u8>, extra: &[(&str, String)]) -> Response {
    let mut b = Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", ctype);
    for (k, v) in extra {
        b = b.header(*k, v);
    }
    b.body(Body::from(body)).unwrap()
}

const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n";

fn answer(a: Answer, id: &Value, addr: &str) -> Response {
    let retry = |s: &str| vec![("retry-after", s.to_string())];
    let rpc_error = |code: i64, message: &str| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string()
            .into_bytes()
    };
    match a {
        Answer::RateLimited => reply(
            429,
            "application/json",
            br#"{"error":"rate limited"}"#.to_vec(),
            &retry("30"),
        ),
        Answer::RateLimitedRpc => reply(
            429,
            "application/json",
            rpc_error(-32000, "rate limited"),
            &retry("30"),
        ),
        Answer::BadGateway => reply(
            502,
            "text/html",
            NGINX_502.as_bytes().to_vec(),
            &[("server", "nginx/1.24.0".to_string())],
        ),
        Answer::Unavailable => reply(
            503,
            "text/html",
            b"<html>Service Unavailable</html>".to_vec(),
            &retry("5"),
        ),
        Answer::NumericCursor => unreachable!("the upstream's answer, rewritten"),
        Answer::Unauthorized => reply(
            401,
            "application/json",
            rpc_error(-32001, "authorization required"),
            &[(
                "www-authenticate",
                format!("Bearer resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\""),
            )],
        ),
    }
}

async fn handle(State(f): State<Arc<Front>>, r: Received) -> Response {
    let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let rpc_method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let cursor = msg
        .pointer("/params/cursor")
        .and_then(Value::as_str)
        .filter(|c| *c != vantage_agent::probe::listing::BOGUS_CURSOR);
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    if r.method == Method::POST && rpc_method == f.mode.method {
        let hit = match f.mode.when {
            When::Always => true,
            When::LaterPages => cursor.is_some(),
        };
        if hit && f.mode.answer != Answer::NumericCursor {
            let host = r
                .headers
                .get("host")
                .and_then(|h| h.to_str().ok())
                .unwrap_or("127.0.0.1");
            return answer(f.mode.answer, &id, host);
        }
    }
    let rewrite = rpc_method == "server/discover" && f.mode.unadvertise.is_some();
    let renumber = rpc_method == f.mode.method && f.mode.answer == Answer::NumericCursor;
    let Some(resp) = pass_on(&f.client, &f.upstream, r).await else {
        return reply(599, "text/plain", Vec::new(), &[]);
    };
    let out = head_of(&resp, str::to_string);
    if rewrite {
        let bytes = resp.bytes().await.unwrap_or_default();
        let mut v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if let (Some(caps), Some(cap)) = (
            v.pointer_mut("/result/capabilities")
                .and_then(Value::as_object_mut),
            f.mode.unadvertise,
        ) {
            caps.remove(cap);
        }
        return out.body(Body::from(v.to_string())).unwrap();
    }
    if renumber && cursor.is_some() == (f.mode.when == When::LaterPages) {
        let bytes = resp.bytes().await.unwrap_or_default();
        let mut v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if let Some(next) = v.pointer_mut("/result/nextCursor") {
            *next = json!(12345);
        }
        return out.body(Body::from(v.to_string())).unwrap();
    }
    // Streamed through (subscriptions/listen stays open).
    out.body(streamed(resp)).unwrap()
}

mod tests {
    use secrecy::SecretString;
    use vantage_agent::catalog::{CheckId, FindingId};
    use vantage_agent::model::{Cause, Outcome, Severity};
    use vantage_coordinator::exit::{for_report, FailOn};
    use vantage_coordinator::report::{Decision, Report};
    use vantage_fixture::Fixture;

    use super::{front, Answer, Mode, When};
    use crate::support::shared::{assert_not_seen, assert_seen};
    use crate::support::{check_with, options, outcome};

    /// `method` answered `answer` when `when` says, nothing unadvertised.
    fn on(method: &'static str, when: When, answer: Answer) -> Mode {
        Mode {
            method,
            when,
            answer,
            unadvertise: None,
        }
    }

    async fn through(mode: Mode, token: bool) -> Report {
        let fixture = Fixture::start(&[]).await.unwrap();
        let front = front(fixture.addr, mode).await;
        let mut opts = options();
        if token {
            opts.credentials.token =
                Some(SecretString::from("vantage-test-token-listing".to_string()));
        }
        let report = check_with(&front.url(), opts).await;
        drop(front);
        drop(fixture);
        report
    }

    /// The rules named are `unknown` with `cause`, their evidence says why; no finding is
    /// above medium; the finding that names the gap is `gap` (medium); the decision is
    /// `unknown` with exit code `exit`.
    fn unknown_for(
        report: &Report,
        ids: &[CheckId],
        cause: Cause,
        needle: &str,
        gap: FindingId,
        exit: u8,
    ) {
        for id in ids {
            let c = outcome(report, *id);
            assert_seen(
                &c,
                (c.outcome, c.severity, c.cause),
                (Outcome::Unknown, None, Some(cause)),
                needle,
            );
        }
        assert!(
            !report.findings.iter().any(|f| f.severity >= Severity::High),
            "nothing about the server above medium: {:#?}",
            report.findings
        );
        let f = report
            .finding(gap)
            .unwrap_or_else(|| panic!("{gap} names the gap: {:#?}", report.findings));
        assert_eq!(f.severity, Severity::Medium);
        let evidence = f.evidence.join("\n");
        assert!(
            evidence.contains(ids[0].as_str()),
            "{gap} names {}: {evidence}",
            ids[0]
        );
        assert_eq!(report.decision, Decision::Unknown, "{}", report.reason);
        assert_eq!(for_report(report, FailOn::Blocked), exit);
    }

    /// [`unknown_for`] for an answer that is not about the server (`other-reason`): the
    /// gap is `probe.incomplete`, exit 4.
    fn unknown_for_another_reason(report: &Report, ids: &[CheckId], needle: &str) {
        unknown_for(
            report,
            ids,
            Cause::OtherReason,
            needle,
            FindingId::ProbeIncomplete,
            4,
        );
    }

    const TOOL_RULES: &[CheckId] = &[
        CheckId::CapsDiscoverMatchesHandlers,
        CheckId::ToolsListShape,
        CheckId::ToolsNameFormat,
        CheckId::ToolsDeterministicOrder,
        CheckId::ToolsNoPerConnectionVariance,
    ];

    /// Issue 15 review, item 1: tools/list answered 429, 502 or 503 is no evidence that the
    /// server breaks its capability: unknown (other-reason), probe.incomplete, exit 4.
    #[tokio::test]
    async fn a_tools_list_refused_by_a_rate_limit_or_a_gateway_is_unknown() {
        for (answer, needle) in [
            (Answer::RateLimited, "rate limited: answered 429"),
            (Answer::RateLimitedRpc, "rate limited: answered 429"),
            (Answer::BadGateway, "a gateway answered 502"),
            (Answer::Unavailable, "unavailable: answered 503"),
        ] {
            let report = through(on("tools/list", When::Always, answer), false).await;
            unknown_for_another_reason(&report, TOOL_RULES, needle);
            assert!(report
                .finding(FindingId::CapsDiscoverMatchesHandlers)
                .is_none());
        }
    }

    /// A 401 on tools/list when discover was served without a credential: the authorization
    /// layer answered, not the list. With no credential given that is the boundary (red team
    /// round 9, defect 2 (c)): the region is protected and the tool rules are not run for
    /// want of a credential (`auth.credential-required`), never `probe.incomplete`; with a
    /// credential given and refused there, `auth.credential-refused` (exit 3).
    #[tokio::test]
    async fn a_tools_list_answered_401_is_an_authorization_answer_not_a_broken_capability() {
        let mode = on("tools/list", When::Always, Answer::Unauthorized);
        let report = through(mode, false).await;
        assert!(report.regions[0].protected && !report.regions[0].authenticated);
        for id in TOOL_RULES {
            let c = outcome(&report, *id);
            assert_seen(&c, c.outcome, Outcome::Skip, "--token-env");
        }
        assert!(report.finding(FindingId::AuthCredentialRequired).is_some());
        assert!(
            report.finding(FindingId::ProbeIncomplete).is_none(),
            "{:#?}",
            report.findings
        );
        // With a credential, the tool rules are unknown for the credential refused there. The
        // boundary is judged from tools/list's challenge now, and this front's names protected
        // resource metadata it does not serve (auth.prm, high: its own fault, blocking).
        let report = through(mode, true).await;
        for id in TOOL_RULES {
            let c = outcome(&report, *id);
            assert_seen(
                &c,
                (c.outcome, c.cause),
                (Outcome::Unknown, Some(Cause::CredentialRefused)),
                "credential given was refused",
            );
        }
        assert!(report.finding(FindingId::AuthCredentialRefused).is_some());
        let high: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity >= Severity::High)
            .map(|f| f.id)
            .collect();
        assert_eq!(high, vec![FindingId::AuthPrm], "{:#?}", report.findings);
    }

    /// The unadvertised-method probes too: prompts removed from discover, and prompts/list
    /// rate limited, is no evidence that the server serves an unadvertised method.
    #[tokio::test]
    async fn an_unadvertised_method_probe_answered_429_is_unknown() {
        let mode = Mode {
            unadvertise: Some("prompts"),
            ..on("prompts/list", When::Always, Answer::RateLimited)
        };
        let report = through(mode, false).await;
        unknown_for_another_reason(
            &report,
            &[CheckId::CapsDiscoverMatchesHandlers],
            "prompts/list: rate limited",
        );
        // The tool rules had their list: they pass.
        assert_eq!(
            outcome(&report, CheckId::ToolsListShape).outcome,
            Outcome::Pass
        );
    }

    /// Issue 15 review, item 2: a 429 or 502 on the second page is not "the server refused
    /// the cursor it issued": the rest was not read, so the rules that needed it are
    /// unknown and pagination.cursor is no finding.
    #[tokio::test]
    async fn a_rate_limit_or_gateway_error_mid_list_leaves_the_rest_unread() {
        for (answer, needle) in [
            (Answer::RateLimited, "rate limited: answered 429"),
            (Answer::BadGateway, "a gateway answered 502"),
        ] {
            let report = through(on("tools/list", When::LaterPages, answer), false).await;
            unknown_for_another_reason(
                &report,
                &[
                    CheckId::PaginationCursor,
                    CheckId::ToolsListShape,
                    CheckId::ToolsNameFormat,
                    CheckId::CapsDiscoverMatchesHandlers,
                ],
                needle,
            );
            assert!(
                report.finding(FindingId::PaginationCursor).is_none(),
                "{:#?}",
                report.findings
            );
            let c = outcome(&report, CheckId::PaginationCursor);
            assert_not_seen(&c, &["refused the cursor it issued"]);
        }
    }

    /// Red team round 4, defect 2: a later page's nextCursor a number is the server saying
    /// the list goes on with a cursor no client can send back. The list is read in part:
    /// pagination.cursor fails medium, no rule that needed the rest passes, and the decision
    /// is `review` (the gate fails with --fail-on review: exit 2), never `pass`.
    #[tokio::test]
    async fn a_cursor_that_is_not_a_string_is_never_the_end_of_the_list() {
        let mode = on("tools/list", When::LaterPages, Answer::NumericCursor);
        let report = through(mode, false).await;
        let c = outcome(&report, CheckId::PaginationCursor);
        assert_seen(
            &c,
            (c.outcome, c.severity),
            (Outcome::Fail, Some(Severity::Medium)),
            "nextCursor is 12345, not a string",
        );
        for id in [
            CheckId::CapsDiscoverMatchesHandlers,
            CheckId::CacheHints,
            CheckId::ToolsListShape,
            CheckId::ToolsNameFormat,
        ] {
            let c = outcome(&report, id);
            assert_seen(&c, c.outcome, Outcome::Skip, "nextCursor is 12345");
        }
        let f = report.finding(FindingId::PaginationCursor).expect("named");
        assert_eq!(f.severity, Severity::Medium);
        assert_eq!(report.decision, Decision::Review, "{}", report.reason);
        assert_eq!(for_report(&report, FailOn::Review), 2);
    }
}
