//! What the engine's tests (`agent/tests/engine.rs`, `era_front.rs`) and the coordinator's
//! end-to-end tests (`coordinator/tests/e2e/support.rs`) share: the test options, the job
//! they travel as, the lab's zone, and the assertions on checks' outcomes and what they
//! observed (`assert_seen`, `assert_seen_all`, `assert_not_seen`, `assert_outcomes`,
//! `assert_no_check_says`).
//!
//! Included by path (`#[path] mod`) rather than put in `vantage_fixture`: these speak the
//! agent's types (`ProbeOptions`, `Job`, `CheckResult`), and the fixture must not depend on
//! the agent (the agent's tests depend on the fixture, and the `vantage` binary links it).

#![allow(dead_code)]

use std::fmt::Debug;
use std::time::Duration;

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{CheckResult, Outcome, RegionResult};
use vantage_agent::probe::dns::ResolverChoice;
use vantage_agent::{Job, Policy, ProbeOptions, Target};
use vantage_fixture::lab::{LabCa, LabDns, TlsFront};
use vantage_fixture::Fixture;

/// Options for tests: short per-exchange timeouts so hostile cases end quickly.
pub fn options() -> ProbeOptions {
    ProbeOptions {
        check_timeout: Duration::from_millis(1500),
        deadline: Duration::from_secs(10),
        ..ProbeOptions::default()
    }
}

/// The job for `url`: the job-level fields of `opts` (deadline, policy, credentials)
/// travel as the job, the way every vantage receives them.
pub fn job(url: &str, opts: &ProbeOptions) -> Job {
    Job {
        target: Target::parse(url).expect("target"),
        deadline: opts.deadline,
        expect_auth: opts.expect_auth,
        policy: Policy {
            assume_global: opts.assume_global.clone(),
            allow_non_global: opts.allow_non_global.clone(),
        },
        credentials: opts.credentials.clone(),
    }
}

/// The lab: a clean fixture, a lab CA, and a DNS server answering `mcp.vantage.test` (A
/// 127.0.0.1), `v6only.vantage.test` (AAAA ::1) and `dual.vantage.test` (both).
pub struct Lab {
    pub fixture: Fixture,
    pub ca: LabCa,
    pub dns: LabDns,
}

pub async fn lab() -> Lab {
    lab_with(&[
        ("mcp.vantage.test", &["127.0.0.1"]),
        ("v6only.vantage.test", &["::1"]),
        ("dual.vantage.test", &["127.0.0.1", "::1"]),
    ])
    .await
}

/// The lab (a clean fixture, a lab CA) with a DNS server holding `records` instead.
pub async fn lab_with(records: &[(&str, &[&str])]) -> Lab {
    let fixture = Fixture::start(&[]).await.expect("fixture");
    let ca = LabCa::new();
    let dns = LabDns::start(records).await;
    Lab { fixture, ca, dns }
}

impl Lab {
    /// The plain-http URL of the fixture under `name` (a name the lab's DNS answers, or not).
    pub fn url(&self, name: &str) -> String {
        format!("http://{name}:{}/mcp", self.fixture.addr.port())
    }
}

/// [`options`] resolving names with the lab's DNS server.
pub fn resolving_with(dns: &LabDns) -> ProbeOptions {
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    opts
}

/// The engine's run of `url` resolving with the DNS server at `nameserver`, the ranges in
/// `global` taken as globally routable, with IPv6 as `ipv6` says (`--no-ipv6` when false).
pub async fn run_resolving(
    url: &str,
    nameserver: std::net::SocketAddr,
    global: &[&str],
    ipv6: bool,
) -> RegionResult {
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![nameserver],
    };
    opts.ipv6 = ipv6;
    opts.assume_global = global.iter().map(|c| c.parse().expect("a CIDR")).collect();
    let job = job(url, &opts);
    vantage_agent::Engine::new(opts)
        .expect("an engine")
        .run_job(&job)
        .await
}

/// The checks that failed or warned.
pub fn problems(r: &RegionResult) -> Vec<CheckId> {
    r.checks
        .iter()
        .filter(|c| c.outcome.is_problem())
        .map(|c| c.id)
        .collect()
}

/// [`resolving_with`] the lab's DNS, loopback of both families (127.0.0.0/8, ::1) taken as
/// global: what a name resolves to decides, not the class of the lab's addresses.
pub fn both_families_global(lab: &Lab) -> ProbeOptions {
    let mut opts = resolving_with(&lab.dns);
    opts.assume_global = vec![
        "127.0.0.0/8".parse().expect("a CIDR"),
        "::1/128".parse().expect("a CIDR"),
    ];
    opts
}

/// `opts` as a fleet vantage's: the target's addresses obey the egress policy like every
/// other (the lab's are loopback, so the policy refuses them).
pub fn fleet_vantage(opts: ProbeOptions) -> ProbeOptions {
    ProbeOptions {
        allow_named_target: false,
        ..opts
    }
}

/// [`resolving_with`] the lab's DNS, trusting the lab CA, with loopback taken as global.
pub fn trusting(lab: &Lab) -> ProbeOptions {
    let mut opts = resolving_with(&lab.dns);
    opts.extra_ca_pem = Some(lab.ca.ca_pem.clone().into_bytes());
    opts.assume_global = vec!["127.0.0.0/8".parse().expect("a CIDR")];
    opts
}

