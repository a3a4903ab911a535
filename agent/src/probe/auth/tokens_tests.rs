//! The token probes' verdicts, and the garbage token's shape (issue 12, reproduction 7).

use http::HeaderMap;
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

use super::*;
use crate::model::Outcome;
use crate::probe::http::Body;

fn ex(status: u16, www_authenticate: Option<&str>, body: Body) -> Exchange {
    let mut headers = HeaderMap::new();
    if let Some(v) = www_authenticate {
        headers.insert("www-authenticate", v.parse().unwrap());
    }
    Exchange {
        status,
        headers,
        content_type: Some("text/plain".into()),
        body,
        elapsed_ms: 0,
        first_byte_ms: 0,
        capped: None,
    }
}

/// The inverse of `base64url` (unpadded), for reading the token back.
fn unbase64url(s: &str) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let sextets: Vec<u32> = s
        .bytes()
        .map(|c| ALPHABET.iter().position(|&a| a == c).expect("base64url") as u32)
        .collect();
    let mut out = Vec::new();
    for chunk in sextets.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, v)| n | (v << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// Red team round 9 (nits): the JWT-shaped random token (one of the two a run sends: a server
/// that lets through anything shaped `x.y.z` is caught too) is random per run in payload and
/// signature, and names nothing.
#[test]
fn the_jwt_shaped_random_token_is_fresh_with_no_tell_tale_content() {
    let a = garbage_token().unwrap();
    let b = garbage_token().unwrap();
    let (a, b) = (a.expose_secret(), b.expose_secret());
    assert_ne!(a, b, "a fresh token per run");
    let parts = |t: &str| -> Vec<String> { t.split('.').map(str::to_string).collect() };
    let (pa, pb) = (parts(a), parts(b));
    assert_eq!(pa.len(), 3, "header.payload.signature: {a}");
    for p in &pa {
        assert!(
            !p.is_empty()
                && p.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'),
            "unpadded base64url: {p}"
        );
    }
    assert_eq!(unbase64url(&pa[0]), br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims =
        |p: &str| -> serde_json::Value { serde_json::from_slice(&unbase64url(p)).unwrap() };
    let (ca, cb) = (claims(&pa[1]), claims(&pb[1]));
    for key in ["sub", "jti"] {
        let v = ca[key].as_str().unwrap();
        assert_eq!(v.len(), 22, "16 random bytes: {v}");
        assert_ne!(ca[key], cb[key], "{key} is random per run");
    }
    let (iat, exp) = (ca["iat"].as_u64().unwrap(), ca["exp"].as_u64().unwrap());
    assert_eq!(exp, iat + 3600);
    assert_eq!(unbase64url(&pa[2]).len(), 256, "an RS256-sized signature");
    assert_ne!(pa[2], pb[2], "the signature is random per run");
    assert!(
        !a.to_lowercase().contains("vantage"),
        "nothing names the prober: {a}"
    );
    assert!(!String::from_utf8_lossy(&unbase64url(&pa[1])).contains("vantage"));
    assert_eq!(base64url(b"\xfb\xff"), "-_8");
    assert_eq!(base64url(b"Man"), "TWFu");
    assert_eq!(unbase64url("-_8"), b"\xfb\xff");
}

/// The TS SDK 1.x example with its plain `--oauth` verifier answers a wrong-audience token
/// with 400 "No valid session ID provided": the authorization layer let it through.
#[test]
fn anything_but_401_or_403_means_the_token_was_accepted() {
    let no_session = ex(
        400,
        None,
        Body::Json(
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
        ),
    );
    let v = must_refuse(&no_session, "a token issued for another audience");
    assert_eq!(
        (v.outcome, v.severity, v.cause),
        (
            Outcome::Fail,
            Some(Severity::Critical),
            Some(Cause::TokenAccepted)
        )
    );
    for ok in [200, 202, 404, 406] {
        assert_eq!(
            must_refuse(&ex(ok, None, Body::Empty), "t").cause,
            Some(Cause::TokenAccepted),
            "{ok}"
        );
    }
    assert_eq!(
        must_refuse(&ex(401, None, Body::Empty), "t").outcome,
        Outcome::Pass
    );
    // Refused by the authorization layer, but not with 401.
    for refused in [
        ex(403, None, Body::Empty),
        ex(400, Some("Bearer error=\"invalid_request\""), Body::Empty),
    ] {
        let v = must_refuse(&refused, "t");
        assert_eq!((v.severity, v.cause), (Some(Severity::Medium), None));
    }
    // A rate limit, an unavailable server or a gateway's error says nothing about the token:
    // unknown, never a failure (front.py tok with ST=429/502/503/504).
    for status in [429, 502, 503, 504] {
        let v = must_refuse(
            &ex(status, None, Body::Json(json!({"error": "try later"}))),
            "t",
        );
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Unknown, None, Some(Cause::OtherReason)),
            "{status}: {}",
            v.observed
        );
        let v = insufficient_scope(&ex(status, None, Body::Empty), "server/discover", None);
        assert_eq!(
            (v.outcome, v.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "{status}"
        );
    }
    // A 500 is the server's own answer to the token (the request without one got its 401):
    // not the 401 the rule asks for, and no claim that it was accepted.
    let v = must_refuse(&ex(500, None, Body::Empty), "t");
    assert_eq!(
        (v.outcome, v.severity, v.cause),
        (Outcome::Fail, Some(Severity::Medium), None)
    );
    assert!(
        v.observed.contains("does not say whether it was accepted"),
        "{}",
        v.observed
    );
    // A redirect (never followed) says neither that the token was accepted nor that it was
    // refused: unknown, the redirect being redirect.none's (red team round 15, defect 5).
    let v = must_refuse(&ex(302, None, Body::Empty), "t");
    assert_eq!(
        (v.outcome, v.cause),
        (Outcome::Unknown, Some(Cause::OtherReason)),
        "{}",
        v.observed
    );
    // Insufficient scope: 403 with the error passes.
    assert_eq!(
        insufficient_scope(
            &ex(
                403,
                Some("Bearer error=\"insufficient_scope\""),
                Body::Empty
            ),
            "server/discover",
            None
        )
        .outcome,
        Outcome::Pass
    );
}

/// Red team round 9 defect 8: 403 `insufficient_scope` is a SHOULD (low, never medium), and
/// a token lacking *a* scope served on a request that may not need that scope is a note,
/// not "let through": a fault only when the probed request's own challenge named its scope.
#[test]
fn a_token_lacking_a_scope_served_is_low_and_a_fault_only_where_the_scope_is_named() {
    let served = ex(
        200,
        None,
        Body::Json(json!({"jsonrpc": "2.0", "id": 900, "result": {}})),
    );
    let v = insufficient_scope(&served, "server/discover", Some("mcp tools:call"));
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Fail, Some(Severity::Low))
    );
    assert!(
        v.observed.contains("let through on server/discover")
            && v.observed.contains("asks for scope=\"mcp tools:call\""),
        "{}",
        v.observed
    );
    let v = insufficient_scope(&served, "server/discover", None);
    assert_eq!(
        (v.outcome, v.severity),
        (Outcome::Warn, Some(Severity::Low))
    );
    assert!(
        v.observed
            .contains("served on server/discover, which may not need the missing scope")
            && !v.observed.contains("let through"),
        "{}",
        v.observed
    );
    // Every other answer that is not the SHOULD stays low too.
    for (status, www) in [
        (500, None),
        (401, None),
        (403, None),
        (400, Some("Bearer error=\"invalid_request\"")),
    ] {
        let v = insufficient_scope(&ex(status, www, Body::Empty), "tools/list", None);
        assert_eq!(v.severity, Some(Severity::Low), "{status}: {}", v.observed);
    }
    // A redirect says nothing about the scope (never followed): unknown.
    let v = insufficient_scope(&ex(302, None, Body::Empty), "tools/list", None);
    assert_eq!(v.outcome, Outcome::Unknown, "{}", v.observed);
}

