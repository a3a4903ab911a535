//! The `vantage.report/v1` report: types, and the JSON Schema derived from them so that the
//! schema cannot drift from what is emitted.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use vantage_agent::catalog::FindingId;
use vantage_agent::model::{Era, RegionResult, Severity};

/// The schema identifier every report carries.
pub const SCHEMA_ID: &str = "vantage.report/v1";

/// The one-word answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Pass,
    Review,
    Blocked,
    Unknown,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Review => "review",
            Decision::Blocked => "blocked",
            Decision::Unknown => "unknown",
        }
    }
}

/// Whether a finding holds everywhere or only in some regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Global,
    Regional,
}

/// A conclusion drawn from merging every region's checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Stable finding id, e.g. `dns.split-horizon`.
    #[schemars(with = "String")]
    pub id: FindingId,
    pub severity: Severity,
    pub scope: Scope,
    /// The regions it was seen in.
    pub regions: Vec<String>,
    pub title: String,
    pub evidence: Vec<String>,
    pub remediation: String,
    /// The rule behind it.
    pub spec: String,
    /// The stack the wire proved behind it, when the fix above is written for that stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<StackNote>,
    /// What a baseline (`--baseline FILE`) says of it: accepted, or accepted until a date
    /// that has passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<Acceptance>,
}

/// Which stack a finding's fix is written for, and the evidence that identified it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StackNote {
    pub stack: vantage_agent::stack::Stack,
    /// `region: check: fingerprint`, e.g. `eu: method.unknown: 404 page signed nginx`.
    pub evidence: String,
}

/// A baseline entry's verdict on a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AcceptanceStatus {
    /// Accepted: it stays in the report and does not fail the gate.
    Accepted,
    /// Its acceptance expired: it fails the gate until the entry is renewed or removed.
    Expired,
}

/// How a baseline accepted a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Acceptance {
    pub status: AcceptanceStatus,
    /// Why it was accepted (the entries' reasons).
    pub reason: String,
    /// The earliest expiry of the entries that accept it (YYYY-MM-DD).
    pub expires: String,
}

/// One baseline entry, as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineEntry {
    /// The entry's endpoint, when it is not the report's (an entry for an endpoint the run
    /// did not check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    pub finding: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub reason: String,
    pub expires: String,
    /// Why a stale entry is stale, when it is not simply that it matched no finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What the baseline did to this report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineStatus {
    /// The baseline file.
    pub file: String,
    /// Findings accepted (ids).
    pub accepted: Vec<String>,
    /// Entries that matched a finding after their expiry date: each fails the gate.
    pub expired: Vec<BaselineEntry>,
    /// Entries that accepted nothing, each with its `note` when it is not simply that it
    /// matched no finding (an entry for one region of a finding seen in more; in a run of
    /// one endpoint, entries for endpoints the run did not check): fix or remove them.
    pub stale: Vec<BaselineEntry>,
}

/// A merged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// Always `vantage.report/v1`.
    pub schema: String,
    /// A sortable unique id (ULID).
    pub id: String,
    pub target: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub duration_ms: u64,
    /// `running` while regions are outstanding; absent when the report is final.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    pub decision: Decision,
    /// Why: the findings (and regions) that drove the decision.
    pub reason: String,
    /// The era most regions observed.
    pub era: Era,
    pub regions: Vec<RegionResult>,
    pub findings: Vec<Finding>,
    /// What `--baseline` (or a scheduled check's baseline) accepted, found expired or stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineStatus>,
    /// What `vantage check`'s gate concluded (its flags, result and exit code); absent from
    /// the API's reports, which have no gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateOutcome>,
}

/// What the gate concluded about a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateResult {
    Passed,
    /// The decision or a finding's severity is at or above the gate: exit 2.
    Failed,
    /// Nothing could be decided (`unknown`): exit 3 or 4.
    Unknown,
}

/// The gate's conclusion on one report, as `vantage check` exits with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GateOutcome {
    pub result: GateResult,
    /// The process's exit code for this report (`checks.md` section 6).
    pub exit_code: u8,
    /// The gate's flags, defaults included (`--fail-on blocked`).
    pub flags: String,
    /// The gate line of the text report (`gate: passed`, `gate: failed (--fail-on review)`).
    pub line: String,
}

impl Finding {
    /// Accepted by a baseline (and not expired).
    pub fn is_accepted(&self) -> bool {
        self.accepted
            .as_ref()
            .is_some_and(|a| a.status == AcceptanceStatus::Accepted)
    }

    /// Accepted by a baseline entry whose date has passed.
    pub fn is_expired(&self) -> bool {
        self.accepted
            .as_ref()
            .is_some_and(|a| a.status == AcceptanceStatus::Expired)
    }

    /// `global`, or `regional: a, b`.
    pub fn scope_label(&self) -> String {
        match self.scope {
            Scope::Global => "global".to_string(),
            Scope::Regional => format!("regional: {}", self.regions.join(", ")),
        }
    }
}

impl Report {
    pub fn finding(&self, id: FindingId) -> Option<&Finding> {
        self.findings.iter().find(|f| f.id == id)
    }
}

/// The JSON Schema of the report, as shipped in `coordinator/schema/report.v1.json`.
pub fn json_schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Report)).unwrap_or_default();
    if let Some(obj) = schema.as_object_mut() {
        obj.insert(
            "$id".into(),
            serde_json::json!("https://vantage.invalid/schema/report.v1.json"),
        );
        obj.insert("title".into(), serde_json::json!(SCHEMA_ID));
    }
    schema
}
