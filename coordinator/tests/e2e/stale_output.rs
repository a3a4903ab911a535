//! `vantage check -o FILE` that ends in an error before any result (exit 1) never leaves a
//! FILE from an earlier run in place: a pipeline that reads the file instead of the exit code
//! would read that earlier pass as this run's. The run removes it and says so on stderr; a
//! run that does write its document replaces FILE whole (a temporary file renamed over it).

use std::io::{Read, Write};

use vantage_fixture::Fixture;

use crate::support::{vantage_env, Scratch};

/// A loopback HTTP server that answers every request with `status` (an empty body), as a
/// coordinator's API behind a wrong path or a broken proxy would.
fn answering(status: &str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let status = status.to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut buf = [0u8; 8192];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .as_bytes(),
            );
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_run_that_fails_before_any_result_leaves_no_earlier_pass_behind() {
    let dir = Scratch::new("stale-output");
    let file = dir.join("report.json");
    let path = file.display().to_string();
    let fixture = Fixture::start(&[]).await.unwrap();
    let url = fixture.url();

    // An earlier run: a clean server, a passing report in FILE.
    let earlier = || async {
        let out = vantage_env(&["check", &url, "-f", "json", "-o", &path], &[]).await;
        assert_eq!(out.status.code(), Some(0), "{:?}", out);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["decision"], "pass");
        assert_eq!(v["gate"]["exit_code"], 0);
    };

    let not_found = answering("404 Not Found");
    let broken = answering("500 Internal Server Error");
    let runs: Vec<(&str, Vec<&str>)> = vec![
        (
            "coordinator answers 404",
            vec![
                "--coordinator",
                &not_found,
                "--api-token-env",
                "STALE_API_TOKEN",
            ],
        ),
        (
            "coordinator answers 500",
            vec![
                "--coordinator",
                &broken,
                "--api-token-env",
                "STALE_API_TOKEN",
            ],
        ),
        // Refused after parsing: a wait as long as the whole check.
        ("bad flag", vec!["--timeout", "2s", "--check-timeout", "5s"]),
    ];
    for (why, extra) in &runs {
        earlier().await;
        let mut args = vec!["check", url.as_str(), "-f", "json", "-o", path.as_str()];
        args.extend(extra.iter().copied());
        let out = vantage_env(&args, &[("STALE_API_TOKEN", "stale-output-test-token")]).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{why}: {err}");
        assert!(
            !file.exists(),
            "{why}: the earlier passing report is still in {path}: {err}"
        );
        assert!(err.contains("removed"), "{why}: stderr says so: {err}");
        assert!(err.contains(&path), "{why}: stderr names the file: {err}");
    }

    // A bad target: the same.
    earlier().await;
    let out = vantage_env(
        &["check", "ftp://127.0.0.1/mcp", "-f", "json", "-o", &path],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(!file.exists(), "a bad target leaves the earlier pass");

    // A run that writes its document replaces FILE whole and leaves no temporary file.
    earlier().await;
    let left: Vec<_> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["report.json".to_string()]);
}

#[test]
fn an_output_path_that_is_an_input_is_never_removed() {
    // The path is refused before the run, so the error does not remove the baseline it names.
    let dir = Scratch::new("stale-output-input");
    let baseline = dir.join("vantage-baseline.toml");
    std::fs::write(&baseline, "").unwrap();
    let b = baseline.display().to_string();
    let out = crate::support::vantage(
        &[
            "check",
            "http://127.0.0.1:1/mcp",
            "--baseline",
            &b,
            "-o",
            &b,
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(baseline.exists(), "the baseline was removed");
}
