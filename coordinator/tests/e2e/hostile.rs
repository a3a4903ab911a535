//! Hostile targets end with a finding and never a passing decision; what the engine observed
//! of them (each check's outcome and cause, the byte caps, bounded memory) is the agent's
//! test (`agent/tests/engine/hostile.rs`); here is what the merge and the command make of it.

use vantage_agent::catalog::FindingId;
use vantage_agent::model::Severity;
use vantage_coordinator::report::Decision;
use vantage_fixture::{Hostile, HostileServer};

use crate::support::{above_info, check, closed_port, ids};

/// A target that accepts and never answers: the per-exchange timeout is this vantage's own
/// wait running out, no evidence that the target is not MCP (`checks.md` 4.1 (c), 4). The
/// region did not observe the target: `probe.incomplete` names the timeout, the decision
/// is `unknown`, never blocked on a guess and never a pass. A slow drip (headers, then a
/// body the timeout cut) is the same.
#[tokio::test]
async fn a_target_that_never_answers_times_out_with_a_finding() {
    for (kind, seen) in [
        (
            Hostile::NeverAnswers,
            "local: era.detect (server/discover: accepted the connection, never answered within 1.5 s",
        ),
        (
            Hostile::SlowDrip,
            "but the body did not finish within 1.5 s",
        ),
    ] {
        let server = HostileServer::start(kind).await.unwrap();
        let report = check(&server.url()).await;
        assert_eq!(
            above_info(&report),
            ids(&[("probe.incomplete", Severity::Medium)]),
            "{kind:?}"
        );
        assert_eq!(report.decision, Decision::Unknown, "{kind:?}");
        let f = report.finding(FindingId::ProbeIncomplete).unwrap();
        assert!(
            f.evidence.iter().any(|e| e.contains(seen)),
            "{kind:?}: {:?}",
            f.evidence
        );
    }
}

/// A body (or a header block) the vantage stopped reading at its own cap was not observed
/// whole (rt6 #4): `probe.incomplete` names the cap, the decision is `unknown` (exit 4),
/// never blocked as "not MCP" and never a pass.
#[track_caller]
fn unknown_at_the_cap(report: &vantage_coordinator::report::Report, cap: &str) {
    assert_eq!(
        above_info(report),
        ids(&[("probe.incomplete", Severity::Medium)])
    );
    assert_eq!(report.decision, Decision::Unknown);
    let f = report.finding(FindingId::ProbeIncomplete).unwrap();
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("local: era.detect") && e.contains(cap)),
        "{:?}",
        f.evidence
    );
}

#[tokio::test]
async fn an_endless_body_stops_at_the_body_cap() {
    let server = HostileServer::start(Hostile::EndlessBody).await.unwrap();
    unknown_at_the_cap(&check(&server.url()).await, "body size cap");
}

/// hyper's own bounds on a chunked body (16 KiB of chunk extensions, a trailer section over
/// 16 KiB or 100 fields) are the vantage's caps (rt15 #10): `unknown` naming the cap, never
/// blocked "the connection ended"; a finite valid body with a 20,000-byte extension too.
#[tokio::test]
async fn the_http_clients_chunk_bounds_are_unknown_at_the_cap() {
    for (kind, cap) in [
        (Hostile::EndlessChunkExtension, "16 KiB chunk-extension cap"),
        (Hostile::LongChunkExtension, "16 KiB chunk-extension cap"),
        (
            Hostile::EndlessTrailers,
            "trailer (16 KiB or 100 fields) cap",
        ),
    ] {
        let server = HostileServer::start(kind).await.unwrap();
        unknown_at_the_cap(&check(&server.url()).await, cap);
    }
}

/// Valid JSON nested deeper than the parser's 128 levels is the vantage's bound (rt15 #13):
/// `probe.incomplete` names the cap, `unknown` (exit 4), never blocked as "not MCP".
#[tokio::test]
async fn json_deeper_than_the_parser_goes_is_unknown_at_the_cap() {
    let server = HostileServer::start(Hostile::DeepJson).await.unwrap();
    unknown_at_the_cap(
        &check(&server.url()).await,
        "JSON parser's 128-level nesting cap",
    );
}

#[tokio::test]
async fn a_gigabyte_content_length_is_never_trusted() {
    let server = HostileServer::start(Hostile::HugeContentLength)
        .await
        .unwrap();
    unknown_at_the_cap(&check(&server.url()).await, "body size cap");
}

