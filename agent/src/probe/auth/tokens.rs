//! Tokens that must be refused (`checks.md` 2.5): a fresh random token, a token for another
//! audience and one lacking a scope. The question each probe asks is whether the
//! authorization layer let the token through, so the probe uses a request the server's era
//! accepts (`server/discover` on a modern or dual-era server, `initialize` on a legacy-only
//! one) and reads any answer other than 401/403 (a 2xx, or a 4xx from the MCP layer such as
//! 400 "no valid session id") as "accepted". Only a request that asked for authorization
//! without a token is asked ([`super::boundary::Paths`]): the random token goes to each of
//! them (`server/discover`, `tools/list`, `tools/call`, `subscriptions/listen`, a dual-era
//! server's `initialize`).

use std::time::{Duration, Instant};

use futures::future::join_all;

use secrecy::{ExposeSecret, SecretString};

use super::boundary::{self, rank, worst, Paths, TokenProbe};
use super::challenge;
use super::AuthStage;
use crate::catalog::CheckId;
use crate::model::{Cause, Era, Outcome, Severity};
use crate::probe::era;
use crate::probe::http::{fmt_wait, Exchange, ExchangeError, ProbeRequest};
use crate::probe::reason::{self, Subject};
use crate::probe::verdict::{Recorder, Verdict};

/// The operating system's CSPRNG, read a block at a time.
struct Csprng {
    buf: Vec<u8>,
    at: usize,
}

impl Csprng {
    fn new() -> Csprng {
        Csprng {
            buf: Vec::new(),
            at: 0,
        }
    }

    fn bytes(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let mut bytes = vec![0u8; n];
        rustls::crypto::ring::default_provider()
            .secure_random
            .fill(&mut bytes)
            .map_err(|_| "the system's random number generator failed".to_string())?;
        Ok(bytes)
    }

    fn byte(&mut self) -> Result<u8, String> {
        if self.at == self.buf.len() {
            self.buf = self.bytes(64)?;
            self.at = 0;
        }
        self.at += 1;
        Ok(self.buf[self.at - 1])
    }

    /// A uniform draw from `0..n` (`1 <= n <= 256`), by rejection (no modulo bias).
    fn below(&mut self, n: u16) -> Result<u8, String> {
        let limit = 256 - 256 % n;
        loop {
            let b = u16::from(self.byte()?);
            if b < limit {
                return Ok((b % n) as u8);
            }
        }
    }

    /// A character drawn uniformly from `alphabet`.
    fn pick(&mut self, alphabet: &[u8]) -> Result<char, String> {
        Ok(char::from(
            alphabet[usize::from(self.below(alphabet.len() as u16)?)],
        ))
    }
}

const DIGITS: &[u8] = b"0123456789";
const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The shape of a random token (`checks.md` 2.5: a server must not be able to recognise the
/// probe's token by its shape). Every run sends one JWT-shaped token and one opaque one (no
/// dots), so a server that verifies only one of the two forms (a dot sends a token to the
/// JWT verifier, anything else to an "API key" branch that checks presence) is caught
/// whatever the operator's credential looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// An ordinary RS256 JWT ([`garbage_token`]).
    Jwt,
    /// 32 to 43 base64url characters, no dots: an opaque token or API key.
    Opaque,
    /// The credential's own shape ([`mirrored_token`]): its length, the class of each
    /// character and its prefix.
    LikeCredential,
}

impl Shape {
    /// How verdicts name a token of this shape.
    pub fn what(self) -> &'static str {
        match self {
            Shape::Jwt => "the JWT-shaped random token",
            Shape::Opaque => "the opaque random token (no dots)",
            Shape::LikeCredential => {
                "the random token shaped like the credential (its length, character classes and prefix)"
            }
        }
    }

    /// A short label, where a verdict names what each shape got.
    fn label(self) -> &'static str {
        match self {
            Shape::Jwt => "JWT-shaped",
            Shape::Opaque => "opaque",
            Shape::LikeCredential => "shaped like the credential",
        }
    }
}

