//! The surface one region saw: each capability list the server advertises (tools, resources,
//! resource templates, prompts), as a canonical digest with the items by name, so that the
//! coordinator can compare regions (`coordinator/src/surface.rs`). Part of the region
//! section of a `vantage.report/v1` report.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Era;

/// Which list.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ListKind {
    Tools,
    Resources,
    ResourceTemplates,
    Prompts,
}

impl ListKind {
    pub const ALL: [ListKind; 4] = [
        ListKind::Tools,
        ListKind::Resources,
        ListKind::ResourceTemplates,
        ListKind::Prompts,
    ];

    /// The JSON-RPC method that lists it.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Resources => "resources/list",
            ListKind::ResourceTemplates => "resources/templates/list",
            ListKind::Prompts => "prompts/list",
        }
    }

    /// The result's array field.
    pub fn field(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resourceTemplates",
            ListKind::Prompts => "prompts",
        }
    }

    /// The capability that advertises it.
    pub fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources | ListKind::ResourceTemplates => "resources",
            ListKind::Prompts => "prompts",
        }
    }

    /// The member that names an item: what a client addresses it by.
    pub fn key(self) -> &'static str {
        match self {
            ListKind::Tools | ListKind::Prompts => "name",
            ListKind::Resources => "uri",
            ListKind::ResourceTemplates => "uriTemplate",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resource-templates",
            ListKind::Prompts => "prompts",
        }
    }
}

/// The bounds a listing ran under (reported, so a reader knows what "complete" means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListingBounds {
    /// Pages read per list at most.
    pub max_pages: u32,
    /// Bytes of one page at most.
    pub max_page_bytes: u64,
    /// Bytes of every page of every list together at most.
    pub max_total_bytes: u64,
    /// Items named per list in the report at most (the digests cover every item read).
    pub max_items_reported: u32,
}

impl Default for ListingBounds {
    fn default() -> Self {
        ListingBounds {
            max_pages: 100,
            max_page_bytes: 4 * 1024 * 1024,
            max_total_bytes: 8 * 1024 * 1024,
            max_items_reported: 1000,
        }
    }
}

/// One item of a list: what a client addresses it by, and the digest of its definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SurfaceItem {
    /// The tool or prompt name, the resource URI or the template's URI template.
    pub name: String,
    /// The first 16 hex digits of the SHA-256 of the item's canonical JSON (`_meta` left out).
    pub digest: String,
}

/// One list as this region read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListSurface {
    pub kind: ListKind,
    /// SHA-256 (hex) over the items' digests in the order served: names, definitions, order.
    pub digest: String,
    /// SHA-256 (hex) over the items' digests sorted: equal when only the order differs.
    pub set_digest: String,
    /// Items read.
    pub count: u32,
    pub pages: u32,
    pub bytes: u64,
    /// Whether the whole list was read (the last page had no nextCursor).
    pub complete: bool,
    /// What stopped the read early (a bound, an error), when it is not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The items in the order served, up to the bound.
    pub items: Vec<SurfaceItem>,
    /// More items were read than are named here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub items_truncated: bool,
}

/// What one region saw of the server's lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Surface {
    /// The era the lists were read in: `modern` (stateless 2026-07-28 requests) or `legacy`
    /// (an initialize session).
    pub era: Era,
    pub bounds: ListingBounds,
    pub lists: Vec<ListSurface>,
}

impl Surface {
    pub fn list(&self, kind: ListKind) -> Option<&ListSurface> {
        self.lists.iter().find(|l| l.kind == kind)
    }
}

/// JSON with object keys sorted at every level, no whitespace: the same value always gives
/// the same bytes, whatever order the server wrote its keys in.
pub fn canonical_json(v: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(v, &mut out, None);
    String::from_utf8(out).unwrap_or_default()
}

/// Canonical JSON of a value, leaving out one top-level member (an item's `_meta`).
fn write_canonical(v: &Value, out: &mut Vec<u8>, skip: Option<&str>) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().filter(|k| Some(k.as_str()) != skip).collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let _ = serde_json::to_writer(&mut *out, k);
                out.push(b':');
                write_canonical(&map[k.as_str()], out, None);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out, None);
            }
            out.push(b']');
        }
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// An item's canonical JSON without `_meta` (per-response metadata), and its digest: the
/// first 16 hex digits of its SHA-256. The item is the one captured
/// ([`crate::probe::observed::sanitize_json`]: token pieces redacted, unsafe characters
/// escaped one-to-one), so two items that differ on the wire differ here, but in a piece of
/// the run's token.
pub fn item_canonical(item: &Value) -> (usize, String) {
    let mut out = Vec::new();
    write_canonical(item, &mut out, Some("_meta"));
    (out.len(), sha256_hex(&out)[..16].to_string())
}