#[tokio::test]
async fn an_endless_event_stream_stops_at_a_stream_cap() {
    let server = HostileServer::start(Hostile::EndlessSse).await.unwrap();
    let report = check(&server.url()).await;
    assert_eq!(report.decision, Decision::Unknown);
    assert!(report.finding(FindingId::EraDetect).is_none());
}

#[tokio::test]
async fn a_megabyte_of_headers_is_the_vantages_header_cap() {
    let server = HostileServer::start(Hostile::HugeHeaders).await.unwrap();
    unknown_at_the_cap(&check(&server.url()).await, "headers over 408 KiB");
}

#[tokio::test]
async fn a_redirect_to_itself_is_not_followed() {
    let server = HostileServer::start(Hostile::RedirectSelf).await.unwrap();
    let report = check(&server.url()).await;
    // Never followed, so no MCP answer: the region did not observe the target, and a
    // finding says so (probe.incomplete, naming redirect.none as what it saw).
    assert_eq!(
        above_info(&report),
        ids(&[
            ("probe.incomplete", Severity::Medium),
            ("redirect.none", Severity::Medium)
        ])
    );
    assert_eq!(report.decision, Decision::Unknown);
}

/// Every other hostile behaviour: each ends by its deadline with a finding whose evidence
/// names what happened; nothing panics and no report says pass.
#[tokio::test]
async fn every_hostile_behaviour_ends_with_a_finding() {
    let table: &[(Hostile, FindingId, &[&str])] = &[
        (
            Hostile::LyingLength,
            FindingId::EraDetect,
            &["body cut short"],
        ),
        (
            Hostile::ResetMidBody,
            FindingId::EraDetect,
            &["body cut short"],
        ),
        (Hostile::InvalidUtf8, FindingId::EraDetect, &["not MCP"]),
        (
            Hostile::NotJson,
            FindingId::EraDetect,
            &["Service Unavailable"],
        ),
    ];
    for (kind, finding, evidence) in table {
        let server = HostileServer::start(*kind).await.unwrap();
        let report = check(&server.url()).await;
        let f = report
            .finding(*finding)
            .unwrap_or_else(|| panic!("{kind:?}: no {finding}: {:#?}", report.findings));
        assert!(f.severity >= Severity::High, "{kind:?}: {f:?}");
        let joined = f.evidence.join(" | ");
        assert!(
            evidence.iter().any(|e| joined.contains(e)),
            "{kind:?}: evidence {joined}"
        );
        assert_ne!(report.decision, Decision::Pass, "{kind:?}");
    }
    // A gzip bomb sent to a client that accepts identity only: its body is never decoded, so
    // nothing about the endpoint was observed (unknown, probe.incomplete), never "not MCP".
    let server = HostileServer::start(Hostile::GzipBomb).await.unwrap();
    let report = check(&server.url()).await;
    assert_eq!(report.decision, Decision::Unknown, "{:#?}", report.findings);
    let f = report
        .finding(FindingId::ProbeIncomplete)
        .unwrap_or_else(|| panic!("no probe.incomplete: {:#?}", report.findings));
    assert!(
        f.evidence[0].starts_with("local: era.detect (")
            && f.evidence[0].contains("Content-Encoding gzip although only identity was accepted"),
        "{:?}",
        f.evidence
    );
    assert!(report.finding(FindingId::EraDetect).is_none());
}

/// The handshake the vantage's own --check-timeout cut (rt6 #1): unknown, exit 4, the fix
/// naming --check-timeout; never tls.handshake about the target.
#[tokio::test]
async fn a_tls_handshake_that_never_completes_times_out() {
    let server = HostileServer::start(Hostile::TlsNeverCompletes)
        .await
        .unwrap();
    let report = check(&server.https_url()).await;
    assert_eq!(
        above_info(&report),
        ids(&[("probe.incomplete", Severity::Medium)])
    );
    assert_eq!(report.decision, Decision::Unknown);
    let f = report.finding(FindingId::ProbeIncomplete).unwrap();
    assert!(
        f.evidence[0].starts_with("local: tls.handshake")
            && f.evidence[0].contains("--check-timeout"),
        "{:?}",
        f.evidence
    );
    assert!(
        f.remediation.contains("raise --check-timeout"),
        "{}",
        f.remediation
    );
}

