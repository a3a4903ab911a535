//! Protected resource metadata (RFC 9728) and authorization server metadata (RFC 8414,
//! OpenID Connect discovery): where to look, what must hold, and every redirect seen on the
//! way (never followed).

use std::net::SocketAddr;
use std::time::Duration;

use http::Method;
use serde_json::Value;
use url::Url;

use crate::egress::{self, EgressClient};
use crate::model::Cause;
use crate::probe::http::{exchange, Body, Exchange, ExchangeError, Limits, ProbeRequest, SseRead};
use crate::target::{redacted, Target};

/// One metadata URL fetched (or refused by the egress policy, nothing sent).
#[derive(Debug)]
pub struct Fetched {
    pub url: Url,
    pub outcome: Result<Exchange, ExchangeError>,
    /// The address that answered.
    pub peer: Option<SocketAddr>,
}

impl Fetched {
    /// Why the answer that served [`Fetched::json`] is not typed `application/json`
    /// (`rule`: the RFC section that types this document).
    pub fn not_json_type(&self, rule: &str) -> Option<String> {
        self.outcome
            .as_ref()
            .ok()
            .and_then(|ex| not_json_type(ex, rule))
    }

    /// The JSON object served with a 200, if any.
    pub fn json(&self) -> Option<&serde_json::Map<String, Value>> {
        match &self.outcome {
            Ok(ex) if ex.status == 200 => match &ex.body {
                Body::Json(Value::Object(o)) => Some(o),
                _ => None,
            },
            _ => None,
        }
    }

    /// The egress policy's refusal, when it refused this URL's address.
    pub fn refusal(&self) -> Option<&str> {
        match &self.outcome {
            Err(e) if e.cause == Cause::PolicyRefused => Some(&e.message),
            _ => None,
        }
    }

    /// Whether anything answered (a status line arrived).
    pub fn answered(&self) -> bool {
        self.outcome.is_ok()
    }

    /// `(status, location, cross_host)` when the answer was a redirect.
    pub fn redirect(&self) -> Option<(u16, String, bool)> {
        let ex = self.outcome.as_ref().ok()?;
        if !(300..400).contains(&ex.status) {
            return None;
        }
        let location = ex.header("location").unwrap_or("").to_string();
        let cross = self
            .url
            .join(&location)
            .ok()
            .map(|u| u.host_str() != self.url.host_str())
            .unwrap_or(true);
        Some((ex.status, location, cross))
    }

    /// `URL (at ADDRESS) -> answer`, or `URL -> why nothing was answered`. A redirect's
    /// Location is judged by the egress policy, never followed.
    pub fn describe(&self, policy: &egress::EgressPolicy) -> String {
        match &self.outcome {
            Ok(ex) => {
                let at = self.peer.map(|p| format!(" (at {p})")).unwrap_or_default();
                let mut s = format!("{}{at} -> {}", self.url, ex.summary());
                if let Some((_, location, _)) = self.redirect() {
                    s.push_str(&format!(" to {location}"));
                    s.push_str(&egress::location_note(policy, &self.url, &location));
                }
                s
            }
            Err(e) => format!("{} -> {}", self.url, e.message),
        }
    }
}

impl Fetched {
    /// A document (a 200) this vantage stopped reading at one of its own read caps (the body
    /// size, the HTTP client's bound on chunk extensions or trailers): it was not seen whole,
    /// so it is no evidence that the document is missing or invalid (rt15 #10; README: "no
    /// metadata" is said only when every URL was observed). Any other status says what it
    /// says without its body.
    pub fn cut_by_cap(&self) -> Option<super::unseen::Unseen> {
        let ex = self.outcome.as_ref().ok()?;
        let cap = ex.capped?;
        if ex.status != 200 {
            return None;
        }
        Some(super::unseen::Unseen {
            cause: Cause::SizeCap,
            line: format!(
                "{} -> {}: this vantage stopped reading at its own {cap} cap, so the document was not seen whole (not observed); nothing was judged on the part that was read",
                self.place(),
                ex.summary()
            ),
        })
    }
}

/// GET one metadata URL through the egress policy (headers only for a stream).
pub async fn fetch(client: &EgressClient, url: Url, limits: &Limits, budget: Duration) -> Fetched {
    let req = ProbeRequest::bare(Method::GET, &[("Accept", "application/json")]);
    match exchange(client, &url, &req, limits, budget, SseRead::HeadersOnly).await {
        Ok((ex, peer)) => Fetched {
            url,
            outcome: Ok(ex),
            peer,
        },
        Err(e) => Fetched {
            url,
            outcome: Err(e),
            peer: None,
        },
    }
}

fn with_path(base: &Url, path: &str) -> Option<Url> {
    let mut u = base.clone();
    u.set_path(path);
    u.set_query(None);
    u.set_fragment(None);
    Some(u)
}

/// The rule that types protected resource metadata: RFC 9728 section 3.2.
pub const PRM_TYPE_RULE: &str = "RFC 9728 section 3.2";
/// The rule that types authorization server metadata: RFC 8414 section 3.2.
pub const AS_TYPE_RULE: &str = "RFC 8414 section 3.2";

