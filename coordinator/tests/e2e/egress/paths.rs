//! Every URL the probe engine reads, pointed at the internal service four ways, through the
//! real `vantage check` binary: (a) the loopback literal, (b) a name the lab DNS server
//! resolves to it, (c) a name that answers the target's "public" address on the first
//! query and the internal one on every later query (rebinding), (d) the IPv4-mapped
//! literal `[::ffff:127.0.0.1]`. The internal service must count zero connections, the
//! report must say why, and the credential it serves must appear nowhere.

use std::process::Output;

use serde_json::Value;

use super::lab::RebindDns;
use super::{Hostile, Lab, SECRET};
use crate::evidence_support::{check_came_out, check_of};
use crate::support::{assert_valid, vantage_env};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Loopback,
    Name,
    Rebind,
    Mapped,
}

const CASES: [Case; 4] = [Case::Loopback, Case::Name, Case::Rebind, Case::Mapped];

impl Case {
    fn origin(self, port: u16) -> String {
        match self {
            Case::Loopback => format!("http://127.0.0.1:{port}"),
            Case::Name => format!("http://internal.lab.test:{port}"),
            Case::Rebind => format!("http://rebind.lab.test:{port}"),
            Case::Mapped => format!("http://[::ffff:127.0.0.1]:{port}"),
        }
    }

    /// The refusal the report must carry for this case.
    fn refusal(self) -> String {
        let ip = if self == Case::Mapped {
            "::ffff:127.0.0.1"
        } else {
            "127.0.0.1"
        };
        format!("refused by egress policy: {ip} is loopback (RFC 1122); allow it with probe.allow_non_global")
    }

    fn is_literal(self) -> bool {
        matches!(self, Case::Loopback | Case::Mapped)
    }
}

/// What one run left behind.
struct Run {
    case: Case,
    port: u16,
    report: Value,
    dns: RebindDns,
}

impl Run {
    fn check(&self, id: &str) -> &Value {
        check_of(&self.report, "local", id)
    }

    /// `id` is unknown because the policy refused, and says so.
    fn refused(&self, id: &str) -> String {
        let c = check_came_out(&self.report, "local", id, "unknown", "policy-refused");
        let observed = c["observed"].as_str().unwrap().to_string();
        assert!(
            observed.contains(&self.case.refusal()),
            "{:?} {id}: {observed}",
            self.case
        );
        observed
    }

    fn observed(&self, id: &str) -> String {
        self.check(id)["observed"].as_str().unwrap().to_string()
    }

    /// The redirect `id` saw was not followed and says so (for a literal, with the refusal
    /// the policy would have made); a name in a Location is not even resolved.
    fn not_followed(&self, id: &str) {
        let observed = self.observed(id);
        assert!(
            observed.contains("not followed: redirects never are"),
            "{observed}"
        );
        if self.case.is_literal() {
            assert!(observed.contains(&self.case.refusal()), "{observed}");
        }
        assert_eq!(
            self.dns.queries("internal.lab.test") + self.dns.queries("rebind.lab.test"),
            0
        );
    }
}

/// `vantage check URL` with the lab resolver, the target's address assumed global, a JSON
/// report, and `extra` arguments.
async fn check_with_lab_dns(
    url: &str,
    dns: &RebindDns,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let ns = dns.addr.to_string();
    let mut args = vec![
        "check",
        url,
        "--nameserver",
        &ns,
        "--assume-global",
        "127.0.0.2/32",
        "-f",
        "json",
        "--check-timeout",
        "2s",
    ];
    args.extend_from_slice(extra);
    vantage_env(&args, env).await
}