/// The named HTTPS target `mcp.vantage.test` behind the lab's TLS front (a leaf valid 90
/// days), three ways: the options under which it is clean, then one thing taken away each
/// time. The front serves while this lives.
pub struct NamedTarget {
    pub front: TlsFront,
    pub url: String,
    /// [`trusting`]: the lab CA trusted, loopback taken as global.
    pub clean: ProbeOptions,
    /// Without `--assume-global`, loopback is what it is: not globally routable.
    pub not_global: ProbeOptions,
    /// Without the lab CA, the chain is untrusted.
    pub untrusted: ProbeOptions,
}

pub async fn named_target(lab: &Lab) -> NamedTarget {
    let (front, url) = front(lab, &["mcp.vantage.test"], 90).await;
    let clean = trusting(lab);
    let mut not_global = clean.clone();
    not_global.assume_global.clear();
    let mut untrusted = clean.clone();
    untrusted.extra_ca_pem = None;
    NamedTarget {
        front,
        url,
        clean,
        not_global,
        untrusted,
    }
}

/// A TLS front for the lab's fixture with a leaf of the lab CA for `names`, valid `days`,
/// and the URL of `mcp.vantage.test` through it (the front serves while it lives).
pub async fn front(lab: &Lab, names: &[&str], days: i64) -> (TlsFront, String) {
    let (cert, key) = lab.ca.leaf(names, days);
    let front = TlsFront::start(lab.fixture.addr, &cert, &key).await;
    let url = format!("https://mcp.vantage.test:{}/mcp", front.addr.port());
    (front, url)
}

/// A loopback port nothing listens on (bound, read, and let go).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    l.local_addr().expect("local address").port()
}

/// Assert `got == want` (the fields of `c` the caller chose: outcome, severity, cause) and
/// that what `c` observed contains `needle`; either failure says what was observed.
#[track_caller]
pub fn assert_seen<T: PartialEq + Debug>(c: &CheckResult, got: T, want: T, needle: &str) {
    assert_seen_all(c, got, want, &[needle]);
}

/// [`assert_seen`] with every one of `needles` in what `c` observed.
#[track_caller]
pub fn assert_seen_all<T: PartialEq + Debug>(c: &CheckResult, got: T, want: T, needles: &[&str]) {
    assert_eq!(got, want, "{}: {}", c.id, c.observed);
    for needle in needles {
        assert!(
            c.observed.contains(needle),
            "{}: {:?} not in {}",
            c.id,
            needle,
            c.observed
        );
    }
}

/// None of `never` is in what `c` observed.
#[track_caller]
pub fn assert_not_seen(c: &CheckResult, never: &[&str]) {
    for needle in never {
        assert!(
            !c.observed.contains(needle),
            "{}: {:?} in {}",
            c.id,
            needle,
            c.observed
        );
    }
}

/// Every one of `ids` is in `r` with the outcome `want`; a failure names the check and what
/// it observed.
#[track_caller]
pub fn assert_outcomes(r: &RegionResult, ids: impl IntoIterator<Item = CheckId>, want: Outcome) {
    for id in ids {
        let c = r.check(id).unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(c.outcome, want, "{id}: {}", c.observed);
    }
}

/// No check of `r` observed `needle` (`what` says which run this is).
#[track_caller]
pub fn assert_no_check_says(r: &RegionResult, needle: &str, what: &str) {
    for c in &r.checks {
        assert!(
            !c.observed.contains(needle),
            "{what} {}: {}",
            c.id,
            c.observed
        );
    }
}

/// Run the ignored test `inner` of this test binary alone inside a new network namespace,
/// after the shell commands `setup` (`ip link set lo up` comes first), and assert it passed.
/// Without the right to make one (not root) it is skipped with a line saying so, except
/// under CI, where it must run.
pub fn in_a_namespace(setup: &str, inner: &str) {
    if let Err(why) = can_unshare() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this: it needs a network namespace (root): {why}"
        );
        eprintln!("SKIPPED: needs a network namespace (root): {why}");
        return;
    }
    let exe = std::env::current_exe().expect("this test binary");
    let setup = if setup.is_empty() {
        String::new()
    } else {
        format!(" && {setup}")
    };
    let out = std::process::Command::new("unshare")
        .args([
            "--net",
            "sh",
            "-c",
            &format!("ip link set lo up{setup} && exec \"$0\" --exact {inner} --ignored --nocapture --test-threads 1"),
        ])
        .arg(&exe)
        .output()
        .expect("unshare runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether this process may make a network namespace (`unshare --net`: root, or a user
/// namespace); the error says why not.
pub fn can_unshare() -> Result<(), String> {
    let out = std::process::Command::new("unshare")
        .args(["--net", "true"])
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Serve `app` on a loopback port (an ephemeral one): its address, and the task to abort.
pub async fn serve_app(app: axum::Router) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, task)
}

/// `c` is `unknown` because this vantage's own read cap stopped the read (cause
/// `size-cap`, no severity): no evidence either way about the target.
#[track_caller]
pub fn assert_cut_by_a_cap(c: &CheckResult, what: &str) {
    assert_eq!(
        (c.outcome, c.severity, c.cause),
        (
            Outcome::Unknown,
            None,
            Some(vantage_agent::model::Cause::SizeCap)
        ),
        "{what}: {}",
        c.observed
    );
}
