//! Review items 2 and 3: what a target sends back never leaks a token, and never reaches a
//! terminal raw. A server that echoed the bearer token padded to straddle the 80-character
//! cut of a JSON-RPC `message` left 31 of its 32 characters in every format (the clip ran
//! before the scrub); a JSON-RPC `message` carrying ESC / OSC-8 reached stdout raw through
//! `discover.shape`, even with `--color never` in a pipe.

use std::sync::Arc;

use crate::review_support::{every_output, response, rpc_error, RawServer};
use crate::support::Scratch;

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
    let server = RawServer::start(Arc::new(|req: &str| {
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
    let server = RawServer::start(Arc::new(move |req: &str| {
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
    let redirect = RawServer::start(Arc::new(|_req: &str| {
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
