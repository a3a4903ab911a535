//! Which software answered, when the wire proves it: an official SDK's own error strings, a
//! gateway's error page or `Server` header, a CDN's headers. A sighting is attached to a
//! check that failed or warned, so the coordinator can name a fix for that stack (and say
//! which evidence identified it). Nothing is guessed: no sighting without one of the
//! fingerprints below.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::CheckId;
use crate::probe::http::{Body, Exchange, Rpc};

/// A stack a fingerprint can prove.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Stack {
    /// The official TypeScript SDK (`@modelcontextprotocol/sdk` 1.x, `@modelcontextprotocol/server` 2.x).
    TypescriptSdk,
    /// The official Python SDK (`mcp`).
    PythonSdk,
    Nginx,
    Cloudflare,
    Cloudfront,
    Fastly,
    Envoy,
    Vercel,
    AwsApiGateway,
}

impl Stack {
    /// How people name it.
    pub fn label(self) -> &'static str {
        match self {
            Stack::TypescriptSdk => "TypeScript SDK",
            Stack::PythonSdk => "Python SDK",
            Stack::Nginx => "nginx",
            Stack::Cloudflare => "Cloudflare",
            Stack::Cloudfront => "Amazon CloudFront",
            Stack::Fastly => "Fastly",
            Stack::Envoy => "Envoy",
            Stack::Vercel => "Vercel",
            Stack::AwsApiGateway => "Amazon API Gateway",
        }
    }
}

/// A stack seen behind one check's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StackSighting {
    /// The check whose answer carried the fingerprint.
    #[schemars(with = "String")]
    pub check: CheckId,
    pub stack: Stack,
    /// The fingerprint, as seen: a header or the error string.
    pub evidence: String,
}

/// Error strings only one SDK sends (its transport's own refusals), from their sources.
const SDK_STRINGS: &[(&str, Stack)] = &[
    ("Bad Request: Server not initialized", Stack::TypescriptSdk),
    (
        "Bad Request: Mcp-Session-Id header is required",
        Stack::TypescriptSdk,
    ),
    (
        "Bad Request: No valid session ID provided",
        Stack::TypescriptSdk,
    ),
    (
        "Bad Request: the request body is not a valid JSON-RPC message",
        Stack::TypescriptSdk,
    ),
    ("Bad Request: Missing session ID", Stack::PythonSdk),
    ("Not Found: Invalid or expired session ID", Stack::PythonSdk),
    (
        "Method Not Allowed: Session termination not supported",
        Stack::PythonSdk,
    ),
    (
        "Body must be a single JSON-RPC request or notification object",
        Stack::PythonSdk,
    ),
];

fn body_text(ex: &Exchange) -> Option<String> {
    match (&ex.body, ex.rpc()) {
        (_, Some(Rpc::Error { message, .. })) => Some(message),
        (Body::Other { excerpt, .. }, None) => Some(excerpt.clone()),
        _ => None,
    }
}

/// The stack this exchange proves, with the fingerprint: an SDK string first (it names the
/// software that refused), then a gateway's own error page, then headers.
pub fn identify(ex: &Exchange) -> Option<(Stack, String)> {
    let text = body_text(ex);
    if let Some(t) = &text {
        for (needle, stack) in SDK_STRINGS {
            if t.contains(needle) {
                return Some((*stack, format!("error \"{needle}\"")));
            }
        }
        if t.contains("<center>nginx") {
            return Some((Stack::Nginx, format!("{} page signed nginx", ex.status)));
        }
    }
    let header = |name: &str| ex.header(name).map(str::to_string);
    let server = header("server").unwrap_or_default().to_ascii_lowercase();
    if server.starts_with("nginx") {
        return Some((
            Stack::Nginx,
            format!("Server: {}", header("server").unwrap_or_default()),
        ));
    }
    if let Some(ray) = header("cf-ray") {
        return Some((Stack::Cloudflare, format!("cf-ray: {ray}")));
    }
    if server == "cloudflare" {
        return Some((Stack::Cloudflare, "Server: cloudflare".into()));
    }
    if ex.headers.contains_key("x-amz-cf-id") {
        return Some((Stack::Cloudfront, "x-amz-cf-id present".into()));
    }
    if ex.headers.contains_key("x-amz-apigw-id") {
        return Some((Stack::AwsApiGateway, "x-amz-apigw-id present".into()));
    }
    if let Some(id) = header("x-vercel-id") {
        return Some((Stack::Vercel, format!("x-vercel-id: {id}")));
    }
    if header("x-served-by").is_some_and(|v| v.starts_with("cache-")) {
        return Some((
            Stack::Fastly,
            format!("x-served-by: {}", header("x-served-by").unwrap_or_default()),
        ));
    }
    if server == "envoy" || ex.headers.contains_key("x-envoy-upstream-service-time") {
        return Some((Stack::Envoy, "Server: envoy / x-envoy-* header".into()));
    }
    None
}

