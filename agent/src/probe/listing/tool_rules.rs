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

/// `tools.name-format` for one name as captured (`shown`): 1 to 128 characters from
/// `[A-Za-z0-9_.-]` (a SHOULD). Judged on the characters the server sent ([`sent_chars`]),
/// never on their escapes; the evidence shows the captured text, and names an offending
/// character that is not printable ASCII by its code point (U+001B), never raw.
pub(crate) fn name_format(shown: &str, out: &mut Problems) {
    let sent = sent_chars(shown);
    let len = sent.len();
    let mut bad: Vec<char> = Vec::new();
    for &c in &sent {
        let ok = c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
        if !ok && !bad.contains(&c) {
            bad.push(c);
        }
    }
    if len == 0 {
        out.push(Severity::Low, "an empty tool name".to_string());
    } else if len > 128 {
        out.push(
            Severity::Low,
            // Longer than 128, so always cut (`…` marks it).
            format!(
                "{}: {len} characters (at most 128)",
                crate::probe::http::clip(shown, 24)
            ),
        );
    } else if bad == ['/'] {
        out.push(
            Severity::Low,
            format!("{shown}: '/' is outside the specification's [A-Za-z0-9_.-] (SEP-986 and the conformance suite accept it)"),
        );
    } else if !bad.is_empty() {
        let listed: String = bad
            .iter()
            .take(3)
            .map(|&c| named(c))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(
            Severity::Low,
            format!("{shown}: characters outside [A-Za-z0-9_.-]: {listed}"),
        );
    }
}

/// The characters the server sent in a captured name
/// ([`crate::probe::observed::captured_chars`]). A piece of this run's token was redacted at
/// capture: its `[redacted]` marker is not the server's spelling, so it is left out (a name
/// that was all token stands as `redacted`, a valid name). No escape spells `[`, so the
/// marker is never confused with what an escape stood for.
fn sent_chars(shown: &str) -> Vec<char> {
    let chars = crate::probe::observed::captured_chars(shown);
    let marker: Vec<char> = "[redacted]".chars().collect();
    let mut sent = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i..].starts_with(&marker) {
            i += marker.len();
        } else {
            sent.push(chars[i]);
            i += 1;
        }
    }
    if sent.is_empty() && !chars.is_empty() {
        return "redacted".chars().collect();
    }
    sent
}

/// An offending character as the evidence names it: quoted when printable ASCII, else by its
/// code point (a control, a bidirectional override, a look-alike letter), never raw.
fn named(c: char) -> String {
    if c.is_ascii_graphic() || c == ' ' {
        format!("{c:?}")
    } else {
        format!("U+{:04X}", c as u32)
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

/// The JSON types a property admits, from `type` (a name or a list), else from the
/// branches of an `anyOf`/`oneOf` (Pydantic writes `Optional[str]` as `anyOf: [{type:
/// string}, {type: null}]`), else from `const`/`enum` values. Empty when it declares none.
fn admitted_types(prop: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |t: &str| {
        if !out.iter().any(|x| x == t) {
            out.push(t.to_string());
        }
    };
    match prop.get("type") {
        Some(Value::String(t)) => add(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).for_each(&mut add),
        _ => {
            let branches = ["anyOf", "oneOf"]
                .iter()
                .find_map(|k| prop.get(*k).and_then(Value::as_array));
            if let Some(branches) = branches {
                for b in branches {
                    let ts = admitted_types(b);
                    if ts.is_empty() {
                        add("unspecified");
                    }
                    ts.iter().for_each(|t| add(t));
                }
            } else {
                let values: Vec<&Value> = match (prop.get("const"), prop.get("enum")) {
                    (Some(c), _) => vec![c],
                    (None, Some(Value::Array(vs))) => vs.iter().collect(),
                    _ => Vec::new(),
                };
                for v in values {
                    add(match v {
                        Value::Null => "null",
                        Value::Bool(_) => "boolean",
                        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                        Value::Number(_) => "number",
                        Value::String(_) => "string",
                        Value::Array(_) => "array",
                        Value::Object(_) => "object",
                    });
                }
            }
        }
    }
    out
}

/// Whether a property can carry an `x-mcp-header`: it admits one of string, integer or
/// boolean, and at most `null` besides (the spec's `headers.param-null-or-absent`: a null
/// argument sends no header, which the server must accept). Otherwise the words for the
/// message: `of type number`, `of types string or object`, `with no declared type`.
fn header_type(prop: &Value) -> Result<(), String> {
    let types = admitted_types(prop);
    let primitives: Vec<&str> = types
        .iter()
        .map(String::as_str)
        .filter(|t| *t != "null")
        .collect();
    match primitives.as_slice() {
        ["string" | "integer" | "boolean"] => Ok(()),
        [] if types.is_empty() => Err("with no declared type".into()),
        [] => Err("of type null".into()),
        [one] => Err(format!("of type {one}")),
        many => Err(format!("of types {}", many.join(" or "))),
    }
}

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
        if let Err(types) = header_type(prop) {
            out.push(
                Severity::Medium,
                format!("{name}: x-mcp-header \"{header}\" at {at} is on a property {types} (string, integer or boolean only, optionally nullable: a null or absent argument sends no header)"),
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
#[path = "tool_rules_tests.rs"]
mod tests;
