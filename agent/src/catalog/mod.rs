//! The check catalogue: every check a vantage runs, in client order, and for each what
//! passing looks like, the finding its failure maps to, the highest severity it can produce,
//! what a pass of it proves toward "this region observed the target" (`checks.md` 4.1), and
//! the source file that observes it. The order is the plan: a failure early in it hides the
//! checks after it.

mod checks;
mod finding;
mod ids;

pub use finding::FindingId;
pub use ids::UnknownId;

use crate::model::Severity;
use ids::string_ids;

/// The stage a check belongs to; the merge uses it to tell network faults from edge faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    Dns,
    Net,
    Tls,
    Shape,
    Era,
    Transport,
    Auth,
    /// The capability lists (tools, resources, templates, prompts), read-only.
    Listing,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Dns => "dns",
            Stage::Net => "connect",
            Stage::Tls => "tls",
            Stage::Shape => "shape",
            Stage::Era => "era",
            Stage::Transport => "transport",
            Stage::Auth => "authorization",
            Stage::Listing => "listing",
        }
    }
}

/// What a pass of a check proves toward `checks.md` 4.1: a region observed the target only
/// when it resolved the name (or was given an address), connected (and completed the TLS
/// handshake for https), and got an HTTP answer to an MCP request so that the era is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Evidence {
    /// (a) The name resolved to at least one address.
    Resolved,
    /// (b) At least one TCP connection completed.
    Connected,
    /// (b) The TLS handshake completed (required for an https target).
    Handshake,
    /// (c) An MCP request got an HTTP answer and the era is known. A legacy, HTTP+SSE or
    /// not-MCP era is a failure of `era.detect` that still knows the era: see
    /// [`crate::model::RegionResult::proven`].
    Answered,
}

impl Evidence {
    pub fn describe(self) -> &'static str {
        match self {
            Evidence::Resolved => "the name resolved",
            Evidence::Connected => "a TCP connection completed",
            Evidence::Handshake => "the TLS handshake completed",
            Evidence::Answered => "an MCP request got an HTTP answer and the era is known",
        }
    }
}

/// One entry of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct CheckSpec {
    pub stage: Stage,
    /// What passing looks like, for the report's `expected` field.
    pub expected: &'static str,
    /// The finding a failure maps to by default (`checks.md` 3).
    pub finding: FindingId,
    /// Other findings a failure maps to, and when (the merge's `finding_id` decides).
    pub also: &'static [(FindingId, &'static str)],
    /// The highest severity a failure or warning of it carries.
    pub max_severity: Severity,
    /// What a pass of it proves toward `checks.md` 4.1, if anything.
    pub evidence: Option<Evidence>,
    /// The source file (from the workspace root) whose code observes it.
    pub source: &'static str,
}

string_ids! {
    /// A stable check id, e.g. `headers.missing-method`. Declared in client order.
    CheckId, "check id" {
        DnsResolve = "dns.resolve",
        DnsARecord = "dns.a-record",
        DnsGlobalAddresses = "dns.global-addresses",
        NetConnect = "net.connect",
        NetIpv6 = "net.ipv6",
        TlsHandshake = "tls.handshake",
        TlsExpiry = "tls.expiry",
        TlsPlainHttp = "tls.plain-http",
        RedirectNone = "redirect.none",
        AuthChallenge = "auth.challenge",
        AuthPrm = "auth.prm",
        AuthAsMetadata = "auth.as-metadata",
        AuthGarbageToken = "auth.garbage-token",
        AuthWrongAudience = "auth.wrong-audience",
        AuthInsufficientScope = "auth.insufficient-scope",
        AuthMetadataRedirect = "auth.metadata-redirect",
        EraDetect = "era.detect",
        DiscoverShape = "discover.shape",
        TransportNotification = "transport.notification",
        TransportGet = "transport.get",
        TransportDelete = "transport.delete",
        HeadersMissingMethod = "headers.missing-method",
        HeadersMethodMismatch = "headers.method-mismatch",
        HeadersMethodCase = "headers.method-case",
        HeadersNameMismatch = "headers.name-mismatch",
        HeadersMissingVersion = "headers.missing-version",
        HeadersVersionMismatch = "headers.version-mismatch",
        VersionUnsupported = "version.unsupported",
        MetaMissing = "meta.missing",
        MethodUnknown = "method.unknown",
        SecurityOrigin = "security.origin",
        TransportSseBuffering = "transport.sse-buffering",
        CorsPreflight = "cors.preflight",
        JsonrpcErrorBody = "jsonrpc.error-body",
        CapsDiscoverMatchesHandlers = "caps.discover-matches-handlers",
        ToolsListShape = "tools.list-shape",
        ToolsNameFormat = "tools.name-format",
        ToolsDeterministicOrder = "tools.deterministic-order",
        ToolsNoPerConnectionVariance = "tools.no-per-connection-variance",
        PaginationCursor = "pagination.cursor",
        PaginationInvalidCursor = "pagination.invalid-cursor",
        CacheHints = "cache.hints",
        ToolsXMcpHeaderValid = "tools.x-mcp-header-valid",
        ToolsSchemaValid = "tools.schema-valid",
        ToolsInputConstrained = "tools.input-constrained",
        ToolsSurfaceSize = "tools.surface-size",
        ListenSse = "listen.sse",
        ListenAckFirst = "listen.ack-first",
    }
}

impl CheckId {
    /// The catalogue entry (an exhaustive match: a new check cannot lack one).
    pub fn spec(self) -> &'static CheckSpec {
        checks::entry(self)
    }

    pub fn stage(self) -> Stage {
        self.spec().stage
    }

    pub fn expected(self) -> &'static str {
        self.spec().expected
    }

    /// Every finding a failure of this check can map to: the default first.
    pub fn findings(self) -> impl Iterator<Item = FindingId> {
        let spec = self.spec();
        std::iter::once(spec.finding).chain(spec.also.iter().map(|(f, _)| *f))
    }
}

/// The checks of one stage, in client order.
pub fn in_stage(stage: Stage) -> impl Iterator<Item = CheckId> {
    CheckId::ALL
        .iter()
        .copied()
        .filter(move |c| c.stage() == stage)
}

/// The checks a failure of which can map to `finding`, with the condition (`None` for the
/// default mapping).
pub fn raising(finding: FindingId) -> Vec<(CheckId, Option<&'static str>)> {
    let mut out = Vec::new();
    for &c in CheckId::ALL {
        let spec = c.spec();
        if spec.finding == finding {
            out.push((c, None));
        }
        for (f, when) in spec.also {
            if *f == finding {
                out.push((c, Some(*when)));
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