#[test]
fn the_probe_request_is_one_the_era_accepts() {
    let body = |r: ProbeRequest| r.body.unwrap()["method"].as_str().unwrap().to_string();
    assert_eq!(body(probe_request(Era::Legacy, 1)), "initialize");
    for era in [Era::Modern, Era::Dual, Era::Unknown] {
        assert_eq!(body(probe_request(era, 1)), "server/discover");
    }
}

/// The class of each character: what a token shaped like the credential keeps.
fn classes(t: &str) -> String {
    t.chars()
        .map(|c| match c {
            '0'..='9' => '9',
            'a'..='z' => 'a',
            'A'..='Z' => 'A',
            other => other,
        })
        .collect()
}

fn tokens(credential: Option<&str>) -> Vec<(Shape, String)> {
    let credential = credential.map(|c| SecretString::from(c.to_string()));
    garbage_tokens(credential.as_ref())
        .unwrap()
        .into_iter()
        .map(|(s, t)| (s, t.expose_secret().to_string()))
        .collect()
}

/// Red team round 15, defect 1: a server that verifies only dotted tokens (anything else is
/// an "API key" whose presence is enough) let the probe through unseen, because the probe's
/// token was always a JWT while the real credential was opaque. With an opaque credential
/// the second token has its shape: the same length, each character from the same class at
/// the same position, separators and the short prefix kept; fresh every run, never the
/// credential.
#[test]
fn the_random_token_mirrors_an_opaque_credential_position_by_position() {
    for credential in [
        "fxV3f9aQ7twK2m8Lp4vZ",
        "sk-proj-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "glpat-xR2mK9pL4vT7wQ1zY8nB",
        "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx",
        "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789",
        "a1b2.c3D4~e5+F6/g7==",
        "7f3c9e2a-4b1d-4c8e-9f0a-2b3c4d5e6f70",
    ] {
        let got = tokens(Some(credential));
        assert_eq!(
            got.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            vec![Shape::Jwt, Shape::LikeCredential],
            "{credential}"
        );
        let (jwt, like) = (&got[0].1, &got[1].1);
        assert_eq!(
            jwt.split('.').count(),
            3,
            "the JWT-shaped one is still sent"
        );
        assert_eq!(like.len(), credential.len(), "{credential} -> {like}");
        assert_eq!(classes(like), classes(credential), "{credential} -> {like}");
        assert_ne!(like, credential);
        let prefix = prefix_len(credential);
        assert_eq!(like[..prefix], credential[..prefix], "the prefix is kept");
        // Past the prefix, the random positions are drawn, not copied: over a long
        // credential, most of them differ.
        let same = like[prefix..]
            .bytes()
            .zip(credential[prefix..].bytes())
            .filter(|(a, b)| a == b && a.is_ascii_alphanumeric())
            .count();
        let random = credential[prefix..]
            .bytes()
            .filter(u8::is_ascii_alphanumeric)
            .count();
        assert!(same * 2 < random, "{credential} -> {like}");
        // Fresh every run.
        let again = tokens(Some(credential));
        assert_ne!(again[1].1, *like, "{credential}");
        assert_ne!(again[0].1, *jwt);
    }
    // The prefix rule: letters up to and including the first - or _, at most 8 characters.
    for (credential, prefix) in [
        ("sk-abc", "sk-"),
        ("sk_live_abc", "sk_"),
        ("ghp_abc", "ghp_"),
        ("glpat-abc", "glpat-"),
        ("xoxb-1-2", "xoxb-"),
        ("github_pat_1", "github_"),
        ("abcdefgh-x", ""),
        ("v1_abc", ""),
        ("-abc", ""),
        ("abcdef", ""),
    ] {
        assert_eq!(
            &credential[..prefix_len(credential)],
            prefix,
            "{credential}"
        );
    }
}

