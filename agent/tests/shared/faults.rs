//! Each fixture fault switched on alone, and what each level makes of it: the engine's
//! checks (`agent/tests/engine/faults.rs` asserts outcome, severity and cause per check) and
//! the merged report (`coordinator/tests/e2e/fixture_faults.rs` asserts the findings above
//! info and the decision). One table, so a fault added or changed is changed for both.
//! Included by path, like `probe.rs`, for the same reason.

#![allow(dead_code)]

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Era, Outcome, Severity};
use vantage_fixture::Fault;

use Cause::{CrossHost, SameHost};
use Outcome::{Fail, Warn};
use Severity::{High, Low, Medium};

/// One failed or warned check: its id, outcome, severity and cause.
pub type Problem = (CheckId, Outcome, Option<Severity>, Option<Cause>);

/// One fault and what it yields at each level.
pub struct FaultRow {
    pub fault: Fault,
    /// The engine: every check failed or warned above info, in the catalogue's order.
    pub problems: &'static [Problem],
    /// The report: every finding above info, with its severity.
    pub findings: &'static [(&'static str, Severity)],
    /// The report's decision (`Decision::as_str`).
    pub decision: &'static str,
}

impl FaultRow {
    /// A fault that yields nothing above info: no problem, no finding, a pass.
    const fn clean(fault: Fault) -> Self {
        FaultRow {
            fault,
            problems: &[],
            findings: &[],
            decision: "pass",
        }
    }
}

/// The eras the fixture speaks, by the faults that make it speak each.
pub const ERAS: &[(&[Fault], Era)] = &[
    (&[], Era::Dual),
    (&[Fault::ModernOnly], Era::Modern),
    (&[Fault::LegacyOnly], Era::Legacy),
    (&[Fault::HttpSseOnly], Era::HttpSse),
];

