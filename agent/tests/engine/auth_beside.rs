//! The authorization boundary beside a *protected* discovery (round 15, AUTHP): a server
//! whose `server/discover` and `tools/list` answer 401 with a Bearer challenge while
//! `tools/call` lets any bearer token through came out PASS with a credential (the random
//! token went to discover and tools/list only). `tools/call` (a tool no server has) and, when
//! the capabilities are known, `subscriptions/listen` are now asked without a token too; each
//! that shows the boundary gets the random token; one the MCP layer serves without a token is
//! a bypass (`auth.challenge`, high, like the open legacy path); one not observed leaves
//! `auth.garbage-token` `unknown` with the reason, never a pass (`checks.md` 4.1).

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Outcome, Severity};
use vantage_fixture::Fault;

use crate::auth_paths::{
    random_token_accepted, random_token_refused, random_token_unknown_for_a_rate_limited_call,
    region, seen, with_and_without_credential,
};
use crate::run::{assert_not_seen, assert_seen_all, check};

/// tools/call lets any bearer token through while discovery and tools/list validate it: the
/// random token sent there is let through, critical, with or without a credential (without
/// one the boundary on tools/call is found beside discover all the same).
#[tokio::test]
async fn a_random_token_let_through_on_tools_call_beside_a_protected_discovery_is_critical() {
    for (with_token, r) in with_and_without_credential(&[Fault::AuthCallAnyToken]).await {
        assert!(r.protected, "{with_token}");
        assert_eq!(r.authenticated, with_token);
        let g = random_token_accepted(&r, "tools/call: 200");
        assert!(g.observed.contains("-32602"), "{}", g.observed);
        // The boundary on discover itself is conformant: the challenge passes.
        seen(
            &r,
            CheckId::AuthChallenge,
            (Outcome::Pass, None),
            "401 with Bearer",
        );
    }
}

/// The control: the clean protected fixture refuses the random token on every request that
/// asked for authorization, tools/call and (with a credential, whose discover named the
/// capabilities) subscriptions/listen included.
#[tokio::test]
async fn the_clean_protected_fixture_refuses_the_random_token_on_tools_call_and_listen() {
    let r = region(&[Fault::Protected], true).await;
    random_token_refused(
        &r,
        &[
            "server/discover: 401",
            "tools/list: 401",
            "tools/call: 401",
            "subscriptions/listen: 401",
        ],
    );
    // Without a credential no capability is known: listen is not asked (its filter needs
    // them), tools/call is.
    let r = region(&[Fault::Protected], false).await;
    let g = random_token_refused(&r, &["tools/call: 401"]);
    assert_not_seen(&g, &["subscriptions/listen"]);
}

/// tools/call served without any token (the unknown tool's -32602 from the MCP layer) while
/// discovery requires one: the MCP layer reached past the boundary (nothing run: fresh eyes
/// round 17, D4), `auth.challenge` medium naming both requests, with or without a credential.
#[tokio::test]
async fn tools_call_served_without_a_token_beside_a_protected_discovery_is_a_bypass() {
    for (with_token, r) in with_and_without_credential(&[Fault::AuthToolsCallPublic]).await {
        let c = check(&r, CheckId::AuthChallenge);
        assert_seen_all(
            &c,
            (c.outcome, c.severity),
            (Outcome::Fail, Some(Severity::Medium)),
            &[
                "tools/call reached the MCP layer without a token while server/discover requires one: tools/call (no Authorization) answered 200 application/json JSON-RPC error -32602",
                "server/discover (no Authorization) answered 401",
                "server/discover's challenge: 401 with Bearer",
            ],
        );
        // Never sent the random token where no token was asked for.
        let g = check(&r, CheckId::AuthGarbageToken);
        assert_eq!(g.outcome, Outcome::Pass, "{with_token}: {}", g.observed);
        assert_not_seen(&g, &["tools/call"]);
    }
}

/// tools/list served without any token while discovery requires one: the tool list is
/// readable by anyone, high (it passed).
#[tokio::test]
async fn tools_list_served_without_a_token_beside_a_protected_discovery_is_a_bypass() {
    for (_, r) in with_and_without_credential(&[Fault::AuthToolsListPublic]).await {
        seen(
            &r,
            CheckId::AuthChallenge,
            (Outcome::Fail, Some(Severity::High)),
            "tools/list served without a token while server/discover requires one: tools/list (no Authorization) answered 200 application/json JSON-RPC result",
        );
    }
}

/// Evidence rule: tools/call without a token answered 429 (a rate limit in front of it):
/// whether it asks for authorization, and so whether the random token must be refused
/// there, was not observed. `auth.garbage-token` is `unknown` with the reason (it passed on
/// discover and tools/list alone), never a pass; nothing is called a bypass.
#[tokio::test]
async fn tools_call_not_observed_beside_a_protected_discovery_leaves_the_random_token_unknown() {
    for (_, r) in with_and_without_credential(&[Fault::AuthCallRateLimited]).await {
        random_token_unknown_for_a_rate_limited_call(&r, &["Retry-After: 60"]);
        seen(
            &r,
            CheckId::AuthChallenge,
            (Outcome::Pass, None),
            "401 with Bearer",
        );
    }
}
