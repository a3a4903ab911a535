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
