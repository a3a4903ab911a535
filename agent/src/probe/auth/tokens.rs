//! Tokens that must be refused (`checks.md` 2.5): a fresh random token, a token for another
//! audience and one lacking a scope. The question each probe asks is whether the
//! authorization layer let the token through, so the probe uses a request the server's era
//! accepts (`server/discover` on a modern or dual-era server, `initialize` on a legacy-only
//! one) and reads any answer other than 401/403 (a 2xx, or a 4xx from the MCP layer such as
//! 400 "no valid session id") as "accepted". Only a request that asked for authorization
//! without a token is asked ([`super::boundary::Paths`]): the random token goes to each of
//! them (`server/discover`, `tools/list`, `tools/call`, `subscriptions/listen`, a dual-era
//! server's `initialize`).

use std::time::Instant;

use futures::future::join_all;

use secrecy::SecretString;

use super::boundary::{worst, Paths, TokenProbe};
use super::challenge;
use super::AuthStage;
use crate::catalog::CheckId;
use crate::model::{Cause, Era, Severity};
use crate::probe::era;
use crate::probe::http::{Exchange, ProbeRequest};
use crate::probe::reason::{self, Subject};
use crate::probe::verdict::{Recorder, Verdict};

/// A fresh random token for one run, from the operating system's CSPRNG, shaped as an
/// ordinary RS256 JWT: the usual header (`{"alg":"RS256","typ":"JWT"}`), a payload of
/// random claims (`sub` and `jti` random, `iat` now, `exp` in an hour) and 256 random bytes
/// of signature, each base64url. A server that lets through whatever looks like a JWT (it
/// decodes the claims without verifying the signature) is caught as well as one that lets
/// through any string, and nothing in the token tells the probe from a real client.
pub fn garbage_token() -> Result<SecretString, String> {
    let random = |n: usize| -> Result<Vec<u8>, String> {
        let mut bytes = vec![0u8; n];
        rustls::crypto::ring::default_provider()
            .secure_random
            .fill(&mut bytes)
            .map_err(|_| "the system's random number generator failed".to_string())?;
        Ok(bytes)
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = serde_json::json!({
        "sub": base64url(&random(16)?),
        "jti": base64url(&random(16)?),
        "iat": now,
        "exp": now + 3600,
    });
    Ok(SecretString::from(format!(
        "{}.{}.{}",
        base64url(br#"{"alg":"RS256","typ":"JWT"}"#),
        base64url(claims.to_string().as_bytes()),
        base64url(&random(256)?)
    )))
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

/// Why `auth.wrong-audience` does not apply: no such token was named.
pub const NO_OTHER_AUDIENCE: &str = "no token for another audience was given (--other-audience-token-env, or other_audience_env in [[credentials]])";
/// Why `auth.insufficient-scope` does not apply: no such token was named.
pub const NO_MISSING_SCOPE: &str = "no token lacking a scope was given (--missing-scope-token-env, or missing_scope_env in [[credentials]])";

/// The request a token probe sends: one the server's era accepts once authorized.
pub fn probe_request(era: Era, id: i64) -> ProbeRequest {
    match era {
        Era::Legacy => ProbeRequest::legacy_initialize(id),
        _ => ProbeRequest::modern("server/discover", id, Default::default()),
    }
}

/// Whether the authorization layer refused: 401 or 403, or an RFC 6750 error in a Bearer
/// challenge (e.g. 400 `invalid_request`). Anything else got past it.
fn refused_by_authorization(ex: &Exchange) -> bool {
    matches!(ex.status, 401 | 403) || !bearer_errors(ex).is_empty()
}

/// The `error` of every Bearer challenge in `WWW-Authenticate` (RFC 6750 3), in order.
fn bearer_errors(ex: &Exchange) -> Vec<String> {
    let values = ex.header_values("www-authenticate");
    challenge::parse(&values)
        .map(|cs| {
            cs.iter()
                .filter(|c| c.is_bearer())
                .filter_map(|c| c.param("error").map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A rate limit, an unavailable server or a gateway's error says neither that the token was
/// accepted nor that it was refused ([`reason::another_reason`]): `unknown`, with
/// the reason, never a failure (`checks.md` 4.1, 2.5). Only an answer from the MCP layer (a
/// 2xx, or a 4xx such as 400 "no valid session") means the token was let through.
fn not_an_answer(ex: &Exchange, what: &str) -> Option<Verdict> {
    let o = reason::another_reason(ex, Subject::Token, false).or_else(|| reason::redirected(ex))?;
    Some(Verdict::unknown(
        o.cause,
        o.explain(&format!("whether {what} is refused")),
    ))
}

/// The verdict on a token that must be refused with 401.
pub fn must_refuse(ex: &Exchange, what: &str) -> Verdict {
    if let Some(v) = not_an_answer(ex, what) {
        return v;
    }
    let s = ex.summary();
    match ex.status {
        401 => Verdict::pass(s),
        _ if refused_by_authorization(ex) => {
            Verdict::fail(Severity::Medium, format!("{s}: {what} was refused, but it MUST get 401"))
        }
        300..=399 | 500..=599 => Verdict::fail(
            Severity::Medium,
            format!("{s}: {what} MUST get 401 (this answer does not say whether it was accepted)"),
        ),
        _ => Verdict::fail(
            Severity::Critical,
            format!("{s}: {what} was accepted: the authorization layer let it through (anything but 401/403 means the request reached the MCP layer)"),
        )
        .cause(Cause::TokenAccepted),
    }
}

/// The verdict on a token lacking a scope: 403 with `error="insufficient_scope"` (a SHOULD,
/// so never above `low`). The probe asked with `method`; `scope` is what that method's own
/// challenge said it needs. A token lacking *a* scope served on a request that may not need
/// that scope is conformant: "let through" is a fault only when the challenge named the
/// scope the probed request needs, and a note otherwise.
pub fn insufficient_scope(ex: &Exchange, method: &str, scope: Option<&str>) -> Verdict {
    if let Some(v) = not_an_answer(ex, "a token lacking a scope") {
        return v;
    }
    let s = ex.summary();
    let insufficient = bearer_errors(ex).iter().any(|e| e == "insufficient_scope");
    match ex.status {
        403 if insufficient => Verdict::pass(format!("{s} with error=\"insufficient_scope\"")),
        403 => Verdict::warn(Severity::Low, format!("{s}: 403 SHOULD carry WWW-Authenticate: Bearer error=\"insufficient_scope\"")),
        401 => Verdict::warn(Severity::Low, format!("{s}: a token lacking a scope SHOULD get 403 with error=\"insufficient_scope\", not 401")),
        _ if refused_by_authorization(ex) => Verdict::warn(Severity::Low, format!("{s}: refused, but a token lacking a scope SHOULD get 403 with error=\"insufficient_scope\"")),
        300..=399 | 500..=599 => Verdict::fail(Severity::Low, format!("{s}: expected 403 with error=\"insufficient_scope\" (SHOULD)")),
        _ => match scope {
            Some(scope) => Verdict::fail(Severity::Low, format!("{s}: the token named as lacking a scope was let through on {method}, whose challenge asks for scope=\"{scope}\" (a token lacking a scope the request needs SHOULD get 403 with error=\"insufficient_scope\")")),
            None => Verdict::warn(Severity::Low, format!("{s}: served on {method}, which may not need the missing scope (its challenge names no scope=), so whether a request that needs it is refused was not observed")),
        },
    }
}

impl AuthStage<'_> {
    /// One token probe with `probe`'s request: `judge` on the answer; no answer is no
    /// evidence either way.
    async fn token_probe(
        &self,
        probe: &TokenProbe,
        token: &SecretString,
        judge: impl Fn(&Exchange) -> Verdict,
    ) -> Verdict {
        let req = probe.req.clone().with_bearer(Some(token));
        match self.send_read(&req, probe.read).await {
            Ok(ex) => judge(&ex),
            Err(e) => Verdict::unknown(
                e.cause,
                format!(
                    "no answer, so nothing is known about the token: {}",
                    e.message
                ),
            ),
        }
    }

    /// The random token on every request that asked for authorization without a token
    /// ([`Paths`]): the era's request, each request past discovery that did (`tools/list`,
    /// `tools/call`, `subscriptions/listen`), and on a dual-era or not yet classified
    /// endpoint the 2025-11-25 `initialize` (judged only when it is served, a 2xx JSON-RPC
    /// result being the token let through, or refused by the authorization layer).
    async fn garbage(&self, era: Era, paths: &Paths, garbage: &SecretString) -> Verdict {
        const WHAT: &str = "a random bearer token";
        // Every request that asked for authorization at once (no extra round-trip for each).
        let probes: Vec<TokenProbe> = paths
            .primary(era)
            .into_iter()
            .chain(paths.others())
            .collect();
        let mut verdicts: Vec<(&str, Verdict)> = join_all(probes.iter().map(|probe| async move {
            (
                probe.method,
                self.token_probe(probe, garbage, |ex| must_refuse(ex, WHAT))
                    .await,
            )
        }))
        .await;
        // A request past a protected discovery whose token-less answer was not observed may
        // ask for authorization and let any token through: no evidence either way (4.1).
        for (method, o) in &paths.unseen {
            verdicts.push((
                method,
                Verdict::unknown(
                    o.cause,
                    o.explain(&format!(
                        "whether {method} asks for authorization without a token (so whether the random token must be refused there; it was not sent)"
                    )),
                ),
            ));
        }
        if paths.initialize && era != Era::Legacy {
            let req =
                ProbeRequest::legacy_initialize(era::INITIALIZE_ID).with_bearer(Some(garbage));
            if let Ok(ex) = self.send(&req).await {
                // Served (a 2xx JSON-RPC result) is the token let through; refused by the
                // authorization layer is that layer's answer. Anything else (a modern-only
                // server's -32022) says nothing about the token.
                if era::initialize_works(&ex) || refused_by_authorization(&ex) {
                    let mut v = must_refuse(&ex, WHAT);
                    if paths.initialize_open {
                        v.observed.push_str(" (this 2025-11-25 path serves requests without any token too: auth.challenge)");
                    }
                    verdicts.push(("initialize (2025-11-25)", v));
                }
            }
        }
        if verdicts.is_empty() {
            return Verdict::skip("no request asked for authorization");
        }
        worst(verdicts)
    }

    /// `auth.garbage-token`, `auth.wrong-audience` and `auth.insufficient-scope`, with a
    /// request `era` accepts (`Era::Unknown` when nothing told the era: `server/discover`)
    /// on every request `paths` says asked for authorization.
    pub async fn tokens(&self, era: Era, paths: &Paths, rec: &mut Recorder) {
        let t = Instant::now();
        let v = match garbage_token() {
            Ok(garbage) => self.garbage(era, paths, &garbage).await,
            Err(e) => Verdict::error(e),
        };
        rec.record(CheckId::AuthGarbageToken, v, t);
        let primary = paths.primary(era);
        let t = Instant::now();
        let v = match (&self.credentials.other_audience, &primary) {
            (None, _) => Verdict::skip(NO_OTHER_AUDIENCE),
            (Some(_), None) => Verdict::skip("no request asked for authorization"),
            (Some(tok), Some(probe)) => {
                self.token_probe(probe, tok, |ex| {
                    must_refuse(ex, "a token issued for another audience")
                })
                .await
            }
        };
        rec.record(CheckId::AuthWrongAudience, v, t);
        let t = Instant::now();
        let v = match (&self.credentials.missing_scope, &primary) {
            (None, _) => Verdict::skip(NO_MISSING_SCOPE),
            (Some(_), None) => Verdict::skip("no request asked for authorization"),
            (Some(tok), Some(probe)) => {
                self.token_probe(probe, tok, |ex| {
                    insufficient_scope(ex, probe.method, probe.scope.as_deref())
                })
                .await
            }
        };
        rec.record(CheckId::AuthInsufficientScope, v, t);
    }
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