/// A credential with few random positions: the token is never the credential (each draw
/// that equals it is drawn again); one with none at all cannot be mirrored, so the opaque
/// token goes instead.
#[test]
fn the_random_token_is_never_the_credential() {
    for _ in 0..50 {
        let got = tokens(Some("sk-1"));
        assert_eq!(got[1].0, Shape::LikeCredential);
        assert_ne!(got[1].1, "sk-1");
        assert!(got[1].1.starts_with("sk-"), "{}", got[1].1);
        assert_eq!(classes(&got[1].1), "aa-9");
    }
    let got = tokens(Some("sk-.-_"));
    assert_eq!(got[1].0, Shape::Opaque);
    assert_ne!(got[1].1, "sk-.-_");
}

/// A JWT credential keeps the JWT-shaped token as its likeness (fresh content); the second
/// token is an opaque one. Without a credential both shapes go: the JWT-shaped one and an
/// opaque 32-43 character base64url one, fresh every run.
#[test]
fn a_jwt_credential_or_none_gets_a_jwt_shaped_and_an_opaque_token() {
    let jwt_credential = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
    assert!(jwt_shaped(jwt_credential));
    assert!(!jwt_shaped("a1b2.c3D4.e5"), "dots alone are no JWT");
    for credential in [Some(jwt_credential), None] {
        let a = tokens(credential);
        let b = tokens(credential);
        assert_eq!(
            a.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            vec![Shape::Jwt, Shape::Opaque],
            "{credential:?}"
        );
        assert_eq!(a[0].1.split('.').count(), 3);
        assert!(a[0].1.starts_with("eyJ"));
        let opaque = &a[1].1;
        assert!((32..=43).contains(&opaque.len()), "{opaque}");
        assert!(
            opaque
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'),
            "base64url, no dots: {opaque}"
        );
        assert_ne!(a[0].1, b[0].1, "fresh every run");
        assert_ne!(a[1].1, b[1].1, "fresh every run");
    }
    // The length of the opaque token is drawn too.
    let lengths: std::collections::BTreeSet<usize> =
        (0..200).map(|_| opaque_token().unwrap().len()).collect();
    assert!(lengths.len() > 3, "{lengths:?}");
}

