//! The check table: one entry per check, in client order (see [`CheckSpec`] for the
//! fields). Sources are paths from the workspace root; a test checks that each file speaks
//! of its check.

use super::Evidence::*;
use super::FindingId::*;
use super::Stage::*;
use super::{CheckId, CheckSpec};
use crate::model::Severity::*;

const DNS: &str = "agent/src/probe/dns.rs";
const CONNECT: &str = "agent/src/probe/connect.rs";
const TLS: &str = "agent/src/probe/tls.rs";
const ENGINE: &str = "agent/src/engine.rs";
const REDIRECT: &str = "agent/src/probe/redirect.rs";
const AUTH: &str = "agent/src/probe/auth/mod.rs";
const TOKENS: &str = "agent/src/probe/auth/tokens.rs";
const ERA: &str = "agent/src/probe/era.rs";
const TRANSPORT: &str = "agent/src/probe/transport.rs";
const LISTING: &str = "agent/src/probe/listing/rules.rs";
const TOOL_LIST: &str = "agent/src/probe/listing/tool_list.rs";
const LINT: &str = "agent/src/probe/listing/lint.rs";
const LISTEN: &str = "agent/src/probe/listing/listen.rs";

const SOME_REGIONS_ONLY: &str = "when it fails in some regions only";
const TOKEN_ACCEPTED: &str =
    "when the token is let through (any answer but 401/403 from the authorization layer)";

