//! The requests a prober sends: a valid 2026-07-28 request (headers and `_meta`), a legacy
//! `initialize`, or a bodiless one, then changed in exactly one way by the probe.

use http::Method;
use serde_json::{json, Map, Value};

/// The protocol revision this prober speaks.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The legacy revision used for era detection.
pub const LEGACY_VERSION: &str = "2025-11-25";
/// A name that no real tool, prompt or resource has.
pub const ABSENT_NAME: &str = "__vantage_probe_absent__";

/// A request to send. Built valid, then changed in one way by the probe.
#[derive(Debug, Clone)]
pub struct ProbeRequest {
    pub method: Method,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    /// A bearer token, kept apart from the headers so that it never prints.
    pub bearer: Option<secrecy::SecretString>,
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "vantage", "version": env!("CARGO_PKG_VERSION")},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

impl ProbeRequest {
    /// A valid 2026-07-28 request: headers, `_meta`, and `extra` params.
    pub fn modern(method: &str, id: i64, extra: Map<String, Value>) -> Self {
        let mut params = extra;
        params.insert("_meta".into(), modern_meta());
        let mut headers = vec![
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
            ("MCP-Protocol-Version".into(), MODERN_VERSION.into()),
            ("Mcp-Method".into(), method.into()),
        ];
        if let Some(name) = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
        {
            headers.push(("Mcp-Name".into(), name.into()));
        }
        ProbeRequest {
            method: Method::POST,
            headers,
            body: Some(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
            bearer: None,
        }
    }

    /// A valid 2026-07-28 notification (no id).
    pub fn modern_notification(method: &str, extra: Map<String, Value>) -> Self {
        let mut req = Self::modern(method, 0, extra);
        if let Some(Value::Object(body)) = req.body.as_mut() {
            body.remove("id");
        }
        req
    }

    /// A 2025-11-25 `initialize`, as a legacy client sends it (no session, no version header).
    pub fn legacy_initialize(id: i64) -> Self {
        ProbeRequest {
            method: Method::POST,
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                (
                    "Accept".into(),
                    "application/json, text/event-stream".into(),
                ),
            ],
            body: Some(
                json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
                    "protocolVersion": LEGACY_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "vantage", "version": env!("CARGO_PKG_VERSION")}
                }}),
            ),
            bearer: None,
        }
    }

    /// A bodiless request (GET, DELETE, OPTIONS).
    pub fn bare(method: Method, headers: &[(&str, &str)]) -> Self {
        ProbeRequest {
            method,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: None,
            bearer: None,
        }
    }

    /// Set a header, replacing any of the same name.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self = self.without_header(name);
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Send `Authorization: Bearer` with this token (or none).
    pub fn with_bearer(mut self, token: Option<&secrecy::SecretString>) -> Self {
        self.bearer = token.cloned();
        self
    }

    pub fn without_header(mut self, name: &str) -> Self {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self
    }

    /// Change the body's `params` in place.
    pub fn with_params(mut self, f: impl FnOnce(&mut Map<String, Value>)) -> Self {
        if let Some(Value::Object(params)) = self.body.as_mut().and_then(|b| b.get_mut("params")) {
            f(params);
        }
        self
    }

    /// The JSON-RPC id of the body, if any.
    pub fn rpc_id(&self) -> Option<&Value> {
        self.body.as_ref().and_then(|b| b.get("id"))
    }

    /// The request in a few words for a report: the HTTP method, the JSON-RPC method (a
    /// notification says so), and whether it carried a bearer token, e.g.
    /// `POST tools/list (with a token)`, `POST notifications/initialized (a notification)`.
    pub fn label(&self) -> String {
        let mut s = self.method.to_string();
        if let Some(m) = self
            .body
            .as_ref()
            .and_then(|b| b.get("method"))
            .and_then(Value::as_str)
        {
            s.push(' ');
            s.push_str(&crate::probe::http::clip(m, 60));
        }
        let notification = self
            .body
            .as_ref()
            .is_some_and(|b| b.get("method").is_some())
            && self.rpc_id().is_none();
        let notes: Vec<&str> = [
            (notification, "a notification"),
            (self.bearer.is_some(), "with a token"),
        ]
        .into_iter()
        .filter_map(|(on, what)| on.then_some(what))
        .collect();
        if !notes.is_empty() {
            s.push_str(&format!(" ({})", notes.join(", ")));
        }
        s
    }
}
