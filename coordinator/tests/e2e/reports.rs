//! Reports people act on: the gate line, the exit code and the JUnit failures agree for every
//! gate; JUnit is read by real consumers; timeouts name their stage and the fix follows
//! the evidence; no user-facing text cites an internal document.

use serde_json::Value;
use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, Outcome};
use vantage_fixture::{Fault, Fixture, Hostile, HostileServer};

use crate::evidence_support::finding;
use crate::junit_consumer::{cases_with, consume};
use crate::support::{options, outcome, vantage_async};

fn s(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = v
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    v.sort();
    v
}

struct Case {
    faults: &'static [Fault],
    flags: &'static [&'static str],
    exit: i32,
    gate: &'static str,
    failures: &'static [(&'static str, &'static str)],
    errors: &'static [(&'static str, &'static str)],
}

const L: &str = "vantage.local";

#[tokio::test]
async fn exit_code_gate_line_and_junit_failures_agree_for_every_gate() {
    let table = [
        Case {
            faults: &[],
            flags: &["--fail-on", "review", "--fail-on-severity", "low"],
            exit: 0,
            gate: "gate: passed",
            failures: &[],
            errors: &[],
        },
        // A low finding alone (a tool name off the SHOULD pattern); Bare400 served here
        // until its bare 400s became unknown (red team round 18, D4).
        Case {
            faults: &[Fault::BadToolName],
            flags: &[],
            exit: 0,
            gate: "gate: passed",
            failures: &[],
            errors: &[],
        },
        Case {
            faults: &[Fault::BadToolName],
            flags: &["--fail-on-severity", "low"],
            exit: 2,
            gate: "gate: failed (--fail-on-severity low)",
            failures: &[(L, "tools.name-format")],
            errors: &[],
        },
        Case {
            faults: &[Fault::GetHtml],
            flags: &[],
            exit: 0,
            gate: "gate: passed",
            failures: &[],
            errors: &[],
        },
        Case {
            faults: &[Fault::GetHtml],
            flags: &["--fail-on", "review"],
            exit: 2,
            gate: "gate: failed (--fail-on review)",
            failures: &[(L, "transport.get")],
            errors: &[],
        },
        Case {
            faults: &[Fault::GetHtml],
            flags: &["--fail-on-severity", "medium"],
            exit: 2,
            gate: "gate: failed (--fail-on-severity medium)",
            failures: &[(L, "transport.get")],
            errors: &[],
        },
        Case {
            faults: &[Fault::GetHtml],
            flags: &["--fail-on-severity", "high"],
            exit: 0,
            gate: "gate: passed",
            failures: &[],
            errors: &[],
        },
        Case {
            faults: &[Fault::UnknownMethodHtml404, Fault::GetHtml],
            flags: &[],
            exit: 2,
            gate: "gate: failed (--fail-on blocked)",
            failures: &[(L, "method.unknown")],
            errors: &[],
        },
        Case {
            faults: &[Fault::Protected],
            flags: &["--fail-on", "review"],
            exit: 3,
            gate: "gate: unknown (exit 3: authorization required and no credential given)",
            failures: &[],
            errors: &[(L, "auth.credential-required")],
        },
    ];
    for case in &table {
        let fixture = Fixture::start(case.faults).await.unwrap();
        let what = format!("{:?} {:?}", case.faults, case.flags);
        let run = |format: &str| {
            let mut args = vec![
                "check".to_string(),
                fixture.url(),
                "-f".into(),
                format.into(),
            ];
            args.extend(case.flags.iter().map(|f| f.to_string()));
            vantage_async(args)
        };
        // Text: the decision, the because line, then the exact gate line.
        let text = run("text").await;
        assert_eq!(
            text.status.code(),
            Some(case.exit),
            "{what}: {}",
            s(&text.stderr)
        );
        let out = s(&text.stdout);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[1].starts_with("  because: "), "{what}: {out}");
        assert_eq!(lines[2], format!("  {}", case.gate), "{what}: {out}");
        // JUnit: the same verdict, read by the consumers.
        let junit = run("junit").await;
        assert_eq!(junit.status.code(), Some(case.exit), "{what}");
        let seen = consume(&s(&junit.stdout));
        assert_eq!(cases_with(&seen, "failure"), pairs(case.failures), "{what}");
        assert_eq!(cases_with(&seen, "error"), pairs(case.errors), "{what}");
        assert_eq!(
            seen["suites"][0]["properties"]["vantage.gate.result"], case.gate,
            "{what}"
        );
        // Every check is a case, and every skipped check is `skipped`, with its reason.
        let suite = &seen["suites"][0];
        let skipped = suite["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["result"] == "skipped")
            .collect::<Vec<_>>();
        assert_eq!(suite["skipped"], skipped.len(), "{what}");
        assert!(skipped
            .iter()
            .all(|c| c["message"].as_str().is_some_and(|m| !m.is_empty())));
    }
}

