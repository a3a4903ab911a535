//! Review items 2 and 3: what a target sends back never leaks a token, and never reaches a
//! terminal raw. A server that echoed the bearer token padded to straddle the 80-character
//! cut of a JSON-RPC `message` left 31 of its 32 characters in every format (the clip ran
//! before the scrub); a JSON-RPC `message` carrying ESC / OSC-8 reached stdout raw through
//! `discover.shape`, even with `--color never` in a pipe. Red team round 4, item 1: a
//! server that named its tools with pieces of the token ("a "+tok[1..17], "b "+tok[16..])
//! left 31 of its 32 characters in the findings of every format, and any piece in the JSON
//! report's surface: only the whole token and a prefix at a cut were redacted.

use std::sync::Arc;

use axum::body::Body;
use serde_json::{json, Value};
use vantage_fixture::Fixture;

use crate::review_support::{every_output, raw_server, response, rpc_error};
use crate::support::{head_of, pass_on, streamed, Received, Scratch, Served};

const TOKEN: &str = "Zq8vK2mN4pR7sT1wX5yB9cD3fG6hJ0kL";

/// Every run of 8 characters of `TOKEN`: none may appear anywhere.
fn fragments() -> Vec<&'static str> {
    (0..=TOKEN.len() - 8).map(|i| &TOKEN[i..i + 8]).collect()
}

#[tokio::test]
async fn a_token_echoed_across_a_cut_leaves_no_fragment_in_any_format_or_log() {
    let dir = Scratch::new("review-token-echo");
    // The review's repro: every request answered 404 -32601 whose message is the token
    // padded so that it straddles the 80-character cut; also echoed in a header and, at
    // the other cuts (60, 160), in a non-JSON body.
    let server = raw_server(Arc::new(|req: &str| {
        if req.contains("Authorization: Bearer") || req.contains("authorization: Bearer") {
            let message = format!("{}{TOKEN}", "p".repeat(81 - TOKEN.len()));
            response(
                "404 Not Found",
                &[
                    b"content-type: application/json",
                    format!("x-echo: {}{TOKEN}", "h".repeat(40)).as_bytes(),
                ],
                &rpc_error(-32601, &message),
            )
        } else {
            let body = format!("{}{TOKEN}", "b".repeat(61 - TOKEN.len()));
            response(
                "404 Not Found",
                &[b"content-type: text/plain"],
                body.as_bytes(),
            )
        }
    }))
    .await;
    let (outputs, code) = every_output(
        &server.url(),
        &["--token-env", "VT"],
        &[("VT", TOKEN)],
        &dir,
    )
    .await;
    for text in &outputs {
        for f in fragments() {
            assert!(
                !text.contains(f),
                "a fragment {f:?} of the token leaked:\n{text}"
            );
        }
    }
    // The checks ran and the echo was seen, redacted.
    assert!(
        outputs.iter().any(|t| t.contains("[redacted]")),
        "the echoed token was never captured"
    );
    assert_ne!(
        code, 0,
        "a server that answers 404 to everything is not a pass"
    );
}

/// The tools a hostile server adds to the first page of tools/list: named with pieces of
/// `TOKEN` (two invalid names that together carry 31 of its 32 characters, and a valid one
/// with a 12-character piece from its middle), a description carrying it whole.
fn token_tools() -> Vec<Value> {
    [
        format!("a {}", &TOKEN[1..17]),
        format!("b {}", &TOKEN[16..]),
        format!("a_{}", &TOKEN[10..22]),
    ]
    .into_iter()
    .map(|name| json!({"name": name, "description": TOKEN, "inputSchema": {"type": "object", "additionalProperties": false}}))
    .collect()
}

