//! The renderers: the text report's head (decision, because, gate), its detail levels, the
//! JUnit mapping of checks to the gate, and plain words in everything shown to people.

use vantage_agent::model::{Outcome, RegionResult, RegionStatus, Severity};

use super::*;
use crate::exit::{FailOn, FailOnSeverity, Gate};
use crate::test_reports::{
    clean, fail, one_failure, report, report_degraded, report_requested, set, skip, unreachable,
};

fn opts(format: Format, gate: Gate, detail: Detail) -> RenderOptions {
    RenderOptions {
        format,
        color: false,
        gate,
        detail,
    }
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[test]
fn text_opens_with_decision_because_and_gate() {
    let r = one_failure("transport.get", Severity::Medium);
    let gate = Gate::new(FailOn::Review, None);
    let out = render(&r, &opts(Format::Text, gate, Detail::Normal));
    let l = lines(&out);
    assert_eq!(l[0], "REVIEW  http://127.0.0.1:9/mcp");
    assert_eq!(
        l[1],
        "  because: GET on the endpoint is not answered 405 with Allow (transport.get, medium, seen from local)"
    );
    assert_eq!(l[2], "  gate: failed (--fail-on review)");
    let passing = render(&r, &opts(Format::Text, Gate::default(), Detail::Normal));
    assert_eq!(lines(&passing)[2], "  gate: passed");
}

#[test]
fn quiet_is_the_three_summary_lines() {
    let r = one_failure("method.unknown", Severity::High);
    let out = render(&r, &opts(Format::Text, Gate::default(), Detail::Summary));
    assert_eq!(lines(&out).len(), 3, "{out}");
    assert!(out.starts_with("BLOCKED"));
    assert!(
        out.ends_with("  gate: failed (--fail-on blocked)\n"),
        "{out}"
    );
}

#[test]
fn skipped_checks_are_listed_with_their_reason_and_verbose_lists_every_check() {
    let mut r = clean("local");
    skip(&mut r, "net.ipv6", "no IPv6 address");
    skip(&mut r, "tls.handshake", "plain http");
    skip(&mut r, "tls.expiry", "plain http");
    let rep = report(vec![r]);
    let normal = render(&rep, &opts(Format::Text, Gate::default(), Detail::Normal));
    assert!(
        normal.contains("    skipped (plain http): tls.handshake, tls.expiry\n"),
        "{normal}"
    );
    assert!(normal.contains("    skipped (no IPv6 address): net.ipv6\n"));
    assert!(normal.contains("3 skipped"), "{normal}");
    let verbose = render(&rep, &opts(Format::Text, Gate::default(), Detail::Verbose));
    for c in &rep.regions[0].checks {
        let line = verbose
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(c.id.as_str()))
            .unwrap_or_else(|| panic!("-v lacks {}: {verbose}", c.id));
        assert!(line
            .trim_start()
            .starts_with(super::summary::outcome_word(c.outcome)));
        assert!(line.ends_with(&c.observed), "{line}");
    }
    assert!(verbose.contains("skip  tls.expiry"), "{verbose}");
}

#[test]
fn people_never_see_internal_words() {
    // Every catalogue entry, the fallback entry, and every format of a report with findings.
    for &id in vantage_agent::catalog::FindingId::ALL {
        let f = crate::findings::spec(id);
        for s in [f.title, f.remediation, f.spec] {
            assert!(!s.contains("checks.md"), "{}: {s}", id.as_str());
        }
    }
    let mut eu = clean("eu");
    fail(&mut eu, "net.connect", Severity::High, "timeout");
    let us = clean("us");
    let rep = report_requested(
        &["eu".into(), "us".into(), "ap".into()],
        vec![eu, us, RegionResult::absent("ap", RegionStatus::NoAgent)],
    );
    for format in [Format::Text, Format::Junit, Format::Markdown, Format::Json] {
        let out = render(&rep, &opts(format, Gate::default(), Detail::Verbose));
        for word in ["checks.md", "[global]", "No vantage"] {
            assert!(!out.contains(word), "{format:?} says {word:?}:\n{out}");
        }
        assert!(
            !out.lines().any(|l| l.trim_start().starts_with("rule:")),
            "{format:?}: the spec line is labelled `spec:`"
        );
    }
}

fn count(xml: &str, needle: &str) -> usize {
    xml.matches(needle).count()
}

