//! A reload that changes the label names of `[[checks]]` keeps `vantage_target_info`, with
//! the new label set (the series used to vanish: the metrics crate refused to register the
//! family again with other label names, and the error was hidden).

use std::time::{Duration, Instant};

use vantage_fixture::Fixture;

use crate::procs::coordinator;
use crate::support::{http, tmpdir};

async fn metrics(api: &str) -> String {
    http()
        .get(format!("{api}/metrics"))
        .send()
        .await
        .expect("the API answers")
        .text()
        .await
        .unwrap_or_default()
}

async fn until_line(api: &str, line: &str) -> String {
    let start = Instant::now();
    loop {
        let m = metrics(api).await;
        if m.lines().any(|l| l == line) {
            return m;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "never saw {line}:\n{m}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_changes_label_names_keeps_the_target_info_series() {
    let dir = tmpdir("reload-labels");
    let a = Fixture::start(&[]).await.unwrap();
    let url = a.url();
    let checks = |labels: &str| {
        format!("[[checks]]\ntarget = \"{url}\"\ninterval = \"1h\"\nlabels = {{ {labels} }}\n")
    };
    let c = coordinator(
        &dir,
        &["eu"],
        "127.0.0.1:0",
        "127.0.0.1:0",
        &checks("team = \"platform\""),
    );
    until_line(
        &c.api,
        &format!("vantage_target_info{{target=\"{url}\",team=\"platform\"}} 1"),
    )
    .await;
    // New label names: `team` goes, `owner` and `tier` come.
    let text = std::fs::read_to_string(&c.config).unwrap().replace(
        "labels = { team = \"platform\" }",
        "labels = { owner = \"sre\", tier = \"gold\" }",
    );
    std::fs::write(&c.config, text).unwrap();
    c.proc.signal("HUP");
    c.proc
        .wait_for("configuration reloaded", Duration::from_secs(10));
    let m = until_line(
        &c.api,
        &format!("vantage_target_info{{owner=\"sre\",target=\"{url}\",tier=\"gold\"}} 1"),
    )
    .await;
    assert!(!m.contains("team="), "{m}");
    assert_eq!(
        m.lines()
            .filter(|l| l.starts_with("vantage_target_info{"))
            .count(),
        1,
        "{m}"
    );
    // And back to no labels at all: the series stays, with the target alone.
    let text = std::fs::read_to_string(&c.config).unwrap().replace(
        "labels = { owner = \"sre\", tier = \"gold\" }",
        "labels = { }",
    );
    std::fs::write(&c.config, text).unwrap();
    c.proc.signal("HUP");
    until_line(
        &c.api,
        &format!("vantage_target_info{{target=\"{url}\"}} 1"),
    )
    .await;
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}
