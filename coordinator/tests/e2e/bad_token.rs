//! Red team round 15, defect 3: an operator token with a newline or a control byte inside
//! could not go in `Authorization: Bearer …`, and the request that failed on this side was
//! blamed on the target (BLOCKED, `era.detect` "No MCP protocol answers at this URL"). It is
//! refused where it is loaded, naming its source and the kind of character, never the token:
//! `vantage check` exits 1 before any traffic, `vantage serve` refuses a `[[credentials]]`
//! entry at start.

use crate::support::{vantage, Scratch};

const HALF_A: &str = "SeCrEtPiece1234";
const HALF_B: &str = "SECONDhalf98765";

/// Neither half of the token, nor any 8 characters of it, in `text`.
fn no_piece_of_the_token(text: &str) {
    for half in [HALF_A, HALF_B] {
        for i in 0..=half.len() - 8 {
            assert!(
                !text.contains(&half[i..i + 8]),
                "a piece of the token: {text}"
            );
        }
    }
}

#[test]
fn a_token_that_cannot_go_in_a_header_stops_vantage_check_naming_its_source() {
    let dir = Scratch::new("bad-token");
    let file = dir.join("token");
    // A control byte inside; the trailing CRLF alone would be trimmed.
    std::fs::write(&file, format!("{HALF_A}\u{1}{HALF_B}\r\n")).unwrap();
    let file_s = file.display().to_string();
    let with_newline = format!("{HALF_A}\n{HALF_B}");
    // Nothing listens on the discard port; the refusal comes before any traffic anyway.
    let url = "http://127.0.0.1:9/mcp";
    for (args, env, needle) in [
        (
            vec!["check", url, "--token-env", "BADTOK"],
            vec![("BADTOK", with_newline.as_str())],
            "error: --token-env: environment variable BADTOK: the token contains a newline, which cannot be sent in an HTTP header".to_string(),
        ),
        (
            vec!["check", url, "--token-file", &file_s],
            vec![],
            format!("error: --token-file: token file {file_s}: the token contains a control character, which cannot be sent in an HTTP header"),
        ),
        (
            vec!["check", url, "--other-audience-token-env", "BADTOK", "-f", "json"],
            vec![("BADTOK", with_newline.as_str())],
            "error: --other-audience-token-env: environment variable BADTOK: the token contains a newline".to_string(),
        ),
    ] {
        let out = vantage(&args, &env);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
        assert!(stderr.starts_with(&needle), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "no report: {stdout}");
        // Not the target's fault: no decision, no finding.
        for word in ["BLOCKED", "era.detect", "No MCP protocol"] {
            assert!(!stderr.contains(word), "{stderr}");
        }
        no_piece_of_the_token(&format!("{stdout}{stderr}"));
    }
}

#[test]
fn a_configured_credential_that_cannot_go_in_a_header_stops_vantage_serve_at_start() {
    let dir = Scratch::new("bad-token-serve");
    let config = dir.join("coordinator.toml");
    std::fs::write(
        &config,
        "[server]\napi_listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\napi_tokens = [{ token_env = \"T_API\" }]\n\
         [[credentials]]\nname = \"prod\"\ntoken_env = \"BADTOK\"\n",
    )
    .unwrap();
    let with_newline = format!("{HALF_A}\n{HALF_B}");
    let mut cmd = std::process::Command::new(crate::procs::bin("vantage"));
    cmd.args(["serve", "--config"])
        .arg(&config)
        .env("T_API", "an-api-token-of-the-test")
        .env("BADTOK", &with_newline)
        .env_remove("VANTAGE_LOG");
    // Killed by its pid when dropped: the old code started and served on.
    let mut serve = crate::procs::Proc::spawn(cmd);
    let status = serve.wait_exit(std::time::Duration::from_secs(60));
    let output = serve.output();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(1),
        "vantage serve did not refuse the credential at start:\n{output}"
    );
    // The reader threads may still be collecting the last lines.
    let line = serve.wait_for("[[credentials]] `prod`", std::time::Duration::from_secs(10));
    assert!(
        line.contains("[[credentials]] `prod`: environment variable BADTOK: the token contains a newline, which cannot be sent in an HTTP header"),
        "{line}"
    );
    no_piece_of_the_token(&serve.output());
}
