//! The tool-surface lint: what a host pays for a server's tools and how much input they
//! let through. `tools.schema-valid` (every `inputSchema` and `outputSchema` compiles as
//! JSON Schema, the draft its `$schema` names or 2020-12, nothing fetched),
//! `tools.input-constrained` (no tool accepts arbitrary input; a string argument named like
//! a path, URL or command is bounded), `tools.surface-size` (descriptions, definitions and
//! the whole list within the thresholds below). Low or medium only: these are hygiene, not
//! protocol violations. Each function judges one tool; the audit gathers them.

use serde_json::Value;

use super::pages::{ListRead, Stop};
use super::problems::Problems;
use super::rules::judge;
use super::tool_list::tools_audited;
use crate::model::{Cause, Severity};
use crate::probe::verdict::Verdict;

/// `tools.surface-size` thresholds, in bytes of canonical JSON (what a host puts in context).
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 2 * 1024;
pub(crate) const MAX_TOOL_BYTES: usize = 8 * 1024;
pub(crate) const MAX_SURFACE_BYTES: u64 = 64 * 1024;

/// A retriever that fetches nothing: a schema's `$ref` to a URL must never make the vantage
/// connect anywhere (the egress policy covers the target alone).
struct NoFetch;

impl jsonschema::Retrieve for NoFetch {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("{uri} is not fetched (a tool schema must be self-contained)").into())
    }
}

/// Whether `schema` compiles; the error otherwise.
pub(crate) fn compile(schema: &Value) -> Result<(), String> {
    let draft_named = schema.get("$schema").is_some();
    let mut opts = jsonschema::options().with_retriever(NoFetch);
    if !draft_named {
        opts = opts.with_draft(jsonschema::Draft::Draft202012);
    }
    opts.build(schema).map(|_| ()).map_err(|e| {
        let msg = e.to_string();
        crate::probe::http::clip(&msg, 140)
    })
}

/// `tools.schema-valid` for one tool.
pub(crate) fn schema_valid(name: &str, tool: &Value, out: &mut Problems) {
    for field in ["inputSchema", "outputSchema"] {
        if let Some(schema) = tool.get(field).filter(|s| s.is_object()) {
            if let Err(e) = compile(schema) {
                out.push(
                    Severity::Medium,
                    format!("{name}: {field} does not compile: {e}"),
                );
            }
        }
    }
}

/// Words that make a string argument dangerous when unbounded.
const RISKY: &[&str] = &[
    "path",
    "paths",
    "file",
    "filename",
    "filepath",
    "dir",
    "directory",
    "folder",
    "url",
    "uri",
    "href",
    "link",
    "endpoint",
    "command",
    "cmd",
    "shell",
    "exec",
    "script",
];

/// The words of an identifier: `filePath`, `file_path` and `file-path` are `file`, `path`.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn is_type(schema: &Value, t: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(t)),
        _ => false,
    }
}

fn bounded_string(schema: &Value) -> bool {
    ["maxLength", "enum", "const", "pattern"]
        .iter()
        .any(|k| schema.get(*k).is_some())
}

/// What an object schema lets through, as the lint sees it: the properties it declares
/// (its own, and those of the subschemas every instance must also meet), and whether it
/// admits properties nobody declared or bounded.
struct ObjectView<'a> {
    props: Vec<(&'a str, &'a Value)>,
    closed: bool,
}

/// How deep `$ref` and composition are followed, and how many subschemas in all (a hostile
/// schema can nest, cycle or fan out: `allOf` of a hundred `$ref: "#"` is 100^depth visits
/// without the second bound). What is not visited is not counted as closing anything.
const MAX_VIEW_DEPTH: usize = 8;
const MAX_VIEW_NODES: usize = 256;

/// A schema that bounds a value: anything but `true` or `{}`.
fn bounds(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => !b,
        Value::Object(m) => !m.is_empty(),
        _ => false,
    }
}

/// The view of `schema` (inside `root`, for local `$ref`s). Closed: `additionalProperties`
/// or `unevaluatedProperties` false or a bounding schema, `maxProperties: 0`, a `$ref` or an
/// `allOf` branch that is closed (the instance must meet it too), or `anyOf`/`oneOf`
/// branches that are all closed.
fn view<'a>(
    root: &'a Value,
    schema: &'a Value,
    depth: usize,
    budget: &mut usize,
) -> ObjectView<'a> {
    let mut v = ObjectView {
        props: Vec::new(),
        closed: false,
    };
    if *budget == 0 {
        return v;
    }
    *budget -= 1;
    let Some(obj) = schema.as_object() else {
        v.closed = schema == &Value::Bool(false);
        return v;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        v.props.extend(props.iter().map(|(k, s)| (k.as_str(), s)));
    }
    v.closed = ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|k| obj.get(*k).is_some_and(bounds))
        || obj.get("maxProperties").and_then(Value::as_u64) == Some(0);
    if depth >= MAX_VIEW_DEPTH {
        return v;
    }
    let local = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer));
    let all = obj.get("allOf").and_then(Value::as_array);
    for sub in local.into_iter().chain(all.into_iter().flatten()) {
        let s = view(root, sub, depth + 1, budget);
        v.closed |= s.closed;
        v.props.extend(s.props);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj
            .get(key)
            .and_then(Value::as_array)
            .filter(|b| !b.is_empty())
        {
            let mut every = true;
            for sub in branches {
                let s = view(root, sub, depth + 1, budget);
                every &= s.closed;
                v.props.extend(s.props);
            }
            v.closed |= every;
        }
    }
    v
}

