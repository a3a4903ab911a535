//! Matching entries to endpoints: spellings of one endpoint, entries for endpoints not
//! checked (one endpoint, many, the schedule), regional entries on wider findings, and a
//! scheduled baseline's path relative to its configuration file.

use std::path::Path;

use vantage_agent::catalog::FindingId;
use vantage_agent::model::Severity;

use super::test_support::*;
use super::*;
use crate::exit::{FailOn, Gate, GATE_FAILED};
use crate::test_reports::{clean, fail, one_failure, report};

/// Spellings of the checked endpoint match it (trailing slash, default port written out,
/// host case, query); another host name does not, and its entry is stale with the endpoint
/// and the reason instead of vanishing.
#[test]
fn entries_match_the_normalised_endpoint_and_others_are_stale_with_their_endpoint() {
    for spelling in [
        "http://127.0.0.1:9/mcp/",
        "HTTP://127.0.0.1:9/mcp?x=1",
        "http://127.0.0.1:9/mcp",
    ] {
        let mut r = one_failure("transport.get", Severity::Medium);
        let b = parse(&entry_at(spelling, "transport.get", None)).unwrap();
        b.apply(&mut r, day("2026-11-30"));
        assert!(
            r.finding(FindingId::TransportGet).unwrap().is_accepted(),
            "{spelling}"
        );
        assert!(r.baseline.as_ref().unwrap().stale.is_empty(), "{spelling}");
        assert!(b.unchecked(&[T]).is_empty(), "{spelling}");
    }
    let b = parse(&format!(
        "{}{}",
        entry_at("http://localhost:9/mcp", "transport.get", None),
        entry_at("http://127.0.0.1:9/other", "transport.delete", Some("eu"))
    ))
    .unwrap();
    let mut r = one_failure("transport.get", Severity::Medium);
    b.apply(&mut r, day("2026-11-30"));
    assert!(!r.finding(FindingId::TransportGet).unwrap().is_accepted());
    let stale = b.unchecked(&[T]);
    assert_eq!(stale.len(), 2, "{stale:#?}");
    assert_eq!(stale[0].endpoint.as_deref(), Some("http://localhost:9/mcp"));
    assert_eq!(stale[0].finding, "transport.get");
    assert_eq!(
        stale[1].endpoint.as_deref(),
        Some("http://127.0.0.1:9/other")
    );
    assert_eq!(stale[1].region.as_deref(), Some("eu"));
    for e in &stale {
        let note = e.note.as_deref().unwrap();
        assert!(note.contains("was not checked in this run"), "{note}");
        assert!(note.contains("`localhost` is not `127.0.0.1`"), "{note}");
    }
    let words = crate::render::stale_words(&stale[0]);
    assert!(
        words.starts_with("stale entry (its endpoint was not checked")
            && words.contains("transport.get on http://localhost:9/mcp (until 2026-12-31"),
        "{words}"
    );
    // Every endpoint checked: nothing is left over.
    assert!(b
        .unchecked(&["http://localhost:9/mcp/", "http://127.0.0.1:9/other"])
        .is_empty());
}

/// An entry for one region of a finding seen in two accepts nothing, and says so: stale,
/// naming the region it lacks. With the other region's entry too, the finding is accepted.
#[test]
fn a_regional_entry_on_a_finding_seen_in_more_regions_says_why_it_accepts_nothing() {
    let mk = || {
        let (mut eu, mut us) = (clean("eu"), clean("us"));
        fail(&mut eu, "transport.get", Severity::Medium, "page");
        fail(&mut us, "transport.get", Severity::Medium, "page");
        report(vec![eu, us])
    };
    let mut r = mk();
    apply_on_30_nov(&mut r, &[entry("transport.get", Some("eu"), "2026-12-31")]);
    let f = r.finding(FindingId::TransportGet).unwrap();
    assert_eq!(f.regions, vec!["eu", "us"]);
    assert!(f.accepted.is_none(), "{f:?}");
    assert_eq!(Gate::new(FailOn::Review, None).exit_code(&r), GATE_FAILED);
    let status = r.baseline.as_ref().unwrap();
    assert!(status.accepted.is_empty() && status.expired.is_empty());
    assert_eq!(status.stale.len(), 1, "{status:#?}");
    assert_eq!(status.stale[0].region.as_deref(), Some("eu"));
    let note = status.stale[0].note.as_deref().unwrap();
    assert!(
        note.contains("transport.get is seen in eu, us")
            && note.contains("add an entry for us too, or omit `region`"),
        "{note}"
    );
    // Both regions named: accepted, nothing stale.
    let mut r = mk();
    apply_on_30_nov(
        &mut r,
        &[
            entry("transport.get", Some("eu"), "2026-12-31"),
            entry("transport.get", Some("us"), "2026-12-31"),
        ],
    );
    assert!(r.finding(FindingId::TransportGet).unwrap().is_accepted());
    assert!(r.baseline.as_ref().unwrap().stale.is_empty());
}

