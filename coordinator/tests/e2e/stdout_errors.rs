//! A report that cannot be written to standard output (a full disk behind `> report.json`)
//! is an error, exit 1 with the cause and the fix: a CI step that reads the report next must
//! not find it missing after a gate that looked passed. A reader that stops early (`| head`)
//! is not an error: the exit code stays the gate's. (Red team round 10, item 5.)

use std::process::{Command, Stdio};

use vantage_fixture::{Fault, Fixture};

fn check(url: &str, format: &str, stdout: Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["check", url, "-f", format])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("vantage runs")
}

#[tokio::test]
async fn a_report_standard_output_could_not_take_is_exit_1_naming_the_cause() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let url = fixture.url();
    for format in ["json", "text", "junit"] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let url = url.clone();
        let out = tokio::task::spawn_blocking(move || {
            check(&url, format, Stdio::from(full))
                .wait_with_output()
                .unwrap()
        })
        .await
        .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{format}: {err}");
        assert!(
            err.contains("writing the report to standard output")
                && err.contains("No space left on device")
                && err.contains("-o FILE")
                && err.contains("gate: passed"),
            "{format}: {err}"
        );
    }
}

#[tokio::test]
async fn a_reader_that_stops_early_keeps_the_gates_exit_code() {
    let fixture = Fixture::start(&[Fault::UnknownMethodHtml404])
        .await
        .unwrap();
    let url = fixture.url();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = check(&url, "json", Stdio::piped());
        // The reader goes away before the report is written: the write gets EPIPE.
        drop(child.stdout.take());
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "the gate's code (blocked): {err}"
    );
    assert!(!err.contains("error"), "{err}");
}
