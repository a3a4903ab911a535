//! The behaviour snapshot (issue #14's proof that a refactor changes no report): every
//! fixture fault alone (without and, for the protected ones, with every token), the real
//! peers, `vantage check` and a fleet (an in-process vantage and a real agent) each produce
//! their JSON report, normalised (`snapshot/normalise.rs` says exactly what is masked and
//! why), and the test compares them with the checked-in `coordinator/tests/snapshots/NAME.json`
//! (`snapshot/golden.rs`): a differing file, a case with no file or a file with no case fails
//! it, naming each, with a diff of the first few. After an intended change:
//!
//! ```sh
//! VANTAGE_SNAPSHOT_UPDATE=1 cargo test -p vantage-coordinator --test e2e snapshot
//! git diff coordinator/tests/snapshots   # review, then commit with the change
//! ```
//!
//! With `VANTAGE_SNAPSHOT_DIR=DIR` the reports go to DIR instead and nothing is compared
//! (ad hoc, and `.ci/report-diff BASE [HEAD]`, which diffs two commits' reports).
//!
//! Every case here is decided by the code, not by timing: the fixture answers at once (the
//! `slow` fault waits 400 ms against a 1.5 s exchange timeout and a 10 s deadline), the real
//! peers get 15 s an exchange (a cold one was seen to miss 1.5 s under load), and no hostile
//! target (a silent or trickling one, a timeout race) is in the snapshot. It takes 15-60 s
//! here, most of it starting the four peers.

mod golden;
mod normalise;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;
use serde_json::{json, Value};
use vantage_agent::ProbeOptions;
use vantage_fixture::{
    Fault, Fixture, FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN, FIXTURE_TOKEN,
};

use crate::auth::all_tokens;
use crate::procs::{agent_token, agent_with, coordinator, Proc};
use crate::support::{assert_valid, check_with, options, vantage_env};

/// The normalised reports, by case name.
#[derive(Default)]
struct Reports(BTreeMap<String, String>);

impl Reports {
    fn save(&mut self, name: &str, report: Value) {
        assert_valid(&report);
        let text = normalise::snapshot_text(name, report);
        assert!(
            self.0.insert(name.to_string(), text).is_none(),
            "two snapshot cases are named {name}"
        );
    }
}

fn newest(path: &std::path::Path, newest: &mut Option<(std::time::SystemTime, PathBuf)>) {
    let meta = std::fs::metadata(path).unwrap();
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            self::newest(&entry.unwrap().path(), newest);
        }
    } else {
        let at = meta.modified().unwrap();
        if newest.as_ref().is_none_or(|(t, _)| at > *t) {
            *newest = Some((at, path.to_path_buf()));
        }
    }
}

/// The fleet case starts the `vantage-agent` binary, which `cargo test -p
/// vantage-coordinator` alone does not rebuild: an agent older than its sources would put an
/// old engine's results in the fleet snapshots, so that fails here, saying what to run.
fn agent_binary_is_fresh() {
    let bin = crate::procs::bin("vantage-agent");
    let built = std::fs::metadata(&bin).unwrap().modified().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    let mut last = None;
    for source in ["agent/src", "agent/Cargo.toml", "proto", "Cargo.lock"] {
        newest(&root.join(source), &mut last);
    }
    let (changed, path) = last.expect("the agent's sources are there");
    assert!(
        changed <= built,
        "{} is older than {}: build the binaries first (cargo build --workspace --bins), \
         then run the snapshot again",
        bin.display(),
        path.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot() {
    let reports = run_cases().await;
    if let Some(dir) = std::env::var_os("VANTAGE_SNAPSHOT_DIR").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).expect("the snapshot directory can be created");
        for (name, text) in &reports.0 {
            std::fs::write(dir.join(format!("{name}.json")), text).expect("write");
        }
        eprintln!(
            "wrote {} reports to {} (not compared with {})",
            reports.0.len(),
            dir.display(),
            golden::dir().display()
        );
    } else if std::env::var_os("VANTAGE_SNAPSHOT_UPDATE").is_some_and(|v| v == "1") {
        golden::update(&golden::dir(), &reports.0);
    } else if let Some(failure) = golden::compare(&golden::dir(), &reports.0) {
        panic!("{failure}");
    }
}

