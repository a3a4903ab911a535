//! The command line: `--allow-non-global` widens the policy of `vantage check` (a control
//! that shows the internal service is reachable and would leak, were it not for the
//! policy), and the policy flags are refused with `--coordinator`, naming the key that
//! sets them, before anything is sent.

use super::lab::{Answer, CountingServer, Request};
use super::{Hostile, Lab, SECRET};
use crate::support::vantage_env;

#[tokio::test]
async fn allowing_the_internal_prefix_reaches_it_which_is_what_the_policy_prevents() {
    let lab = Lab::start(|port| {
        Hostile::pointing_at(format!("http://127.0.0.1:{port}/latest/meta-data/iam"))
    })
    .await;
    let url = format!("http://127.0.0.2:{}/mcp", lab.port);
    let out = vantage_env(&["check", &url, "-f", "json", "--check-timeout", "2s"], &[]).await;
    assert_eq!(lab.inside.connections(), 0);
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
    assert!(lab.inside.connections() > 0, "allowed, so fetched");
    // The credential is in the evidence (auth.prm: resource differs): the leak the policy
    // keeps out of every default report.
    assert!(String::from_utf8_lossy(&out.stdout).contains(SECRET));
}

/// A stand-in for a coordinator's API that counts its connections (it would accept any
/// check).
async fn counting_api() -> CountingServer {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    CountingServer::start(
        listener,
        std::sync::Arc::new(|_: &Request| Answer::json(202, serde_json::json!({"id": "x"}))),
    )
}

/// `vantage check … --coordinator API FLAG VALUE` is refused: exit 1, nothing on stdout.
/// Its stderr.
async fn refused_with_a_coordinator(api: &CountingServer, flag: &str, value: &str) -> String {
    let base = format!("http://{}", api.addr);
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
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{flag}: {stderr}");
    assert!(out.stdout.is_empty(), "{flag}");
    stderr
}

#[tokio::test]
async fn policy_flags_are_refused_with_a_coordinator_and_nothing_is_sent() {
    let api = counting_api().await;
    for (flag, value, key) in [
        ("--assume-global", "198.51.100.0/24", "probe.assume_global"),
        (
            "--allow-non-global",
            "100.64.0.0/10",
            "probe.allow_non_global",
        ),
    ] {
        let stderr = refused_with_a_coordinator(&api, flag, value).await;
        assert!(
            stderr.contains(&format!("{flag} is not sent to a fleet"))
                && stderr.contains(key)
                && stderr.contains("coordinator's configuration"),
            "{stderr}"
        );
    }
    assert_eq!(api.connections(), 0, "refused before any request");
}

/// Flags that shape this machine's vantage are refused with `--coordinator`, each naming
/// what does it in a fleet; nothing is sent. (They were validated, then silently unused.)
#[tokio::test]
async fn local_vantage_flags_are_refused_with_a_coordinator_and_nothing_is_sent() {
    let api = counting_api().await;
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
            "--listen-window",
            "2s",
            &["--listen-window is not sent to a fleet", "vantage-agent"][..],
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
            // A flag without a value: the "value" is another harmless flag (-q).
            "--no-ipv6",
            "-q",
            &[
                "--no-ipv6 is not sent to a fleet",
                "vantage-agent --no-ipv6",
                "probe.ipv6 = false",
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
        let stderr = refused_with_a_coordinator(&api, flag, value).await;
        for n in names {
            assert!(stderr.contains(n), "{flag}: {n:?} missing: {stderr}");
        }
        assert!(
            stderr.contains("Drop") || stderr.contains("drop"),
            "{stderr}"
        );
    }
    assert_eq!(api.connections(), 0, "refused before any request");
}
