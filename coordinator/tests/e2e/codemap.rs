//! The README's code map is true: generated `vantage.v1` types appear only where it says,
//! and its finding table is the catalogue.

use std::path::{Path, PathBuf};

/// Where generated gRPC types may appear in the production sources (README, Architecture).
const PB_FILES: &[&str] = &[
    "agent/src/client.rs",
    "agent/src/convert.rs",
    "agent/src/convert_tests.rs",
    "agent/src/stop.rs",
    "coordinator/src/fleet/revoke_tests.rs",
    "coordinator/src/fleet/service.rs",
    "coordinator/src/fleet/unusable_tests.rs",
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
    for dir in ["agent/src", "coordinator/src", "fixture/src"] {
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
    // The text scan holds only while the wire types cannot be named any other way: no
    // re-export, no alias but `pb`, no dependency renamed away from `vantage_proto`.
    let mut leaks = Vec::new();
    for p in &files {
        let name = p
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for why in pb_leaks(&std::fs::read_to_string(p).unwrap()) {
            leaks.push(format!("{name}: {why}"));
        }
    }
    for member in ["agent", "coordinator", "fixture"] {
        let manifest = std::fs::read_to_string(root.join(member).join("Cargo.toml")).unwrap();
        if manifest.contains("package = \"vantage-proto\"") {
            leaks.push(format!(
                "{member}/Cargo.toml renames the vantage-proto dependency"
            ));
        }
    }
    assert!(leaks.is_empty(), "wire types named another way: {leaks:#?}");
    let readme = readme();
    for file in PB_FILES {
        assert!(
            readme.contains(file),
            "README's code map does not name {file}"
        );
    }
}

/// The statements of `text` that would let the wire types be named without `pb::` or
/// `vantage_proto`: a public `use` (or type alias) of `pb` or of the proto crate, an alias of
/// the proto crate but `pb`, an `extern crate` of it. Line comments are skipped.
fn pb_leaks(text: &str) -> Vec<String> {
    let idents = |s: &str| -> Vec<String> {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut out = Vec::new();
    let mut statement = String::new();
    for line in text.lines() {
        let t = line.trim();
        if statement.is_empty() {
            let words = idents(t);
            let (vis, rest) = match words.first().map(String::as_str) {
                Some("pub") => (true, t.trim_start_matches("pub").trim_start()),
                _ => (false, t),
            };
            let rest = if vis && rest.starts_with('(') {
                rest.split_once(')').map_or(rest, |(_, r)| r).trim_start()
            } else {
                rest
            };
            let starts = rest.starts_with("use ")
                || rest.starts_with("extern crate ")
                || (vis && rest.starts_with("type "));
            if t.starts_with("//") || !starts {
                continue;
            }
        }
        statement.push(' ');
        statement.push_str(t);
        if !t.contains(';') {
            continue;
        }
        let s = std::mem::take(&mut statement);
        let s = s.trim();
        let words = idents(s);
        let proto = words.iter().any(|w| w == "vantage_proto");
        let wire = proto || words.iter().any(|w| w == "pb");
        if words.first().is_some_and(|w| w == "pub") && wire {
            out.push(format!("re-exports the wire types: `{s}`"));
        }
        if proto && words.first().is_some_and(|w| w == "extern") {
            out.push(format!("names the proto crate another way: `{s}`"));
        }
        if proto {
            for pair in words.windows(2) {
                if pair[0] == "as" && pair[1] != "pb" {
                    out.push(format!("aliases the proto crate as `{}`: `{s}`", pair[1]));
                }
            }
        }
    }
    out
}

/// The leak scan catches each way around the text scan, and none of the imports in use.
#[test]
fn the_codemap_scan_catches_wire_types_named_another_way() {
    for bad in [
        "pub use vantage_proto::v1 as wire;",
        "pub use vantage_proto::v1;",
        "pub(crate) use vantage_proto::v1::Job as WireJob;",
        "pub(crate) use pb::Job;",
        "pub use crate::client::pb;",
        "pub use super::{\n    pb,\n    other,\n};",
        "pub type WireJob = pb::Job;",
        "extern crate vantage_proto as wire;",
        "use vantage_proto::v1 as wire;",
        "use vantage_proto::{v1 as wire};",
    ] {
        assert!(!pb_leaks(bad).is_empty(), "not caught: {bad}");
    }
    for good in [
        "use vantage_proto::v1 as pb;",
        "use vantage_proto::v1::fleet_client::FleetClient;",
        "use crate::convert::{region_to_pb, JobError};",
        "// pub use vantage_proto::v1 as wire;",
        "pub use crate::job::Job;",
        "pub fn job_to_pb(job: &Job) -> pb::Job {",
    ] {
        assert_eq!(pb_leaks(good), Vec::<String>::new(), "{good}");
    }
}

/// The workspace's members, as the root `Cargo.toml` lists them.
fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("Cargo.toml lists the workspace members on one line");
    let list = line.split_once('[').unwrap().1.split_once(']').unwrap().0;
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

#[test]
fn every_crate_is_in_the_codemap_and_the_image() {
    let members = members();
    assert!(
        members.len() >= 4 && members.iter().any(|m| m == "fixture"),
        "the workspace members were read: {members:?}"
    );
    let readme = readme();
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    for member in &members {
        assert!(
            readme.contains(&format!("\n{member}/ ")),
            "README's code map has no `{member}/` entry"
        );
        assert!(
            dockerfile.contains(&format!("\nCOPY {member} {member}\n")),
            "the Dockerfile's build stage does not copy {member}/ (cargo build --locked needs every workspace member)"
        );
    }
    // The fixture's modules are in its section of the map, each by name.
    let start = readme.find("\nfixture/ ").unwrap();
    let end = start + 1 + readme[start + 1..].find("\ncoordinator/ ").unwrap();
    let section = &readme[start..end];
    let src = root().join("fixture/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 5, "the scan found the fixture: {files:?}");
    for file in files {
        // `mcp` for mcp.rs, `lab` for lab/mod.rs, `lab/dns` for lab/dns.rs.
        let rel = file.strip_prefix(&src).unwrap().with_extension("");
        let rel = rel.to_string_lossy().replace('\\', "/");
        let name = rel.strip_suffix("/mod").unwrap_or(&rel);
        let named = if name.contains('/') {
            section.contains(&format!(" {name} "))
        } else {
            section.contains(&format!("\n  {name} "))
        };
        assert!(
            named || name == "lib",
            "README's code map does not name fixture/src/{rel}.rs (as `{name}`)"
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