async fn run_cases() -> Reports {
    let mut reports = Reports::default();
    // In process: the engine and the merge.
    let mut cases: Vec<(String, Vec<Fault>)> = vec![("clean".into(), vec![])];
    cases.extend(Fault::value_variants().iter().map(|f| (f.name(), vec![*f])));
    for (name, faults) in &cases {
        let fixture = Fixture::start(faults).await.unwrap();
        let report = check_with(&fixture.url(), options()).await;
        reports.save(
            &format!("fixture-{name}"),
            serde_json::to_value(&report).unwrap(),
        );
        if faults.iter().any(|f| f.protects()) {
            let report = check_with(&fixture.url(), all_tokens()).await;
            reports.save(
                &format!("fixture-{name}-tokens"),
                serde_json::to_value(&report).unwrap(),
            );
        }
    }

    // The real peers, with time to spare: a cold Node.js or Python process can take more
    // than the 1.5 s of `options()` to answer its first request on a loaded machine (seen:
    // ts-dual's `initialize` timed out, the run came out `unknown`), a race that is not the
    // peer's behaviour. Nothing in a peer's report depends on these two values unless one
    // runs out.
    let patient = ProbeOptions {
        check_timeout: Duration::from_secs(15),
        deadline: Duration::from_secs(60),
        ..options()
    };
    for (name, peer) in [
        ("ts-dual", crate::peers::ts("dual")),
        ("ts-modern", crate::peers::ts("modern")),
        ("python-default", crate::peers::python(None)),
        ("python-stateless", crate::peers::python(Some("stateless"))),
    ] {
        let report = check_with(&crate::peers::url(&peer), patient.clone()).await;
        reports.save(
            &format!("peer-{name}"),
            serde_json::to_value(&report).unwrap(),
        );
    }

    // The command line: its own options, tokens from the environment.
    for (name, faults, args) in [
        ("cli-clean", vec![], vec![]),
        (
            "cli-protected",
            vec![Fault::AuthGarbageAccepted],
            vec![
                "--token-env",
                "T_MAIN",
                "--other-audience-token-env",
                "T_OTHER",
                "--missing-scope-token-env",
                "T_SCOPE",
                "--expect-auth",
            ],
        ),
    ] {
        let fixture = Fixture::start(&faults).await.unwrap();
        let url = fixture.url();
        let mut all = vec!["check", url.as_str(), "--format", "json"];
        all.extend(args);
        let env = [
            ("T_MAIN", FIXTURE_TOKEN),
            ("T_OTHER", FIXTURE_OTHER_AUDIENCE_TOKEN),
            ("T_SCOPE", FIXTURE_NO_SCOPE_TOKEN),
        ];
        let out = vantage_env(&all, &env).await;
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!("{name}: {}", String::from_utf8_lossy(&out.stderr));
        });
        reports.save(name, report);
    }

    // A fleet: the in-process vantage `local` and a real agent in `eu`.
    agent_binary_is_fresh();
    let dir = std::env::temp_dir().join(format!("vantage-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let extra = "[[credentials]]\nname = \"prod\"\ntoken_env = \"T_CRED_PROD\"\n";
    let mut c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", extra);
    let text = std::fs::read_to_string(&c.config).unwrap();
    std::fs::write(
        &c.config,
        text.replace("local_agent = false", "local_agent = true"),
    )
    .unwrap();
    c.proc.kill();
    let c = crate::procs::start_coordinator(&c.config, &["eu"]);
    // A fixed id: the region's block names the agent that served it ("agent").
    let _agent: Proc = agent_with(
        &c.grpc,
        "eu",
        &agent_token("eu"),
        &["--id".to_string(), "snapshot-eu".to_string()],
    );
    crate::fleet::wait_agents(&c, 1, Duration::from_secs(15)).await;
    for (name, faults, credential) in [
        ("fleet-clean", vec![], None),
        ("fleet-get-html", vec![Fault::GetHtml], None),
        ("fleet-protected", vec![Fault::Protected], None),
        (
            "fleet-protected-token",
            vec![Fault::Protected],
            Some("prod"),
        ),
        (
            "fleet-garbage-accepted",
            vec![Fault::AuthGarbageAccepted],
            Some("prod"),
        ),
    ] {
        let fixture = Fixture::start(&faults).await.unwrap();
        let mut body = json!({"target": fixture.url(), "regions": ["local", "eu"]});
        if let Some(cred) = credential {
            body["credential"] = json!(cred);
        }
        let report = crate::fleet::check(&c, body).await;
        reports.save(name, report);
    }
    drop(c);
    std::fs::remove_dir_all(&dir).unwrap();
    reports
}
