//! JUnit XML for CI dashboards, in the Jenkins/Surefire dialect (validated in the tests
//! against the Jenkins xUnit plugin's published `junit-10.xsd`).
//!
//! One test suite per region (`vantage.<region>`) and one test case per check in it (name:
//! the check id, classname: the suite), so a dashboard shows which region saw what. A test
//! case is a `failure` exactly when a finding it maps to fails the gate (`--fail-on`,
//! `--fail-on-severity`): the failures and the exit code always agree. A finding below the
//! gate stays a passing case with the finding in `system-out`; a skipped check is `skipped`
//! with its reason. A finding no check stands behind (a region that did not report, a
//! missing credential) is a test case of its own in that region's suite, named by the
//! finding id: an `error` when nothing was observed there (it never passes). The decision, the gate, the
//! era and the report id are suite properties.

use std::collections::BTreeMap;

use vantage_agent::model::{CheckResult, Outcome, RegionResult};

use super::attribution::{findings_of, unattributed};
use super::many::Undecided;
use super::summary::{because, seen_from, status_word};
use super::xml::Writer;
use crate::exit::{Gate, GateResult, UNKNOWN_CAUSES};
use crate::report::{Finding, Report};

/// How one test case ended.
enum Status {
    Passed,
    Failure { kind: String, message: String },
    Error { kind: String, message: String },
    Skipped { message: String },
}

