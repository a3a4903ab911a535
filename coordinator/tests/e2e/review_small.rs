//! Review item 6, the small ones of the agent crate: `vantage-agent --nameserver 1.2.3.4`
//! said "invalid socket address syntax" (now the fix, `:53`, from the parser `vantage
//! check` uses); `--concurrency 0` and `--backoff-min` above `--backoff-max` were accepted;
//! a TLS failure showed rustls's internal form (`Other(OtherError(CaUsedAsEndEntity))`);
//! and a skip reason ended in double parentheses ("(no 401))").

use std::process::{Command, Stdio};

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome};
use vantage_fixture::Fixture;

use crate::support::{check, check_with, options, outcome, TlsFront};

fn agent(extra: &[&str]) -> std::process::Output {
    Command::new(crate::procs::bin("vantage-agent"))
        .args(["--coordinator", "http://127.0.0.1:1", "--region", "eu"])
        .args(extra)
        .env("VANTAGE_AGENT_TOKEN", "x")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn agent_flags_that_cannot_work_are_refused_with_the_fix() {
    for (args, needles) in [
        (
            &["--nameserver", "1.2.3.4"][..],
            &["--nameserver", "has no port; write 1.2.3.4:53"][..],
        ),
        (
            &["--nameserver", "2001:db8::53"][..],
            &["write [2001:db8::53]:53"][..],
        ),
        (
            &["--concurrency", "0"][..],
            &["--concurrency", "write at least 1"][..],
        ),
        (
            &["--backoff-min", "5s", "--backoff-max", "1s"][..],
            &[
                "--backoff-min 5s is longer than --backoff-max 1s",
                "at most --backoff-max",
            ][..],
        ),
    ] {
        let out = agent(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {err}");
        }
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A server that presents a CA certificate as its own (trusted as an anchor, so only the
/// CA-as-end-entity rule refuses it): the evidence says so in words.
#[tokio::test]
async fn a_tls_failure_is_said_in_words_not_in_rustls_internal_form() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    let front = TlsFront::start(fixture.addr, &cert.pem(), &key.serialize_pem()).await;
    let mut opts = options();
    opts.extra_ca_pem = Some(cert.pem().into_bytes());
    let report = check_with(
        &format!("https://localhost:{}/mcp", front.addr.port()),
        opts,
    )
    .await;
    let hs = outcome(&report, CheckId::TlsHandshake);
    assert_eq!((hs.outcome, hs.cause), (Outcome::Fail, Some(Cause::Tls)));
    assert!(
        hs.observed
            .contains("the server presented a CA certificate as its own certificate"),
        "{}",
        hs.observed
    );
    for internal in ["OtherError", "CaUsedAsEndEntity", "InvalidCertificate("] {
        assert!(!hs.observed.contains(internal), "{}", hs.observed);
    }
}

#[tokio::test]
async fn skip_reasons_have_balanced_parentheses() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let report = check(&fixture.url()).await;
    let c = outcome(&report, CheckId::AuthChallenge);
    assert_eq!(c.outcome, Outcome::Skip);
    assert!(
        c.observed.contains("did not ask for authorization"),
        "{}",
        c.observed
    );
    // Wrapped in parentheses by a renderer, it must not end in "))".
    assert!(
        !format!("({})", c.observed).contains("))"),
        "{}",
        c.observed
    );
}
