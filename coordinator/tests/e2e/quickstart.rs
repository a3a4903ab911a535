//! The README's fleet quick start, run as written: the block after the `<!-- quickstart`
//! marker is extracted from README.md (never copied here) and run by bash, with the built
//! binaries on PATH, in a network namespace of its own (so the quick start's fixed loopback
//! ports cannot clash with anything else on the machine). It must end in a merged report
//! from both regions, and leave no process and no token file behind.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::procs::{bin, Proc};
use crate::support::assert_valid;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The quick-start block of README.md.
fn quickstart() -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let at = readme
        .find("<!-- quickstart")
        .expect("README.md has the quick-start marker");
    let rest = &readme[at..];
    let start = rest.find("```sh\n").expect("a sh block after the marker") + "```sh\n".len();
    let len = rest[start..].find("```").expect("the block ends");
    rest[start..start + len].to_string()
}

/// The shell and everything it started: one process group, ended on drop.
struct Group {
    proc: Proc,
    dir: PathBuf,
}

impl Drop for Group {
    fn drop(&mut self) {
        // The group is the one this test created (process_group(0) below): its id is the
        // shell's pid. TERM first so the coordinator can remove its token file, then KILL.
        let pgid = format!("-{}", self.proc.child.id());
        for sig in ["-TERM", "-KILL"] {
            let _ = Command::new("kill").args([sig, "--", &pgid]).status();
            std::thread::sleep(Duration::from_millis(300));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn the_readme_still_opens_with_its_two_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme.find("```sh\n").expect("a first block") + "```sh\n".len();
    let first = &readme[start..start + readme[start..].find("```").unwrap()];
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 2, "{first}");
    assert!(
        lines[0].starts_with("cargo run --release --bin vantage -- demo"),
        "{first}"
    );
    assert!(lines[1].starts_with("bash .ci/run"), "{first}");
    assert!(
        start < readme.find("## ").unwrap(),
        "before the first section"
    );
}

#[test]
fn the_readme_quick_start_works_as_written() {
    let block = quickstart();
    for needed in [
        "vantage serve",
        "vantage-agent",
        "vantage check",
        "--coordinator",
    ] {
        assert!(
            block.contains(needed),
            "the quick start lacks `{needed}`:\n{block}"
        );
    }
    if let Err(why) = crate::support::shared::can_unshare() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the README quick start: it needs a network namespace (root): {why}"
        );
        eprintln!("SKIPPED: the README quick start needs a network namespace (root): {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("vantage-quickstart-{}", std::process::id()));
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    std::os::unix::fs::symlink(repo().join("coordinator"), dir.join("coordinator")).unwrap();
    let bins = bin("vantage-agent").parent().unwrap().to_path_buf();
    assert!(bins.join("vantage").exists());
    let script = format!(
        "set -e\nip link set lo up\ntrap 'rc=$?; kill $(jobs -p) 2>/dev/null || true; wait; exit $rc' EXIT\n{block}"
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["--net", "bash", "-c", &script])
        .current_dir(&dir)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bins.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("XDG_RUNTIME_DIR", &runtime)
        .process_group(0);
    for var in [
        "VANTAGE_API_TOKEN",
        "VANTAGE_AGENT_TOKEN",
        "VANTAGE_LOG",
        "VANTAGE_LOG_FORMAT",
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ] {
        cmd.env_remove(var);
    }
    let mut group = Group {
        proc: Proc::spawn(cmd),
        dir: dir.clone(),
    };
    let status = group.proc.wait_exit(Duration::from_secs(180));
    let out = group.proc.output();
    assert!(status.is_some(), "the quick start did not finish:\n{out}");
    assert!(status.unwrap().success(), "the quick start failed:\n{out}");
    assert!(
        out.contains(
            "pass for http://127.0.0.1:3000/mcp: report written to vantage-lab/report.json"
        ),
        "{out}"
    );
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("vantage-lab/report.json")).unwrap(),
    )
    .unwrap();
    assert_valid(&report);
    let regions = crate::support::regions_of(&report);
    assert_eq!(
        regions,
        [
            ("eu".into(), "complete".into()),
            ("us".into(), "complete".into())
        ],
        "{report:#}"
    );
    assert_eq!(report["decision"], "pass", "{report:#}");
    assert_eq!(report["target"], "http://127.0.0.1:3000/mcp");
    // The coordinator drained and exited on `kill`, removing its generated token.
    assert!(out.contains("API token written to"), "{out}");
    assert!(
        !runtime.join("vantage").join("api-token-8080").exists(),
        "the generated token file is removed at exit:\n{out}"
    );
}
