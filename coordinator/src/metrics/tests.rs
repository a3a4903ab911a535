//! The coordinator's metrics: fleet series that follow the configuration, per-target series
//! for scheduled targets only, counters that start at 0, and the process and build series.

use vantage_agent::model::{RegionResult, RegionStatus};

use super::*;
use crate::report::{Decision, Report, SCHEMA_ID};

fn report(target: &str, decision: Decision) -> Report {
    Report {
        schema: SCHEMA_ID.into(),
        id: "01TESTREPORTID".into(),
        target: target.into(),
        started_at: String::new(),
        duration_ms: 0,
        state: None,
        decision,
        reason: String::new(),
        era: vantage_agent::model::Era::Modern,
        regions: vec![RegionResult::absent("eu", RegionStatus::Complete)],
        findings: vec![],
        baseline: None,
        gate: None,
    }
}

#[test]
fn a_region_that_leaves_loses_its_fleet_series() {
    let m = Metrics::new(Registry::new()).unwrap();
    let fleet = Fleet::default();
    let both = m.render(&fleet, &["eu".to_string(), "us".to_string()]);
    assert!(
        both.contains("vantage_agents_connected{region=\"us\"} 0"),
        "{both}"
    );
    assert!(both.contains("vantage_region_info{region=\"us\",vantage=\"agents\"} 1"));
    let one = m.render(&fleet, &["eu".to_string()]);
    assert!(one.contains("vantage_agents_connected{region=\"eu\"} 0"));
    assert!(!one.contains("region=\"us\""), "{one}");
}

#[test]
fn the_in_process_region_is_labelled_as_such() {
    let m = Metrics::new(Registry::new()).unwrap();
    m.set_in_process(Some("local".into()));
    let text = m.render(&Fleet::default(), &["eu".to_string(), "local".to_string()]);
    assert!(
        text.contains("vantage_region_info{region=\"local\",vantage=\"in-process\"} 1"),
        "{text}"
    );
    assert!(text.contains("vantage_region_info{region=\"eu\",vantage=\"agents\"} 1"));
    // No agent connects to the in-process region: the count says 0, the info says why.
    assert!(text.contains("vantage_agents_connected{region=\"local\"} 0"));
    m.set_in_process(None);
    let text = m.render(&Fleet::default(), &["local".to_string()]);
    assert!(text.contains("vantage_region_info{region=\"local\",vantage=\"agents\"} 1"));
    assert!(!text.contains("vantage=\"in-process\""), "{text}");
}

#[test]
fn only_scheduled_targets_get_per_target_series_and_their_counters_start_at_0() {
    let m = Metrics::new(Registry::new()).unwrap();
    let scheduled = "https://scheduled.example/mcp";
    m.set_schedule(&[(scheduled.to_string(), 60.0, BTreeMap::new())]);
    let text = m.render(&Fleet::default(), &[]);
    for line in [
        format!("vantage_scheduled_runs_skipped_total{{target=\"{scheduled}\"}} 0"),
        format!("vantage_runs_total{{decision=\"pass\",target=\"{scheduled}\"}} 0"),
        format!("vantage_runs_total{{decision=\"unknown\",target=\"{scheduled}\"}} 0"),
    ] {
        assert!(text.contains(&line), "{line} missing:\n{text}");
    }
    // A check submitted through the API: reported, not exported.
    m.observe(&report("https://api-caller.example/mcp", Decision::Blocked));
    m.observe(&report(scheduled, Decision::Pass));
    let text = m.render(&Fleet::default(), &[]);
    assert!(!text.contains("api-caller.example"), "{text}");
    assert!(text.contains(&format!(
        "vantage_runs_total{{decision=\"pass\",target=\"{scheduled}\"}} 1"
    )));
    assert!(text.contains(&format!(
        "vantage_decision{{decision=\"pass\",target=\"{scheduled}\"}} 1"
    )));
    // A target that leaves the schedule stops being exported.
    m.forget_target(scheduled);
    m.set_schedule(&[]);
    m.observe(&report(scheduled, Decision::Pass));
    let text = m.render(&Fleet::default(), &[]);
    assert!(!text.contains("scheduled.example"), "{text}");
}