#[tokio::test]
async fn a_finding_below_the_gate_is_in_system_out_and_a_failure_is_counted_once() {
    let fixture = Fixture::start(&[Fault::GetHtml]).await.unwrap();
    let below = vantage_async(vec![
        "check".into(),
        fixture.url(),
        "-f".into(),
        "junit".into(),
    ])
    .await;
    assert_eq!(below.status.code(), Some(0));
    let seen = consume(&s(&below.stdout));
    assert_eq!(seen["failures"], 0);
    let case = seen["suites"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "transport.get")
        .cloned()
        .unwrap();
    assert_eq!(case["result"], "passed");
    let out = case["system_out"].as_str().unwrap();
    assert!(
        out.starts_with("a finding here, below the gate (--fail-on blocked)"),
        "{out}"
    );
    assert!(out.contains("transport.get (medium)"), "{out}");

    let at = vantage_async(vec![
        "check".into(),
        fixture.url(),
        "-f".into(),
        "junit".into(),
        "--fail-on".into(),
        "review".into(),
    ])
    .await;
    assert_eq!(at.status.code(), Some(2));
    let seen = consume(&s(&at.stdout));
    assert_eq!(seen["failures"], 1, "one finding, one failure");
    assert_eq!(cases_with(&seen, "failure"), pairs(&[(L, "transport.get")]));
}

