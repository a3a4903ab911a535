//! Red team round 6, TLS: what the handshake check says about the chain and the client
//! certificate a server asks for, against TLS servers of our own on loopback (a chain with an
//! intermediate made here; the lab's DNS for the name).
//!
//! - #7: a server that requires a client certificate answers a TLS 1.3 handshake that looks
//!   complete, then refuses the first request with a `certificate_required` alert. It was
//!   `tls.handshake` pass and then "not MCP" ("check the URL path"): now `tls.handshake`
//!   fails naming mutual TLS, and `era.detect` is skipped (no HTTP answer, no era).
//! - #12: an expired intermediate (the leaf valid 60 days) was `tls.expiry` "the certificate
//!   has expired" ("Renew the certificate"): `tls.expiry` judges the leaf only (pass, 60
//!   days), `tls.handshake` names the intermediate that expired.
//! - #5 (the hint): on an agent, the unknown-issuer hint names `--target-ca-file` (the
//!   agent's `--ca-file` is the coordinator's CA).

// The servers and the engine are a test's setup: they unwrap.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, Outcome, RegionResult, Severity};
use vantage_agent::{Engine, ProbeOptions};
use vantage_fixture::lab::{LabDns, TlsFront};
use vantage_fixture::Fixture;

#[path = "shared/probe.rs"]
mod shared;

const NAME: &str = "mcp.vantage.test";

