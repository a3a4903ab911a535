//! No import circles between the modules of the coordinator and of the fixture crate. The
//! module tree is read from `lib.rs` and `main.rs` (and `fixture/src/lib.rs`) as rustc reads
//! it (`mod x;`, `#[path]`); each file belongs to its top-level module (`checks/dispatch.rs`
//! is `lib::checks`); a `crate::x` reference (also inside `use crate::{x, y}`) is an edge to
//! that crate's module `x`, and the binary's `vantage_coordinator::x` one to the library's.
//! Test code (`#[cfg(test)]` modules) is left out: a test may use any helper; the production
//! modules must point one way. The coordinator's library never names the fixture crate: only
//! the binary serves it (`vantage demo`, `vantage fixture`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A `mod NAME;` (false) or `mod NAME {` (true) line.
fn mod_decl(line: &str) -> Option<(&str, bool)> {
    let mut l = line.trim_start();
    if let Some(rest) = l.strip_prefix("pub") {
        let rest = rest.trim_start();
        l = match rest.strip_prefix('(') {
            Some(r) => r.split_once(')')?.1.trim_start(),
            None => rest,
        };
    }
    let rest = l.strip_prefix("mod ")?.trim_start();
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    let (name, tail) = rest.split_at(end);
    match tail.trim_start().chars().next()? {
        ';' => Some((name, false)),
        '{' => Some((name, true)),
        _ => None,
    }
}

fn is_attribute(line: &str) -> bool {
    line.trim_start().starts_with("#[")
}

/// The text without its `#[cfg(test)]` modules (inline ones and `mod x;` declarations).
fn strip_tests(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "#[cfg(test)]" {
            let mut j = i + 1;
            while j < lines.len() && is_attribute(lines[j]) {
                j += 1;
            }
            match lines.get(j).and_then(|l| mod_decl(l)) {
                Some((_, true)) => {
                    let mut depth = 0i64;
                    let mut k = j;
                    loop {
                        depth += lines[k].matches('{').count() as i64;
                        depth -= lines[k].matches('}').count() as i64;
                        k += 1;
                        if depth <= 0 || k == lines.len() {
                            break;
                        }
                    }
                    i = k;
                    continue;
                }
                Some((_, false)) => {
                    i = j + 1;
                    continue;
                }
                None => {}
            }
        }
        out.push(lines[i]);
        i += 1;
    }
    out.join("\n")
}

/// The files of the modules `path` declares, with their names.
fn children(path: &Path, text: &str) -> Vec<(String, PathBuf)> {
    let dir = path.parent().unwrap();
    let base = path.file_name().unwrap().to_string_lossy();
    let sub = if ["mod.rs", "lib.rs", "main.rs"].contains(&base.as_ref()) {
        dir.to_path_buf()
    } else {
        dir.join(base.trim_end_matches(".rs"))
    };
    let mut out = Vec::new();
    let mut explicit: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("#[path = \"") {
            explicit = rest.split_once('"').map(|(p, _)| p.to_string());
            continue;
        }
        if let Some((name, false)) = mod_decl(line) {
            let file = match explicit.take() {
                Some(p) => dir.join(p),
                None if sub.join(format!("{name}.rs")).is_file() => sub.join(format!("{name}.rs")),
                None => sub.join(name).join("mod.rs"),
            };
            out.push((name.to_string(), file));
        }
        if !is_attribute(line) {
            explicit = None;
        }
    }
    out
}

/// The first identifier of each top-level item of a `{a, b::c, d as e}` group.
fn group_heads(group: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut depth = 0;
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        items.last_mut().unwrap().push(c);
    }
    items
        .iter()
        .filter_map(|i| {
            let i = i.trim_start();
            let end = i
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(i.len());
            (end > 0).then(|| i[..end].to_string())
        })
        .collect()
}

/// The module names `text` reaches through `prefix::` (`crate` or `vantage_coordinator`).
fn references(text: &str, prefix: &str) -> BTreeSet<String> {
    let needle = format!("{prefix}::");
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices(&needle) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + needle.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += i32::from(c == '{') - i32::from(c == '}');
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            out.extend(group_heads(&group[..end]));
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if end > 0 {
                out.insert(rest[..end].to_string());
            }
        }
    }
    out
}

