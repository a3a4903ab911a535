//! How list requests are sent in each era. Modern (2026-07-28): stateless requests, each
//! with `Mcp-Method`, `MCP-Protocol-Version` and `_meta`. Legacy (2025-11-25): an
//! `initialize`, `notifications/initialized`, then requests in the session
//! (`Mcp-Session-Id`, the negotiated `MCP-Protocol-Version`), and a `DELETE` of the
//! session at the end (a 405 there is allowed). Every request goes through the engine's
//! client and `send`.

use http::Method;
use serde_json::{json, Map, Value};

use super::Listing;
use crate::model::Cause;
use crate::probe::http::{ProbeRequest, Rpc, SseRead, LEGACY_VERSION};

/// How the requests of one listing pass are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Session {
    /// Stateless 2026-07-28 requests. `close` asks for the connection to be closed after
    /// each answer, so that a later pass cannot reuse this pass's connections.
    Modern { close: bool },
    /// A 2025-11-25 session.
    Legacy { id: Option<String>, version: String },
}

/// A legacy session that could not be opened: why, and the cause.
#[derive(Debug, Clone)]
pub(crate) struct OpenError {
    pub(crate) cause: Cause,
    pub(crate) message: String,
}

impl Session {
    /// A list request (or any other) in this session.
    pub(crate) fn request(
        &self,
        method: &str,
        id: i64,
        params: Map<String, Value>,
    ) -> ProbeRequest {
        match self {
            Session::Modern { close } => {
                let req = ProbeRequest::modern(method, id, params);
                if *close {
                    req.with_header("Connection", "close")
                } else {
                    req
                }
            }
            Session::Legacy {
                id: session,
                version,
            } => {
                let mut headers = vec![
                    ("Content-Type".to_string(), "application/json".to_string()),
                    (
                        "Accept".to_string(),
                        "application/json, text/event-stream".to_string(),
                    ),
                    ("MCP-Protocol-Version".to_string(), version.clone()),
                ];
                if let Some(s) = session {
                    headers.push(("Mcp-Session-Id".to_string(), s.clone()));
                }
                let mut body = json!({"jsonrpc": "2.0", "method": method});
                if id >= 0 {
                    body["id"] = json!(id);
                }
                if !params.is_empty() {
                    body["params"] = Value::Object(params);
                }
                ProbeRequest {
                    method: Method::POST,
                    headers,
                    body: Some(body),
                    bearer: None,
                }
            }
        }
    }

    pub(crate) fn is_modern(&self) -> bool {
        matches!(self, Session::Modern { .. })
    }
}

/// Open a 2025-11-25 session: `initialize`, then `notifications/initialized`. Returns the
/// session and the capabilities the server declared.
pub(crate) async fn open_legacy(
    l: &Listing<'_>,
    rpc_id: i64,
) -> Result<(Session, Value), OpenError> {
    let init = ProbeRequest::legacy_initialize(rpc_id).with_bearer(l.token);
    let ex = l
        .send(&init, SseRead::UntilResponse)
        .await
        .map_err(|e| OpenError {
            cause: e.cause,
            message: format!("initialize: {}", e.message),
        })?;
    if let Some(got) = ex.result_id_mismatch(&json!(rpc_id)) {
        // Not an answer to this initialize: no session can be built on it.
        return Err(OpenError {
            cause: Cause::Malformed,
            message: format!(
                "initialize was answered with id {got}, not the request's id {rpc_id}: not an answer to the request (a JSON-RPC response MUST echo its request's id)"
            ),
        });
    }
    let Some(Rpc::Result { result, .. }) = ex.rpc().filter(|_| (200..300).contains(&ex.status))
    else {
        // Era detection saw initialize work: refused now, it was answered for another reason.
        return Err(OpenError {
            cause: Cause::OtherReason,
            message: format!("initialize: {}", ex.summary()),
        });
    };
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or(LEGACY_VERSION)
        .to_string();
    let caps = result.get("capabilities").cloned().unwrap_or(json!({}));
    let session = Session::Legacy {
        id: ex.header("mcp-session-id").map(str::to_string),
        version,
    };
    // The client's half of the handshake; its answer (202, or a refusal) changes nothing
    // for the lists, so it is not judged here.
    let note = session
        .request("notifications/initialized", -1, Map::new())
        .with_bearer(l.token);
    let _ = l.send(&note, SseRead::HeadersOnly).await;
    Ok((session, caps))
}

/// End a 2025-11-25 session with `DELETE` (a server may answer 405: it does not let
/// clients end sessions). Nothing is judged.
pub(crate) async fn close_legacy(l: &Listing<'_>, session: &Session) {
    if let Session::Legacy {
        id: Some(id),
        version,
    } = session
    {
        let req = ProbeRequest::bare(
            Method::DELETE,
            &[
                ("Mcp-Session-Id", id.as_str()),
                ("MCP-Protocol-Version", version.as_str()),
            ],
        )
        .with_bearer(l.token);
        let _ = l.send(&req, SseRead::HeadersOnly).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_requests_carry_the_session_and_no_meta() {
        let s = Session::Legacy {
            id: Some("abc".into()),
            version: "2025-06-18".into(),
        };
        let req = s.request(
            "tools/list",
            5,
            Map::from_iter([("cursor".to_string(), json!("c1"))]),
        );
        let header = |n: &str| {
            req.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("mcp-session-id"), Some("abc"));
        assert_eq!(header("mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(header("mcp-method"), None);
        let body = req.body.unwrap();
        assert_eq!(body["params"], json!({"cursor": "c1"}));
        assert_eq!(body["id"], json!(5));
        // A notification has no id.
        let n = s.request("notifications/initialized", -1, Map::new());
        assert!(n.body.unwrap().get("id").is_none());
    }

    #[test]
    fn modern_requests_are_valid_and_may_close_the_connection() {
        let req = Session::Modern { close: true }.request("prompts/list", 3, Map::new());
        let names: Vec<&str> = req.headers.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            names.contains(&"Mcp-Method") && names.contains(&"Connection"),
            "{names:?}"
        );
        assert!(req.body.unwrap()["params"]["_meta"].is_object());
        let keep = Session::Modern { close: false }.request("prompts/list", 3, Map::new());
        assert!(!keep.headers.iter().any(|(k, _)| k == "Connection"));
    }
}