/// A root, an intermediate valid `int_days` from now (negative: expired), and a leaf for
/// [`NAME`] valid `leaf_days`, signed by the intermediate. Returns the root's PEM, the chain
/// the server sends (leaf, intermediate) and the leaf's key.
fn chain(
    int_days: i64,
    leaf_days: i64,
) -> (String, Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let now = time::OffsetDateTime::now_utc();
    let ca_params = |cn: &str, from: i64, to: i64| {
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        p.not_before = now + time::Duration::days(from);
        p.not_after = now + time::Duration::days(to);
        p
    };
    let root_key = rcgen::KeyPair::generate().unwrap();
    let root_params = ca_params("fxwire root", -30, 300);
    let root = root_params.self_signed(&root_key).unwrap();
    let root_issuer = rcgen::Issuer::new(root_params, root_key);
    let int_key = rcgen::KeyPair::generate().unwrap();
    let int_params = ca_params("fxwire int", -30, int_days);
    let int = int_params.signed_by(&int_key, &root_issuer).unwrap();
    let int_issuer = rcgen::Issuer::new(int_params, int_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let mut leaf_params = rcgen::CertificateParams::new(vec![NAME.to_string()]).unwrap();
    leaf_params.not_before = now - time::Duration::days(1);
    leaf_params.not_after = now + time::Duration::days(leaf_days);
    let leaf = leaf_params.signed_by(&leaf_key, &int_issuer).unwrap();
    (
        root.pem(),
        vec![leaf.der().clone(), int.der().clone()],
        PrivateKeyDer::from(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
    )
}

/// A TLS front on loopback with `certs`/`key` that forwards to `backend`; with
/// `client_ca`, it requires a client certificate signed by it (mutual TLS, TLS 1.3).
async fn serve(
    backend: std::net::SocketAddr,
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    client_ca: Option<&str>,
) -> (u16, TlsFront) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match client_ca {
        Some(pem) => {
            use rustls::pki_types::pem::PemObject;
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots.add(c.unwrap()).unwrap();
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let config = builder.with_single_cert(certs, key).unwrap();
    let front = TlsFront::with_config(backend, config).await;
    (front.addr.port(), front)
}

/// The fixture and a zone holding [`NAME`] (127.0.0.1), for one test.
struct Lab {
    fixture: Fixture,
    dns: LabDns,
}

async fn lab() -> Lab {
    Lab {
        fixture: Fixture::start(&[]).await.unwrap(),
        dns: LabDns::start(&[(NAME, &["127.0.0.1"])]).await,
    }
}

/// One run through a TLS front serving [`chain`]`(int_days, 60)`: with `mtls` it requires a
/// client certificate of the chain's root; with `trust` the vantage trusts that root.
async fn through_front(lab: &Lab, int_days: i64, mtls: bool, trust: bool) -> RegionResult {
    let (root, certs, key) = chain(int_days, 60);
    let (port, front) = serve(lab.fixture.addr, certs, key, mtls.then_some(&*root)).await;
    let r = run(port, &lab.dns, trust.then_some(&*root)).await;
    drop(front);
    r
}

async fn run(port: u16, dns: &LabDns, ca_pem: Option<&str>) -> RegionResult {
    let mut opts: ProbeOptions = shared::resolving_with(dns);
    opts.extra_ca_pem = ca_pem.map(|p| p.as_bytes().to_vec());
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];
    let url = format!("https://{NAME}:{port}/mcp");
    let job = shared::job(&url, &opts);
    Engine::new(opts).unwrap().run_job(&job).await
}

fn check(r: &RegionResult, id: CheckId) -> vantage_agent::model::CheckResult {
    r.check(id)
        .unwrap_or_else(|| panic!("{id} recorded"))
        .clone()
}

#[tokio::test]
async fn a_server_requiring_a_client_certificate_fails_the_handshake_not_the_era() {
    let lab = lab().await;
    let r = through_front(&lab, 300, true, true).await;
    let hs = check(&r, CheckId::TlsHandshake);
    shared::assert_seen(
        &hs,
        (hs.outcome, hs.severity, hs.cause),
        (Outcome::Fail, Some(Severity::High), Some(Cause::Tls)),
        "the server requires a client certificate (mutual TLS)",
    );
    let era = check(&r, CheckId::EraDetect);
    shared::assert_seen(&era, era.outcome, Outcome::Skip, "the TLS handshake failed");
    // The one failure is the handshake: no "not MCP", nothing after it judged.
    let problems: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.outcome.is_problem())
        .map(|c| c.id)
        .collect();
    assert_eq!(problems, vec![CheckId::TlsHandshake]);

    // Control: a front of the same kind without the client-certificate requirement.
    assert_a_clean_front_passes(&lab).await;
}

#[tokio::test]
async fn an_expired_intermediate_is_named_and_the_leaf_keeps_its_own_expiry() {
    let lab = lab().await;
    let r = through_front(&lab, -1, false, true).await;
    let hs = check(&r, CheckId::TlsHandshake);
    shared::assert_seen_all(
        &hs,
        (hs.outcome, hs.severity, hs.cause),
        (Outcome::Fail, Some(Severity::High), Some(Cause::Tls)),
        &[
            "the intermediate certificate CN=fxwire int the server sends expired on",
            "serve the current intermediate",
        ],
    );
    shared::assert_not_seen(&hs, &["the leaf certificate ("]);
    let exp = check(&r, CheckId::TlsExpiry);
    shared::assert_seen(
        &exp,
        (exp.outcome, exp.severity),
        (Outcome::Pass, None),
        "the leaf certificate is valid for 60 more days",
    );

    // Control: a current intermediate, the same leaf life.
    assert_a_clean_front_passes(&lab).await;
}

/// The control: a front of the same kind with a current chain (an intermediate valid 300
/// days, a leaf 60) and no client-certificate requirement completes a clean handshake.
async fn assert_a_clean_front_passes(lab: &Lab) {
    let r = through_front(lab, 300, false, true).await;
    assert_eq!(check(&r, CheckId::TlsHandshake).outcome, Outcome::Pass);
    assert_eq!(check(&r, CheckId::EraDetect).outcome, Outcome::Pass);
}

/// The hint for an untrusted chain names the flag of the process it runs in: the agent
/// binary sets `--target-ca-file` at start (this test binary does it the same way).
#[tokio::test]
async fn on_an_agent_the_unknown_issuer_hint_names_target_ca_file() {
    vantage_agent::probe::tls::set_target_ca_flag("--target-ca-file");
    let r = through_front(&lab().await, 300, false, false).await;
    let hs = check(&r, CheckId::TlsHandshake);
    shared::assert_seen(
        &hs,
        (hs.outcome, hs.cause),
        (Outcome::Fail, Some(Cause::Tls)),
        "for a lab CA use --target-ca-file)",
    );
}

/// Red team round 6, #5 and #11: the region's `tls` evidence is the chain it was presented,
/// read whether or not it verified, with how this vantage judged it and its own clock. The
/// same front, trusted and not: the same fingerprints, two verdicts (the merge compares them
/// across regions).
#[tokio::test]
async fn the_presented_chain_is_evidence_whether_or_not_it_verified() {
    use vantage_agent::model::TlsVerdict;
    let lab = lab().await;
    let (root, certs, key) = chain(300, 60);
    let sha = |der: &[u8]| -> String {
        ring::digest::digest(&ring::digest::SHA256, der)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let want: Vec<String> = certs.iter().map(|c| sha(c.as_ref())).collect();
    let (port, front) = serve(lab.fixture.addr, certs, key, None).await;
    let before = time::OffsetDateTime::now_utc().unix_timestamp();
    let trusted = run(port, &lab.dns, Some(&root)).await;
    let untrusted = run(port, &lab.dns, None).await;
    let after = time::OffsetDateTime::now_utc().unix_timestamp();
    drop(front);
    for (r, verdict, handshake) in [
        (&trusted, TlsVerdict::Accepted, Outcome::Pass),
        (&untrusted, TlsVerdict::UnknownIssuer, Outcome::Fail),
    ] {
        assert_eq!(check(r, CheckId::TlsHandshake).outcome, handshake);
        let t = r.tls.as_ref().expect("the region's tls evidence");
        assert_eq!(
            (&t.leaf_sha256, &t.chain_sha256, t.verdict, t.mixed),
            (&want[0], &want, verdict, false)
        );
        // The leaf is valid 60 days; the clock is this vantage's, at the handshake.
        let days_left = (t.leaf_not_after - before) / 86_400;
        assert!((59..=60).contains(&days_left), "{days_left}");
        assert!(t.leaf_not_before < before, "{}", t.leaf_not_before);
        assert!((before..=after).contains(&t.clock), "{}", t.clock);
    }
    // An expired intermediate: judged expired, the leaf's own window kept.
    let r = through_front(&lab, -1, false, true).await;
    let t = r.tls.expect("tls evidence of a refused chain");
    assert_eq!((t.verdict, t.chain_sha256.len()), (TlsVerdict::Expired, 2));
}

/// One engine serves many runs (an agent's jobs, several endpoints of one `vantage check`):
/// every run must see the full handshake and the presented chain. A resumed TLS session
/// presents no certificate, so the expiry and the chain's evidence would go unseen from the
/// second run on (red team round 11, item 1).
#[tokio::test]
async fn every_run_of_one_engine_sees_the_certificate() {
    let lab = lab().await;
    let (root, certs, key) = chain(300, 60);
    let (port, front) = serve(lab.fixture.addr, certs, key, None).await;
    let mut opts: ProbeOptions = shared::resolving_with(&lab.dns);
    opts.extra_ca_pem = Some(root.as_bytes().to_vec());
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];
    let job = shared::job(&format!("https://{NAME}:{port}/mcp"), &opts);
    let engine = Engine::new(opts).unwrap();
    for run in 1..=3 {
        let r = engine.run_job(&job).await;
        let expiry = check(&r, CheckId::TlsExpiry);
        assert_eq!(
            expiry.outcome,
            Outcome::Pass,
            "run {run}: {}",
            expiry.observed
        );
        assert!(
            expiry.observed.contains("days"),
            "run {run}: {}",
            expiry.observed
        );
        assert!(r.tls.is_some(), "run {run}: the region's tls evidence");
    }
    drop(front);
}
