//! The API token `vantage serve` generates when no `server.api_tokens` is configured. It is
//! written to a stable, private path (so `vantage check --coordinator` on the same machine
//! finds it without a flag), replaced when a coordinator starts, and removed when it exits.

use std::path::{Path, PathBuf};

use secrecy::{ExposeSecret, SecretString};

/// Why the generated token could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("writing the generated API token to {} (set server.generated_token_file to another path)", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: the directory for the generated API token is open to other users; make it private (chmod 700) or set server.generated_token_file", dir.display())]
    SharedDirectory { dir: PathBuf },
}

/// Where the token of the coordinator whose API listens on `port` goes by default:
/// `$XDG_RUNTIME_DIR/vantage/api-token-<port>`, else `<temp dir>/vantage-<uid>/api-token-<port>`.
/// One file per API port: two coordinators on one machine never share one, and `vantage
/// check --coordinator URL` finds the right one from the URL's port.
pub fn default_path(port: u16) -> PathBuf {
    let name = format!("api-token-{port}");
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("vantage").join(name);
    }
    std::env::temp_dir()
        .join(format!("vantage-{}", user()))
        .join(name)
}

/// The user id (Linux), else the user name: the default path is per user.
fn user() -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::metadata("/proc/self") {
            return m.uid().to_string();
        }
    }
    std::env::var("USER").unwrap_or_else(|_| "user".into())
}

/// A generated token and the file that holds it; the file is removed on drop, unless
/// another coordinator has replaced it since.
#[derive(Debug)]
pub struct GeneratedToken {
    pub token: SecretString,
    pub path: PathBuf,
}

impl GeneratedToken {
    /// Generate a token and write it to `path` (or the [`default_path`] of the API's bound
    /// `port`), mode 0600. Called once the API's port is bound, so a file at the default path
    /// is no live coordinator's (one that crashed left it): it is replaced.
    pub fn create(path: Option<&Path>, port: u16) -> Result<Self, TokenFileError> {
        let path = path.map_or_else(|| default_path(port), Path::to_path_buf);
        let token = format!("{}{}", ulid::Ulid::new(), ulid::Ulid::new()).to_ascii_lowercase();
        let write = |source| TokenFileError::Write {
            path: path.clone(),
            source,
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        private_dir(dir).map_err(|e| match e {
            DirError::Io(source) => write(source),
            DirError::Shared => TokenFileError::SharedDirectory {
                dir: dir.to_path_buf(),
            },
        })?;
        // Write beside it, then rename over: a file left by a coordinator that crashed is
        // replaced, and a reader never sees a half-written token.
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        write_private(&tmp, token.as_bytes()).map_err(write)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            write(e)
        })?;
        Ok(GeneratedToken {
            token: SecretString::from(token),
            path,
        })
    }
}

impl Drop for GeneratedToken {
    fn drop(&mut self) {
        let ours = std::fs::read_to_string(&self.path)
            .is_ok_and(|t| t.trim() == self.token.expose_secret());
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

enum DirError {
    Io(std::io::Error),
    Shared,
}

fn private_dir(dir: &Path) -> Result<(), DirError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(DirError::Io)?;
        }
        let mode = std::fs::metadata(dir)
            .map_err(DirError::Io)?
            .permissions()
            .mode();
        // Writable by others (a shared /tmp): someone else could swap the file.
        if mode & 0o022 != 0 {
            return Err(DirError::Shared);
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir).map_err(DirError::Io)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_token_is_private_replaces_a_stale_one_and_leaves_at_drop() {
        let dir = std::env::temp_dir().join(format!("vantage-tokfile-{}", std::process::id()));
        let path = dir.join("sub").join("api-token");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.join("sub"), std::fs::Permissions::from_mode(0o700))
                .unwrap();
        }
        std::fs::write(&path, "stale").unwrap();
        let g = GeneratedToken::create(Some(&path), 8080).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, g.token.expose_secret());
        assert_eq!(text.len(), 52);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        drop(g);
        assert!(!path.exists(), "removed at exit");
        // A file another coordinator wrote since is not ours to remove.
        let g = GeneratedToken::create(Some(&path), 8080).unwrap();
        std::fs::write(&path, "newer").unwrap();
        drop(g);
        assert!(path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_open_to_others_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("vantage-tokshared-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = GeneratedToken::create(Some(&dir.join("api-token")), 8080).unwrap_err();
        assert!(matches!(e, TokenFileError::SharedDirectory { .. }), "{e}");
        assert!(e.to_string().contains("server.generated_token_file"), "{e}");
        assert!(!dir.join("api-token").exists(), "nothing written");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_default_path_is_per_user_or_in_the_runtime_dir() {
        let p = default_path(8080);
        assert!(p.ends_with("api-token-8080"));
        assert_ne!(default_path(8081), p, "one file per API port");
        let parent = p
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        assert!(
            parent == "vantage" || parent.starts_with("vantage-"),
            "{p:?}"
        );
    }
}
