//! The check catalogue: every check a vantage runs, in client order, with what it expects.
//! The order is the plan: a failure early in it hides the checks after it.

/// The stage a check belongs to; the merge uses it to tell network faults from edge faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Dns,
    Net,
    Tls,
    Shape,
    Era,
    Transport,
    Auth,
}

/// One entry of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct CheckSpec {
    pub id: &'static str,
    pub stage: Stage,
    /// What passing looks like, for the report's `expected` field.
    pub expected: &'static str,
}

macro_rules! checks {
    ($($id:literal, $stage:ident, $expected:literal;)*) => {
        /// Every check, in client order.
        pub const CHECKS: &[CheckSpec] = &[$(CheckSpec { id: $id, stage: Stage::$stage, expected: $expected },)*];
    };
}

checks! {
    "dns.resolve", Dns, "the name resolves (NOERROR with at least one address)";
    "dns.a-record", Dns, "at least one IPv4 A record";
    "dns.global-addresses", Dns, "every address globally routable";
    "net.connect", Net, "every IPv4 address accepts a TCP connection (and at least one address overall)";
    "net.ipv6", Net, "IPv6 addresses accept connections when IPv4 ones do";
    "tls.handshake", Tls, "a TLS handshake with a trusted chain valid for the host name";
    "tls.expiry", Tls, "the leaf certificate valid for at least 14 more days";
    "tls.plain-http", Tls, "https:// for a non-local endpoint";
    "redirect.none", Shape, "no 3xx on the endpoint (clients do not follow redirects safely)";
    "auth.challenge", Auth, "401 with WWW-Authenticate: Bearer, with resource_metadata= and scope=";
    "auth.prm", Auth, "protected resource metadata: 200 JSON, resource equal to the endpoint URL, authorization_servers non-empty";
    "auth.as-metadata", Auth, "authorization server metadata with an identical issuer, S256 and https endpoints";
    "auth.garbage-token", Auth, "401 for a random bearer token";
    "auth.wrong-audience", Auth, "401 for a token issued for another audience";
    "auth.insufficient-scope", Auth, "403 with error=\"insufficient_scope\" for a token lacking a scope";
    "auth.metadata-redirect", Auth, "no cross-host redirect on any metadata URL";
    "era.detect", Era, "the server speaks 2026-07-28 (server/discover works)";
    "discover.shape", Era, "200, JSON or SSE, a DiscoverResult with resultType, supportedVersions containing 2026-07-28, capabilities, ttlMs >= 0 and cacheScope";
    "transport.notification", Transport, "202 with an empty body, or a 4xx";
    "transport.get", Transport, "405 with Allow on a modern-only server; an SSE stream or 4xx is acceptable on a dual-era server";
    "transport.delete", Transport, "405 with Allow on a modern-only server; a 4xx is acceptable on a dual-era server";
    "headers.missing-method", Transport, "400 with JSON-RPC -32020 when Mcp-Method is absent";
    "headers.method-mismatch", Transport, "400 with JSON-RPC -32020 when Mcp-Method differs from the body's method";
    "headers.name-mismatch", Transport, "400 with JSON-RPC -32020 when Mcp-Name differs from the body's name";
    "headers.missing-version", Transport, "400 with JSON-RPC -32020 when MCP-Protocol-Version is absent (any refusal on a dual-era server)";
    "version.unsupported", Transport, "400 with JSON-RPC -32022, data.supported and data.requested";
    "meta.missing", Transport, "400 with JSON-RPC -32602 when params._meta is absent";
    "method.unknown", Transport, "404 with a JSON-RPC -32601 body";
    "security.origin", Transport, "403 for a foreign Origin";
    "transport.sse-buffering", Transport, "SSE responses carry X-Accel-Buffering: no and deliver events before the stream ends";
    "cors.preflight", Transport, "informational: the headers a browser client may send and read";
    "jsonrpc.error-body", Transport, "every MCP-level 4xx carries a JSON-RPC error body";
}

/// Look up a check by id.
pub fn spec(id: &str) -> Option<&'static CheckSpec> {
    CHECKS.iter().find(|c| c.id == id)
}

/// The stage of a check id (auth checks are recognised by prefix).
pub fn stage_of(id: &str) -> Option<Stage> {
    spec(id)
        .map(|s| s.stage)
        .or_else(|| id.starts_with("auth.").then_some(Stage::Auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_dotted() {
        let mut seen = std::collections::BTreeSet::new();
        for c in CHECKS {
            assert!(seen.insert(c.id), "duplicate {}", c.id);
            assert!(c.id.contains('.'), "{}", c.id);
        }
    }
}
