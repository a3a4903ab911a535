//! Baselines: parsing with errors that name the entry, accepted / expired / stale, and the
//! gate that reads the marks (table-driven with `--fail-on` and `--fail-on-severity`).

use std::path::Path;

use vantage_agent::model::{RegionResult, RegionStatus, Severity};

use super::test_support::*;
use super::*;
use crate::exit::{FailOn, FailOnSeverity, Gate, GateResult, GATE_FAILED, OK, UNKNOWN_REGION};
use crate::report::Decision;
use crate::test_reports::{clean, fail, one_failure, report, report_requested};

#[test]
fn a_baseline_parses_native_and_quoted_dates() {
    let b = parse(&format!(
        "{}{}",
        entry("transport.delete", None, "2026-12-31"),
        entry("edge.divergent", Some("ap"), "\"2027-01-15\"")
    ))
    .unwrap();
    assert_eq!(b.entries.len(), 2);
    assert_eq!(b.entries[0].expires, day("2026-12-31"));
    assert_eq!(b.entries[1].region.as_deref(), Some("ap"));
    assert_eq!(b.entries[0].endpoint, T);
}

#[test]
fn bad_entries_are_refused_with_the_entry_and_the_fix() {
    let cases: &[(&str, &str)] = &[
        (&entry("transport.gett", None, "2026-12-31"), "accept[0].finding: unknown finding id `transport.gett`"),
        (&entry("transport.get", None, "\"31/12/2026\""), "accept[0].expires: `31/12/2026` is not a date; write YYYY-MM-DD"),
        (&entry("transport.get", None, "2026-12-31T10:00:00Z"), "accept[0].expires"),
        (&entry("fleet.region-missing", None, "2026-12-31"), "says nothing about the endpoint"),
        (&entry("transport.get", Some(""), "2026-12-31"), "accept[0].region: empty"),
        (
            "[[accept]]\nendpoint = \"ftp://x/\"\nfinding = \"transport.get\"\nreason = \"r\"\nexpires = 2026-12-31\n",
            "accept[0].endpoint",
        ),
        (
            "[[accept]]\nendpoint = \"http://a/mcp\"\nfinding = \"transport.get\"\nreason = \" \"\nexpires = 2026-12-31\n",
            "accept[0].reason: say why",
        ),
        (
            "[[accept]]\nendpoint = \"http://a/mcp\"\nfinding = \"transport.get\"\nexpires = 2026-12-31\n",
            "missing field `reason`",
        ),
        ("[[accepted]]\nendpoint = \"http://a/mcp\"\n", "unknown field `accepted`"),
        ("[[accept]\n", "b.toml"),
    ];
    for (text, needle) in cases {
        let err = parse(text).expect_err(needle).to_string();
        assert!(err.starts_with("baseline b.toml"), "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

/// The findings no baseline may accept are exactly the merge's `unknown` ones plus the
/// vantage's own fault, by the catalogue: a renamed or misspelt id cannot drift out of it.
#[test]
fn a_baseline_refuses_exactly_what_says_nothing_about_the_target() {
    use vantage_agent::catalog::FindingId;
    for &id in FindingId::ALL {
        let refused =
            crate::merge::UNKNOWN_FINDINGS.contains(&id) || id == FindingId::FleetVantageDegraded;
        match parse(&entry(id.as_str(), None, "2026-12-31")) {
            Ok(_) => assert!(!refused, "{id} must be refused"),
            Err(e) => {
                let e = e.to_string();
                assert!(refused, "{id} refused: {e}");
                assert!(e.contains("accept[0].finding"), "{e}");
                assert!(e.contains("says nothing about the endpoint"), "{e}");
            }
        }
    }
}

#[test]
fn accepted_findings_stay_marked_and_stop_failing_the_gate() {
    let mut r = one_failure("transport.get", Severity::Medium);
    assert_eq!(r.decision, Decision::Review);
    let gate = Gate::new(FailOn::Review, None);
    assert_eq!(gate.exit_code(&r), GATE_FAILED);
    apply_on_30_nov(&mut r, &[entry("transport.get", None, "2026-12-31")]);
    let f = r.finding(FindingId::TransportGet).unwrap();
    assert!(f.is_accepted(), "{f:?}");
    assert_eq!(f.accepted.as_ref().unwrap().expires, "2026-12-31");
    // The report keeps its decision: the gate judges the rest.
    assert_eq!(r.decision, Decision::Review);
    assert_eq!(gate.decision(&r), Decision::Pass);
    assert_eq!(gate.exit_code(&r), OK);
    assert_eq!(
        gate.line(&r),
        "gate: passed (1 finding(s) accepted by the baseline)"
    );
    assert!(!gate.fails_on(f));
    let status = r.baseline.as_ref().unwrap();
    assert_eq!(status.accepted, vec!["transport.get"]);
    assert!(status.stale.is_empty() && status.expired.is_empty());
}

#[test]
fn an_expired_entry_fails_the_gate_with_a_clear_message() {
    // A low finding that alone passes every gate: once its acceptance expired, it fails.
    let mut r = one_failure("transport.delete", Severity::Low);
    let gate = Gate::default();
    assert_eq!(gate.exit_code(&r), OK);
    parse(&entry("transport.delete", None, "2026-01-31"))
        .unwrap()
        .apply(&mut r, day("2026-02-01"));
    assert!(r.finding(FindingId::TransportDelete).unwrap().is_expired());
    assert_eq!(gate.result(&r), GateResult::Failed);
    assert_eq!(gate.exit_code(&r), GATE_FAILED);
    assert_eq!(
        gate.line(&r),
        "gate: failed (baseline: the acceptance of transport.delete expired on 2026-01-31; fix it, or renew the entry with a new date)"
    );
    assert_eq!(r.baseline.as_ref().unwrap().expired.len(), 1);
    // The day it expires is still covered.
    let mut r = one_failure("transport.delete", Severity::Low);
    parse(&entry("transport.delete", None, "2026-01-31"))
        .unwrap()
        .apply(&mut r, day("2026-01-31"));
    assert!(r.finding(FindingId::TransportDelete).unwrap().is_accepted());
}

#[test]
fn entries_that_match_nothing_are_stale_and_other_endpoints_are_left_alone() {
    let mut r = report(vec![clean("local")]);
    let other = "[[accept]]\nendpoint = \"https://other.example/mcp\"\nfinding = \"transport.get\"\nreason = \"r\"\nexpires = 2026-12-31\n";
    apply_on_30_nov(
        &mut r,
        &[
            entry("method.unknown", None, "2026-12-31"),
            other.to_string(),
        ],
    );
    let status = r.baseline.as_ref().unwrap();
    assert_eq!(status.stale.len(), 1);
    assert_eq!(status.stale[0].finding, "method.unknown");
    assert_eq!(
        Gate::default().exit_code(&r),
        OK,
        "a stale entry does not fail the gate"
    );
}

#[test]
fn a_regional_entry_accepts_only_its_region() {
    let mk = || {
        let (mut eu, us) = (clean("eu"), clean("us"));
        fail(&mut eu, "transport.get", Severity::Medium, "page");
        report(vec![eu, us])
    };
    // transport.get in eu only; edge.divergent in eu.
    let mut r = mk();
    apply_on_30_nov(
        &mut r,
        &[
            entry("transport.get", Some("eu"), "2026-12-31"),
            entry("edge.divergent", Some("eu"), "2026-12-31"),
        ],
    );
    assert!(
        r.findings
            .iter()
            .filter(|f| f.severity > Severity::Info)
            .all(|f| f.is_accepted()),
        "{:#?}",
        r.findings
    );
    assert_eq!(Gate::new(FailOn::Review, None).exit_code(&r), OK);
    // An entry for another region accepts nothing and is stale.
    let mut r = mk();
    apply_on_30_nov(&mut r, &[entry("transport.get", Some("us"), "2026-12-31")]);
    assert!(!r.finding(FindingId::TransportGet).unwrap().is_accepted());
    assert_eq!(r.baseline.as_ref().unwrap().stale.len(), 1);
}

/// `--fail-on-severity` × decisions × baseline: the gate's result and exit code.
#[test]
fn the_gate_table_with_and_without_a_baseline() {
    use FailOn::{Blocked, Review};
    use FailOnSeverity as S;
    let low = || one_failure("transport.delete", Severity::Low);
    let medium = || one_failure("transport.get", Severity::Medium);
    let high = || one_failure("method.unknown", Severity::High);
    let accept = |mut r: Report, id: &str| {
        apply_on_30_nov(&mut r, &[entry(id, None, "2026-12-31")]);
        r
    };
    // (the report, the check id its baseline accepts, --fail-on, --fail-on-severity, exit code)
    type Row = (
        Report,
        Option<&'static str>,
        FailOn,
        Option<FailOnSeverity>,
        u8,
    );
    let rows: Vec<Row> = vec![
        (low(), None, Blocked, Some(S::Low), GATE_FAILED),
        (low(), Some("transport.delete"), Blocked, Some(S::Low), OK),
        (medium(), None, Review, None, GATE_FAILED),
        (medium(), None, Blocked, Some(S::Medium), GATE_FAILED),
        (medium(), None, Blocked, Some(S::High), OK),
        (medium(), Some("transport.get"), Review, Some(S::Low), OK),
        (high(), None, Blocked, None, GATE_FAILED),
        (high(), None, Review, Some(S::Critical), GATE_FAILED),
        (high(), Some("method.unknown"), Blocked, None, OK),
        (high(), Some("method.unknown"), Review, Some(S::Low), OK),
        (high(), Some("transport.get"), Blocked, None, GATE_FAILED),
    ];
    for (r, accepted, fail_on, sev, code) in rows {
        let r = match accepted {
            Some(id) => accept(r, id),
            None => r,
        };
        let g = Gate::new(fail_on, sev);
        let (flags, line) = (g.flags(), g.line(&r));
        assert_eq!(
            g.exit_code(&r),
            code,
            "accepted {accepted:?} under {flags}: {line}"
        );
    }
}

#[test]
fn accepting_a_finding_never_hides_an_unknown() {
    let mut eu = clean("eu");
    fail(&mut eu, "method.unknown", Severity::High, "html 404");
    let requested = vec!["eu".to_string(), "us".to_string()];
    let mut r = report_requested(
        &requested,
        vec![eu, RegionResult::absent("us", RegionStatus::Timeout)],
    );
    assert_eq!(r.decision, Decision::Blocked);
    apply_on_30_nov(&mut r, &[entry("method.unknown", None, "2026-12-31")]);
    let g = Gate::default();
    assert_eq!(g.decision(&r), Decision::Unknown);
    assert_eq!(g.exit_code(&r), UNKNOWN_REGION);
}

#[test]
fn a_starting_baseline_round_trips() {
    let mut eu = clean("eu");
    fail(&mut eu, "transport.get", Severity::Medium, "page");
    let mut r = report(vec![eu, clean("us")]);
    let text = starting(&[&r], "accepted while we migrate", day("2027-02-28"));
    assert!(text.contains("# transport.get (medium): "), "{text}");
    assert!(text.contains("region = \"eu\""), "{text}");
    let b = parse(&text).unwrap();
    // transport.get and edge.divergent, both in eu.
    assert_eq!(b.entries.len(), 2, "{text}");
    assert!(b
        .entries
        .iter()
        .all(|e| e.expires == day("2027-02-28") && e.reason == "accepted while we migrate"));
    b.apply(&mut r, day("2026-11-30"));
    assert!(r
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .all(|f| f.is_accepted()));
    assert!(r.baseline.as_ref().unwrap().stale.is_empty());
    let clean_report = report(vec![clean("local")]);
    assert!(starting(&[&clean_report], "r", day("2027-01-01")).contains("nothing to accept"));
    // A report whose only finding says nothing about the endpoint: said, not "nothing above
    // info".
    let mut gap = clean("local");
    crate::test_reports::set(
        &mut gap,
        "transport.get",
        vantage_agent::model::Outcome::Unknown,
        None,
        Some(vantage_agent::model::Cause::Deadline),
        "the run's deadline passed",
    );
    let gap = report(vec![gap]);
    assert!(
        gap.finding(FindingId::ProbeIncomplete).is_some(),
        "{:?}",
        gap.findings
    );
    let text = starting(&[&gap], "r", day("2027-01-01"));
    assert!(
        !text.contains("[[accept]]") && !text.contains("nothing to accept"),
        "{text}"
    );
    assert!(
        text.contains("# Not written: probe.incomplete say(s) nothing about the endpoint"),
        "{text}"
    );
}

/// An unreadable file: the cause is typed, and said once however the error is printed.
#[test]
fn an_unreadable_baseline_says_why_once() {
    let e = Baseline::load(Path::new("/nonexistent/baseline.toml")).unwrap_err();
    assert!(
        matches!(&e, BaselineError::Read { error, .. } if error.kind() == std::io::ErrorKind::NotFound),
        "{e:?}"
    );
    let shown = crate::reload::chain(&e);
    assert!(
        shown.starts_with("baseline /nonexistent/baseline.toml: "),
        "{shown}"
    );
    assert_eq!(shown.matches("os error 2").count(), 1, "{shown}");
}
