//! The audit of a tool list, fed page by page: each tool is judged by every per-tool rule
//! as it arrives and then dropped, so a list's cost in memory is its names and digests, not
//! its definitions.

use std::collections::BTreeSet;

use serde_json::Value;

use super::problems::Problems;
use super::{lint, tool_rules};

/// What the per-tool rules found over the tools read so far.
#[derive(Debug, Default)]
pub(crate) struct ToolAudit {
    pub(crate) shape: Problems,
    pub(crate) names: Problems,
    pub(crate) headers: Problems,
    /// Tools that declare at least one `x-mcp-header`.
    pub(crate) with_headers: usize,
    pub(crate) schemas: Problems,
    pub(crate) unconstrained: Problems,
    pub(crate) open_objects: Problems,
    pub(crate) sizes: Problems,
    /// Canonical JSON bytes of every tool read.
    pub(crate) total_bytes: u64,
    pub(crate) tools: usize,
    seen: BTreeSet<String>,
}

impl ToolAudit {
    /// Judge one tool (`index` in the whole list), whose canonical JSON is `canonical_len`
    /// bytes long.
    pub(crate) fn tool(&mut self, index: usize, tool: &Value, canonical_len: usize) {
        self.tools += 1;
        self.total_bytes += canonical_len as u64;
        let Some(name) = tool_rules::shape(index, tool, &mut self.shape) else {
            return;
        };
        tool_rules::name_format(&name, &mut self.names);
        // The capture is one-to-one (`observed::sanitize_json`): two names captured alike
        // were sent alike, so the captured names compare as the sent ones.
        if !self.seen.insert(name.clone()) {
            self.names.push(
                crate::model::Severity::Low,
                format!("{name}: listed twice (names must be unique)"),
            );
        }
        if tool_rules::x_mcp_headers(&name, tool, &mut self.headers) > 0 {
            self.with_headers += 1;
        }
        lint::schema_valid(&name, tool, &mut self.schemas);
        lint::input_constrained(&name, tool, &mut self.unconstrained, &mut self.open_objects);
        lint::tool_size(&name, tool, canonical_len, &mut self.sizes);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::Severity;

    #[test]
    fn one_pass_feeds_every_rule() {
        let mut a = ToolAudit::default();
        let tools = [
            json!({"name": "ok", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}, "additionalProperties": false}}),
            json!({"name": "ok", "inputSchema": {"type": "object", "additionalProperties": false}}),
            json!({"name": "run cmd", "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}),
            json!({"name": "bad_schema", "inputSchema": {"type": "object", "properties": {"a": {"type": "strin"}}, "additionalProperties": false}}),
        ];
        for (i, t) in tools.iter().enumerate() {
            a.tool(i, t, 100);
        }
        assert_eq!(a.tools, 4);
        assert_eq!(a.total_bytes, 400);
        assert!(a.shape.is_empty());
        assert!(
            a.names.summary().contains("listed twice"),
            "{}",
            a.names.summary()
        );
        assert!(a.names.summary().contains("run cmd"));
        assert_eq!(a.unconstrained.worst(), Some(Severity::Low));
        assert_eq!(a.schemas.worst(), Some(Severity::Medium));
        assert!(a.schemas.summary().starts_with("bad_schema"));
    }
}