#[test]
fn junit_failures_are_exactly_the_checks_over_the_gate() {
    let r = one_failure("transport.get", Severity::Medium);
    // Below the default gate: no failure, the finding is in system-out.
    let below = junit(&r, &Gate::default());
    assert!(below.contains("<testsuites name=\"vantage http://127.0.0.1:9/mcp\" tests=\""));
    assert!(below.contains(" failures=\"0\" errors=\"0\""), "{below}");
    assert_eq!(count(&below, "<failure"), 0);
    assert!(below.contains("<system-out>a finding here, below the gate (--fail-on blocked)"));
    // At the gate: one failure, counted once.
    let at = junit(&r, &Gate::new(FailOn::Review, None));
    assert_eq!(count(&at, "<failure"), 1, "{at}");
    assert_eq!(
        count(&at, " failures=\"1\""),
        2,
        "testsuites and the suite: {at}"
    );
    assert!(at.contains("<failure type=\"transport.get\" message=\"GET on the endpoint"));
    assert!(!at.contains("disabled="), "no Ant-only attribute");
    // --fail-on-severity alone can fail it too.
    let sev = junit(
        &r,
        &Gate::new(FailOn::Blocked, Some(FailOnSeverity::Medium)),
    );
    assert_eq!(count(&sev, "<failure"), 1);
}

#[test]
fn junit_skips_are_skipped_with_their_reason_and_properties_carry_the_decision() {
    let mut r = clean("local");
    skip(&mut r, "tls.handshake", "plain http");
    set(
        &mut r,
        "cors.preflight",
        Outcome::Error,
        None,
        None,
        "socket: out of files",
    );
    let rep = report(vec![r]);
    let x = junit(&rep, &Gate::default());
    assert!(x.contains("<skipped message=\"plain http\"/>"), "{x}");
    assert!(x.contains("skipped=\"2\""), "{x}");
    assert!(x.contains("not run: the probe could not run in this region"));
    // A check that could not run is no evidence: never a pass (checks.md 4.1).
    assert!(x.contains("<error type=\"probe.incomplete\""), "{x}");
    for (k, v) in [
        ("vantage.decision", "unknown".to_string()),
        ("vantage.era", "modern".to_string()),
        ("vantage.report.id", rep.id.clone()),
        ("vantage.gate", "--fail-on blocked".to_string()),
        (
            "vantage.gate.result",
            "gate: unknown (exit 4: not everything due was observed: a region, or a check)"
                .to_string(),
        ),
    ] {
        let prop = format!("<property name=\"{k}\" value=\"{v}\"/>");
        assert!(x.contains(&prop), "lacks {prop}: {x}");
    }
}

#[test]
fn junit_names_a_missing_region_as_an_error_not_a_failure() {
    let rep = report_requested(
        &["eu".into(), "us".into()],
        vec![
            clean("eu"),
            RegionResult::absent("us", RegionStatus::Timeout),
        ],
    );
    let x = junit(&rep, &Gate::new(FailOn::Review, None));
    assert_eq!(count(&x, "<failure"), 0, "{x}");
    assert_eq!(count(&x, "<error type=\"fleet.region-missing\""), 1, "{x}");
    assert!(x.contains("<testsuite name=\"vantage.us\" tests=\"1\" failures=\"0\" errors=\"1\""));
}

#[test]
fn a_divergence_is_never_worse_than_the_failure_behind_it() {
    // auth.challenge fails (medium) in eu only: edge.divergent is never raised above the
    // failing check's own severity (checks.md 4.1), so nothing blocks: review, no failure
    // under the default gate, and exactly one (the eu case) under --fail-on review.
    let mut eu = clean("eu");
    fail(
        &mut eu,
        "auth.challenge",
        Severity::Medium,
        "401 without WWW-Authenticate",
    );
    let rep = report(vec![eu, clean("us")]);
    assert_eq!(rep.decision, crate::report::Decision::Review);
    let divergent = rep
        .finding(vantage_agent::catalog::FindingId::EdgeDivergent)
        .expect("edge.divergent");
    assert_eq!(divergent.severity, Severity::Medium);
    let x = junit(&rep, &Gate::default());
    assert_eq!(count(&x, "<failure"), 0, "{x}");
    let x = junit(&rep, &Gate::new(FailOn::Review, None));
    assert_eq!(count(&x, "<failure"), 1, "{x}");
}

#[test]
fn xml_stays_well_formed_whatever_the_target_sent() {
    let mut r = clean("local");
    fail(
        &mut r,
        "method.unknown",
        Severity::High,
        "404 text/html body \"<html>\u{0}\u{1b}[2J & </testsuite>\"",
    );
    let x = junit(&report(vec![r]), &Gate::default());
    assert!(!x.contains('\u{0}') && !x.contains('\u{1b}'));
    assert!(x.contains("&lt;/testsuite&gt;"));
    assert_eq!(count(&x, "</testsuite>"), 1);
}

