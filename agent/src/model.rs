//! The plain domain types one vantage produces: check results and the region section of a
//! `vantage.report/v1` report. Field names are stable interfaces (see `checks.md`).

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::{CheckId, Evidence};

/// The outcome of one check in one region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The target did what the rule asks.
    Pass,
    /// The target broke the rule.
    Fail,
    /// The target did something questionable (a SHOULD, or an observation worth a look).
    Warn,
    /// The check did not run; `observed` says why.
    Skip,
    /// The probe itself could not run (a local fault of the vantage, never the target's).
    Error,
    /// The check ran, or was due to run, but produced no evidence either way: the deadline ran
    /// out, the egress policy refused the connection, or the probe was answered for another
    /// reason than the one it tests. `observed` says why. Never a pass (`checks.md` 4.1).
    Unknown,
}

impl Outcome {
    /// Whether this outcome is a complaint about the target.
    pub fn is_problem(self) -> bool {
        matches!(self, Outcome::Fail | Outcome::Warn)
    }
}

/// How bad a failed check or a finding is. Ordered: `Info < Low < … < Critical`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// A machine-readable cause attached to a failed check, for the merge and for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// No answer before the deadline (a silent drop looks like this).
    Timeout,
    /// The connection was actively refused (RST or ICMP port unreachable).
    Refused,
    /// No route to the address.
    Unreachable,
    /// The peer reset the connection mid-exchange.
    Reset,
    /// TLS failed (untrusted chain, name mismatch, protocol error).
    Tls,
    /// A redirect to another host.
    CrossHost,
    /// A redirect to the same host.
    SameHost,
    /// The name does not exist (NXDOMAIN).
    Nxdomain,
    /// The resolver failed (SERVFAIL, REFUSED).
    ResolverFailure,
    /// The name exists but has no address records.
    NoAnswer,
    /// An address outside the globally routable space.
    NonGlobal,
    /// A credential that must be refused was accepted.
    TokenAccepted,
    /// A read cap (body, header, SSE line or event) was hit.
    SizeCap,
    /// The overall deadline ran out before the check could finish.
    Deadline,
    /// The response could not be parsed as what the rule asks for.
    Malformed,
    /// The vantage's egress policy refused to connect to the address (non-global and not
    /// allowed): a decision of the vantage, not an observation of the target.
    PolicyRefused,
    /// The vantage's own resolver failed (timeout, SERVFAIL from it, a local error): a fault
    /// of the vantage, never of the target.
    ResolverError,
    /// A credential was given and the endpoint refused it (401 or 403), so the checks that
    /// need it could not run.
    CredentialRefused,
    /// The probe was answered for another reason than the one it tests (e.g. the request
    /// without the probe's change is refused the same way): nothing was learnt about the
    /// rule.
    OtherReason,
    /// This vantage has no route (or no source address) to the address: connect() failed
    /// on this host (ENETUNREACH, EADDRNOTAVAIL) and nothing was sent, so nothing about the
    /// target was observed.
    NoRoute,
    /// This vantage could not build the request (its own credential, or a header it would
    /// send, cannot go in an HTTP header): nothing was sent, so nothing about the target
    /// was observed.
    Unsendable,
    /// Set by the merge, never by a vantage: this vantage judged the certificate other regions
    /// accepted (the same chain) with a clock far from theirs.
    ClockSkew,
    /// Set by the merge, never by a vantage: this vantage does not trust the issuer of the
    /// chain other regions verified (the same chain).
    TrustStore,
}

impl Cause {
    /// Whether this cause is a fault or a decision of the vantage itself (its resolver, its
    /// egress policy, its own deadline), never an observation of the target (`checks.md`
    /// 4.1).
    pub fn is_vantage_side(self) -> bool {
        matches!(
            self,
            Cause::PolicyRefused
                | Cause::ResolverError
                | Cause::Deadline
                | Cause::NoRoute
                | Cause::Unsendable
                | Cause::ClockSkew
                | Cause::TrustStore
        )
    }
}

