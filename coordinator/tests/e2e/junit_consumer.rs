//! Every JUnit report the tests produce is read by real consumers: validated against the
//! Jenkins xUnit plugin's published schema (junit-10.xsd, fetched from PyPI as pytest's
//! source distribution ships it) with libxml2, and parsed by junitparser from PyPI, which
//! recounts every suite. `bash .ci/install-peers` installs all three into tests/junit/.venv.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

fn junit_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/junit")
}

/// Validate and parse `xml`; returns what the consumer saw (totals, suites, cases). Panics
/// with the consumer's message when the schema or the counts disagree.
pub fn consume(xml: &str) -> Value {
    static N: AtomicUsize = AtomicUsize::new(0);
    let py = junit_dir().join(".venv/bin/python");
    assert!(
        py.exists(),
        "the JUnit consumers are not installed ({}); run `bash .ci/install-peers`",
        py.display()
    );
    let path = std::env::temp_dir().join(format!(
        "vantage-junit-{}-{}.xml",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::write(&path, xml).expect("write the report");
    let out = std::process::Command::new(py)
        .arg(junit_dir().join("consume.py"))
        .arg(&path)
        .output()
        .expect("the consumer runs");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "JUnit rejected by its consumers: {}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the consumer prints JSON")
}

/// (suite, case name) of every case with `result`, sorted.
pub fn cases_with(seen: &Value, result: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = seen["suites"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| {
            let suite = s["name"].as_str().unwrap_or("").to_string();
            s["cases"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(move |c| c["result"] == result)
                .map(move |c| (suite.clone(), c["name"].as_str().unwrap_or("").to_string()))
        })
        .collect();
    v.sort();
    v
}
