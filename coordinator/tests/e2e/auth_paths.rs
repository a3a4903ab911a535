//! The authorization boundary judged where it is (red team round 9, defects 1, 2, 5 and 8),
//! against the protected fixture with one fault each: the findings and the decision with
//! every credential, and `vantage check`'s exit code without one. Giving a credential never
//! hides a bypass (`checks.md` 4.1: the decision is monotone); a boundary found behind a
//! public discovery is `auth.credential-required` (exit 3), never `probe.incomplete` (exit
//! 4). Each check's own observation is the agent's test (`agent/tests/engine/auth_paths.rs`).

use serde_json::Value;
use vantage_agent::catalog::FindingId;
use vantage_agent::model::Severity;
use vantage_coordinator::report::Decision;
use vantage_fixture::{Fault, Fixture, FIXTURE_TOKEN};

use crate::auth::all_tokens;
use crate::support::{
    above_info, check_json_with_token, check_with, ids, only_region_check, options, vantage,
};

use Severity::{Critical, High, Medium};

/// Discovery, tools/list and initialize public: only tools/call and subscriptions/listen
/// (and what is not a list) answer 401 with a Bearer challenge without a token.
const ACTS_PROTECTED: &[Fault] = &[
    Fault::AuthDiscoverPublic,
    Fault::AuthToolsListPublic,
    Fault::AuthLegacyOpen,
];