#[test]
fn a_divergence_counts_only_for_the_check_that_diverged() {
    // eu alone fails auth.challenge (high, so edge.divergent is high); both regions fail
    // transport.get (a global medium finding): only eu's auth.challenge is a failure under
    // the default gate.
    let mut eu = clean("eu");
    fail(
        &mut eu,
        "auth.challenge",
        Severity::High,
        "401 without WWW-Authenticate",
    );
    fail(&mut eu, "transport.get", Severity::Medium, "200 text/html");
    let mut us = clean("us");
    fail(&mut us, "transport.get", Severity::Medium, "200 text/html");
    let rep = report(vec![eu, us]);
    let x = junit(&rep, &Gate::default());
    assert_eq!(count(&x, "<failure"), 1, "{x}");
    let failing: Vec<&str> = x
        .split("<testcase ")
        .filter(|c| c.contains("<failure"))
        .collect();
    assert!(
        failing[0].starts_with("name=\"auth.challenge\" classname=\"vantage.eu\""),
        "{x}"
    );
    let transport_failures = x
        .split("<testcase ")
        .filter(|c| c.starts_with("name=\"transport.get\"") && c.contains("<failure"))
        .count();
    assert_eq!(transport_failures, 0, "{x}");
}

#[test]
fn junit_never_shows_green_while_the_gate_is_unknown_or_failed() {
    // A report whose decision no finding explains (an older coordinator's, or a future
    // path): the gate's own case carries the verdict.
    let mut r = report(vec![clean("local")]);
    r.decision = crate::report::Decision::Unknown;
    r.reason = "local did not observe the target".into();
    let xml = junit(&r, &Gate::default());
    assert!(xml.contains("failures=\"0\" errors=\"1\""), "{xml}");
    assert!(
        xml.contains("<error type=\"decision.unknown\" message=\"gate: unknown (exit 4"),
        "{xml}"
    );
    assert!(xml.contains("local did not observe the target"), "{xml}");
    r.decision = crate::report::Decision::Blocked;
    let xml = junit(&r, &Gate::default());
    assert!(xml.contains("failures=\"1\" errors=\"0\""), "{xml}");
    assert!(xml.contains("<failure type=\"decision.blocked\""), "{xml}");
    // A passing report gets no such case.
    r.decision = crate::report::Decision::Pass;
    assert!(!junit(&r, &Gate::default()).contains("testcase name=\"vantage.gate\""));
}

/// An `unknown` because a region's vantage was degraded and observed nothing: the fix
/// under the gate is the degraded vantage's, never another region's fault.
#[test]
fn the_fix_of_an_unknown_is_about_the_region_that_did_not_observe() {
    use vantage_agent::catalog::FindingId;
    let mut eu = clean("eu");
    fail(
        &mut eu,
        "transport.delete",
        Severity::Medium,
        "200 to DELETE",
    );
    let us = unreachable("us", None, "no connection");
    let r = report_degraded(&["eu", "us"], vec![eu, us], &["us"]);
    assert_eq!(r.decision, crate::report::Decision::Unknown, "{}", r.reason);
    let degraded = r
        .finding(FindingId::FleetVantageDegraded)
        .expect("degraded");
    assert_eq!(
        summary::unknown_fix(&r),
        Some(degraded.remediation.as_str())
    );
    let delete = r.finding(FindingId::TransportDelete).expect("eu's fault");
    assert_ne!(summary::unknown_fix(&r), Some(delete.remediation.as_str()));
}