/// One observation made by one vantage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    /// The stable check id, e.g. `headers.missing-method`.
    #[schemars(with = "String")]
    pub id: CheckId,
    pub outcome: Outcome,
    /// What the vantage saw (or why the check was skipped).
    pub observed: String,
    /// What the rule asks for.
    pub expected: String,
    pub duration_ms: u64,
    /// How bad the problem is when the outcome is `fail` or `warn`, from the spec level of
    /// the rule that was broken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// A machine-readable cause, when one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

/// The era a server speaks, as classified by `era.detect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Era {
    /// 2026-07-28 only: `server/discover` works, `initialize` is refused.
    Modern,
    /// Both: `server/discover` and `initialize` work.
    Dual,
    /// 2025-11-25 or older Streamable HTTP only.
    Legacy,
    /// The deprecated 2024-11-05 HTTP+SSE transport.
    HttpSse,
    /// Nothing MCP-shaped answered.
    NotMcp,
    /// Detection did not run (an earlier stage failed).
    Unknown,
}

impl Era {
    pub fn speaks_2026(self) -> bool {
        matches!(self, Era::Modern | Era::Dual)
    }
}

/// How far a region got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RegionStatus {
    Complete,
    Partial,
    NoAgent,
    Timeout,
    Error,
}

/// What one region's resolver answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DnsObservation {
    /// `NOERROR`, `NXDOMAIN`, `SERVFAIL`, `REFUSED`, `TIMEOUT`, or `LOCAL` for a local target.
    /// When one of the two queries failed, its rcode: a half-answered name never reads as
    /// a clean `NOERROR` (`a_rcode` and `aaaa_rcode` say which).
    pub rcode: String,
    /// The A query's own rcode (`MISMATCH` for an answer whose records belong to another
    /// owner); absent from agents older than this field.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub a_rcode: String,
    /// The AAAA query's own rcode, like `a_rcode`. Only a family whose query was answered
    /// (`NOERROR`, `NXDOMAIN`) says what the zone holds for it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub aaaa_rcode: String,
    pub a: Vec<String>,
    pub aaaa: Vec<String>,
    pub cname: Vec<String>,
    pub has_a: bool,
    pub all_global: bool,
    /// The smallest TTL seen in the answers, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ttl_s: Option<u32>,
}

impl DnsObservation {
    /// Every address, IPv4 first.
    pub fn addresses(&self) -> impl Iterator<Item = &String> {
        self.a.iter().chain(self.aaaa.iter())
    }

    /// Whether the A query was answered (an agent older than `a_rcode` said nothing else).
    pub fn a_answered(&self) -> bool {
        answered(&self.a_rcode)
    }

    /// Whether the AAAA query was answered, like [`DnsObservation::a_answered`].
    pub fn aaaa_answered(&self) -> bool {
        answered(&self.aaaa_rcode)
    }
}

fn answered(rcode: &str) -> bool {
    matches!(rcode, "" | "NOERROR" | "NXDOMAIN")
}

#[path = "model_tls.rs"]
mod tls;
pub use tls::{TlsObservation, TlsVerdict};

/// The region section of a report: everything one vantage observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegionResult {
    pub region: String,
    pub status: RegionStatus,
    /// The agent that ran this region's job: its id as `GET /v1/agents` lists it (the
    /// agent's --id), set by the coordinator from the agent's session, never from the
    /// result. Absent for the coordinator's in-process vantage, `vantage check` and a
    /// region with no result (but for the agent that refused the job, when every agent of
    /// the region refused it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub duration_ms: u64,
    /// The era this vantage classified the server as.
    pub era: Era,
    /// Whether an unauthenticated request was answered 401 (the endpoint is protected).
    #[serde(default)]
    pub protected: bool,
    /// Whether the checks ran with a credential.
    #[serde(default)]
    pub authenticated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<DnsObservation>,
    /// The certificate the TLS handshake was presented, when it got that far (https).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsObservation>,
    /// Time spent per phase, in milliseconds (`dns`, `connect`, `tls`, `first_byte`, `total`).
    #[serde(default)]
    pub phases_ms: std::collections::BTreeMap<String, u64>,
    pub checks: Vec<CheckResult>,
    /// The capability lists this region read (tools, resources, templates, prompts), when
    /// the listing ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<crate::surface::Surface>,
    /// Stacks the wire proved behind checks that failed or warned (an SDK's error string, a
    /// gateway's page or header, a CDN's headers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<crate::stack::StackSighting>,
}

