//! The authorization boundary on the requests that act: a server whose `server/discover`,
//! `tools/list` and `initialize` are public while `tools/call` and `subscriptions/listen`
//! answer 401 with a Bearer challenge. It ended `unknown` (probe.incomplete, exit 4) without a
//! credential, every auth check "did not ask for authorization", and with one the random
//! token was never sent where the server protects. The challenge there is the boundary
//! (`checks.md` 2.5 "runs when an unauthenticated request gets 401"); a refusal without a
//! Bearer challenge stays "answered for another reason" (4.1).

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, RegionResult};
use vantage_fixture::Fault;

use crate::auth_paths::{random_token_accepted, seen};
use crate::run::{assert_seen, check, problems, unknowns};

/// Discovery, tools/list and the 2025-11-25 initialize served without a token: only
/// tools/call, subscriptions/listen (and what is not a list) need one.
const ACTS_PROTECTED: [Fault; 3] = [
    Fault::AuthDiscoverPublic,
    Fault::AuthToolsListPublic,
    Fault::AuthLegacyOpen,
];

/// A run against the fixture with [`ACTS_PROTECTED`] and `extra`.
async fn region(extra: &[Fault], with_token: bool) -> RegionResult {
    let faults: Vec<Fault> = ACTS_PROTECTED.iter().chain(extra).copied().collect();
    crate::auth_paths::region(&faults, with_token).await
}

/// The boundary judged from the challenge on tools/call: protected, authenticated as given,
/// the challenge and the metadata it names pass, and the random token was sent (and refused
/// with 401) on both requests that asked for authorization.
#[track_caller]
fn boundary_on_the_acts(r: &RegionResult, authenticated: bool) {
    assert!(r.protected, "not protected");
    assert_eq!(r.authenticated, authenticated);
    let pass = (Outcome::Pass, None);
    seen(
        r,
        CheckId::AuthChallenge,
        pass,
        "401 with Bearer; resource_metadata=",
    );
    seen(r, CheckId::AuthPrm, pass, "resource matches");
    seen(r, CheckId::AuthAsMetadata, pass, "S256");
    seen(r, CheckId::AuthGarbageToken, pass, "tools/call: 401");
    seen(
        r,
        CheckId::AuthGarbageToken,
        pass,
        "subscriptions/listen: 401",
    );
}

/// No credential: the run stops at the boundary it found on tools/call, as for any
/// "authorization required and no credential given" (the merge's auth.credential-required,
/// exit 3), with nothing left `unknown`.
#[tokio::test]
async fn without_a_credential_a_boundary_on_tools_call_is_the_boundary() {
    let r = region(&[], false).await;
    boundary_on_the_acts(&r, false);
    seen(
        &r,
        CheckId::HeadersMissingMethod,
        (Outcome::Skip, None),
        "the endpoint requires authorization (tools/call without a token answered 401) and no credential was given; name one with --token-env",
    );
    seen(&r, CheckId::EraDetect, (Outcome::Pass, None), "dual");
    assert_eq!(unknowns(&r), vec![], "nothing unobserved is left unnamed");
}

/// With the credential the protocol checks run authenticated (tools/call and listen tried
/// with the token), and the token probes ask where the server protects: clean.
#[tokio::test]
async fn with_a_credential_the_token_probes_ask_on_tools_call_and_listen() {
    let r = region(&[], true).await;
    boundary_on_the_acts(&r, true);
    let pass = (Outcome::Pass, None);
    seen(&r, CheckId::AuthWrongAudience, pass, "401");
    seen(
        &r,
        CheckId::AuthInsufficientScope,
        pass,
        "insufficient_scope",
    );
    seen(&r, CheckId::ListenSse, pass, "text/event-stream");
    seen(&r, CheckId::HeadersNameMismatch, pass, "-32020");
    assert_eq!(problems(&r), vec![]);
    assert_eq!(unknowns(&r), vec![]);
}

/// tools/call lets any bearer token through: the random token sent there is let through,
/// `auth.garbage-token` critical (auth.invalid-token-accepted), where it was.
#[tokio::test]
async fn a_random_token_let_through_on_tools_call_is_critical() {
    let r = region(&[Fault::AuthToolsAnyToken], true).await;
    assert!(r.protected && r.authenticated);
    random_token_accepted(&r, "tools/call: 200");
}

/// A refusal without a Bearer challenge (a bare 403: an access rule in front of the server)
/// is not the authorization layer: no boundary, auth.* "did not ask", and what those
/// requests test stays `unknown` for another reason (not observed, never passed).
#[tokio::test]
async fn a_bare_403_on_tools_call_is_not_the_boundary() {
    let r = region(&[Fault::AuthNoTokenBare403], false).await;
    assert!(!r.protected && !r.authenticated);
    seen(
        &r,
        CheckId::AuthChallenge,
        (Outcome::Skip, None),
        "did not ask for authorization",
    );
    for id in [CheckId::HeadersNameMismatch, CheckId::ListenSse] {
        let c = check(&r, id);
        assert_seen(
            &c,
            (c.outcome, c.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "refused before the MCP layer: answered 403",
        );
    }
    // The advice never tells the operator to name a credential as the way past a refusal
    // without a Bearer challenge (one named with --token-env is sent only after a 401 with
    // a Bearer challenge): it says what the endpoint must answer.
    assert!(
        r.checks.iter().any(|c| c.observed.contains(
            "if the endpoint needs a credential, it must answer 401 with a Bearer challenge"
        )),
        "{:?}",
        r.checks.iter().map(|c| &c.observed).collect::<Vec<_>>()
    );
    assert!(r
        .checks
        .iter()
        .all(|c| !c.observed.contains("or name a credential with --token-env")));
}

/// Fresh eyes round 14, item 1: tools/call answers a token-less request 401 *without*
/// `WWW-Authenticate` and lets any bearer token through. It passed with a credential (every
/// auth check "its answer was not a 401", the random token never sent to tools/call). A 401
/// is the authorization layer's answer: the boundary is there, auth.challenge fails for the
/// missing challenge, and the random token sent to tools/call is let through (critical).
#[tokio::test]
async fn a_bare_401_on_tools_call_is_the_boundary_and_gets_the_random_token() {
    for with_token in [true, false] {
        let r = region(
            &[Fault::AuthNoChallenge, Fault::AuthToolsAnyToken],
            with_token,
        )
        .await;
        assert!(r.protected, "{with_token}: not protected");
        let c = check(&r, CheckId::AuthChallenge);
        assert_eq!(c.outcome, Outcome::Fail, "{with_token}: {}", c.observed);
        random_token_accepted(&r, "tools/call: 200");
    }
}