struct Case {
    name: String,
    time_ms: u64,
    status: Status,
    /// The full story of a failure or error, or what a passing case still wants known.
    body: Option<String>,
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

fn finding_text(f: &Finding, report: &Report) -> String {
    let mut s = format!(
        "{} ({}): {} ({})\n",
        f.id,
        f.severity.as_str(),
        f.title,
        seen_from(f, report)
    );
    for e in &f.evidence {
        s.push_str(&format!("- {e}\n"));
    }
    if let Some(a) = &f.accepted {
        s.push_str(&format!("{}\n", super::summary::acceptance(a)));
    }
    s.push_str(&format!("fix: {}\nspec: {}\n", f.remediation, f.spec));
    if let Some(st) = &f.stack {
        s.push_str(&format!("stack: {} ({})\n", st.stack.label(), st.evidence));
    }
    s
}

fn check_case(report: &Report, gate: &Gate, r: &RegionResult, c: &CheckResult) -> Case {
    let findings = findings_of(report, r, c);
    let failing: Vec<&&Finding> = findings.iter().filter(|f| gate.fails_on(f)).collect();
    let story = |fs: &[&Finding]| {
        let mut s = format!("observed: {}\nexpected: {}\n", c.observed, c.expected);
        for f in fs {
            s.push('\n');
            s.push_str(&finding_text(f, report));
        }
        s
    };
    let (status, body) = match c.outcome {
        Outcome::Skip => (
            Status::Skipped {
                message: c.observed.clone(),
            },
            None,
        ),
        Outcome::Error => (
            Status::Skipped {
                message: format!(
                    "not run: the probe could not run in this region (a fault of the vantage, not of the target): {}",
                    c.observed
                ),
            },
            None,
        ),
        Outcome::Unknown => (
            Status::Skipped {
                message: format!("unknown: nothing was observed either way: {}", c.observed),
            },
            None,
        ),
        Outcome::Pass => (Status::Passed, None),
        Outcome::Fail | Outcome::Warn => match failing.first() {
            Some(f) => (
                Status::Failure {
                    kind: f.id.to_string(),
                    message: if f.is_expired() {
                        format!(
                            "{} ({}, its baseline acceptance expired on {}): {}",
                            f.title,
                            f.severity.as_str(),
                            f.accepted.as_ref().map(|a| a.expires.as_str()).unwrap_or(""),
                            c.observed
                        )
                    } else {
                        format!(
                            "{} ({}, fails {}): {}",
                            f.title,
                            f.severity.as_str(),
                            gate.flags(),
                            c.observed
                        )
                    },
                },
                Some(story(&findings)),
            ),
            None => {
                let mut s = if findings.iter().any(|f| f.is_accepted()) {
                    "a finding here, accepted by the baseline (it does not fail the gate).\n"
                        .to_string()
                } else {
                    format!(
                        "{} here, below the gate ({}).\n",
                        if findings.is_empty() {
                            "not a finding"
                        } else {
                            "a finding"
                        },
                        gate.flags()
                    )
                };
                s.push_str(&story(&findings));
                (Status::Passed, Some(s))
            }
        },
    };
    Case {
        name: c.id.to_string(),
        time_ms: c.duration_ms,
        status,
        body,
    }
}

fn finding_case(report: &Report, gate: &Gate, f: &Finding) -> Case {
    let message = format!("{} ({})", f.title, f.evidence.join("; "));
    let status = if gate.fails_on(f) {
        Status::Failure {
            kind: f.id.to_string(),
            message,
        }
    } else if UNKNOWN_CAUSES.contains(&f.id) {
        // Nothing was observed there: never a pass. (Such a finding makes the decision
        // `unknown`, or it is `blocked` by another finding: the exit code is never 0.)
        Status::Error {
            kind: f.id.to_string(),
            message,
        }
    } else {
        Status::Passed
    };
    Case {
        name: f.id.to_string(),
        time_ms: 0,
        status,
        body: Some(finding_text(f, report)),
    }
}

/// The gate's own case when no other case carries its verdict, so JUnit never shows green
/// while the exit code is not 0: an `error` for `unknown` (nothing was decided: why), a
/// `failure` for a failed gate. The merge names every `unknown` with a finding (`checks.md`
/// 4.1), so this is a safety net, not the usual path.
fn gate_case(
    report: &Report,
    gate: &Gate,
    suites: &[(String, Option<&RegionResult>, Vec<Case>)],
) -> Option<Case> {
    let any = |pick: fn(&Status) -> bool| {
        suites
            .iter()
            .flat_map(|(_, _, cases)| cases.iter())
            .any(|c| pick(&c.status))
    };
    let message = format!("{}: {}", gate.line(report), because(report));
    let status = match gate.result(report) {
        GateResult::Unknown if !any(|s| matches!(s, Status::Error { .. })) => Status::Error {
            kind: format!("decision.{}", report.decision.as_str()),
            message,
        },
        GateResult::Failed if !any(|s| matches!(s, Status::Failure { .. })) => Status::Failure {
            kind: format!("decision.{}", report.decision.as_str()),
            message,
        },
        _ => return None,
    };
    Some(Case {
        name: "vantage.gate".into(),
        time_ms: 0,
        status,
        body: Some(format!(
            "{}\nbecause: {}\n",
            gate.line(report),
            because(report)
        )),
    })
}

fn properties(
    report: &Report,
    gate: &Gate,
    region: Option<&RegionResult>,
) -> Vec<(String, String)> {
    let era = serde_json::to_string(&report.era).unwrap_or_default();
    let mut p = vec![
        ("vantage.target", report.target.clone()),
        ("vantage.decision", report.decision.as_str().to_string()),
        ("vantage.because", because(report)),
        ("vantage.gate", gate.flags()),
        ("vantage.gate.result", gate.line(report)),
        ("vantage.era", era.trim_matches('"').to_string()),
        ("vantage.report.id", report.id.clone()),
    ];
    if let Some(r) = region {
        p.push(("vantage.region.status", status_word(r)));
    }
    if let Some(b) = &report.baseline {
        p.push(("vantage.baseline", super::summary::baseline_line(b)));
    }
    p.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

type Suite<'a> = (String, Option<&'a RegionResult>, Vec<Case>);

/// The suites of one report: one per region, in report order, then any region only a
/// finding names.
fn suites_of<'a>(report: &'a Report, gate: &Gate) -> Vec<Suite<'a>> {
    let mut suites: Vec<Suite<'a>> = report
        .regions
        .iter()
        .map(|r| {
            let cases = r
                .checks
                .iter()
                .map(|c| check_case(report, gate, r, c))
                .collect();
            (r.region.clone(), Some(r), cases)
        })
        .collect();
    let mut extra: BTreeMap<String, Vec<Case>> = BTreeMap::new();
    for (f, region) in unattributed(report) {
        let case = finding_case(report, gate, f);
        match suites.iter_mut().find(|(name, _, _)| *name == region) {
            Some((_, _, cases)) => cases.push(case),
            None => extra.entry(region).or_default().push(case),
        }
    }
    suites.extend(extra.into_iter().map(|(name, cases)| (name, None, cases)));
    if let Some(case) = gate_case(report, gate, &suites) {
        match suites.first_mut() {
            Some((_, _, cases)) => cases.push(case),
            None => suites.push((String::new(), None, vec![case])),
        }
    }
    suites
}

/// The JUnit XML of `report` under `gate`.
pub fn junit(report: &Report, gate: &Gate) -> String {
    junit_many(std::slice::from_ref(report), gate)
}

/// The JUnit XML of several endpoints' reports in one document. With more than one, each
/// suite's name carries its endpoint: `vantage.<region>[<endpoint>]`.
pub fn junit_many(reports: &[Report], gate: &Gate) -> String {
    junit_run(reports, &[], gate)
}

/// The suite of an endpoint that has no report: one `vantage.gate` case, an `error` (nothing
/// was decided about it, exit 4), so the document is never green while the run exits 4.
fn undecided_suite(u: &Undecided) -> Vec<Case> {
    vec![Case {
        name: "vantage.gate".into(),
        time_ms: 0,
        status: Status::Error {
            kind: "decision.unknown".into(),
            message: format!("{}: {}", u.gate_line(), u.why),
        },
        body: Some(format!("{}\nno report: {}\n", u.gate_line(), u.why)),
    }]
}

