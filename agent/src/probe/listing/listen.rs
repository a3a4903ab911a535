//! `subscriptions/listen` (spec section 3.5), when the server advertises a `listChanged`
//! capability or `resources.subscribe` (in 2026-07-28 resource subscriptions are listen's
//! `resourceSubscriptions`): `listen.sse` (the answer is an SSE stream that stays open) and
//! `listen.ack-first` (its first event acknowledges the subscription, tagged with the
//! request id, with the honoured filter). The vantage reads the acknowledgement, watches
//! the stream for the listen window (`--listen-window`, beside the rest of the listing) and
//! closes it; it never waits for a change.

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::model::{Cause, Severity};
use crate::probe::http::{Body, Exchange, ExchangeError, ProbeRequest};
use crate::probe::verdict::Verdict;

const ACK: &str = "notifications/subscriptions/acknowledged";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The filter to ask for: every list change the server advertises; on a server that
/// advertises only `resources.subscribe`, an empty `resourceSubscriptions` (a subset the
/// spec accepts, subscribing to nothing: the stream and its acknowledgement are what is
/// checked). `None`: nothing to listen for.
pub(crate) fn filter(caps: &Value) -> Option<Map<String, Value>> {
    let mut f = Map::new();
    for (cap, key) in [
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ] {
        if caps.pointer(&format!("/{cap}/listChanged")) == Some(&Value::Bool(true)) {
            f.insert(key.into(), json!(true));
        }
    }
    if f.is_empty() && caps.pointer("/resources/subscribe") == Some(&Value::Bool(true)) {
        f.insert("resourceSubscriptions".into(), json!([]));
    }
    (!f.is_empty()).then_some(f)
}

pub(crate) fn request(id: i64, filter: &Map<String, Value>) -> ProbeRequest {
    ProbeRequest::modern(
        "subscriptions/listen",
        id,
        Map::from_iter([("notifications".to_string(), Value::Object(filter.clone()))]),
    )
}

/// The two verdicts (`listen.sse`, `listen.ack-first`) on the answer to [`request`], its
/// stream watched for `window` after its first event.
pub(crate) fn evaluate(
    got: &Result<Exchange, ExchangeError>,
    id: i64,
    asked: &Map<String, Value>,
    token: bool,
    window: Duration,
) -> (Verdict, Verdict) {
    let ex = match got {
        Ok(ex) => ex,
        Err(e) => {
            let v = Verdict::unknown(
                e.cause,
                format!("subscriptions/listen got no answer: {}", e.message),
            );
            return (v.clone(), v);
        }
    };
    if let Some((cause, why)) = super::rules::another_reason(ex, "subscriptions/listen", token) {
        let v = Verdict::unknown(cause, why);
        return (v.clone(), v);
    }
    let s = ex.summary();
    if !(200..300).contains(&ex.status) || !ex.is_sse() {
        let why = if ex.status == 404 && ex.rpc_error_code() == Some(-32601) {
            format!("{s}: a listChanged or resources.subscribe capability is advertised, but subscriptions/listen is not served")
        } else {
            format!("{s}: subscriptions/listen MUST answer with a text/event-stream")
        };
        return (
            Verdict::fail(Severity::Medium, why),
            Verdict::skip("no stream to read (see listen.sse)"),
        );
    }
    let Body::Sse(sse) = &ex.body else {
        return (
            Verdict::pass(s),
            Verdict::unknown(Cause::Malformed, "the stream was not read"),
        );
    };
    let Some(first) = sse.events.first() else {
        let sse_v = if sse.ended {
            Verdict::fail(
                Severity::Medium,
                format!("{s}: the stream ended before any event"),
            )
        } else {
            Verdict::pass(format!("{s}: the stream stayed open"))
        };
        // The stream stayed open and silent until this vantage's own wait ended: nothing
        // came before the acknowledgement, so the rule was not broken, only not observed
        // (`checks.md` 4.1: the vantage's timeout is never a finding about the target).
        let ack = if sse.timed_out {
            Verdict::unknown(
                Cause::Timeout,
                format!(
                    "{s}: the stream stayed open, but no event arrived within this vantage's wait (--check-timeout, {} here), so whether the acknowledgement comes first was not observed; raise --check-timeout if the server acknowledges slowly",
                    crate::probe::http::fmt_wait(std::time::Duration::from_millis(ex.elapsed_ms))
                ),
            )
        } else if let Some(cap) = sse.capped {
            Verdict::unknown(Cause::SizeCap, format!("the read stopped at the {cap} cap"))
        } else {
            Verdict::fail(Severity::Medium, "the stream carried no event".to_string())
        };
        return (sse_v, ack);
    };
    (
        stays_open(&s, sse, id, window),
        ack(first.json.as_ref(), id, asked),
    )
}