impl RegionResult {
    /// A region that produced no result (no agent, or no answer by the deadline).
    pub fn absent(region: &str, status: RegionStatus) -> Self {
        RegionResult {
            region: region.to_string(),
            status,
            agent: None,
            duration_ms: 0,
            era: Era::Unknown,
            protected: false,
            authenticated: false,
            dns: None,
            tls: None,
            phases_ms: Default::default(),
            checks: Vec::new(),
            surface: None,
            stacks: Vec::new(),
        }
    }

    pub fn check(&self, id: CheckId) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// The conditions of `checks.md` 4.1 this region's results prove, from the catalogue's
    /// evidence roles: a check's pass proves its role; `era.detect` also proves an answer
    /// when it failed on a server whose era it classified (legacy, HTTP+SSE, not MCP).
    pub fn proven(&self) -> BTreeSet<Evidence> {
        self.checks
            .iter()
            .filter_map(|c| {
                let role = c.id.spec().evidence?;
                // A failed era.detect still proves an MCP answer when the era it found is an
                // MCP one (legacy, HTTP+SSE). `not-mcp` is no MCP answer at all (a JSON
                // error page, a 404, junk): nothing MCP was observed (checks.md 4.1 (c)).
                let era_known = c.id == CheckId::EraDetect
                    && c.outcome.is_problem()
                    && !matches!(self.era, Era::Unknown | Era::NotMcp);
                (c.outcome == Outcome::Pass || era_known).then_some(role)
            })
            .collect()
    }

    /// Whether this region produced results the merge can use.
    pub fn reported(&self) -> bool {
        matches!(self.status, RegionStatus::Complete | RegionStatus::Partial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: CheckId, outcome: Outcome) -> CheckResult {
        CheckResult {
            id,
            outcome,
            observed: String::new(),
            expected: id.expected().into(),
            duration_ms: 0,
            severity: None,
            cause: None,
        }
    }

    #[test]
    fn proven_reads_the_catalogue_roles_and_the_known_era() {
        let mut r = RegionResult::absent("eu", RegionStatus::Complete);
        r.checks = vec![
            result(CheckId::DnsResolve, Outcome::Pass),
            result(CheckId::NetConnect, Outcome::Pass),
            result(CheckId::TlsHandshake, Outcome::Skip),
            result(CheckId::TransportGet, Outcome::Pass),
            result(CheckId::EraDetect, Outcome::Fail),
        ];
        // era.detect failed with no answer: the era is unknown, nothing was answered.
        assert_eq!(
            r.proven().into_iter().collect::<Vec<_>>(),
            vec![Evidence::Resolved, Evidence::Connected]
        );
        // A legacy server fails era.detect, yet it answered and its era is known.
        r.era = Era::Legacy;
        assert!(r.proven().contains(&Evidence::Answered));
        assert!(
            !r.proven().contains(&Evidence::Handshake),
            "a skip is never evidence"
        );
        // An endpoint that is not MCP answered HTTP, but no MCP request got an MCP answer.
        r.era = Era::NotMcp;
        assert!(
            !r.proven().contains(&Evidence::Answered),
            "not-mcp is no MCP answer"
        );
        r.era = Era::HttpSse;
        assert!(r.proven().contains(&Evidence::Answered));
        r.checks[4].outcome = Outcome::Skip;
        assert!(
            !r.proven().contains(&Evidence::Answered),
            "a skip is never evidence"
        );
    }
}
