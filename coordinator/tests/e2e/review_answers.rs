//! Review items 4 and 5: an answer for another reason is not a verdict about MCP. A server
//! answering every request 429 (also 403 with a JSON-RPC body, 503) was "not MCP",
//! `era.detect` high, blocked, "check the URL path"; a body the connection cut short was
//! "not MCP" too; and a `server/discover` refused with a 2026 error code (a gateway that
//! strips `Mcp-Method`) passed `era.detect` as dual-era.

use std::sync::Arc;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, Outcome};
use vantage_coordinator::report::Decision;
use vantage_fixture::{Hostile, HostileServer};

use crate::evidence_support::{
    behind_a_gateway_stripping_mcp_method, check_came_out, check_of, finding, json_check, row,
    shape,
};
use crate::review_support::{raw_server, response, rpc_error};
use crate::support::{check, Served};

/// Every request answered with `status`, `headers` and `body`.
async fn always(status: &'static str, headers: &'static [&'static [u8]], body: Vec<u8>) -> Served {
    raw_server(Arc::new(move |_req: &str| response(status, headers, &body))).await
}

/// What a server answers for another reason (status, headers, body), the reason the
/// evidence names, and what else it must carry.
type AnswerRow = (
    &'static str,
    &'static [&'static [u8]],
    Vec<u8>,
    &'static str,
    Option<&'static str>,
);

#[tokio::test]
async fn a_rate_limit_or_a_gateway_is_unknown_with_the_reason_not_a_target_verdict() {
    let table: [AnswerRow; 3] = [
        (
            "429 Too Many Requests",
            &[b"retry-after: 60", b"content-type: text/plain"],
            b"slow down".to_vec(),
            "rate limited",
            // The Retry-After the server gave.
            Some("Retry-After: 60"),
        ),
        (
            "403 Forbidden",
            &[b"content-type: application/json"],
            rpc_error(-32000, "Forbidden by policy"),
            "refused before the MCP layer",
            None,
        ),
        (
            "503 Service Unavailable",
            &[b"retry-after: 120", b"content-type: text/html"],
            b"<html>down</html>".to_vec(),
            "unavailable",
            None,
        ),
    ];
    for (status, headers, body, reason, also) in table {
        let server = always(status, headers, body).await;
        let (code, report) = json_check(&[&server.url()], &[]).await;
        assert_eq!(
            shape(&report),
            vec![row("probe.incomplete", "medium", "global", &["local"])],
            "{reason}"
        );
        assert_eq!(
            (report["decision"].as_str(), code),
            (Some("unknown"), 4),
            "{reason}"
        );
        let era = check_came_out(&report, "local", "era.detect", "unknown", "other-reason");
        let observed = era["observed"].as_str().unwrap();
        assert!(observed.contains(reason), "{observed}");
        assert!(!observed.contains("not MCP"), "{observed}");
        if let Some(also) = also {
            assert!(observed.contains(also), "{era}");
        }
        // What could not run says why, and is not a skip.
        check_came_out(&report, "local", "transport.get", "unknown", "other-reason");
        let f = finding(&report, "probe.incomplete");
        assert!(f["evidence"].to_string().contains(reason), "{f}");
    }
}

#[tokio::test]
async fn a_body_cut_short_says_so_and_never_not_mcp() {
    for kind in [Hostile::LyingLength, Hostile::ResetMidBody] {
        let server = HostileServer::start(kind).await.unwrap();
        let report = check(&server.url()).await;
        let era = report.regions[0].check(CheckId::EraDetect).unwrap();
        assert_eq!(
            (era.outcome, era.cause),
            (Outcome::Fail, Some(Cause::Reset)),
            "{kind:?}: {}",
            era.observed
        );
        assert!(
            era.observed.contains("body cut short"),
            "{kind:?}: {}",
            era.observed
        );
        assert!(
            !era.observed.contains("not MCP"),
            "{kind:?}: {}",
            era.observed
        );
        let f = report.finding(FindingId::EraDetect).expect("era.detect");
        assert!(f.evidence.join(" ").contains("body cut short"), "{f:?}");
        assert_eq!(report.decision, Decision::Blocked);
    }
}

/// Behind a gateway that strips `Mcp-Method`, `server/discover` gets 400 -32020 and
/// `initialize` works: that was `pass era.detect dual-era`. The era is known (both eras
/// answer), but the modern path is broken: era.detect fails (medium) and says so, and the
/// transport checks say why.
#[tokio::test]
async fn a_refused_discover_behind_a_stripping_gateway_does_not_pass_era_detect() {
    // discover.shape fails for real: blocked, exit 2.
    let report = behind_a_gateway_stripping_mcp_method(&[]).await;
    let era = check_of(&report, "local", "era.detect");
    assert_eq!(
        (era["outcome"].as_str(), era["severity"].as_str()),
        (Some("fail"), Some("medium")),
        "{era}"
    );
    assert!(
        era["observed"]
            .as_str()
            .unwrap()
            .contains("server/discover itself was refused"),
        "{era}"
    );
    assert_eq!(report["era"], "dual");
    let found = shape(&report);
    assert!(
        found.contains(&row("era.detect", "medium", "global", &["local"])),
        "{found:?}"
    );
}
