//! The rules one tool definition must meet, from the 2026-07-28 tools page and the
//! Streamable HTTP schema extension: its shape (`tools.list-shape`), its name
//! (`tools.name-format`) and its `x-mcp-header` annotations (`tools.x-mcp-header-valid`).
//! Pure functions of one tool; the audit gathers them over the list.

use serde_json::Value;

use super::problems::Problems;
use crate::model::Severity;

/// `tools.list-shape` for one tool: a name and an `inputSchema` object of type `object`; an
/// `outputSchema`, when present, an object. Returns the tool's name when it has one.
pub(crate) fn shape(index: usize, tool: &Value, out: &mut Problems) -> Option<String> {
    let Some(obj) = tool.as_object() else {
        out.push(Severity::High, format!("tools[{index}] is not an object"));
        return None;
    };
    let name = obj.get("name").and_then(Value::as_str).map(str::to_string);
    let label = name.clone().unwrap_or_else(|| format!("tools[{index}]"));
    if name.is_none() {
        out.push(Severity::High, format!("{label} has no string name"));
    }
    match obj.get("inputSchema") {
        None => out.push(Severity::High, format!("{label} has no inputSchema")),
        Some(Value::Object(s)) => {
            if s.get("type").and_then(Value::as_str) != Some("object") {
                out.push(
                    Severity::High,
                    format!(
                        "{label}: inputSchema.type is {} (must be \"object\")",
                        s.get("type")
                            .map(Value::to_string)
                            .unwrap_or_else(|| "absent".into())
                    ),
                );
            }
        }
        Some(other) => out.push(
            Severity::High,
            format!(
                "{label}: inputSchema is {} (must be a JSON Schema object)",
                kind(other)
            ),
        ),
    }
    if let Some(o) = obj.get("outputSchema") {
        if !o.is_object() {
            out.push(
                Severity::High,
                format!(
                    "{label}: outputSchema is {} (must be a JSON Schema object)",
                    kind(o)
                ),
            );
        }
    }
    name
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `tools.name-format` for one name: 1 to 128 characters from `[A-Za-z0-9_.-]` (a SHOULD).
pub(crate) fn name_format(name: &str, out: &mut Problems) {
    let len = name.chars().count();
    let bad: Vec<char> = name
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .collect();
    if len == 0 {
        out.push(Severity::Low, "an empty tool name".to_string());
    } else if len > 128 {
        out.push(
            Severity::Low,
            format!(
                "{}…: {len} characters (at most 128)",
                crate::probe::http::clip(name, 24)
            ),
        );
    } else if bad == ['/'] || (!bad.is_empty() && bad.iter().all(|c| *c == '/')) {
        out.push(
            Severity::Low,
            format!("{name}: '/' is outside the specification's [A-Za-z0-9_.-] (SEP-986 and the conformance suite accept it)"),
        );
    } else if !bad.is_empty() {
        let shown: String = bad
            .iter()
            .take(3)
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(
            Severity::Low,
            format!("{name}: characters outside [A-Za-z0-9_.-]: {shown}"),
        );
    }
}

/// RFC 9110 `tchar`.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Keywords through which an annotated property cannot be reached (only `properties`
/// chains may lead to an `x-mcp-header`).
const UNREACHABLE_VIA: &[&str] = &[
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
    "dependentSchemas",
    "contains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
];

/// `tools.x-mcp-header-valid` for one tool's `inputSchema`.
pub(crate) fn x_mcp_headers(name: &str, tool: &Value, out: &mut Problems) -> usize {
    let Some(schema) = tool.get("inputSchema") else {
        return 0;
    };
    let mut found: Vec<(String, String, Value, bool)> = Vec::new(); // (path, header, schema, reachable)
    walk(schema, "", true, &mut found);
    let mut seen: Vec<String> = Vec::new();
    for (path, header, prop, reachable) in &found {
        let at = if path.is_empty() {
            "the inputSchema root".to_string()
        } else {
            path.clone()
        };
        if path.is_empty() {
            out.push(
                Severity::Medium,
                format!("{name}: x-mcp-header on {at}, not on a property"),
            );
            continue;
        }
        if !reachable {
            out.push(
                Severity::Medium,
                format!("{name}: x-mcp-header \"{header}\" at {at} is reached through something other than properties"),
            );
            continue;
        }
        if !is_token(header) {
            out.push(
                Severity::Medium,
                format!("{name}: x-mcp-header \"{header}\" at {at} is not an RFC 9110 token"),
            );
            continue;
        }
        let t = prop.get("type").and_then(Value::as_str).unwrap_or("");
        if !matches!(t, "string" | "integer" | "boolean") {
            out.push(
                Severity::Medium,
                format!("{name}: x-mcp-header \"{header}\" at {at} is on a property of type {} (string, integer or boolean only)", if t.is_empty() { "unspecified" } else { t }),
            );
        }
        let lower = header.to_ascii_lowercase();
        if seen.contains(&lower) {
            out.push(
                Severity::Medium,
                format!("{name}: x-mcp-header \"{header}\" is declared twice (ignoring case)"),
            );
        }
        seen.push(lower);
    }
    found.len()
}

fn walk(
    schema: &Value,
    path: &str,
    reachable: bool,
    found: &mut Vec<(String, String, Value, bool)>,
) {
    let Some(obj) = schema.as_object() else {
        if let Some(items) = schema.as_array() {
            for (i, s) in items.iter().enumerate() {
                walk(s, &format!("{path}[{i}]"), false, found);
            }
        }
        return;
    };
    if let Some(h) = obj.get("x-mcp-header") {
        let header = h
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| h.to_string());
        found.push((path.to_string(), header, schema.clone(), reachable));
    }
    for (key, sub) in obj {
        if key == "properties" {
            if let Some(props) = sub.as_object() {
                for (p, s) in props {
                    walk(s, &format!("{path}.{p}"), reachable, found);
                }
            }
        } else if UNREACHABLE_VIA.contains(&key.as_str()) {
            match sub {
                Value::Object(m)
                    if matches!(
                        key.as_str(),
                        "$defs" | "definitions" | "patternProperties" | "dependentSchemas"
                    ) =>
                {
                    for (k, s) in m {
                        walk(s, &format!("{path}.{key}.{k}"), false, found);
                    }
                }
                _ => walk(sub, &format!("{path}.{key}"), false, found),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_shape_of_a_tool() {
        let mut p = Problems::default();
        assert_eq!(
            shape(
                0,
                &json!({"name": "a", "inputSchema": {"type": "object"}}),
                &mut p
            ),
            Some("a".into())
        );
        assert!(p.is_empty());
        shape(1, &json!({"name": "b"}), &mut p);
        shape(2, &json!({"inputSchema": {"type": "object"}}), &mut p);
        shape(3, &json!({"name": "d", "inputSchema": null}), &mut p);
        shape(
            4,
            &json!({"name": "e", "inputSchema": {"type": "string"}}),
            &mut p,
        );
        shape(
            5,
            &json!({"name": "f", "inputSchema": {"type": "object"}, "outputSchema": "x"}),
            &mut p,
        );
        assert_eq!(p.worst(), Some(Severity::High));
        let s = p.summary();
        for needle in [
            "b has no inputSchema",
            "tools[2] has no string name",
            "d: inputSchema is null",
            "e: inputSchema.type",
            "f: outputSchema",
        ] {
            assert!(s.contains(needle), "{needle}: {s}");
        }
    }

    #[test]
    fn names() {
        let mut p = Problems::default();
        for ok in ["get_weather", "a.b-c", "X1"] {
            name_format(ok, &mut p);
        }
        assert!(p.is_empty());
        name_format("get weather", &mut p);
        name_format("ns/tool", &mut p);
        name_format(&"x".repeat(129), &mut p);
        assert_eq!(p.worst(), Some(Severity::Low));
        assert!(p.summary().contains("SEP-986"), "{}", p.summary());
    }

    #[test]
    fn x_mcp_header_rules() {
        let run = |schema: Value| {
            let mut p = Problems::default();
            let n = x_mcp_headers("t", &json!({"inputSchema": schema}), &mut p);
            (n, p)
        };
        let (n, p) = run(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Item-Id"}}}
        }}));
        assert_eq!(n, 2);
        assert!(p.is_empty(), "{}", p.summary());
        for (schema, needle) in [
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Bad Header"}}}),
                "not an RFC 9110 token",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
                "type number",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
                "declared twice",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
                "something other than properties",
            ),
            (
                json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                "something other than properties",
            ),
            (
                json!({"type": "object", "x-mcp-header": "Root"}),
                "not on a property",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
                "not an RFC 9110 token",
            ),
        ] {
            let (_, p) = run(schema.clone());
            assert_eq!(p.worst(), Some(Severity::Medium), "{schema}");
            assert!(p.summary().contains(needle), "{needle}: {}", p.summary());
        }
    }
}