/// The graph of the top-level modules of the coordinator's library and binary and of the
/// fixture crate, how many files it read, and the modules (`lib::x`, `bin::y`) whose
/// production code names `vantage_fixture`.
fn module_graph() -> (Graph, usize, BTreeSet<String>) {
    let src = src();
    let fixture = src.join("../../fixture/src/lib.rs");
    // (crate, its top-level modules, file -> (top module, text))
    let mut crates = Vec::new();
    let mut roots = Vec::new();
    for (krate, root) in [
        ("lib", src.join("lib.rs")),
        ("bin", src.join("main.rs")),
        ("fixture", fixture),
    ] {
        let text = strip_tests(&std::fs::read_to_string(&root).unwrap());
        roots.push((krate, text.clone()));
        let mut tops = BTreeSet::new();
        let mut files = Vec::new();
        let mut todo: Vec<(String, PathBuf)> = children(&root, &text);
        tops.extend(todo.iter().map(|(n, _)| n.clone()));
        while let Some((top, file)) = todo.pop() {
            let text = strip_tests(&std::fs::read_to_string(&file).unwrap_or_else(|e| {
                panic!("{}: {e}", file.display());
            }));
            todo.extend(
                children(&file, &text)
                    .into_iter()
                    .map(|(_, f)| (top.clone(), f)),
            );
            files.push((top, text));
        }
        crates.push((krate, tops, files));
    }
    let lib_tops = crates[0].1.clone();
    let mut graph = Graph::new();
    let mut read = 0;
    let mut naming_fixture = BTreeSet::new();
    for (krate, text) in &roots {
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        if !references(&code, "vantage_fixture").is_empty() {
            naming_fixture.insert(format!("{krate}::(root)"));
        }
    }
    for (krate, tops, files) in &crates {
        for (top, text) in files {
            read += 1;
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let from = format!("{krate}::{top}");
            let node = graph.entry(from.clone()).or_default();
            for m in references(&code, "crate") {
                if tops.contains(&m) && m != *top {
                    node.insert(format!("{krate}::{m}"));
                }
            }
            if !references(&code, "vantage_fixture").is_empty() {
                naming_fixture.insert(from.clone());
            }
            if *krate == "bin" {
                for m in references(&code, "vantage_coordinator") {
                    if lib_tops.contains(&m) {
                        node.insert(format!("lib::{m}"));
                    }
                }
            }
        }
    }
    (graph, read, naming_fixture)
}

/// A circle of `graph`, as the path that closes it, if there is one.
fn find_circle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_coordinator_modules_import_each_other_without_circles() {
    let (graph, files, _) = module_graph();
    assert!(files > 40, "the walk found the sources: {files}");
    // The walk sees real edges, the binary's into the library too.
    for (from, to) in [
        ("lib::api", "lib::checks"),
        ("lib::schedule", "lib::checks"),
        ("lib::checks", "lib::merge"),
        ("bin::cli", "bin::output"),
        ("bin::remote", "lib::api"),
        ("fixture::mcp", "fixture::auth"),
        ("fixture::auth", "fixture::ctx"),
        ("fixture::surface", "fixture::ctx"),
        ("fixture::hostile", "fixture::server"),
    ] {
        assert!(
            graph.get(from).is_some_and(|t| t.contains(to)),
            "{from} -> {to} is not in the graph: {graph:#?}"
        );
    }
    if let Some(circle) = find_circle(&graph) {
        panic!(
            "an import circle between the modules: {}; move what both need into a module of its own",
            circle.join(" -> ")
        );
    }
}

#[test]
fn only_the_binary_serves_the_fixture() {
    let (graph, _, naming) = module_graph();
    assert!(
        graph.contains_key("fixture::server"),
        "the walk read the fixture crate: {graph:#?}"
    );
    let library: Vec<&String> = naming.iter().filter(|m| m.starts_with("lib::")).collect();
    assert!(
        library.is_empty(),
        "the coordinator's library names vantage_fixture in {library:?}; only the binary (`vantage demo`, `vantage fixture`) and tests may"
    );
    // The scan sees the binary's use of it.
    for m in ["bin::cli", "bin::args"] {
        assert!(naming.contains(m), "{m} names vantage_fixture: {naming:?}");
    }
}

#[test]
fn the_circle_finder_finds_circles_and_only_circles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    assert_eq!(
        find_circle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(
        find_circle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])),
        None
    );
    // A reference inside a group counts; a longer name ending in `crate` does not.
    assert_eq!(
        references(
            "use crate::{api::{self, Api}, checks};\nx.vantage_crate::z",
            "crate"
        ),
        BTreeSet::from(["api".to_string(), "checks".to_string()])
    );
    // Test modules are left out, the code after them is kept.
    let text = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n#[cfg(test)]\n#[path = \"x.rs\"]\nmod more;\nfn f() { crate::c::g() }";
    assert_eq!(
        references(&strip_tests(text), "crate"),
        BTreeSet::from(["a".to_string(), "c".to_string()])
    );
}
