//! The finding catalogue: for every finding id, a title, the fix, the rule behind it, the
//! highest severity it carries, and, for a finding the merge derives rather than maps from
//! one failed check, where and how. One fault has one name everywhere. The `spec` of each cites the rule: a section of the
//! MCP 2026-07-28 specification or an RFC, never an internal document.
//! Which checks raise a finding is the check catalogue's to say
//! ([`vantage_agent::catalog::raising`]).

use vantage_agent::catalog::FindingId;
use vantage_agent::model::Severity::{self, *};

/// Catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct FindingSpec {
    pub title: &'static str,
    pub remediation: &'static str,
    /// The rule behind it.
    pub spec: &'static str,
    /// The highest severity it can carry.
    pub severity: Severity,
    /// For a finding the merge derives from several regions or results: the source file
    /// and how.
    pub derived: Option<(&'static str, &'static str)>,
}

/// The merge, where derived and conditional findings are named.
pub const MERGE: &str = "coordinator/src/merge.rs";
/// The cross-region comparison of the lists the regions read.
pub const SURFACE: &str = "coordinator/src/surface.rs";
/// Where the merge decides what each region observed (`checks.md` 4.1) and names why a
/// region or a check has no evidence.
pub const EVIDENCE: &str = "coordinator/src/merge/evidence.rs";
/// Where the merge compares the regions' DNS answers.
pub const MERGE_DNS: &str = "coordinator/src/merge/dns.rs";
/// Where the merge decides what a degraded region's result counts for.
pub const MERGE_DEGRADED: &str = "coordinator/src/merge/degraded.rs";
/// Where the merge tells a vantage's own TLS clock or trust store from the target's
/// certificate.
pub const MERGE_VANTAGE_TLS: &str = "coordinator/src/merge/vantage_tls.rs";

