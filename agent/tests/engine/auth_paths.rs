//! The authorization boundary judged where it is, not on `server/discover` alone (red team
//! round 9, defects 1, 2 and 5): a dual-era server whose 2025-11-25 `initialize` needs no
//! token, a server whose discovery is public while `tools/list` needs a token, one whose
//! `tools/list` takes any token, and one that answers a token-less request 403 with a Bearer
//! challenge. Each against the protected fixture with that one fault, with and without the
//! credential: giving a credential never hides a bypass (`checks.md` 4.1, monotone).

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult, Severity};
use vantage_fixture::{Fault, Fixture};

use crate::run::{
    all_tokens, assert_no_check_says, assert_outcomes, assert_seen, assert_seen_all, check,
    options, run_with, unknowns,
};

const LEGACY_OPEN: &str = "initialize served without a token while server/discover requires one";

/// A run against the fixture with `faults`, with every credential or none.
pub(crate) async fn region(faults: &[Fault], with_token: bool) -> RegionResult {
    let fixture = Fixture::start(faults).await.unwrap();
    let opts = if with_token { all_tokens() } else { options() };
    run_with(&fixture.url(), opts).await
}

/// The runs against the fixture with `faults` with every credential, then with none, each
/// beside whether a credential was given: giving one never hides a fault (`checks.md` 4.1).
pub(crate) async fn with_and_without_credential(faults: &[Fault]) -> [(bool, RegionResult); 2] {
    [
        (true, region(faults, true).await),
        (false, region(faults, false).await),
    ]
}

/// `id`'s outcome and severity are `want`, and it saw `needle`.
#[track_caller]
pub(crate) fn seen(r: &RegionResult, id: CheckId, want: (Outcome, Option<Severity>), needle: &str) {
    let c = check(r, id);
    assert_seen(&c, (c.outcome, c.severity), want, needle);
}

/// `id` passed (no severity) and saw `needle`.
#[track_caller]
fn passes(r: &RegionResult, id: CheckId, needle: &str) {
    seen(r, id, (Outcome::Pass, None), needle);
}

/// The region is protected (authenticated exactly when a credential was given), and its
/// boundary was judged from a 401 with a Bearer challenge naming the resource metadata.
#[track_caller]
fn bearer_boundary(r: &RegionResult, authenticated: bool) {
    assert!(r.protected, "not protected");
    assert_eq!(r.authenticated, authenticated);
    passes(
        r,
        CheckId::AuthChallenge,
        "401 with Bearer; resource_metadata=",
    );
}

/// No credential was given: the protocol checks stop at the boundary (headers.missing-method
/// skipped, saying `why`) and nothing unobserved is left unnamed.
#[track_caller]
fn stopped_at_the_boundary(r: &RegionResult, why: &str) {
    seen(r, CheckId::HeadersMissingMethod, (Outcome::Skip, None), why);
    assert_eq!(unknowns(r), vec![], "nothing unobserved is left unnamed");
}

/// The random token was refused: `auth.garbage-token` passed and saw every one of
/// `needles` (the requests that refused it).
#[track_caller]
pub(crate) fn random_token_refused(r: &RegionResult, needles: &[&str]) -> CheckResult {
    let g = check(r, CheckId::AuthGarbageToken);
    assert_seen_all(&g, g.outcome, Outcome::Pass, needles);
    g
}

/// tools/call without a token was answered 429 (a rate limit in front of it): whether it
/// asks for authorization, and so whether the random token must be refused there, was not
/// observed: `auth.garbage-token` is `unknown` (another reason), saying so and every one of
/// `also`.
#[track_caller]
pub(crate) fn random_token_unknown_for_a_rate_limited_call(r: &RegionResult, also: &[&str]) {
    let g = check(r, CheckId::AuthGarbageToken);
    let why = [
        "tools/call: rate limited: answered 429",
        "whether tools/call asks for authorization without a token",
    ];
    let needles: Vec<&str> = why.iter().chain(also).copied().collect();
    assert_seen_all(
        &g,
        (g.outcome, g.cause),
        (Outcome::Unknown, Some(Cause::OtherReason)),
        &needles,
    );
}

/// The random token was let through: `auth.garbage-token` fails critical, cause
/// token-accepted, and says where (`needle`).
#[track_caller]
pub(crate) fn random_token_accepted(r: &RegionResult, needle: &str) -> CheckResult {
    let g = check(r, CheckId::AuthGarbageToken);
    assert_seen(
        &g,
        (g.outcome, g.severity, g.cause),
        (
            Outcome::Fail,
            Some(Severity::Critical),
            Some(Cause::TokenAccepted),
        ),
        needle,
    );
    g
}

