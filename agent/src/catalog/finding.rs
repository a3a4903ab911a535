//! Every finding id the coordinator can emit (`checks.md` sections 3 and 4). A check's
//! failure maps to one of them (its catalogue entry says which): most carry the id of the
//! check of the same name (declared once, by the check); the rest are named for what the
//! merge concludes. Titles, fixes and rules live in the coordinator's finding table, which
//! matches on this enum exhaustively.

use super::ids::string_ids;

string_ids! {
    /// A stable finding id, e.g. `egress.blocked`.
    FindingId, "finding id" {
        checks [
            DnsResolve, NetConnect, NetIpv6, TlsHandshake, TlsExpiry, TlsPlainHttp,
            RedirectNone, AuthChallenge, AuthPrm, AuthAsMetadata, AuthGarbageToken,
            AuthWrongAudience, AuthInsufficientScope, AuthMetadataRedirect, EraDetect,
            DiscoverShape, TransportNotification, TransportGet, TransportDelete,
            HeadersMissingMethod, HeadersMethodMismatch, HeadersMethodCase, HeadersNameMismatch,
            HeadersMissingVersion, HeadersVersionMismatch, VersionUnsupported, MetaMissing, MethodUnknown,
            SecurityOrigin, TransportSseBuffering, CorsPreflight, JsonrpcErrorBody,
            CapsDiscoverMatchesHandlers, ToolsListShape, ToolsNameFormat,
            ToolsDeterministicOrder, ToolsNoPerConnectionVariance, PaginationCursor,
            PaginationInvalidCursor, CacheHints, ToolsXMcpHeaderValid, ToolsSchemaValid,
            ToolsInputConstrained, ToolsSurfaceSize, ListenSse, ListenAckFirst,
        ],
        AuthCredentialRequired = "auth.credential-required",
        AuthCredentialRefused = "auth.credential-refused",
        AuthInvalidTokenAccepted = "auth.invalid-token-accepted",
        DnsAnswersDiffer = "dns.answers-differ",
        DnsNoARecord = "dns.no-a-record",
        DnsNonGlobalAddress = "dns.non-global-address",
        DnsSplitHorizon = "dns.split-horizon",
        EdgeDivergent = "edge.divergent",
        EgressBlocked = "egress.blocked",
        EraLegacyOnly = "era.legacy-only",
        FleetRegionMissing = "fleet.region-missing",
        FleetVantageDegraded = "fleet.vantage-degraded",
        ProbePolicyRefused = "probe.policy-refused",
        ProbeIncomplete = "probe.incomplete",
        ProbeResolverFailed = "probe.resolver-failed",
        ProbeClockSkew = "probe.clock-skew",
        ProbeTrustStore = "probe.trust-store",
        RedirectCrossHost = "redirect.cross-host",
        SecurityOriginNotValidated = "security.origin-not-validated",
        SurfaceOrderDiffers = "surface.order-differs",
    }
}
