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
use super::verdict::{Recorder, Verdict};
use crate::catalog::CheckId;
use crate::egress::EgressPolicy;
use crate::model::{Cause, Severity};

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

/// The name of a certificate error's debug form (inside rustls's `Other(OtherError(…))`
/// wrappers), in words.
fn certificate_words(debug: &str) -> String {
    let inner = debug
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .find(|t| !t.is_empty() && !matches!(*t, "Other" | "OtherError"))
        .unwrap_or(debug);
    let name = inner.strip_suffix("Context").unwrap_or(inner);
    match name {
        "UnknownIssuer" => "it is not signed by an authority this vantage trusts (unknown issuer: a self-signed or private-CA certificate looks like this; for a lab CA use --ca-file)".into(),
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
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TrustError::Versions)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

struct Handshake {
    addr: SocketAddr,
    result: Result<Option<i64>, (Cause, String)>,
}

async fn handshake(
    policy: &EgressPolicy,
    addr: SocketAddr,
    host: &str,
    config: Arc<rustls::ClientConfig>,
    timeout: Duration,
) -> Handshake {
    // The policy is asked where the connection is made, whoever called.
    if let Err(refused) = policy.check(addr.ip()) {
        return Handshake {
            addr,
            result: Err((Cause::PolicyRefused, refused.to_string())),
        };
    }
    let server_name = match ServerName::try_from(host.to_string()) {
        Ok(n) => n,
        Err(e) => {
            return Handshake {
                addr,
                result: Err((Cause::Tls, format!("invalid server name: {e}"))),
            }
        }
    };
    let work = async {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| (Cause::Reset, format!("connect: {e}")))?;
        let tls = TlsConnector::from(config)
            .connect(server_name, tcp)
            .await
            .map_err(|e| {
                let cause = if e.kind() == std::io::ErrorKind::InvalidData {
                    Cause::Tls
                } else {
                    Cause::Reset
                };
                (cause, format!("TLS handshake: {}", io_tls_words(&e)))
            })?;
        let (_, session) = tls.get_ref();
        let not_after = session
            .peer_certificates()
            .and_then(|c| c.first())
            .and_then(|leaf| x509_parser::parse_x509_certificate(leaf.as_ref()).ok())
            .map(|(_, cert)| cert.validity().not_after.timestamp());
        Ok(not_after)
    };
    let result = match tokio::time::timeout(timeout, work).await {
        Err(_) => Err((
            Cause::Timeout,
            format!(
                "TLS handshake: the TCP connection opened but the handshake did not complete within {}",
                fmt_wait(timeout)
            ),
        )),
        Ok(r) => r,
    };
    Handshake { addr, result }
}

/// Handshake with every connected address; record `tls.handshake` and `tls.expiry`.
/// Returns whether at least one handshake succeeded.
pub async fn check(
    policy: &EgressPolicy,
    addrs: &[SocketAddr],
    host: &str,
    config: Arc<rustls::ClientConfig>,
    timeout: Duration,
    now_unix: i64,
    rec: &mut Recorder,
) -> bool {
    let started = Instant::now();
    let results = futures::future::join_all(
        addrs
            .iter()
            .map(|&a| handshake(policy, a, host, config.clone(), timeout)),
    )
    .await;
    let failures: Vec<String> = results
        .iter()
        .filter_map(|h| {
            h.result
                .as_ref()
                .err()
                .map(|(_, m)| format!("{}: {m}", h.addr))
        })
        .collect();
    let first_cause = results
        .iter()
        .find_map(|h| h.result.as_ref().err().map(|e| e.0));
    let expiries: Vec<i64> = results
        .iter()
        .filter_map(|h| h.result.as_ref().ok().copied().flatten())
        .collect();
    let any_ok = results.iter().any(|h| h.result.is_ok());
    let verdict = if failures.is_empty() {
        Verdict::pass(format!(
            "trusted chain valid for {host} on {} address(es)",
            results.len()
        ))
    } else {
        Verdict::fail(Severity::High, failures.join("; ")).cause(first_cause.unwrap_or(Cause::Tls))
    };
    rec.record(CheckId::TlsHandshake, verdict, started);

    let expired_in_handshake = failures
        .iter()
        .any(|f| f.contains("Expired") || f.contains("expired"));
    let expiry = match expiries.iter().min() {
        _ if expired_in_handshake => Verdict::fail(
            Severity::High,
            "the certificate has expired (the handshake refused it)",
        ),
        None => Verdict::skip("no certificate was read (the handshake failed)"),
        Some(&not_after) => {
            let days = (not_after - now_unix) as f64 / 86_400.0;
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
    };
    rec.record(CheckId::TlsExpiry, expiry, started);
    any_ok
}

#[cfg(test)]
mod words_tests {
    use super::*;

    #[test]
    fn certificate_errors_are_said_in_words() {
        let e = rustls::Error::InvalidCertificate(rustls::CertificateError::Other(
            rustls::OtherError(std::sync::Arc::new(std::io::Error::other("x"))),
        ));
        // The innermost name of an unknown error still comes out as words.
        assert!(!tls_words(&e).contains("OtherError"), "{}", tls_words(&e));
        assert_eq!(
            certificate_words("Other(OtherError(CaUsedAsEndEntity))"),
            "the server presented a CA certificate as its own certificate (a CA certificate used as an end-entity certificate)"
        );
        assert_eq!(
            certificate_words("ExpiredContext { time: UnixTime(1), not_after: UnixTime(0) }"),
            "it has expired"
        );
        assert_eq!(certificate_words("SomethingNew"), "something new");
        let e = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        assert!(
            tls_words(&e).starts_with("the server's certificate was rejected: it is not signed")
        );
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        assert!(
            io_tls_words(&io).contains("unknown issuer"),
            "{}",
            io_tls_words(&io)
        );
    }

    /// A CA file whose block is not a certificate: the flag, and the cause as the source.
    #[test]
    fn an_unusable_ca_file_names_the_flag_and_keeps_the_cause() {
        let pem = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let e = client_config(Some(pem)).unwrap_err();
        assert!(matches!(e, TrustError::Certificate(_)), "{e:?}");
        assert_eq!(e.to_string(), "--ca-file");
        let cause = std::error::Error::source(&e).map(ToString::to_string);
        assert!(cause.is_some_and(|c| !c.is_empty()), "{e:?}");
        assert!(matches!(
            client_config(Some(b"no pem here")),
            Err(TrustError::Empty)
        ));
    }
}