/// `tools.input-constrained` for one tool: low for input nobody bounded, info for an object
/// that lists its properties but leaves `additionalProperties` open (the JSON Schema default,
/// which most SDKs emit). A schema is judged with its local `$ref`s and composition (see
/// `view`), so a closed `$ref`, an `allOf` with `unevaluatedProperties: false`, closed
/// `oneOf`/`anyOf` branches, `maxProperties: 0` and a map of bounded values are all bounded.
pub(crate) fn input_constrained(name: &str, tool: &Value, low: &mut Problems, info: &mut Problems) {
    let Some(schema) = tool.get("inputSchema").filter(|s| s.is_object()) else {
        return;
    };
    let mut budget = MAX_VIEW_NODES;
    let v = view(schema, schema, 0, &mut budget);
    if v.props.is_empty() {
        if !v.closed {
            low.push(
                Severity::Low,
                format!("{name}: the input object declares no properties and bounds no others (no additionalProperties or unevaluatedProperties schema, no closed $ref or composition, maxProperties not 0), so it accepts any input"),
            );
        }
        return;
    }
    let mut open_risky: Vec<&str> = Vec::new();
    for (prop, sub) in &v.props {
        if is_type(sub, "string")
            && !bounded_string(sub)
            && words(prop).iter().any(|w| RISKY.contains(&w.as_str()))
            && !open_risky.contains(prop)
        {
            open_risky.push(prop);
        }
    }
    if !open_risky.is_empty() {
        low.push(
            Severity::Low,
            format!(
                "{name}: string argument(s) {} name a path, URL or command and carry no maxLength, enum or pattern",
                open_risky.join(", ")
            ),
        );
    }
    if !v.closed {
        info.push(
            Severity::Info,
            format!("{name}: additionalProperties is open"),
        );
    }
}

/// `tools.surface-size` for one tool: its description and its whole definition.
pub(crate) fn tool_size(name: &str, tool: &Value, canonical_len: usize, out: &mut Problems) {
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .map(str::len)
        .unwrap_or(0);
    if description > MAX_DESCRIPTION_BYTES {
        out.push(
            Severity::Low,
            format!("{name}: a {description}-byte description (threshold {MAX_DESCRIPTION_BYTES})"),
        );
    }
    if canonical_len > MAX_TOOL_BYTES {
        out.push(
            Severity::Low,
            format!("{name}: a {canonical_len}-byte definition (threshold {MAX_TOOL_BYTES})"),
        );
    }
}

/// `tools.schema-valid` over the list.
pub(crate) fn schema_verdict(tools: Option<&ListRead>) -> Verdict {
    let (t, a) = match tools_audited(tools) {
        Ok(ta) => ta,
        Err(v) => return v,
    };
    judge(&a.schemas, t, format!("{} tools' schemas compile", a.tools))
}

/// `tools.input-constrained` over the list.
pub(crate) fn constrained_verdict(tools: Option<&ListRead>) -> Verdict {
    let (t, a) = match tools_audited(tools) {
        Ok(ta) => ta,
        Err(v) => return v,
    };
    let p = if a.unconstrained.is_empty() {
        &a.open_objects
    } else {
        &a.unconstrained
    };
    judge(p, t, format!("{} tools constrain their input", a.tools))
}

/// `tools.surface-size` over the list: each tool, the whole list, and a list larger than
/// the listing's bounds.
pub(crate) fn size_verdict(tools: Option<&ListRead>) -> Verdict {
    // A first page larger than the bounds is itself the answer: the list is too large.
    if let Some(t) = tools.filter(|t| !t.answered()) {
        if let Some(Stop::Cap(what)) = &t.stop {
            if !what.starts_with("page cap") {
                return Verdict::warn(
                    Severity::Low,
                    format!("the first tools/list page is larger than the {what}: the read stopped there"),
                )
                .cause(Cause::SizeCap);
            }
        }
    }
    let (t, a) = match tools_audited(tools) {
        Ok(ta) => ta,
        Err(v) => return v,
    };
    let mut p = a.sizes.clone();
    if a.total_bytes > MAX_SURFACE_BYTES {
        p.push(
            Severity::Low,
            format!(
                "the tool list is {} bytes (threshold {MAX_SURFACE_BYTES}): every host pays it in context on every connection",
                a.total_bytes
            ),
        );
    }
    let capped = matches!(&t.stop, Some(Stop::Cap(what)) if !what.starts_with("page cap"));
    if let Some(Stop::Cap(what)) = &t.stop {
        if capped {
            p.push(
                Severity::Low,
                format!(
                    "the tool list is larger than the {what}; {} bytes of {} tools were read",
                    a.total_bytes, a.tools
                ),
            );
        }
    }
    let v = judge(
        &p,
        t,
        format!(
            "{} tools, {} bytes in all, each within the thresholds",
            a.tools, a.total_bytes
        ),
    );
    if capped {
        v.cause(Cause::SizeCap)
    } else {
        v
    }
}

#[cfg(test)]
#[path = "lint_tests.rs"]
mod tests;