/// The random tokens of one run, fresh from the CSPRNG: a JWT-shaped one and an opaque one.
/// With a credential that is not a JWT, the opaque one is shaped like it
/// ([`mirrored_token`]); with a JWT credential the JWT-shaped one already is (and the opaque
/// one is [`opaque_token`]). Neither is ever equal to the credential.
pub fn garbage_tokens(
    credential: Option<&SecretString>,
) -> Result<Vec<(Shape, SecretString)>, String> {
    let credential = credential.map(ExposeSecret::expose_secret);
    let mirror = credential.filter(|c| !jwt_shaped(c) && has_random_position(c));
    let fresh = |make: &dyn Fn() -> Result<String, String>| -> Result<SecretString, String> {
        // A draw equal to the credential is astronomically rare except for a credential
        // with very few letters and digits; draw again then.
        for _ in 0..64 {
            let t = make()?;
            if Some(t.as_str()) != credential {
                return Ok(SecretString::from(t));
            }
        }
        Err("could not draw a random token that differs from the credential".to_string())
    };
    let jwt = fresh(&|| garbage_token().map(|t| t.expose_secret().to_string()))?;
    let second = match mirror {
        Some(c) => (Shape::LikeCredential, fresh(&|| mirrored_token(c))?),
        None => (Shape::Opaque, fresh(&opaque_token)?),
    };
    Ok(vec![(Shape::Jwt, jwt), second])
}

/// Whether `credential` looks like a JWS compact JWT: three dot-separated parts, the first
/// two non-empty base64url and the header starting `eyJ` (`{"`).
pub fn jwt_shaped(credential: &str) -> bool {
    let parts: Vec<&str> = credential.split('.').collect();
    parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts[..2]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| BASE64URL.contains(&b)))
}

/// The length of `credential`'s leading prefix kept verbatim: ASCII letters up to and
/// including the first `-` or `_`, at most 8 characters (`sk-`, `ghp_`, `glpat-`, `xoxb-`),
/// or 0.
pub fn prefix_len(credential: &str) -> usize {
    let letters = credential
        .bytes()
        .take_while(u8::is_ascii_alphabetic)
        .count();
    match credential.as_bytes().get(letters) {
        Some(b'-' | b'_') if (1..8).contains(&letters) => letters + 1,
        _ => 0,
    }
}

/// Whether a token shaped like `credential` has a position drawn at random (a digit or a
/// letter past the prefix).
fn has_random_position(credential: &str) -> bool {
    credential[prefix_len(credential)..]
        .bytes()
        .any(|b| b.is_ascii_alphanumeric())
}

/// A random token shaped like `credential`: the same length; its prefix
/// ([`prefix_len`]) kept; each digit, lower-case and upper-case letter replaced by one drawn
/// from the CSPRNG in the same class; every other character (the separators `.`, `-`, `_`,
/// `~`, `+`, `/`, `=`, and anything else) kept where it is. Nothing of the credential's
/// secret content is used beyond the class of each character and the prefix.
pub fn mirrored_token(credential: &str) -> Result<String, String> {
    let mut rng = Csprng::new();
    let prefix = prefix_len(credential);
    let mut out = String::with_capacity(credential.len());
    out.push_str(&credential[..prefix]);
    for c in credential[prefix..].chars() {
        out.push(match c {
            '0'..='9' => rng.pick(DIGITS)?,
            'a'..='z' => rng.pick(LOWER)?,
            'A'..='Z' => rng.pick(UPPER)?,
            other => other,
        });
    }
    Ok(out)
}

/// A random opaque token: 32 to 43 base64url characters (the length drawn too), no dots.
pub fn opaque_token() -> Result<String, String> {
    let mut rng = Csprng::new();
    let len = 32 + usize::from(rng.below(12)?);
    (0..len).map(|_| rng.pick(BASE64URL)).collect()
}