/// Whether a media type (lower case, without parameters) is JSON: `application/json`, or a
/// structured `application/<x>+json` type, JSON by definition (RFC 6839).
pub fn is_json_media(m: &str) -> bool {
    m == "application/json"
        || m.strip_prefix("application/")
            .and_then(|sub| sub.strip_suffix("+json"))
            .is_some_and(|x| {
                !x.is_empty()
                    && x.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.".contains(c))
            })
}

/// Why a metadata answer's `Content-Type` is not JSON (`rule`, [`PRM_TYPE_RULE`] or
/// [`AS_TYPE_RULE`]: the metadata response uses `application/json`; parameters such as
/// `charset` are fine, and so is a structured `application/<x>+json` type, JSON by
/// definition), or `None` when it is.
pub fn not_json_type(ex: &Exchange, rule: &str) -> Option<String> {
    let ct = ex.header("content-type");
    let media = ct
        .and_then(|v| v.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase());
    if media.as_deref().is_some_and(is_json_media) {
        return None;
    }
    Some(format!(
        "served as {} (the metadata response MUST be application/json, {rule})",
        ct.map_or("no Content-Type".to_string(), |c| format!(
            "Content-Type: {c}"
        ))
    ))
}

/// RFC 9728 well-known candidates for the endpoint: path-inserted, then the root form.
pub fn prm_well_known(target: &Target) -> Vec<Url> {
    let path = target.url.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.extend(with_path(
            &target.url,
            &format!("/.well-known/oauth-protected-resource{path}"),
        ));
    }
    out.extend(with_path(
        &target.url,
        "/.well-known/oauth-protected-resource",
    ));
    out
}

/// RFC 8414 and OpenID discovery candidates for an issuer, in client order: three when the
/// issuer has a path, two when it has none.
pub fn as_candidates(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        [
            "/.well-known/oauth-authorization-server".to_string(),
            "/.well-known/openid-configuration".to_string(),
        ]
        .iter()
        .filter_map(|p| with_path(issuer, p))
        .collect()
    } else {
        [
            format!("/.well-known/oauth-authorization-server{path}"),
            format!("/.well-known/openid-configuration{path}"),
            format!("{path}/.well-known/openid-configuration"),
        ]
        .iter()
        .filter_map(|p| with_path(issuer, p))
        .collect()
    }
}

/// The endpoint without its query (and fragment): the resource a client derives from an
/// endpoint like `https://h/mcp?tenant=a` (RFC 8707 section 2: a resource SHOULD NOT include
/// a query; the official TypeScript SDK's `checkResourceAllowed` compares no query).
fn without_query(url: &Url) -> Url {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u
}

/// Problems of a PRM document against the endpoint (RFC 9728 section 3.3): `resource` is the
/// endpoint URL, or the endpoint without its query (`?api_key=…`, `?tenant=a`), the form the
/// official SDK clients accept; another scheme, host, port or path (a trailing `/` too), or
/// another query, is a problem.
pub fn prm_problems(
    doc: &serde_json::Map<String, Value>,
    target: &Target,
) -> (Vec<String>, Vec<String>) {
    let mut problems = Vec::new();
    let bare = without_query(&target.url);
    match doc.get("resource").and_then(Value::as_str) {
        None => problems.push("`resource` missing (REQUIRED by RFC 9728)".to_string()),
        Some(r) if r != target.url.as_str() && r != bare.as_str() => {
            let or_bare = if bare != target.url {
                format!(
                    " nor the endpoint without its query \"{}\"",
                    redacted(bare.as_str())
                )
            } else {
                String::new()
            };
            problems.push(format!(
                "`resource` is \"{r}\", not the endpoint URL \"{}\"{or_bare} (RFC 9728 section 3.3: clients must reject it)",
                target.shown()
            ))
        }
        Some(_) => {}
    }
    let issuers: Vec<String> = doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if issuers.is_empty() {
        problems.push(
            "`authorization_servers` missing or empty (MCP requires at least one)".to_string(),
        );
    }
    (problems, issuers)
}

fn is_local_host(u: &Url) -> bool {
    match u.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost" || d.ends_with(".localhost"),
        None => false,
    }
}

