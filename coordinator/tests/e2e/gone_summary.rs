//! Red team round 18 (D5): `vantage check URL1 URL2 URL3 --coordinator … -f FMT -o FILE`
//! without `--regions`, the coordinator killed while URL2 runs. The run exits 4, and the file
//! written said pass: a one-endpoint `vantage.report/v1` for URL1 with `"gate": {"result":
//! "passed", "exit_code": 0}`, JUnit with no failure and no error, Markdown "pass"; URL2 and
//! URL3 were in no format. The document of a run that exits 4 says so in every format: the
//! several-endpoint document, URL2 and URL3 rows `unknown` (exit 4) with why, a JUnit
//! `vantage.gate` error for each, and the summary line (not "gate: passed") on stderr.
//!
//! A real `vantage serve` with region eu and its agent on loopback; URL1 and URL3 the clean
//! fixture, URL2 a loopback port that accepts and never answers. The coordinator is killed
//! (by its pid) once URL2's first connection arrived: URL1 was decided, URL2 was not.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use vantage_fixture::Fixture;

use crate::procs::{agent, agent_health, agent_token, bin, coordinator, until, Proc, API_TOKEN};
use crate::support::Scratch;

/// A loopback port that accepts every connection and never answers; how many arrived.
struct Silent {
    url: String,
    accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Silent {
    async fn start() -> Silent {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let seen = accepted.clone();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
                seen.fetch_add(1, Ordering::SeqCst);
            }
        });
        Silent {
            url,
            accepted,
            task,
        }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a run left: its exit code, its stderr, the file, and the three URLs.
struct Gone {
    code: Option<i32>,
    out: String,
    file: String,
    urls: [String; 3],
}

/// `vantage check URL1 URL2 URL3 --coordinator API -f FORMAT -o FILE` plus `extra`, the
/// coordinator killed once URL2's first connection arrived; `urls` picks how many of the
/// three URLs are asked for (from the second: `&[1]` is URL2 alone).
async fn gone_during_url2(name: &str, format: &str, extra: &[&str], urls: &[usize]) -> Gone {
    let clean = Fixture::start(&[]).await.unwrap();
    let after = Fixture::start(&[]).await.unwrap();
    let silent = Silent::start().await;
    let all = [clean.url(), silent.url.clone(), after.url()];
    let dir = Scratch::new(name);
    let file = dir.join(format!("report.{format}"));
    let mut c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let eu = agent(&c.grpc, "eu", &agent_token("eu"));
    agent_health(&eu);
    let mut cmd = Command::new(bin("vantage"));
    cmd.arg("check")
        .args(urls.iter().map(|i| all[*i].as_str()))
        .args(["--coordinator", c.api.as_str(), "--timeout", "60s"])
        .args(["-f", format, "-o"])
        .arg(&file)
        .args(extra)
        .env("VANTAGE_API_TOKEN", API_TOKEN);
    let mut client = Proc::spawn(cmd);
    let accepted = silent.accepted.clone();
    until(
        "URL2's first connection",
        Duration::from_secs(60),
        Duration::from_millis(20),
        async || accepted.load(Ordering::SeqCst) > 0,
    )
    .await;
    c.proc.kill();
    let status = client.wait_exit(Duration::from_secs(60));
    let out = client.output();
    drop(eu);
    Gone {
        code: status.and_then(|s| s.code()),
        file: std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}: no file\n{out}")),
        out,
        urls: all,
    }
}

const NO_REGIONS: &str = "the check named no --regions";

/// The gate line of an endpoint without a report.
const GATE: &str =
    "gate: unknown (exit 4: no report: the coordinator went away before this endpoint was decided)";

