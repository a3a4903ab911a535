//! A redirect on any request, not only the first (red team round 15, defect 5), through
//! `vantage check`: the fixture serves `server/discover` and `initialize` and redirects every
//! other request (notifications, GET and DELETE, the lists, the token probes) to another
//! origin. Redirects are never followed on any request (checks.md 2.3): another origin in
//! any Location is `redirect.cross-host` (high), naming the request, the decision is blocked
//! and the gate fails (exit 2). The checks whose probe was redirected learnt nothing about
//! their own rule: `unknown`, never a failure under their own id.

use serde_json::Value;
use vantage_fixture::{Fault, Fixture};

use crate::evidence_support::{json_check, shape};

/// The one check of the only region, by id.
fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["regions"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} missing: {report:#}"))
}

/// The finding's evidence lines.
fn evidence(report: &Value, id: &str) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no {id}: {report:#}"))["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

fn ids(report: &Value) -> Vec<(String, String)> {
    shape(report)
        .into_iter()
        .map(|(id, sev, _, _)| (id, sev))
        .collect()
}

#[tokio::test]
async fn notifications_get_delete_and_lists_redirected_cross_host_block_the_gate() {
    let fixture = Fixture::start(&[Fault::RedirectLaterCrossHost])
        .await
        .unwrap();
    let (code, report) = json_check(&[&fixture.url()], &[]).await;
    assert_eq!(code, 2, "{report:#}");
    assert_eq!(report["decision"], "blocked");
    let found = ids(&report);
    assert!(
        found.contains(&("redirect.cross-host".into(), "high".into())),
        "{found:?}"
    );
    // Nothing is blamed under another id: the capabilities are not said to be wrong, a
    // notification redirected is no transport.notification failure.
    for (id, _) in &found {
        assert!(
            [
                "redirect.cross-host",
                "probe.incomplete",
                "transport.get",
                "transport.delete"
            ]
            .contains(&id.as_str()),
            "{id} is blamed: {found:?}"
        );
    }
    let redirect = check(&report, "redirect.none");
    assert_eq!(
        (
            &redirect["outcome"],
            &redirect["severity"],
            &redirect["cause"]
        ),
        (&"fail".into(), &"high".into(), &"cross-host".into())
    );
    let seen = evidence(&report, "redirect.cross-host").join("\n");
    for request in [
        "notifications/",
        "GET",
        "DELETE",
        "tools/list",
        "later.vantage-fixture.invalid",
    ] {
        assert!(seen.contains(request), "{request} not named: {seen}");
    }
    for (id, status) in [
        ("transport.notification", "308"),
        ("caps.discover-matches-handlers", "308"),
        ("method.unknown", "308"),
    ] {
        let c = check(&report, id);
        assert_eq!(
            (&c["outcome"], &c["cause"]),
            (&"unknown".into(), &"other-reason".into()),
            "{id}: {c:#}"
        );
        let observed = c["observed"].as_str().unwrap();
        assert!(
            observed.contains(&format!("answered with a redirect ({status} to")),
            "{id}: {observed}"
        );
    }
    // GET and DELETE keep their own SHOULD (a 3xx is not the 405 asked for), low.
    for id in ["transport.get", "transport.delete"] {
        let c = check(&report, id);
        assert_eq!(
            (&c["outcome"], &c["severity"]),
            (&"warn".into(), &"low".into()),
            "{id}: {c:#}"
        );
    }
}

/// Every authenticated request but discovery redirected to another origin: with the
/// credential, and without one (the random token's request is redirected): the token probe
/// learnt nothing (unknown, not "MUST get 401"), and the redirect is redirect.cross-host.
#[tokio::test]
async fn authenticated_requests_redirected_cross_host_block_the_gate_with_and_without_a_token() {
    let fixture = Fixture::start(&[Fault::AuthRedirectAuthenticated])
        .await
        .unwrap();
    for with_token in [false, true] {
        let mut args = vec![fixture.url()];
        if with_token {
            args.extend(["--token-env".into(), "VANTAGE_R15_TOKEN".into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, report) =
            json_check(&args, &[("VANTAGE_R15_TOKEN", "fxV3f9aQ7twK2m8Lp4vZ")]).await;
        assert_eq!(code, 2, "token {with_token}: {report:#}");
        assert_eq!(report["decision"], "blocked");
        assert!(
            ids(&report).contains(&("redirect.cross-host".into(), "high".into())),
            "token {with_token}: {:?}",
            ids(&report)
        );
        let seen = evidence(&report, "redirect.cross-host").join("\n");
        assert!(seen.contains("(with a token)"), "{seen}");
        let garbage = check(&report, "auth.garbage-token");
        assert_eq!(
            (&garbage["outcome"], &garbage["cause"]),
            (&"unknown".into(), &"other-reason".into()),
            "token {with_token}: {garbage:#}"
        );
        assert!(
            garbage["observed"]
                .as_str()
                .unwrap()
                .contains("answered with a redirect (308 to"),
            "{garbage:#}"
        );
    }
}
