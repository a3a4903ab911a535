//! The authorization checks against the protected fixture (its bearer-token gate, protected
//! resource metadata and authorization server metadata): each fault alone breaks its own
//! check; with every token the clean protected fixture passes; without one the checks that
//! need it are skipped with the reason; a token the server echoes never reaches the result.

use vantage_agent::catalog::{in_stage, CheckId, Stage};
use vantage_agent::model::{Cause, Outcome, Severity};
use vantage_fixture::{Fault, Fixture, FIXTURE_TOKEN};

use crate::run::{
    all_tokens, assert_outcomes, assert_problem_severities, assert_problems, check, options,
    problems, run_with, Problem,
};

use Outcome::{Fail, Warn};
use Severity::{Critical, High, Low, Medium};

#[tokio::test]
async fn the_clean_protected_fixture_passes_with_a_token() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let region = run_with(&fixture.url(), all_tokens()).await;
    assert_problems(&region, &[]);
    assert!(region.protected && region.authenticated);
    assert_outcomes(&region, in_stage(Stage::Auth), Outcome::Pass);
    // The transport checks ran authenticated.
    assert_outcomes(
        &region,
        [CheckId::HeadersMissingMethod, CheckId::MethodUnknown],
        Outcome::Pass,
    );
}

#[tokio::test]
async fn without_a_token_what_could_run_ran_and_the_rest_says_why_not() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let region = run_with(&fixture.url(), options()).await;
    assert!(region.protected && !region.authenticated);
    assert_outcomes(
        &region,
        [
            CheckId::AuthChallenge,
            CheckId::AuthPrm,
            CheckId::AuthAsMetadata,
            CheckId::AuthGarbageToken,
        ],
        Outcome::Pass,
    );
    let skipped = check(&region, CheckId::HeadersMissingMethod);
    assert_eq!(skipped.outcome, Outcome::Skip);
    assert!(
        skipped.observed.contains("--token-env"),
        "{}",
        skipped.observed
    );
    assert_eq!(
        check(&region, CheckId::AuthWrongAudience).outcome,
        Outcome::Skip
    );
}