/// The verdict on one request out of what each shape got: a pass when every shape was
/// refused, else the worst, which names its shape.
#[test]
fn either_shape_let_through_fails_naming_the_shape() {
    let refused = ex(401, None, Body::Empty);
    let served = ex(
        200,
        None,
        Body::Json(json!({"jsonrpc": "2.0", "id": 900, "result": {}})),
    );
    let v = per_request(vec![
        (Shape::Jwt, must_refuse(&refused, Shape::Jwt.what())),
        (
            Shape::LikeCredential,
            must_refuse(&served, Shape::LikeCredential.what()),
        ),
    ]);
    assert_eq!(
        (v.outcome, v.severity, v.cause),
        (
            Outcome::Fail,
            Some(Severity::Critical),
            Some(Cause::TokenAccepted)
        )
    );
    assert!(
        v.observed
            .contains("the random token shaped like the credential (its length, character classes and prefix) was accepted"),
        "{}",
        v.observed
    );
    let v = per_request(vec![
        (Shape::Jwt, must_refuse(&refused, Shape::Jwt.what())),
        (Shape::Opaque, must_refuse(&refused, Shape::Opaque.what())),
    ]);
    assert_eq!(
        (v.outcome, v.observed.as_str()),
        (Outcome::Pass, "401 text/plain (empty body)")
    );
}

/// Fresh eyes round 17, D8: which token probe answers are asked again once, and after how
/// long: a 429 after its `Retry-After` in seconds (a short fixed pause without one, the cap
/// for an HTTP date or a value that is not a number), a 503 only when it says when; never
/// longer than the cap; nothing else is a rate limit.
#[test]
fn a_rate_limited_token_probe_is_asked_again_after_its_retry_after_capped() {
    let with = |status: u16, retry_after: Option<&str>| {
        let mut e = ex(status, None, Body::Empty);
        if let Some(r) = retry_after {
            e.headers.insert("retry-after", r.parse().unwrap());
        }
        retry_pause(&e)
    };
    let secs = Duration::from_secs;
    assert_eq!(with(429, None), Some(RETRY_PAUSE));
    assert_eq!(with(429, Some("1")), Some(secs(1)));
    assert_eq!(with(429, Some(" 0 ")), Some(secs(0)));
    assert_eq!(with(429, Some("60")), Some(RETRY_PAUSE_CAP));
    assert_eq!(
        with(429, Some("99999999999999999999999")),
        Some(RETRY_PAUSE_CAP)
    );
    assert_eq!(
        with(429, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
        Some(RETRY_PAUSE_CAP)
    );
    assert_eq!(with(503, Some("1")), Some(secs(1)));
    assert_eq!(with(503, Some("120")), Some(RETRY_PAUSE_CAP));
    assert_eq!(with(503, None), None, "a 503 that does not say when");
    for status in [200, 401, 403, 500, 502, 504] {
        assert_eq!(with(status, Some("1")), None, "{status}");
    }
}
