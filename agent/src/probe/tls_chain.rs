//! The chain a server presented, read during the handshake whether or not it verified: the
//! certificate verifier is wrapped ([`ChainTap`]) so that the handshake check knows which
//! certificate of the chain a failure is about (an expired intermediate is not an expired
//! leaf, `checks.md` 2.2), and `tls.expiry` judges the leaf it saw even when the handshake
//! refused the chain.

use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::model::{TlsObservation, TlsVerdict};

tokio::task_local! {
    /// The chain of the handshake running in this task's scope, when the handshake check
    /// asked for it ([`tapped`]).
    static CHAIN: RefCell<Option<Vec<CertificateDer<'static>>>>;
}

/// Seconds added to this process's clock where TLS is judged (the verifier's "now" and
/// `tls.expiry`'s): zero, except in a debug build whose test set it
/// ([`set_test_clock_skew`]) to play a vantage whose clock is wrong.
static CLOCK_SKEW_S: AtomicI64 = AtomicI64::new(0);

/// Test seam: make this process judge certificates as if its clock were `seconds` ahead
/// (behind when negative). The agent binary sets it from `VANTAGE_TEST_CLOCK_SKEW_S` in debug
/// builds only (the end-to-end fleet tests); a release build never reads that variable.
pub fn set_test_clock_skew(seconds: i64) {
    CLOCK_SKEW_S.store(seconds, Ordering::Relaxed);
}

/// This vantage's clock, in Unix seconds, as TLS judges with it.
pub fn vantage_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp() + CLOCK_SKEW_S.load(Ordering::Relaxed)
}

/// A verifier that records the presented chain (in the scope of [`tapped`]) and leaves the
/// judgement to the web PKI verifier it wraps.
#[derive(Debug)]
pub struct ChainTap(pub Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for ChainTap {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let _ = CHAIN.try_with(|c| {
            let chain = std::iter::once(end_entity)
                .chain(intermediates)
                .map(|c| c.clone().into_owned())
                .collect();
            *c.borrow_mut() = Some(chain);
        });
        let skew = CLOCK_SKEW_S.load(Ordering::Relaxed);
        let now = if skew == 0 {
            now
        } else {
            let shifted = (now.as_secs() as i64).saturating_add(skew).max(0);
            UnixTime::since_unix_epoch(std::time::Duration::from_secs(shifted as u64))
        };
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// Run `work` (a handshake) and return its output with the chain the server presented, if
/// the handshake got that far.
pub async fn tapped<T>(
    work: impl std::future::Future<Output = T>,
) -> (T, Option<Vec<CertificateDer<'static>>>) {
    CHAIN
        .scope(RefCell::new(None), async move {
            let out = work.await;
            (out, CHAIN.with(|c| c.borrow_mut().take()))
        })
        .await
}

/// One certificate of a presented chain, as the report names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub subject: String,
    pub not_before: i64,
    pub not_after: i64,
    /// SHA-256 of the certificate's DER, lowercase hex.
    pub sha256: String,
}

/// SHA-256 of a certificate's DER, lowercase hex (its fingerprint).
pub fn fingerprint(der: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, der)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The certificates of a chain that parse, leaf first.
pub fn read(chain: &[CertificateDer<'_>]) -> Vec<Seen> {
    chain
        .iter()
        .filter_map(|der| {
            let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).ok()?;
            Some(Seen {
                subject: cert.subject().to_string(),
                not_before: cert.validity().not_before.timestamp(),
                not_after: cert.validity().not_after.timestamp(),
                sha256: fingerprint(der.as_ref()),
            })
        })
        .collect()
}

/// How this vantage judged a presented chain, from the handshake's error.
pub fn judged(e: Option<&rustls::Error>) -> TlsVerdict {
    use rustls::CertificateError as C;
    match e {
        None => TlsVerdict::Accepted,
        Some(rustls::Error::InvalidCertificate(c)) => match c {
            C::Expired | C::ExpiredContext { .. } => TlsVerdict::Expired,
            C::NotValidYet | C::NotValidYetContext { .. } => TlsVerdict::NotYetValid,
            C::UnknownIssuer => TlsVerdict::UnknownIssuer,
            _ => TlsVerdict::Refused,
        },
        Some(_) => TlsVerdict::Refused,
    }
}

/// The region's `tls` evidence from its handshakes (one per address): the first chain read,
/// how it was judged, and whether another address presented a different one.
pub fn observation<'a>(
    handshakes: impl Iterator<Item = (&'a [Seen], TlsVerdict)>,
    clock: i64,
) -> Option<TlsObservation> {
    let read: Vec<(&[Seen], TlsVerdict)> = handshakes.filter(|(c, _)| !c.is_empty()).collect();
    let (chain, verdict) = *read.first()?;
    let prints = |c: &[Seen]| c.iter().map(|s| s.sha256.clone()).collect::<Vec<_>>();
    let chain_sha256 = prints(chain);
    let leaf = &chain[0];
    Some(TlsObservation {
        leaf_sha256: leaf.sha256.clone(),
        mixed: read.iter().any(|(c, _)| prints(c) != chain_sha256),
        chain_sha256,
        leaf_not_before: leaf.not_before,
        leaf_not_after: leaf.not_after,
        clock,
        verdict,
        extra_roots: false,
    })
}

/// A date for the evidence: `2026-12-01`.
fn day(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .map(|t| t.date().to_string())
        .unwrap_or_else(|_| unix.to_string())
}

/// Which certificate of the chain has expired at `now`, in words: the leaf, or an
/// intermediate the server sends (whose fix is to serve the current one, not to renew the
/// leaf). `None` when no presented certificate is past its notAfter (the verifier then
/// judged with a certificate the server did not send, or another clock).
pub fn expired_words(chain: &[Seen], now: i64) -> Option<String> {
    let (leaf, rest) = chain.split_first()?;
    if leaf.not_after < now {
        return Some(format!(
            "the leaf certificate ({}) expired on {}",
            leaf.subject,
            day(leaf.not_after)
        ));
    }
    let int = rest.iter().find(|c| c.not_after < now)?;
    Some(format!(
        "the intermediate certificate {} the server sends expired on {} (the leaf is valid until {}): serve the current intermediate with the leaf, renewing the leaf does not help",
        int.subject,
        day(int.not_after),
        day(leaf.not_after)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(subject: &str, not_after: i64) -> Seen {
        Seen {
            subject: subject.into(),
            not_before: 0,
            not_after,
            sha256: String::new(),
        }
    }

    #[test]
    fn the_expired_certificate_is_named() {
        let now = 1_800_000_000;
        let day_s = 86_400;
        let leaf = seen("CN=ok.lab", now + 60 * day_s);
        let int = seen("CN=rt6-int-expired", now - day_s);
        let w = expired_words(&[leaf.clone(), int.clone()], now).unwrap();
        assert!(
            w.starts_with("the intermediate certificate CN=rt6-int-expired")
                && w.contains("serve the current intermediate")
                && !w.starts_with("the leaf"),
            "{w}"
        );
        let w = expired_words(&[seen("CN=ok.lab", now - day_s), int], now).unwrap();
        assert!(
            w.starts_with("the leaf certificate (CN=ok.lab) expired on"),
            "{w}"
        );
        assert_eq!(expired_words(&[leaf], now), None);
        assert_eq!(expired_words(&[], now), None);
    }
}