/// A fresh random token for one run, from the operating system's CSPRNG, shaped as an
/// ordinary RS256 JWT: the usual header (`{"alg":"RS256","typ":"JWT"}`), a payload of
/// random claims (`sub` and `jti` random, `iat` now, `exp` in an hour) and 256 random bytes
/// of signature, each base64url. A server that lets through whatever looks like a JWT (it
/// decodes the claims without verifying the signature) is caught as well as one that lets
/// through any string, and nothing in the token tells the probe from a real client.
pub fn garbage_token() -> Result<SecretString, String> {
    let mut rng = Csprng::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = serde_json::json!({
        "sub": base64url(&rng.bytes(16)?),
        "jti": base64url(&rng.bytes(16)?),
        "iat": now,
        "exp": now + 3600,
    });
    Ok(SecretString::from(format!(
        "{}.{}.{}",
        base64url(br#"{"alg":"RS256","typ":"JWT"}"#),
        base64url(claims.to_string().as_bytes()),
        base64url(&rng.bytes(256)?)
    )))
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = BASE64URL;
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

/// One verdict on a request out of what each random token's shape got there: a pass when
/// every shape was refused (one observation when they agree, else each named), else the
/// worst (its observation names the shape).
fn per_request(shapes: Vec<(Shape, Verdict)>) -> Verdict {
    if shapes.iter().all(|(_, v)| v.outcome == Outcome::Pass) {
        let first = shapes.first().map(|(_, v)| v.observed.clone());
        let observed = if shapes
            .iter()
            .all(|(_, v)| Some(&v.observed) == first.as_ref())
        {
            first.unwrap_or_default()
        } else {
            shapes
                .iter()
                .map(|(s, v)| format!("{} {}", s.label(), v.observed))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Verdict::pass(observed);
    }
    let mut best: Option<Verdict> = None;
    for (_, v) in shapes {
        if best.as_ref().is_none_or(|b| rank(&v) > rank(b)) {
            best = Some(v);
        }
    }
    best.unwrap_or_else(|| Verdict::skip(""))
}

/// The pause before a rate-limited token probe is asked again when its answer does not say
/// how long to wait (a 429 without `Retry-After`).
pub const RETRY_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause before a token probe is asked again, whatever `Retry-After` says.
pub const RETRY_PAUSE_CAP: Duration = Duration::from_secs(2);

/// How long to wait before asking a token probe answered `ex` again, once (fresh eyes round
/// 17, D8: a limiter on failed tokens answers a burst of them 429): a 429 waits its
/// `Retry-After` in seconds, or [`RETRY_PAUSE`] without one; a 503 is asked again only when
/// it says when (`Retry-After`). A `Retry-After` that is not a number of seconds (an HTTP
/// date) waits the cap; every wait is at most [`RETRY_PAUSE_CAP`]. `None`: not a rate limit.
pub fn retry_pause(ex: &Exchange) -> Option<Duration> {
    let after = ex.header("retry-after").map(|v| {
        let v = v.trim();
        if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            // Digits beyond u64 are a very long wait: the cap.
            v.parse::<u64>()
                .map_or(RETRY_PAUSE_CAP, Duration::from_secs)
        } else {
            RETRY_PAUSE_CAP
        }
    });
    let pause = match (ex.status, after) {
        (429, after) => after.unwrap_or(RETRY_PAUSE),
        (503, Some(after)) => after,
        _ => return None,
    };
    Some(pause.min(RETRY_PAUSE_CAP))
}

/// One token probe's request: where it goes and what its answer is judged as.
#[derive(Clone, Copy)]
enum Ask<'p> {
    /// A request that asked for authorization without a token ([`Paths`]).
    Path(&'p TokenProbe),
    /// The 2025-11-25 `initialize` of a dual-era or not yet classified server.
    Initialize,
}

/// One token probe sent: the answer, and the first answer when it was rate limited and the
/// request was asked again ([`retry_pause`]).
struct Shot<'p, 't> {
    ask: Ask<'p>,
    shape: Shape,
    token: &'t SecretString,
    got: Result<Exchange, ExchangeError>,
    /// What to say about asking again: the first answer and the pause before the second
    /// request, or that the deadline left no time for one; empty when not rate limited.
    retried: String,
}

/// Whether an `initialize` with a random token answered `ex` is judged as the token's
/// answer: served (a 2xx JSON-RPC result) is the token let through; refused by the
/// authorization layer is that layer's answer. An answer not observed is `unknown`
/// ([`boundary::initialize_not_observed`]); anything else (a modern-only server's -32022)
/// says nothing about the token.
fn initialize_judged(ex: &Exchange) -> bool {
    era::initialize_works(ex) || refused_by_authorization(ex)
}

impl AuthStage<'_> {
    /// Send one token probe's request with `token`.
    async fn shoot(&self, ask: Ask<'_>, token: &SecretString) -> Result<Exchange, ExchangeError> {
        match ask {
            Ask::Path(probe) => {
                let req = probe.req.clone().with_bearer(Some(token));
                self.send_read(&req, probe.read).await
            }
            Ask::Initialize => {
                let req =
                    ProbeRequest::legacy_initialize(era::INITIALIZE_ID).with_bearer(Some(token));
                self.send(&req).await
            }
        }
    }

    /// Send every shot's request at once, then ask each one that was rate limited again,
    /// once, one at a time after the others, each after its pause ([`retry_pause`]).
    async fn fire<'p, 't>(
        &self,
        asks: Vec<(Ask<'p>, Shape, &'t SecretString)>,
    ) -> Vec<Shot<'p, 't>> {
        let mut shots: Vec<Shot<'p, 't>> =
            join_all(asks.into_iter().map(|(ask, shape, token)| async move {
                let got = self.shoot(ask, token).await;
                Shot {
                    ask,
                    shape,
                    token,
                    got,
                    retried: String::new(),
                }
            }))
            .await;
        for shot in &mut shots {
            let Some(pause) = shot.got.as_ref().ok().and_then(retry_pause) else {
                continue;
            };
            // Never past the job's deadline: the second answer must fit before it, or the
            // first answer stands.
            if Instant::now() + pause + self.budget > self.deadline {
                shot.retried =
                    " (not asked again: the job's deadline left no time for it)".to_string();
                continue;
            }
            tokio::time::sleep(pause).await;
            let first = shot.got.as_ref().map(Exchange::summary).unwrap_or_default();
            shot.got = self.shoot(shot.ask, shot.token).await;
            shot.retried = format!(
                " (first answered {first}; asked again once, {} later)",
                fmt_wait(pause)
            );
        }
        shots
    }

    /// One token probe with `probe`'s request: `judge` on the answer (asked again once when
    /// it was rate limited); no answer is no evidence either way about `what`.
    async fn token_probe(
        &self,
        probe: &TokenProbe,
        token: &SecretString,
        what: &str,
        judge: impl Fn(&Exchange) -> Verdict,
    ) -> Verdict {
        let shot = self
            .fire(vec![(Ask::Path(probe), Shape::Opaque, token)])
            .await
            .pop();
        match shot {
            Some(shot) => judge_shot(&shot, what, judge),
            None => Verdict::error("the token probe was not sent"),
        }
    }

    /// The random tokens (each [`Shape`]) on every request that asked for authorization
    /// without a token ([`Paths`]): the era's request, each request past discovery that did
    /// (`tools/list`, `tools/call`, `subscriptions/listen`), and on a dual-era or not yet
    /// classified endpoint the 2025-11-25 `initialize` (judged when it is served, a 2xx
    /// JSON-RPC result being the token let through, or refused by the authorization layer;
    /// `unknown` when not observed, [`boundary::initialize_not_observed`]; a modern-only
    /// server's -32022 says nothing about the token). Either shape let through fails, naming the shape. Every request
    /// goes at once; one rate limited is asked again once, after the others, one at a time
    /// ([`retry_pause`]): a limiter on failed tokens sized for people (fresh eyes round 17,
    /// D8) answers a burst of them 429. Still rate limited, it stays `unknown`.
    async fn garbage(&self, era: Era, paths: &Paths, tokens: &[(Shape, SecretString)]) -> Verdict {
        let probes: Vec<TokenProbe> = paths
            .primary(era)
            .into_iter()
            .chain(paths.others())
            .collect();
        let initialize = paths.initialize && era != Era::Legacy;
        let asks: Vec<(Ask<'_>, Shape, &SecretString)> = probes
            .iter()
            .map(Ask::Path)
            .chain(initialize.then_some(Ask::Initialize))
            .flat_map(|ask| {
                tokens
                    .iter()
                    .map(move |(shape, token)| (ask, *shape, token))
            })
            .collect();
        let shots = self.fire(asks).await;
        let mut verdicts: Vec<(&str, Verdict)> = probes
            .iter()
            .map(|probe| {
                let shapes = shots
                    .iter()
                    .filter(|s| matches!(s.ask, Ask::Path(p) if std::ptr::eq(p, probe)))
                    .map(|s| {
                        let what = s.shape.what();
                        (s.shape, judge_shot(s, what, |ex| must_refuse(ex, what)))
                    })
                    .collect();
                (probe.method, per_request(shapes))
            })
            .collect();
        // A request whose token-less answer was not observed, while the run found the
        // boundary elsewhere, may ask for authorization and let any token through: no
        // evidence either way (4.1).
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
        if initialize {
            // Served (a 2xx JSON-RPC result) is the token let through; refused by the
            // authorization layer is that layer's answer; not observed (no answer, 429,
            // 503, 502, 504, a bare 500, ...) is `unknown`, never left out (red team round
            // 18, D2). An answer that it has no such path (a modern-only server's -32022)
            // says nothing about the token.
            let judged: Vec<(Shape, Verdict)> = shots
                .iter()
                .filter(|s| matches!(s.ask, Ask::Initialize))
                .filter_map(|s| {
                    let what = s.shape.what();
                    let v = match (&s.got, boundary::initialize_not_observed(&s.got)) {
                        (Ok(ex), _) if initialize_judged(ex) => {
                            judge_shot(s, what, |ex| must_refuse(ex, what))
                        }
                        (_, Some(o)) => {
                            let mut v = Verdict::unknown(
                                o.cause,
                                o.explain(&format!("whether {what} is refused")),
                            );
                            v.observed.push_str(&s.retried);
                            v
                        }
                        _ => return None,
                    };
                    Some((s.shape, v))
                })
                .collect();
            if !judged.is_empty() {
                let mut v = per_request(judged);
                if paths.initialize_open {
                    v.observed.push_str(" (this 2025-11-25 path serves requests without any token too: auth.challenge)");
                }
                verdicts.push(("initialize (2025-11-25)", v));
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
        let v = match garbage_tokens(self.credentials.token.as_ref()) {
            Ok(tokens) => self.garbage(era, paths, &tokens).await,
            Err(e) => Verdict::error(e),
        };
        rec.record(CheckId::AuthGarbageToken, v, t);
        let primary = paths.primary(era);
        let t = Instant::now();
        let v = match (&self.credentials.other_audience, &primary) {
            (None, _) => Verdict::skip(NO_OTHER_AUDIENCE),
            (Some(_), None) => Verdict::skip("no request asked for authorization"),
            (Some(tok), Some(probe)) => {
                let what = "a token issued for another audience";
                self.token_probe(probe, tok, what, |ex| must_refuse(ex, what))
                    .await
            }
        };
        rec.record(CheckId::AuthWrongAudience, v, t);
        let t = Instant::now();
        let v = match (&self.credentials.missing_scope, &primary) {
            (None, _) => Verdict::skip(NO_MISSING_SCOPE),
            (Some(_), None) => Verdict::skip("no request asked for authorization"),
            (Some(tok), Some(probe)) => {
                self.token_probe(probe, tok, "a token lacking a scope", |ex| {
                    insufficient_scope(ex, probe.method, probe.scope.as_deref())
                })
                .await
            }
        };
        rec.record(CheckId::AuthInsufficientScope, v, t);
    }
}

/// The verdict on one shot: `judge` on its answer, saying when it was asked twice; no
/// answer is no evidence either way about `what`.
fn judge_shot(shot: &Shot<'_, '_>, what: &str, judge: impl Fn(&Exchange) -> Verdict) -> Verdict {
    let mut v = match &shot.got {
        Ok(ex) => judge(ex),
        Err(e) => Verdict::unknown(
            e.cause,
            format!("no answer, so nothing is known about {what}: {}", e.message),
        ),
    };
    v.observed.push_str(&shot.retried);
    v
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
