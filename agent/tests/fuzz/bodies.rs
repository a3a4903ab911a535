//! Body classification and the capped readers: any bytes, cut into any chunks, are read no
//! further than their cap, the cap is named exactly when it was hit, nothing is invented,
//! and a body is JSON only when it is whole and parses.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::json;
use vantage_agent::probe::http::{classify_body, read_capped, read_sse, Body, Limits, SseRead};

use crate::fuzz;

const LIMITS: Limits = Limits {
    body_bytes: 64,
    sse_line_bytes: 32,
    sse_events: 4,
    excerpt_bytes: 16,
};

/// The body (input without its first byte) cut into chunks of 0 to 17 bytes, sizes drawn
/// from the first byte.
fn chunks(input: &[u8]) -> (Vec<u8>, VecDeque<Bytes>) {
    let Some((&seed, body)) = input.split_first() else {
        return (Vec::new(), VecDeque::new());
    };
    let mut state = u32::from(seed) | 0x100;
    let mut out = VecDeque::new();
    let mut rest = body;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = ((state >> 16) % 18) as usize;
        let n = n.min(rest.len());
        out.push_back(Bytes::copy_from_slice(&rest[..n]));
        rest = &rest[n..];
    }
    (body.to_vec(), out)
}

#[test]
fn fuzz_body_classification_and_capped_readers() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    fuzz(
        "bodies",
        &[
            b"\x07{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
            b"\x01data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
            b"\x02: ping\n\nevent: message\ndata: x\n\ndata: y\r\n\r\n",
            b"\x03<html><body>not json at all, and longer than the cap of sixty-four bytes</body></html>",
            b"\x09[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
            b"\x05\xff\xfe\xfd invalid utf-8",
        ],
        &[b"\n", b"\r\n", b"data: ", b"{", b"}", b"\"id\":1", b"\"result\"", b"\xff", b"\n\n"],
        |input| {
            let (body, parts) = chunks(input);
            let far = Instant::now() + Duration::from_secs(60);
            let (bytes, capped, timed_out) = rt.block_on(read_capped(parts.clone(), LIMITS.body_bytes, far));
            assert!(!timed_out);
            assert_eq!(bytes, body[..body.len().min(LIMITS.body_bytes)], "a prefix, no more than the cap");
            assert_eq!(capped.is_some(), body.len() > LIMITS.body_bytes, "the cap is named exactly when hit");
            for ct in [Some("application/json"), Some("text/html"), None] {
                match classify_body(&bytes, ct, &LIMITS, capped.is_some()) {
                    Body::Empty => assert!(bytes.is_empty()),
                    Body::Json(_) => {
                        assert!(capped.is_none(), "a capped body is never judged as JSON");
                        assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
                    }
                    Body::Other { excerpt, len, invalid_json } => {
                        assert_eq!(len, bytes.len());
                        assert!(excerpt.chars().count() <= LIMITS.excerpt_bytes + 1, "{excerpt}");
                        assert_eq!(invalid_json, ct == Some("application/json"));
                        assert!(!excerpt.chars().any(char::is_control), "{excerpt:?}");
                    }
                    other => panic!("not a classification of bytes: {other:?}"),
                }
            }
            for mode in [SseRead::UntilResponse, SseRead::FirstEvent] {
                let sse = rt.block_on(read_sse(parts.clone(), &LIMITS, far, Instant::now(), mode, Some(&json!(1))));
                assert!(!sse.timed_out);
                assert!(sse.events.len() <= LIMITS.sse_events, "{} events", sse.events.len());
                if mode == SseRead::FirstEvent {
                    assert!(sse.events.len() <= 1);
                }
                // In characters: an invalid UTF-8 byte decodes to U+FFFD (three bytes), as the
                // SSE standard's decoding says, but every character comes from a byte read.
                let data: usize = sse.events.iter().map(|e| e.data.chars().count()).sum();
                assert!(data <= body.len(), "events hold more than was read");
                if sse.capped.is_none() && !sse.ended {
                    // Stopped early: at the response or the first event, never for nothing.
                    assert!(!sse.events.is_empty());
                }
                if body.len() > LIMITS.body_bytes && sse.capped.is_none() && sse.ended {
                    panic!("more than the stream cap read without naming it");
                }
            }
        },
    );
}
