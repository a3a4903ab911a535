//! A behaviour snapshot for refactors (ignored; run by hand): every fixture fault alone
//! (without and, for the protected ones, with every token), the real peers, `vantage check`
//! and a fleet (an in-process vantage and a real agent) each write their JSON report,
//! normalised (report id, timestamps, durations, ephemeral ports and the per-process garbage
//! token and elapsed times removed), to `$VANTAGE_SNAPSHOT_DIR/NAME.json`. Run it before and after a change
//! and compare the two directories with `diff -r`; nothing is asserted here beyond the
//! reports validating against the schema.
//!
//! ```sh
//! VANTAGE_SNAPSHOT_DIR=/tmp/before cargo test -p vantage-coordinator --test e2e snapshot -- --ignored
//! ```

use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;
use serde_json::{json, Value};
use vantage_fixture::{
    Fault, Fixture, FIXTURE_NO_SCOPE_TOKEN, FIXTURE_OTHER_AUDIENCE_TOKEN, FIXTURE_TOKEN,
};

use crate::auth::all_tokens;
use crate::procs::{agent, agent_token, coordinator, Proc};
use crate::support::{assert_valid, check_with, options, vantage_env};

fn out_dir() -> PathBuf {
    let dir = std::env::var_os("VANTAGE_SNAPSHOT_DIR")
        .map(PathBuf::from)
        .expect("set VANTAGE_SNAPSHOT_DIR to the directory the snapshots go to");
    std::fs::create_dir_all(&dir).expect("the snapshot directory can be created");
    dir
}

/// Replace every run of digits after `marker` with `PORT`.
fn mask_after(text: &str, marker: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str(with);
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// Replace every run of digits before ` ms` (an elapsed time) with `N`.
fn mask_ms(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" ms") {
        let head = &rest[..at];
        let kept = head.trim_end_matches(|c: char| c.is_ascii_digit());
        out.push_str(kept);
        if kept.len() < head.len() {
            out.push('N');
        }
        out.push_str(" ms");
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    out
}

fn mask(s: &str) -> String {
    let s = mask_after(s, "127.0.0.1:", "PORT");
    let s = mask_after(&s, "[::1]:", "PORT");
    mask_ms(&mask_after(&s, "vantage-garbage-", "N"))
}

/// Remove what differs from run to run.
fn normalise(v: &mut Value, top: bool) {
    match v {
        Value::Object(map) => {
            if top {
                map.remove("id");
                map.remove("started_at");
            }
            map.remove("duration_ms");
            map.remove("phases_ms");
            for (_, child) in map.iter_mut() {
                normalise(child, false);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| normalise(i, false)),
        Value::String(s) => *s = mask(s),
        _ => {}
    }
}

fn save(name: &str, mut report: Value) {
    assert_valid(&report);
    normalise(&mut report, true);
    let text = serde_json::to_string_pretty(&report).expect("JSON");
    std::fs::write(out_dir().join(format!("{name}.json")), text + "\n").expect("write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a tool for refactors: writes reports to $VANTAGE_SNAPSHOT_DIR"]
async fn snapshot() {
    // In process: the engine and the merge.
    let mut cases: Vec<(String, Vec<Fault>)> = vec![("clean".into(), vec![])];
    cases.extend(Fault::value_variants().iter().map(|f| (f.name(), vec![*f])));
    for (name, faults) in &cases {
        let fixture = Fixture::start(faults).await.unwrap();
        let report = check_with(&fixture.url(), options()).await;
        save(
            &format!("fixture-{name}"),
            serde_json::to_value(&report).unwrap(),
        );
        if faults.iter().any(|f| f.protects()) {
            let report = check_with(&fixture.url(), all_tokens()).await;
            save(
                &format!("fixture-{name}-tokens"),
                serde_json::to_value(&report).unwrap(),
            );
        }
    }

    // The real peers.
    for (name, peer) in [
        ("ts-dual", crate::peers::ts("dual")),
        ("ts-modern", crate::peers::ts("modern")),
        ("python-default", crate::peers::python(None)),
        ("python-stateless", crate::peers::python(Some("stateless"))),
    ] {
        let report = check_with(&crate::peers::url(&peer), options()).await;
        save(
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
        save(name, report);
    }

    // A fleet: the in-process vantage `local` and a real agent in `eu`.
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
    let _agent: Proc = agent(&c.grpc, "eu", &agent_token("eu"));
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
        save(name, report);
    }
    drop(c);
    std::fs::remove_dir_all(&dir).unwrap();
}
