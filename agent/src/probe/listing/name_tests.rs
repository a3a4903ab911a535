//! Red team round 4 #4 through a real server: `tools.name-format` judged the captured
//! escapes, not the names the server sent. `x\u{1b}` written out and `x` then ESC were
//! "listed twice", 126 letters and two U+0001 were "136 characters", and ESC, CSI or U+202E
//! were "characters outside …: '\\', '{', '}'". Each name is judged as sent, and the evidence
//! carries none of them raw.

use std::sync::Arc;

use serde_json::{json, Value};

use super::test_server::{check, expect, listing, server};
use crate::catalog::CheckId;
use crate::model::{Outcome, Severity};

/// Answers tools/list with `names` (one complete page).
async fn naming_server(names: Vec<String>) -> std::net::SocketAddr {
    server(Arc::new(move |req: &Value| {
        let tools: Vec<Value> = names
            .iter()
            .map(|n| json!({"name": n, "inputSchema": {"type": "object", "additionalProperties": false}}))
            .collect();
        let body = json!({"jsonrpc": "2.0", "id": req["id"], "result": {
            "tools": tools, "resultType": "complete", "ttlMs": 60000, "cacheScope": "public"}});
        (200, body.to_string())
    }))
    .await
}

#[tokio::test]
async fn tool_names_are_judged_as_sent_and_shown_escaped() {
    let names = vec![
        "x\\u{1b}".to_string(),
        "x\u{1b}".to_string(),
        format!("{}\u{1}\u{1}", "a".repeat(126)),
        "c1\u{9b}31mRED".to_string(),
        "bidi\u{202e}gnp.exe".to_string(),
    ];
    let addr = naming_server(names).await;
    let (results, complete) = listing(addr, json!({"tools": {}})).await;
    assert_eq!(complete, [true]);
    let v = check(&results, CheckId::ToolsNameFormat);
    expect("names", v, (Outcome::Warn, Some(Severity::Low), None), &[]);
    let outside = ": characters outside [A-Za-z0-9_.-]: ";
    let a = "a".repeat(126);
    assert_eq!(
        v.observed,
        [
            format!("x\\u{{5c}}u{{1b}}{outside}'\\\\', '{{', '}}'"),
            format!("x\\u{{1b}}{outside}U+001B"),
            format!("{a}\\u{{1}}\\u{{1}}{outside}U+0001"),
            format!("c1\\u{{9b}}31mRED{outside}U+009B"),
            format!("bidi\\u{{202e}}gnp.exe{outside}U+202E"),
        ]
        .join("; ")
    );
    // The two names are two tools, in the same order over two readings and two connections.
    for id in [
        CheckId::ToolsDeterministicOrder,
        CheckId::ToolsNoPerConnectionVariance,
    ] {
        let c = check(&results, id);
        assert_eq!(c.outcome, Outcome::Pass, "{id}: {}", c.observed);
        assert!(c.observed.contains("5 tools"), "{id}: {}", c.observed);
    }
    for c in &results {
        assert!(
            !c.observed
                .chars()
                .any(|ch| ch.is_control() || ch == '\u{202e}'),
            "{}: {:?}",
            c.id,
            c.observed
        );
    }
}
