//! The habits people expect of a command: short flags, `-` for standard output, quiet and
//! verbose, shell completions and man pages from the same definitions as --help, bounded
//! durations with a clear error, a demo hint that fits, and API errors that are all JSON.

use std::process::{Command, Stdio};

use serde_json::Value;
use vantage_fixture::{Fault, Fixture};

use crate::support::{assert_valid, tmpdir, vantage, vantage_async};

fn s(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

/// The `vantage` binary with `args`, stdin closed, in `dir` when given (else this test's
/// own directory), off the async runtime.
async fn vantage_in(dir: Option<&std::path::Path>, args: &[&str]) -> std::process::Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let dir = dir.map(std::path::Path::to_path_buf);
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vantage"));
        cmd.args(&args).stdin(Stdio::null());
        if let Some(d) = &dir {
            cmd.current_dir(d);
        }
        cmd.output().unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn dash_is_standard_output_and_short_flags_work() {
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let dir = tmpdir("dash");
    let url = fixture.url();
    let out = vantage_in(Some(&dir), &["check", &url, "-f", "json", "-o", "-"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report on stdout");
    assert_valid(&report);
    assert!(!dir.join("-").exists(), "no file named `-`");
    // `-o -` is `-o FILE` with standard output as the file: the document on stdout, the
    // one-line summary with the gate line on stderr (a CI log piping stdout to jq keeps it).
    let decision = report["decision"].as_str().unwrap();
    assert_eq!(
        s(&out.stderr),
        format!(
            "{decision} for {}: report written to standard output; gate: passed\n",
            fixture.url()
        )
    );
    // Without -o the report alone: nothing on stderr.
    let out = vantage_in(None, &["check", &url, "-f", "json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", s(&out.stderr));

    // -o FILE: the report in the file, one summary line with the gate on stderr.
    let file = dir.join("r.md");
    let out = vantage_async(vec![
        "check".into(),
        fixture.url(),
        "-f".into(),
        "markdown".into(),
        "-o".into(),
        file.display().to_string(),
        "--fail-on".into(),
        "review".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        s(&out.stderr),
        format!(
            "review for {}: report written to {}; gate: failed (--fail-on review)\n",
            fixture.url(),
            file.display()
        )
    );
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.contains("`gate: failed (--fail-on review)`"), "{md}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn quiet_is_the_summary_and_verbose_lists_every_check() {
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let quiet = vantage_async(vec!["check".into(), fixture.url(), "-q".into()]).await;
    assert_eq!(quiet.status.code(), Some(0));
    let text = s(&quiet.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], format!("REVIEW  {}", fixture.url()));
    assert!(lines[1].starts_with(
        "  because: GET on the endpoint is not answered 405 with Allow (transport.get, medium"
    ));
    assert_eq!(lines[2], "  gate: passed");
    assert!(quiet.stderr.is_empty());
    // -q with a machine format: the whole document, nothing else.
    let json = vantage_async(vec![
        "check".into(),
        fixture.url(),
        "-q".into(),
        "-f".into(),
        "json".into(),
    ])
    .await;
    assert_valid(&serde_json::from_slice(&json.stdout).unwrap());
    // -v: one line per check, skipped ones with their reason.
    let verbose = vantage_async(vec!["check".into(), fixture.url(), "-v".into()]).await;
    let text = s(&verbose.stdout);
    for c in vantage_agent::catalog::CheckId::ALL {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(c.as_str())),
            "-v lacks {}: {text}",
            c.as_str()
        );
    }
    assert!(text.contains("    skip  tls.handshake"), "{text}");
    assert!(text.contains("plain http"), "{text}");
    // Both at once is a usage error that names the conflict.
    let both = vantage(&["check", &fixture.url(), "-q", "-v"], &[]);
    assert_eq!(both.status.code(), Some(1));
    assert!(
        s(&both.stderr).contains("cannot be used with"),
        "{}",
        s(&both.stderr)
    );
    // The demo is quiet too.
    let demo = vantage(&["demo", "-q"], &[]);
    assert!(demo.stderr.is_empty(), "{}", s(&demo.stderr));
}

#[test]
fn durations_are_bounded_with_a_clear_error_and_nothing_runs() {
    for (flag, value, needle) in [
        ("--timeout", "999999999h", "is longer than the limit of 10m"),
        ("--check-timeout", "11m", "is longer than the limit of 10m"),
        ("--timeout", "0s", "greater than zero"),
        ("--timeout", "soon", "write e.g. 500ms, 5s, 2m"),
        ("--listen-window", "0s", "greater than zero"),
        ("--listen-window", "11m", "is longer than the limit of 10m"),
    ] {
        let out = vantage(&["check", "http://127.0.0.1:9/mcp", flag, value], &[]);
        assert_eq!(out.status.code(), Some(1), "{flag} {value}");
        let err = s(&out.stderr);
        assert!(err.contains(needle), "{flag} {value}: {err}");
        assert!(err.contains(flag), "the message names the flag: {err}");
        assert!(out.stdout.is_empty());
    }
    let ok = vantage(&["check", "--help"], &[]);
    assert!(s(&ok.stdout).contains("at most 10m"));
    // The agent's duration flags are bounded the same way, before it dials anything.
    for (flag, value, needle) in [
        (
            "--check-timeout",
            "999999999h",
            "is longer than the limit of 10m",
        ),
        ("--backoff-max", "0s", "greater than zero"),
        ("--listen-window", "0s", "greater than zero"),
        ("--listen-window", "11m", "is longer than the limit of 10m"),
    ] {
        let out = Command::new(crate::procs::bin("vantage-agent"))
            .args([
                "--coordinator",
                "http://127.0.0.1:1",
                "--region",
                "eu",
                flag,
                value,
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{flag} {value}");
        assert!(s(&out.stderr).contains(needle), "{}", s(&out.stderr));
    }
}

/// `--region` follows the configuration's rule for a region label: an empty, path-like or
/// unprintable label is refused naming the flag and the rule, before any traffic.
#[test]
fn a_bad_region_label_is_refused_before_any_traffic() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    for (label, needle) in [
        ("", "the region label is empty"),
        ("a/b", "the region label `a/b` has `/`"),
        ("eu\u{1b}[31m", "has U+001B"),
    ] {
        let out = vantage(&["check", &url, "--region", label], &[]);
        assert_eq!(out.status.code(), Some(1), "{label:?}");
        let err = s(&out.stderr);
        assert!(err.contains("--region"), "names the flag: {err}");
        assert!(err.contains(needle), "{label:?}: {err}");
        assert!(
            err.contains("a region label is 1 to 63 letters, digits, `-`, `_` or `.`"),
            "states the rule: {err}"
        );
        assert!(out.stdout.is_empty());
        let out = Command::new(crate::procs::bin("vantage-agent"))
            .args(["--coordinator", "http://127.0.0.1:1", "--region", label])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "agent {label:?}");
        let err = s(&out.stderr);
        assert!(err.contains("--region") && err.contains(needle), "{err}");
    }
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "nothing connected to the target"
    );
    // A valid label still runs (the port is closed now: the run ends, not refused as usage).
    drop(listener);
    let out = vantage(&["check", &url, "--region", "eu-west.1", "-q"], &[]);
    assert_ne!(out.status.code(), Some(1), "{}", s(&out.stderr));
    assert!(
        !s(&out.stderr).contains("region label"),
        "{}",
        s(&out.stderr)
    );
}

#[test]
fn the_demo_hint_fits_what_was_shown() {
    let faulty = vantage(&["demo", "-f", "json"], &[]);
    let err = s(&faulty.stderr);
    assert!(
        err.contains("would exit 2 here; try `vantage demo --clean`"),
        "{err}"
    );
    let clean = vantage(&["demo", "--clean", "-f", "json"], &[]);
    let err = s(&clean.stderr);
    assert!(
        err.contains("would exit 0 here; try `vantage demo` to see"),
        "{err}"
    );
    assert!(!err.contains("--clean`"), "{err}");
}

#[test]
fn completions_come_from_the_same_definitions_and_parse() {
    let bash = vantage(&["completions", "bash"], &[]);
    assert_eq!(bash.status.code(), Some(0));
    let script = s(&bash.stdout);
    for word in ["--fail-on-severity", "--format", "completions", "check"] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
    let dir = tmpdir("completions");
    let path = dir.join("vantage.bash");
    std::fs::write(&path, &script).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(syntax.status.success(), "{}", s(&syntax.stderr));
    // Loaded into bash, it completes a flag of `check`.
    let probe = format!(
        "source {}; COMP_WORDS=(vantage check --fail-on-s); COMP_CWORD=2; COMP_LINE='vantage check --fail-on-s'; COMP_POINT=${{#COMP_LINE}}; _vantage vantage --fail-on-s check; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let done = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert_eq!(
        s(&done.stdout).trim(),
        "--fail-on-severity",
        "{}",
        s(&done.stderr)
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = vantage(&["completions", shell], &[]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(s(&out.stdout).contains("fail-on-severity"), "{shell}");
    }
    let bad = vantage(&["completions", "tcsh"], &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        s(&bad.stderr).contains("possible values"),
        "{}",
        s(&bad.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn man_pages_render_and_list_the_flags() {
    let page = vantage(&["man", "check"], &[]);
    assert_eq!(page.status.code(), Some(0), "{}", s(&page.stderr));
    let roff = s(&page.stdout);
    assert!(roff.contains(".TH vantage-check 1"), "{roff}");
    assert!(roff.contains("\\-\\-fail\\-on\\-severity"), "{roff}");
    // groff renders it without a warning.
    let dir = tmpdir("man");
    std::fs::write(dir.join("vantage-check.1"), &roff).unwrap();
    let out = Command::new("groff")
        .args(["-man", "-Tascii", "-ww", "-P-cbou"])
        .arg(dir.join("vantage-check.1"))
        .output()
        .expect("groff renders man pages");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        s(&out.stderr)
    );
    assert!(
        s(&out.stdout).contains("--fail-on-severity <SEVERITY>"),
        "{}",
        s(&out.stdout)
    );
    // Every page into a directory.
    let all = vantage(&["man", "--dir", &dir.display().to_string()], &[]);
    assert_eq!(all.status.code(), Some(0), "{}", s(&all.stderr));
    for name in [
        "vantage.1",
        "vantage-check.1",
        "vantage-serve.1",
        "vantage-completions.1",
    ] {
        assert!(dir.join(name).is_file(), "{name} missing");
    }
    let missing = vantage(&["man", "--dir", "/nonexistent/man1"], &[]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(s(&missing.stderr).contains("create it first"));
    let unknown = vantage(&["man", "frobnicate"], &[]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        s(&unknown.stderr).contains("one of: check"),
        "{}",
        s(&unknown.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `vantage man | head` and the like: a reader that closed the pipe is no error (exit 0,
/// nothing on stderr). The read end is closed before the process starts, so every write fails.
#[test]
fn a_closed_pipe_is_not_an_error() {
    for args in [
        &["man"][..],
        &["man", "check"],
        &["completions", "bash"],
        &["schema"],
        &["explain", "--table"],
        &["explain", "dns.resolve"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", s(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", s(&out.stderr));
    }
}

/// `vantage-agent … 2>&1 | head -3` and `vantage serve … | head`: a daemon whose log reader
/// closed the pipe ends quietly (exit 0), not with a panic (exit 101). The read end is closed
/// before the process starts, so its first log line fails.
#[test]
fn a_daemon_whose_log_reader_is_gone_ends_quietly() {
    let dir = tmpdir("closedlog");
    let token = dir.join("agent.token");
    std::fs::write(&token, "closed-pipe-agent-token").unwrap();
    let mut agent = Command::new(crate::procs::bin("vantage-agent"));
    agent.args([
        "--coordinator",
        "http://127.0.0.1:1",
        "--region",
        "eu",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        token.to_str().unwrap(),
    ]);
    let mut serve = Command::new(env!("CARGO_BIN_EXE_vantage"));
    serve
        .arg("serve")
        .env(
            "VANTAGE_SERVER__GENERATED_TOKEN_FILE",
            dir.join("api-token").display().to_string(),
        )
        .env("VANTAGE_SERVER__API_LISTEN", "127.0.0.1:0")
        .env("VANTAGE_SERVER__GRPC_LISTEN", "127.0.0.1:0");
    for (name, mut cmd) in [("vantage-agent", agent), ("vantage serve", serve)] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let status = cmd
            .env_remove("VANTAGE_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(writer)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{name}: {status}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A one-shot command whose log reader is gone keeps its own exit code: the gate's verdict
/// (here 4: the target never answered), never 0 for a closed pipe, never a panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_whose_log_reader_is_gone_keeps_its_exit_code() {
    use vantage_fixture::{Hostile, HostileServer};
    let silent = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let url = silent.url();
    let status = tokio::task::spawn_blocking(move || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(["check", &url, "-f", "json", "--timeout", "1s"])
            // Trace: the HTTP client logs every connection, so log lines are written.
            .env("VANTAGE_LOG", "trace")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(writer)
            .status()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        status.code(),
        Some(4),
        "unknown (nothing observed): {status}"
    );
}

/// Red team round 18, D3: `--listen-window` sets how long the listen stream is watched after
/// its acknowledgement, and the pass says that window; a window as long as the check's
/// deadline (given or the default 30s) is refused before any traffic, naming the fix.
#[tokio::test]
async fn the_listen_window_is_the_one_the_evidence_names_and_is_bounded_by_the_deadline() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let url = fixture.url();
    let out = vantage_in(
        None,
        &[
            "check",
            &url,
            "-v",
            "--color",
            "never",
            "--listen-window",
            "40ms",
        ],
    )
    .await;
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("listen.sse"))
        .unwrap_or_else(|| panic!("no listen.sse line: {text}"));
    assert!(line.trim_start().starts_with("pass"), "{line}");
    assert!(
        line.contains("open 40 ms after its acknowledgement (the listen window watched; a stream that ends later is not seen)"),
        "{line}"
    );
    let before = fixture.requests();
    for (args, needle) in [
        (
            &["--listen-window", "30s"][..],
            "--listen-window 30s is not shorter than --timeout 30s by default",
        ),
        (
            &["--listen-window", "5s", "--timeout", "3s"][..],
            "lower --listen-window below 3s or raise --timeout above 5s",
        ),
    ] {
        let mut all = vec!["check", url.as_str()];
        all.extend_from_slice(args);
        let out = vantage_in(None, &all).await;
        let err = s(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(fixture.requests(), before, "refused before any traffic");
}
