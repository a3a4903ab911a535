//! The per-target series as they reach the exposition: what a run of a scheduled target
//! writes, what the next run replaces, what forgetting a target and the schedule do, and
//! label escaping.

use std::collections::BTreeMap;

use prometheus::Registry;
use vantage_agent::model::Severity;

use super::Metrics;
use crate::fleet::Registry as Fleet;
use crate::test_reports::{clean, fail, report, skip};

const T: &str = "http://127.0.0.1:9/mcp";

fn render(m: &Metrics) -> String {
    m.render(&Fleet::default(), &["eu".to_string()])
}

fn lines_of<'a>(text: &'a str, family: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{family}{{")))
        .collect()
}

#[test]
fn a_run_writes_its_series_and_the_next_run_replaces_them() {
    let m = Metrics::new(Registry::new()).unwrap();
    m.set_schedule(&[(T.into(), 60.0, BTreeMap::new())]);
    assert!(
        !render(&m).contains("vantage_check_success"),
        "a family without series is left out"
    );
    let mut r = clean("eu");
    r.phases_ms.insert("total".into(), 40);
    r.phases_ms.insert("connect".into(), 3);
    fail(
        &mut r,
        "method.unknown",
        Severity::High,
        "200 with a result",
    );
    skip(&mut r, "cors.preflight", "not applicable here");
    let ran = r.checks.len() - 1;
    let first = report(vec![r]);
    assert_eq!(first.decision.as_str(), "blocked");
    m.observe(&first);
    let text = render(&m);
    for line in [
        format!("vantage_check_success{{check=\"method.unknown\",region=\"eu\",target=\"{T}\"}} 0"),
        format!("vantage_check_success{{check=\"net.connect\",region=\"eu\",target=\"{T}\"}} 1"),
        format!("vantage_region_reachable{{region=\"eu\",target=\"{T}\"}} 1"),
        format!("vantage_dns_all_global{{region=\"eu\",target=\"{T}\"}} 1"),
        format!("vantage_dns_has_a_record{{region=\"eu\",target=\"{T}\"}} 1"),
        format!("vantage_probe_duration_seconds{{phase=\"total\",region=\"eu\",target=\"{T}\"}} 0.04"),
        format!("vantage_probe_duration_seconds{{phase=\"connect\",region=\"eu\",target=\"{T}\"}} 0.003"),
        format!("vantage_decision{{decision=\"blocked\",target=\"{T}\"}} 1"),
        format!("vantage_decision{{decision=\"pass\",target=\"{T}\"}} 0"),
        format!("vantage_runs_total{{decision=\"blocked\",target=\"{T}\"}} 1"),
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
    }
    assert_eq!(
        lines_of(&text, "vantage_check_success").len(),
        ran,
        "one series per check that ran; a skipped check has none"
    );
    assert!(!text.contains("check=\"cors.preflight\""));
    assert_eq!(lines_of(&text, "vantage_decision").len(), 4);
    let finding = &first.findings[0];
    let active = format!(
        "vantage_finding_active{{accepted=\"false\",finding=\"{}\",scope=\"global\",severity=\"{}\",target=\"{T}\"}} 1",
        finding.id,
        finding.severity.as_str()
    );
    assert!(text.lines().any(|l| l == active), "{text}");
    for family in [
        "vantage_check_success",
        "vantage_decision",
        "vantage_runs_total",
    ] {
        assert_eq!(
            text.matches(&format!("# TYPE {family} ")).count(),
            1,
            "one TYPE line for {family}"
        );
    }
    assert!(text.contains("# TYPE vantage_runs_total counter"));

    // The repaired target: the next run replaces every series of the last one.
    m.observe(&report(vec![clean("eu")]));
    let text = render(&m);
    assert!(text.contains(&format!(
        "vantage_check_success{{check=\"method.unknown\",region=\"eu\",target=\"{T}\"}} 1"
    )));
    assert!(text.contains(&format!(
        "vantage_check_success{{check=\"cors.preflight\",region=\"eu\",target=\"{T}\"}} 1"
    )));
    assert!(
        lines_of(&text, "vantage_finding_active").is_empty(),
        "{text}"
    );
    assert!(lines_of(&text, "vantage_probe_duration_seconds").is_empty());
    assert!(text.contains(&format!(
        "vantage_decision{{decision=\"pass\",target=\"{T}\"}} 1"
    )));
    assert!(text.contains(&format!(
        "vantage_decision{{decision=\"blocked\",target=\"{T}\"}} 0"
    )));
    assert!(text.contains(&format!(
        "vantage_runs_total{{decision=\"blocked\",target=\"{T}\"}} 1"
    )));
    assert!(text.contains(&format!(
        "vantage_runs_total{{decision=\"pass\",target=\"{T}\"}} 1"
    )));
}

#[test]
fn the_schedule_exports_labels_and_forgetting_a_target_removes_its_series() {
    let m = Metrics::new(Registry::new()).unwrap();
    let other = "https://other.example/mcp";
    let team: BTreeMap<String, String> = [("team".to_string(), "platform".to_string())].into();
    m.set_schedule(&[
        (T.into(), 60.0, team),
        (other.into(), 30.0, BTreeMap::new()),
    ]);
    m.scheduled_skipped(T);
    m.scheduled_skipped(T);
    m.observe(&report(vec![clean("eu")]));
    let text = render(&m);
    for line in [
        format!("vantage_target_info{{target=\"{T}\",team=\"platform\"}} 1"),
        format!("vantage_target_info{{target=\"{other}\",team=\"\"}} 1"),
        format!("vantage_check_interval_seconds{{target=\"{T}\"}} 60"),
        format!("vantage_check_interval_seconds{{target=\"{other}\"}} 30"),
        format!("vantage_scheduled_runs_skipped_total{{target=\"{T}\"}} 2"),
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
    }
    assert!(text.contains("# TYPE vantage_scheduled_runs_skipped_total counter"));

    // The target leaves: the next schedule lists only the other one, and a run of the
    // departed target that finishes afterwards brings nothing back.
    m.set_schedule(&[(other.into(), 30.0, BTreeMap::new())]);
    m.observe(&report(vec![clean("eu")]));
    m.scheduled_skipped(T);
    let text = render(&m);
    assert!(!text.contains(T), "{text}");
    assert!(text.contains(&format!("vantage_target_info{{target=\"{other}\"}} 1")));
    // A relabelled schedule drops the old label names.
    assert!(!text.contains("team="), "{text}");
    // Still listed: its counters go on from where they were, at 0 here.
    assert!(text.contains(&format!(
        "vantage_runs_total{{decision=\"pass\",target=\"{other}\"}} 0"
    )));

    // Forgetting a scheduled target (a reload removed it) removes its series at once.
    m.forget_target(other);
    assert!(!render(&m).contains(other));
}

#[test]
fn label_values_are_escaped() {
    let m = Metrics::new(Registry::new()).unwrap();
    let odd = "https://h.example/mcp?q=\"a\\b\"\n";
    m.set_schedule(&[(odd.into(), 5.0, BTreeMap::new())]);
    let text = render(&m);
    assert!(
        text.contains(
            "vantage_check_interval_seconds{target=\"https://h.example/mcp?q=\\\"a\\\\b\\\"\\n\"} 5"
        ),
        "{text}"
    );
}

#[test]
fn the_chunked_exposition_is_the_whole_one_in_bounded_pieces() {
    let m = std::sync::Arc::new(Metrics::new(Registry::new()).unwrap());
    let team: BTreeMap<String, String> = [("team".to_string(), "platform".to_string())].into();
    let target = |i: u64| format!("https://t{i:02}.example/mcp");
    let schedule: Vec<_> = (0..40).map(|i| (target(i), 60.0, team.clone())).collect();
    m.set_schedule(&schedule);
    for i in 0..40 {
        let mut r = clean("eu");
        r.phases_ms.insert("total".into(), i);
        if i % 3 == 0 {
            fail(&mut r, "transport.get", Severity::High, "200 text/html");
        }
        let mut rep = report(vec![r, clean("us")]);
        rep.target = target(i);
        m.observe(&rep);
    }
    m.scheduled_skipped("https://t07.example/mcp");
    let fleet = Fleet::default();
    let regions = ["eu".to_string(), "us".to_string()];
    let whole = m.render(&fleet, &regions);
    let size = 2048;
    let chunks: Vec<String> = futures::executor::block_on(futures::StreamExt::collect(
        m.chunks(&fleet, &regions, size),
    ));
    // The same text, but for the process's own series (its CPU time and memory move on).
    let steady = |text: &str| -> String {
        text.lines()
            .filter(|l| !l.starts_with("process_") && !l.contains(" process_"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert!(whole.contains("\nvantage_target_info{"), "{whole}");
    assert_eq!(steady(&chunks.concat()), steady(&whole));
    assert!(chunks.len() >= 10, "{} chunks", chunks.len());
    // A chunk stops at the first target that fills it: at most one target's series of one
    // family over (here 2 regions x 32 checks of about 100 bytes).
    let one_target = 8192;
    assert!(chunks.iter().all(|c| c.len() < size + one_target));
    // Every family's HELP and TYPE lines once, whichever chunk they fell in.
    for family in super::ALL {
        assert!(
            whole.matches(&format!("# TYPE {family} ")).count() <= 1,
            "{family}"
        );
    }
    assert_eq!(
        lines_of(&whole, "vantage_check_success").len(),
        40 * 2 * clean("eu").checks.len()
    );
}

/// Red team round 3: a region whose own resolver timed out exported "no A record, not
/// global" (0 and 0) from the empty DNS block its report carries. Only the zone's answer
/// (NXDOMAIN included) says what the zone holds.
#[test]
fn a_resolver_that_failed_leaves_no_dns_series() {
    use vantage_agent::model::{Cause, Outcome};
    let m = Metrics::new(Registry::new()).unwrap();
    m.set_schedule(&[(T.into(), 60.0, BTreeMap::new())]);
    // `region`'s resolver answered `rcode` and no address.
    let no_address = |region: &str, rcode: &str| {
        let mut r = clean(region);
        let dns = r.dns.as_mut().unwrap();
        (dns.rcode, dns.a, dns.has_a, dns.all_global) = (rcode.into(), vec![], false, false);
        r
    };
    let mut timed_out = no_address("us", "TIMEOUT");
    crate::test_reports::set(
        &mut timed_out,
        "dns.resolve",
        Outcome::Unknown,
        None,
        Some(Cause::ResolverError),
        "the resolver did not answer within 2 s",
    );
    let mut nxdomain = no_address("eu", "NXDOMAIN");
    crate::test_reports::set(
        &mut nxdomain,
        "dns.resolve",
        Outcome::Fail,
        Some(Severity::High),
        Some(Cause::Nxdomain),
        "NXDOMAIN",
    );
    m.observe(&report(vec![timed_out, nxdomain]));
    let text = m.render(&Fleet::default(), &["eu".to_string(), "us".to_string()]);
    assert_eq!(
        lines_of(&text, "vantage_dns_has_a_record"),
        vec![format!("vantage_dns_has_a_record{{region=\"eu\",target=\"{T}\"}} 0").as_str()],
        "{text}"
    );
    assert_eq!(
        lines_of(&text, "vantage_dns_all_global"),
        vec![format!("vantage_dns_all_global{{region=\"eu\",target=\"{T}\"}} 0").as_str()],
        "{text}"
    );
}

/// Red team round 3: a target that never completes a run had no
/// `vantage_last_run_timestamp_seconds`, so `VantageResultsStale` could never fire for it.
/// When it entered the schedule is exported from the start and kept by a reload that keeps it.
#[test]
fn when_a_target_was_scheduled_is_exported_and_kept() {
    let m = Metrics::new(Registry::new()).unwrap();
    let before = crate::clock::unix_now();
    m.set_schedule(&[(T.into(), 60.0, BTreeMap::new())]);
    let at = |text: &str| -> f64 {
        let line = lines_of(text, "vantage_check_scheduled_timestamp_seconds");
        assert_eq!(line.len(), 1, "{text}");
        line[0].rsplit_once(' ').unwrap().1.parse().unwrap()
    };
    let first = at(&render(&m));
    assert!(first >= before.floor(), "{first} < {before}");
    assert!(!render(&m).contains("vantage_last_run_timestamp_seconds{"));
    // A reload that keeps the target keeps the time, whatever else changes.
    m.set_schedule(&[(T.into(), 30.0, BTreeMap::new())]);
    assert_eq!(at(&render(&m)), first);
}
