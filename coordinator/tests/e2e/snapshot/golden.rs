//! The checked-in snapshots (`coordinator/tests/snapshots/NAME.json`): compared with a fresh
//! run, or rewritten with `VANTAGE_SNAPSHOT_UPDATE=1`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How to rewrite the snapshots; named in every failure.
pub const UPDATE: &str =
    "VANTAGE_SNAPSHOT_UPDATE=1 cargo test -p vantage-coordinator --test e2e snapshot";

/// How many differing files get a diff in the failure (all are named).
const DIFFS_SHOWN: usize = 3;
/// How many lines of diff one file shows at most.
const DIFF_LINES: usize = 40;
/// Lines of context around a change.
const CONTEXT: usize = 2;

pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// The `*.json` files in `dir`, by case name.
fn checked_in(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path = entry.expect("the snapshot directory lists").path();
        if let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
        {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{} is not readable: {e}", path.display()));
            files.insert(name.to_string(), text);
        }
    }
    files
}

/// Write every snapshot to `dir` and remove the files of cases that are gone.
pub fn update(dir: &Path, reports: &BTreeMap<String, String>) {
    std::fs::create_dir_all(dir).expect("the snapshot directory can be created");
    for name in checked_in(dir).keys().filter(|n| !reports.contains_key(*n)) {
        std::fs::remove_file(dir.join(format!("{name}.json"))).expect("remove a stale snapshot");
    }
    for (name, text) in reports {
        std::fs::write(dir.join(format!("{name}.json")), text).expect("write a snapshot");
    }
    eprintln!(
        "wrote {} snapshots to {}: review them with `git diff`",
        reports.len(),
        dir.display()
    );
}

/// `None` when `dir` holds exactly `reports`; otherwise the failure message: every case
/// without a file, every file without a case, every differing file, a diff of the first few,
/// and the command that rewrites them.
pub fn compare(dir: &Path, reports: &BTreeMap<String, String>) -> Option<String> {
    let files = checked_in(dir);
    let cases: BTreeSet<&String> = reports.keys().collect();
    let on_disk: BTreeSet<&String> = files.keys().collect();
    let no_file: Vec<&&String> = cases.difference(&on_disk).collect();
    let no_case: Vec<&&String> = on_disk.difference(&cases).collect();
    let differing: Vec<&String> = cases
        .intersection(&on_disk)
        .filter(|n| reports[**n] != files[**n])
        .copied()
        .collect();
    if no_file.is_empty() && no_case.is_empty() && differing.is_empty() {
        return None;
    }
    let mut msg = format!(
        "the reports differ from the snapshots in {}:\n",
        dir.display()
    );
    for name in &no_file {
        let _ = writeln!(msg, "  {name}.json: a case with no snapshot file");
    }
    for name in &no_case {
        let _ = writeln!(
            msg,
            "  {name}.json: a snapshot file with no case (remove it, or restore the case)"
        );
    }
    for name in &differing {
        let _ = writeln!(msg, "  {name}.json: differs");
    }
    for name in differing.iter().take(DIFFS_SHOWN) {
        let _ = write!(
            msg,
            "\n--- {name}.json (checked in)\n+++ {name}.json (this run)\n{}",
            unified(&files[*name], &reports[*name])
        );
    }
    if differing.len() > DIFFS_SHOWN {
        let _ = writeln!(
            msg,
            "\n({} more differing files not shown)",
            differing.len() - DIFFS_SHOWN
        );
    }
    let _ = write!(
        msg,
        "\nIf the change is intended, rewrite the snapshots with\n  {UPDATE}\nthen review \
         `git diff coordinator/tests/snapshots` and commit them with the change. (Build the \
         binaries first if you changed the agent: cargo build --workspace --bins.)"
    );
    Some(msg)
}

enum Op<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// A line diff (longest common subsequence) of `old` and `new`.
fn ops<'a>(old: &'a [&'a str], new: &'a [&'a str]) -> Vec<Op<'a>> {
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            out.push(Op::Same(old[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(Op::Removed(old[i]));
            i += 1;
        } else {
            out.push(Op::Added(new[j]));
            j += 1;
        }
    }
    out
}

/// The changed lines of `old` -> `new` with `CONTEXT` lines around them, `@@ line N` at
/// each hunk (N in `old`), at most `DIFF_LINES` lines.
pub fn unified(old: &str, new: &str) -> String {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let ops = ops(&old, &new);
    let changed: Vec<bool> = ops.iter().map(|o| !matches!(o, Op::Same(_))).collect();
    let near = |k: usize| {
        changed[k.saturating_sub(CONTEXT)..(k + CONTEXT + 1).min(changed.len())]
            .iter()
            .any(|c| *c)
    };
    let (mut out, mut lines, mut old_line, mut in_hunk) = (String::new(), 0, 0, false);
    for (k, op) in ops.iter().enumerate() {
        if !matches!(op, Op::Added(_)) {
            old_line += 1;
        }
        if !near(k) {
            in_hunk = false;
            continue;
        }
        if lines == DIFF_LINES {
            out.push_str("  ...\n");
            break;
        }
        if !in_hunk {
            let _ = writeln!(out, "@@ line {old_line}");
            in_hunk = true;
        }
        let (sign, text) = match op {
            Op::Same(t) => (' ', t),
            Op::Removed(t) => ('-', t),
            Op::Added(t) => ('+', t),
        };
        let _ = writeln!(out, "{sign}{text}");
        lines += 1;
    }
    out
}

#[test]
fn the_diff_shows_the_changed_word_in_context() {
    let old = "a\nb\nc\n\"observed\": \"served\"\nd\ne\nf\ng\n";
    let new = "a\nb\nc\n\"observed\": \"answered\"\nd\ne\nf\ng\n";
    assert_eq!(
        unified(old, new),
        "@@ line 2\n b\n c\n-\"observed\": \"served\"\n+\"observed\": \"answered\"\n d\n e\n"
    );
    assert_eq!(unified(old, old), "");
}

#[test]
fn every_kind_of_mismatch_is_named_with_the_fix() {
    let dir = std::env::temp_dir().join(format!("vantage-golden-unit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("same.json"), "{}\n").unwrap();
    std::fs::write(dir.join("changed.json"), "{\n  \"a\": 1\n}\n").unwrap();
    std::fs::write(dir.join("orphan.json"), "{}\n").unwrap();
    let reports: BTreeMap<String, String> = [
        ("same", "{}\n"),
        ("changed", "{\n  \"a\": 2\n}\n"),
        ("new-case", "{}\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let msg = compare(&dir, &reports).expect("a mismatch");
    assert!(
        msg.contains("  new-case.json: a case with no snapshot file\n"),
        "{msg}"
    );
    assert!(
        msg.contains("  orphan.json: a snapshot file with no case"),
        "{msg}"
    );
    assert!(msg.contains("  changed.json: differs\n"), "{msg}");
    assert!(msg.contains("-  \"a\": 1\n+  \"a\": 2\n"), "{msg}");
    assert!(!msg.contains("same.json"), "{msg}");
    assert!(msg.contains(UPDATE), "{msg}");
    update(&dir, &reports);
    assert_eq!(compare(&dir, &reports), None);
    assert!(!dir.join("orphan.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
