//! The tool-surface lint: schemas compile, input is constrained (sane schemas clean, open
//! ones flagged), sizes against the thresholds.

use serde_json::json;

use super::*;

#[test]
fn schemas_compile_by_their_draft_and_never_fetch() {
    assert!(compile(&json!({"type": "object", "properties": {"a": {"type": "number"}}})).is_ok());
    assert!(compile(
        &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})
    )
    .is_ok());
    let bad = compile(&json!({"type": "object", "properties": {"a": {"type": "strin"}}}));
    assert!(bad.is_err(), "an unknown type name does not compile");
    let remote = compile(
        &json!({"type": "object", "properties": {"a": {"$ref": "http://198.51.100.1/s.json"}}}),
    );
    assert!(remote.unwrap_err().contains("not fetched"));
    assert!(
        compile(&json!({"$schema": "https://vantage.invalid/unknown", "type": "object"})).is_err()
    );
}

#[test]
fn identifier_words() {
    assert_eq!(words("filePath"), ["file", "path"]);
    assert_eq!(words("target_URL"), ["target", "url"]);
    assert_eq!(words("shell-cmd"), ["shell", "cmd"]);
    assert_eq!(words("pathology"), ["pathology"]);
}

#[test]
fn unconstrained_input_levels() {
    let run = |tool: Value| {
        let (mut low, mut info) = (Problems::default(), Problems::default());
        input_constrained("t", &tool, &mut low, &mut info);
        (low.worst(), info.worst())
    };
    // No parameters, closed: the spec's own example for a tool without arguments.
    assert_eq!(
        run(json!({"inputSchema": {"type": "object", "additionalProperties": false}})),
        (None, None)
    );
    // No parameters, open: accepts anything.
    assert_eq!(
        run(json!({"inputSchema": {"type": "object"}})).0,
        Some(Severity::Low)
    );
    assert_eq!(
        run(json!({"inputSchema": {"type": "object", "properties": {}}})).0,
        Some(Severity::Low)
    );
    // Declared properties, open: the SDK default, an observation only.
    assert_eq!(
        run(json!({"inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}})),
        (None, Some(Severity::Info))
    );
    // An unbounded command string.
    let cmd = json!({"inputSchema": {"type": "object", "additionalProperties": false,
        "properties": {"command": {"type": "string"}}}});
    assert_eq!(run(cmd).0, Some(Severity::Low));
    let bounded = json!({"inputSchema": {"type": "object", "additionalProperties": false,
        "properties": {"filePath": {"type": "string", "maxLength": 4096}, "note": {"type": "string"}}}});
    assert_eq!(run(bounded), (None, None));
}

/// Closed or bounded schemas come out clean; open ones are still flagged, with the
/// message that says why.
#[test]
fn sane_schemas_are_clean_and_open_ones_are_flagged() {
    let run = |schema: Value| {
        let (mut low, mut info) = (Problems::default(), Problems::default());
        input_constrained("t", &json!({"inputSchema": schema}), &mut low, &mut info);
        (low, info)
    };
    let closed_a = json!({"type": "object", "properties": {"a": {"type": "number"}},
        "required": ["a"], "additionalProperties": false});
    let closed_b = json!({"type": "object", "properties": {"b": {"type": "boolean"}},
        "required": ["b"], "additionalProperties": false});
    let sane: Vec<(&str, Value)> = vec![
        (
            "$ref to a closed object",
            json!({"type": "object", "$ref": "#/$defs/Args",
            "$defs": {"Args": closed_a.clone()}}),
        ),
        (
            "$ref through definitions",
            json!({"type": "object", "$ref": "#/definitions/Args",
            "definitions": {"Args": closed_a.clone()}}),
        ),
        (
            "allOf with unevaluatedProperties false",
            json!({"type": "object",
            "allOf": [{"properties": {"a": {"type": "number"}}}, {"properties": {"b": {"type": "string", "maxLength": 10}}}],
            "unevaluatedProperties": false}),
        ),
        (
            "allOf with a closed branch",
            json!({"type": "object", "allOf": [closed_a.clone()]}),
        ),
        (
            "oneOf of closed branches",
            json!({"type": "object", "oneOf": [closed_a.clone(), closed_b.clone()]}),
        ),
        (
            "anyOf of closed branches",
            json!({"type": "object", "anyOf": [closed_a.clone(), closed_b.clone()]}),
        ),
        (
            "maxProperties 0",
            json!({"type": "object", "maxProperties": 0}),
        ),
        (
            "a map of bounded strings",
            json!({"type": "object",
            "additionalProperties": {"type": "string", "maxLength": 256}}),
        ),
        (
            "properties and bounded extras",
            json!({"type": "object", "properties": {"a": {"type": "number"}},
            "additionalProperties": {"type": "integer"}}),
        ),
        (
            "unevaluatedProperties false alone",
            json!({"type": "object", "unevaluatedProperties": false}),
        ),
        (
            "additionalProperties false",
            json!({"type": "object", "additionalProperties": false}),
        ),
    ];
    for (what, schema) in sane {
        let (low, info) = run(schema);
        assert!(
            low.is_empty() && info.is_empty(),
            "{what}: {} / {}",
            low.summary(),
            info.summary()
        );
    }
    let any_input = "declares no properties and bounds no others";
    let open: Vec<(&str, Value, &str)> = vec![
        ("no properties", json!({"type": "object"}), any_input),
        (
            "empty properties",
            json!({"type": "object", "properties": {}}),
            any_input,
        ),
        (
            "additionalProperties true",
            json!({"type": "object", "additionalProperties": true}),
            any_input,
        ),
        (
            "additionalProperties {}",
            json!({"type": "object", "additionalProperties": {}}),
            any_input,
        ),
        (
            "maxProperties 3",
            json!({"type": "object", "maxProperties": 3}),
            any_input,
        ),
        (
            "$ref to an open object",
            json!({"type": "object", "$ref": "#/$defs/Args",
            "$defs": {"Args": {"type": "object"}}}),
            any_input,
        ),
        (
            "$ref to nothing",
            json!({"type": "object", "$ref": "#/$defs/Missing"}),
            any_input,
        ),
        (
            "a $ref cycle",
            json!({"type": "object", "$ref": "#"}),
            any_input,
        ),
        (
            "oneOf with an open branch",
            json!({"type": "object", "oneOf": [{"type": "object", "properties": {}}, {"type": "object"}]}),
            any_input,
        ),
        (
            "anyOf, one branch open",
            json!({"type": "object", "anyOf": [{"additionalProperties": false}, {"type": "object"}]}),
            any_input,
        ),
        (
            "a risky string behind a closed $ref",
            json!({"type": "object", "$ref": "#/$defs/Args",
            "$defs": {"Args": {"type": "object", "properties": {"command": {"type": "string"}}, "additionalProperties": false}}}),
            "string argument(s) command name a path, URL or command",
        ),
        (
            "a risky string in a closed oneOf branch",
            json!({"type": "object", "oneOf": [closed_a.clone(),
            {"properties": {"filePath": {"type": "string"}}, "additionalProperties": false}]}),
            "string argument(s) filePath name",
        ),
    ];
    for (what, schema, needle) in open {
        let (low, _) = run(schema);
        assert_eq!(low.worst(), Some(Severity::Low), "{what}");
        assert!(low.summary().contains(needle), "{what}: {}", low.summary());
    }
    // Properties from an open $ref target: declared, so only the info observation.
    let (low, info) = run(json!({"type": "object", "$ref": "#/$defs/Args",
        "$defs": {"Args": {"type": "object", "properties": {"a": {"type": "number"}}}}}));
    assert!(low.is_empty(), "{}", low.summary());
    assert_eq!(info.worst(), Some(Severity::Info));
}

#[test]
fn sizes_against_the_thresholds() {
    let mut p = Problems::default();
    let tool = json!({"description": "x".repeat(MAX_DESCRIPTION_BYTES + 1)});
    tool_size("big", &tool, 100, &mut p);
    tool_size("fat", &json!({}), MAX_TOOL_BYTES + 1, &mut p);
    tool_size("ok", &json!({"description": "fine"}), 200, &mut p);
    assert_eq!(p.worst(), Some(Severity::Low));
    assert!(p.summary().contains("big:") && p.summary().contains("fat:"));
    assert!(!p.summary().contains("ok:"));
}

/// A schema that fans out through `$ref` cycles is judged after a bounded number of visits
/// (open: what was not visited closes nothing), not after 100^8 of them.
#[test]
fn a_fanning_ref_cycle_costs_bounded_work() {
    let refs: Vec<Value> = (0..100).map(|_| json!({"$ref": "#"})).collect();
    let schema = json!({"type": "object", "allOf": refs.clone(), "anyOf": refs});
    let mut budget = MAX_VIEW_NODES;
    let v = view(&schema, &schema, 0, &mut budget);
    assert_eq!(budget, 0);
    assert!(!v.closed);
    let (mut low, mut info) = (Problems::default(), Problems::default());
    input_constrained("t", &json!({"inputSchema": schema}), &mut low, &mut info);
    assert!(
        low.summary().contains("accepts any input"),
        "{}",
        low.summary()
    );
}