/// Every fault, alone.
pub const FAULTS: &[FaultRow] = &[
    FaultRow {
        fault: Fault::GetHtml,
        problems: &[(CheckId::TransportGet, Fail, Some(Medium), None)],
        findings: &[("transport.get", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::Delete200,
        problems: &[(CheckId::TransportDelete, Fail, Some(Medium), None)],
        findings: &[("transport.delete", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::UnknownMethodHtml404,
        problems: &[(CheckId::MethodUnknown, Fail, Some(High), None)],
        findings: &[("method.unknown", High)],
        decision: "blocked",
    },
    FaultRow {
        fault: Fault::NoMethodValidation,
        problems: &[
            (CheckId::HeadersMissingMethod, Fail, Some(Medium), None),
            (CheckId::HeadersMethodMismatch, Fail, Some(Medium), None),
            (CheckId::HeadersMethodCase, Fail, Some(Medium), None),
        ],
        findings: &[
            ("headers.method-case", Medium),
            ("headers.method-mismatch", Medium),
            ("headers.missing-method", Medium),
        ],
        decision: "review",
    },
    FaultRow {
        fault: Fault::NoNameValidation,
        problems: &[(CheckId::HeadersNameMismatch, Fail, Some(Medium), None)],
        findings: &[("headers.name-mismatch", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::MethodCaseInsensitive,
        problems: &[(CheckId::HeadersMethodCase, Fail, Some(Medium), None)],
        findings: &[("headers.method-case", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::NoVersionMatch,
        problems: &[(CheckId::HeadersVersionMismatch, Fail, Some(Medium), None)],
        findings: &[("headers.version-mismatch", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::AcceptAnyVersion,
        problems: &[(CheckId::VersionUnsupported, Fail, Some(High), None)],
        findings: &[("version.unsupported", High)],
        decision: "blocked",
    },
    FaultRow {
        fault: Fault::OriginAccepted,
        problems: &[(CheckId::SecurityOrigin, Fail, Some(Medium), None)],
        findings: &[("security.origin-not-validated", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::Notification200Body,
        problems: &[(CheckId::TransportNotification, Fail, Some(Medium), None)],
        findings: &[("transport.notification", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::RedirectCrossHost,
        problems: &[(CheckId::RedirectNone, Fail, Some(High), Some(CrossHost))],
        findings: &[("redirect.cross-host", High)],
        decision: "blocked",
    },
    FaultRow {
        fault: Fault::RedirectSameHost,
        problems: &[(CheckId::RedirectNone, Fail, Some(Medium), Some(SameHost))],
        findings: &[("probe.incomplete", Medium), ("redirect.none", Medium)],
        // Redirects are never followed: no MCP answer, so the region did not observe
        // the target, and nothing passes or merely needs review (checks.md 4.1); a
        // finding says so (probe.incomplete, with redirect.none as what it saw).
        decision: "unknown",
    },
    // A bare 400 (an intermediary's, as the spec allows, or the server's) leaves the
    // JSON-RPC code the header checks ask for unobserved: those checks are `unknown` (cause
    // `malformed`, [`UNOBSERVED`]), so the decision is too, never a pass (red team round 18,
    // D4); jsonrpc.error-body names the bare 400s.
    FaultRow {
        fault: Fault::Bare400,
        problems: &[(CheckId::JsonrpcErrorBody, Warn, Some(Low), None)],
        findings: &[("jsonrpc.error-body", Low), ("probe.incomplete", Medium)],
        decision: "unknown",
    },
    FaultRow {
        fault: Fault::LegacyOnly,
        problems: &[(CheckId::EraDetect, Fail, Some(Medium), None)],
        findings: &[("era.legacy-only", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::HttpSseOnly,
        problems: &[(CheckId::EraDetect, Fail, Some(Medium), None)],
        findings: &[("era.legacy-only", Medium)],
        decision: "review",
    },
    // The listing faults (spec sections 3.3 to 3.5) and the tool-surface lint.
    FaultRow {
        fault: Fault::BrokenCursor,
        problems: &[(CheckId::PaginationCursor, Fail, Some(Medium), None)],
        findings: &[("pagination.cursor", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::SchemaInvalid,
        problems: &[(CheckId::ToolsSchemaValid, Fail, Some(Medium), None)],
        findings: &[("tools.schema-valid", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::UnstableOrder,
        problems: &[(CheckId::ToolsDeterministicOrder, Warn, Some(Low), None)],
        findings: &[("tools.deterministic-order", Low)],
        decision: "pass",
    },
    FaultRow {
        fault: Fault::PerConnectionVariance,
        problems: &[(
            CheckId::ToolsNoPerConnectionVariance,
            Fail,
            Some(Medium),
            None,
        )],
        findings: &[("tools.no-per-connection-variance", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::InvalidXMcpHeader,
        problems: &[(CheckId::ToolsXMcpHeaderValid, Fail, Some(Medium), None)],
        findings: &[("tools.x-mcp-header-valid", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::PromptsAdvertised404,
        problems: &[(CheckId::CapsDiscoverMatchesHandlers, Fail, Some(High), None)],
        findings: &[("caps.discover-matches-handlers", High)],
        decision: "blocked",
    },
    FaultRow {
        fault: Fault::ToolWithoutSchema,
        problems: &[(CheckId::ToolsListShape, Fail, Some(High), None)],
        findings: &[("tools.list-shape", High)],
        decision: "blocked",
    },
    FaultRow {
        fault: Fault::BadToolName,
        problems: &[(CheckId::ToolsNameFormat, Warn, Some(Low), None)],
        findings: &[("tools.name-format", Low)],
        decision: "pass",
    },
    FaultRow {
        fault: Fault::InvalidCursorServed,
        problems: &[(CheckId::PaginationInvalidCursor, Warn, Some(Low), None)],
        findings: &[("pagination.invalid-cursor", Low)],
        decision: "pass",
    },
    FaultRow {
        fault: Fault::NoCacheHints,
        problems: &[(CheckId::CacheHints, Fail, Some(Medium), None)],
        findings: &[("cache.hints", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::ListenJson,
        problems: &[(CheckId::ListenSse, Fail, Some(Medium), None)],
        findings: &[("listen.sse", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::ListenNoAck,
        problems: &[(CheckId::ListenAckFirst, Fail, Some(Medium), None)],
        findings: &[("listen.ack-first", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::UnconstrainedInput,
        problems: &[(CheckId::ToolsInputConstrained, Warn, Some(Low), None)],
        findings: &[("tools.input-constrained", Low)],
        decision: "pass",
    },
    FaultRow {
        fault: Fault::HugeDescription,
        problems: &[(CheckId::ToolsSurfaceSize, Warn, Some(Low), None)],
        findings: &[("tools.surface-size", Low)],
        decision: "pass",
    },
    // Red team round 15, defects 7, 6, 12, 4: a guard on the discover route only, a
    // version check that refuses only older versions, a result type other than complete.
    FaultRow {
        fault: Fault::MethodValidatedOnDiscoverOnly,
        problems: &[
            (CheckId::HeadersMissingMethod, Fail, Some(Medium), None),
            (CheckId::HeadersMethodMismatch, Fail, Some(Medium), None),
            (CheckId::HeadersMethodCase, Fail, Some(Medium), None),
        ],
        findings: &[
            ("headers.method-case", Medium),
            ("headers.method-mismatch", Medium),
            ("headers.missing-method", Medium),
        ],
        decision: "review",
    },
    FaultRow {
        fault: Fault::OriginGuardOnDiscoverOnly,
        problems: &[(CheckId::SecurityOrigin, Fail, Some(Medium), None)],
        findings: &[("security.origin-not-validated", Medium)],
        decision: "review",
    },
    // Fresh eyes round 17, D1 and D2: the same guards covering tools/list too, not tools/call.
    FaultRow {
        fault: Fault::MethodValidatedOnDiscoverAndList,
        problems: &[
            (CheckId::HeadersMissingMethod, Fail, Some(Medium), None),
            (CheckId::HeadersMethodMismatch, Fail, Some(Medium), None),
            (CheckId::HeadersMethodCase, Fail, Some(Medium), None),
        ],
        findings: &[
            ("headers.method-case", Medium),
            ("headers.method-mismatch", Medium),
            ("headers.missing-method", Medium),
        ],
        decision: "review",
    },
    FaultRow {
        fault: Fault::OriginGuardOnDiscoverAndList,
        problems: &[(CheckId::SecurityOrigin, Fail, Some(Medium), None)],
        findings: &[("security.origin-not-validated", Medium)],
        decision: "review",
    },
    FaultRow {
        fault: Fault::AcceptLaterVersions,
        problems: &[(CheckId::VersionUnsupported, Fail, Some(High), None)],
        findings: &[("version.unsupported", High)],
        decision: "blocked",
    },
    FaultRow {
        fault: Fault::DiscoverInputRequired,
        problems: &[(CheckId::DiscoverShape, Fail, Some(High), None)],
        findings: &[("discover.shape", High)],
        decision: "blocked",
    },
    FaultRow {
        fault: Fault::ListResultTypeUnknown,
        problems: &[
            (CheckId::ToolsListShape, Fail, Some(Medium), None),
            (CheckId::CacheHints, Fail, Some(Medium), None),
        ],
        findings: &[("cache.hints", Medium), ("tools.list-shape", Medium)],
        decision: "review",
    },
    // Nothing above info: SSE without X-Accel-Buffering is an info observation, and a
    // server that speaks 2026-07-28 only is clean.
    FaultRow::clean(Fault::SseNoAccelBuffering),
    FaultRow::clean(Fault::ModernOnly),
];

/// A check left without evidence, and its cause.
pub type Unobserved = (CheckId, Option<Cause>);

/// The faults of [`FAULTS`] that leave checks without evidence on purpose, and those checks
/// with their cause (every other fault leaves none).
pub const UNOBSERVED: &[(Fault, &[Unobserved])] = &[(
    Fault::Bare400,
    &[
        (CheckId::HeadersMissingMethod, Some(Cause::Malformed)),
        (CheckId::HeadersMethodMismatch, Some(Cause::Malformed)),
        (CheckId::HeadersNameMismatch, Some(Cause::Malformed)),
        (CheckId::HeadersVersionMismatch, Some(Cause::Malformed)),
    ],
)];