crate::spec_table! {
    /// The catalogue entry of a check.
    pub(super) fn entry(CheckId) -> CheckSpec {
        DnsResolve => {
            stage: Dns,
            expected: "the name resolves (NOERROR with at least one address)",
            finding: DnsResolve,
            also: &[(DnsSplitHorizon, SOME_REGIONS_ONLY)],
            max_severity: High,
            evidence: Some(Resolved),
            source: DNS,
        }
        DnsARecord => {
            stage: Dns,
            expected: "at least one IPv4 A record",
            finding: DnsNoARecord,
            also: &[],
            max_severity: High,
            evidence: None,
            source: DNS,
        }
        DnsGlobalAddresses => {
            stage: Dns,
            expected: "every address globally routable",
            finding: DnsNonGlobalAddress,
            also: &[],
            max_severity: High,
            evidence: None,
            source: DNS,
        }
        NetConnect => {
            stage: Net,
            expected: "every IPv4 address accepts a TCP connection (and at least one address overall)",
            finding: NetConnect,
            also: &[(EgressBlocked, SOME_REGIONS_ONLY)],
            max_severity: High,
            evidence: Some(Connected),
            source: CONNECT,
        }
        NetIpv6 => {
            stage: Net,
            expected: "IPv6 addresses accept connections when IPv4 ones do",
            finding: NetIpv6,
            also: &[],
            max_severity: Low,
            evidence: None,
            source: CONNECT,
        }
        TlsHandshake => {
            stage: Tls,
            expected: "a TLS handshake with a trusted chain valid for the host name",
            finding: TlsHandshake,
            also: &[],
            max_severity: High,
            evidence: Some(Handshake),
            source: TLS,
        }
        TlsExpiry => {
            stage: Tls,
            expected: "the leaf certificate valid for at least 14 more days",
            finding: TlsExpiry,
            also: &[],
            max_severity: High,
            evidence: None,
            source: TLS,
        }
        TlsPlainHttp => {
            stage: Tls,
            expected: "https:// for a non-local endpoint",
            finding: TlsPlainHttp,
            also: &[],
            max_severity: High,
            evidence: None,
            source: ENGINE,
        }
        RedirectNone => {
            stage: Shape,
            expected: "no 3xx on the endpoint (clients do not follow redirects safely)",
            finding: RedirectNone,
            also: &[(RedirectCrossHost, "when Location names another origin")],
            max_severity: High,
            evidence: None,
            source: REDIRECT,
        }
        AuthChallenge => {
            stage: Auth,
            expected: "401 with WWW-Authenticate: Bearer, with resource_metadata= and scope=, for every unauthenticated request (a dual-era server's initialize too)",
            finding: AuthChallenge,
            also: &[],
            max_severity: High,
            evidence: None,
            source: AUTH,
        }
        AuthPrm => {
            stage: Auth,
            expected: "protected resource metadata: 200 JSON, resource equal to the endpoint URL, authorization_servers non-empty",
            finding: AuthPrm,
            also: &[],
            max_severity: High,
            evidence: None,
            source: AUTH,
        }
        AuthAsMetadata => {
            stage: Auth,
            expected: "authorization server metadata with an identical issuer, S256 and https endpoints",
            finding: AuthAsMetadata,
            also: &[],
            max_severity: High,
            evidence: None,
            source: AUTH,
        }
        AuthGarbageToken => {
            stage: Auth,
            expected: "401 for a random bearer token on every request that asked for authorization",
            finding: AuthGarbageToken,
            also: &[(AuthInvalidTokenAccepted, TOKEN_ACCEPTED)],
            max_severity: Critical,
            evidence: None,
            source: TOKENS,
        }
        AuthWrongAudience => {
            stage: Auth,
            expected: "401 for a token issued for another audience",
            finding: AuthWrongAudience,
            also: &[(AuthInvalidTokenAccepted, TOKEN_ACCEPTED)],
            max_severity: Critical,
            evidence: None,
            source: TOKENS,
        }
        AuthInsufficientScope => {
            stage: Auth,
            expected: "403 with error=\"insufficient_scope\" for a token lacking a scope the request needs (SHOULD)",
            finding: AuthInsufficientScope,
            also: &[],
            max_severity: Low,
            evidence: None,
            source: TOKENS,
        }
        AuthMetadataRedirect => {
            stage: Auth,
            expected: "no cross-host redirect on any metadata URL",
            finding: AuthMetadataRedirect,
            also: &[],
            max_severity: High,
            evidence: None,
            source: AUTH,
        }
        EraDetect => {
            stage: Era,
            expected: "the server speaks 2026-07-28 (server/discover works)",
            finding: EraDetect,
            also: &[(EraLegacyOnly, "when only 2025-11-25 or the 2024-11-05 HTTP+SSE transport answers")],
            max_severity: High,
            evidence: Some(Answered),
            source: ERA,
        }
        DiscoverShape => {
            stage: Era,
            expected: "200, JSON or SSE, a DiscoverResult with resultType \"complete\", supportedVersions containing 2026-07-28, capabilities, ttlMs >= 0 and cacheScope",
            finding: DiscoverShape,
            also: &[],
            max_severity: High,
            evidence: None,
            source: ERA,
        }
        TransportNotification => {
            stage: Transport,
            expected: "202 with an empty body, or a 4xx",
            finding: TransportNotification,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        TransportGet => {
            stage: Transport,
            expected: "405 with Allow on a modern-only server; an SSE stream or 4xx is acceptable on a dual-era server",
            finding: TransportGet,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        TransportDelete => {
            stage: Transport,
            expected: "405 with Allow on a modern-only server; a 4xx is acceptable on a dual-era server",
            finding: TransportDelete,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        HeadersMissingMethod => {
            stage: Transport,
            expected: "400 with JSON-RPC -32020 when Mcp-Method is absent",
            finding: HeadersMissingMethod,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        HeadersMethodMismatch => {
            stage: Transport,
            expected: "400 with JSON-RPC -32020 when Mcp-Method differs from the body's method",
            finding: HeadersMethodMismatch,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        HeadersMethodCase => {
            stage: Transport,
            expected: "400 when Mcp-Method differs from the body's method in case only (values are case-sensitive)",
            finding: HeadersMethodCase,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        HeadersNameMismatch => {
            stage: Transport,
            expected: "400 with JSON-RPC -32020 when Mcp-Name differs from the body's name",
            finding: HeadersNameMismatch,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        HeadersMissingVersion => {
            stage: Transport,
            expected: "400 with JSON-RPC -32020 when MCP-Protocol-Version is absent (any refusal on a dual-era server)",
            finding: HeadersMissingVersion,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        HeadersVersionMismatch => {
            stage: Transport,
            expected: "400 with JSON-RPC -32020 when MCP-Protocol-Version differs from _meta's protocolVersion",
            finding: HeadersVersionMismatch,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        VersionUnsupported => {
            stage: Transport,
            expected: "400 with JSON-RPC -32022, data.supported and data.requested, for a past (1999-01-01) and a future (2099-12-31) version",
            finding: VersionUnsupported,
            also: &[],
            max_severity: High,
            evidence: None,
            source: TRANSPORT,
        }
        MetaMissing => {
            stage: Transport,
            expected: "400 with JSON-RPC -32602 when params._meta is absent",
            finding: MetaMissing,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        MethodUnknown => {
            stage: Transport,
            expected: "404 with a JSON-RPC -32601 body",
            finding: MethodUnknown,
            also: &[],
            max_severity: High,
            evidence: None,
            source: TRANSPORT,
        }
        SecurityOrigin => {
            stage: Transport,
            expected: "403 for a foreign Origin",
            finding: SecurityOriginNotValidated,
            also: &[(SecurityOrigin, "when it is refused, but not with 403 (a warning)")],
            max_severity: Medium,
            evidence: None,
            source: TRANSPORT,
        }
        TransportSseBuffering => {
            stage: Transport,
            expected: "SSE responses carry X-Accel-Buffering: no and deliver events before the stream ends",
            finding: TransportSseBuffering,
            also: &[],
            max_severity: Info,
            evidence: None,
            source: TRANSPORT,
        }
        CorsPreflight => {
            stage: Transport,
            expected: "informational: the headers a browser client may send and read",
            finding: CorsPreflight,
            also: &[],
            max_severity: Info,
            evidence: None,
            source: TRANSPORT,
        }
        JsonrpcErrorBody => {
            stage: Transport,
            expected: "every MCP-level 4xx carries a JSON-RPC error body, and every refusal's error echoes the request id",
            finding: JsonrpcErrorBody,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: "agent/src/probe/error_body.rs",
        }
        CapsDiscoverMatchesHandlers => {
            stage: Listing,
            expected: "each advertised capability's list method works; a list method whose capability is not advertised answers 404 with JSON-RPC -32601",
            finding: CapsDiscoverMatchesHandlers,
            also: &[],
            max_severity: High,
            evidence: None,
            source: LISTING,
        }
        ToolsListShape => {
            stage: Listing,
            expected: "tools/list returns result.tools[], each tool with a name and an inputSchema object of type \"object\" (outputSchema, when present, an object)",
            finding: ToolsListShape,
            also: &[],
            max_severity: High,
            evidence: None,
            source: TOOL_LIST,
        }
        ToolsNameFormat => {
            stage: Listing,
            expected: "tool names of 1 to 128 characters from A-Z a-z 0-9 _ . -, unique",
            finding: ToolsNameFormat,
            also: &[],
            max_severity: Low,
            evidence: None,
            source: TOOL_LIST,
        }
        ToolsDeterministicOrder => {
            stage: Listing,
            expected: "tools/list returns the same order when listed twice",
            finding: ToolsDeterministicOrder,
            also: &[],
            max_severity: Low,
            evidence: None,
            source: TOOL_LIST,
        }
        ToolsNoPerConnectionVariance => {
            stage: Listing,
            expected: "the same tools over another connection (another session on a 2025-11-25 server)",
            finding: ToolsNoPerConnectionVariance,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TOOL_LIST,
        }
        PaginationCursor => {
            stage: Listing,
            expected: "nextCursor pages end when nextCursor is absent, each cursor the server issued is accepted back, never repeats, and every page has the same cacheScope",
            finding: PaginationCursor,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: LISTING,
        }
        PaginationInvalidCursor => {
            stage: Listing,
            expected: "a list request with a cursor the server never issued answers JSON-RPC -32602",
            finding: PaginationInvalidCursor,
            also: &[],
            max_severity: Low,
            evidence: None,
            source: LISTING,
        }
        CacheHints => {
            stage: Listing,
            expected: "every list result is complete (resultType \"complete\") and carries ttlMs (an integer >= 0) and cacheScope (public or private)",
            finding: CacheHints,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: LISTING,
        }
        ToolsXMcpHeaderValid => {
            stage: Listing,
            expected: "every x-mcp-header is a non-empty RFC 9110 token, unique ignoring case, on a string, integer or boolean property reached only through properties",
            finding: ToolsXMcpHeaderValid,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: TOOL_LIST,
        }
        ToolsSchemaValid => {
            stage: Listing,
            expected: "every inputSchema and outputSchema compiles as JSON Schema (the draft its $schema names, else 2020-12), with no reference to fetch",
            finding: ToolsSchemaValid,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: LINT,
        }
        ToolsInputConstrained => {
            stage: Listing,
            expected: "no tool accepts arbitrary input: an input object declares its properties or closes additionalProperties; string arguments named like a path, URL or command carry maxLength, enum or pattern",
            finding: ToolsInputConstrained,
            also: &[],
            max_severity: Low,
            evidence: None,
            source: LINT,
        }
        ToolsSurfaceSize => {
            stage: Listing,
            expected: "tool descriptions up to 2 KiB, tool definitions up to 8 KiB, the whole tool list up to 64 KiB (what every host pays in context)",
            finding: ToolsSurfaceSize,
            also: &[],
            max_severity: Low,
            evidence: None,
            source: LINT,
        }
        ListenSse => {
            stage: Listing,
            expected: "subscriptions/listen answers 200 with a text/event-stream that stays open",
            finding: ListenSse,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: LISTEN,
        }
        ListenAckFirst => {
            stage: Listing,
            expected: "the first event of subscriptions/listen is notifications/subscriptions/acknowledged with _meta subscriptionId equal to the request id and the honoured filter",
            finding: ListenAckFirst,
            also: &[],
            max_severity: Medium,
            evidence: None,
            source: LISTEN,
        }
    }
}