/// The digest of one item (see [`item_canonical`]).
pub fn item_digest(item: &Value) -> String {
    item_canonical(item).1
}

/// The ordered and the order-free digest of a list of item digests.
pub fn list_digests(item_digests: &[String]) -> (String, String) {
    let ordered = sha256_hex(item_digests.join("\n").as_bytes());
    let mut sorted = item_digests.to_vec();
    sorted.sort();
    (ordered, sha256_hex(sorted.join("\n").as_bytes()))
}

/// How a second reading of a list differs from a first: names added, removed, or kept with
/// another definition (by item digest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurfaceDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

impl SurfaceDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// `added a, b; removed c; changed d` (at most ten names each, then a count).
    pub fn describe(&self) -> String {
        fn names(v: &[String]) -> String {
            let mut s = v.iter().take(10).cloned().collect::<Vec<_>>().join(", ");
            if v.len() > 10 {
                s.push_str(&format!(" and {} more", v.len() - 10));
            }
            s
        }
        let mut parts = Vec::new();
        for (word, v) in [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ] {
            if !v.is_empty() {
                parts.push(format!("{word} {}", names(v)));
            }
        }
        parts.join("; ")
    }
}

/// Compare two readings, each a list of (name, item digest) in the order served.
pub fn diff(first: &[(String, String)], second: &[(String, String)]) -> SurfaceDiff {
    use std::collections::BTreeMap;
    let index = |v: &[(String, String)]| -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for (n, d) in v {
            m.entry(n.clone()).or_insert_with(|| d.clone());
        }
        m
    };
    let (a, b) = (index(first), index(second));
    let mut d = SurfaceDiff::default();
    for (name, digest) in &b {
        match a.get(name) {
            None => d.added.push(name.clone()),
            Some(old) if old != digest => d.changed.push(name.clone()),
            _ => {}
        }
    }
    d.removed = a.keys().filter(|n| !b.contains_key(*n)).cloned().collect();
    d
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_json_ignores_key_order_and_whitespace() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [1, {"q": 2, "p": 3}], "x": "s"}}"#)
                .unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"x":"s","y":[1,{"p":3,"q":2}]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":"s","y":[1,{"p":3,"q":2}]},"b":1}"#
        );
        // Array order is meaning, not noise.
        assert_ne!(
            canonical_json(&json!([1, 2])),
            canonical_json(&json!([2, 1]))
        );
    }

    #[test]
    fn item_digests_ignore_meta_and_see_every_other_change() {
        let tool = json!({"name": "add", "inputSchema": {"type": "object"}});
        let mut with_meta = tool.clone();
        with_meta["_meta"] = json!({"trace": "abc"});
        assert_eq!(item_digest(&tool), item_digest(&with_meta));
        assert_eq!(item_digest(&tool).len(), 16);
        let mut changed = tool.clone();
        changed["inputSchema"]["properties"] = json!({"a": {"type": "number"}});
        assert_ne!(item_digest(&tool), item_digest(&changed));
        // Captured: a written-out `\u{1b}` and an ESC are two items (they were one).
        let mut written = json!({"name": "x\\u{1b}"});
        let mut control = json!({"name": "x\u{1b}"});
        crate::probe::observed::sanitize_json(&mut written, &[]);
        crate::probe::observed::sanitize_json(&mut control, &[]);
        assert_ne!(item_digest(&written), item_digest(&control));
    }

    #[test]
    fn diffs_name_what_was_added_removed_and_changed() {
        let p = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let a = p(&[("add", "1"), ("sub", "2"), ("mul", "3")]);
        let b = p(&[("mul", "3"), ("add", "9"), ("div", "4")]);
        let d = diff(&a, &b);
        assert_eq!(d.added, vec!["div"]);
        assert_eq!(d.removed, vec!["sub"]);
        assert_eq!(d.changed, vec!["add"]);
        assert_eq!(d.describe(), "added div; removed sub; changed add");
        // Order alone is no difference here.
        assert!(diff(&a, &p(&[("mul", "3"), ("sub", "2"), ("add", "1")])).is_empty());
    }

    #[test]
    fn the_set_digest_is_blind_to_order_and_the_ordered_one_is_not() {
        let a = vec!["1111".to_string(), "2222".to_string()];
        let b = vec!["2222".to_string(), "1111".to_string()];
        let (oa, sa) = list_digests(&a);
        let (ob, sb) = list_digests(&b);
        assert_ne!(oa, ob);
        assert_eq!(sa, sb);
        assert_eq!(oa.len(), 64);
    }
}
