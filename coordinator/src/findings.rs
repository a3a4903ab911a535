//! The finding catalogue: for every finding id, a title, the fix, and the rule behind it.
//! One fault has one name everywhere. The `spec` of each cites the rule: a section of the
//! MCP 2026-07-28 specification or an RFC, never an internal document.

/// Catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct FindingSpec {
    pub id: &'static str,
    pub title: &'static str,
    pub remediation: &'static str,
    pub spec: &'static str,
}

macro_rules! findings {
    ($($id:literal => $title:literal, $fix:literal, $spec:literal;)*) => {
        /// Every finding id Vantage can emit.
        pub const FINDINGS: &[FindingSpec] = &[$(FindingSpec { id: $id, title: $title, remediation: $fix, spec: $spec },)*];
    };
}

findings! {
    "dns.resolve" => "The name does not resolve",
        "Publish A (and AAAA) records for the host, and check the zone's delegation.",
        "RFC 1034 section 5 and RFC 1035 (a client must resolve the endpoint's host)";
    "dns.split-horizon" => "Regions get different kinds of DNS answers (split horizon)",
        "Serve the same public answer to every resolver: remove the internal view for this name, or give the internal view the public address.",
        "RFC 9728 section 3.3 (the resource must be the exact URL every client uses); MCP 2026-07-28 basic, Statelessness (any client may reach any instance)";
    "dns.answers-differ" => "Regions get different (global) addresses",
        "Nothing to fix if this is GeoDNS or a CDN; make sure every address serves the same endpoint.",
        "informational: no rule is broken (GeoDNS and CDNs answer per region)";
    "dns.non-global-address" => "DNS hands out an address that is not globally routable",
        "Publish only public addresses for a public endpoint; internal addresses belong in an internal name.",
        "IANA IPv4 and IPv6 special-purpose address registries";
    "dns.no-a-record" => "No IPv4 A record",
        "Add an A record: many hosted MCP clients reach the internet over IPv4 only.",
        "RFC 1035 section 3.4.1 (A records); IPv4-only clients cannot reach an IPv6-only host";
    "net.connect" => "The endpoint does not accept connections",
        "Check that the server listens on the published addresses and that the firewall admits the port.",
        "MCP 2026-07-28 Streamable HTTP (the server provides one HTTP endpoint that accepts POST); RFC 9293 (TCP)";
    "egress.blocked" => "Some regions cannot connect while others can",
        "A timeout is a silent drop (a firewall or security group rule for that network); a refusal is an active reject. Allow the region's egress range.",
        "RFC 9293 section 3.5 (a refused connection is answered with a reset; a dropped one gets no answer)";
    "net.ipv6" => "IPv6 addresses do not accept connections",
        "Make the service listen on IPv6 and allow it through the firewall, or withdraw the AAAA records.",
        "RFC 8305 (Happy Eyeballs: clients try the AAAA addresses first)";
    "tls.handshake" => "The TLS handshake fails",
        "Serve a certificate chain that a public trust store accepts, valid for the host name, including intermediates.",
        "RFC 8446; RFC 6125";
    "tls.expiry" => "The certificate expires soon or has expired",
        "Renew the certificate and automate renewal.",
        "RFC 5280 section 4.1.2.5 (certificate validity)";
    "tls.plain-http" => "A non-local endpoint is served over plain HTTP",
        "Serve the endpoint over https://; bearer tokens must never travel in clear text.",
        "MCP authorization, Communication Security (2026-07-28)";
    "redirect.none" => "The endpoint redirects",
        "Publish the final URL as the endpoint; clients do not follow redirects on POST safely.",
        "RFC 9110 section 15.4";
    "redirect.cross-host" => "The endpoint redirects to another host",
        "Publish the final host's URL: clients drop Authorization on a cross-host redirect, and 301/302 turn POST into GET.",
        "RFC 9110 section 15.4; Fetch standard (Authorization removal on cross-origin redirects)";
    "era.detect" => "No MCP protocol answers at this URL",
        "Check the URL path and that the MCP server (not a web page or gateway default) answers POST there.",
        "MCP 2026-07-28 versioning (server/discover MUST be implemented)";
    "era.legacy-only" => "The server does not speak 2026-07-28",
        "Upgrade the server SDK to one that serves 2026-07-28 (server/discover and per-request _meta), keeping 2025-11-25 as a fallback if needed.",
        "MCP 2026-07-28 versioning, Backward Compatibility";
    "discover.shape" => "server/discover answers with the wrong shape",
        "Return a DiscoverResult: resultType, supportedVersions (with 2026-07-28), capabilities, ttlMs and cacheScope.",
        "MCP 2026-07-28 server/discover; schema DiscoverResult";
    "transport.notification" => "Notifications are not answered 202 with an empty body",
        "Answer an accepted notification with 202 and no body (or a 4xx if it is not accepted).",
        "MCP 2026-07-28 Streamable HTTP, Sending Messages item 5";
    "transport.get" => "GET on the endpoint is not answered 405",
        "Answer GET with 405 and Allow: POST (or a 2025-11-25 stream on a dual-era server); make sure the gateway does not serve a page there.",
        "MCP 2026-07-28 Streamable HTTP, Earlier Revisions (SHOULD 405); RFC 9110 section 15.5.6 (Allow)";
    "transport.delete" => "DELETE on the endpoint is not answered 405",
        "Answer DELETE with 405 and Allow: POST.",
        "MCP 2026-07-28 Streamable HTTP, Earlier Revisions (SHOULD 405); RFC 9110 section 15.5.6 (Allow)";
    "headers.missing-method" => "A request without Mcp-Method is not refused",
        "Validate Mcp-Method on every request and answer 400 with JSON-RPC -32020 when it is absent; check that no proxy strips it.",
        "MCP 2026-07-28 Streamable HTTP, Standard Request Headers and Server Validation";
    "headers.method-mismatch" => "Mcp-Method is not compared with the body",
        "Answer 400 with -32020 when Mcp-Method differs from the body's method.",
        "MCP 2026-07-28 Streamable HTTP, Server Validation";
    "headers.name-mismatch" => "Mcp-Name is not compared with the body",
        "Answer 400 with -32020 when Mcp-Name differs from params.name (or params.uri).",
        "MCP 2026-07-28 Streamable HTTP, Server Validation";
    "headers.missing-version" => "A request without MCP-Protocol-Version is served",
        "Answer 400 with -32020 when MCP-Protocol-Version is absent on a modern request.",
        "MCP 2026-07-28 Streamable HTTP, Protocol Version Header";
    "version.unsupported" => "An unsupported protocol version is not refused properly",
        "Answer 400 with -32022 and error.data {supported, requested}, so clients can retry with a version you serve.",
        "MCP 2026-07-28 versioning; schema UnsupportedProtocolVersionError";
    "meta.missing" => "A request without _meta is not refused",
        "Answer 400 with -32602 when params._meta (protocolVersion, clientCapabilities) is missing.",
        "MCP 2026-07-28 basic, per-request protocol fields";
    "method.unknown" => "Unknown methods are not answered 404 with JSON-RPC -32601",
        "Answer unknown methods with 404 and a JSON-RPC -32601 body; an HTML or empty 404 looks like a missing endpoint.",
        "MCP 2026-07-28 Streamable HTTP, Protocol Version Header";
    "security.origin" => "A foreign Origin is refused without 403",
        "Answer a request with an invalid Origin with 403.",
        "MCP 2026-07-28 Streamable HTTP, Security Warning item 1";
    "security.origin-not-validated" => "A request with a foreign Origin was served",
        "Validate Origin and answer 403 to origins you do not serve (DNS rebinding, cross-site requests).",
        "MCP 2026-07-28 Streamable HTTP, Security Warning item 1";
    "transport.sse-buffering" => "SSE responses may be buffered on the way",
        "Send X-Accel-Buffering: no on SSE responses and disable response buffering in proxies.",
        "MCP 2026-07-28 Streamable HTTP, Receiving Messages (SHOULD)";
    "cors.preflight" => "Browser clients cannot send the MCP headers",
        "If browser clients should connect, allow Mcp-Method, Mcp-Name and MCP-Protocol-Version in CORS and expose WWW-Authenticate.",
        "informational (the 2026-07-28 spec has no normative CORS text)";
    "jsonrpc.error-body" => "Refusals arrive without a JSON-RPC body",
        "Let the MCP server answer its own validation errors, or make the gateway return JSON-RPC error bodies; a bare 4xx points to an intermediary.",
        "MCP 2026-07-28 Streamable HTTP (note on intermediaries)";
    "edge.divergent" => "Regions see different behaviour from the same endpoint",
        "A different gateway, CDN point of presence or WAF answers in those regions; align their configuration with the others.",
        "MCP 2026-07-28 basic, Statelessness (every request stands alone, so every region must get the same answer); Streamable HTTP note on intermediaries";
    "auth.challenge" => "The authorization challenge is missing or incomplete",
        "Answer unauthenticated requests with 401 and WWW-Authenticate: Bearer resource_metadata=\"…\", scope=\"…\".",
        "MCP 2026-07-28 authorization, Protected Resource Metadata Discovery; RFC 9110 section 11.6.1; RFC 6750 section 3";
    "auth.prm" => "Protected resource metadata is missing or wrong",
        "Serve RFC 9728 metadata at the advertised or well-known URL, with `resource` equal to the endpoint URL exactly and at least one authorization server.",
        "RFC 9728 sections 2 and 3.3; MCP 2026-07-28 authorization-server discovery";
    "auth.as-metadata" => "Authorization server metadata is missing or unusable",
        "Publish RFC 8414 or OpenID discovery metadata whose `issuer` is identical to the issuer URL, with S256 in code_challenge_methods_supported and https endpoints.",
        "RFC 8414 section 3.3; MCP 2026-07-28 authorization, Authorization Code Protection";
    "auth.garbage-token" => "A random token is not refused with 401",
        "Answer invalid or expired tokens with 401 (and WWW-Authenticate error=\"invalid_token\").",
        "MCP 2026-07-28 authorization, Token Handling; RFC 6750 section 3.1";
    "auth.wrong-audience" => "A token for another audience is not refused with 401",
        "Validate the token's audience against this resource and answer 401 when it differs.",
        "MCP 2026-07-28 authorization, Token Handling; RFC 8707";
    "auth.insufficient-scope" => "A token lacking a scope is not answered 403 insufficient_scope",
        "Enforce scopes and answer 403 with WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"…\".",
        "MCP 2026-07-28 authorization, Runtime Insufficient Scope Errors (SHOULD)";
    "auth.metadata-redirect" => "A metadata URL redirects",
        "Serve metadata at the URL clients are given; clients do not follow a redirect to another host for metadata.",
        "RFC 9728 section 3; RFC 8414 section 3";
    "auth.credential-required" => "The endpoint requires authorization and no credential was given",
        "Name a credential with --token-env NAME (or --token-file PATH) so the protocol checks can run.",
        "MCP 2026-07-28 authorization";
    "auth.invalid-token-accepted" => "An invalid token was accepted",
        "Validate every bearer token (signature, expiry, audience) and answer 401 when it fails.",
        "MCP 2026-07-28 authorization, Token Handling (MUST 401)";
    "fleet.region-missing" => "A requested region did not report",
        "Check that an agent for the region is connected and healthy (GET /v1/agents).",
        "not a protocol rule: a region that did not report decides nothing, and is never counted as a pass";
    "fleet.vantage-degraded" => "A probe region's own network is failing",
        "Look at the agent's network, not the target: it fails where other regions succeed.",
        "not a protocol rule: a fact about the probe's own network, not about the target";
}

/// Look up a finding. Unknown ids (for example auth checks added later) get a generic entry.
pub fn spec(id: &str) -> FindingSpec {
    FINDINGS
        .iter()
        .copied()
        .find(|f| f.id == id)
        .unwrap_or(FindingSpec {
            id: "unknown",
            title: "A check failed",
            remediation: "See the evidence.",
            spec: "see the evidence",
        })
}
