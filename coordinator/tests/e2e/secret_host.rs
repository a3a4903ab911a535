//! Fresh eyes round 17, D3 leftover: a token that carries 8 characters or more of the
//! endpoint's own host name scrubbed that host out of every answer before the checks read
//! it: the challenge's `resource_metadata` and the protected resource's `resource` read
//! `http://[redacted]…`, and a clean protected server was blocked (`auth.prm`). The host and
//! path of the target URL are left in the answers (the report shows them anyway); the token
//! itself, echoed by the server, is still in no output.
//!
//! The target is a front on its own loopback address (15 characters: `127.123.234.201`)
//! before the protected fixture: it names itself where the fixture names itself, lets the
//! host-carrying token through as the fixture's own, and echoes the token it received in
//! the answer to an unknown method.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderValue;
use axum::response::Response;
use vantage_fixture::{Fault, Fixture, FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN};

use crate::review_support::every_output;
use crate::support::{forward, Received, Scratch, Served};

/// The front's address: a loopback address long enough that a token can carry 8
/// characters of it (`127.0.0.1` is protocol vocabulary, never scrubbed anyway).
const HOST: &str = "127.123.234.201";
/// The token given to `vantage check`: it carries the whole host.
const TOKEN: &str = "tk-127.123.234.201-Q7zWv9Kp";

struct Front {
    upstream: String,
    me: String,
    client: reqwest::Client,
}

async fn handle(State(f): State<Arc<Front>>, mut r: Received) -> Response {
    let sent = r
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if sent.as_deref() == Some(&format!("Bearer {TOKEN}")) {
        let fixture_token = format!("Bearer {}", vantage_fixture::FIXTURE_TOKEN);
        r.headers.insert(
            "authorization",
            HeaderValue::from_str(&fixture_token).unwrap(),
        );
    }
    let echo = format!("Method not found for {}", sent.unwrap_or_default());
    forward(&f.client, &f.upstream, &f.me, r, |text| {
        text.replace("Method not found", &echo)
    })
    .await
}

#[tokio::test]
async fn a_token_carrying_the_endpoints_host_leaves_the_host_alone_and_hides_itself() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let listener = tokio::net::TcpListener::bind((HOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let front = Arc::new(Front {
        upstream: format!("http://{}", fixture.addr),
        me: format!("http://{addr}"),
        client: crate::support::http(),
    });
    let app = axum::Router::new().fallback(handle).with_state(front);
    let served = Served::spawned(
        addr,
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        }),
    );
    let url = served.url();
    let dir = Scratch::new("secret-host");
    let (outputs, code) = every_output(
        &url,
        &[
            "--token-env",
            "T_MAIN",
            "--other-audience-token-env",
            "T_AUD",
            "--missing-scope-token-env",
            "T_SCOPE",
        ],
        &[
            ("T_MAIN", TOKEN),
            ("T_AUD", FIXTURE_OTHER_AUDIENCE_TOKEN),
            ("T_SCOPE", FIXTURE_NO_SCOPE_TOKEN),
        ],
        &dir,
    )
    .await;
    // outputs: text (stdout, stderr, file), json (stdout, stderr, file), junit, markdown,
    // then a trace run's stdout and stderr.
    let json: serde_json::Value = serde_json::from_str(&outputs[5]).unwrap();
    let checks = |id: &str| -> Vec<String> {
        json["regions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["checks"].as_array().unwrap().iter())
            .filter(|c| c["id"] == id)
            .map(|c| format!("{} {}", c["outcome"], c["observed"]))
            .collect()
    };
    // A clean protected server: its own name read back as sent, auth.prm passes, no
    // finding above info, the gate passes.
    for id in ["auth.challenge", "auth.prm", "auth.as-metadata"] {
        let seen = checks(id);
        assert!(
            !seen.is_empty() && seen.iter().all(|s| s.starts_with("\"pass\"")),
            "{id}: {seen:?}"
        );
    }
    let above_info: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| format!("{} {} {}", f["id"], f["severity"], f["evidence"]))
        .collect();
    assert!(above_info.is_empty(), "{above_info:?}");
    assert_eq!(json["decision"], "pass", "{}", json["reason"]);
    assert_eq!(code, 0);
    // The echo was captured and shown redacted.
    let unknown = checks("method.unknown").join("\n");
    assert!(unknown.contains("[redacted]"), "{unknown}");
    // The token is in no output, nor any piece of it the target URL does not show.
    let public = format!("http://{addr}/mcp");
    let pieces: Vec<&str> = (0..=TOKEN.len() - 8)
        .map(|i| &TOKEN[i..i + 8])
        .filter(|p| !public.contains(p))
        .collect();
    assert!(pieces.len() > 8, "{pieces:?}");
    for text in &outputs {
        assert!(!text.contains(TOKEN), "the token leaked:\n{text}");
        for p in &pieces {
            assert!(!text.contains(p), "{p:?} of the token leaked:\n{text}");
        }
    }
}