#[tokio::test]
async fn each_boundary_fault_is_caught_with_every_credential() {
    type Row = (
        &'static [Fault],
        &'static [(&'static str, Severity)],
        Decision,
    );
    let table: &[Row] = &[
        // A dual-era server whose 2025-11-25 initialize takes no token (it was PASS).
        (
            &[Fault::AuthLegacyOpen],
            &[
                ("auth.challenge", High),
                ("auth.invalid-token-accepted", Critical),
            ],
            Decision::Blocked,
        ),
        // tools/list takes any token; discovery validates it, or is public (both were PASS).
        (
            &[Fault::AuthToolsAnyToken],
            &[("auth.invalid-token-accepted", Critical)],
            Decision::Blocked,
        ),
        // Behind a public discovery every token probe asks on tools/list: the token for
        // another audience is let through there too, and so (low) is the one lacking a scope.
        (
            &[Fault::AuthDiscoverPublic, Fault::AuthToolsAnyToken],
            &[
                ("auth.insufficient-scope", Severity::Low),
                ("auth.invalid-token-accepted", Critical),
            ],
            Decision::Blocked,
        ),
        // The control: a public discovery in front of a protected server is conformant.
        (&[Fault::AuthDiscoverPublic], &[], Decision::Pass),
        // Only tools/call and subscriptions/listen protected (discovery, tools/list and
        // initialize public): conformant; with tools/call taking any token, caught there.
        (ACTS_PROTECTED, &[], Decision::Pass),
        (
            &[
                Fault::AuthDiscoverPublic,
                Fault::AuthToolsListPublic,
                Fault::AuthLegacyOpen,
                Fault::AuthToolsAnyToken,
            ],
            &[
                ("auth.insufficient-scope", Severity::Low),
                ("auth.invalid-token-accepted", Critical),
            ],
            Decision::Blocked,
        ),
        // Discovery and tools/list validate the token, tools/call takes any (it was PASS:
        // the random token never went to tools/call beside a protected discovery).
        (
            &[Fault::AuthCallAnyToken],
            &[("auth.invalid-token-accepted", Critical)],
            Decision::Blocked,
        ),
        // tools/call, or tools/list, served without any token while discovery requires one:
        // the MCP layer answers past the boundary (tools/list's was PASS).
        (
            &[Fault::AuthToolsCallPublic],
            &[("auth.challenge", Medium)],
            Decision::Review,
        ),
        (
            &[Fault::AuthToolsListPublic],
            &[("auth.challenge", High)],
            Decision::Blocked,
        ),
        // 403 with a Bearer challenge: the boundary with the wrong status, not a WAF.
        (
            &[Fault::AuthNoToken403],
            &[("auth.challenge", High)],
            Decision::Blocked,
        ),
        // insufficient_scope is a SHOULD: low, below the gate.
        (
            &[Fault::AuthNoScope200],
            &[("auth.insufficient-scope", Severity::Low)],
            Decision::Pass,
        ),
    ];
    let mut failures = Vec::new();
    for (faults, expected, decision) in table {
        let fixture = Fixture::start(faults).await.unwrap();
        let report = check_with(&fixture.url(), all_tokens()).await;
        if above_info(&report) != ids(expected) || report.decision != *decision {
            failures.push(format!(
                "{faults:?}: expected {expected:?} ({decision:?}), got {:?}: {:#?}",
                report.decision, report.findings
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The open legacy path is named with its evidence whether or not a credential was given:
/// without one it was "a random token was accepted" on a path that takes none.
#[tokio::test]
async fn an_open_legacy_path_blocks_with_and_without_a_credential() {
    for opts in [options(), all_tokens()] {
        let fixture = Fixture::start(&[Fault::AuthLegacyOpen]).await.unwrap();
        let with_token = opts.credentials.token.is_some();
        let report = check_with(&fixture.url(), opts).await;
        assert_eq!(report.decision, Decision::Blocked, "token: {with_token}");
        let f = report.finding(FindingId::AuthChallenge).unwrap();
        assert!(
            f.evidence.iter().any(|e| e
                .contains("initialize served without a token while server/discover requires one")),
            "{:?}",
            f.evidence
        );
        assert!(report
            .finding(FindingId::AuthInvalidTokenAccepted)
            .is_some());
    }
}

/// Defect 2 (c): without a credential, a public discovery in front of a protected server is
/// "authorization required and no credential given" (exit 3), not exit 4 with auth.* saying
/// the endpoint did not ask; with the credential it passes (exit 0).
#[tokio::test]
async fn a_boundary_behind_a_public_discovery_is_exit_3_without_a_credential() {
    // tools/list public too: the unauthenticated initialize's challenge shows the boundary.
    let both = Fixture::start(&[Fault::AuthDiscoverPublic, Fault::AuthToolsListPublic])
        .await
        .unwrap();
    let fixture = Fixture::start(&[Fault::AuthDiscoverPublic]).await.unwrap();
    // Only tools/call and subscriptions/listen protected: their challenge is the boundary.
    let acts = Fixture::start(ACTS_PROTECTED).await.unwrap();
    for url in [both.url(), fixture.url(), acts.url()] {
        let report = check_with(&url, options()).await;
        assert_eq!(report.decision, Decision::Unknown, "{url}");
        assert!(report.finding(FindingId::AuthCredentialRequired).is_some());
        assert!(
            report.finding(FindingId::ProbeIncomplete).is_none(),
            "{url}: {:#?}",
            report.findings
        );
    }
    for url in [fixture.url(), acts.url()] {
        let (no_token, with_token) = tokio::task::spawn_blocking(move || {
            (
                vantage(&["check", &url], &[]),
                vantage(
                    &["check", &url, "--token-env", "VT"],
                    &[("VT", FIXTURE_TOKEN)],
                ),
            )
        })
        .await
        .unwrap();
        assert_eq!(
            no_token.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&no_token.stdout)
        );
        assert_eq!(
            with_token.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&with_token.stdout)
        );
    }
}

/// `vantage check URL --token-env VT -f json` against the fixture with `faults`: the exit
/// code and the report.
async fn check_json(faults: &[Fault]) -> (Option<i32>, Value) {
    let fixture = Fixture::start(faults).await.unwrap();
    check_json_with_token(&fixture.url(), FIXTURE_TOKEN).await
}

/// Round 15 (AUTHP): discovery and tools/list answer 401 with a Bearer challenge, tools/call
/// lets any bearer token through. Through `vantage check --token-env` it was PASS (exit 0):
/// the random token went to discover and tools/list only. Now it is blocked (exit 2),
/// `auth.garbage-token` critical naming tools/call, found as auth.invalid-token-accepted.
/// The control (the clean protected fixture) stays pass (exit 0), the random token refused
/// on tools/call too.
#[tokio::test]
async fn tools_call_taking_any_token_beside_a_protected_discovery_blocks_vantage_check() {
    let (code, report) = check_json(&[Fault::AuthCallAnyToken]).await;
    assert_eq!(code, Some(2), "{report:#}");
    assert_eq!(report["decision"], "blocked");
    let (outcome, severity, observed) = only_region_check(&report, "auth.garbage-token");
    assert_eq!(
        (outcome.as_str(), &severity),
        ("fail", &Value::from("critical")),
        "{observed}"
    );
    assert!(observed.starts_with("tools/call: 200"), "{observed}");
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "auth.invalid-token-accepted")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(f["severity"], "critical");
    assert!(
        f["evidence"].to_string().contains("tools/call: 200"),
        "{}",
        f["evidence"]
    );

    let (code, report) = check_json(&[Fault::Protected]).await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["decision"], "pass");
    let (outcome, _, observed) = only_region_check(&report, "auth.garbage-token");
    assert_eq!(outcome, "pass", "{observed}");
    for needle in ["server/discover: 401", "tools/list: 401", "tools/call: 401"] {
        assert!(observed.contains(needle), "{needle}: {observed}");
    }
}

/// tools/call served without any token while discovery requires one: blocked (exit 2),
/// `auth.challenge` high with both requests named; and tools/call rate limited without a
/// token: nothing about its boundary was observed, so the decision is unknown (exit 4),
/// never pass.
#[tokio::test]
async fn tools_call_open_or_unseen_beside_a_protected_discovery_never_passes() {
    let (code, report) = check_json(&[Fault::AuthToolsCallPublic]).await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["decision"], "review");
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "auth.challenge")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(f["severity"], "medium");
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains(
            "tools/call reached the MCP layer without a token while server/discover requires one"
        ) && evidence.contains("server/discover (no Authorization) answered 401"),
        "{evidence}"
    );

    let (code, report) = check_json(&[Fault::AuthCallRateLimited]).await;
    assert_eq!(code, Some(4), "{report:#}");
    assert_eq!(report["decision"], "unknown");
    let (outcome, _, observed) = only_region_check(&report, "auth.garbage-token");
    assert_eq!(outcome, "unknown", "{observed}");
    assert!(
        observed.contains("tools/call: rate limited: answered 429"),
        "{observed}"
    );
}
