//! The authorization boundary against the protected fixture: each fault alone yields its
//! finding with its severity and nothing else above info; the clean protected fixture passes
//! with a valid token and is `unknown` (exit 3) without one; tokens never leak. Each check's
//! own outcome and observation is the agent's test (`agent/tests/engine/auth.rs`).

use vantage_agent::catalog::FindingId;
use vantage_agent::model::Severity;
use vantage_agent::{Credentials, ProbeOptions};
use vantage_coordinator::report::Decision;
use vantage_fixture::{
    Fault, Fixture, FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN, FIXTURE_TOKEN,
};

use crate::support::{above_info, check_with, ids, options, vantage, vantage_refused};

use Severity::{Critical, High, Low};

/// Options with every credential of the protected fixture.
pub(crate) fn all_tokens() -> ProbeOptions {
    let mut o = options();
    o.credentials = Credentials {
        token: Some(FIXTURE_TOKEN.to_string().into()),
        other_audience: Some(FIXTURE_OTHER_AUDIENCE_TOKEN.to_string().into()),
        missing_scope: Some(FIXTURE_NO_SCOPE_TOKEN.to_string().into()),
    };
    o
}

#[tokio::test]
async fn the_clean_protected_fixture_passes_with_a_token() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let report = check_with(&fixture.url(), all_tokens()).await;
    assert_eq!(above_info(&report), vec![], "{:#?}", report.findings);
    assert_eq!(report.decision, Decision::Pass);
}

#[tokio::test]
async fn without_a_token_the_decision_is_unknown_and_a_credential_is_required() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let report = check_with(&fixture.url(), options()).await;
    assert_eq!(report.decision, Decision::Unknown);
    assert!(report.finding(FindingId::AuthCredentialRequired).is_some());
}