/// `listen.sse` once a first event arrived: the stream must stay open. The probe watches it
/// for `window` after that event (`SseRead::FirstEventThenEnd`), and says only what it saw.
/// One that ended inside the window without a final result never delivers a change (a
/// client reconnects in a loop or misses every notification): medium. A final result there
/// is a graceful close (SHOULD; the server MAY end a subscription so), still only moments
/// after the subscription began: low. Open at the window's end: a pass for that window,
/// saying so (a later end is not seen). Open when this check's own deadline stopped the
/// watch short of the window: not observed (`unknown`, the vantage's deadline).
fn stays_open(s: &str, sse: &crate::probe::http::SseBody, id: i64, window: Duration) -> Verdict {
    let w = crate::probe::http::fmt_wait(window);
    let its = match sse.events.first().and_then(|e| e.json.as_ref()) {
        Some(v) if v.get("method").and_then(Value::as_str) == Some(ACK) => "its acknowledgement",
        _ => "its first event",
    };
    // How long the stream was watched, as measured (an end, a final result, a cut watch).
    let after = match sse.watched_ms {
        Some(ms) => format!("{ms} ms after {its}"),
        None => format!("after {its}"),
    };
    let final_result = sse.events.iter().skip(1).any(|e| {
        e.json.as_ref().is_some_and(|v| {
            v.get("id")
                .is_some_and(|got| crate::probe::http::same_id(got, &json!(id)))
                && (v.get("result").is_some() || v.get("error").is_some())
        })
    });
    if final_result {
        Verdict::warn(
            Severity::Low,
            format!("{s}: the stream closed with a final result {after}, inside the {w} listen window (a graceful close); a subscription's stream stays open until the server shuts down"),
        )
    } else if sse.ended {
        Verdict::fail(
            Severity::Medium,
            format!("{s}: the stream ended {after}, inside the {w} listen window, without a final result; subscriptions/listen's stream MUST stay open (a client reconnects in a loop or misses every change)"),
        )
    } else if sse.timed_out {
        Verdict::unknown(
            Cause::Deadline,
            format!("{s}: open {after} when this check's deadline stopped the watch, short of the {w} listen window, so whether the stream stays open was not observed; raise --timeout or lower --listen-window"),
        )
    } else {
        // Open when the window ended: exactly the window was seen (the read stops there).
        Verdict::pass(format!(
            "{s}: open {w} after {its} (the listen window watched; a stream that ends later is not seen)"
        ))
    }
}

