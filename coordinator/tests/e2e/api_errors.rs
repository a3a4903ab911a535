//! Every error of the coordinator's API is JSON `{"error": {"code", "message"}}`: an unknown
//! path is 404 `not_found`, a known path with another method is 405 `method_not_allowed`
//! with an `Allow` header that lists the methods served there.

use serde_json::Value;

use crate::procs::{coordinator, API_TOKEN};
use crate::support::{http, tmpdir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_methods_and_unknown_paths_get_json_errors() {
    let dir = tmpdir("api-errors");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let client = http();
    use reqwest::Method as M;
    let cases: &[(M, &str, u16, &str, Option<&str>)] = &[
        (
            M::GET,
            "/v1/checks",
            405,
            "method_not_allowed",
            Some("POST"),
        ),
        (
            M::DELETE,
            "/v1/checks",
            405,
            "method_not_allowed",
            Some("POST"),
        ),
        (
            M::PUT,
            "/v1/checks/01ABC",
            405,
            "method_not_allowed",
            Some("GET,HEAD"),
        ),
        (
            M::POST,
            "/v1/agents",
            405,
            "method_not_allowed",
            Some("GET,HEAD"),
        ),
        (
            M::DELETE,
            "/metrics",
            405,
            "method_not_allowed",
            Some("GET,HEAD"),
        ),
        (M::GET, "/v1/nope", 404, "not_found", None),
        (M::GET, "/", 404, "not_found", None),
    ];
    for token in [None, Some(API_TOKEN)] {
        for (method, path, status, code, allow) in cases {
            let mut req = client.request(method.clone(), format!("{}{path}", c.api));
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let resp = req.send().await.unwrap();
            let what = format!("{method} {path} (token: {})", token.is_some());
            assert_eq!(resp.status().as_u16(), *status, "{what}");
            assert_eq!(
                resp.headers().get("allow").and_then(|v| v.to_str().ok()),
                *allow,
                "{what}"
            );
            assert!(
                resp.headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|t| t.starts_with("application/json")),
                "{what}"
            );
            let body: Value = resp.json().await.expect("a JSON body");
            assert_eq!(body["error"]["code"], *code, "{what}: {body}");
            let message = body["error"]["message"].as_str().unwrap_or("");
            assert!(!message.is_empty(), "{what}");
            if *status == 405 {
                assert!(message.contains(method.as_str()), "{what}: {message}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Bad bodies get a 400 that names the fix in the API's own terms; nothing is started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_name_the_fix_for_an_api_caller() {
    let dir = tmpdir("api-bodies");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let client = http();
    let post = |body: String, query: &'static str| {
        client
            .post(format!("{}/v1/checks{query}", c.api))
            .bearer_auth(API_TOKEN)
            .body(body)
            .send()
    };
    let t = "http://127.0.0.1:9/mcp";
    let cases: Vec<(String, &str, &str, &[&str])> = vec![
        (
            format!(r#"{{"target":"{t}","deadline":"0s"}}"#),
            "",
            "invalid_duration",
            &["deadline `0s` must be greater than zero"],
        ),
        (
            format!(r#"{{"target":"{t}","deadline":"99h"}}"#),
            "",
            "invalid_duration",
            &["deadline is at most 10m"],
        ),
        (
            format!(r#"{{"target":"{t}"}}"#),
            "?wait=0s",
            "invalid_duration",
            &["wait `0s` must be greater than zero"],
        ),
        (
            r#"{"target": 5}"#.to_string(),
            "",
            "invalid_json",
            &["\"deadline\": DURATION"],
        ),
        // A JSON value that is not an object is said as such (serde read an array as the
        // struct's fields in order: "invalid type: map, expected a string").
        (
            format!(r#"[{{"target":"{t}"}}]"#),
            "",
            "invalid_json",
            &["the body is an array, not a JSON object", "\"target\": URL"],
        ),
        (
            r#"{"target":"http://user:pw@127.0.0.1:9/mcp"}"#.to_string(),
            "",
            "invalid_target",
            &["[[credentials]]", "\"credential\""],
        ),
    ];
    for (body, query, code, needles) in cases {
        let resp = post(body.clone(), query).await.unwrap();
        assert_eq!(resp.status().as_u16(), 400, "{body}");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], code, "{body}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        for n in needles {
            assert!(message.contains(n), "{body}: {n:?} not in {message}");
        }
        assert!(!message.contains("--token-env"), "{message}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A body whose `Content-Type` says it is not JSON (`text/plain`, the form encoding `curl -d`
/// sends) is a 415 naming the fix; nothing starts. JSON with parameters, any case, and a body
/// with no `Content-Type` are read as JSON. Authentication comes first (red team 16, nit 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_typed_as_something_else_than_json_is_415_with_the_fix() {
    let dir = tmpdir("api-ctype");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let client = http();
    // One path per case: the per-target limit never answers instead.
    let post = |n: usize, ctype: Option<&'static str>, token: &'static str| {
        let mut req = client
            .post(format!("{}/v1/checks", c.api))
            .bearer_auth(token)
            .body(format!(r#"{{"target":"http://127.0.0.1:9/mcp{n}"}}"#));
        if let Some(t) = ctype {
            req = req.header("content-type", t);
        }
        req.send()
    };
    for (n, ctype) in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml; charset=utf-8",
    ]
    .into_iter()
    .enumerate()
    {
        let resp = post(n, Some(ctype), API_TOKEN).await.unwrap();
        assert_eq!(resp.status().as_u16(), 415, "{ctype}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unsupported_media_type", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        let media = ctype.split(';').next().unwrap();
        assert!(
            message.starts_with(&format!("`{media}` is not JSON; send the body as JSON with `Content-Type: application/json`"))
                && message.contains("--json"),
            "{message}"
        );
    }
    for (n, ctype) in [
        Some("application/json"),
        Some("application/json; charset=utf-8"),
        Some("Application/JSON"),
        Some("application/vnd.api+json"),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        let resp = post(10 + n, ctype, API_TOKEN).await.unwrap();
        assert_eq!(resp.status().as_u16(), 202, "{ctype:?}");
    }
    // Without a valid token the answer is 401, whatever the body's type.
    let resp = post(20, Some("text/plain"), "not-the-token").await.unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Refused API tokens are counted by reason in `vantage_api_auth_failures_total` (from 0)
/// and logged with the peer and the path, rate-limited, never with the token (red team 16,
/// nit 3: 2000 wrong tokens left no trace).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_api_tokens_are_counted_and_logged_without_the_token() {
    let dir = tmpdir("api-authfail");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let client = http();
    let scrape = || async {
        client
            .get(format!("{}/metrics", c.api))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let before = scrape().await;
    for reason in ["missing", "invalid"] {
        assert!(
            before.contains(&format!(
                "vantage_api_auth_failures_total{{reason=\"{reason}\"}} 0"
            )),
            "{before}"
        );
    }
    const WRONG: &str = "wrong-api-token-5f3a9c";
    for _ in 0..3 {
        let resp = client
            .get(format!("{}/v1/agents", c.api))
            .bearer_auth(WRONG)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 401);
    }
    let resp = client
        .post(format!("{}/v1/checks", c.api))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // A valid token is no failure.
    let resp = client
        .get(format!("{}/v1/agents", c.api))
        .bearer_auth(API_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let after = scrape().await;
    assert!(
        after.contains("vantage_api_auth_failures_total{reason=\"invalid\"} 3")
            && after.contains("vantage_api_auth_failures_total{reason=\"missing\"} 1"),
        "{after}"
    );
    let line = c.proc.wait_for(
        "API request refused (401)",
        std::time::Duration::from_secs(10),
    );
    assert!(
        line.contains("peer=127.0.0.1:") && line.contains("path=/v1/agents"),
        "{line}"
    );
    let log = c.proc.output();
    assert!(
        !log.contains(WRONG),
        "the token presented is never logged:\n{log}"
    );
    assert!(!log.contains(API_TOKEN), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}
