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

/// Where a token comes from; errors name the source, never the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// Callers add the fix that fits where the name came from (a flag, a config key).
    #[error("environment variable {0} is not set or empty")]
    EnvMissing(String),
    #[error("token file {0}: {1}")]
    File(String, String),
    #[error("token file {0} is empty")]
    FileEmpty(String),
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
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| CredentialError::File(shown.clone(), e.to_string()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(CredentialError::FileEmpty(shown));
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

/// Replace every occurrence of each secret in `text` with `[redacted]`.
pub fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if out.contains(s) {
            out = out.replace(s, "[redacted]");
        }
    }
    out
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
    fn missing_sources_name_the_source_not_a_value() {
        let e = from_env("VANTAGE_TEST_SURELY_UNSET_VARIABLE").unwrap_err();
        assert!(e.to_string().contains("VANTAGE_TEST_SURELY_UNSET_VARIABLE"));
        assert!(matches!(
            from_file(std::path::Path::new("/nonexistent/token")),
            Err(CredentialError::File(..))
        ));
    }
}
