//! Red team round 6, #5 and #11, with real processes and real TLS: `vantage serve`, three
//! `vantage-agent`s (a, b, c) asking the lab's DNS, a TLS front with a lab-CA leaf valid 20
//! more days, and `vantage check --coordinator`. Agent b judges that chain with its own trust
//! store (started without `--target-ca-file`) or its own clock (25 or 10 days ahead, through
//! the debug build's `VANTAGE_TEST_CLOCK_SKEW_S` seam). It was a high regional `tls.*` about
//! the target (blocked, "Renew the certificate") or `tls.expiry` medium (review); it is the
//! vantage's `probe.trust-store` / `probe.clock-skew`, unknown (exit 4), never pass. The
//! control: the same fleet with b like a and c passes (exit 0).

use std::time::Duration;

use serde_json::Value;
use vantage_fixture::Fixture;

use crate::evidence_support::{check_of, finding, json_check, row, shape};
use crate::fleet::wait_agents;
use crate::procs::{agent_token, agent_with_env, coordinator, Proc, API_TOKEN};
use crate::support::{LabCa, LabDns, Scratch, TlsFront};

const NAME: &str = "mcp.vantage.test";
const DAY_S: i64 = 86_400;

/// How agent b differs from a and c.
struct B<'a> {
    trusts_the_lab_ca: bool,
    env: &'a [(&'a str, &'a str)],
}

/// The exit code and JSON report of one fleet check of the front; the fleet is gone after.
async fn fleet_check(name: &str, b: B<'_>) -> (i32, Value) {
    let dir = Scratch::new(name);
    let fixture = Fixture::start(&[]).await.unwrap();
    let ca = LabCa::new();
    let (cert, key) = ca.leaf(&[NAME], 20);
    let front = TlsFront::start(fixture.addr, &cert, &key).await;
    let dns = LabDns::start(&[(NAME, &["127.0.0.1"])]).await;
    let ca_file = dir.join("lab-ca.pem");
    std::fs::write(&ca_file, &ca.ca_pem).unwrap();
    let c = coordinator(
        &dir,
        &["a", "b", "c"],
        "127.0.0.1:0",
        "127.0.0.1:0",
        "assume_global = [\"127.0.0.0/8\"]\n",
    );
    let args = |trust: bool| {
        let mut v = vec!["--nameserver".to_string(), dns.addr.to_string()];
        if trust {
            v.extend(["--target-ca-file".into(), ca_file.display().to_string()]);
        }
        v
    };
    let agents: Vec<Proc> = vec![
        agent_with_env(&c.grpc, "a", &agent_token("a"), &args(true), &[]),
        agent_with_env(
            &c.grpc,
            "b",
            &agent_token("b"),
            &args(b.trusts_the_lab_ca),
            b.env,
        ),
        agent_with_env(&c.grpc, "c", &agent_token("c"), &args(true), &[]),
    ];
    wait_agents(&c, 3, Duration::from_secs(20)).await;
    let url = format!("https://{NAME}:{}/mcp", front.addr.port());
    let out = json_check(
        &[&url, "--coordinator", &c.api],
        &[("VANTAGE_API_TOKEN", API_TOKEN)],
    )
    .await;
    drop((agents, c, front, dns, fixture));
    out
}

fn tls_of<'a>(report: &'a Value, region: &str) -> &'a Value {
    report["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["region"] == region)
        .map(|r| &r["tls"])
        .unwrap_or_else(|| panic!("{region} missing: {report}"))
}

/// Every region was presented the same leaf; a and c accepted it with clocks that agree.
fn same_leaf_accepted_by_a_and_c(report: &Value) -> i64 {
    let a = tls_of(report, "a");
    let leaf = a["leaf_sha256"].as_str().unwrap();
    assert_eq!(leaf.len(), 64, "{a}");
    for r in ["a", "b", "c"] {
        assert_eq!(tls_of(report, r)["leaf_sha256"], leaf, "{report}");
    }
    for r in ["a", "c"] {
        assert_eq!(tls_of(report, r)["verdict"], "accepted", "{report}");
    }
    let days_left = (a["leaf_not_after"].as_i64().unwrap() - a["clock"].as_i64().unwrap()) / DAY_S;
    assert!((19..=20).contains(&days_left), "{a}");
    a["clock"].as_i64().unwrap()
}