vantage_agent::spec_table! {
    /// The catalogue entry of a finding (a new finding id cannot lack one).
    pub fn spec(FindingId) -> FindingSpec {
        DnsResolve => {
            title: "The name does not resolve",
            remediation: "Publish A (and AAAA) records for the host, and check the zone's delegation.",
            spec: "RFC 1034 section 5 and RFC 1035 (a client must resolve the endpoint's host)",
            severity: High,
            derived: None,
        }
        DnsSplitHorizon => {
            title: "Regions get different kinds of DNS answers (split horizon)",
            remediation: "Serve the same public answer to every resolver: remove the internal view for this name, or give the internal view the public address.",
            spec: "RFC 9728 section 3.3 (the resource must be the exact URL every client uses); MCP 2026-07-28 basic, Statelessness (any client may reach any instance)",
            severity: High,
            derived: Some((MERGE_DNS, "regions disagree on the class of DNS answer: global or not, an answer or NXDOMAIN (for the name, or for one family's query in some regions while others get NOERROR for it and the name has records), A present or absent")),
        }
        DnsAnswersDiffer => {
            title: "Regions get different (global) addresses",
            remediation: "Nothing to fix if this is GeoDNS or a CDN; make sure every address serves the same endpoint.",
            spec: "informational: no rule is broken (GeoDNS and CDNs answer per region)",
            severity: Info,
            derived: Some((MERGE_DNS, "regions get different global addresses (GeoDNS, CDNs): informational")),
        }
        DnsNonGlobalAddress => {
            title: "DNS hands out an address that is not globally routable",
            remediation: "Publish only public addresses for a public endpoint; internal addresses belong in an internal name.",
            spec: "IANA IPv4 and IPv6 special-purpose address registries",
            severity: High,
            derived: None,
        }
        DnsNoARecord => {
            title: "No IPv4 A record",
            remediation: "Add an A record: many hosted MCP clients reach the internet over IPv4 only.",
            spec: "RFC 1035 section 3.4.1 (A records); IPv4-only clients cannot reach an IPv6-only host",
            severity: High,
            derived: None,
        }
        NetConnect => {
            title: "The endpoint does not accept connections",
            remediation: "Check that the server listens on the published addresses and that the firewall admits the port.",
            spec: "MCP 2026-07-28 Streamable HTTP (the server provides one HTTP endpoint that accepts POST); RFC 9293 (TCP)",
            severity: High,
            derived: None,
        }
        EgressBlocked => {
            title: "Some regions cannot connect while others can",
            remediation: "A timeout is a silent drop (a firewall or security group rule for that network); a refusal is an active reject. Allow the region's egress range.",
            spec: "RFC 9293 section 3.5 (a refused connection is answered with a reset; a dropped one gets no answer)",
            severity: High,
            derived: None,
        }
        NetIpv6 => {
            title: "IPv6 addresses do not accept connections",
            remediation: "Make the service listen on IPv6 and allow it through the firewall, or withdraw the AAAA records. An AAAA record that carries an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, or NAT64 64:ff9b::/96) is no IPv6 service: publish the server's own IPv6 address, or no AAAA.",
            spec: "RFC 8305 (Happy Eyeballs: clients try the AAAA addresses first)",
            severity: Low,
            derived: None,
        }
        TlsHandshake => {
            title: "The TLS handshake fails",
            remediation: "Serve a chain the clients trust (a public CA; for a laboratory, the CA given to --ca-file or --target-ca-file): a leaf certificate (not a CA certificate), valid for the host name, with its intermediates. The evidence says what the handshake refused.",
            spec: "RFC 8446; RFC 6125",
            severity: High,
            derived: None,
        }
        TlsExpiry => {
            title: "The certificate expires soon or has expired",
            remediation: "Renew the certificate and automate renewal.",
            spec: "RFC 5280 section 4.1.2.5 (certificate validity)",
            severity: High,
            derived: None,
        }
        TlsPlainHttp => {
            title: "A non-local endpoint is served over plain HTTP",
            remediation: "Serve the endpoint over https://; bearer tokens must never travel in clear text.",
            spec: "MCP authorization, Communication Security (2026-07-28)",
            severity: High,
            derived: None,
        }
        RedirectNone => {
            title: "The endpoint redirects",
            remediation: "Publish the final URL as the endpoint; clients do not follow redirects on POST safely.",
            spec: "RFC 9110 section 15.4",
            severity: Medium,
            derived: None,
        }
        RedirectCrossHost => {
            title: "The endpoint redirects to another origin (scheme, host or port)",
            remediation: "Publish the final host's URL: clients drop Authorization on a cross-host redirect, and 301/302 turn POST into GET.",
            spec: "RFC 9110 section 15.4; Fetch standard (Authorization removal on cross-origin redirects)",
            severity: High,
            derived: None,
        }
        EraDetect => {
            title: "No MCP protocol answers at this URL",
            remediation: "Check the URL path and that the MCP server (not a web page or gateway default) answers POST there.",
            spec: "MCP 2026-07-28 versioning (server/discover MUST be implemented)",
            severity: High,
            derived: None,
        }
        EraLegacyOnly => {
            title: "The server does not speak 2026-07-28",
            remediation: "Upgrade the server SDK to one that serves 2026-07-28 (server/discover and per-request _meta), keeping 2025-11-25 as a fallback if needed.",
            spec: "MCP 2026-07-28 versioning, Backward Compatibility",
            severity: Medium,
            derived: None,
        }
        DiscoverShape => {
            title: "server/discover answers with the wrong shape",
            remediation: "Return a DiscoverResult: resultType, supportedVersions (with 2026-07-28), capabilities, ttlMs and cacheScope.",
            spec: "MCP 2026-07-28 server/discover; schema DiscoverResult",
            severity: High,
            derived: None,
        }
        TransportNotification => {
            title: "Notifications are not answered 202 with an empty body",
            remediation: "Answer an accepted notification with 202 and no body (or a 4xx if it is not accepted).",
            spec: "MCP 2026-07-28 Streamable HTTP, Sending Messages item 5",
            severity: Medium,
            derived: None,
        }
        TransportGet => {
            title: "GET on the endpoint is not answered 405 with Allow",
            remediation: "Answer GET with 405 and Allow: POST (or a 2025-11-25 stream on a dual-era server); make sure the gateway does not serve a page there.",
            spec: "MCP 2026-07-28 Streamable HTTP, Earlier Revisions (SHOULD 405); RFC 9110 section 15.5.6 (Allow)",
            severity: Medium,
            derived: None,
        }
        TransportDelete => {
            title: "DELETE on the endpoint is not answered 405 with Allow",
            remediation: "Answer DELETE with 405 and Allow: POST.",
            spec: "MCP 2026-07-28 Streamable HTTP, Earlier Revisions (SHOULD 405); RFC 9110 section 15.5.6 (Allow)",
            severity: Medium,
            derived: None,
        }
        HeadersMissingMethod => {
            title: "A request without Mcp-Method is not refused with 400 and -32020",
            remediation: "Validate Mcp-Method on every request and answer 400 with JSON-RPC -32020 when it is absent; check that no proxy strips it.",
            spec: "MCP 2026-07-28 Streamable HTTP, Standard Request Headers and Server Validation",
            severity: Medium,
            derived: None,
        }
        HeadersMethodMismatch => {
            title: "Mcp-Method is not compared with the body",
            remediation: "Answer 400 with -32020 when Mcp-Method differs from the body's method.",
            spec: "MCP 2026-07-28 Streamable HTTP, Server Validation",
            severity: Medium,
            derived: None,
        }
        HeadersMethodCase => {
            title: "A request whose Mcp-Method differs from the body in case only is not refused with 400",
            remediation: "Compare Mcp-Method with the body's method exactly (values are case-sensitive) and answer 400 with -32020 when they differ.",
            spec: "MCP 2026-07-28 Streamable HTTP, Case Sensitivity and Server Validation",
            severity: Medium,
            derived: None,
        }
        HeadersNameMismatch => {
            title: "Mcp-Name is not compared with the body",
            remediation: "Answer 400 with -32020 when Mcp-Name differs from params.name (or params.uri).",
            spec: "MCP 2026-07-28 Streamable HTTP, Server Validation",
            severity: Medium,
            derived: None,
        }
        HeadersMissingVersion => {
            title: "A request without MCP-Protocol-Version is not refused with 400 and -32020",
            remediation: "Answer 400 with -32020 when MCP-Protocol-Version is absent on a modern request.",
            spec: "MCP 2026-07-28 Streamable HTTP, Protocol Version Header",
            severity: Medium,
            derived: None,
        }
        HeadersVersionMismatch => {
            title: "A request whose MCP-Protocol-Version differs from _meta is not refused with 400 and -32020",
            remediation: "Answer 400 with -32020 when the MCP-Protocol-Version header and params._meta's protocolVersion differ; a proxy routing on the header must not see another version than the server.",
            spec: "MCP 2026-07-28 Streamable HTTP, Protocol Version Header and Server Validation",
            severity: Medium,
            derived: None,
        }
        VersionUnsupported => {
            title: "An unsupported protocol version is not refused properly",
            remediation: "Answer 400 with -32022 and error.data {supported, requested}, so clients can retry with a version you serve.",
            spec: "MCP 2026-07-28 versioning; schema UnsupportedProtocolVersionError",
            severity: High,
            derived: None,
        }
        MetaMissing => {
            title: "A request without _meta is not refused with 400 and -32602",
            remediation: "Answer 400 with -32602 when params._meta (protocolVersion, clientCapabilities) is missing.",
            spec: "MCP 2026-07-28 basic, per-request protocol fields",
            severity: Medium,
            derived: None,
        }
        MethodUnknown => {
            title: "Unknown methods are not answered 404 with JSON-RPC -32601",
            remediation: "Answer unknown methods with 404 and a JSON-RPC -32601 body; an HTML or empty 404 looks like a missing endpoint.",
            spec: "MCP 2026-07-28 Streamable HTTP, Protocol Version Header",
            severity: High,
            derived: None,
        }
        SecurityOrigin => {
            title: "A foreign Origin is refused without 403",
            remediation: "Answer a request with an invalid Origin with 403.",
            spec: "MCP 2026-07-28 Streamable HTTP, Security Warning item 1",
            severity: Low,
            derived: None,
        }
        SecurityOriginNotValidated => {
            title: "A request with a foreign Origin got a 2xx answer",
            remediation: "Validate Origin and answer 403 to origins you do not serve (DNS rebinding, cross-site requests).",
            spec: "MCP 2026-07-28 Streamable HTTP, Security Warning item 1",
            severity: High,
            derived: None,
        }
        TransportSseBuffering => {
            title: "SSE responses may be buffered on the way",
            remediation: "Send X-Accel-Buffering: no on SSE responses and disable response buffering in proxies.",
            spec: "MCP 2026-07-28 Streamable HTTP, Receiving Messages (SHOULD)",
            severity: Info,
            derived: None,
        }
        CorsPreflight => {
            title: "Browser clients cannot send the MCP headers",
            remediation: "If browser clients should connect, allow Mcp-Method, Mcp-Name and MCP-Protocol-Version in CORS and expose WWW-Authenticate.",
            spec: "informational (the 2026-07-28 spec has no normative CORS text)",
            severity: Info,
            derived: None,
        }
        JsonrpcErrorBody => {
            title: "Refusals arrive without a JSON-RPC body, or not for the request",
            remediation: "Let the MCP server answer its own validation errors, or make the gateway return JSON-RPC error bodies (a bare 4xx points to an intermediary); an error must carry the id of the request it refuses (null only when the id cannot be read).",
            spec: "MCP 2026-07-28 Streamable HTTP (note on intermediaries); basic protocol: error responses MUST echo the request id",
            severity: Medium,
            derived: None,
        }
        CapsDiscoverMatchesHandlers => {
            title: "Capabilities and list methods disagree",
            remediation: "Advertise exactly the capabilities whose methods you serve: an advertised capability's list method must work, and a method of an unadvertised one must answer 404 with JSON-RPC -32601.",
            spec: "MCP 2026-07-28 server/tools and server/prompts, Capabilities; schema MethodNotFoundError",
            severity: High,
            derived: None,
        }
        ToolsListShape => {
            title: "tools/list answers with malformed tools",
            remediation: "Return result.tools[] where every tool has a name and an inputSchema object with type \"object\" (and resultType on every result): clients drop or refuse malformed tool lists.",
            spec: "MCP 2026-07-28 server/tools, Tool; schema Tool and Result",
            severity: High,
            derived: None,
        }
        ToolsNameFormat => {
            title: "Tool names are outside the recommended format, or repeated",
            remediation: "Name tools with 1 to 128 characters from A-Z, a-z, 0-9, _, . and -, each name once.",
            spec: "MCP 2026-07-28 server/tools, Tool Names (SHOULD)",
            severity: Low,
            derived: None,
        }
        ToolsDeterministicOrder => {
            title: "tools/list changes its order from one listing to the next",
            remediation: "Return tools in a stable order (sort them, or keep registration order): hosts cache and diff tool lists, and prompt caches break on reordering.",
            spec: "MCP 2026-07-28 server/tools, Capabilities (SHOULD be deterministic)",
            severity: Low,
            derived: None,
        }
        ToolsNoPerConnectionVariance => {
            title: "The tool list depends on the connection",
            remediation: "Serve the same tools to every connection (and session) with the same authorization: the list may vary with the caller's rights, never with the connection.",
            spec: "MCP 2026-07-28 server/tools, Capabilities (MUST NOT vary per connection)",
            severity: Medium,
            derived: None,
        }
        PaginationCursor => {
            title: "List pagination is broken",
            remediation: "Issue opaque cursors you accept back, end a list by omitting nextCursor, never issue the same cursor twice in a list, and give every page the same cacheScope.",
            spec: "MCP 2026-07-28 utilities/pagination; utilities/caching, Interaction with Pagination (MUST)",
            severity: Medium,
            derived: None,
        }
        PaginationInvalidCursor => {
            title: "An invalid cursor is not refused with -32602",
            remediation: "Answer a cursor you did not issue with JSON-RPC -32602 (Invalid params) instead of serving a page.",
            spec: "MCP 2026-07-28 utilities/pagination, Error Handling (SHOULD)",
            severity: Low,
            derived: None,
        }
        CacheHints => {
            title: "List results lack valid cache hints",
            remediation: "Put ttlMs (an integer >= 0) and cacheScope (\"public\" or \"private\") on every tools/list, resources/list, resources/templates/list and prompts/list result.",
            spec: "MCP 2026-07-28 utilities/caching; schema CacheableResult (MUST)",
            severity: Medium,
            derived: None,
        }
        ToolsXMcpHeaderValid => {
            title: "A tool declares an invalid x-mcp-header",
            remediation: "Make each x-mcp-header a non-empty RFC 9110 token, unique ignoring case, on a string, integer or boolean property reached through properties only: clients drop tools whose annotations are invalid.",
            spec: "MCP 2026-07-28 Streamable HTTP, Schema Extension (x-mcp-header); server/tools",
            severity: Medium,
            derived: None,
        }
        ToolsSchemaValid => {
            title: "A tool's schema does not compile",
            remediation: "Fix the inputSchema or outputSchema so that it compiles as JSON Schema (the draft its $schema names, else 2020-12), self-contained (no $ref to fetch): clients that validate arguments or results cannot use the tool.",
            spec: "MCP 2026-07-28 server/tools, Tool (inputSchema and outputSchema are JSON Schema); JSON Schema 2020-12 Core",
            severity: Medium,
            derived: None,
        }
        ToolsInputConstrained => {
            title: "A tool accepts input nobody bounded",
            remediation: "Declare the input's properties and close it with additionalProperties: false (a tool without arguments too); give string arguments that name a path, URL or command a maxLength, an enum or a pattern.",
            spec: "tool-surface lint (no protocol rule): MCP 2026-07-28 server/tools, Schema Examples (a tool with no parameters closes additionalProperties); security best practices, input validation",
            severity: Low,
            derived: None,
        }
        ToolsSurfaceSize => {
            title: "The tool surface is large",
            remediation: "Shorten long descriptions and schemas, or split the server: every host sends the whole tool list to its model on every connection (thresholds: a 2 KiB description, an 8 KiB tool, a 64 KiB list).",
            spec: "tool-surface lint (no protocol rule): the context cost of a server's tools for every host",
            severity: Low,
            derived: None,
        }
        ListenSse => {
            title: "subscriptions/listen does not answer with a stream that stays open",
            remediation: "Serve subscriptions/listen as a text/event-stream that stays open, or stop advertising listChanged.",
            spec: "MCP 2026-07-28 basic/patterns/subscriptions; Streamable HTTP, Receiving Messages",
            severity: Medium,
            derived: None,
        }
        ListenAckFirst => {
            title: "subscriptions/listen does not acknowledge first",
            remediation: "Send notifications/subscriptions/acknowledged as the stream's first event, with _meta[\"io.modelcontextprotocol/subscriptionId\"] equal to the request id and the honoured filter.",
            spec: "MCP 2026-07-28 basic/patterns/subscriptions, Acknowledgment (MUST)",
            severity: Medium,
            derived: None,
        }
        SurfaceOrderDiffers => {
            title: "Regions see the same lists in a different order",
            remediation: "Serve every list in one stable order on every replica (sort it): the set is the same, but hosts and caches that compare lists see a change.",
            spec: "MCP 2026-07-28 server/tools, Capabilities (SHOULD be deterministic); basic, Statelessness",
            severity: Low,
            derived: Some((SURFACE, "every region read the whole list and the same items, but in a different order")),
        }
        EdgeDivergent => {
            title: "Regions see different behaviour from the same endpoint",
            remediation: "A different gateway, CDN point of presence or WAF answers in those regions; align their configuration with the others.",
            spec: "MCP 2026-07-28 basic, Statelessness (every request stands alone, so every region must get the same answer); Streamable HTTP note on intermediaries",
            severity: High,
            derived: Some((MERGE, "a shape, era, transport, authorization or listing check passes in some regions and fails in others, and DNS or connectivity does not explain it (the region's own DNS, connect or TLS failure, or the check failing on a name, such as a metadata host, with no address in that region's view); or the regions read different tools, resources, templates or prompts (coordinator/src/surface.rs names them)")),
        }
        AuthChallenge => {
            title: "An unauthenticated request is not refused with 401 and a complete Bearer challenge",
            remediation: "Answer every unauthenticated request, on every path and method (a dual-era server's 2025-11-25 initialize, and tools/list and tools/call beside a protected server/discover, too), with 401 and WWW-Authenticate: Bearer resource_metadata=\"…\", scope=\"…\".",
            spec: "MCP 2026-07-28 authorization, Protected Resource Metadata Discovery; RFC 9110 section 11.6.1; RFC 6750 section 3",
            severity: High,
            derived: None,
        }
        AuthPrm => {
            title: "Protected resource metadata is missing or wrong",
            remediation: "Serve RFC 9728 metadata at the advertised or well-known URL, with `resource` equal to the endpoint URL exactly and at least one authorization server.",
            spec: "RFC 9728 sections 2 and 3.3; MCP 2026-07-28 authorization-server discovery",
            severity: High,
            derived: None,
        }
        AuthAsMetadata => {
            title: "Authorization server metadata is missing or unusable",
            remediation: "Publish RFC 8414 or OpenID discovery metadata, served as application/json, whose `issuer` is identical to the issuer URL, with S256 in code_challenge_methods_supported and https endpoints.",
            spec: "RFC 8414 sections 3.2 and 3.3; MCP 2026-07-28 authorization, Authorization Code Protection",
            severity: High,
            derived: None,
        }
        AuthGarbageToken => {
            title: "A random token is not refused with 401",
            remediation: "Answer invalid or expired tokens with 401 (and WWW-Authenticate error=\"invalid_token\").",
            spec: "MCP 2026-07-28 authorization, Token Handling; RFC 6750 section 3.1",
            severity: Medium,
            derived: None,
        }
        AuthWrongAudience => {
            title: "A token for another audience is not refused with 401",
            remediation: "Validate the token's audience against this resource and answer 401 when it differs.",
            spec: "MCP 2026-07-28 authorization, Token Handling; RFC 8707",
            severity: Medium,
            derived: None,
        }
        AuthInsufficientScope => {
            title: "A token lacking a scope is not answered 403 insufficient_scope",
            remediation: "Enforce scopes and answer 403 with WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"…\".",
            spec: "MCP 2026-07-28 authorization, Runtime Insufficient Scope Errors (SHOULD)",
            severity: Low,
            derived: None,
        }
        AuthMetadataRedirect => {
            title: "A metadata URL redirects",
            remediation: "Serve metadata at the URL clients are given; clients do not follow a redirect to another host for metadata.",
            spec: "RFC 9728 section 3; RFC 8414 section 3",
            severity: High,
            derived: None,
        }
        AuthCredentialRequired => {
            title: "The endpoint requires authorization and no credential was given",
            remediation: "Name a credential with --token-env NAME (or --token-file PATH) so the protocol checks can run.",
            spec: "MCP 2026-07-28 authorization",
            severity: Info,
            derived: Some((MERGE, "a region got 401 and no credential was given")),
        }
        AuthCredentialRefused => {
            title: "The given credential was refused, so the protocol checks could not run",
            remediation: "The endpoint answered 401/403 to the credential that was given: check that the token given by --token-env or --token-file (or the coordinator's [[credentials]] entry) is current, issued for this resource and not expired, then run the check again.",
            spec: "MCP 2026-07-28 authorization, Token Handling; RFC 6750 section 3.1 (not a finding about the target: nothing past the authorization boundary was observed)",
            severity: Medium,
            derived: Some((EVIDENCE, "a credential was given and the endpoint refused it (401/403)")),
        }
        AuthInvalidTokenAccepted => {
            title: "An invalid token was accepted",
            remediation: "Validate every bearer token (signature, expiry, audience) and answer 401 when it fails.",
            spec: "MCP 2026-07-28 authorization, Token Handling (MUST 401)",
            severity: Critical,
            derived: None,
        }
        FleetRegionMissing => {
            title: "A requested region did not report",
            remediation: "Check that an agent for the region is connected and healthy (GET /v1/agents).",
            spec: "not a protocol rule: a region that did not report decides nothing, and is never counted as a pass",
            severity: Medium,
            derived: Some((MERGE, "a requested region had no agent, or its agent did not report by the deadline, refused the job, or answered with a result this coordinator cannot read (another version)")),
        }
        ProbePolicyRefused => {
            title: "This vantage refused by policy to connect to an address the check needed, so that check observed nothing",
            remediation: "The vantage does not connect to non-global addresses (an SSRF guard for a probe fleet). In a fleet (vantage serve, agents), the policy is the coordinator's configuration: list the target's prefix in probe.allow_non_global (VANTAGE_PROBE__ALLOW_NON_GLOBAL), or, for a laboratory whose public addresses come from documentation ranges, declare them in probe.assume_global (VANTAGE_PROBE__ASSUME_GLOBAL); `vantage check --coordinator` refuses the flags. On one machine, `vantage check URL` (without --coordinator) connects to the target you name, and --allow-non-global / --assume-global CIDR widen it for the URLs the target names.",
            spec: "not a protocol rule: never pass what was not seen (a refused connection is no evidence about the target)",
            severity: Medium,
            derived: Some((EVIDENCE, "the vantage refused to connect (or to fetch a metadata URL) by its egress policy")),
        }
        ProbeIncomplete => {
            title: "The vantage could not observe everything it had to",
            remediation: "Checks ran out of time, were answered for another reason than the one they test, or were judged on part of a list (the evidence lists them and what stopped them): raise --timeout (or the job's deadline) if the deadline ran out; look at what answered in their place (a gateway, a missing header) before trusting a pass; and when the listing stopped at one of its bounds (pages, page or total size), the server's lists are larger than a client should have to read: shrink or paginate them, since the unread rest is never passed; checks missing from a region's result were not run by its agent (an older version): run the same Vantage version on the agents and the coordinator; listing checks not observed because server/discover declared no capabilities: fix the discover result (discover.shape).",
            spec: "not a protocol rule: never pass what was not seen (a check with no evidence is neither a pass nor a failure)",
            severity: Medium,
            derived: Some((EVIDENCE, "the deadline ran out before the region observed the target, or checks had no evidence either way (a list the listing could not read to its end included), or a region's result did not carry every check")),
        }
        ProbeResolverFailed => {
            title: "The vantage's own resolver failed",
            remediation: "The resolver this vantage asks did not answer, answered SERVFAIL/REFUSED, gave an answer that is not about the name asked, or could not be used: check the vantage's resolver (--nameserver, /etc/resolv.conf, the agent's network). If every region fails the same way, also check the zone's authoritative servers.",
            spec: "not a protocol rule: a fault of the vantage, never evidence about the target (RFC 1035 section 4.1.1 rcodes)",
            severity: Medium,
            derived: Some((EVIDENCE, "the vantage's resolver timed out, failed (SERVFAIL, REFUSED) or could not be used")),
        }
        ProbeClockSkew => {
            title: "A vantage's own clock judged the certificate other regions accepted",
            remediation: "Set the clock of the vantage's host right (NTP on the agent's machine): it judged the same certificate the other regions accepted (the evidence names the fingerprint and the clocks) against another date, so nothing about the target's certificate was decided in that region. Once its clock is right it judges the target again.",
            spec: "not a protocol rule: a fault of the vantage, never evidence about the target (RFC 5280 section 4.1.2.5: validity is judged against the verifier's clock)",
            severity: Medium,
            derived: Some((MERGE_VANTAGE_TLS, "a region judged a chain expired, not yet valid or near expiry while another region accepted the same chain (same SHA-256 fingerprints) with a clock more than 10 minutes apart, and its clock is the odd one (it agrees with at most half of the regions presented that chain)")),
        }
        ProbeTrustStore => {
            title: "A vantage does not trust the issuer other regions trusted",
            remediation: "If the other regions accepted the chain only with a CA they were given (their tls blocks say extra_roots) and this one checks with the public roots alone, public clients refuse the chain too: serve one from a public CA, unless only clients given that CA use the endpoint. Otherwise give the vantage the trust anchor the other regions have: on vantage-agent, --target-ca-file with the CA that issued the target's chain (its --ca-file is the coordinator's CA; the chart's agent.targetCaSecret); on the coordinator's in-process vantage, probe.ca_file (the chart's coordinator.probe.caSecret); on vantage check, --ca-file. It refused the same chain (the evidence names the fingerprint) that other regions verified, so nothing about the target's TLS was decided in that region.",
            spec: "not a protocol rule: a fault of the vantage, never evidence about the target (RFC 5280 section 6: a path is validated against the verifier's own trust anchors)",
            severity: Medium,
            derived: Some((MERGE_VANTAGE_TLS, "a region refused a chain for an unknown issuer while another region verified the same chain (same SHA-256 fingerprints)")),
        }
        FleetVantageDegraded => {
            title: "A probe region's own network is failing",
            remediation: "Look at the agent's network (its resolver, its routes, its egress) and its TLS trust store and clock, not the target: its scheduled runs fail where other regions succeed (its own resolver, no route, a connect to an address other regions connect to, or probe.trust-store or probe.clock-skew on a certificate other regions verified). Its failure here is not counted against the target, which stays unknown until that region observes it.",
            spec: "not a protocol rule: a fact about the probe's own network, not about the target",
            severity: Low,
            derived: Some((MERGE_DEGRADED, "the region is degraded (coordinator/src/checks/degraded.rs: its own resolver, no route from it, connects to addresses other regions connected to, or its trust store or clock refusing the certificate other regions verified fail most [[checks]] targets; the zone's answer, NXDOMAIN, no data or a non-global address, and a connect to an address no other region connected to are the target's and never count) and did not observe this target because of a net.connect or net.ipv6 failure on an address another region connected to (its resolver failing here stays probe.resolver-failed, unknown; the zone's answer and an address only it was given count in full); a degraded region that observed the target counts in full")),
        }
    }
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
