//! The cap on on-demand checks in flight (`server.max_checks_in_flight`), whatever their
//! targets: the per-target budget alone let a token holder start checks of any number of
//! different targets at once. Past the cap `POST /v1/checks` is 429 `busy` with
//! `Retry-After`, and starts nothing; once the running checks finish a new one is accepted.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::procs::{start_coordinator, until, API_TOKEN};
use crate::support::{http, tmpdir};

/// A loopback "target" that accepts connections and never answers: a check of it stays in
/// flight until [`Slow::release`] closes every connection and the listener.
struct Slow {
    addr: std::net::SocketAddr,
    held: Arc<Mutex<Vec<tokio::net::TcpStream>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Slow {
    async fn start() -> Slow {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let held: Arc<Mutex<Vec<tokio::net::TcpStream>>> = Arc::default();
        let keep = held.clone();
        let task = tokio::spawn(async move {
            while let Ok((s, _)) = listener.accept().await {
                keep.lock().unwrap().push(s);
            }
        });
        Slow { addr, held, task }
    }

    fn accepted(&self) -> usize {
        self.held.lock().unwrap().len()
    }

    /// Close the listener and every connection held: the checks of it end at once.
    fn release(&self) {
        self.task.abort();
        self.held.lock().unwrap().clear();
    }
}

impl Drop for Slow {
    fn drop(&mut self) {
        self.release();
    }
}

async fn post(api: &str, target: String) -> (u16, Option<String>, Value) {
    let resp = http()
        .post(format!("{api}/v1/checks"))
        .bearer_auth(API_TOKEN)
        .json(&json!({"target": target, "deadline": "2m"}))
        .send()
        .await
        .expect("the API answers");
    let status = resp.status().as_u16();
    let retry = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (status, retry, resp.json().await.unwrap_or(Value::Null))
}

async fn state(api: &str, id: &str) -> Value {
    let resp = http()
        .get(format!("{api}/v1/checks/{id}"))
        .bearer_auth(API_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_past_the_cap_in_flight_are_busy_and_start_nothing() {
    let dir = tmpdir("in-flight");
    // The in-process vantage, a wait per exchange far longer than this test: nothing but
    // the release ends a check of the slow target. One check per target a minute, so a
    // busy refusal that took from its target's budget would show.
    let config = dir.join("coordinator.toml");
    std::fs::write(
        &config,
        "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{ token_env = \"T_API\" }]\n\
         max_checks_in_flight = 2\nchecks_per_target_per_minute = 1\n\
         [fleet]\nlocal_agent = true\nlocal_region = \"local\"\n\
         [probe]\ncheck_timeout = \"90s\"\nallow_non_global = [\"127.0.0.0/8\"]\n",
    )
    .unwrap();
    let c = start_coordinator(&config, &[]);
    let slow = Slow::start().await;
    let target = |path: &str| format!("http://{}/{path}", slow.addr);
    let mut ids = Vec::new();
    for path in ["a", "b"] {
        let (st, _, v) = post(&c.api, target(path)).await;
        assert_eq!(st, 202, "{path}: {v}");
        ids.push(v["id"].as_str().unwrap().to_string());
    }
    // Both are running, held by the target that never answers.
    until(
        "both checks connect to the slow target",
        Duration::from_secs(20),
        Duration::from_millis(50),
        async || slow.accepted() >= 2,
    )
    .await;
    for id in &ids {
        assert_eq!(state(&c.api, id).await["state"], "running");
    }
    // A third target, and a fourth: busy, whatever the target.
    for path in ["c", "d"] {
        let (st, retry, v) = post(&c.api, target(path)).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (429, Some("busy")),
            "{v}"
        );
        let secs: u64 = retry
            .as_deref()
            .expect("Retry-After")
            .parse()
            .expect("seconds");
        assert!((1..=120).contains(&secs), "Retry-After {secs}");
        let message = v["error"]["message"].as_str().unwrap();
        for needle in [
            "2 on-demand checks are running",
            "server.max_checks_in_flight (2)",
            "nothing was started",
            &format!("retry in {secs} s"),
        ] {
            assert!(message.contains(needle), "{needle}: {message}");
        }
    }
    // The running checks end; a new one is accepted, and the target refused as busy still
    // has its whole budget (one a minute): the refusal started nothing.
    slow.release();
    for id in &ids {
        until(
            "the released check finishes",
            Duration::from_secs(60),
            Duration::from_millis(100),
            async || state(&c.api, id).await["state"] != "running",
        )
        .await;
    }
    // (The slot is given back just after the report is stored: busy until then.)
    let mut last = (0, Value::Null);
    until(
        "a new check is accepted",
        Duration::from_secs(20),
        Duration::from_millis(50),
        async || {
            let (st, _, v) = post(&c.api, target("c")).await;
            last = (st, v);
            !(last.0 == 429 && last.1["error"]["code"] == "busy")
        },
    )
    .await;
    assert_eq!(last.0, 202, "{}", last.1);
    std::fs::remove_dir_all(&dir).unwrap();
}
