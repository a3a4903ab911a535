//! The README's code map is true: generated `vantage.v1` types appear only where it says,
//! and its finding table is the catalogue.

use std::path::{Path, PathBuf};

/// Where generated gRPC types may appear in the production sources (README, Architecture).
const PB_FILES: &[&str] = &[
    "agent/src/client.rs",
    "agent/src/convert.rs",
    "agent/src/stop.rs",
    "coordinator/src/fleet/service.rs",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

#[test]
fn generated_types_appear_only_where_the_codemap_says() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["agent/src", "coordinator/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 40,
        "the scan found the sources: {}",
        files.len()
    );
    let mut speaking: Vec<String> = files
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("pb::") || text.contains("vantage_proto")
        })
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    speaking.sort();
    assert_eq!(speaking, PB_FILES);
    let readme = readme();
    for file in PB_FILES {
        assert!(
            readme.contains(file),
            "README's code map does not name {file}"
        );
    }
}

#[test]
fn the_readme_finding_table_is_the_catalogue() {
    let readme = readme();
    let (begin, end) = ("<!-- findings:begin -->\n", "<!-- findings:end -->");
    let start = readme.find(begin).expect("README has the findings markers") + begin.len();
    let stop = readme[start..].find(end).expect("the end marker") + start;
    assert!(
        readme[start..stop] == vantage_coordinator::explain::table(),
        "README.md's finding table is stale; replace it with the output of `cargo run -q --bin vantage -- explain --table`"
    );
}
