//! The authorization boundary (`checks.md` section 2.5): the challenge, protected resource
//! metadata, authorization server metadata, tokens that must be refused, and redirects on
//! metadata URLs. Runs when an unauthenticated request got 401 (or 403 with a Bearer
//! challenge), on `server/discover` or on `tools/list` behind a public discovery
//! ([`boundary`]), or with `--expect-auth`.

pub mod boundary;
pub mod challenge;
mod discovery;
pub mod metadata;
pub mod tokens;
pub mod unseen;

pub use tokens::{insufficient_scope, must_refuse};

use std::time::{Duration, Instant};

use url::Url;

use super::http::{exchange, Exchange, ExchangeError, Limits, ProbeRequest, SseRead};
use super::reason::{self, Subject};
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
    /// The job's deadline: a token probe is asked again only when its answer can come
    /// before it.
    pub deadline: Instant,
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

/// Whether the answer to the unauthenticated request was given for another reason than
/// "is a credential required" ([`reason::another_reason`]): a rate limit, an unavailable
/// server or gateway, a server error without an MCP answer, a refusal in front of the MCP
/// layer. The status alone answers the question otherwise, so a body in a content coding
/// that was not decoded matters only where the body tells a JSON-RPC answer from a bare
/// one (403, 500).
pub fn unauth_other_reason(unauth: &Exchange) -> Option<reason::Other> {
    if unauth.encoding().is_some() && !matches!(unauth.status, 403 | 500) {
        let mut plain = unauth.clone();
        plain.headers.remove(http::header::CONTENT_ENCODING);
        return reason::another_reason(&plain, Subject::Rule, false);
    }
    reason::another_reason(unauth, Subject::Rule, false)
}

/// Record every auth check not yet recorded as `unknown` for `cause`, with `reason`.
fn unknown_all(rec: &mut Recorder, cause: Cause, reason: &str) {
    for id in catalog::in_stage(Stage::Auth) {
        if !rec.has(id) {
            rec.record_ms(id, Verdict::unknown(cause, reason), 0);
        }
    }
}

/// The `auth.challenge` verdict on the unauthenticated answer, plus the challenge's
/// `resource_metadata` URL when there is one.
pub fn challenge_verdict(unauth: &Exchange, expect_auth: bool) -> (Verdict, Option<String>) {
    if !boundary::asks_for_authorization(unauth) {
        let v = if let Some(o) = unauth_other_reason(unauth).filter(|_| expect_auth) {
            Verdict::unknown(
                o.cause,
                o.explain("whether an unauthenticated request is refused with 401"),
            )
        } else if expect_auth {
            Verdict::fail(
                Severity::High,
                format!("{}: an unauthenticated request was answered, but --expect-auth says the endpoint must be protected", unauth.summary()),
            )
        } else {
            Verdict::skip("the endpoint did not ask for authorization: its answer was not a 401")
        };
        return (v, None);
    }
    let values = unauth.header_values("www-authenticate");
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
        "{} with Bearer; resource_metadata={}",
        unauth.status,
        rm.as_deref().unwrap_or("(none)")
    );
    seen.push_str(&format!("; scope={}", scope.unwrap_or("(none)")));
    if let Some(err) = bearer.param("error") {
        seen.push_str(&format!("; error={err}"));
    }
    let v = if unauth.status == 403 {
        // The authorization layer answered (its Bearer challenge says so), with the status
        // that sends clients after more scopes instead of starting authorization.
        Verdict::fail(
            Severity::High,
            format!("{seen}: 403 where 401 is required: a request without a token MUST get 401 with WWW-Authenticate (clients start authorization only on 401)"),
        )
    } else if rm.is_none() {
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

impl AuthStage<'_> {
    /// Send `req` (as it is: a token only if it carries one) to the endpoint.
    pub(crate) async fn send(&self, req: &ProbeRequest) -> Result<Exchange, ExchangeError> {
        self.send_read(req, SseRead::UntilResponse).await
    }

    /// [`AuthStage::send`], reading an SSE answer only as far as `read` says.
    pub(crate) async fn send_read(
        &self,
        req: &ProbeRequest,
        read: SseRead,
    ) -> Result<Exchange, ExchangeError> {
        exchange(
            self.client,
            &self.target.url,
            req,
            self.limits,
            self.budget,
            read,
        )
        .await
        .map(|(ex, _)| ex)
    }

    async fn fetch(&self, url: Url) -> Fetched {
        metadata::fetch(self.client, url, self.limits, self.budget).await
    }

    /// Run the auth checks about the boundary itself (challenge, metadata, redirects on
    /// metadata); the token probes run once the era is known ([`AuthStage::tokens`]).
    /// `unauth` is the answer to a valid request without a token.
    pub async fn run(&self, unauth: &Exchange, rec: &mut Recorder) {
        let t = Instant::now();
        let (verdict, resource_metadata) = challenge_verdict(unauth, self.expect_auth);
        rec.record(CheckId::AuthChallenge, verdict, t);
        if !boundary::asks_for_authorization(unauth) {
            match rec.get(CheckId::AuthChallenge).and_then(|c| c.cause) {
                // --expect-auth, and the answer was given for another reason: the boundary
                // was not observed, so nothing behind it was (4.1).
                Some(cause) if self.expect_auth => {
                    // The token probes without a token to send do not apply either way.
                    if self.credentials.other_audience.is_none() {
                        rec.record_ms(
                            CheckId::AuthWrongAudience,
                            Verdict::skip(tokens::NO_OTHER_AUDIENCE),
                            0,
                        );
                    }
                    if self.credentials.missing_scope.is_none() {
                        rec.record_ms(
                            CheckId::AuthInsufficientScope,
                            Verdict::skip(tokens::NO_MISSING_SCOPE),
                            0,
                        );
                    }
                    unknown_all(
                        rec,
                        cause,
                        "not run: the unauthenticated request was answered for another reason than authorization (auth.challenge says why)",
                    );
                }
                _ => skip_all(
                    rec,
                    "the endpoint did not ask for authorization: its answer was not a 401",
                ),
            }
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

        // Redirects on any metadata URL (never followed).
        let v = discovery::metadata_redirect(&fetched, self.client.policy());
        rec.record_ms(CheckId::AuthMetadataRedirect, v, 0);
    }
}