/// [`junit_many`] for a run in which some endpoints have no report (`undecided`): each is a
/// suite `vantage[<endpoint>]` with a `vantage.gate` error.
pub fn junit_run(reports: &[Report], undecided: &[Undecided], gate: &Gate) -> String {
    let many = reports.len() + undecided.len() > 1;
    let all: Vec<(&Report, Vec<Suite<'_>>)> =
        reports.iter().map(|r| (r, suites_of(r, gate))).collect();
    let lost: Vec<(&Undecided, Vec<Case>)> =
        undecided.iter().map(|u| (u, undecided_suite(u))).collect();
    let cases: Vec<&Case> = all
        .iter()
        .flat_map(|(_, suites)| suites.iter().flat_map(|(_, _, c)| c.iter()))
        .chain(lost.iter().flat_map(|(_, c)| c.iter()))
        .collect();
    let name = match (reports, undecided) {
        ([one], []) => format!("vantage {}", one.target),
        ([], [one]) => format!("vantage {}", one.target),
        _ => format!("vantage {} endpoints", reports.len() + undecided.len()),
    };
    let mut w = Writer::new();
    w.open(
        "testsuites",
        &[
            ("name", name),
            ("tests", cases.len().to_string()),
            (
                "failures",
                cases
                    .iter()
                    .filter(|c| is_failure(&c.status))
                    .count()
                    .to_string(),
            ),
            (
                "errors",
                cases
                    .iter()
                    .filter(|c| is_error(&c.status))
                    .count()
                    .to_string(),
            ),
            ("time", seconds(reports.iter().map(|r| r.duration_ms).sum())),
        ],
    );
    for (report, suites) in &all {
        for (name, region, cases) in suites {
            let mut suite_name = if name.is_empty() {
                "vantage".to_string()
            } else {
                format!("vantage.{name}")
            };
            if many {
                suite_name.push_str(&format!("[{}]", report.target));
            }
            let time = region.map(|r| r.duration_ms).unwrap_or(0);
            let properties = properties(report, gate, *region);
            let at = &report.started_at;
            write_suite(&mut w, &suite_name, cases, time, at, properties);
        }
    }
    for (u, cases) in &lost {
        let suite_name = format!("vantage[{}]", u.target);
        let properties = [
            ("vantage.target", u.target.clone()),
            ("vantage.decision", "unknown".to_string()),
            ("vantage.because", format!("no report: {}", u.why)),
            ("vantage.gate", gate.flags()),
            ("vantage.gate.result", u.gate_line()),
        ]
        .map(|(k, v)| (k.to_string(), v));
        write_suite(&mut w, &suite_name, cases, 0, &u.at, properties);
    }
    w.close("testsuites");
    w.finish()
}

fn count(cases: &[Case], pick: fn(&Status) -> bool) -> usize {
    cases.iter().filter(|c| pick(&c.status)).count()
}

fn is_failure(s: &Status) -> bool {
    matches!(s, Status::Failure { .. })
}

fn is_error(s: &Status) -> bool {
    matches!(s, Status::Error { .. })
}

fn is_skipped(s: &Status) -> bool {
    matches!(s, Status::Skipped { .. })
}

/// One `<testsuite>`: its counts, time and timestamp, its properties, then its cases.
fn write_suite(
    w: &mut Writer,
    name: &str,
    cases: &[Case],
    duration_ms: u64,
    timestamp: &str,
    properties: impl IntoIterator<Item = (String, String)>,
) {
    w.open(
        "testsuite",
        &[
            ("name", name.to_string()),
            ("tests", cases.len().to_string()),
            ("failures", count(cases, is_failure).to_string()),
            ("errors", count(cases, is_error).to_string()),
            ("skipped", count(cases, is_skipped).to_string()),
            ("time", seconds(duration_ms)),
            ("timestamp", timestamp.to_string()),
        ],
    );
    w.open("properties", &[]);
    for (k, v) in properties {
        w.empty("property", &[("name", k), ("value", v)]);
    }
    w.close("properties");
    for case in cases {
        write_case(w, name, case);
    }
    w.close("testsuite");
}

fn write_case(w: &mut Writer, classname: &str, case: &Case) {
    let attrs = [
        ("name", case.name.clone()),
        ("classname", classname.to_string()),
        ("time", seconds(case.time_ms)),
    ];
    if matches!(case.status, Status::Passed) && case.body.is_none() {
        w.empty("testcase", &attrs);
        return;
    }
    w.open("testcase", &attrs);
    let body = case.body.clone().unwrap_or_default();
    match &case.status {
        Status::Passed => w.text("system-out", &[], &body),
        Status::Skipped { message } => w.empty("skipped", &[("message", message.clone())]),
        Status::Failure { kind, message } => w.text(
            "failure",
            &[("type", kind.clone()), ("message", message.clone())],
            &body,
        ),
        Status::Error { kind, message } => w.text(
            "error",
            &[("type", kind.clone()), ("message", message.clone())],
            &body,
        ),
    }
    w.close("testcase");
}