/// Sightings for the checks that failed or warned, from the exchange each one judged.
pub fn sightings<'a>(
    judged: impl IntoIterator<Item = (CheckId, bool, &'a Exchange)>,
) -> Vec<StackSighting> {
    let mut out: Vec<StackSighting> = Vec::new();
    for (check, problem, ex) in judged {
        if !problem || out.iter().any(|s| s.check == check) {
            continue;
        }
        if let Some((stack, evidence)) = identify(ex) {
            out.push(StackSighting {
                check,
                stack,
                evidence: crate::probe::http::clip(&evidence, 120),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::probe::test_support::answer_with;

    fn ex(status: u16, headers: &[(&'static str, &str)], body: Body) -> Exchange {
        answer_with(status, None, body, headers)
    }

    fn other(s: &str) -> Body {
        Body::Other {
            excerpt: s.into(),
            len: s.len(),
            invalid_json: false,
        }
    }

    #[test]
    fn sdk_strings_win_over_headers() {
        let e = ex(
            400,
            &[("server", "nginx/1.24.0")],
            Body::Json(json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32000, "message": "Bad Request: Server not initialized"}})),
        );
        let (stack, why) = identify(&e).unwrap();
        assert_eq!(stack, Stack::TypescriptSdk);
        assert!(why.contains("Server not initialized"), "{why}");
        let py = ex(
            405,
            &[("server", "uvicorn")],
            Body::Json(json!({"jsonrpc": "2.0", "id": "server-error",
                "error": {"code": -32600, "message": "Method Not Allowed: Session termination not supported"}})),
        );
        assert_eq!(identify(&py).unwrap().0, Stack::PythonSdk);
    }

    #[test]
    fn gateway_pages_and_cdn_headers() {
        let page = ex(
            404,
            &[],
            other("<html><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center>"),
        );
        assert_eq!(identify(&page).unwrap().0, Stack::Nginx);
        let cf = ex(403, &[("cf-ray", "8a1b2c3d4e5f-AMS")], other("blocked"));
        assert_eq!(
            identify(&cf).unwrap(),
            (Stack::Cloudflare, "cf-ray: 8a1b2c3d4e5f-AMS".into())
        );
        let cloudfront = ex(400, &[("x-amz-cf-id", "abc==")], Body::Empty);
        assert_eq!(identify(&cloudfront).unwrap().0, Stack::Cloudfront);
        let fastly = ex(400, &[("x-served-by", "cache-ams21045-AMS")], Body::Empty);
        assert_eq!(identify(&fastly).unwrap().0, Stack::Fastly);
        // Nothing proven: no sighting.
        let plain = ex(
            404,
            &[("server", "uvicorn")],
            Body::Json(json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32601, "message": "Method not found"}})),
        );
        assert_eq!(identify(&plain), None);
    }

    #[test]
    fn only_problems_get_sightings_once_per_check() {
        let e = ex(404, &[("server", "nginx")], Body::Empty);
        let s = sightings([
            (CheckId::MethodUnknown, true, &e),
            (CheckId::MethodUnknown, true, &e),
            (CheckId::TransportGet, false, &e),
        ]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].check, CheckId::MethodUnknown);
        assert_eq!(s[0].stack, Stack::Nginx);
    }
}
