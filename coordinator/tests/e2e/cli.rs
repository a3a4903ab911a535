//! The `vantage` command: exit codes 0, 1 and 2, formats, --output, and errors that say
//! what to fix and change nothing.

use serde_json::Value;
use vantage_fixture::{Fault, Fixture};

use crate::support::{assert_valid, vantage, vantage_async};

fn s(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

#[tokio::test]
async fn exit_0_on_a_clean_target_and_the_json_report_validates() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let out = vantage_async(vec![
        "check".into(),
        fixture.url(),
        "--format".into(),
        "json".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", s(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_valid(&report);
    assert_eq!(report["schema"], "vantage.report/v1");
    assert_eq!(report["decision"], "pass");
    assert_eq!(report["regions"][0]["region"], "local");
}

#[tokio::test]
async fn exit_2_when_the_gate_fails() {
    let fixture = Fixture::start(&[Fault::UnknownMethodHtml404])
        .await
        .unwrap();
    let out = vantage_async(vec![
        "check".into(),
        fixture.url(),
        "--color".into(),
        "never".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(2), "stderr: {}", s(&out.stderr));
    let text = s(&out.stdout);
    assert!(
        text.starts_with("BLOCKED  "),
        "the decision comes first: {text}"
    );
    assert!(text.contains("method.unknown"), "{text}");
    assert!(!text.contains("\x1b["), "no colour when not on a terminal");
}

#[tokio::test]
async fn review_passes_the_gate_unless_fail_on_review() {
    // A GET answered with a page (medium): the target was observed, the decision is review.
    // (A same-host redirect is no longer one: the region never got an MCP answer, so it did
    // not observe the target, and the decision is unknown: checks.md 4.1.)
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let out = vantage_async(vec!["check".into(), fixture.url()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stdout));
    assert!(s(&out.stdout).starts_with("REVIEW"));
    let out = vantage_async(vec![
        "check".into(),
        fixture.url(),
        "--fail-on".into(),
        "review".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn exit_1_for_bad_input_with_the_fix_in_the_message() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["check", "ftp://example.invalid/mcp"],
            "use http:// or https://",
        ),
        (&["check", "not a url"], "give the full endpoint"),
        (
            &["check", "https://user:secret@example.invalid/mcp"],
            "remove it",
        ),
        (
            &[
                "check",
                "http://127.0.0.1:9/mcp",
                "--assume-global",
                "300.1.2.0/24",
            ],
            "is not a CIDR prefix",
        ),
        (
            &["check", "http://127.0.0.1:9/mcp", "--timeout", "soon"],
            "write e.g. 500ms",
        ),
        (
            &["check", "http://127.0.0.1:9/mcp", "--format", "yaml"],
            "possible values",
        ),
        (
            &[
                "check",
                "http://127.0.0.1:9/mcp",
                "--ca-file",
                "/nonexistent/ca.pem",
            ],
            "--ca-file /nonexistent/ca.pem",
        ),
        (
            &[
                "check",
                "http://127.0.0.1:9/mcp",
                "--output",
                "/nonexistent/dir/r.json",
            ],
            "does not exist",
        ),
        (&["check"], "required"),
        (&["frobnicate"], "unrecognized subcommand"),
    ];
    for (args, needle) in cases {
        let out = vantage(args, &[]);
        let err = s(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: stderr lacks {needle:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
        // A refused URL's password is never repeated (the URL with userinfo above).
        assert!(!err.contains("secret"), "{args:?}: {err}");
    }
    assert!(!std::path::Path::new("/nonexistent/dir/r.json").exists());
}

#[test]
fn help_teaches_and_exits_0() {
    let out = vantage(&["check", "--help"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let help = s(&out.stdout);
    for flag in [
        "--format",
        "--output",
        "--fail-on",
        "--assume-global",
        "--ca-file",
        "--timeout",
    ] {
        assert!(help.contains(flag), "help lacks {flag}");
    }
    let top = s(&vantage(&["--help"], &[]).stdout);
    assert!(top.contains("Exit codes"), "{top}");
}

#[tokio::test]
async fn output_file_and_every_format() {
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    // Removed when the test ends, passed or failed (it was left in /tmp by every run).
    let dir = crate::support::Scratch::new("cli");
    for (format, check) in [
        (
            "json",
            Box::new(|t: &str| {
                serde_json::from_str::<Value>(t)
                    .map(|v| assert_valid(&v))
                    .is_ok()
            }) as Box<dyn Fn(&str) -> bool>,
        ),
        (
            "junit",
            Box::new(|t: &str| {
                // Read by the consumers (schema and junitparser); the finding is below the
                // default gate, so nothing fails.
                let seen = crate::junit_consumer::consume(t);
                seen["suites"][0]["name"] == "vantage.local"
                    && seen["failures"] == 0
                    && t.contains("transport.get")
            }),
        ),
        (
            "markdown",
            Box::new(|t: &str| {
                t.contains("## Vantage: **review**") && t.contains("| medium | `transport.get`")
            }),
        ),
        ("text", Box::new(|t: &str| t.starts_with("REVIEW"))),
    ] {
        let path = dir.join(format!("report.{format}"));
        let out = vantage_async(vec![
            "check".into(),
            fixture.url(),
            "--format".into(),
            format.into(),
            "--output".into(),
            path.display().to_string(),
        ])
        .await;
        assert_eq!(out.status.code(), Some(0), "{format}: {}", s(&out.stderr));
        assert!(
            out.stdout.is_empty(),
            "{format}: the report goes to the file only"
        );
        assert!(s(&out.stderr).contains("report written to"), "{format}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(check(&text), "{format} output malformed:\n{text}");
    }
}

#[test]
fn the_demo_runs_with_no_network_and_shows_findings() {
    let out = vantage(&["demo", "--color", "never"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    let text = s(&out.stdout);
    assert!(text.starts_with("BLOCKED"), "{text}");
    for id in [
        "method.unknown",
        "transport.get",
        "security.origin-not-validated",
    ] {
        assert!(text.contains(id), "demo lacks {id}");
    }
    let clean = vantage(&["demo", "--clean", "--format", "json"], &[]);
    let report: Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert_eq!(report["decision"], "pass");
}

/// The command prints what the catalogue explains (its content is tested in `explain`), and
/// refuses a typo with the way to the list.
#[test]
fn explain_prints_the_catalogue_and_refuses_unknown_ids() {
    let out = vantage(&["explain", "egress.blocked"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    let want = vantage_coordinator::explain::explain("egress.blocked").unwrap();
    assert_eq!(s(&out.stdout), want);
    let out = vantage(&["explain", "--table"], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(s(&out.stdout), vantage_coordinator::explain::table());
    let out = vantage(&["explain", "transport.gett"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = s(&out.stderr);
    assert!(
        err.contains("unknown check or finding id `transport.gett`"),
        "{err}"
    );
    assert!(err.contains("vantage explain --table"), "{err}");
    // No id and no --table is a usage error.
    assert_eq!(vantage(&["explain"], &[]).status.code(), Some(1));
}

/// `-o` naming the run's own `--baseline` or `--targets` file (even by another spelling of
/// the path), or a directory, is refused before any traffic: exit 1, both flags and the fix
/// named, the input file unchanged, and no connection reached the loopback target.
#[test]
fn output_onto_an_input_file_or_a_directory_is_refused_before_any_traffic() {
    let dir = crate::support::Scratch::new("output-inputs");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::fs::create_dir(dir.join("sub")).unwrap();
    let baseline = dir.join("base.toml");
    let targets = dir.join("targets.txt");
    std::fs::write(&baseline, "# the committed baseline\n").unwrap();
    std::fs::write(&targets, format!("{url}\n")).unwrap();
    let other_spelling = dir.join("sub/../base.toml");
    let (b, t, o) = (
        baseline.to_str().unwrap(),
        targets.to_str().unwrap(),
        other_spelling.to_str().unwrap(),
    );
    let d = dir.to_str().unwrap();
    let cases: [(Vec<&str>, Vec<String>); 3] = [
        (
            vec!["check", &url, "--baseline", b, "-o", o, "-f", "json"],
            vec![
                format!("--output {o} is the --baseline file"),
                "write the report elsewhere".into(),
            ],
        ),
        (
            vec!["check", "--targets", t, "-o", t],
            vec![
                format!("--output {t} is the --targets file"),
                "write the report elsewhere".into(),
            ],
        ),
        (
            vec!["check", &url, "-o", d],
            vec![format!("--output {d}: is a directory; name a file")],
        ),
    ];
    for (args, needles) in cases {
        let out = vantage(&args, &[]);
        let err = s(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        for needle in needles {
            assert!(
                err.contains(&needle),
                "{args:?}: stderr lacks {needle:?}: {err}"
            );
        }
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    assert_eq!(
        std::fs::read_to_string(&baseline).unwrap(),
        "# the committed baseline\n"
    );
    assert_eq!(
        std::fs::read_to_string(&targets).unwrap(),
        format!("{url}\n")
    );
    // A connection would wait in the backlog: none is there, so nothing was sent.
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "a connection reached the target"
    );
}
