//! The listing connects only through the run's egress client: an address the policy refuses
//! gets nothing, and every listing rule is `unknown` with cause `policy-refused` (never a
//! pass, never a finding about the target), with no item in the surface.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;

use super::rules::checks;
use super::test_server::listing_stage;
use crate::egress::{EgressClient, EgressPolicy};
use crate::job::Policy;
use crate::model::{Cause, Era, Outcome};
use crate::target::Target;

/// A loopback listener that counts the connections it accepts (and answers none).
async fn counting_listener() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let addr = l.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
            drop(s);
        }
    });
    (addr, count)
}

/// A client whose policy allows no non-global address (loopback included).
fn refusing_client() -> EgressClient {
    crate::egress::test_client(EgressPolicy::new(&Policy::default()), Vec::new())
}

#[tokio::test]
async fn a_refused_address_gets_no_list_request_and_every_rule_says_why() {
    let (addr, count) = counting_listener().await;
    let target = Target::parse(&format!("http://127.0.0.1:{}/mcp", addr.port())).unwrap();
    let client = refusing_client();
    let caps = json!({"tools": {"listChanged": true}, "resources": {}, "prompts": {}});
    for era in [Era::Modern, Era::Legacy] {
        let given = (era == Era::Modern).then(|| caps.clone());
        let (results, st) = listing_stage(&target, &client, era, given).await;
        // Every check of the catalogue's listing stage, and nothing else, is recorded.
        let recorded: Vec<_> = results.iter().map(|c| c.id).collect();
        assert_eq!(recorded, checks().collect::<Vec<_>>(), "{era:?}");
        assert!(recorded.contains(&crate::catalog::CheckId::ListenAckFirst));
        for id in checks() {
            let c = results
                .iter()
                .find(|c| c.id == id)
                .unwrap_or_else(|| panic!("{era:?}: {id} recorded"));
            assert_ne!(c.outcome, Outcome::Pass, "{era:?}: {id}: {}", c.observed);
            if c.outcome != Outcome::Skip {
                assert_eq!(
                    (c.outcome, c.severity, c.cause),
                    (Outcome::Unknown, None, Some(Cause::PolicyRefused)),
                    "{era:?}: {id}: {}",
                    c.observed
                );
            }
        }
        // The rules that need the tool list are due on both eras, and have no evidence.
        let tools = results
            .iter()
            .find(|c| c.id == crate::catalog::CheckId::ToolsListShape)
            .unwrap();
        assert_eq!(tools.cause, Some(Cause::PolicyRefused), "{era:?}");
        let items: usize = st
            .surface
            .iter()
            .flat_map(|s| s.lists.iter())
            .map(|l| l.items.len())
            .sum();
        assert_eq!(items, 0, "{era:?}: nothing fetched reaches the surface");
    }
    assert_eq!(count.load(Ordering::SeqCst), 0, "nothing was sent");
}