#[test]
fn the_process_and_the_build_are_exported() {
    let m = Metrics::new(Registry::new()).unwrap();
    let text = m.render(&Fleet::default(), &[]);
    assert!(
        text.contains(&format!(
            "vantage_build_info{{component=\"coordinator\",version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
    #[cfg(target_os = "linux")]
    for family in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
    ] {
        assert!(
            text.contains(&format!("\n{family} ")),
            "{family} missing:\n{text}"
        );
    }
}

#[test]
fn accepted_findings_carry_the_accepted_label() {
    use crate::report::{Acceptance, AcceptanceStatus, Finding, Scope};
    let m = Metrics::new(Registry::new()).unwrap();
    let scheduled = "https://scheduled.example/mcp";
    m.set_schedule(&[(scheduled.to_string(), 60.0, BTreeMap::new())]);
    let finding = |id: vantage_agent::catalog::FindingId, accepted: bool| Finding {
        id,
        severity: vantage_agent::model::Severity::Medium,
        scope: Scope::Global,
        regions: vec!["eu".into()],
        title: String::new(),
        evidence: vec![],
        remediation: String::new(),
        spec: String::new(),
        stack: None,
        accepted: accepted.then(|| Acceptance {
            status: AcceptanceStatus::Accepted,
            reason: "known".into(),
            expires: "2030-01-01".into(),
        }),
    };
    let mut r = report(scheduled, Decision::Review);
    r.findings = vec![
        finding(vantage_agent::catalog::FindingId::TransportGet, true),
        finding(vantage_agent::catalog::FindingId::TransportDelete, false),
    ];
    m.observe(&r);
    let text = m.render(&Fleet::default(), &[]);
    assert!(
        text.contains("vantage_finding_active{accepted=\"true\",finding=\"transport.get\""),
        "{text}"
    );
    assert!(
        text.contains("vantage_finding_active{accepted=\"false\",finding=\"transport.delete\""),
        "{text}"
    );
}

/// A scheduled check whose baseline accepts its only blocking finding: `vantage_decision`
/// stays as the merge decided (blocked), `vantage_gate_decision` says what the gate says
/// (pass), and the finding is `accepted="true"`. Once the acceptance expires, the finding is
/// `accepted="expired"` and the gate decision is blocked again.
#[test]
fn the_gate_decision_honours_the_baseline_and_an_expired_acceptance_shows() {
    use crate::baseline::{parse_date, Baseline};
    let target = "http://127.0.0.1:9/mcp";
    let m = Metrics::new(Registry::new()).unwrap();
    m.set_schedule(&[(target.to_string(), 60.0, BTreeMap::new())]);
    let b = Baseline::parse(
        &format!("[[accept]]\nendpoint = \"{target}\"\nfinding = \"method.unknown\"\nreason = \"OPS-1\"\nexpires = 2026-12-31\n"),
        std::path::Path::new("b.toml"),
    )
    .unwrap();
    let series = |text: &str, name: &str, decision: &str| -> String {
        let line = format!("{name}{{decision=\"{decision}\",target=\"{target}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(line.as_str()).map(str::to_string))
            .unwrap_or_else(|| panic!("{line} missing:\n{text}"))
    };
    let finding = |accepted: &str| {
        format!("vantage_finding_active{{accepted=\"{accepted}\",finding=\"method.unknown\",scope=\"global\",severity=\"high\",target=\"{target}\"}} 1")
    };
    for (today, accepted, gate) in [
        ("2026-11-30", "true", "pass"),
        ("2027-01-01", "expired", "blocked"),
    ] {
        let mut r = crate::test_reports::one_failure(
            "method.unknown",
            vantage_agent::model::Severity::High,
        );
        assert_eq!(r.target, target);
        assert_eq!(r.decision, Decision::Blocked);
        b.apply(&mut r, parse_date(today).unwrap());
        m.observe(&r);
        let text = m.render(&Fleet::default(), &[]);
        assert_eq!(series(&text, DECISION, "blocked"), "1", "{today}");
        for d in ["blocked", "pass", "review", "unknown"] {
            let want = if d == gate { "1" } else { "0" };
            assert_eq!(
                series(&text, GATE_DECISION, d),
                want,
                "{today} {d}:\n{text}"
            );
        }
        assert!(text.contains(&finding(accepted)), "{today}:\n{text}");
        assert!(
            text.contains("# TYPE vantage_gate_decision gauge"),
            "{text}"
        );
    }
    // Without a baseline the gate decision is the merge's.
    m.observe(&crate::test_reports::one_failure(
        "method.unknown",
        vantage_agent::model::Severity::High,
    ));
    let text = m.render(&Fleet::default(), &[]);
    assert_eq!(series(&text, GATE_DECISION, "blocked"), "1");
    assert!(text.contains(&finding("false")), "{text}");
}
