//! One tool's rules: its shape, its name, its `x-mcp-header` annotations.

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

/// A piece of the run's token, redacted at capture, is not judged as the server's spelling:
/// `a_[redacted]` was "characters outside …: '[', ']'" (a finding on a valid name). What is
/// around the marker still is, and the evidence shows the redacted form.
#[test]
fn a_redacted_piece_is_not_the_servers_spelling() {
    let mut p = Problems::default();
    for ok in ["a_[redacted]", "[redacted]", "[redacted].list"] {
        name_format(ok, &mut p);
    }
    assert!(p.is_empty(), "{}", p.summary());
    name_format("a [redacted]", &mut p);
    assert_eq!(
        p.summary(),
        "a [redacted]: characters outside [A-Za-z0-9_.-]: ' '"
    );
}

/// The names of `raw` tools as the listing judges them: each tool captured as a body is
/// (secrets scrubbed, unsafe characters escaped), then fed to the audit.
fn audit_names(raw: &[&str], secrets: &[&str]) -> Problems {
    let mut audit = super::super::audit::ToolAudit::default();
    for (i, name) in raw.iter().enumerate() {
        let mut tool = json!({"name": name, "inputSchema": {"type": "object"}});
        crate::probe::observed::sanitize_json(&mut tool, secrets);
        audit.tool(i, &tool, 10);
    }
    audit.names
}

/// Red team round 4 #4: the rule judged the captured escapes, not the wire name. `x\u{1b}`
/// written out and `x` then ESC were "listed twice"; they are two names, each judged on what
/// it carries, the written one shown with its backslash escaped.
#[test]
fn a_written_escape_and_a_control_are_two_names() {
    let p = audit_names(&["x\\u{1b}", "x\u{1b}"], &[]);
    assert_eq!(
        p.summary(),
        "x\\u{5c}u{1b}: characters outside [A-Za-z0-9_.-]: '\\\\', '{', '}'; \
         x\\u{1b}: characters outside [A-Za-z0-9_.-]: U+001B"
    );
    // The same name twice is still a duplicate, compared as sent.
    let p = audit_names(&["x\u{1b}", "ok", "x\u{1b}"], &[]);
    assert!(
        p.summary()
            .ends_with("x\\u{1b}: listed twice (names must be unique)"),
        "{}",
        p.summary()
    );
}

/// The length is the wire name's in characters: 126 letters and two U+0001 are 128 (the
/// escapes made it "136 characters"); 127 letters and two are 129.
#[test]
fn the_length_is_counted_on_the_wire_name() {
    let at_most = format!("{}\u{1}\u{1}", "a".repeat(126));
    let p = audit_names(&[&at_most], &[]);
    assert_eq!(
        p.summary(),
        format!(
            "{}\\u{{1}}\\u{{1}}: characters outside [A-Za-z0-9_.-]: U+0001",
            "a".repeat(126)
        )
    );
    let over = format!("{}\u{1}\u{1}", "a".repeat(127));
    let p = audit_names(&[&over], &[]);
    assert_eq!(
        p.summary(),
        format!("{}…: 129 characters (at most 128)", "a".repeat(24))
    );
    assert!(!p.summary().contains('\u{1}'), "{}", p.summary());
}

/// ESC, a C1 control (CSI) and a bidirectional override are named by their code points, not
/// as the backslash and braces of their escapes; none reaches the evidence raw.
#[test]
fn offending_controls_are_named_by_code_point() {
    let p = audit_names(
        &["c1\u{9b}31m", "bidi\u{202e}gnp.exe", "esc\u{1b}[31m"],
        &[],
    );
    assert_eq!(
        p.summary(),
        "c1\\u{9b}31m: characters outside [A-Za-z0-9_.-]: U+009B; \
         bidi\\u{202e}gnp.exe: characters outside [A-Za-z0-9_.-]: U+202E; \
         esc\\u{1b}[31m: characters outside [A-Za-z0-9_.-]: U+001B, '['"
    );
    // Not printable ASCII, not escaped: a look-alike letter is named by its code point too.
    let p = audit_names(&["t\u{430}ol"], &[]);
    assert_eq!(
        p.summary(),
        "t\u{430}ol: characters outside [A-Za-z0-9_.-]: U+0430"
    );
}

/// A name that is this run's token is captured `[redacted]` and left out of the judgement
/// (the marker is not the server's spelling); the token's characters appear nowhere.
#[test]
fn a_name_that_is_the_token_is_not_judged() {
    let tok = "Zq7Kp2Lm9Xw4+Rt8Vn3Bc6Hj1Yd5Fg0Ss";
    let p = audit_names(&[tok, &format!("a {tok}")], &[tok]);
    assert_eq!(
        p.summary(),
        "a [redacted]: characters outside [A-Za-z0-9_.-]: ' '"
    );
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

/// Nullable primitives carry a header (a null argument sends none, which the spec's
/// `headers.param-null-or-absent` makes the server accept), however the schema spells them;
/// other types are named correctly in the message.
#[test]
fn nullable_primitives_carry_a_header_and_other_types_are_named() {
    let run = |prop: Value| {
        let mut p = Problems::default();
        let mut prop = prop;
        prop["x-mcp-header"] = json!("Region");
        x_mcp_headers(
            "t",
            &json!({"inputSchema": {"type": "object", "properties": {"region": prop}}}),
            &mut p,
        );
        p
    };
    for ok in [
        json!({"type": "string"}),
        json!({"type": "integer"}),
        json!({"type": "boolean"}),
        json!({"type": ["string", "null"]}),
        json!({"type": ["null", "integer"]}),
        json!({"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}),
        json!({"oneOf": [{"type": "boolean"}, {"type": "null"}]}),
        json!({"anyOf": [{"type": "string", "maxLength": 8}, {"type": "null"}]}),
        json!({"enum": ["eu", "us"]}),
        json!({"const": 3}),
    ] {
        let p = run(ok.clone());
        assert!(p.is_empty(), "{ok}: {}", p.summary());
    }
    for (bad, words) in [
        (json!({}), "with no declared type"),
        (json!({"type": "number"}), "of type number"),
        (json!({"type": ["number", "null"]}), "of type number"),
        (json!({"type": "null"}), "of type null"),
        (
            json!({"type": ["string", "integer"]}),
            "of types string or integer",
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "object"}]}),
            "of types string or object",
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"$ref": "#/$defs/X"}]}),
            "of types string or unspecified",
        ),
        (
            json!({"type": "array", "items": {"type": "string"}}),
            "of type array",
        ),
    ] {
        let p = run(bad.clone());
        assert_eq!(p.worst(), Some(Severity::Medium), "{bad}");
        let s = p.summary();
        assert!(
            s.contains(&format!("x-mcp-header \"Region\" at .region is on a property {words} (string, integer or boolean only, optionally nullable: a null or absent argument sends no header)")),
            "{bad}: {s}"
        );
        assert!(!s.contains("unspecified)"), "{s}");
    }
}
