//! `--check-timeout` against `--timeout` (red team round 11, nits 2, 3 and 11): a wait for
//! one exchange as long as the whole check or longer can never run out inside it. Both
//! given so: refused before any traffic, saying which to lower or raise. One a default:
//! the run goes ahead (the default is not changed), with a note saying the deadline bounds
//! the wait. The help says which checks a wait that ran out never blames on the target.

use std::net::TcpListener;

use serde_json::Value;

use crate::support::vantage;

fn s(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

#[test]
fn a_wait_not_shorter_than_the_deadline_both_given_is_refused_before_traffic() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    for (timeout, wait) in [("3s", "10s"), ("3s", "3s")] {
        let out = vantage(
            &["check", &url, "--timeout", timeout, "--check-timeout", wait],
            &[],
        );
        let err = s(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{timeout} {wait}: {err}");
        assert!(
            err.contains(&format!(
                "--check-timeout {wait} is not shorter than --timeout {timeout}: one exchange would wait as long as the whole check or longer"
            )) && err.contains(&format!(
                "lower --check-timeout below {timeout} or raise --timeout above {wait}"
            )),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "nothing connected to the target"
    );
}

/// One of the two a default: the check runs (a report on stdout), and stderr says which
/// default the deadline bounds; a wait inside the deadline gets no note.
#[test]
fn a_default_on_one_side_runs_with_a_note() {
    // A closed port on loopback: the check ends at once, refused.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for (args, note) in [
        (
            vec!["--timeout", "2s"],
            Some("note: --timeout 2s is not longer than --check-timeout (5s by default)"),
        ),
        (
            vec!["--check-timeout", "30s"],
            Some("note: --check-timeout 30s is not shorter than --timeout (30s by default)"),
        ),
        (vec!["--timeout", "3s", "--check-timeout", "2s"], None),
    ] {
        let mut all = vec!["check", url.as_str(), "-f", "json"];
        all.extend(&args);
        let out = vantage(&all, &[]);
        let err = s(&out.stderr);
        let report: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {err}"));
        assert_eq!(report["target"], url.as_str(), "{args:?}");
        match note {
            Some(note) => assert!(err.contains(note), "{args:?}: {err}"),
            None => assert!(!err.contains("note:"), "{args:?}: {err}"),
        }
    }
}

/// The help says where a wait that ran out is the target's and where it never is.
#[test]
fn the_check_timeout_help_says_listen_is_never_blamed_for_silence() {
    let out = vantage(&["check", "--help"], &[]);
    let help = s(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("listen.ack-first: never the target's, however long the wait")
            && help.contains("given with --timeout, it must be shorter")
            && !help.contains("The target is blamed for silence only when"),
        "{help}"
    );
}