/// Problems of an authorization server metadata document that matched its issuer.
pub fn as_problems(doc: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    let s256 = doc
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|x| x.as_str() == Some("S256")));
    if !s256 {
        problems.push("`code_challenge_methods_supported` lacks S256: clients MUST refuse to proceed without PKCE S256".to_string());
    }
    for key in [
        "authorization_endpoint",
        "token_endpoint",
        "registration_endpoint",
    ] {
        if let Some(v) = doc.get(key).and_then(Value::as_str) {
            match Url::parse(v) {
                Ok(u) if u.scheme() == "https" || is_local_host(&u) => {}
                Ok(_) => problems.push(format!("`{key}` {v} is not https")),
                Err(_) => problems.push(format!("`{key}` \"{v}\" is not a URL")),
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_candidates() {
        let t = Target::parse("https://mcp.example.com/tenant/mcp").unwrap();
        let c: Vec<String> = prm_well_known(&t).iter().map(Url::to_string).collect();
        assert_eq!(
            c,
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource"
            ]
        );
        let root = Target::parse("https://mcp.example.com/").unwrap();
        assert_eq!(prm_well_known(&root).len(), 1);
    }

    #[test]
    fn issuer_with_a_path_has_three_candidates() {
        let c: Vec<String> =
            as_candidates(&Url::parse("https://auth.example.com/tenant1").unwrap())
                .iter()
                .map(Url::to_string)
                .collect();
        assert_eq!(
            c,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            as_candidates(&Url::parse("https://auth.example.com").unwrap()).len(),
            2
        );
    }

    #[test]
    fn prm_resource_must_match_exactly() {
        let t = Target::parse("https://mcp.example.com/mcp").unwrap();
        let doc =
            |r: &str| serde_json::json!({"resource": r, "authorization_servers": ["https://as"]});
        let check = |v: Value| prm_problems(v.as_object().unwrap(), &t).0;
        assert!(check(doc("https://mcp.example.com/mcp")).is_empty());
        assert_eq!(check(doc("https://mcp.example.com/mcp/")).len(), 1);
        assert_eq!(check(doc("https://other.example.com/mcp")).len(), 1);
        assert_eq!(
            check(serde_json::json!({"resource": "https://mcp.example.com/mcp"})).len(),
            1
        );
    }

    #[test]
    fn prm_resource_may_leave_out_the_endpoint_query() {
        let secret = "gw-key-3f9a1c7e5b";
        for endpoint in [
            format!("https://mcp.example.com/mcp?api_key={secret}"),
            "https://mcp.example.com/mcp?tenant=a".to_string(),
        ] {
            let t = Target::parse(&endpoint).unwrap();
            let doc = |r: &str| serde_json::json!({"resource": r, "authorization_servers": ["https://as"]});
            let check = |v: Value| prm_problems(v.as_object().unwrap(), &t).0;
            // The endpoint as given, and without its query: what clients accept.
            assert_eq!(check(doc(&endpoint)), Vec::<String>::new(), "{endpoint}");
            assert_eq!(
                check(doc("https://mcp.example.com/mcp")),
                Vec::<String>::new(),
                "{endpoint}"
            );
            // Another path, host, scheme, port, a trailing slash or another query still fail.
            for other in [
                "https://mcp.example.com/mcp/",
                "https://mcp.example.com/other",
                "https://other.example.com/mcp",
                "http://mcp.example.com/mcp",
                "https://mcp.example.com:8443/mcp",
                "https://mcp.example.com/mcp?tenant=b",
            ] {
                let p = check(doc(other));
                assert_eq!(p.len(), 1, "{endpoint} / {other}: {p:?}");
                assert!(
                    p[0].contains(&format!("`resource` is \"{other}\"")),
                    "{p:?}"
                );
                assert!(
                    p[0].contains(
                        "nor the endpoint without its query \"https://mcp.example.com/mcp\""
                    ),
                    "{p:?}"
                );
                // The secret query value is in no text.
                assert!(!p[0].contains(secret), "{p:?}");
            }
        }
    }

    #[test]
    fn metadata_must_be_typed_application_json() {
        use crate::probe::test_support::answer_with;
        for rule in [PRM_TYPE_RULE, AS_TYPE_RULE] {
            let typed = |ct: Option<&str>| {
                let headers: Vec<(&'static str, &str)> =
                    ct.map(|c| ("content-type", c)).into_iter().collect();
                not_json_type(&answer_with(200, None, Body::Empty, &headers), rule)
            };
            assert_eq!(typed(Some("application/json")), None);
            assert_eq!(typed(Some("Application/JSON; charset=utf-8")), None);
            // A structured +json type is JSON by definition (RFC 6839).
            assert_eq!(typed(Some("application/oauth-authz-metadata+json")), None);
            assert_eq!(typed(Some("application/problem+json; charset=utf-8")), None);
            let html = typed(Some("text/html; charset=utf-8")).unwrap();
            assert!(
                html.contains("served as Content-Type: text/html; charset=utf-8"),
                "{html}"
            );
            assert!(
                html.contains(&format!("MUST be application/json, {rule}")),
                "{html}"
            );
            assert!(typed(None).unwrap().contains("no Content-Type"));
            assert!(typed(Some("application/jsonp")).is_some());
            assert!(typed(Some("application/+json")).is_some());
            assert!(typed(Some("text/plain+json")).is_some());
        }
    }

    #[test]
    fn as_metadata_needs_s256_and_https() {
        let ok = serde_json::json!({"issuer": "https://as", "code_challenge_methods_supported": ["S256"],
            "authorization_endpoint": "https://as/authorize", "token_endpoint": "http://127.0.0.1:9/token"});
        assert!(as_problems(ok.as_object().unwrap()).is_empty());
        let bad = serde_json::json!({"issuer": "https://as", "code_challenge_methods_supported": ["plain"],
            "token_endpoint": "http://as.example.com/token"});
        assert_eq!(as_problems(bad.as_object().unwrap()).len(), 2);
    }
}