/// A tools/list answer (JSON or one SSE event) with [`token_tools`] added to its list.
fn add_token_tools(body: &[u8]) -> Vec<u8> {
    let add = |mut v: Value| -> String {
        if let Some(tools) = v.pointer_mut("/result/tools").and_then(Value::as_array_mut) {
            tools.extend(token_tools());
        }
        v.to_string()
    };
    let text = String::from_utf8_lossy(body);
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => add(v).into_bytes(),
        Err(_) => text
            .lines()
            .map(
                |l| match l.strip_prefix("data: ").map(serde_json::from_str) {
                    Some(Ok(v)) => format!("data: {}", add(v)),
                    _ => l.to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes(),
    }
}

/// A front before the fixture that adds [`token_tools`] to the first page of tools/list.
async fn token_named_tools(upstream: std::net::SocketAddr) -> Served {
    Served::start(move |_| {
        let client = crate::support::http();
        let upstream = format!("http://{upstream}");
        axum::Router::new().fallback(move |r: Received| async move {
            let msg: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let first_page =
                msg["method"] == "tools/list" && msg.pointer("/params/cursor").is_none();
            let Some(resp) = pass_on(&client, &upstream, r).await else {
                return axum::http::Response::builder()
                    .status(599)
                    .body(Body::empty())
                    .unwrap();
            };
            let out = head_of(&resp, str::to_string);
            if !first_page {
                // Streamed through (subscriptions/listen stays open).
                return out.body(streamed(resp)).unwrap();
            }
            let bytes = resp.bytes().await.unwrap_or_default();
            out.body(Body::from(add_token_tools(&bytes))).unwrap()
        })
    })
    .await
}

#[tokio::test]
async fn tool_names_made_of_token_pieces_leave_no_piece_in_any_format_or_log() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let front = token_named_tools(fixture.addr).await;
    let dir = Scratch::new("review-token-pieces");
    let (outputs, _) =
        every_output(&front.url(), &["--token-env", "VT"], &[("VT", TOKEN)], &dir).await;
    for text in &outputs {
        for f in fragments() {
            assert!(
                !text.contains(f),
                "a piece {f:?} of the token leaked:\n{text}"
            );
        }
    }
    // The tools were listed and reported, their names redacted: in the JSON report's surface
    // (all three, in the order served) and in the invalid-name finding of every format.
    let report: Value = serde_json::from_str(&outputs[5]).expect("the JSON report");
    let names: Vec<&str> = report["regions"][0]["surface"]["lists"]
        .as_array()
        .expect("a surface")
        .iter()
        .filter(|l| l["kind"] == "tools")
        .flat_map(|l| l["items"].as_array().unwrap())
        .filter_map(|i| i["name"].as_str())
        .filter(|n| n.contains("[redacted]"))
        .collect();
    assert_eq!(
        names,
        ["a [redacted]", "b [redacted]", "a_[redacted]"],
        "{}",
        outputs[5]
    );
    for (format, file, redacted) in [
        ("text", 2, "[redacted]"),
        ("junit", 8, "[redacted]"),
        ("markdown", 11, "&#91;redacted&#93;"),
    ] {
        assert!(
            outputs[file].contains(&format!("a {redacted}"))
                && outputs[file].contains(&format!("b {redacted}")),
            "{format}: the invalid names are not shown redacted:\n{}",
            outputs[file]
        );
    }
    drop(front);
    drop(fixture);
}

/// The bytes no output may carry raw: C0 controls but newline and tab (ESC, CR, BEL), DEL,
/// C1 controls (CSI U+009B) and the bidirectional override.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}' || c == '\u{2066}'
        })
        .collect()
}

#[tokio::test]
async fn hostile_text_in_message_headers_location_and_body_never_reaches_output_raw() {
    let esc =
        "\u{1b}[2J\u{1b}]8;;https://evil.example/\u{7}click me\u{1b}]8;;\u{7}\r\u{9b}31m\u{202e}";
    let long = "L".repeat(50_000);
    let hostile_message = format!("{esc}{long}");
    let message = hostile_message.clone();
    let server = raw_server(Arc::new(move |req: &str| {
        let first = req.lines().next().unwrap_or("");
        if first.starts_with("GET") {
            // A body with raw escapes, not JSON.
            let body = format!("<html>{esc}{}</html>", "x".repeat(5000));
            response("200 OK", &[b"content-type: text/html"], body.as_bytes())
        } else if first.starts_with("DELETE") {
            // An event stream whose data carries escapes.
            let body = format!("event: x\u{1b}[1m\ndata: {esc}\n\n");
            response(
                "200 OK",
                &[b"content-type: text/event-stream"],
                body.as_bytes(),
            )
        } else if first.starts_with("OPTIONS") {
            // Headers with obs-text (the bidi override as UTF-8) and a very long value.
            response(
                "204 No Content",
                &[
                    b"access-control-allow-origin: *",
                    format!(
                        "access-control-allow-headers: \u{202e}{}",
                        "A".repeat(20_000)
                    )
                    .as_bytes(),
                ],
                b"",
            )
        } else {
            response(
                "400 Bad Request",
                &[
                    b"content-type: application/json",
                    format!("x-long: {}", "H".repeat(20_000)).as_bytes(),
                ],
                &rpc_error(-32020, &message),
            )
        }
    }))
    .await;
    let redirect = raw_server(Arc::new(|_req: &str| {
        let location = format!("https://other.example/{}\u{202e}", "p".repeat(20_000));
        response(
            "307 Temporary Redirect",
            &[format!("location: {location}").as_bytes()],
            b"",
        )
    }))
    .await;
    for url in [server.url(), redirect.url()] {
        let dir = Scratch::new("review-escapes");
        let (outputs, code) = every_output(&url, &[], &[], &dir).await;
        for text in &outputs {
            let raw = raw_controls(text);
            assert!(
                raw.is_empty(),
                "raw control characters {raw:?} in output:\n{text}"
            );
            for line in text.lines() {
                assert!(
                    line.chars().count() <= 12_000,
                    "an unbounded line ({} chars)",
                    line.chars().count()
                );
            }
        }
        assert_ne!(code, 0);
    }
    // The message was captured, and shown as visible escapes.
    let dir = Scratch::new("review-escapes-json");
    let (outputs, _) = every_output(&server.url(), &[], &[], &dir).await;
    let json = &outputs[5];
    assert!(json.contains("\\\\u{1b}"), "{json}");
}
