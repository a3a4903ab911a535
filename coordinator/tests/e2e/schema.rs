//! The shipped JSON Schema is the one derived from the report types.

#[test]
fn the_shipped_schema_matches_the_report_types() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/report.v1.json");
    let shipped: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema file")).expect("JSON");
    let derived = vantage_coordinator::report::json_schema();
    assert!(
        shipped == derived,
        "coordinator/schema/report.v1.json is stale; regenerate it with `cargo run -q --bin vantage -- schema > coordinator/schema/report.v1.json`"
    );
}

#[test]
fn the_schema_rejects_a_report_with_a_bad_decision() {
    let schema = vantage_coordinator::report::json_schema();
    let v = jsonschema::validator_for(&schema).unwrap();
    let bad = serde_json::json!({
        "schema": "vantage.report/v1", "id": "x", "target": "t", "started_at": "s", "duration_ms": 1,
        "decision": "maybe", "reason": "", "era": "modern", "regions": [], "findings": []
    });
    assert!(!v.is_valid(&bad));
    let mut good = bad.clone();
    good["decision"] = "pass".into();
    assert!(
        v.is_valid(&good),
        "{:?}",
        v.iter_errors(&good)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
}
