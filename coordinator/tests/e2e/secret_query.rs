//! Red team round 7, #3: a credential in the endpoint's query string (`?api_key=...`) is
//! sent to the server, and never shown: every report format, the metrics labels of a
//! scheduled target and the reload log line carry `[redacted]` in its place.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use vantage_fixture::Fixture;

use crate::procs::{free_addr, serve_config};
use crate::support::{head_of, pass_on, streamed, vantage_env, Received, Served};

const SECRET: &str = "SECRETSECRET";

/// A front that records every query string it receives and passes the request on.
struct Front {
    upstream: String,
    client: reqwest::Client,
    queries: Mutex<Vec<String>>,
}

async fn handle(State(f): State<Arc<Front>>, r: Received) -> Response {
    let q = r.uri.query().unwrap_or("").to_string();
    f.queries.lock().unwrap().push(q);
    let Some(resp) = pass_on(&f.client, &f.upstream, r).await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    head_of(&resp, str::to_string).body(streamed(resp)).unwrap()
}

async fn front(fixture: &Fixture) -> (Served, Arc<Front>) {
    let f = Arc::new(Front {
        upstream: format!("http://{}", fixture.addr),
        client: crate::support::http(),
        queries: Mutex::new(Vec::new()),
    });
    let state = f.clone();
    let served =
        Served::start(move |_| axum::Router::new().fallback(handle).with_state(state)).await;
    (served, f)
}

#[tokio::test]
async fn a_key_in_the_query_is_sent_and_never_shown_in_a_report() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let (served, f) = front(&fixture).await;
    let url = format!("{}?api_key={SECRET}&v=1", served.url());
    let shown = format!("{}?api_key=[redacted]&v=1", served.url());
    for format in ["json", "junit", "markdown", "text"] {
        let out = vantage_env(&["check", &url, "-f", format], &[]).await;
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(0), "{format}: {stdout}{stderr}");
        assert!(
            !stdout.contains(SECRET) && !stderr.contains(SECRET),
            "{format}: {stdout}{stderr}"
        );
        // As each format escapes it: plain, XML, Markdown.
        let escaped = [
            shown.clone(),
            shown.replace('&', "&amp;"),
            shown
                .replace('&', "&#38;")
                .replace('[', "&#91;")
                .replace(']', "&#93;"),
        ];
        assert!(
            escaped.iter().any(|s| stdout.contains(s.as_str())),
            "{format}: {stdout}"
        );
    }
    // The probe sent the real URL: the server saw the key on the MCP requests.
    let queries = f.queries.lock().unwrap().clone();
    assert!(
        queries
            .iter()
            .any(|q| q == &format!("api_key={SECRET}&v=1")),
        "{queries:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_key_in_the_query_never_reaches_the_metrics_or_the_log() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let (served, f) = front(&fixture).await;
    let dir = crate::support::Scratch::new("secret-query");
    let api = free_addr();
    let config = dir.join("coordinator.toml");
    let write = |checks: &str| {
        std::fs::write(
            &config,
            format!(
                "[server]\napi_listen = \"{api}\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{{ token_env = \"T_API\" }}]\n\
                 [probe]\ncheck_timeout = \"2s\"\nallow_non_global = [\"127.0.0.0/8\"]\n{checks}"
            ),
        )
        .unwrap()
    };
    let first = format!(
        "[[checks]]\ntarget = \"{}?api_key={SECRET}\"\ninterval = \"1s\"\n",
        served.url()
    );
    write(&first);
    let coordinator = serve_config(&config);
    let client = crate::support::http();
    let runs = format!(
        "vantage_runs_total{{decision=\"pass\",target=\"{}?api_key=[redacted]\"}} ",
        served.url()
    );
    let mut text = String::new();
    for _ in 0..300 {
        text = match client.get(format!("http://{api}/metrics")).send().await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if text
            .lines()
            .any(|l| l.starts_with(&runs) && !l.ends_with(" 0"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with(&runs) && !l.ends_with(" 0")),
        "no scheduled run exported as {runs}:\n{text}"
    );
    assert!(!text.contains(SECRET), "{text}");
    assert!(
        f.queries
            .lock()
            .unwrap()
            .iter()
            .any(|q| q == &format!("api_key={SECRET}")),
        "the scheduled probe sent the key"
    );
    // A reload that adds a target names it redacted.
    write(&format!(
        "{first}[[checks]]\ntarget = \"{}?token={SECRET}2\"\ninterval = \"1h\"\n",
        served.url()
    ));
    coordinator.signal("HUP");
    let line = coordinator.wait_for("configuration reloaded", Duration::from_secs(20));
    assert!(line.contains("?token=[redacted]"), "{line}");
    assert!(
        !coordinator.output().contains(SECRET),
        "{}",
        coordinator.output()
    );
}
