//! TLS: the trust store (web PKI roots plus `--ca-file`), a handshake per connected address,
//! and the leaf certificate's expiry.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::RootCertStore;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::http::fmt_wait;
use super::tls_chain::{self, ChainTap, Seen};
use super::verdict::{Recorder, Verdict};
use crate::catalog::CheckId;
use crate::egress::EgressPolicy;
use crate::model::{Cause, Severity, TlsObservation, TlsVerdict};

/// Why a trust store could not be built. The cause is the source (`{:#}` shows it).
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The PEM text could not be read.
    #[error("--ca-file")]
    Pem(#[source] std::io::Error),
    /// A certificate of the file is not usable as a trust anchor.
    #[error("--ca-file")]
    Certificate(#[source] rustls::Error),
    /// The TLS library refused the protocol versions (never with its default provider).
    #[error("the TLS client configuration")]
    Versions(#[source] rustls::Error),
    #[error("--ca-file holds no certificate; give a PEM file with at least one CERTIFICATE block")]
    Empty,
}

/// A TLS failure in words. rustls prints some errors in its internal form
/// (`invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))`); the report says what
/// happened instead.
pub fn tls_words(e: &rustls::Error) -> String {
    match e {
        rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired) => {
            CLIENT_CERT_REQUIRED.into()
        }
        rustls::Error::InvalidCertificate(c) => format!(
            "the server's certificate was rejected: {}",
            certificate_words(&format!("{c:?}"))
        ),
        other => {
            let shown = other.to_string();
            if shown.contains('(') || shown.contains('{') {
                certificate_words(&format!("{other:?}"))
            } else {
                shown
            }
        }
    }
}

/// A server that requires a client certificate (mutual TLS), in words. With TLS 1.3 its
/// `certificate_required` alert arrives after the client's Finished, on the first read: the
/// handshake looked done, and it was refused.
pub const CLIENT_CERT_REQUIRED: &str = "the server requires a client certificate (mutual TLS): it refused this vantage, which sends none, with a certificate_required alert; clients without one cannot connect";

/// Which flag adds a trust anchor for the target, in this process: `--ca-file` for the CLI,
/// `--target-ca-file` for the agent (whose `--ca-file` is the coordinator's CA), set once at
/// start by the agent binary.
static CA_FLAG: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Name the flag that adds a trust anchor for the target in this process (the agent binary
/// calls it with `--target-ca-file`); the first call wins.
pub fn set_target_ca_flag(flag: &'static str) {
    let _ = CA_FLAG.set(flag);
}

fn ca_flag() -> &'static str {
    CA_FLAG.get().copied().unwrap_or("--ca-file")
}

/// The unknown-issuer words, naming the flag that adds a lab CA (`ca_flag`).
pub fn unknown_issuer_words(ca_flag: &str) -> String {
    format!("it is not signed by an authority this vantage trusts (unknown issuer: a self-signed or private-CA certificate looks like this, and so does a server that does not send its intermediate certificate; for a lab CA use {ca_flag})")
}

/// The name of a certificate error's debug form (inside rustls's `Other(OtherError(…))`
/// wrappers), in words.
fn certificate_words(debug: &str) -> String {
    let inner = debug
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .find(|t| !t.is_empty() && !matches!(*t, "Other" | "OtherError"))
        .unwrap_or(debug);
    let name = inner.strip_suffix("Context").unwrap_or(inner);
    match name {
        "UnknownIssuer" => unknown_issuer_words(ca_flag()),
        "CaUsedAsEndEntity" => "the server presented a CA certificate as its own certificate (a CA certificate used as an end-entity certificate)".into(),
        "Expired" => "it has expired".into(),
        "NotValidYet" => "it is not valid yet".into(),
        "NotValidForName" => "it is not valid for this host name".into(),
        "Revoked" => "it has been revoked".into(),
        "BadSignature" => "its signature is invalid".into(),
        "BadEncoding" => "it could not be decoded".into(),
        "UnhandledCriticalExtension" => "it has a critical extension this vantage does not understand".into(),
        "InvalidPurpose" => "it is not valid for a TLS server (wrong extended key usage)".into(),
        other => camel_to_words(other),
    }
}

/// `CaUsedAsEndEntity` → `ca used as end entity`.
fn camel_to_words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The TLS error inside an I/O error, in words; else the I/O error as it prints.
pub fn io_tls_words(e: &std::io::Error) -> String {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .map(tls_words)
        .unwrap_or_else(|| e.to_string())
}

/// Build the client TLS configuration shared by the handshake check and the HTTP client.
pub fn client_config(extra_ca_pem: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, TrustError> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(pem) = extra_ca_pem {
        let mut reader = std::io::BufReader::new(pem);
        let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut reader)
            .collect::<Result<_, _>>()
            .map_err(TrustError::Pem)?;
        if certs.is_empty() {
            return Err(TrustError::Empty);
        }
        for cert in certs {
            roots.add(cert).map_err(TrustError::Certificate)?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // The web PKI verifier `with_root_certificates` would build, wrapped so the handshake
    // check sees the presented chain even when it is refused (`tls_chain`).
    let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .map_err(|e| TrustError::Versions(rustls::Error::General(e.to_string())))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TrustError::Versions)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ChainTap(webpki)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // Every handshake is a full one: a resumed session presents no certificate, so the
    // chain, its expiry and the verifier's verdict would go unseen from an engine's second
    // run on (an agent's next job, the next endpoint of one `vantage check`).
    config.resumption = rustls::client::Resumption::disabled();
    Ok(Arc::new(config))
}

struct Handshake {
    addr: SocketAddr,
    result: Result<(), (Cause, String)>,
    /// The presented chain, leaf first, when the handshake got as far as the certificates
    /// (whether they verified or not).
    chain: Vec<Seen>,
    /// How this vantage judged it.
    verdict: TlsVerdict,
}

async fn handshake(
    policy: &EgressPolicy,
    addr: SocketAddr,
    host: &str,
    config: Arc<rustls::ClientConfig>,
    timeout: Duration,
    now_unix: i64,
) -> Handshake {
    // The policy is asked where the connection is made, whoever called.
    if let Err(refused) = policy.check(addr.ip()) {
        return Handshake {
            addr,
            result: Err((Cause::PolicyRefused, refused.to_string())),
            chain: Vec::new(),
            verdict: TlsVerdict::Refused,
        };
    }
    let server_name = match ServerName::try_from(host.to_string()) {
        Ok(n) => n,
        Err(e) => {
            return Handshake {
                addr,
                result: Err((Cause::Tls, format!("invalid server name: {e}"))),
                chain: Vec::new(),
                verdict: TlsVerdict::Refused,
            }
        }
    };
    let work = async {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| (Cause::Reset, format!("connect: {e}"), TlsVerdict::Refused))?;
        let tls = TlsConnector::from(config)
            .connect(server_name, tcp)
            .await
            .map_err(|e| {
                let cause = if e.kind() == std::io::ErrorKind::InvalidData {
                    Cause::Tls
                } else {
                    Cause::Reset
                };
                let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
                let verdict = match tls_chain::judged(inner) {
                    // An I/O error without a TLS one is no judgement of the chain.
                    TlsVerdict::Accepted => TlsVerdict::Refused,
                    v => v,
                };
                (
                    cause,
                    format!("TLS handshake: {}", io_tls_words(&e)),
                    verdict,
                )
            })?;
        drop(tls);
        Ok(())
    };
    let (result, chain) = tls_chain::tapped(tokio::time::timeout(timeout, work)).await;
    let chain = tls_chain::read(chain.as_deref().unwrap_or_default());
    let verdict = match &result {
        Ok(Ok(())) => TlsVerdict::Accepted,
        Ok(Err((_, _, v))) => *v,
        Err(_) => TlsVerdict::Refused,
    };
    let result = result.map(|r| r.map_err(|(c, m, _)| (c, m)));
    let result = match result {
        // The vantage's own per-exchange timeout ran out: nothing about the target's TLS
        // was observed (4.1), as for an MCP request that is not answered in time.
        Err(_) => Err((
            Cause::Timeout,
            format!(
                "TLS handshake: the TCP connection opened but the handshake did not complete within {}, this vantage's per-exchange timeout (--check-timeout)",
                fmt_wait(timeout)
            ),
        )),
        // Say which certificate expired: an expired intermediate is no expired leaf.
        Ok(Err((Cause::Tls, m))) if m.contains("it has expired") => {
            let which = tls_chain::expired_words(&chain, now_unix)
                .map(|w| format!("TLS handshake: the server's certificate was rejected: {w}"));
            Err((Cause::Tls, which.unwrap_or(m)))
        }
        Ok(r) => r,
    };
    Handshake {
        addr,
        result,
        chain,
        verdict,
    }
}