/// A run over several endpoints shows the entries for endpoints it did not check in its
/// summary, in every format.
#[test]
fn the_many_endpoint_summary_names_entries_for_endpoints_not_checked() {
    use crate::render::{render_many, Format, RenderOptions, Summary};
    let b = parse(&entry_at("http://localhost:9/mcp", "transport.get", None)).unwrap();
    let mut a = one_failure("transport.get", Severity::Medium);
    let mut other = report(vec![clean("local")]);
    other.target = "http://127.0.0.1:10/mcp".into();
    b.apply(&mut a, day("2026-11-30"));
    b.apply(&mut other, day("2026-11-30"));
    let reports = vec![a, other];
    let stale = b.unchecked(&[T, "http://127.0.0.1:10/mcp"]);
    assert_eq!(stale.len(), 1);
    let gate = Gate::default();
    let summary = Summary::new(&reports, &gate).with_stale(&stale);
    assert!(
        summary
            .line()
            .ends_with("; 1 baseline entry for an endpoint not checked"),
        "{}",
        summary.line()
    );
    let opts = |format| RenderOptions {
        format,
        color: false,
        gate,
        detail: Default::default(),
    };
    let text = render_many(&reports, &opts(Format::Text), &stale);
    assert!(
        text.contains("  stale entry (its endpoint was not checked in this run")
            && text.contains("transport.get on http://localhost:9/mcp"),
        "{text}"
    );
    let md = render_many(&reports, &opts(Format::Markdown), &stale);
    assert!(
        md.contains("- stale entry (its endpoint was not checked"),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&render_many(&reports, &opts(Format::Json), &stale)).unwrap();
    assert_eq!(
        json["baseline_stale"][0]["endpoint"],
        "http://localhost:9/mcp"
    );
}

/// A scheduled check's `baseline` path starts at the configuration file's directory, and a
/// missing one is an error that names the path it tried; a missing `--baseline` names the
/// OS error once.
#[test]
fn a_scheduled_baseline_path_is_relative_to_the_configuration_file() {
    let dir = std::env::temp_dir().join(format!("vantage-basefix-{}-rel", std::process::id()));
    std::fs::create_dir_all(dir.join("gate")).unwrap();
    std::fs::write(
        dir.join("gate/accepted.toml"),
        entry_at("https://a.example/mcp", "transport.get", None),
    )
    .unwrap();
    let cfg = dir.join("vantage.toml");
    let write = |baseline: &str| {
        std::fs::write(
            &cfg,
            format!("[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\nbaseline = \"{baseline}\"\n"),
        )
        .unwrap()
    };
    write("gate/accepted.toml");
    let loaded = crate::config::Config::load_with_env(Some(&cfg), Vec::new());
    let missing = {
        write("gate/missing.toml");
        crate::config::Config::load_with_env(Some(&cfg), Vec::new())
            .unwrap_err()
            .to_string()
    };
    std::fs::remove_dir_all(&dir).unwrap();
    let loaded = loaded.unwrap();
    let b = &loaded.checks[0].baseline.as_ref().expect("loaded").0;
    assert_eq!(b.path, dir.join("gate/accepted.toml"));
    assert_eq!(b.entries.len(), 1);
    let tried = dir.join("gate/missing.toml");
    assert!(
        missing.contains(&format!("baseline {}: ", tried.display())),
        "{missing}"
    );
    let err = Baseline::load(Path::new("/nonexistent-vantage-baseline.toml")).unwrap_err();
    assert!(matches!(err, BaselineError::Read { .. }));
    assert!(std::error::Error::source(&err).is_none(), "{err:?}");
    assert_eq!(err.to_string().matches("os error").count(), 1, "{err}");
}