/// The engine's side of `coordinator/tests/e2e/auth.rs`'s table.
#[tokio::test]
async fn each_auth_fault_breaks_its_own_check_alone() {
    type Row = (Fault, &'static [Problem]);
    let table: &[Row] = &[
        (
            Fault::AuthNoChallenge,
            &[(CheckId::AuthChallenge, Fail, Some(High), None)],
        ),
        (
            Fault::AuthChallengeNoMetadata,
            &[(CheckId::AuthChallenge, Warn, Some(Low), None)],
        ),
        (
            Fault::AuthMetadata404,
            &[(CheckId::AuthPrm, Fail, Some(High), None)],
        ),
        (
            Fault::AuthPrmTrailingSlash,
            &[(CheckId::AuthPrm, Fail, Some(High), None)],
        ),
        (
            Fault::AuthPrmOtherHost,
            &[(CheckId::AuthPrm, Fail, Some(High), None)],
        ),
        (
            Fault::AuthPrmNoServers,
            &[(CheckId::AuthPrm, Fail, Some(High), None)],
        ),
        // A complete document served as text/html: a MUST broken (medium; it passed).
        (
            Fault::AuthPrmHtmlType,
            &[(CheckId::AuthPrm, Fail, Some(Medium), None)],
        ),
        // An HTML page where the metadata should be: no metadata.
        (
            Fault::AuthPrmHtmlPage,
            &[(CheckId::AuthPrm, Fail, Some(High), None)],
        ),
        (
            Fault::AuthIssuerMismatch,
            &[(CheckId::AuthAsMetadata, Fail, Some(High), None)],
        ),
        // The authorization server's complete document served as text/html: the same MUST
        // as the protected resource metadata's (RFC 8414 section 3.2), medium (it passed).
        (
            Fault::AuthAsHtmlType,
            &[(CheckId::AuthAsMetadata, Fail, Some(Medium), None)],
        ),
        (
            Fault::AuthNoS256,
            &[(CheckId::AuthAsMetadata, Fail, Some(High), None)],
        ),
        (
            Fault::AuthGarbageAccepted,
            &[(
                CheckId::AuthGarbageToken,
                Fail,
                Some(Critical),
                Some(Cause::TokenAccepted),
            )],
        ),
        // Anything shaped as a JWT is let through: the random token is one (it was an
        // opaque string, refused there, and the fault passed).
        (
            Fault::AuthAnyJwt,
            &[(
                CheckId::AuthGarbageToken,
                Fail,
                Some(Critical),
                Some(Cause::TokenAccepted),
            )],
        ),
        (
            Fault::AuthWrongAudienceAccepted,
            &[(
                CheckId::AuthWrongAudience,
                Fail,
                Some(Critical),
                Some(Cause::TokenAccepted),
            )],
        ),
        (
            Fault::AuthNoScope200,
            &[(CheckId::AuthInsufficientScope, Fail, Some(Low), None)],
        ),
        (
            Fault::AuthMetadataRedirect,
            &[(
                CheckId::AuthMetadataRedirect,
                Fail,
                Some(High),
                Some(Cause::CrossHost),
            )],
        ),
    ];
    let mut failures = Vec::new();
    for (fault, expected) in table {
        let fixture = Fixture::start(&[*fault]).await.unwrap();
        let region = run_with(&fixture.url(), all_tokens()).await;
        let got = problems(&region);
        if got != *expected {
            failures.push(format!(
                "{}: expected {expected:?}, got {got:?}",
                fault.name()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn observations_name_the_rule_that_failed() {
    for (fault, id, needle) in [
        (
            Fault::AuthPrmTrailingSlash,
            CheckId::AuthPrm,
            "not the endpoint URL",
        ),
        (
            Fault::AuthIssuerMismatch,
            CheckId::AuthAsMetadata,
            "issuer.vantage-fixture.invalid",
        ),
        (
            Fault::AuthPrmHtmlType,
            CheckId::AuthPrm,
            "served as Content-Type: text/html; charset=utf-8 (the metadata response MUST be application/json",
        ),
        (
            Fault::AuthPrmHtmlPage,
            CheckId::AuthPrm,
            "no protected resource metadata: ",
        ),
        (
            Fault::AuthAsHtmlType,
            CheckId::AuthAsMetadata,
            "served as Content-Type: text/html; charset=utf-8 (the metadata response MUST be application/json, RFC 8414 section 3.2); the document itself is complete",
        ),
    ] {
        let fixture = Fixture::start(&[fault]).await.unwrap();
        let c = check(&run_with(&fixture.url(), all_tokens()).await, id);
        assert!(c.observed.contains(needle), "{id}: {}", c.observed);
    }
}

#[tokio::test]
async fn expect_auth_makes_an_open_endpoint_fail_the_challenge() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let mut o = options();
    o.expect_auth = true;
    let region = run_with(&fixture.url(), o).await;
    assert_problem_severities(&region, &[(CheckId::AuthChallenge, Some(High))]);
}

/// The engine sees the same broken rule on a protected endpoint as on an open one (medium);
/// that a protected endpoint makes it high is the merge's reading (`coordinator/src/merge.rs`,
/// e2e `auth::a_foreign_origin_on_a_protected_endpoint_is_high`).
#[tokio::test]
async fn a_foreign_origin_on_a_protected_endpoint_fails_the_origin_check() {
    let fixture = Fixture::start(&[Fault::Protected, Fault::OriginAccepted])
        .await
        .unwrap();
    let region = run_with(&fixture.url(), all_tokens()).await;
    assert!(region.protected);
    assert_problems(
        &region,
        &[(CheckId::SecurityOrigin, Fail, Some(Medium), None)],
    );
}

#[tokio::test]
async fn a_refused_credential_is_said_plainly() {
    let fixture = Fixture::start(&[Fault::Protected]).await.unwrap();
    let mut o = options();
    o.credentials.token = Some("not-the-right-token".to_string().into());
    let region = run_with(&fixture.url(), o).await;
    let c = check(&region, CheckId::HeadersMissingMethod);
    assert!(
        c.observed.contains("credential was refused"),
        "{}",
        c.observed
    );
}

#[tokio::test]
async fn a_token_echoed_by_the_server_is_scrubbed_from_the_result() {
    let fixture = Fixture::start(&[Fault::AuthEchoToken]).await.unwrap();
    let region = run_with(&fixture.url(), all_tokens()).await;
    let json = serde_json::to_string(&region).unwrap();
    assert!(
        !json.contains(FIXTURE_TOKEN),
        "the echoed token reached the result"
    );
    let c = check(&region, CheckId::MethodUnknown);
    assert!(c.observed.contains("[redacted]"), "{}", c.observed);
}
