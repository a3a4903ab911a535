//! TLS failures in words.
use super::*;

#[test]
fn certificate_errors_are_said_in_words() {
    let e = rustls::Error::InvalidCertificate(rustls::CertificateError::Other(rustls::OtherError(
        std::sync::Arc::new(std::io::Error::other("x")),
    )));
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
    assert!(tls_words(&e).starts_with("the server's certificate was rejected: it is not signed"));
    let io = std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    assert!(
        io_tls_words(&io).contains("unknown issuer"),
        "{}",
        io_tls_words(&io)
    );
}

/// Rt6 #7 and #5: a certificate_required alert says mutual TLS; the unknown-issuer
/// hint names the flag it is given (the agent's is --target-ca-file).
#[test]
fn mutual_tls_and_the_ca_flag_in_words() {
    let alert = rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired);
    assert_eq!(tls_words(&alert), CLIENT_CERT_REQUIRED);
    assert!(
        CLIENT_CERT_REQUIRED.starts_with("the server requires a client certificate (mutual TLS)")
    );
    let w = unknown_issuer_words("--target-ca-file");
    assert!(w.ends_with("for a lab CA use --target-ca-file)"), "{w}");
    assert!(w.contains("does not send its intermediate"), "{w}");
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