/// A region that did not report, and a check whose divergence blocks: rendered from a
/// merged multi-region report, validated by the consumers.
#[tokio::test]
async fn multi_region_junit_is_valid_and_names_the_missing_region() {
    use vantage_agent::model::{RegionResult, RegionStatus, Severity};
    use vantage_coordinator::exit::{FailOn, Gate};
    let fixture = Fixture::start(&[]).await.unwrap();
    let eu = crate::support::check(&fixture.url()).await.regions[0].clone();
    let mut us = eu.clone();
    us.region = "us".into();
    let c = us
        .checks
        .iter_mut()
        .find(|c| c.id == CheckId::MethodUnknown)
        .unwrap();
    c.outcome = Outcome::Fail;
    c.severity = Some(Severity::High);
    c.observed = "404 text/html".into();
    let mut eu = eu;
    eu.region = "eu".into();
    let target = vantage_agent::Target::parse(&fixture.url()).unwrap();
    let requested: Vec<String> = ["eu", "us", "ap"].map(String::from).to_vec();
    let report = vantage_coordinator::checks::assemble(
        &target,
        "2026-11-30T10:00:00Z".into(),
        10,
        &requested,
        vec![eu, us, RegionResult::absent("ap", RegionStatus::Timeout)],
        &Default::default(),
        &Default::default(),
    );
    let xml = vantage_coordinator::render::junit(&report, &Gate::new(FailOn::Review, None));
    let seen = consume(&xml);
    let names: Vec<&str> = seen["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["vantage.eu", "vantage.us", "vantage.ap"]);
    assert_eq!(
        cases_with(&seen, "failure"),
        pairs(&[("vantage.us", "method.unknown")])
    );
    assert_eq!(
        cases_with(&seen, "error"),
        pairs(&[("vantage.ap", "fleet.region-missing")])
    );
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_is_named_so_with_a_fix_to_match() {
    let server = HostileServer::start(Hostile::NeverAnswers).await.unwrap();
    let out = vantage_async(vec![
        "check".into(),
        server.url(),
        "--check-timeout".into(),
        "1s".into(),
        "-f".into(),
        "json".into(),
    ])
    .await;
    // Nothing answered within the per-exchange timeout: no evidence either way (checks.md
    // 4.1 (c)), so unknown (exit 4) with probe.incomplete naming the wait and its fix.
    assert_eq!(out.status.code(), Some(4), "{}", s(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["id"] != "era.detect"));
    let f = finding(&report, "probe.incomplete");
    let evidence = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|e| e.contains("era.detect ("))
        .unwrap_or_else(|| panic!("{f}"));
    assert!(
        evidence.contains(
            "era.detect (server/discover: accepted the connection, never answered within 1 s"
        ),
        "{evidence}"
    );
    // The fix follows the evidence: what a silent server looks like, and the timeout.
    assert!(
        evidence.contains("a stuck process, or a proxy that holds POST without a live backend")
            && evidence.contains("raise --check-timeout"),
        "{evidence}"
    );
    let fix = f["remediation"].as_str().unwrap();
    assert!(
        !fix.contains("URL path"),
        "the fix follows the evidence: {fix}"
    );
}

#[tokio::test]
async fn timeouts_and_failures_name_their_stage() {
    // TLS: the TCP connection opens and the handshake never completes.
    let tls = HostileServer::start(Hostile::TlsNeverCompletes)
        .await
        .unwrap();
    let report = crate::support::check(&tls.https_url()).await;
    let hs = outcome(&report, CheckId::TlsHandshake);
    assert_eq!(hs.cause, Some(Cause::Timeout));
    assert!(
        hs.observed.contains("TLS handshake: the TCP connection opened but the handshake did not complete within 1.5 s"),
        "{}",
        hs.observed
    );
    // The wait that ran out is this vantage's own (rt6 #1): no tls.handshake finding, and
    // probe.incomplete's fix names --check-timeout.
    assert!(report.finding(FindingId::TlsHandshake).is_none());
    assert!(report
        .finding(FindingId::ProbeIncomplete)
        .unwrap()
        .remediation
        .contains("--check-timeout"));
    // Body: the headers arrive, the body never finishes.
    let drip = HostileServer::start(Hostile::SlowDrip).await.unwrap();
    let report = crate::support::check(&drip.url()).await;
    let era = outcome(&report, CheckId::EraDetect);
    assert_eq!(era.cause, Some(Cause::Timeout));
    assert!(
        era.observed.contains("body: the headers arrived (200 application/json) but the body did not finish within 1.5 s"),
        "{}",
        era.observed
    );
    // Connect: nothing listens (an active refusal), and the fix says so.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let report =
        crate::support::check_with(&format!("http://127.0.0.1:{port}/mcp"), options()).await;
    let c = outcome(&report, CheckId::NetConnect);
    assert_eq!((c.outcome, c.cause), (Outcome::Fail, Some(Cause::Refused)));
    assert!(
        c.observed.contains("refused after") && c.observed.contains("(connect: "),
        "{}",
        c.observed
    );
    assert!(report
        .finding(FindingId::NetConnect)
        .unwrap()
        .remediation
        .contains("actively refused"));
}

#[tokio::test]
async fn no_output_cites_an_internal_document() {
    for format in ["text", "json", "junit", "markdown"] {
        let out = vantage_async(vec!["demo".into(), "-v".into(), "-f".into(), format.into()]).await;
        let all = format!("{}{}", s(&out.stdout), s(&out.stderr));
        assert!(!all.contains("checks.md"), "{format}: {all}");
        assert!(!all.contains("[global]"), "{format}");
        if format == "junit" {
            consume(&s(&out.stdout));
        }
    }
}
