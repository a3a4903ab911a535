//! The command line: `--allow-non-global` widens the policy of `vantage check` (a control
//! that shows the internal service is reachable and would leak, were it not for the
//! policy), and the policy flags are refused with `--coordinator`, naming the key that
//! sets them, before anything is sent.

use super::lab::{twin_listeners, Answer, CountingServer, Request};
use super::{hostile, internal, Hostile, SECRET};
use crate::support::vantage_env;

#[tokio::test]
async fn allowing_the_internal_prefix_reaches_it_which_is_what_the_policy_prevents() {
    let (internal_l, public_l) = twin_listeners().await;
    let port = public_l.local_addr().unwrap().port();
    let inside = internal(internal_l);
    let _target = hostile(
        public_l,
        Hostile {
            resource_metadata: Some(format!("http://127.0.0.1:{port}/latest/meta-data/iam")),
            ..Hostile::default()
        },
    );
    let url = format!("http://127.0.0.2:{port}/mcp");
    let out = vantage_env(&["check", &url, "-f", "json", "--check-timeout", "2s"], &[]).await;
    assert_eq!(inside.connections(), 0);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
    let out = vantage_env(
        &[
            "check",
            &url,
            "-f",
            "json",
            "--check-timeout",
            "2s",
            "--allow-non-global",
            "127.0.0.1/32",
        ],
        &[],
    )
    .await;
    assert!(inside.connections() > 0, "allowed, so fetched");
    // The credential is in the evidence (auth.prm: resource differs): the leak the policy
    // keeps out of every default report.
    assert!(String::from_utf8_lossy(&out.stdout).contains(SECRET));
}

#[tokio::test]
async fn policy_flags_are_refused_with_a_coordinator_and_nothing_is_sent() {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let api = CountingServer::start(
        listener,
        std::sync::Arc::new(|_: &Request| Answer::json(202, serde_json::json!({"id": "x"}))),
    );
    let base = format!("http://{}", api.addr);
    for (flag, value, key) in [
        ("--assume-global", "198.51.100.0/24", "probe.assume_global"),
        (
            "--allow-non-global",
            "100.64.0.0/10",
            "probe.allow_non_global",
        ),
    ] {
        let out = vantage_env(
            &[
                "check",
                "https://mcp.example.com/mcp",
                "--coordinator",
                &base,
                flag,
                value,
            ],
            &[("VANTAGE_API_TOKEN", "t")],
        )
        .await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("{flag} is not sent to a fleet"))
                && stderr.contains(key)
                && stderr.contains("coordinator's configuration"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    assert_eq!(api.connections(), 0, "refused before any request");
}

/// Flags that shape this machine's vantage are refused with `--coordinator`, each naming
/// what does it in a fleet; nothing is sent. (They were validated, then silently unused.)
#[tokio::test]
async fn local_vantage_flags_are_refused_with_a_coordinator_and_nothing_is_sent() {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let api = CountingServer::start(
        listener,
        std::sync::Arc::new(|_: &Request| Answer::json(202, serde_json::json!({"id": "x"}))),
    );
    let base = format!("http://{}", api.addr);
    for (flag, value, names) in [
        (
            "--check-timeout",
            "2s",
            &[
                "--check-timeout is not sent to a fleet",
                "probe.check_timeout",
                "vantage-agent",
            ][..],
        ),
        (
            "--nameserver",
            "127.0.0.1:53",
            &[
                "--nameserver is not sent to a fleet",
                "its own --nameserver",
            ][..],
        ),
        (
            "--region",
            "eu",
            &["with --coordinator none runs here", "--regions eu"][..],
        ),
        (
            "--ca-file",
            "/nonexistent/ca.pem",
            &["plain http://", "--target-ca-file", "probe.ca_file"][..],
        ),
    ] {
        let out = vantage_env(
            &[
                "check",
                "https://mcp.example.com/mcp",
                "--coordinator",
                &base,
                flag,
                value,
            ],
            &[("VANTAGE_API_TOKEN", "t")],
        )
        .await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag}: {stderr}");
        for n in names {
            assert!(stderr.contains(n), "{flag}: {n:?} missing: {stderr}");
        }
        assert!(
            stderr.contains("Drop") || stderr.contains("drop"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    assert_eq!(api.connections(), 0, "refused before any request");
}