#[tokio::test]
async fn each_auth_fault_is_caught_alone() {
    type Row = (Fault, &'static [(&'static str, Severity)]);
    let table: &[Row] = &[
        (Fault::AuthNoChallenge, &[("auth.challenge", High)]),
        (Fault::AuthChallengeNoMetadata, &[("auth.challenge", Low)]),
        (Fault::AuthMetadata404, &[("auth.prm", High)]),
        (Fault::AuthPrmTrailingSlash, &[("auth.prm", High)]),
        (Fault::AuthPrmOtherHost, &[("auth.prm", High)]),
        (Fault::AuthPrmNoServers, &[("auth.prm", High)]),
        (Fault::AuthPrmHtmlType, &[("auth.prm", Severity::Medium)]),
        (Fault::AuthPrmHtmlPage, &[("auth.prm", High)]),
        (Fault::AuthIssuerMismatch, &[("auth.as-metadata", High)]),
        (
            Fault::AuthAsHtmlType,
            &[("auth.as-metadata", Severity::Medium)],
        ),
        (Fault::AuthNoS256, &[("auth.as-metadata", High)]),
        (
            Fault::AuthGarbageAccepted,
            &[("auth.invalid-token-accepted", Critical)],
        ),
        (
            Fault::AuthAnyJwt,
            &[("auth.invalid-token-accepted", Critical)],
        ),
        (
            Fault::AuthWrongAudienceAccepted,
            &[("auth.invalid-token-accepted", Critical)],
        ),
        (Fault::AuthNoScope200, &[("auth.insufficient-scope", Low)]),
        (
            Fault::AuthMetadataRedirect,
            &[("auth.metadata-redirect", High)],
        ),
    ];
    let mut failures = Vec::new();
    for (fault, expected) in table {
        let fixture = Fixture::start(&[*fault]).await.unwrap();
        let report = check_with(&fixture.url(), all_tokens()).await;
        if above_info(&report) != ids(expected) {
            failures.push(format!(
                "{}: expected {expected:?}, got {:#?}",
                fault.name(),
                report.findings
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn evidence_names_the_rule_that_failed() {
    let fixture = Fixture::start(&[Fault::AuthPrmTrailingSlash])
        .await
        .unwrap();
    let report = check_with(&fixture.url(), all_tokens()).await;
    let prm = report.finding(FindingId::AuthPrm).unwrap();
    assert!(
        prm.evidence
            .iter()
            .any(|e| e.contains("not the endpoint URL")),
        "{:?}",
        prm.evidence
    );
    let fixture = Fixture::start(&[Fault::AuthIssuerMismatch]).await.unwrap();
    let report = check_with(&fixture.url(), all_tokens()).await;
    let as_md = report.finding(FindingId::AuthAsMetadata).unwrap();
    assert!(
        as_md
            .evidence
            .iter()
            .any(|e| e.contains("issuer.vantage-fixture.invalid")),
        "{:?}",
        as_md.evidence
    );
}

#[tokio::test]
async fn expect_auth_makes_an_open_endpoint_a_finding() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let mut o = options();
    o.expect_auth = true;
    let report = check_with(&fixture.url(), o).await;
    assert_eq!(above_info(&report), ids(&[("auth.challenge", High)]));
    assert_eq!(report.decision, Decision::Blocked);
}

#[tokio::test]
async fn a_foreign_origin_on_a_protected_endpoint_is_high() {
    let fixture = Fixture::start(&[Fault::Protected, Fault::OriginAccepted])
        .await
        .unwrap();
    let report = check_with(&fixture.url(), all_tokens()).await;
    assert_eq!(
        above_info(&report),
        ids(&[("security.origin-not-validated", High)])
    );
}

#[tokio::test]
async fn a_refused_credential_is_said_plainly() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let mut o = options();
    o.credentials.token = Some("not-the-right-token".to_string().into());
    let report = check_with(&fixture.url(), o).await;
    assert_eq!(report.decision, Decision::Unknown);
}

#[tokio::test]
async fn exit_3_and_no_token_anywhere_in_any_output() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let url = fixture.url();
    let dir = std::env::temp_dir().join(format!("vantage-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token_file = dir.join("token");
    std::fs::write(&token_file, format!("{FIXTURE_NO_SCOPE_TOKEN}\n")).unwrap();
    let env = [("VT", FIXTURE_TOKEN), ("VO", FIXTURE_OTHER_AUDIENCE_TOKEN)];
    let (url2, dir2, tf) = (url.clone(), dir.clone(), token_file.display().to_string());
    let outputs = tokio::task::spawn_blocking(move || {
        let mut all = Vec::new();
        let no_token = vantage(&["check", &url2], &[]);
        assert_eq!(
            no_token.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&no_token.stderr)
        );
        for format in ["text", "json", "junit", "markdown"] {
            let file = dir2.join(format!("r.{format}"));
            let out = vantage(
                &[
                    "check",
                    &url2,
                    "--format",
                    format,
                    "--output",
                    &file.display().to_string(),
                    "--token-env",
                    "VT",
                    "--other-audience-token-env",
                    "VO",
                    "--missing-scope-token-file",
                    &tf,
                ],
                &env,
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{format}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            all.push(String::from_utf8_lossy(&out.stdout).into_owned());
            all.push(String::from_utf8_lossy(&out.stderr).into_owned());
            all.push(std::fs::read_to_string(&file).unwrap());
        }
        // Verbose logging must not leak either.
        let out = vantage(
            &["check", &url2, "--token-env", "VT"],
            &[("VT", FIXTURE_TOKEN), ("VANTAGE_LOG", "trace")],
        );
        all.push(String::from_utf8_lossy(&out.stdout).into_owned());
        all.push(String::from_utf8_lossy(&out.stderr).into_owned());
        all
    })
    .await
    .unwrap();
    for text in &outputs {
        for secret in [
            FIXTURE_TOKEN,
            FIXTURE_OTHER_AUDIENCE_TOKEN,
            FIXTURE_NO_SCOPE_TOKEN,
        ] {
            assert!(
                !text.contains(secret),
                "a token leaked into output:\n{text}"
            );
        }
    }
    assert!(
        outputs
            .iter()
            .any(|t| t.contains("auth.insufficient-scope")),
        "the checks ran"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_token_echoed_by_the_server_is_scrubbed_from_the_report() {
    let fixture = Fixture::start(&[Fault::AuthEchoToken]).await.unwrap();
    let report = check_with(&fixture.url(), all_tokens()).await;
    let json = serde_json::to_string(&report).unwrap();
    assert!(
        !json.contains(FIXTURE_TOKEN),
        "the echoed token reached the report"
    );
}

#[test]
fn a_missing_token_variable_is_a_usage_error_before_any_traffic() {
    let unset = "VANTAGE_SURELY_UNSET_TOKEN";
    let err = vantage_refused(
        &["check", "http://127.0.0.1:9/mcp", "--token-env", unset],
        &[],
    );
    assert!(
        err.contains("VANTAGE_SURELY_UNSET_TOKEN is not set"),
        "{err}"
    );
}

/// `vantage fixture --fault protected` (and every auth-* fault) says which bearer token it
/// accepts, on start and in --help, so README's "for your own experiments" works with
/// --token-env: the printed command passes the clean protected fixture.
#[test]
fn the_protected_fixture_says_which_token_it_accepts() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["fixture", "--fault", "protected"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    let (first, second, third) = (next(), next(), next());
    let url = first.strip_prefix("listening ").expect(&first).to_string();
    let token = second
        .strip_prefix("bearer token accepted: ")
        .and_then(|rest| rest.split_once(' '))
        .map(|(t, _)| t.to_string())
        .expect(&second);
    let try_line =
        format!("try: FIXTURE_TOKEN={token} vantage check {url} --token-env FIXTURE_TOKEN");
    let with_token = vantage(
        &["check", &url, "--token-env", "FIXTURE_TOKEN", "-q"],
        &[("FIXTURE_TOKEN", &token)],
    );
    let _ = child.kill(); // our own child, by its handle
    let _ = child.wait();
    assert_eq!(token, FIXTURE_TOKEN);
    assert!(second.contains(FIXTURE_OTHER_AUDIENCE_TOKEN), "{second}");
    assert!(second.contains(FIXTURE_NO_SCOPE_TOKEN), "{second}");
    assert_eq!(third, try_line);
    let out = String::from_utf8_lossy(&with_token.stdout);
    assert_eq!(with_token.status.code(), Some(0), "{out}");
    assert!(out.contains("pass"), "{out}");
    let help = vantage(&["fixture", "--help"], &[]);
    let help = String::from_utf8_lossy(&help.stdout);
    for t in [
        FIXTURE_TOKEN,
        FIXTURE_OTHER_AUDIENCE_TOKEN,
        FIXTURE_NO_SCOPE_TOKEN,
    ] {
        assert!(help.contains(t), "--help names {t}: {help}");
    }
}