/// Defect 1: `initialize` answered 200 without any token while `server/discover` needs one.
/// With the credential it was PASS (the token probes only went to discover); without one the
/// random token "was accepted" on a path that takes none. Both runs now name the open
/// legacy path (`auth.challenge`, high) and the random token let through there (critical).
#[tokio::test]
async fn a_legacy_path_without_a_boundary_is_found_with_or_without_a_credential() {
    for (with_token, r) in with_and_without_credential(&[Fault::AuthLegacyOpen]).await {
        assert!(r.protected, "with_token={with_token}");
        assert_eq!(r.authenticated, with_token);
        seen(
            &r,
            CheckId::AuthChallenge,
            (Outcome::Fail, Some(Severity::High)),
            LEGACY_OPEN,
        );
        let g = random_token_accepted(&r, "initialize (2025-11-25): ");
        assert!(
            g.observed.contains("serves requests without any token too"),
            "{}",
            g.observed
        );
    }
}

/// The clean protected (dual-era) fixture: its initialize needs the token as well, and the
/// random token is refused on every request that asked for authorization.
#[tokio::test]
async fn a_dual_era_server_protected_on_both_paths_stays_clean() {
    for (_, r) in with_and_without_credential(&[Fault::Protected]).await {
        passes(&r, CheckId::AuthChallenge, "401 with Bearer");
        random_token_refused(&r, &["server/discover: 401", "tools/list: 401"]);
    }
}

/// Defect 2 (a), (b): `tools/list` takes any bearer token; discovery public, or validating
/// the token. The random token is sent where the server protects, and let through there is
/// `auth.invalid-token-accepted` material (critical).
#[tokio::test]
async fn a_random_token_let_through_on_tools_list_is_critical() {
    for faults in [
        &[Fault::AuthToolsAnyToken][..],
        &[Fault::AuthDiscoverPublic, Fault::AuthToolsAnyToken][..],
    ] {
        let r = region(faults, true).await;
        assert!(r.protected && r.authenticated, "{faults:?}");
        random_token_accepted(&r, "tools/list: 200");
    }
}

/// Defect 2 (a) control: discovery public, every other request validated. The boundary runs
/// from `tools/list`'s challenge, the token probes ask there (never on the public discover,
/// which may ignore a token), and nothing fails.
#[tokio::test]
async fn a_public_discovery_with_tools_list_protected_is_judged_from_tools_list() {
    let r = region(&[Fault::AuthDiscoverPublic], true).await;
    bearer_boundary(&r, true);
    assert_outcomes(
        &r,
        [
            CheckId::AuthPrm,
            CheckId::AuthGarbageToken,
            CheckId::AuthWrongAudience,
            CheckId::AuthInsufficientScope,
        ],
        Outcome::Pass,
    );
    let problems: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.outcome.is_problem() && c.severity > Some(Severity::Info))
        .map(|c| (c.id, c.observed.clone()))
        .collect();
    assert_eq!(problems, vec![]);
}

/// Defect 2 (c): no credential, discovery public, `tools/list` 401 with a Bearer challenge.
/// It was "did not ask for authorization" beside 20 checks that got 401 (probe.incomplete,
/// exit 4). The boundary applies: auth.* from that challenge, the region is protected and
/// not authenticated (`auth.credential-required`, exit 3), and nothing is left `unknown`.
#[tokio::test]
async fn a_public_discovery_without_a_credential_stops_at_the_boundary_it_found() {
    let r = region(&[Fault::AuthDiscoverPublic], false).await;
    bearer_boundary(&r, false);
    passes(&r, CheckId::AuthGarbageToken, "401");
    passes(
        &r,
        CheckId::EraDetect,
        "behind the authorization boundary (initialize without a token answered 401)",
    );
    stopped_at_the_boundary(
        &r,
        "tools/list without a token answered 401) and no credential was given; name one with --token-env",
    );
}

/// Defect 2 (c), the same with `tools/list` public too: the unauthenticated `initialize`
/// beside discovery got 401 with a Bearer challenge, and that is the boundary (it was exit 4,
/// every transport check "the authorization layer answered 401").
#[tokio::test]
async fn without_a_credential_an_initialize_refused_by_the_boundary_shows_it() {
    let r = region(
        &[Fault::AuthDiscoverPublic, Fault::AuthToolsListPublic],
        false,
    )
    .await;
    bearer_boundary(&r, false);
    passes(
        &r,
        CheckId::AuthGarbageToken,
        "initialize (2025-11-25): 401",
    );
    stopped_at_the_boundary(
        &r,
        "initialize without a token answered 401) and no credential was given",
    );
}

/// Defect 5: a token-less request answered 403 with a Bearer challenge is the authorization
/// layer with the wrong status, not a WAF refusing this vantage: `auth.challenge` fails
/// (high) and the given credential is used for the protocol checks.
#[tokio::test]
async fn a_403_with_a_bearer_challenge_is_the_boundary_with_the_wrong_status() {
    let r = region(&[Fault::AuthNoToken403], true).await;
    assert!(r.protected && r.authenticated);
    seen(
        &r,
        CheckId::AuthChallenge,
        (Outcome::Fail, Some(Severity::High)),
        "403 where 401 is required",
    );
    assert_outcomes(
        &r,
        [
            CheckId::AuthPrm,
            CheckId::EraDetect,
            CheckId::HeadersMissingMethod,
        ],
        Outcome::Pass,
    );
    assert_no_check_says(
        &r,
        "allow this vantage's address",
        "403 with a Bearer challenge:",
    );
}
