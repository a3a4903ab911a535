//! Red-team defect 8 (front.py idswap): list answers whose JSON-RPC id is not the request's
//! were read as the list, and the run passed. A result that does not echo its request's id
//! is not an answer to it (transport.post-result-shape, a MUST): the advertised list does
//! not work for a client, which matches answers by id.

use std::sync::Arc;

use serde_json::{json, Value};

use super::test_server::{check, expect, listing, server};
use crate::catalog::CheckId;
use crate::model::{Outcome, Severity};

/// Answers every request with a complete, empty list result carrying id 987654.
async fn id_swapping_server() -> std::net::SocketAddr {
    server(Arc::new(|_: &Value| {
        let body = json!({"jsonrpc": "2.0", "id": 987654, "result": {
            "tools": [], "resources": [], "resourceTemplates": [], "prompts": [],
            "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}});
        (200, body.to_string())
    }))
    .await
}

#[tokio::test]
async fn a_list_answer_with_another_id_is_not_the_list() {
    let addr = id_swapping_server().await;
    let (results, _) = listing(addr, json!({"tools": {}})).await;
    expect(
        "caps",
        check(&results, CheckId::CapsDiscoverMatchesHandlers),
        (Outcome::Fail, Some(Severity::High), None),
        &["not the request's id"],
    );
    for c in &results {
        if c.id == CheckId::ToolsListShape {
            assert_ne!(c.outcome, Outcome::Pass, "{}: {}", c.id, c.observed);
        }
    }
}
