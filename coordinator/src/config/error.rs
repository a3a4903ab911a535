//! Why a configuration could not be used. Every error says where the bad value came from
//! (the file, or the `VANTAGE_…` variable that overrode it), the key path, and what to do.

use std::path::PathBuf;

use vantage_agent::credentials::CredentialError;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The configuration file.
    File(PathBuf),
    /// A `VANTAGE_<SECTION>__<KEY>` environment variable.
    Variable(String),
    /// No file: the defaults (and any environment overrides).
    Defaults,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Variable(v) => write!(f, "environment variable {v}"),
            Origin::Defaults => f.write_str("the configuration"),
        }
    }
}

/// Why the configuration could not be used. Messages say what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file the configuration needs could not be read.
    #[error("{what} {}", path.display())]
    ReadFile {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not TOML.
    #[error("{}:{line}:{column}: not valid TOML: {message}", file.display())]
    Syntax {
        file: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A key the configuration does not have.
    #[error("{origin}: unknown key `{key}`{}; {expected}", at(*line))]
    UnknownKey {
        origin: Origin,
        key: String,
        line: Option<usize>,
        expected: String,
    },
    /// A value of the wrong type or shape.
    #[error("{origin}: key `{key}`{}: {message}", at(*line))]
    Value {
        origin: Origin,
        key: String,
        line: Option<usize>,
        message: String,
    },
    /// Two entries of a section with the same name.
    #[error("[[{section}]]: `{name}` appears twice; names must be unique")]
    DuplicateName { section: &'static str, name: String },
    /// Two `[[agents]]` entries with one token (`key`: the key that names it, or "token"
    /// when two sources held the same value). The token itself is never named.
    #[error("[[agents]]: `{name}` (agents[{index}].{key}) has the same token as `{first_name}` (agents[{first}]); each agent needs its own token, which binds its region")]
    SharedToken {
        index: usize,
        name: String,
        key: &'static str,
        first: usize,
        first_name: String,
    },
    /// A value that is well-formed but inconsistent with the rest.
    #[error("{origin}: key `{key}`: {message}")]
    Invalid {
        origin: Origin,
        key: String,
        message: String,
    },
    /// An entry naming neither or both secret sources.
    #[error("{what}: give token_env or token_file (exactly one; other_audience_env/_file and missing_scope_env/_file likewise)")]
    SecretSource { what: String },
    /// The environment variable an entry names is not set.
    #[error("{what}: environment variable {variable} is not set or empty; export it with the token, or name a file with token_file instead")]
    SecretEnv { what: String, variable: String },
    /// The secret an entry names cannot be used (why: the source): a file that cannot be
    /// read or is empty, or a token (from a file or a variable) that cannot go in an HTTP
    /// header.
    #[error("{what}")]
    SecretFile {
        what: String,
        #[source]
        reason: CredentialError,
    },
}

fn at(line: Option<usize>) -> String {
    line.map(|l| format!(" (line {l})")).unwrap_or_default()
}