/// The fleet with b trusting the lab CA like a and c, its clock `days` ahead of theirs.
async fn fleet_check_b_ahead(name: &str, days: i64) -> (i32, Value) {
    let skew = (days * DAY_S).to_string();
    let env = [("VANTAGE_TEST_CLOCK_SKEW_S", skew.as_str())];
    let b = B {
        trusts_the_lab_ca: true,
        env: &env,
    };
    fleet_check(name, b).await
}

/// The one finding is `id`, medium, regional, about b alone, and the check is unknown (exit 4).
fn only_b_unknown_by(id: &str, code: i32, report: &Value) {
    assert_eq!(
        shape(report),
        vec![row(id, "medium", "regional", &["b"])],
        "{report}"
    );
    assert_eq!((code, report["decision"].as_str()), (4, Some("unknown")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_without_the_lab_ca_is_its_trust_store_not_the_target() {
    let (code, report) = fleet_check(
        "tlsr-trust",
        B {
            trusts_the_lab_ca: false,
            env: &[],
        },
    )
    .await;
    only_b_unknown_by("probe.trust-store", code, &report);
    same_leaf_accepted_by_a_and_c(&report);
    assert_eq!(tls_of(&report, "b")["verdict"], "unknown-issuer");
    // What b saw stays in its region section; the finding says why it is b's.
    assert_eq!(check_of(&report, "b", "tls.handshake")["outcome"], "fail");
    let f = finding(&report, "probe.trust-store");
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains(
            "b: tls.handshake (this vantage does not trust the issuer of the chain a, c verified"
        ) && evidence.contains("--target-ca-file"),
        "{f}"
    );
    // a and c accepted with the lab CA they were given; b checks with the public roots alone,
    // as public clients do: the words name both sides (red team round 12, item 6).
    assert_eq!(tls_of(&report, "a")["extra_roots"], true);
    assert!(tls_of(&report, "b").get("extra_roots").is_none());
    assert!(
        evidence.contains("public roots alone")
            && evidence.contains("serve a chain from a public CA"),
        "{f}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_clock_is_25_days_ahead_is_its_clock_not_the_target() {
    let (code, report) = fleet_check_b_ahead("tlsr-clock25", 25).await;
    only_b_unknown_by("probe.clock-skew", code, &report);
    let theirs = same_leaf_accepted_by_a_and_c(&report);
    let b = tls_of(&report, "b");
    assert_eq!(b["verdict"], "expired", "{b}");
    let ahead = (b["clock"].as_i64().unwrap() - theirs) / DAY_S;
    assert_eq!(ahead, 25, "{b}");
    let evidence = finding(&report, "probe.clock-skew")["evidence"].to_string();
    assert!(
        evidence.contains("b: tls.handshake, tls.expiry (this vantage's clock read")
            && evidence.contains("25.0 days ahead of the clocks of a, c"),
        "{evidence}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_clock_is_10_days_ahead_is_no_review_of_the_target() {
    let (code, report) = fleet_check_b_ahead("tlsr-clock10", 10).await;
    only_b_unknown_by("probe.clock-skew", code, &report);
    same_leaf_accepted_by_a_and_c(&report);
    assert_eq!(tls_of(&report, "b")["verdict"], "accepted");
    assert_eq!(check_of(&report, "b", "tls.expiry")["outcome"], "warn");
}

/// The control: b like a and c. The same front passes everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_fleet_with_b_like_the_others_passes() {
    let (code, report) = fleet_check(
        "tlsr-control",
        B {
            trusts_the_lab_ca: true,
            env: &[],
        },
    )
    .await;
    assert_eq!(shape(&report), vec![], "{report}");
    assert_eq!((code, report["decision"].as_str()), (0, Some("pass")));
    same_leaf_accepted_by_a_and_c(&report);
    assert_eq!(tls_of(&report, "b")["verdict"], "accepted");
}
