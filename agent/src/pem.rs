//! Reading a PEM file an operator named (a CA, a certificate, a key), once, with the name of
//! the flag or key that named it in every error: `--ca-file lab.pem: No such file or
//! directory`, `server.tls.key_file /etc/vantage/tls.key: not PEM (no -----BEGIN line)`.

use std::path::{Path, PathBuf};

/// Why a PEM file could not be used. `what` is the flag or configuration key that named it.
#[derive(Debug, thiserror::Error)]
pub enum PemError {
    #[error("{what} {}", path.display())]
    ReadFile {
        what: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what} {}: not PEM (no `-----BEGIN` line); give a PEM file", path.display())]
    NotPem { what: String, path: PathBuf },
    #[error(
        "{what} {}: the PEM is damaged ({detail}); the file looks cut short or edited: give the whole file as issued",
        path.display()
    )]
    Damaged {
        what: String,
        path: PathBuf,
        detail: String,
    },
    #[error(
        "{what} {}: holds no CERTIFICATE block (a key, or another kind of PEM?); give the certificate file in PEM",
        path.display()
    )]
    NoCertificate { what: String, path: PathBuf },
}

/// Read the PEM file at `path`, named by `what` (e.g. `--ca-file`, `server.tls.cert_file`).
pub fn read(what: &str, path: &Path) -> Result<Vec<u8>, PemError> {
    let bytes = std::fs::read(path).map_err(|source| PemError::ReadFile {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    })?;
    if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(PemError::NotPem {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    // Every section must parse (a cut-off END line or base64 would otherwise surface later
    // as a library message that names neither the flag nor the file).
    let damaged = |detail: String| PemError::Damaged {
        what: what.to_string(),
        path: path.to_path_buf(),
        detail,
    };
    for item in rustls_pemfile::read_all(&mut std::io::BufReader::new(&bytes[..])) {
        match item {
            Err(e) => return Err(damaged(describe(&e.to_string(), &bytes))),
            // Intact armour around a certificate that does not parse (it would surface as
            // "invalid peer certificate: BadEncoding" with neither the flag nor the file).
            Ok(rustls_pemfile::Item::X509Certificate(der)) => {
                if let Err(e) = rustls::RootCertStore::empty().add(der) {
                    return Err(damaged(format!("a CERTIFICATE block does not parse: {e}")));
                }
            }
            Ok(_) => {}
        }
    }
    Ok(bytes)
}

/// The parser's detail in words: its base64 errors are Rust Debug values
/// (`InvalidCharacter(33)`), so name the character and the line it is on instead.
fn describe(detail: &str, bytes: &[u8]) -> String {
    if let Some(code) = detail
        .strip_prefix("InvalidCharacter(")
        .and_then(|rest| rest.strip_suffix(')'))
        .and_then(|n| n.parse::<u8>().ok())
    {
        let shown = if code.is_ascii_graphic() || code == b' ' {
            format!("'{}'", code as char)
        } else {
            format!("byte 0x{code:02x}")
        };
        return match base64_line_with(bytes, code) {
            Some(line) => format!("invalid base64 character {shown} on line {line}"),
            None => format!("invalid base64 character {shown}"),
        };
    }
    match detail {
        "PrematurePadding" => "base64 padding '=' before the end of a block".to_string(),
        "InvalidTrailingPadding" => "invalid base64 padding at the end of a block".to_string(),
        "InsufficientOutputSpace" => "base64 that does not decode".to_string(),
        other => other.to_string(),
    }
}

/// The 1-based number of the first line inside a `-----BEGIN`/`-----END` block that holds
/// `code` (the armour lines themselves do not count).
fn base64_line_with(bytes: &[u8], code: u8) -> Option<usize> {
    let mut inside = false;
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.starts_with(b"-----BEGIN ") {
            inside = true;
        } else if line.starts_with(b"-----END ") {
            inside = false;
        } else if inside && line.contains(&code) {
            return Some(i + 1);
        }
    }
    None
}

/// [`read`] for a file that must hold at least one certificate (a CA, a server's chain).
pub fn read_certificates(what: &str, path: &Path) -> Result<Vec<u8>, PemError> {
    let bytes = read(what, path)?;
    let mut reader = std::io::BufReader::new(&bytes[..]);
    if !rustls_pemfile::read_all(&mut reader)
        .any(|i| matches!(i, Ok(rustls_pemfile::Item::X509Certificate(_))))
    {
        return Err(PemError::NoCertificate {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    Ok(bytes)
}

/// [`read_certificates`] for an optional path.
pub fn read_certificates_opt(what: &str, path: Option<&Path>) -> Result<Option<Vec<u8>>, PemError> {
    path.map(|p| read_certificates(what, p)).transpose()
}

/// [`read`] for an optional path.
pub fn read_opt(what: &str, path: Option<&Path>) -> Result<Option<Vec<u8>>, PemError> {
    path.map(|p| read(what, p)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_flag_and_the_path() {
        let e = read("--ca-file", Path::new("/nonexistent/lab.pem")).unwrap_err();
        assert!(matches!(e, PemError::ReadFile { .. }));
        assert_eq!(e.to_string(), "--ca-file /nonexistent/lab.pem");
        assert!(
            std::error::Error::source(&e).is_some(),
            "the io error is the source"
        );

        let dir = std::env::temp_dir().join(format!("vantage-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let not_pem = dir.join("token.txt");
        std::fs::write(&not_pem, "just a token").unwrap();
        let e = read("server.tls.key_file", &not_pem).unwrap_err();
        assert!(matches!(e, PemError::NotPem { .. }), "{e}");
        assert!(e.to_string().starts_with("server.tls.key_file "), "{e}");
        let pem = dir.join("ca.pem");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["lab.test".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        std::fs::write(&pem, cert.pem()).unwrap();
        assert!(read("--ca-file", &pem).is_ok());
        assert!(read_certificates("--ca-file", &pem).is_ok());
        let key_file = dir.join("key.pem");
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        assert!(read("server.tls.key_file", &key_file).is_ok());
        let e = read_certificates("--ca-file", &key_file).unwrap_err();
        assert!(matches!(e, PemError::NoCertificate { .. }), "{e}");
        assert!(
            e.to_string().starts_with(&format!(
                "--ca-file {}: holds no CERTIFICATE block",
                key_file.display()
            )),
            "{e}"
        );
        // Intact armour, a certificate inside that does not parse.
        let bad = dir.join("bad.pem");
        std::fs::write(
            &bad,
            "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        // A damaged file is refused naming the flag, the file and what is damaged.
        let damaged = |what: &str, path: &Path, detail: &str| {
            let e = read(what, path).unwrap_err();
            assert!(matches!(e, PemError::Damaged { .. }), "{e}");
            let text = e.to_string();
            let head = format!("{what} {}: the PEM is damaged ({detail}", path.display());
            assert!(text.starts_with(&head), "{text}");
            text
        };
        damaged(
            "--target-ca-file",
            &bad,
            "a CERTIFICATE block does not parse: ",
        );
        assert!(read_opt("--ca-file", None).unwrap().is_none());
        // Cut short: the END line is missing.
        let cut = dir.join("cut.pem");
        std::fs::write(&cut, "-----BEGIN CERTIFICATE-----\nAA==\n").unwrap();
        let text = damaged("--ca-file", &cut, "");
        assert!(
            text.contains("CERTIFICATE"),
            "the library's detail is kept: {text}"
        );
        assert!(text.ends_with("give the whole file as issued"), "{text}");
        // Bad base64 inside intact armour: the character and its line, not a Debug value.
        let bad64 = dir.join("bad64.pem");
        std::fs::write(
            &bad64,
            "-----BEGIN CERTIFICATE-----\nAAAA\nAA!A\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let text = damaged(
            "--ca-file",
            &bad64,
            "invalid base64 character '!' on line 3)",
        );
        assert!(!text.contains("InvalidCharacter"), "{text}");
        let ctl = dir.join("ctl.pem");
        std::fs::write(
            &ctl,
            "# lab CA\n-----BEGIN CERTIFICATE-----\nAA\u{7}A\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        damaged(
            "--ca-file",
            &ctl,
            "invalid base64 character byte 0x07 on line 3)",
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
