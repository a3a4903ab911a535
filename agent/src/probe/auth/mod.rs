//! The authorization boundary (`checks.md` section 2.5): the challenge, protected resource
//! metadata, authorization server metadata, tokens that must be refused, and redirects on
//! metadata URLs. Runs when an unauthenticated request got 401, or with `--expect-auth`.

pub mod challenge;
mod discovery;
pub mod metadata;

use std::time::{Duration, Instant};

use url::Url;

use super::http::{exchange, Exchange, Limits, ProbeRequest, SseRead};
use super::verdict::{Recorder, Verdict};
use crate::catalog::{self, CheckId, Stage};
use crate::credentials::Credentials;
use crate::egress::EgressClient;
use crate::model::{Cause, Severity};
use crate::target::Target;
use metadata::Fetched;

/// What the auth stage needs from the engine.
#[derive(Debug)]
pub struct AuthStage<'a> {
    pub target: &'a Target,
    pub client: &'a EgressClient,
    pub limits: &'a Limits,
    pub budget: Duration,
    pub credentials: &'a Credentials,
    pub expect_auth: bool,
}

/// Skip every auth check with `reason`.
pub fn skip_all(rec: &mut Recorder, reason: &str) {
    for id in catalog::in_stage(Stage::Auth) {
        if !rec.has(id) {
            rec.record_ms(id, Verdict::skip(reason), 0);
        }
    }
}

/// The `auth.challenge` verdict on the unauthenticated answer, plus the challenge's
/// `resource_metadata` URL when there is one.
pub fn challenge_verdict(unauth: &Exchange, expect_auth: bool) -> (Verdict, Option<String>) {
    if unauth.status != 401 {
        let v = if expect_auth {
            Verdict::fail(
                Severity::High,
                format!("{}: an unauthenticated request was answered, but --expect-auth says the endpoint must be protected", unauth.summary()),
            )
        } else {
            Verdict::skip("the endpoint did not ask for authorization (no 401)")
        };
        return (v, None);
    }
    let values: Vec<&str> = unauth
        .headers
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return (
            Verdict::fail(Severity::High, "401 without WWW-Authenticate: clients cannot learn how to authorize (RFC 9110 requires the header)"),
            None,
        );
    }
    let challenges = match challenge::parse(&values) {
        Ok(c) => c,
        Err(e) => {
            return (
                Verdict::fail(
                    Severity::High,
                    format!("malformed WWW-Authenticate ({e}): {}", values.join(" | ")),
                ),
                None,
            )
        }
    };
    let Some(bearer) = challenges.iter().find(|c| c.is_bearer()) else {
        let schemes: Vec<&str> = challenges.iter().map(|c| c.scheme.as_str()).collect();
        return (
            Verdict::fail(
                Severity::High,
                format!("no Bearer challenge (schemes: {})", schemes.join(", ")),
            ),
            None,
        );
    };
    let rm = bearer.param("resource_metadata").map(str::to_string);
    let scope = bearer.param("scope");
    let mut seen = format!(
        "401 with Bearer; resource_metadata={}",
        rm.as_deref().unwrap_or("(none)")
    );
    seen.push_str(&format!("; scope={}", scope.unwrap_or("(none)")));
    if let Some(err) = bearer.param("error") {
        seen.push_str(&format!("; error={err}"));
    }
    let v = if rm.is_none() {
        Verdict::warn(
            Severity::Low,
            format!(
                "{seen}: without resource_metadata clients must fall back to the well-known URIs"
            ),
        )
    } else if scope.is_none() {
        Verdict::warn(
            Severity::Low,
            format!("{seen}: a scope= parameter SHOULD tell clients what to request"),
        )
    } else {
        Verdict::pass(seen)
    };
    (v, rm)
}

/// The verdict on a token that must be refused with 401.
pub fn must_refuse(ex: &Exchange, what: &str) -> Verdict {
    let s = ex.summary();
    match ex.status {
        401 => Verdict::pass(s),
        200..=299 => Verdict::fail(Severity::Critical, format!("{s}: {what} was accepted"))
            .cause(Cause::TokenAccepted),
        _ => Verdict::fail(Severity::Medium, format!("{s}: {what} MUST get 401")),
    }
}

