//! The release gate on real runs of the `vantage` binary: many endpoints under one gate
//! (the exit code is the worst), `--targets FILE`, and a baseline written by `vantage
//! baseline --from`, then accepted, expired and stale, as JSON, JUnit (read by its real
//! consumers) and Markdown show it.

use serde_json::Value;
use vantage_fixture::{Fault, Fixture};

use crate::evidence_support::finding;
use crate::junit_consumer::{cases_with, consume};
use crate::support::{assert_valid, vantage_env, Scratch};

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// `vantage ARGS`, which must refuse (exit 1): its stderr.
async fn refused(args: &[&str]) -> String {
    let out = vantage_env(args, &[]).await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

/// Three endpoints, one clean, one review, one blocked: one report each, a summary, and the
/// worst gate's exit code, in every format.
#[tokio::test]
async fn many_endpoints_one_gate_the_worst_exit_code() {
    let clean = Fixture::start(&[]).await.unwrap();
    let review = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let blocked = Fixture::start(&[Fault::UnknownMethodHtml404])
        .await
        .unwrap();
    let dir = Scratch::new("many");
    let list = dir.join("targets.txt");
    std::fs::write(
        &list,
        format!(
            "# endpoints under test\n{}\n\n{}   # a page on GET\n",
            review.url(),
            blocked.url()
        ),
    )
    .unwrap();
    let list = list.to_str().unwrap().to_string();

    let out = vantage_env(
        &["check", &clean.url(), "--targets", &list, "-f", "json"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "vantage.reports/v1");
    assert_eq!(doc["exit_code"], 2);
    let summary: Vec<(String, String, u64)> = doc["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["target"].as_str().unwrap().to_string(),
                e["decision"].as_str().unwrap().to_string(),
                e["exit_code"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (clean.url(), "pass".into(), 0),
            (review.url(), "review".into(), 0),
            (blocked.url(), "blocked".into(), 2),
        ]
    );
    for r in doc["reports"].as_array().unwrap() {
        assert_valid(r);
    }

    // --fail-on review: the review endpoint fails too; the text ends with the summary.
    let out = vantage_env(
        &[
            "check",
            &clean.url(),
            &review.url(),
            "--fail-on",
            "review",
            "--color",
            "never",
        ],
        &[],
    )
    .await;
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("Summary: 2 endpoints: 1 pass, 1 review; exit 2 (the worst gate)"),
        "{stdout}"
    );
    // Only clean endpoints: 0.
    let out = vantage_env(
        &[
            "check",
            &clean.url(),
            &clean.url().replace("127.0.0.1", "localhost"),
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));

    // JUnit: one document, suites named per endpoint, read by its real consumers.
    let out = vantage_env(&["check", "--targets", &list, "-f", "junit"], &[]).await;
    let seen = consume(&String::from_utf8_lossy(&out.stdout));
    let failures = cases_with(&seen, "failure");
    assert_eq!(
        failures,
        vec![(
            format!("vantage.local[{}]", blocked.url()),
            "method.unknown".to_string()
        )]
    );
}

/// Bad input is refused before any traffic, with the line and the fix; nothing is written.
#[tokio::test]
async fn a_bad_targets_file_changes_nothing() {
    let dir = Scratch::new("badtargets");
    let list = dir.join("targets.txt");
    std::fs::write(&list, "https://ok.example/mcp\nftp://nope.example/\n").unwrap();
    let report = dir.join("r.json");
    let (list_s, report_s) = (list.to_str().unwrap(), report.to_str().unwrap());
    let stderr = refused(&["check", "--targets", list_s, "-o", report_s]).await;
    assert!(
        stderr.contains("targets.txt:2: `ftp://nope.example/`"),
        "{stderr}"
    );
    assert!(!report.exists());
    // Every bad line at once, with its line number: not one per run.
    std::fs::write(
        &list,
        "\u{feff}ftp://nope.example/\nhttps://ok.example/mcp\nhttps://u:pw@x.example/mcp\nhttps://ok.example/mcp\nhttps://b.example/mcp extra\n",
    )
    .unwrap();
    let stderr = refused(&["check", "gopher://arg.example/", "--targets", list_s]).await;
    for needle in [
        "5 endpoints are refused, so nothing was checked",
        "endpoint `gopher://arg.example/`: scheme `gopher`",
        "targets.txt:5: `https://b.example/mcp` is followed by `extra`",
        "targets.txt:1: `ftp://nope.example/`",
        "targets.txt:3: `https://[redacted]@x.example/mcp`",
        "targets.txt:4: https://ok.example/mcp is already named by --targets",
    ] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    assert!(!stderr.contains("pw@"), "{stderr}");
    std::fs::write(&list, "# nothing here\n\n").unwrap();
    let stderr = refused(&["check", "--targets", list_s]).await;
    assert!(stderr.contains("no endpoint in it"), "{stderr}");
    let twice = ["check", "https://a.example/mcp", "https://a.example/mcp"];
    let stderr = refused(&twice).await;
    assert!(stderr.contains("already named"), "{stderr}");
    refused(&["check"]).await;
}

/// A baseline written from a report accepts its findings: they stay, marked, in JSON, JUnit
/// and Markdown, and the gate passes. An expired entry fails it with the date; an entry
/// for a finding that is gone is reported stale.
#[tokio::test]
async fn a_baseline_accepts_expires_and_goes_stale() {
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let url = fixture.url();
    let dir = Scratch::new("baseline");
    let report = dir.join("report.json");
    let base = dir.join("baseline.toml");
    let (report_s, base_s) = (report.to_str().unwrap(), base.to_str().unwrap());
    let out = vantage_env(
        &[
            "check",
            &url,
            "-f",
            "json",
            "-o",
            report_s,
            "--fail-on",
            "review",
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    // The report says what the gate concluded, as the process exits with it.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        doc["gate"],
        serde_json::json!({"result": "failed", "exit_code": 2, "flags": "--fail-on review",
            "line": "gate: failed (--fail-on review)"})
    );
    let out = vantage_env(
        &[
            "baseline",
            "--from",
            report_s,
            "-o",
            base_s,
            "--reason",
            "edge page, OPS-42",
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let written = std::fs::read_to_string(&base).unwrap();
    assert!(written.contains("finding = \"transport.get\""), "{written}");
    // It refuses to overwrite.
    let stderr = refused(&["baseline", "--from", report_s, "-o", base_s]).await;
    assert!(stderr.contains("--force"), "{stderr}");

    // Accepted: exit 0, marked in every format.
    let args = |format: &str| {
        vec![
            "check".to_string(),
            url.clone(),
            "--fail-on".into(),
            "review".into(),
            "--baseline".into(),
            base_s.to_string(),
            "-f".into(),
            format.into(),
        ]
    };
    let run = |format: &'static str| {
        let a = args(format);
        async move {
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            vantage_env(&refs, &[]).await
        }
    };
    let out = run("json").await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&doc);
    let f = finding(&doc, "transport.get");
    assert_eq!(f["accepted"]["status"], "accepted");
    assert_eq!(f["accepted"]["reason"], "edge page, OPS-42");
    assert_eq!(doc["decision"], "review", "the decision stays the merge's");
    assert_eq!(
        (&doc["gate"]["result"], &doc["gate"]["exit_code"]),
        (&serde_json::json!("passed"), &serde_json::json!(0)),
        "the gate's own conclusion beside it: {}",
        doc["gate"]
    );
    assert_eq!(
        doc["baseline"]["accepted"],
        serde_json::json!(["transport.get"])
    );
    let junit = run("junit").await;
    assert_eq!(junit.status.code(), Some(0));
    let xml = String::from_utf8_lossy(&junit.stdout).to_string();
    let seen = consume(&xml);
    assert!(cases_with(&seen, "failure").is_empty(), "{xml}");
    assert!(xml.contains("accepted by the baseline until"), "{xml}");
    let md = run("markdown").await;
    let md = String::from_utf8_lossy(&md.stdout).to_string();
    assert!(
        md.contains("medium (accepted by the baseline until"),
        "{md}"
    );
    assert!(
        md.contains("gate: passed (1 finding(s) accepted by the baseline)"),
        "{md}"
    );

    // Expired: the gate fails and says which entry, from when.
    let expired = written.replace(
        &written
            .lines()
            .find(|l| l.starts_with("expires"))
            .unwrap()
            .to_string(),
        "expires = 2020-01-31",
    );
    std::fs::write(&base, &expired).unwrap();
    let out = run("text").await;
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains(
            "gate: failed (baseline: the acceptance of transport.get expired on 2020-01-31"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("ACCEPTANCE EXPIRED on 2020-01-31"),
        "{stdout}"
    );
    let junit = run("junit").await;
    let seen = consume(&String::from_utf8_lossy(&junit.stdout));
    assert_eq!(
        cases_with(&seen, "failure"),
        vec![("vantage.local".to_string(), "transport.get".to_string())]
    );

    // Stale: the finding is gone (the fault repaired); the entry is named, the gate passes.
    fixture.set_faults(&[]);
    std::fs::write(&base, &written).unwrap();
    let out = run("json").await;
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["baseline"]["stale"][0]["finding"], "transport.get");
    let out = run("text").await;
    assert!(
        text(&out)
            .0
            .contains("stale entry (matches nothing; remove it): transport.get"),
        "{}",
        text(&out).0
    );

    // Spellings: an entry for `…/mcp/` accepts the finding of `…/mcp`; one for `localhost`
    // (another endpoint: names are not resolved) is stale with its endpoint, not dropped.
    fixture.set_faults(&[Fault::GetHtml]);
    let other = url.replace("127.0.0.1", "localhost");
    std::fs::write(
        &base,
        format!(
            "[[accept]]\nendpoint = \"{url}/\"\nfinding = \"transport.get\"\nreason = \"slash\"\nexpires = 2099-12-31\n\
             [[accept]]\nendpoint = \"{other}\"\nfinding = \"transport.get\"\nreason = \"other host\"\nexpires = 2099-12-31\n"
        ),
    )
    .unwrap();
    let out = run("json").await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&doc);
    assert_eq!(
        doc["baseline"]["accepted"],
        serde_json::json!(["transport.get"])
    );
    let stale = doc["baseline"]["stale"].as_array().unwrap();
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert_eq!(stale[0]["endpoint"], other);
    assert_eq!(stale[0]["reason"], "other host");
    assert!(
        stale[0]["note"]
            .as_str()
            .unwrap()
            .contains("was not checked in this run"),
        "{stale:?}"
    );

    // A bad baseline is refused before any traffic.
    std::fs::write(&base, "[[accept]]\nendpoint = \"http://x/mcp\"\n").unwrap();
    let out = run("json").await;
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("missing field"), "{:?}", text(&out));
    // A missing one names the path and the OS error once.
    let missing = dir.join("missing.toml");
    let stderr = refused(&["check", &url, "--baseline", missing.to_str().unwrap()]).await;
    assert!(
        stderr.contains(&format!("baseline {}: ", missing.display())),
        "{stderr}"
    );
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
}
