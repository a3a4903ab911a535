//! Credentials for authenticated probes. Tokens are read by the process that uses them
//! (from an environment variable or a file named by the operator), kept in `SecretString`
//! (redacted `Debug`, zeroized on drop), and never written to a report, log or output: the
//! recorder scrubs every observed string of them as a last line of defence.

use secrecy::{ExposeSecret, SecretString};

/// The three optional tokens of `checks.md` section 2.5.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// A valid token: the transport checks run authenticated with it.
    pub token: Option<SecretString>,
    /// A token issued for another audience (for `auth.wrong-audience`).
    pub other_audience: Option<SecretString>,
    /// A valid token lacking a required scope (for `auth.insufficient-scope`).
    pub missing_scope: Option<SecretString>,
}

/// Where a token comes from; errors name the source, never the value. A file that cannot
/// be read carries the I/O error as its source (`{:#}` shows it).
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// Callers add the fix that fits where the name came from (a flag, a config key).
    #[error("environment variable {0} is not set or empty")]
    EnvMissing(String),
    #[error("token file {}", path.display())]
    ReadFile {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("token file {} is empty", path.display())]
    FileEmpty { path: std::path::PathBuf },
}

/// Read a token from the environment variable `name`.
pub fn from_env(name: &str) -> Result<SecretString, CredentialError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(SecretString::from(v.trim().to_string())),
        _ => Err(CredentialError::EnvMissing(name.to_string())),
    }
}

/// Read a token from a file (surrounding whitespace and the final newline are dropped).
pub fn from_file(path: &std::path::Path) -> Result<SecretString, CredentialError> {
    let text = std::fs::read_to_string(path).map_err(|source| CredentialError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(CredentialError::FileEmpty {
            path: path.to_path_buf(),
        });
    }
    Ok(SecretString::from(token.to_string()))
}

impl Credentials {
    /// Every secret value held, for scrubbing.
    pub fn secrets(&self) -> Vec<&str> {
        [&self.token, &self.other_audience, &self.missing_scope]
            .into_iter()
            .flatten()
            .map(|s| s.expose_secret())
            .filter(|s| !s.is_empty())
            .collect()
    }
}

/// The shortest piece of a secret that is redacted where a text was cut (a prefix at the
/// end of a clipped string, or a suffix at its start): shorter pieces are too common to be
/// recognisable, and too short to be worth anything.
pub const FRAGMENT_CHARS: usize = 8;

/// Replace every occurrence of each secret in `text` with `[redacted]`, and a recognisable
/// fragment of one where the text was cut: a prefix of a secret (at least
/// [`FRAGMENT_CHARS`]) at the end of the text (before a closing `…` or quote), or a suffix
/// of one at its start.
pub fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| !s.is_empty()) {
        if out.contains(s) {
            out = out.replace(s, "[redacted]");
        }
        out = redact_cut_fragments(&out, s);
    }
    out
}

/// Redact a prefix of `secret` where `text` was cut: before each `…` the clipper added,
/// and at the very end (ignoring a closing quote, parenthesis or bracket a formatter
/// added); and a suffix of it that starts `text`.
fn redact_cut_fragments(text: &str, secret: &str) -> String {
    let body = text.trim_end_matches(['…', '"', '\'', ')', ']', ' ']);
    let cuts: Vec<usize> = text
        .match_indices('…')
        .map(|(i, _)| i)
        .chain(std::iter::once(body.len()))
        .collect();
    let mut out = String::new();
    let mut from = 0;
    for cut in cuts {
        if cut < from {
            continue;
        }
        let piece = &text[from..cut];
        match longest_prefix_at_end(piece, secret) {
            Some(k) => {
                out.push_str(&piece[..piece.len() - k]);
                out.push_str("[redacted]");
            }
            None => out.push_str(piece),
        }
        from = cut;
    }
    out.push_str(&text[from..]);
    if let Some(k) = longest_suffix_at_start(&out, secret) {
        out = format!("[redacted]{}", &out[k..]);
    }
    out
}

/// The byte length of the longest prefix of `secret` (at least [`FRAGMENT_CHARS`] chars,
/// shorter than the whole) that `text` ends with.
fn longest_prefix_at_end(text: &str, secret: &str) -> Option<usize> {
    secret
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(secret.len()))
        .filter(|&i| secret[..i].chars().count() >= FRAGMENT_CHARS)
        .filter(|&i| text.ends_with(&secret[..i]))
        .max()
}

/// The byte length of the longest suffix of `secret` (at least [`FRAGMENT_CHARS`] chars)
/// that `text` starts with.
fn longest_suffix_at_start(text: &str, secret: &str) -> Option<usize> {
    secret
        .char_indices()
        .map(|(i, _)| &secret[i..])
        .filter(|suffix| suffix.chars().count() >= FRAGMENT_CHARS)
        .filter(|suffix| text.starts_with(suffix))
        .map(str::len)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_token() {
        let c = Credentials {
            token: Some(SecretString::from("tok-123-secret".to_string())),
            ..Default::default()
        };
        assert!(!format!("{c:?}").contains("tok-123-secret"));
        assert_eq!(
            scrub("echo tok-123-secret back", &c.secrets()),
            "echo [redacted] back"
        );
    }

    #[test]
    fn a_secret_cut_by_a_clip_is_redacted_by_its_fragment() {
        let token = "tok-0123456789abcdef-secret-value";
        // The review's repro: padded so the token straddles an 80-character cut.
        let clipped = format!("{}{}…", "p".repeat(49), &token[..31]);
        let out = scrub(&format!("JSON-RPC error -32601 \"{clipped}\""), &[token]);
        assert!(!out.contains(&token[..FRAGMENT_CHARS]), "{out}");
        assert!(out.ends_with("[redacted]…\""), "{out}");
        // A suffix at the start of a text cut at its beginning.
        let out = scrub(&format!("{} tail", &token[5..]), &[token]);
        assert_eq!(out, "[redacted] tail");
        // A fragment before a cut in the middle of a line.
        let out = scrub(&format!("body \"{}…\" [cap]", &token[..12]), &[token]);
        assert_eq!(out, "body \"[redacted]…\" [cap]");
        // Short coincidences are left alone.
        assert_eq!(scrub("ends with tok-01", &[token]), "ends with tok-01");
    }

    #[test]
    fn missing_sources_name_the_source_not_a_value() {
        let e = from_env("VANTAGE_TEST_SURELY_UNSET_VARIABLE").unwrap_err();
        assert!(e.to_string().contains("VANTAGE_TEST_SURELY_UNSET_VARIABLE"));
        let e = from_file(std::path::Path::new("/nonexistent/token")).unwrap_err();
        assert!(
            matches!(&e, CredentialError::ReadFile { path, source }
                if path.as_os_str() == "/nonexistent/token"
                    && source.kind() == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "token file /nonexistent/token");
    }
}