/// A valid MCP server whose tools/list never ends (10,000 pages) or is one 100 MiB page: the
/// listing stops at its bounds (the agent's test) and the report never passes what it did
/// not read (the decision is `unknown`, with `probe.incomplete` naming the rules cut short).
#[tokio::test]
async fn hostile_surfaces_stop_at_the_listing_bounds() {
    let pages = HostileServer::start(Hostile::EndlessPages).await.unwrap();
    let report = check(&pages.url()).await;
    // What was not read is never passed (checks.md 4.1): the rules cut short by the bound
    // are named by probe.incomplete, and the decision is unknown, not pass or review.
    unread_surface_is_unknown(&report, &["tools.list-shape", "page cap (100 pages)"]);

    let huge = HostileServer::start(Hostile::HugeToolList).await.unwrap();
    let report = check(&huge.url()).await;
    unread_surface_is_unknown(&report, &["tools.list-shape", "page size cap (4 MiB"]);
}

/// Issue 15 review, item 3: resources/list or prompts/list cut at the page bound never
/// decides `pass`: the rules that needed the whole list (`caps.discover-matches-handlers`,
/// `cache.hints`) are `unknown` (size-cap: the agent's test), `probe.incomplete` names
/// them, exit 4.
#[tokio::test]
async fn endless_resource_and_prompt_lists_never_decide_pass() {
    use vantage_agent::surface::ListKind;
    use vantage_coordinator::exit::{for_report, FailOn};
    for (kind, list) in [
        (Hostile::EndlessResourcePages, ListKind::Resources),
        (Hostile::EndlessPromptPages, ListKind::Prompts),
    ] {
        let server = HostileServer::start(kind).await.unwrap();
        let report = check(&server.url()).await;
        let names = [
            "caps.discover-matches-handlers",
            "cache.hints",
            list.method(),
        ];
        unread_surface_is_unknown(&report, &names);
        assert_eq!(for_report(&report, FailOn::Blocked), 4, "{kind:?}");
    }
}

/// A surface cut short by a listing bound decides `unknown`: `probe.incomplete` (medium)
/// names each of `names` (the listing rules it could not finish, the bound or the list that
/// stopped the read), and nothing is above medium.
fn unread_surface_is_unknown(report: &vantage_coordinator::report::Report, names: &[&str]) {
    let target = &report.target;
    assert_eq!(
        report.decision,
        Decision::Unknown,
        "{target}: {}",
        report.reason
    );
    let incomplete = report
        .finding(FindingId::ProbeIncomplete)
        .expect("probe.incomplete names the unread rest");
    assert_eq!(incomplete.severity, Severity::Medium);
    let evidence = incomplete.evidence.join("\n");
    assert!(
        names.iter().all(|n| evidence.contains(n)),
        "{names:?}: {evidence}"
    );
    assert!(
        !report.findings.iter().any(|f| f.severity >= Severity::High),
        "nothing above medium: {:?}",
        report.findings
    );
}

/// `vantage fixture --hostile KIND --listen ADDR` serves that kind on ADDR (it used to take a
/// random port), and `--fault` with `--hostile` is refused, not ignored.
#[test]
fn the_hostile_fixture_listens_where_it_is_told_and_refuses_faults() {
    use std::io::{BufRead, Read, Write};
    let port = closed_port();
    let listen = format!("127.0.0.1:{port}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["fixture", "--hostile", "not-json", "--listen", &listen])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let answer = (|| -> std::io::Result<String> {
        let mut s = std::net::TcpStream::connect(&listen)?;
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
        s.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")?;
        let mut buf = vec![0u8; 4096];
        let n = s.read(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf[..n]).into_owned())
    })();
    let _ = child.kill(); // our own child, by its handle
    let _ = child.wait();
    assert_eq!(line.trim(), format!("listening http://{listen}/mcp"));
    let answer = answer.expect("the hostile server answers on the port it was given");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let both = ["fixture", "--hostile", "not-json", "--fault", "get-html"];
    let err = crate::support::vantage_refused(&both, &[]);
    assert!(
        err.contains("'--hostile <HOSTILE>' cannot be used with '--fault <FAULTS>'"),
        "{err}"
    );
}