fn ack(first: Option<&Value>, id: i64, asked: &Map<String, Value>) -> Verdict {
    let Some(msg) = first else {
        return Verdict::fail(Severity::Medium, "the first event is not JSON".to_string());
    };
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    if method != ACK {
        let what = if method.is_empty() {
            crate::probe::http::clip(&msg.to_string(), 80)
        } else {
            method.to_string()
        };
        return Verdict::fail(
            Severity::Medium,
            format!("the first event is {what}, not {ACK}"),
        );
    }
    let mut problems = Vec::new();
    match msg
        .pointer("/params/_meta")
        .and_then(|m| m.get(SUBSCRIPTION_ID))
    {
        Some(v) if *v == json!(id) => {}
        Some(v) => problems.push(format!(
            "_meta subscriptionId is {v}, not the request id {id}"
        )),
        None => problems.push("no _meta subscriptionId".to_string()),
    }
    match msg
        .pointer("/params/notifications")
        .and_then(Value::as_object)
    {
        None => problems.push("no params.notifications (the honoured filter)".to_string()),
        Some(honoured) => {
            let extra: Vec<&String> = honoured
                .iter()
                .filter(|(k, v)| {
                    **v == Value::Bool(true) && asked.get(*k) != Some(&Value::Bool(true))
                })
                .map(|(k, _)| k)
                .collect();
            if !extra.is_empty() {
                problems.push(format!(
                    "the honoured filter adds what was not asked for: {extra:?}"
                ));
            }
        }
    }
    if problems.is_empty() {
        Verdict::pass(format!("{ACK} first, tagged with subscriptionId {id}"))
    } else {
        Verdict::fail(Severity::Medium, format!("{ACK}: {}", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;

    use super::*;
    use crate::model::Outcome;
    use crate::probe::http::SseBody;
    use crate::probe::listing::test_server::expect;
    use crate::probe::sse::SseEvent;

    const FAIL_MEDIUM: (Outcome, Option<Severity>, Option<Cause>) =
        (Outcome::Fail, Some(Severity::Medium), None);
    const W: Duration = crate::probe::http::LISTEN_WINDOW;

    fn sse(events: Vec<Value>, ended: bool) -> Result<Exchange, ExchangeError> {
        Ok(Exchange {
            status: 200,
            headers: HeaderMap::new(),
            content_type: Some("text/event-stream".into()),
            body: Body::Sse(SseBody {
                events: events
                    .into_iter()
                    .map(|v| SseEvent {
                        event: Some("message".into()),
                        id: None,
                        data: v.to_string(),
                        json: Some(v),
                    })
                    .collect(),
                ended,
                ..Default::default()
            }),
            elapsed_ms: 1,
            first_byte_ms: 1,
            capped: None,
        })
    }

    fn asked() -> Map<String, Value> {
        filter(&json!({"tools": {"listChanged": true}, "prompts": {}})).unwrap()
    }

    #[test]
    fn the_filter_follows_the_capabilities() {
        assert_eq!(
            asked(),
            Map::from_iter([("toolsListChanged".to_string(), json!(true))])
        );
        assert_eq!(filter(&json!({"tools": {}})), None);
        // Red-team round 9 defect 11: resources.subscribe alone is something to listen for.
        assert_eq!(
            filter(&json!({"tools": {}, "resources": {"subscribe": true}})),
            Some(Map::from_iter([(
                "resourceSubscriptions".to_string(),
                json!([])
            )]))
        );
        assert_eq!(filter(&json!({"resources": {"subscribe": false}})), None);
    }

    #[test]
    fn a_good_acknowledgement() {
        let ack = json!({"jsonrpc": "2.0", "method": ACK, "params": {
            "_meta": {SUBSCRIPTION_ID: 7}, "notifications": {"toolsListChanged": true}}});
        let (s, a) = evaluate(&sse(vec![ack], false), 7, &asked(), false, W);
        assert_eq!(
            (s.outcome, a.outcome),
            (Outcome::Pass, Outcome::Pass),
            "{} / {}",
            s.observed,
            a.observed
        );
    }

    /// rt15 #8: a stream that ends with or right after the acknowledgement never delivers a
    /// change: listen.sse fails (medium) without a final result, warns (low) with one; the
    /// acknowledgement itself is still judged.
    #[test]
    fn a_stream_that_ends_after_the_acknowledgement() {
        let ack = json!({"jsonrpc": "2.0", "method": ACK, "params": {
            "_meta": {SUBSCRIPTION_ID: 7}, "notifications": {"toolsListChanged": true}}});
        let (s, a) = evaluate(&sse(vec![ack.clone()], true), 7, &asked(), false, W);
        expect(
            "ended",
            &s,
            FAIL_MEDIUM,
            &["ended after its acknowledgement, inside the 250 ms listen window, without a final result"],
        );
        assert_eq!(a.outcome, Outcome::Pass, "{}", a.observed);
        let done = json!({"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete",
            "_meta": {SUBSCRIPTION_ID: 7}}});
        for ended in [true, false] {
            let (s, _) = evaluate(
                &sse(vec![ack.clone(), done.clone()], ended),
                7,
                &asked(),
                false,
                W,
            );
            expect(
                "final result",
                &s,
                (Outcome::Warn, Some(Severity::Low), None),
                &["closed with a final result after its acknowledgement, inside the 250 ms listen window (a graceful close)"],
            );
        }
    }

    #[test]
    fn broken_acknowledgements() {
        let cases = [
            (
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}),
                "not notifications/subscriptions",
            ),
            (
                json!({"jsonrpc": "2.0", "method": ACK, "params": {"notifications": {"toolsListChanged": true}}}),
                "no _meta subscriptionId",
            ),
            (
                json!({"jsonrpc": "2.0", "method": ACK, "params": {"_meta": {SUBSCRIPTION_ID: "7"}, "notifications": {}}}),
                "not the request id",
            ),
            (
                json!({"jsonrpc": "2.0", "method": ACK, "params": {"_meta": {SUBSCRIPTION_ID: 7}, "notifications": {"promptsListChanged": true}}}),
                "adds what was not asked",
            ),
        ];
        for (event, needle) in cases {
            let (s, a) = evaluate(&sse(vec![event], false), 7, &asked(), false, W);
            assert_eq!(s.outcome, Outcome::Pass);
            expect(needle, &a, FAIL_MEDIUM, &[needle]);
        }
    }

    #[test]
    fn not_a_stream() {
        let json_answer = Ok(crate::probe::test_support::json_answer(
            404,
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}),
        ));
        let (s, a) = evaluate(&json_answer, 7, &asked(), false, W);
        expect("404", &s, FAIL_MEDIUM, &["not served"]);
        assert_eq!(a.outcome, Outcome::Skip);
        let (s, _) = evaluate(&sse(vec![], true), 7, &asked(), false, W);
        assert_eq!(s.outcome, Outcome::Fail);
    }

    /// No answer, or a stream read stopped at a cap: no evidence, with its cause (never a
    /// pass, never a failure of the server).
    #[test]
    fn unanswered_or_capped_is_unknown_with_its_cause() {
        let lost = Err(ExchangeError {
            cause: Cause::PolicyRefused,
            message: "refused by egress policy".into(),
        });
        let (s, a) = evaluate(&lost, 7, &asked(), false, W);
        for v in [&s, &a] {
            expect(
                "lost",
                v,
                (Outcome::Unknown, None, Some(Cause::PolicyRefused)),
                &[],
            );
        }
        let mut capped = sse(vec![], false);
        if let Ok(Exchange {
            body: Body::Sse(b), ..
        }) = &mut capped
        {
            b.capped = Some("SSE line");
        }
        let (s, a) = evaluate(&capped, 7, &asked(), false, W);
        assert_eq!(s.outcome, Outcome::Pass, "{}", s.observed);
        expect(
            "capped",
            &a,
            (Outcome::Unknown, None, Some(Cause::SizeCap)),
            &["SSE line cap"],
        );
    }

    /// Red-team round 9 defect 7: a stream open and silent until this vantage's own wait
    /// (--check-timeout) ended failed listen.ack-first (medium). Nothing came before the
    /// acknowledgement: unknown for the timeout, naming the flag; a wrong first event still
    /// fails (`broken_acknowledgements`).
    #[test]
    fn a_silent_stream_cut_by_our_own_wait_is_unknown() {
        let mut silent = sse(vec![], false);
        if let Ok(ex) = &mut silent {
            ex.elapsed_ms = 2004;
            if let Body::Sse(b) = &mut ex.body {
                b.timed_out = true;
            }
        }
        let (s, a) = evaluate(&silent, 7, &asked(), false, W);
        expect("silent", &s, (Outcome::Pass, None, None), &["stayed open"]);
        expect(
            "silent",
            &a,
            (Outcome::Unknown, None, Some(Cause::Timeout)),
            &["--check-timeout, 2.0 s here", "was not observed"],
        );
    }
}

#[cfg(test)]
#[path = "listen_tests.rs"]
mod listen_tests;
