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
}

impl Finding {
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
