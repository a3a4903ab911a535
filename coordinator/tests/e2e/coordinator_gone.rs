//! A coordinator that stops in the middle of a check: `vantage check --coordinator` says the
//! coordinator went away and the check's regions did not report, and exits 4 (unknown), not
//! 1 with "following the check: … connection refused". An API that accepts and never answers
//! is waited for as long as --timeout says (plus the margin for the coordinator to report).

use std::process::Command;
use std::time::Duration;

use vantage_fixture::{Hostile, HostileServer};

use crate::fleet::wait_in_flight;
use crate::procs::{agent, agent_health, agent_token, bin, coordinator, Proc, API_TOKEN};
use crate::support::Scratch;

/// A coordinator with region eu and its agent connected, then `vantage check URL
/// --coordinator API` with `args` against `url`, a target that never answers; the
/// coordinator is stopped while eu's job runs. The coordinator, the client's exit status
/// and its output.
async fn stopped_mid_check(name: &str, url: &str, args: &[&str]) -> Stopped {
    stopped_mid_check_draining(name, url, args, "1s").await
}

/// The coordinator, the client's exit status and its output.
type Stopped = (
    crate::procs::Coordinator,
    Option<std::process::ExitStatus>,
    String,
);

/// [`stopped_mid_check`] with the coordinator's `server.drain_timeout` set to `drain`.
async fn stopped_mid_check_draining(name: &str, url: &str, args: &[&str], drain: &str) -> Stopped {
    let dir = Scratch::new(name);
    let c = coordinator(
        &dir,
        &["eu"],
        "127.0.0.1:0",
        "127.0.0.1:0",
        &format!("[server]\ndrain_timeout = \"{drain}\"\n"),
    );
    let eu = agent(&c.grpc, "eu", &agent_token("eu"));
    agent_health(&eu);
    let mut cmd = Command::new(bin("vantage"));
    cmd.args(["check", url, "--coordinator", c.api.as_str()])
        .args(args)
        .env("VANTAGE_API_TOKEN", API_TOKEN);
    let mut client = Proc::spawn(cmd);
    wait_in_flight(&eu, 1, Duration::from_secs(20)).await;
    c.proc.signal("TERM");
    let status = client.wait_exit(Duration::from_secs(60));
    let out = client.output();
    (c, status, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_that_stops_mid_check_is_unknown_exit_4() {
    // A target that never answers: the job is still running when the coordinator stops.
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let url = silent.url();
    let (mut c, status, out) =
        stopped_mid_check("coord-gone", &url, &["--regions", "eu", "--timeout", "60s"]).await;
    assert_eq!(status.and_then(|s| s.code()), Some(4), "{out}");
    assert!(
        out.contains(&format!(
            "unknown for {}: the coordinator at {} went away while check",
            silent.url(),
            c.api
        )) && out.contains("the check's regions did not report"),
        "{out}"
    );
    assert!(!out.contains("following the check"), "{out}");
    assert!(
        c.proc
            .wait_exit(Duration::from_secs(30))
            .is_some_and(|s| s.success()),
        "{}",
        c.proc.output()
    );
}

/// `vantage check --coordinator C --timeout 1s` against something that accepts and never
/// answers (`vantage fixture --hostile never-answers`): the wait follows --timeout (it was a
/// fixed 30 s) and the message names it. Exit 1 (nothing was submitted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_that_never_answers_is_waited_for_as_long_as_timeout_says() {
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let base = silent.url().trim_end_matches("/mcp").to_string();
    let args = [
        "check",
        "http://127.0.0.1:9/mcp",
        "--coordinator",
        &base,
        "--timeout",
        "1s",
    ];
    // With a token (the check is submitted) and without one (the API is probed first).
    let with_token = [&args[..], &["--api-token-env", "NITS_API_TOKEN"]].concat();
    for (args, env) in [
        (&with_token[..], &[("NITS_API_TOKEN", API_TOKEN)][..]),
        (&args[..], &[]),
    ] {
        let out = crate::support::vantage_env(args, env).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "--coordinator {base}: the API did not answer in time (within --timeout 1s plus 10s for the coordinator to report)"
            )),
            "{err}"
        );
        assert!(err.contains("A longer --timeout waits longer"), "{err}");
    }
}