/// Run `vantage check` against a hostile target built by `scenario(case, port)`, and assert
/// what holds on every path: zero internal connections, a live target, no credential.
async fn run(case: Case, scenario: impl Fn(Case, u16) -> Hostile) -> Run {
    let lab = Lab::start(|port| scenario(case, port)).await;
    let dns = RebindDns::start(
        &[("internal.lab.test", "127.0.0.1")],
        &[("rebind.lab.test", "127.0.0.2", "127.0.0.1")],
    )
    .await;
    let url = format!("http://127.0.0.2:{}/mcp", lab.port);
    let out = check_with_lab_dns(
        &url,
        &dns,
        &["--timeout", "20s"],
        &[("VANTAGE_LOG", "trace")],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    lab.assert_contained(&format!("{case:?}\n{stdout}"));
    assert!(
        !stdout.contains(SECRET) && !stderr.contains(SECRET),
        "{case:?}: the internal answer leaked"
    );
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{case:?}: not JSON ({e}): {stdout}\n{stderr}"));
    assert_valid(&report);
    Run {
        case,
        port: lab.port,
        report,
        dns,
    }
}

async fn all(scenario: impl Fn(Case, u16) -> Hostile + Copy) -> Vec<Run> {
    futures::future::join_all(CASES.iter().map(|&c| run(c, scenario))).await
}

#[tokio::test]
async fn the_challenge_resource_metadata() {
    for r in all(|case, port| Hostile {
        resource_metadata: Some(format!("{}/prm", case.origin(port))),
        authorization_servers: vec![case.origin(port)],
        ..Hostile::default()
    })
    .await
    {
        if r.case == Case::Rebind {
            // The first answer (the public side) was checked and connected to, pinned: the
            // metadata came from 127.0.0.2. The next lookup answered 127.0.0.1: refused.
            let prm = r.observed("auth.prm");
            assert!(prm.contains(&format!("(at 127.0.0.2:{})", r.port)), "{prm}");
            r.refused("auth.as-metadata");
            assert!(
                r.dns.queries("rebind.lab.test") >= 4,
                "two lookups, A and AAAA each"
            );
        } else {
            let prm = r.refused("auth.prm");
            assert!(
                prm.starts_with("protected resource metadata not fetched"),
                "{prm}"
            );
            let asm = r.check("auth.as-metadata");
            assert_eq!(asm["outcome"], "skip", "{asm}");
            r.refused("auth.metadata-redirect");
        }
    }
}

#[tokio::test]
async fn the_prm_authorization_servers() {
    for r in all(|case, port| Hostile {
        resource_metadata: Some(format!("http://127.0.0.2:{port}/prm")),
        authorization_servers: vec![format!("http://127.0.0.2:{port}"), case.origin(port)],
        ..Hostile::default()
    })
    .await
    {
        let prm = r.observed("auth.prm");
        assert!(prm.contains("resource matches"), "{prm}");
        // The public issuer was examined; the internal one is no evidence either way.
        let asm = r.refused("auth.as-metadata");
        assert!(asm.contains(&r.case.origin(r.port)), "{asm}");
        if r.case == Case::Rebind {
            assert!(
                asm.contains(&format!("(at 127.0.0.2:{})", r.port)),
                "the first answer was the public side: {asm}"
            );
        }
    }
}

#[tokio::test]
async fn every_authorization_server_metadata_candidate() {
    for r in all(|case, port| Hostile {
        resource_metadata: Some(format!("http://127.0.0.2:{port}/prm")),
        authorization_servers: vec![format!("{}/tenant", case.origin(port))],
        ..Hostile::default()
    })
    .await
    {
        let asm = r.refused("auth.as-metadata");
        // Three candidates for an issuer with a path; each one refused (for the rebinding
        // name, the first lookup reached the public side, which had no such document).
        let refusals = asm.matches("refused by egress policy").count();
        let expected = if r.case == Case::Rebind { 2 } else { 3 };
        assert_eq!(refusals, expected, "{:?}: {asm}", r.case);
        for form in [
            "/.well-known/oauth-authorization-server/tenant",
            "/.well-known/openid-configuration/tenant",
            "/tenant/.well-known/openid-configuration",
        ] {
            assert!(asm.contains(form), "{form}: {asm}");
        }
    }
}

#[tokio::test]
async fn a_redirect_location() {
    for r in all(|case, port| Hostile {
        redirect: Some(format!("{}/mcp", case.origin(port))),
        ..Hostile::default()
    })
    .await
    {
        let c = r.check("redirect.none");
        assert_eq!(c["outcome"], "fail", "{c}");
        r.not_followed("redirect.none");
    }
}

#[tokio::test]
async fn a_redirect_on_metadata() {
    for r in all(|case, port| Hostile {
        resource_metadata: Some(format!("http://127.0.0.2:{port}/prm")),
        prm_redirect: Some(format!("{}/prm", case.origin(port))),
        ..Hostile::default()
    })
    .await
    {
        check_came_out(
            &r.report,
            "local",
            "auth.metadata-redirect",
            "fail",
            "cross-host",
        );
        r.not_followed("auth.metadata-redirect");
    }
}

/// The target's own name rebinding: it is resolved once, checked, connected to and pinned;
/// the well-known metadata URIs on the same name use that address, with no second lookup
/// that could answer the internal one.
#[tokio::test]
async fn the_target_name_itself_is_pinned() {
    let lab = Lab::start(|port| Hostile {
        authorization_servers: vec![format!("http://127.0.0.2:{port}")],
        ..Hostile::default()
    })
    .await;
    let port = lab.port;
    let dns = RebindDns::start(&[], &[("rebind.lab.test", "127.0.0.2", "127.0.0.1")]).await;
    let url = format!("http://rebind.lab.test:{port}/mcp");
    let out = check_with_lab_dns(&url, &dns, &[], &[]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    lab.assert_contained(&stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let prm = check_of(&report, "local", "auth.prm");
    // The PRM came from the well-known URI on the pinned address, though the name's later
    // answers are 127.0.0.1 (the PRM names the endpoint by its address: resource differs).
    assert!(
        prm["observed"]
            .as_str()
            .unwrap()
            .contains(&format!("(at 127.0.0.2:{port})")),
        "{prm}"
    );
    assert_eq!(
        report["regions"][0]["dns"]["a"],
        serde_json::json!(["127.0.0.2"])
    );
    assert_eq!(dns.queries("rebind.lab.test"), 2, "one lookup: A and AAAA");
}
