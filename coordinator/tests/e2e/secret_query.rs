//! Red team round 7, #3: a credential in the endpoint's query string (`?api_key=...`) is
//! sent to the server, and never shown: every report format, the metrics labels of a
//! scheduled target and the reload log line carry `[redacted]` in its place. Red team
//! round 15, defect 2: echoed back by the server (a redirect's `Location` keeping the
//! query, a header, a JSON-RPC error message), such a value reached every format: it is
//! scrubbed from every answer like a token.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use vantage_fixture::Fixture;

use crate::procs::{free_addr, serve_config};
use crate::review_support::{every_output, raw_server, response, rpc_error};
use crate::support::{head_of, pass_on, streamed, vantage_env, Received, Scratch, Served};

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
    // Red team round 15: `?pat=` (a personal access token) was exported as sent in the
    // `target` label of every series.
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
        "[[checks]]\ntarget = \"{}?api_key={SECRET}&pat={SECRET}2\"\ninterval = \"1s\"\n",
        served.url()
    );
    write(&first);
    let coordinator = serve_config(&config);
    let client = crate::support::http();
    let runs = format!(
        "vantage_runs_total{{decision=\"pass\",target=\"{}?api_key=[redacted]&pat=[redacted]\"}} ",
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
            .any(|q| q == &format!("api_key={SECRET}&pat={SECRET}2")),
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

/// The two secret values of [`echoed_everywhere`]'s target URL (`api_key`, `pat`), the
/// second with a `/` sent percent-encoded.
const KEY: &str = "QQapikeyVALUE1";
const PAT: &str = "QQ/patVALUE2";

/// Every run of 8 characters of the two values, as decoded and as sent.
fn value_pieces() -> Vec<String> {
    let mut out = Vec::new();
    for v in [KEY, PAT, "QQ%2FpatVALUE2"] {
        for i in 0..=v.len() - 8 {
            out.push(v[i..i + 8].to_string());
        }
    }
    out
}

/// The query of a raw request's request line.
fn query_of(req: &str) -> String {
    let target = req
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("");
    target
        .split_once('?')
        .map(|(_, q)| q.to_string())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_key_in_the_query_echoed_by_the_server_is_in_no_format_and_no_log() {
    // Every request: its query in a JSON-RPC error message (as sent and decoded) and in a
    // header; a second server redirects every request to another origin with the query kept
    // and percent-encoded again (the red team's redirect-echo).
    let echo = raw_server(Arc::new(|req: &str| {
        let q = query_of(req);
        let decoded = q.replace("%2F", "/");
        response(
            "400 Bad Request",
            &[
                b"content-type: application/json",
                format!("x-echo: {decoded}").as_bytes(),
            ],
            &rpc_error(
                -32601,
                &format!("Method not found path=/mcp?{q} raw={decoded}"),
            ),
        )
    }))
    .await;
    let redirect = raw_server(Arc::new(|req: &str| {
        let q = query_of(req);
        let again: String = url::form_urlencoded::byte_serialize(q.as_bytes()).collect();
        response(
            "307 Temporary Redirect",
            &[format!("location: http://127.0.0.2:1/moved?{q}&leak={again}").as_bytes()],
            b"",
        )
    }))
    .await;
    for (server, seen) in [
        (&echo, "Method not found path=/mcp?api_key=[redacted]"),
        (
            &redirect,
            "307 to http://127.0.0.2:1/moved?api_key=[redacted]&pat=[redacted]&v=1",
        ),
    ] {
        let dir = Scratch::new("secret-query-echo");
        let url = format!("{}?api_key={KEY}&pat=QQ%2FpatVALUE2&v=1", server.url());
        let (outputs, code) = every_output(&url, &[], &[], &dir).await;
        for text in &outputs {
            for p in value_pieces() {
                assert!(
                    !text.contains(&p),
                    "{p:?} of a query secret leaked:\n{text}"
                );
            }
        }
        // The echo was captured and shown redacted (text, JSON: the plain text report and
        // the trace run's stdout).
        assert!(
            outputs.iter().any(|t| t.contains(seen)),
            "{seen} not in any output:\n{}",
            outputs[2]
        );
        assert_eq!(
            code, 2,
            "a server that answers every request this way is blocked"
        );
    }
}
