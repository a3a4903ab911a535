//! The bodies of the HTTP API (`checks.md` section 7), shared by the server (`api`) and its
//! client (`vantage check --coordinator`): what one writes is what the other reads. A report
//! is `report::Report`.

use serde::{Deserialize, Serialize};

use crate::fleet::AgentInfo;

/// `POST /v1/checks`: one check of one target. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCheck {
    /// The endpoint's URL.
    pub target: String,
    /// The regions to check from; every configured region when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<Vec<String>>,
    /// The name of a `[[credentials]]` entry of the coordinator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// The endpoint must require authorization.
    #[serde(default)]
    pub expect_auth: bool,
    /// The check's deadline, e.g. "30s"; `fleet.default_deadline` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
}

/// The query of `POST /v1/checks`: `?wait=30s` answers with the report when it is done by then.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
}

/// `202 Accepted` to `POST /v1/checks`: the id to follow at `GET /v1/checks/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accepted {
    pub id: String,
}

/// Every refusal: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// A refusal's stable code (e.g. `unknown_region`) and its message, which names the fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
}

impl ErrorBody {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        ErrorBody {
            error: ErrorDetail {
                code: code.to_string(),
                message: message.into(),
            },
        }
    }
}

/// `GET /v1/agents`: the connected agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agents {
    pub agents: Vec<AgentInfo>,
}

/// `/healthz` and `/readyz`: `ok`, `ready`, or `draining` while the coordinator shuts down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
}

impl Health {
    pub fn new(status: &str) -> Self {
        Health {
            status: status.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's body is the server's: what `vantage check --coordinator` writes parses
    /// back to the same request, and a field the server does not know is refused by name.
    #[test]
    fn a_new_check_round_trips_and_unknown_fields_are_refused() {
        let full = NewCheck {
            target: "https://a.example/mcp".into(),
            regions: Some(vec!["eu".into(), "us".into()]),
            credential: Some("prod".into()),
            expect_auth: true,
            deadline: Some("30s".into()),
        };
        let text = serde_json::to_string(&full).unwrap();
        assert_eq!(serde_json::from_str::<NewCheck>(&text).unwrap(), full);
        // Absent options are not written (the server's defaults apply).
        let minimal = NewCheck {
            target: "https://a.example/mcp".into(),
            ..NewCheck::default()
        };
        assert_eq!(
            serde_json::to_value(&minimal).unwrap(),
            serde_json::json!({"target": "https://a.example/mcp", "expect_auth": false})
        );
        let e = serde_json::from_str::<NewCheck>(r#"{"target": "x", "region": ["eu"]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `region`"), "{e}");
    }

    #[test]
    fn the_error_body_is_the_documented_shape() {
        assert_eq!(
            serde_json::to_value(ErrorBody::new("unknown_region", "unknown region `x`")).unwrap(),
            serde_json::json!({"error": {"code": "unknown_region", "message": "unknown region `x`"}})
        );
    }
}
