//! The random token a server cannot recognise by its shape (red team round 15, defect 1;
//! `checks.md` 2.5): a server that verifies only dotted tokens as JWTs and lets any other
//! token through as an "API key" (presence only) passed, because the random token was always
//! JWT-shaped while the operator's credential was opaque. Every run now also sends an opaque
//! random token, shaped like the credential when one is given; either let through fails
//! critical, naming the shape. And behind a *public* discovery, a request whose token-less
//! answer was not observed leaves the random token `unknown` when the run found the boundary
//! elsewhere, never when it found none (an open server stays open).

use vantage_agent::catalog::CheckId;
use vantage_agent::model::Outcome;
use vantage_fixture::Fault;

use crate::auth_paths::{
    random_token_accepted, random_token_refused, random_token_unknown_for_a_rate_limited_call,
    region, with_and_without_credential,
};
use crate::run::{assert_not_seen, check};

/// Any dot-less token is let through: with the fixture's opaque credential the token shaped
/// like it is, without one the opaque token is; critical, naming the shape, on every request
/// that asked for authorization (it passed: only the JWT-shaped token was sent).
#[tokio::test]
async fn an_opaque_random_token_let_through_is_critical_and_named_by_its_shape() {
    for (with_token, r) in with_and_without_credential(&[Fault::AuthAnyOpaque]).await {
        let shape = if with_token {
            "the random token shaped like the credential (its length, character classes and prefix) was accepted"
        } else {
            "the opaque random token (no dots) was accepted"
        };
        let g = random_token_accepted(&r, "server/discover: 200");
        assert!(g.observed.contains(shape), "{with_token}: {}", g.observed);
        // The JWT-shaped token was refused.
        assert_not_seen(&g, &["JWT-shaped"]);
    }
}

/// The other half: a server that lets through anything shaped as a JWT is still caught with
/// an opaque credential (the JWT-shaped token is sent beside the one shaped like it), and
/// the clean protected fixture refuses both shapes everywhere.
#[tokio::test]
async fn the_jwt_shaped_token_still_goes_and_the_clean_fixture_refuses_both_shapes() {
    for (_, r) in with_and_without_credential(&[Fault::AuthAnyJwt]).await {
        let g = random_token_accepted(&r, "server/discover: 200");
        assert!(
            g.observed
                .contains("the JWT-shaped random token was accepted"),
            "{}",
            g.observed
        );
    }
    for (_, r) in with_and_without_credential(&[Fault::Protected]).await {
        random_token_refused(
            &r,
            &["server/discover: 401", "tools/list: 401", "tools/call: 401"],
        );
    }
}

/// AUTHP's follow-up: discovery is public, tools/list answers the boundary (401), tools/call
/// without a token answers 429. Whether tools/call asks for authorization, and so whether
/// the random token must be refused there, was not observed: `unknown` with the reason (it
/// passed on tools/list alone), as beside a protected discovery.
#[tokio::test]
async fn a_request_not_observed_behind_a_public_discovery_with_a_boundary_is_unknown() {
    let r = region(
        &[Fault::AuthDiscoverPublic, Fault::AuthCallRateLimited],
        true,
    )
    .await;
    assert!(r.protected);
    random_token_unknown_for_a_rate_limited_call(&r, &[]);
}

/// The control: a server that asks for no token anywhere, whose tools/call without a token
/// answers 429. No boundary was found, so the auth checks do not apply; the one request not
/// observed does not make an open server `unknown`.
#[tokio::test]
async fn an_open_server_with_one_rate_limited_request_stays_open() {
    for (with_token, r) in with_and_without_credential(&[Fault::CallRateLimited]).await {
        assert!(!r.protected, "{with_token}");
        for id in [CheckId::AuthChallenge, CheckId::AuthGarbageToken] {
            let c = check(&r, id);
            assert_eq!(
                c.outcome,
                Outcome::Skip,
                "{with_token} {id}: {}",
                c.observed
            );
        }
    }
}