/// Handshake with every connected address; record `tls.handshake` and `tls.expiry`.
/// Returns whether at least one handshake succeeded. A handshake that this vantage's own
/// per-exchange timeout cut is no evidence (`unknown`, `probe.incomplete`), like an MCP
/// request not answered in time; one that failed (an alert, an untrusted chain, a name)
/// is a failure. `tls.expiry` judges the leaf the server presented, read even when the
/// handshake refused the chain. Also returns what the handshakes were presented and how
/// this vantage judged it (the region's `tls` evidence).
#[allow(clippy::too_many_arguments)]
pub async fn check(
    policy: &EgressPolicy,
    addrs: &[SocketAddr],
    host: &str,
    config: Arc<rustls::ClientConfig>,
    timeout: Duration,
    now_unix: i64,
    rec: &mut Recorder,
) -> (bool, Option<TlsObservation>) {
    let started = Instant::now();
    let results = futures::future::join_all(
        addrs
            .iter()
            .map(|&a| handshake(policy, a, host, config.clone(), timeout, now_unix)),
    )
    .await;
    let line = |h: &Handshake| match &h.result {
        Ok(()) => format!("{}: handshake completed", h.addr),
        Err((_, m)) => format!("{}: {m}", h.addr),
    };
    let failures: Vec<&Handshake> = results.iter().filter(|h| h.result.is_err()).collect();
    let cause_of = |h: &Handshake| h.result.as_ref().err().map(|e| e.0);
    let failed: Vec<&Handshake> = failures
        .iter()
        .copied()
        .filter(|h| cause_of(h) != Some(Cause::Timeout))
        .collect();
    let any_ok = results.iter().any(|h| h.result.is_ok());
    let verdict = if failures.is_empty() {
        Verdict::pass(format!(
            "trusted chain valid for {host} on {} address(es)",
            results.len()
        ))
    } else if failed.is_empty() {
        let mut seen: Vec<String> = failures.iter().map(|h| line(h)).collect();
        seen.extend(results.iter().filter(|h| h.result.is_ok()).map(line));
        Verdict::unknown(
            Cause::Timeout,
            format!(
                "{}. The wait that ran out is this vantage's own, so nothing about the target's TLS was observed there; raise --check-timeout if the handshake is slow",
                seen.join("; ")
            ),
        )
    } else {
        let seen: Vec<String> = failures.iter().map(|h| line(h)).collect();
        Verdict::fail(Severity::High, seen.join("; "))
            .cause(cause_of(failed[0]).unwrap_or(Cause::Tls))
    };
    rec.record(CheckId::TlsHandshake, verdict, started);

    // The leaf's expiry, from what the servers presented (every address).
    let leaves: Vec<&Seen> = results.iter().filter_map(|h| h.chain.first()).collect();
    let expiry = match leaves.iter().min_by_key(|l| l.not_after) {
        Some(leaf) => expiry_verdict(leaf, now_unix),
        None if !failed.is_empty() => {
            Verdict::skip("no certificate was read (the handshake failed before the server's certificate)")
        }
        None if !failures.is_empty() => Verdict::unknown(
            Cause::Timeout,
            "no certificate was read: the handshake did not complete within this vantage's per-exchange timeout (--check-timeout)",
        ),
        None => Verdict::skip("no certificate was read"),
    };
    rec.record(CheckId::TlsExpiry, expiry, started);
    let seen = tls_chain::observation(
        results.iter().map(|h| (h.chain.as_slice(), h.verdict)),
        now_unix,
    );
    (any_ok, seen)
}

/// `tls.expiry` on the leaf certificate (only the leaf: an expired intermediate is
/// `tls.handshake`'s, with its own fix).
fn expiry_verdict(leaf: &Seen, now_unix: i64) -> Verdict {
    let days = (leaf.not_after - now_unix) as f64 / 86_400.0;
    if days < 0.0 {
        Verdict::fail(
            Severity::High,
            format!("the leaf certificate expired {:.1} days ago", -days),
        )
    } else if days < 14.0 {
        Verdict::warn(
            Severity::Medium,
            format!("the leaf certificate expires in {days:.1} days"),
        )
    } else {
        Verdict::pass(format!(
            "the leaf certificate is valid for {days:.0} more days"
        ))
    }
}

#[cfg(test)]
#[path = "tls_words_tests.rs"]
mod words_tests;