/// Scheduled checks sharing a baseline: an entry for an endpoint none of them checks is
/// returned (the schedule logs it stale); entries for any of their endpoints are not.
#[test]
fn entries_no_scheduled_check_covers_are_found_per_file() {
    let b = parse(&format!(
        "{}{}{}",
        entry_at("http://127.0.0.1:9/mcp/", "transport.get", None),
        entry_at("http://127.0.0.1:10/mcp", "transport.get", None),
        entry_at("http://localhost:9/mcp", "transport.delete", None)
    ))
    .unwrap();
    let found = unscheduled([(T, &b), ("http://127.0.0.1:10/mcp", &b)]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Path::new("b.toml"));
    assert_eq!(
        found[0].1.endpoint.as_deref(),
        Some("http://localhost:9/mcp")
    );
    assert_eq!(found[0].1.finding, "transport.delete");
    // One check alone leaves the other's entry over too.
    assert_eq!(unscheduled([(T, &b)]).len(), 2);
}

/// An entry's `severity` is the ceiling of what it accepts: the finding at that severity or
/// lower is accepted; worse fails the gate and the entry is stale with both severities. An
/// entry without one accepts any severity; a bad or `info` severity is refused with the fix.
#[test]
fn an_entry_accepts_a_finding_up_to_its_severity_and_no_worse() {
    let with = |severity: &str| {
        format!("[[accept]]\nendpoint = \"{T}\"\nfinding = \"transport.get\"\nseverity = \"{severity}\"\nreason = \"known, OPS-1\"\nexpires = 2026-12-31\n")
    };
    // transport.get's finding is at most medium (the catalogue caps an agent's severity).
    for (ceiling, failed, found, accepted) in [
        ("medium", Severity::Medium, Severity::Medium, true),
        ("medium", Severity::Low, Severity::Low, true),
        ("low", Severity::Medium, Severity::Medium, false),
        ("low", Severity::Critical, Severity::Medium, false),
        ("high", Severity::Critical, Severity::Medium, true),
    ] {
        let mut r = one_failure("transport.get", failed);
        let b = parse(&with(ceiling)).unwrap();
        assert_eq!(b.entries[0].severity.map(Severity::as_str), Some(ceiling));
        b.apply(&mut r, day("2026-11-30"));
        let f = r.finding(FindingId::TransportGet).unwrap();
        assert_eq!(f.severity, found);
        assert_eq!(f.is_accepted(), accepted, "{ceiling} vs {found:?}");
        let status = r.baseline.as_ref().unwrap();
        if accepted {
            assert_eq!(status.accepted, vec!["transport.get"]);
            assert!(status.stale.is_empty());
            assert_eq!(Gate::new(FailOn::Review, None).exit_code(&r), 0);
        } else {
            assert!(f.accepted.is_none(), "{f:?}");
            assert!(status.accepted.is_empty() && status.expired.is_empty());
            assert_eq!(status.stale.len(), 1, "{status:#?}");
            let note = status.stale[0].note.as_deref().unwrap();
            assert!(
                note.contains(&format!(
                    "transport.get was accepted up to {ceiling} and is now {}",
                    found.as_str()
                )),
                "{note}"
            );
            // Judged as without the entry: a medium fails a review gate, not the default.
            assert_eq!(Gate::new(FailOn::Review, None).exit_code(&r), GATE_FAILED);
            assert_eq!(Gate::default().exit_code(&r), 0);
            assert_eq!(
                Gate::default().exit_code(&r),
                Gate::default().exit_code(&one_failure("transport.get", failed))
            );
        }
    }
    // No ceiling: any severity.
    let mut r = one_failure("transport.get", Severity::Critical);
    apply_on_30_nov(&mut r, &[entry("transport.get", None, "2026-12-31")]);
    assert!(r.finding(FindingId::TransportGet).unwrap().is_accepted());
    // Bad input names the key and the fix.
    for (bad, says) in [
        ("info", "never fail a gate"),
        (
            "severe",
            "`severe` is not a severity; write low, medium, high or critical",
        ),
    ] {
        let err = parse(&with(bad)).unwrap_err().to_string();
        assert!(
            err.starts_with("baseline b.toml: accept[0].severity: ") && err.contains(says),
            "{err}"
        );
    }
    // A starting baseline writes each finding's severity, and reads back as its ceiling.
    let r = one_failure("transport.get", Severity::Low);
    let text = starting(&[&r], "known", day("2026-12-31"));
    assert!(text.contains("severity = \"low\"\n"), "{text}");
    assert_eq!(
        parse(&text).unwrap().entries[0].severity,
        Some(Severity::Low)
    );
}
