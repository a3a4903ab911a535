//! What differs from run to run, and only that, is masked out of a snapshot report.
//!
//! Each mask is narrow on purpose: a mask that hid real content would make the snapshot a
//! hollow proof. Masked: the report's id and start time; every `duration_ms` and
//! `phases_ms` (wall clock); the digits of an ephemeral loopback port (`127.0.0.1:N`,
//! `[::1]:N`); the elapsed milliseconds of a connection attempt (`connected in N ms`,
//! `refused after N ms (`), and how long a listen stream stayed open before it ended
//! (`stream ended N ms after its`, `with a final result N ms after its`), the only elapsed
//! times the engine writes into text; the
//! per-process garbage token (`vantage-garbage-N`); and, in the per-connection-variance case
//! alone, the fixture's tool named for the client's port (`session_N`) with the digests
//! computed over that name. Everything else (ids, outcomes, severities, causes, expected and
//! observed text, stacks, list counts, bytes and every other digest) is kept.

use serde_json::{Map, Value};

/// The case whose fixture names a tool for the client's ephemeral port.
pub const PER_CONNECTION_CASE: &str = "fixture-per-connection-variance";

/// Replace each run of digits right after `before` and followed by `after` (anything, when
/// `after` is empty) with `with`; digits not followed by `after` are kept.
fn mask_digits(text: &str, before: &str, after: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(before) {
        let (head, tail) = rest.split_at(at + before.len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(after) {
            out.push_str(with);
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

fn mask(s: &str, per_connection: bool) -> String {
    let s = mask_digits(s, "127.0.0.1:", "", "PORT");
    let s = mask_digits(&s, "[::1]:", "", "PORT");
    let s = mask_digits(&s, "vantage-garbage-", "", "N");
    // agent/src/probe/connect.rs: "{addr} connected in {ms} ms", "{addr} {cause} after {ms} ms ({msg})".
    let s = mask_digits(&s, "connected in ", " ms", "N");
    let s = mask_digits(&s, " after ", " ms (", "N");
    // agent/src/probe/listing/listen.rs: how long a listen stream stayed open before it
    // ended, or closed with a final result, inside the listen window (measured).
    let s = mask_digits(&s, "stream ended ", " ms after its ", "N");
    let s = mask_digits(&s, "with a final result ", " ms after its ", "N");
    if per_connection {
        mask_digits(&s, "session_", "", "PORT")
    } else {
        s
    }
}

fn is_port_tool(item: &Value) -> bool {
    item.get("name")
        .and_then(Value::as_str)
        .and_then(|n| n.strip_prefix("session_"))
        .is_some_and(|port| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
}

/// A surface list that holds the tool named for the client's port: that item's digest and the
/// list's digests are computed over the port, so they are masked; the other items' are kept.
fn mask_port_list(list: &mut Map<String, Value>) {
    let Some(Value::Array(items)) = list.get_mut("items") else {
        return;
    };
    let mut found = false;
    for item in items.iter_mut().filter(|i| is_port_tool(i)) {
        item["digest"] = Value::from("DIGEST-OVER-PORT");
        found = true;
    }
    if found {
        for key in ["digest", "set_digest"] {
            if list.contains_key(key) {
                list.insert(key.into(), Value::from("DIGEST-OVER-PORT"));
            }
        }
    }
}

fn walk(v: &mut Value, per_connection: bool) {
    match v {
        Value::Object(map) => {
            map.remove("duration_ms");
            map.remove("phases_ms");
            if per_connection {
                mask_port_list(map);
            }
            // Sorted keys whatever serde_json's map is (with `preserve_order` it keeps insertion).
            let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (key, mut child) in entries {
                walk(&mut child, per_connection);
                map.insert(key, child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| walk(i, per_connection)),
        Value::String(s) => *s = mask(s, per_connection),
        _ => {}
    }
}

/// The report of case `name` as its snapshot file holds it: masked, pretty, sorted keys,
/// with a trailing newline.
pub fn snapshot_text(name: &str, mut report: Value) -> String {
    if let Value::Object(top) = &mut report {
        top.remove("id");
        top.remove("started_at");
    }
    walk(&mut report, name == PER_CONNECTION_CASE);
    serde_json::to_string_pretty(&report).expect("a report serialises") + "\n"
}

#[test]
fn the_masks_take_only_what_varies() {
    let s = "127.0.0.1:4711 connected in 12 ms; [::1]:80 refused after 3 ms (os error 111)";
    assert_eq!(
        mask(s, false),
        "127.0.0.1:PORT connected in N ms; [::1]:PORT refused after N ms (os error 111)"
    );
    assert_eq!(
        mask("the stream ended 3 ms after its acknowledgement, inside the 250 ms listen window; closed with a final result 51 ms after its first event", false),
        "the stream ended N ms after its acknowledgement, inside the 250 ms listen window; closed with a final result N ms after its first event"
    );
    // A wait the run was configured with, a byte count and a tool name stay as they are.
    for kept in [
        "never answered within 800 ms",
        "open 250 ms after its acknowledgement (the listen window watched",
        "the connection ended after 12 bytes of the body",
        "added session_1",
        "127.0.0.1 is loopback",
    ] {
        assert_eq!(mask(kept, false), kept);
    }
    assert_eq!(
        mask("added session_59760; removed session_59700", true),
        "added session_PORT; removed session_PORT"
    );
}

#[test]
fn only_the_list_with_the_port_tool_loses_its_digests() {
    let report = serde_json::json!({
        "id": "r-1", "started_at": "2026-12-02T00:00:00Z", "duration_ms": 5,
        "regions": [{"surface": {"lists": [
            {"kind": "tools", "digest": "d1", "set_digest": "s1",
             "items": [{"name": "session_4711", "digest": "a"}, {"name": "echo", "digest": "b"}]},
            {"kind": "prompts", "digest": "d2", "set_digest": "s2",
             "items": [{"name": "greet", "digest": "c"}]}
        ]}}]
    });
    let text = snapshot_text(PER_CONNECTION_CASE, report.clone());
    let v: Value = serde_json::from_str(&text).unwrap();
    let lists = &v["regions"][0]["surface"]["lists"];
    assert_eq!(lists[0]["digest"], "DIGEST-OVER-PORT");
    assert_eq!(lists[0]["set_digest"], "DIGEST-OVER-PORT");
    assert_eq!(lists[0]["items"][0]["name"], "session_PORT");
    assert_eq!(lists[0]["items"][0]["digest"], "DIGEST-OVER-PORT");
    assert_eq!(lists[0]["items"][1]["digest"], "b");
    assert_eq!(lists[1]["digest"], "d2");
    assert!(v.get("id").is_none() && v.get("started_at").is_none());
    assert!(v.get("duration_ms").is_none());
    // In any other case the same names and digests are content, kept whole.
    let other: Value = serde_json::from_str(&snapshot_text("fixture-clean", report)).unwrap();
    assert_eq!(other["regions"][0]["surface"]["lists"][0]["digest"], "d1");
    assert_eq!(
        other["regions"][0]["surface"]["lists"][0]["items"][0]["name"],
        "session_4711"
    );
}