/// Where a finding was seen says which regions count: all of them, only those whose evidence
/// counts (another's vantage was degraded), one only, or that a region did not report.
#[test]
fn seen_from_names_the_regions_whose_evidence_counts() {
    use vantage_agent::catalog::FindingId;
    let failing = |region: &str| {
        let mut r = clean(region);
        fail(
            &mut r,
            "transport.delete",
            Severity::Medium,
            "200 to DELETE",
        );
        r
    };
    let both = report_degraded(&["eu", "us"], vec![failing("eu"), failing("us")], &[]);
    let f = both.finding(FindingId::TransportDelete).unwrap();
    assert_eq!(
        summary::seen_from(f, &both),
        "seen from every region (eu, us)"
    );
    // us is degraded and could not connect: its egress failure is discounted (a degraded
    // region that observed the target would count in full).
    let us = unreachable("us", None, "no connection");
    let degraded = report_degraded(&["eu", "us"], vec![failing("eu"), us], &["us"]);
    let f = degraded.finding(FindingId::TransportDelete).unwrap();
    assert_eq!(
        summary::seen_from(f, &degraded),
        "seen from eu; us degraded (its evidence does not count)"
    );
    let one = report_degraded(&["eu", "us"], vec![failing("eu"), clean("us")], &[]);
    let f = one.finding(FindingId::TransportDelete).unwrap();
    assert_eq!(summary::seen_from(f, &one), "seen from eu only");
    let missing = report_degraded(&["eu", "ap"], vec![clean("eu")], &[]);
    let f = missing.finding(FindingId::FleetRegionMissing).unwrap();
    assert_eq!(summary::seen_from(f, &missing), "ap did not report");
    // A finding of eu beside the missing ap: ap had no evidence, so not "every region".
    let missing = report_degraded(&["eu", "ap"], vec![failing("eu")], &[]);
    let f = missing.finding(FindingId::TransportDelete).unwrap();
    assert_eq!(
        summary::seen_from(f, &missing),
        "seen from eu; no evidence from ap"
    );
    // us could not connect: it has no evidence about DELETE (checks.md 3), so eu's finding
    // is not "eu only" as if us had looked.
    let us = unreachable("us", None, "refused");
    let silent = report_degraded(&["eu", "us"], vec![failing("eu"), us], &[]);
    let f = silent.finding(FindingId::TransportDelete).unwrap();
    assert_eq!(f.scope, crate::report::Scope::Regional);
    assert_eq!(
        summary::seen_from(f, &silent),
        "seen from eu; no evidence from us"
    );
}

/// Red team round 18 (D5): a run with a passing report and an endpoint left without one (the
/// coordinator went away) is exit 4 in every format, never a pass: the summary row is
/// unknown with its reason, JUnit has the endpoint's `vantage.gate` error, text and Markdown
/// say unknown. Even with no report at all, the document says so.
#[test]
fn an_endpoint_without_a_report_is_unknown_exit_4_in_every_format() {
    let passed = report(vec![clean("eu")]);
    let lost = Undecided {
        target: "https://lost.example/mcp".into(),
        why: "the coordinator at http://127.0.0.1:1 went away while check 01X was running".into(),
        at: "2026-12-02T07:00:00Z".into(),
    };
    let gate = Gate::default();
    let summary = Summary::new(std::slice::from_ref(&passed), &gate)
        .with_undecided(std::slice::from_ref(&lost));
    assert_eq!(summary.exit_code, 4);
    assert_eq!(summary.endpoints[0].exit_code, 0);
    let row = &summary.endpoints[1];
    assert_eq!(
        (row.decision.as_str(), row.exit_code, row.reason.as_deref()),
        ("unknown", 4, Some(lost.why.as_str()))
    );
    assert_eq!(
        summary.line(),
        "2 endpoints: 1 pass, 1 unknown; exit 4 (the worst gate)"
    );
    let run = |format, reports: &[crate::report::Report]| {
        render_run(
            reports,
            std::slice::from_ref(&lost),
            &opts(format, gate, Detail::Normal),
            &[],
        )
    };
    let both = std::slice::from_ref(&passed);
    let json: serde_json::Value = serde_json::from_str(&run(Format::Json, both)).unwrap();
    assert_eq!(json["schema"], MANY_SCHEMA);
    assert_eq!(json["exit_code"], 4);
    assert_eq!(json["summary"][1]["reason"], lost.why.as_str());
    assert!(json["summary"][0].get("reason").is_none(), "{json}");
    let xml = run(Format::Junit, both);
    assert!(
        xml.contains("<testsuites name=\"vantage 2 endpoints\"") && xml.contains("errors=\"1\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testsuite name=\"vantage[https://lost.example/mcp]\" tests=\"1\" failures=\"0\" errors=\"1\""),
        "{xml}"
    );
    assert!(run(Format::Markdown, both).contains("| https://lost.example/mcp | **unknown** |"));
    assert!(run(Format::Text, both).contains("UNKNOWN  https://lost.example/mcp\n  no report: "));
    // No report at all: the document still says unknown, exit 4.
    let json: serde_json::Value = serde_json::from_str(&run(Format::Json, &[])).unwrap();
    assert_eq!(
        (
            json["exit_code"].as_u64(),
            json["reports"].as_array().map(Vec::len)
        ),
        (Some(4), Some(0))
    );
    let xml = run(Format::Junit, &[]);
    assert!(xml.contains("<testsuites name=\"vantage https://lost.example/mcp\" tests=\"1\" failures=\"0\" errors=\"1\""), "{xml}");
}
