//! On a terminal (a real pseudo-terminal from util-linux `script`): a live progress line with
//! the stage and the elapsed time, per region in fleet mode, and colour. On a pipe: not one
//! escape code.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use vantage_fixture::{Fixture, Hostile, HostileServer};

use crate::procs::{agent_per_region, coordinator, API_TOKEN};

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Run `vantage args` with its standard input, output and error on a pseudo-terminal;
/// returns the exit code and everything the terminal received.
fn in_pty(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut line = quote(env!("CARGO_BIN_EXE_vantage"));
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    let mut cmd = Command::new("script");
    // -q quiet, -e the child's exit code, -f flush as it comes, -c the command; no log file.
    cmd.args(["-qefc", &line, "/dev/null"])
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .expect("`script` (util-linux) runs the command on a pseudo-terminal");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

async fn in_pty_async(args: Vec<String>, env: Vec<(String, String)>) -> (Option<i32>, String) {
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        in_pty(&a, &e)
    })
    .await
    .unwrap()
}

/// The stages the live line showed, in order (each redraw starts with `\r\x1b[2K`).
fn stages_shown(screen: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for frame in screen.split("\r\x1b[2K").skip(1) {
        // `- checking URL from local: era (1.2 s)`; anything else is the report.
        if !frame.get(1..).is_some_and(|f| f.starts_with(" checking ")) {
            continue;
        }
        let Some((_, rest)) = frame.split_once(": ") else {
            continue;
        };
        let Some((stage, _)) = rest.split_once(" (") else {
            continue;
        };
        if seen.last().map(String::as_str) != Some(stage) {
            seen.push(stage.to_string());
        }
    }
    seen
}

#[tokio::test]
async fn a_terminal_shows_the_stage_and_elapsed_time_and_colour() {
    // A server that accepts and never answers keeps the era stage on screen for a second.
    let server = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let (code, screen) = in_pty_async(
        vec![
            "check".into(),
            server.url(),
            "--check-timeout".into(),
            "1s".into(),
        ],
        vec![],
    )
    .await;
    // Nothing answered an MCP request within the per-exchange timeout: no evidence either
    // way (checks.md 4.1 (c)), so unknown (exit 4), never blocked.
    assert_eq!(code, Some(4), "{screen}");
    let stages = stages_shown(&screen);
    assert_eq!(
        stages,
        ["starting", "DNS", "connect", "era"],
        "every stage is drawn when it starts: {screen:?}"
    );
    assert!(
        screen.contains(&format!(
            "- checking {} from local: starting (0.",
            server.url()
        )),
        "the line names the target and counts the time: {screen:?}"
    );
    // The line is cleared before the report; the decision is coloured.
    assert!(
        screen.contains("\r\x1b[2K\x1b[1;35mUNKNOWN\x1b[0m"),
        "{screen:?}"
    );
    assert!(
        screen.contains("\x1b[35mgate: unknown (exit 4: "),
        "{screen:?}"
    );

    // NO_COLOR: no colour, the progress line stays (it is not colour).
    let (_, plain) = in_pty_async(
        vec![
            "check".into(),
            server.url(),
            "--check-timeout".into(),
            "1s".into(),
        ],
        vec![("NO_COLOR".into(), "1".into())],
    )
    .await;
    assert!(
        !plain.contains("\x1b[1;35m") && !plain.contains("\x1b[0m"),
        "{plain:?}"
    );
    assert!(plain.contains("\r\x1b[2K"));
    // -q: nothing but the summary, even on a terminal.
    let (_, quiet) = in_pty_async(
        vec![
            "check".into(),
            server.url(),
            "--check-timeout".into(),
            "1s".into(),
            "-q".into(),
        ],
        vec![("NO_COLOR".into(), "1".into())],
    )
    .await;
    assert!(!quiet.contains('\x1b'), "{quiet:?}");
    // The decision, because, gate, and (nothing was decided) the fix under the gate line.
    assert_eq!(quiet.lines().count(), 4, "{quiet:?}");
    assert!(
        quiet.lines().nth(3).unwrap().starts_with("  fix: "),
        "{quiet:?}"
    );
}

#[tokio::test]
async fn a_pipe_never_receives_an_escape_code() {
    let server = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let fixture = Fixture::start(&[vantage_fixture::Fault::GetHtml])
        .await
        .unwrap();
    for (url, extra) in [
        (server.url(), vec!["--check-timeout", "1s"]),
        (fixture.url(), vec!["-v"]),
        (fixture.url(), vec!["-f", "markdown"]),
    ] {
        let mut args = vec!["check".to_string(), url];
        args.extend(extra.iter().map(|s| s.to_string()));
        let out: Output = crate::support::vantage_async(args.clone()).await;
        assert!(out.status.code().is_some());
        for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            assert!(
                !bytes.contains(&0x1b),
                "{args:?}: an escape code reached the {name} pipe: {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert!(!out.stdout.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_mode_shows_each_region_as_it_arrives() {
    let dir = std::env::temp_dir().join(format!("vantage-pty-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = coordinator(&dir, &["eu", "us", "ap"], "127.0.0.1:0", "127.0.0.1:0", "");
    // ap has no agent (named at once); eu and us wait out a server that never answers.
    let _agents = agent_per_region(&c.grpc, &["eu", "us"]);
    crate::fleet::wait_agents(&c, 2, Duration::from_secs(15)).await;
    let server = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let (code, screen) = in_pty_async(
        vec![
            "check".into(),
            server.url(),
            "--coordinator".into(),
            c.api.clone(),
            "--regions".into(),
            "eu,us,ap".into(),
            "--timeout".into(),
            "8s".into(),
        ],
        vec![("VANTAGE_API_TOKEN".into(), API_TOKEN.into())],
    )
    .await;
    assert_eq!(
        code,
        Some(4),
        "no region observed the target (a timeout is no evidence): {screen}"
    );
    assert!(
        screen.contains("\r\n  ap           no-agent "),
        "ap is shown when it is known: {screen:?}"
    );
    // Each region observed nothing (the server never answered within its wait): partial
    // (red team round 18, N3).
    for region in ["eu", "us"] {
        assert!(
            screen.contains(&format!("\r\n  {region:<12} partial  ")),
            "{region} is shown when it arrives: {screen:?}"
        );
    }
    let stages = stages_shown(&screen);
    assert!(
        stages.iter().any(|s| s == "1 of 3 region(s) reported"),
        "the live line counts regions while eu and us work: {stages:?}"
    );
    assert_eq!(
        stages.last().map(String::as_str),
        Some("3 of 3 region(s) reported")
    );
    assert!(screen.contains("submitted to "), "{screen:?}");
    // The live line names the target whole (it was cut in the middle with the API's URL).
    assert!(
        screen.contains(&format!(" checking {}: ", server.url())),
        "{screen:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
