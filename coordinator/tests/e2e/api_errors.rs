//! Every error of the coordinator's API is JSON `{"error": {"code", "message"}}`: an unknown
//! path is 404 `not_found`, a known path with another method is 405 `method_not_allowed`
//! with an `Allow` header that lists the methods served there.

use serde_json::Value;

use crate::procs::{coordinator, API_TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_methods_and_unknown_paths_get_json_errors() {
    let dir = std::env::temp_dir().join(format!("vantage-api-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let tls = vantage_agent::probe::tls::client_config(None).unwrap();
    let client = reqwest::Client::builder()
        .use_preconfigured_tls((*tls).clone())
        .no_proxy()
        .build()
        .unwrap();
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