/// The verdict on a token lacking a scope: 403 with `error="insufficient_scope"` (SHOULD).
pub fn insufficient_scope(ex: &Exchange) -> Verdict {
    let s = ex.summary();
    let error = ex
        .headers
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>();
    let insufficient = challenge::parse(&error).ok().is_some_and(|cs| {
        cs.iter()
            .any(|c| c.is_bearer() && c.param("error") == Some("insufficient_scope"))
    });
    match ex.status {
        403 if insufficient => Verdict::pass(format!("{s} with error=\"insufficient_scope\"")),
        403 => Verdict::warn(Severity::Low, format!("{s}: 403 SHOULD carry WWW-Authenticate: Bearer error=\"insufficient_scope\"")),
        401 => Verdict::warn(Severity::Low, format!("{s}: a token lacking a scope SHOULD get 403 with error=\"insufficient_scope\", not 401")),
        200..=299 => Verdict::fail(Severity::Medium, format!("{s}: a token without the required scope was served")),
        _ => Verdict::fail(Severity::Medium, format!("{s}: expected 403 with error=\"insufficient_scope\"")),
    }
}

impl AuthStage<'_> {
    async fn send(&self, req: &ProbeRequest) -> Result<Exchange, String> {
        exchange(
            self.client,
            &self.target.url,
            req,
            self.limits,
            self.budget,
            SseRead::UntilResponse,
        )
        .await
        .map_err(|e| e.message)
    }

    async fn fetch(&self, url: Url) -> Fetched {
        metadata::fetch(self.client, url, self.limits, self.budget).await
    }

    /// Run every auth check. `unauth` is the answer to a valid request without a token.
    pub async fn run(&self, unauth: &Exchange, rec: &mut Recorder) {
        let t = Instant::now();
        let (verdict, resource_metadata) = challenge_verdict(unauth, self.expect_auth);
        rec.record(CheckId::AuthChallenge, verdict, t);
        if unauth.status != 401 {
            skip_all(rec, "the endpoint did not ask for authorization (no 401)");
            return;
        }
        // Protected resource metadata, then each named authorization server's metadata,
        // every URL through the egress policy (see `discovery`).
        let mut fetched: Vec<Fetched> = Vec::new();
        let t = Instant::now();
        let (prm, issuers) = self.prm(resource_metadata.as_deref(), &mut fetched).await;
        rec.record(CheckId::AuthPrm, prm.clone(), t);
        let t = Instant::now();
        let v = self.as_metadata(&prm, &issuers, &mut fetched).await;
        rec.record(CheckId::AuthAsMetadata, v, t);

        // Tokens that must be refused.
        let garbage = secrecy::SecretString::from(format!(
            "vantage-garbage-{}",
            std::process::id() ^ 0x5eed_cafe
        ));
        let base = ProbeRequest::modern("server/discover", 900, Default::default());
        let t = Instant::now();
        let v = match self.send(&base.clone().with_bearer(Some(&garbage))).await {
            Ok(ex) => must_refuse(&ex, "a random bearer token"),
            Err(e) => Verdict::fail(Severity::Medium, format!("no response: {e}")),
        };
        rec.record(CheckId::AuthGarbageToken, v, t);
        let t = Instant::now();
        let v = match &self.credentials.other_audience {
            None => Verdict::skip(
                "no token for another audience was given (--other-audience-token-env)",
            ),
            Some(tok) => match self.send(&base.clone().with_bearer(Some(tok))).await {
                Ok(ex) => must_refuse(&ex, "a token issued for another audience"),
                Err(e) => Verdict::fail(Severity::Medium, format!("no response: {e}")),
            },
        };
        rec.record(CheckId::AuthWrongAudience, v, t);
        let t = Instant::now();
        let v = match &self.credentials.missing_scope {
            None => Verdict::skip("no token lacking a scope was given (--missing-scope-token-env)"),
            Some(tok) => match self.send(&base.clone().with_bearer(Some(tok))).await {
                Ok(ex) => insufficient_scope(&ex),
                Err(e) => Verdict::fail(Severity::Medium, format!("no response: {e}")),
            },
        };
        rec.record(CheckId::AuthInsufficientScope, v, t);

        // Redirects on any metadata URL (never followed).
        let v = discovery::metadata_redirect(&fetched, self.client.policy());
        rec.record_ms(CheckId::AuthMetadataRedirect, v, 0);
    }
}