/// Red team round 12 (N9): `vantage check --coordinator … -f json -o FILE` while the
/// coordinator goes away exited 4 with a message and wrote no file. With --regions the report
/// can still be formed (decision unknown; the regions that did not report are missing, the
/// coordinator's departure is why): it is written to FILE. Without --regions the coordinator
/// chose the regions, so no report can say which were not observed: FILE holds the endpoint
/// as a row unknown (exit 4) without a report (red team round 18, D5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_that_stops_mid_check_leaves_a_report_in_the_output_file() {
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let url = silent.url();
    for with_regions in [true, false] {
        let dir = Scratch::new(if with_regions {
            "gone-o-file"
        } else {
            "gone-o-all-file"
        });
        let file = dir.join("report.json");
        let file_arg = file.display().to_string();
        let mut args = vec!["--timeout", "60s", "-f", "json", "-o", &file_arg];
        if with_regions {
            args.extend(["--regions", "eu"]);
        }
        let name = if with_regions { "gone-o" } else { "gone-o-all" };
        let (mut c, status, out) = stopped_mid_check(name, &url, &args).await;
        assert_eq!(status.and_then(|s| s.code()), Some(4), "{out}");
        assert!(out.contains("went away while check"), "{out}");
        if with_regions {
            assert!(
                out.contains(&format!("its report (decision unknown, fleet.region-missing for the regions that did not report) is written to {file_arg}")),
                "{out}"
            );
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&file).expect("the report file"))
                    .expect("JSON");
            crate::support::assert_valid(&doc);
            assert_eq!(doc["decision"], "unknown", "{doc}");
            assert_eq!(doc["gate"]["exit_code"], 4, "{doc}");
            assert!(doc.get("state").is_none(), "{doc}");
            let missing = crate::evidence_support::finding(&doc, "fleet.region-missing");
            assert_eq!(missing["regions"], serde_json::json!(["eu"]), "{doc}");
            assert!(
                missing["evidence"][0]
                    .as_str()
                    .is_some_and(|e| e.starts_with("eu:") && e.contains("went away while check")),
                "{missing}"
            );
        } else {
            // Red team round 18 (D5): never a run that exits 4 without a document that says
            // so: the endpoint is a row unknown (exit 4), with no report.
            assert!(
                out.contains(&format!(
                    "it is written to {file_arg} as unknown without a report (exit 4): the check named no --regions"
                )),
                "{out}"
            );
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&file).expect("the file"))
                    .expect("JSON");
            assert_eq!(doc["schema"], "vantage.reports/v1", "{doc}");
            assert_eq!(doc["exit_code"], 4, "{doc}");
            assert_eq!(doc["summary"][0]["decision"], "unknown", "{doc}");
            assert_eq!(doc["reports"], serde_json::json!([]), "{doc}");
        }
        c.proc.wait_exit(Duration::from_secs(30));
    }
}

/// Fresh eyes round 14, item 2: a SIGTERM while a check runs lets the check finish within
/// `server.drain_timeout`, and its client then met a closed API 10 ms later: "the check's
/// regions did not report", a false fleet.region-missing. The API stays up a moment after the
/// drain's checks finished: the client gets the merged report (the target never answered:
/// probe.incomplete in eu, unknown), never "went away".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_the_drain_finished_reaches_its_client() {
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let url = silent.url();
    let dir = Scratch::new("drain-collect");
    let file = dir.join("report.json");
    let file_arg = file.display().to_string();
    let args = [
        "--regions",
        "eu",
        "--timeout",
        "3s",
        "-f",
        "json",
        "-o",
        &file_arg,
    ];
    let (_c, status, out) = stopped_mid_check_draining("drain-collect-c", &url, &args, "20s").await;
    assert_eq!(status.and_then(|s| s.code()), Some(4), "{out}");
    assert!(!out.contains("went away"), "{out}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("the report file"))
            .expect("JSON");
    assert_eq!(doc["decision"], "unknown", "{doc}");
    let ids: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(ids.contains(&"probe.incomplete"), "{ids:?}");
    assert!(!ids.contains(&"fleet.region-missing"), "{ids:?}");
}
