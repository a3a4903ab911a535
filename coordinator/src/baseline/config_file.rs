//! A baseline a scheduled check names, read when the configuration loads, its relative path
//! resolved against the configuration file's directory.

use std::path::{Path, PathBuf};

use super::Baseline;

thread_local! {
    /// The directory relative `baseline` paths of the configuration being loaded start from.
    static CONFIG_DIR: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` (a configuration load) with relative `baseline = "FILE"` paths resolved against
/// `dir`, the configuration file's directory.
pub fn relative_to<R>(dir: Option<&Path>, f: impl FnOnce() -> R) -> R {
    let before = CONFIG_DIR.with(|d| d.replace(dir.map(Path::to_path_buf)));
    let out = f();
    CONFIG_DIR.with(|d| d.replace(before));
    out
}

/// A baseline a scheduled check names (`[[checks]] baseline = "FILE"`, relative to the
/// configuration file's directory): read and checked when the configuration loads (and on
/// every reload), so a bad file is a configuration error that names the path it tried, the
/// entry and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineFile(pub std::sync::Arc<Baseline>);

impl serde::Serialize for BaselineFile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.path.display().to_string())
    }
}

impl<'de> serde::Deserialize<'de> for BaselineFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let given = PathBuf::deserialize(d)?;
        let path = match CONFIG_DIR.with(|dir| dir.borrow().clone()) {
            Some(dir) if given.is_relative() => dir.join(&given),
            _ => given,
        };
        Baseline::load(&path)
            .map(|b| BaselineFile(std::sync::Arc::new(b)))
            .map_err(serde::de::Error::custom)
    }
}