/// The summary rows of a `vantage.reports/v1` document, by target.
fn row<'a>(doc: &'a Value, target: &str) -> &'a Value {
    doc["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["target"] == target)
        .unwrap_or_else(|| panic!("no summary row for {target}: {doc:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_of_a_run_whose_coordinator_went_away_is_every_endpoint_and_exit_4() {
    let g = gone_during_url2("gone18-json", "json", &[], &[0, 1, 2]).await;
    assert_eq!(g.code, Some(4), "{}", g.out);
    let doc: Value = serde_json::from_str(&g.file).unwrap();
    assert_eq!(doc["schema"], "vantage.reports/v1", "{doc:#}");
    assert_eq!(doc["exit_code"], 4, "{doc:#}");
    assert_eq!(doc["summary"].as_array().unwrap().len(), 3, "{doc:#}");
    // URL1 was decided (the clean fixture) and its report is whole and valid.
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{doc:#}");
    crate::support::assert_valid(&reports[0]);
    assert_eq!(reports[0]["target"], g.urls[0].as_str());
    assert_eq!(reports[0]["decision"], "pass", "{doc:#}");
    assert_eq!(row(&doc, &g.urls[0])["exit_code"], 0);
    // URL2 was not: unknown, exit 4, and why.
    let url2 = row(&doc, &g.urls[1]);
    assert_eq!(url2["decision"], "unknown", "{url2}");
    assert_eq!(url2["exit_code"], 4, "{url2}");
    assert_eq!(url2["gate"], GATE, "{url2}");
    let why = url2["reason"].as_str().unwrap();
    assert!(
        why.starts_with("the coordinator at")
            && why.contains("went away while check")
            && why.contains(NO_REGIONS),
        "{why}"
    );
    // URL3 was never submitted: unknown, exit 4, not checked.
    let url3 = row(&doc, &g.urls[2]);
    assert_eq!(url3["decision"], "unknown", "{url3}");
    assert_eq!(url3["exit_code"], 4, "{url3}");
    assert_eq!(url3["gate"], GATE, "{url3}");
    let why = url3["reason"].as_str().unwrap();
    assert!(
        why.starts_with("not checked: the coordinator at")
            && why.ends_with(&format!("while checking {}", g.urls[1])),
        "{why}"
    );
    // URL1's row has its report, and no reason beside it.
    assert!(row(&doc, &g.urls[0]).get("reason").is_none(), "{doc:#}");
    // The last line on stderr is the run's summary, never URL1's "gate: passed".
    let last = g.out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "3 endpoints: 1 pass, 2 unknown; exit 4 (the worst gate): reports written to"
        ),
        "{}",
        g.out
    );
    assert!(!g.out.contains("gate: passed"), "{}", g.out);
    assert!(g.out.contains(NO_REGIONS), "{}", g.out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junit_of_a_run_whose_coordinator_went_away_has_a_gate_error_per_undecided_endpoint() {
    let g = gone_during_url2("gone18-junit", "junit", &[], &[0, 1, 2]).await;
    assert_eq!(g.code, Some(4), "{}", g.out);
    let seen = crate::junit_consumer::consume(&g.file);
    assert_eq!(seen["errors"], 2, "{seen:#}");
    assert_eq!(seen["failures"], 0, "{seen:#}");
    let errors = crate::junit_consumer::cases_with(&seen, "error");
    let mut want = vec![
        (
            format!("vantage[{}]", g.urls[1]),
            "vantage.gate".to_string(),
        ),
        (
            format!("vantage[{}]", g.urls[2]),
            "vantage.gate".to_string(),
        ),
    ];
    want.sort();
    assert_eq!(errors, want, "{seen:#}");
    let suite = seen["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == format!("vantage[{}]", g.urls[1]))
        .unwrap();
    assert_eq!(
        suite["properties"]["vantage.decision"], "unknown",
        "{suite}"
    );
    let case = &suite["cases"][0];
    assert_eq!(case["type"], "decision.unknown", "{case}");
    assert!(
        case["message"].as_str().is_some_and(|m| m
            .starts_with(&format!("{GATE}: the coordinator at"))
            && m.contains(NO_REGIONS)),
        "{case}"
    );
    // URL1's suite is there too, a pass.
    assert!(
        seen["suites"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == format!("vantage.eu[{}]", g.urls[0])
                && s["properties"]["vantage.decision"] == "pass"),
        "{seen:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markdown_and_text_of_a_run_whose_coordinator_went_away_say_unknown() {
    for format in ["markdown", "text"] {
        let g = gone_during_url2(&format!("gone18-{format}"), format, &[], &[0, 1, 2]).await;
        assert_eq!(g.code, Some(4), "{}", g.out);
        let summary = "3 endpoints: 1 pass, 2 unknown; exit 4 (the worst gate)";
        assert!(g.file.contains(summary), "{}", g.file);
        // A loopback URL has nothing a Markdown cell escapes.
        let url2 = &g.urls[1];
        if format == "markdown" {
            assert!(
                g.file.starts_with(&format!("## Vantage: {summary}")),
                "{}",
                g.file
            );
            assert!(
                g.file
                    .contains(&format!("| {url2} | **unknown** | `{GATE}` |")),
                "{}",
                g.file
            );
            assert!(
                g.file
                    .contains(&format!("## Vantage: **unknown** for {url2}")),
                "{}",
                g.file
            );
        } else {
            assert!(
                g.file.contains(&format!(
                    "UNKNOWN  {}\n  no report: the coordinator at",
                    g.urls[1]
                )),
                "{}",
                g.file
            );
            assert!(
                g.file.lines().any(
                    |l| l.starts_with(&format!("  unknown  {GATE}")) && l.ends_with(&g.urls[2])
                ),
                "{}",
                g.file
            );
        }
    }
}

/// One URL, the coordinator gone during it, no --regions: no file was written (one left from
/// an earlier run stayed as it was). The document is written, and says unknown, exit 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_endpoint_whose_coordinator_went_away_is_written_as_unknown() {
    let g = gone_during_url2("gone18-one", "json", &[], &[1]).await;
    assert_eq!(g.code, Some(4), "{}", g.out);
    let doc: Value = serde_json::from_str(&g.file).unwrap();
    assert_eq!(doc["schema"], "vantage.reports/v1", "{doc:#}");
    assert_eq!(doc["exit_code"], 4, "{doc:#}");
    assert_eq!(doc["reports"], serde_json::json!([]), "{doc:#}");
    let url2 = row(&doc, &g.urls[1]);
    assert_eq!(url2["decision"], "unknown", "{url2}");
    assert_eq!(url2["exit_code"], 4, "{url2}");
    assert!(
        g.out
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with("1 endpoint: 1 unknown; exit 4"),
        "{}",
        g.out
    );
}

/// With --regions URL2's report is formed (unknown, fleet.region-missing), and URL3, never
/// submitted, was left out of the document: it is a row unknown, exit 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_regions_the_endpoints_never_submitted_are_rows_unknown() {
    let g = gone_during_url2("gone18-regions", "json", &["--regions", "eu"], &[0, 1, 2]).await;
    assert_eq!(g.code, Some(4), "{}", g.out);
    let doc: Value = serde_json::from_str(&g.file).unwrap();
    assert_eq!(doc["schema"], "vantage.reports/v1", "{doc:#}");
    assert_eq!(doc["exit_code"], 4, "{doc:#}");
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{doc:#}");
    assert_eq!(reports[1]["target"], g.urls[1].as_str());
    assert_eq!(reports[1]["decision"], "unknown");
    let missing = crate::evidence_support::finding(&reports[1], "fleet.region-missing");
    assert_eq!(missing["regions"], serde_json::json!(["eu"]), "{missing}");
    let url3 = row(&doc, &g.urls[2]);
    assert_eq!(url3["decision"], "unknown", "{url3}");
    assert_eq!(url3["exit_code"], 4, "{url3}");
    assert!(
        url3["reason"]
            .as_str()
            .is_some_and(|l| l.starts_with("not checked: the coordinator at")),
        "{url3}"
    );
}
