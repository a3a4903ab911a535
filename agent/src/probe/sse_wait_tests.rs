//! Red team round 4: tools/list answered as an event stream that stays open with keepalives
//! and never a response was "answered 200 text/event-stream (0 SSE events)", the same words as
//! a stream that closed empty, and a high finding; it was this vantage's own wait that ended
//! it. A stream the clock ended before its response is no answer (cause timeout).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::model::Cause;
use crate::probe::test_support::{discover_within, serve};

const HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-accel-buffering: no\r\n\r\n";

/// A server that answers with an event stream: `events`, then keepalive comments every 100 ms
/// while `open`, else the end of the stream.
async fn stream(events: &'static [u8], open: bool) -> std::net::SocketAddr {
    serve(move |mut s| async move {
        let mut buf = vec![0u8; 65536];
        let _ = s.read(&mut buf).await;
        let _ = s.write_all(HEAD).await;
        let _ = s.write_all(events).await;
        if open {
            loop {
                if s.write_all(b": keepalive\n\n").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let _ = s.shutdown().await;
    })
    .await
    .0
}

#[tokio::test]
async fn a_stream_the_clock_ended_before_its_response_is_no_answer() {
    let addr = stream(b"", true).await;
    let e = discover_within(addr, Duration::from_millis(800))
        .await
        .expect_err("no answer");
    assert_eq!(e.cause, Cause::Timeout);
    assert!(
        e.message
            .contains("the event stream stayed open without a response within"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn a_stream_that_ends_or_answers_is_read_as_it_came() {
    // Closed empty: an answer without a response (the server's), read as it came.
    let ex = discover_within(stream(b"", false).await, Duration::from_secs(5))
        .await
        .expect("an answer");
    assert!(ex.rpc().is_none());
    // The response, then keepalives: the answer.
    let ex = discover_within(
        stream(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\"}}\n\n",
            true,
        )
        .await,
        Duration::from_secs(5),
    )
    .await
    .expect("an answer");
    assert!(ex.rpc().is_some());
}

/// An event stream whose whole body is `event`, its end declared by Content-Length: the end
/// arrives with the event, whatever the scheduling.
async fn one_event_with_its_length(event: &'static [u8]) -> std::net::SocketAddr {
    serve(move |mut s| async move {
        let mut buf = vec![0u8; 65536];
        let _ = s.read(&mut buf).await;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
            event.len()
        );
        let _ = s.write_all(&[head.as_bytes(), event].concat()).await;
        // Kept open: the end is the length's, not the connection's.
        let _ = s.read(&mut buf).await;
    })
    .await
    .0
}

/// rt15 #8: `SseRead::FirstEventThenEnd` (the listen probe) sees a stream that ends with its
/// first event (`ended`), and leaves one that stays open at the end of its window (here the
/// old 2 ms grace), neither ended nor timed out.
#[tokio::test]
async fn the_listen_read_sees_an_end_right_after_the_first_event() {
    let event: &'static [u8] = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{}}\n\n";
    for open in [false, true] {
        let addr = if open {
            stream(event, true).await
        } else {
            one_event_with_its_length(event).await
        };
        let client = crate::egress::loopback_test_client();
        let url = url::Url::parse(&format!("http://{addr}/mcp")).unwrap();
        let req =
            crate::probe::http::ProbeRequest::modern("subscriptions/listen", 7, Default::default());
        let (ex, _) = crate::probe::http::exchange(
            &client,
            &url,
            &req,
            &crate::probe::http::Limits::default(),
            Duration::from_secs(30),
            crate::probe::http::SseRead::FirstEventThenEnd(crate::probe::http::Watch {
                window: Duration::from_millis(2),
                by: std::time::Instant::now() + Duration::from_secs(30),
            }),
        )
        .await
        .unwrap();
        let crate::probe::http::Body::Sse(sse) = &ex.body else {
            panic!("not read as a stream: {ex:?}");
        };
        assert_eq!(sse.events.len(), 1, "open={open}");
        assert_eq!((sse.ended, sse.timed_out), (!open, false), "open={open}");
    }
}
