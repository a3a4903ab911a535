//! The authorization boundary (`checks.md` section 2.5): the challenge, protected resource
//! metadata, authorization server metadata, tokens that must be refused, and redirects on
//! metadata URLs. Runs when an unauthenticated request got 401, or with `--expect-auth`.

pub mod challenge;
pub mod metadata;
pub mod tokens;

pub use tokens::{insufficient_scope, must_refuse};

use std::time::{Duration, Instant};

use url::Url;

use super::http::{exchange, Exchange, ExchangeError, Limits, ProbeRequest, SseRead};
use super::verdict::{Recorder, Verdict};
use crate::catalog::{self, CheckId, Stage};
use crate::credentials::Credentials;
use crate::model::{Cause, Severity};
use crate::target::Target;
use metadata::Fetched;

/// What the auth stage needs from the engine.
#[derive(Debug)]
pub struct AuthStage<'a> {
    pub target: &'a Target,
    pub client: &'a reqwest::Client,
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

impl AuthStage<'_> {
    async fn send(&self, req: &ProbeRequest) -> Result<Exchange, ExchangeError> {
        exchange(
            self.client,
            &self.target.url,
            req,
            self.limits,
            self.budget,
            SseRead::UntilResponse,
        )
        .await
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
        if unauth.status != 401 {
            skip_all(rec, "the endpoint did not ask for authorization (no 401)");
            return;
        }
        let mut fetched: Vec<Fetched> = Vec::new();

        // Protected resource metadata: the challenge's URL, else the well-known URIs.
        let t = Instant::now();
        let candidates: Vec<Url> = match &resource_metadata {
            Some(u) => match self.target.url.join(u) {
                Ok(u) => vec![u],
                Err(e) => {
                    rec.record(
                        CheckId::AuthPrm,
                        Verdict::fail(
                            Severity::High,
                            format!("resource_metadata \"{u}\" is not a URL: {e}"),
                        ),
                        t,
                    );
                    vec![]
                }
            },
            None => metadata::prm_well_known(self.target),
        };
        let mut issuers = Vec::new();
        let mut tried = Vec::new();
        for url in candidates {
            let f = self.fetch(url).await;
            tried.push(f.describe());
            let doc = f.json().cloned();
            fetched.push(f);
            if let Some(doc) = doc {
                let (problems, found) = metadata::prm_problems(&doc, self.target);
                let at = fetched
                    .last()
                    .map(|f| f.url.to_string())
                    .unwrap_or_default();
                let v = if problems.is_empty() {
                    Verdict::pass(format!(
                        "{at}: resource matches; authorization_servers {}",
                        found.join(", ")
                    ))
                } else {
                    Verdict::fail(Severity::High, format!("{at}: {}", problems.join("; ")))
                };
                rec.record(CheckId::AuthPrm, v, t);
                issuers = found;
                break;
            }
        }
        if !rec.has(CheckId::AuthPrm) {
            rec.record(
                CheckId::AuthPrm,
                Verdict::fail(
                    Severity::High,
                    format!("no protected resource metadata: {}", tried.join("; ")),
                ),
                t,
            );
        }

        // Authorization server metadata for each issuer.
        let t = Instant::now();
        if issuers.is_empty() {
            rec.record(
                CheckId::AuthAsMetadata,
                Verdict::skip("no authorization server is named"),
                t,
            );
        } else {
            let mut problems = Vec::new();
            let mut good = Vec::new();
            for issuer in issuers.iter().take(4) {
                let Ok(url) = Url::parse(issuer) else {
                    problems.push(format!("issuer \"{issuer}\" is not a URL"));
                    continue;
                };
                let mut matched = false;
                let mut misses = Vec::new();
                for candidate in metadata::as_candidates(&url) {
                    let f = self.fetch(candidate).await;
                    let doc = f.json().cloned();
                    misses.push(f.describe());
                    fetched.push(f);
                    let Some(doc) = doc else { continue };
                    let got = doc
                        .get("issuer")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("(none)");
                    if got != issuer {
                        misses.push(format!("issuer \"{got}\" is not \"{issuer}\""));
                        continue;
                    }
                    matched = true;
                    let p = metadata::as_problems(&doc);
                    if p.is_empty() {
                        good.push(issuer.clone());
                    } else {
                        problems.push(format!("{issuer}: {}", p.join("; ")));
                    }
                    break;
                }
                if !matched {
                    problems.push(format!(
                        "{issuer}: no metadata with an identical issuer ({})",
                        misses.join("; ")
                    ));
                }
            }
            let v = if problems.is_empty() {
                Verdict::pass(format!(
                    "metadata with identical issuer and S256 for {}",
                    good.join(", ")
                ))
            } else {
                Verdict::fail(Severity::High, problems.join("; "))
            };
            rec.record(CheckId::AuthAsMetadata, v, t);
        }

        // Redirects on any metadata URL (never followed).
        let redirects: Vec<(String, bool)> = fetched
            .iter()
            .filter_map(|f| {
                f.redirect()
                    .map(|(st, loc, cross)| (format!("{} answered {st} to {loc}", f.url), cross))
            })
            .collect();
        let v = if redirects.iter().any(|(_, cross)| *cross) {
            let list: Vec<&str> = redirects.iter().map(|(s, _)| s.as_str()).collect();
            Verdict::fail(
                Severity::High,
                format!("cross-host redirect on metadata: {}", list.join("; ")),
            )
            .cause(Cause::CrossHost)
        } else if !redirects.is_empty() {
            let list: Vec<&str> = redirects.iter().map(|(s, _)| s.as_str()).collect();
            Verdict::warn(
                Severity::Low,
                format!("same-host redirect on metadata: {}", list.join("; ")),
            )
            .cause(Cause::SameHost)
        } else {
            Verdict::pass(format!("{} metadata URL(s), no redirect", fetched.len()))
        };
        rec.record_ms(CheckId::AuthMetadataRedirect, v, 0);
    }
}
