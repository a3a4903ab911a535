//! Loading: the TOML file, then the `VANTAGE_<SECTION>__<KEY>` environment overrides, into
//! [`Config`], with every error tied to its origin (file and line, or variable) and key path.

use std::collections::BTreeSet;
use std::path::Path;

use super::validate::Written;
use super::{Config, ConfigError, Origin};

/// The sections an environment variable may override.
const SECTIONS: &[&str] = &["server", "fleet", "store", "probe"];
/// Keys whose override is a comma-separated list.
const LISTS: &[&str] = &["probe.assume_global", "probe.allow_non_global"];

/// One `VANTAGE_<SECTION>__<KEY>[__<KEY>]` variable.
#[derive(Debug)]
struct Override {
    variable: String,
    path: Vec<String>,
    raw: String,
}

impl Override {
    fn key(&self) -> String {
        self.path.join(".")
    }

    /// For a list key: how the variable spells a list (people write TOML or JSON list
    /// syntax, `["a"]`, which reads as one odd element).
    fn list_hint(&self) -> String {
        if !LISTS.contains(&self.key().as_str()) {
            return String::new();
        }
        format!(
            "; {} takes a comma-separated list without brackets or quotes, e.g. {}=100.64.0.0/10,fc00::/7",
            self.variable, self.variable
        )
    }

    /// The value as TOML: a list for list keys, a TOML literal (number, boolean) when the
    /// text is one and `typed`, else a string.
    fn value(&self, typed: bool) -> toml::Value {
        if LISTS.contains(&self.key().as_str()) {
            return toml::Value::Array(
                self.raw
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| toml::Value::String(s.to_string()))
                    .collect(),
            );
        }
        if typed {
            if let Ok(mut t) = format!("v = {}", self.raw).parse::<toml::Table>() {
                if let Some(v) = t.remove("v").filter(|v| !v.is_table() && !v.is_array()) {
                    return v;
                }
            }
        }
        toml::Value::String(self.raw.clone())
    }
}

/// A `VANTAGE_…` variable that looks like an override but would be ignored: a double
/// underscore under an unknown section (`VANTAGE_BOGUS__X`), or a known section followed by
/// one underscore (`VANTAGE_SERVER_API_LISTEN`). Other `VANTAGE_*` variables (VANTAGE_LOG,
/// VANTAGE_API_TOKEN, …) are not configuration and pass.
fn misspelt_override(variable: &str) -> Option<ConfigError> {
    let rest = variable.strip_prefix("VANTAGE_")?;
    let lower = rest.to_ascii_lowercase();
    let sections = SECTIONS.join(", ");
    let err = |key: String, message: String| ConfigError::Invalid {
        origin: Origin::Variable(variable.to_string()),
        key,
        message,
    };
    if let Some((section, key)) = lower.split_once("__") {
        if !SECTIONS.contains(&section) {
            return Some(err(
                format!("{section}.{}", key.replace("__", ".")),
                format!("`{section}` is not a configuration section ({sections}), so this override would be ignored; write VANTAGE_<SECTION>__<KEY> (e.g. VANTAGE_SERVER__API_LISTEN) or unset it"),
            ));
        }
        return None;
    }
    let section = SECTIONS
        .iter()
        .find(|s| lower.starts_with(&format!("{s}_")) && lower.len() > s.len() + 1)?;
    let key = &lower[section.len() + 1..];
    Some(err(
        format!("{section}.{key}"),
        format!(
            "looks like an override of {section}.{key} with one underscore after the section, so it would be ignored; write VANTAGE_{}__{} (two underscores)",
            section.to_ascii_uppercase(),
            key.to_ascii_uppercase()
        ),
    ))
}

fn overrides(env: impl IntoIterator<Item = (String, String)>) -> Vec<Override> {
    // Only keys under a known section: other VANTAGE_* variables (VANTAGE_LOG,
    // VANTAGE_API_TOKEN, …) are not configuration.
    let mut out: Vec<Override> = env
        .into_iter()
        .filter_map(|(variable, raw)| {
            let rest = variable.strip_prefix("VANTAGE_")?;
            let path: Vec<String> = rest.split("__").map(str::to_ascii_lowercase).collect();
            (path.len() >= 2 && SECTIONS.contains(&path[0].as_str())).then(|| Override {
                variable: variable.clone(),
                path,
                raw,
            })
        })
        .collect();
    out.sort_by(|a, b| a.variable.cmp(&b.variable));
    out
}

fn insert(table: &mut toml::Table, path: &[String], value: toml::Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut t = table;
    for p in parents {
        let entry = t
            .entry(p.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = entry else {
            return;
        };
        t = next;
    }
    t.insert(last.clone(), value);
}

/// Turn a serde error at `key` into a config error.
fn classify(origin: Origin, key: String, line: Option<usize>, message: &str) -> ConfigError {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (field, expected) = rest.split_once('`').unwrap_or((rest, ""));
        // The path stops at the table that holds the unknown key; name the key itself.
        let key = if key.is_empty() || key == "." {
            field.to_string()
        } else if key.ends_with(field) {
            key
        } else {
            format!("{key}.{field}")
        };
        let expected = expected.trim_start_matches(", ").trim();
        return ConfigError::UnknownKey {
            origin,
            key,
            line,
            expected: if expected.is_empty() {
                "this table takes no keys".into()
            } else {
                expected.to_string()
            },
        };
    }
    ConfigError::Value {
        origin,
        key: if key.is_empty() { ".".into() } else { key },
        line,
        message: message.to_string(),
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// The file alone, typed: errors carry the key path and the line.
fn file_table(path: &Path, text: &str) -> Result<toml::Table, ConfigError> {
    let table = text.parse::<toml::Table>().map_err(|e| {
        let (line, column) = e.span().map_or((0, 0), |s| line_col(text, s.start));
        ConfigError::Syntax {
            file: path.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })?;
    let de = toml::de::Deserializer::parse(text).map_err(|e| ConfigError::Syntax {
        file: path.to_path_buf(),
        line: 0,
        column: 0,
        message: e.message().trim().to_string(),
    })?;
    if let Err(e) = serde_path_to_error::deserialize::<_, Config>(de) {
        let line = e.inner().span().map(|s| line_col(text, s.start).0);
        return Err(classify(
            Origin::File(path.to_path_buf()),
            e.path().to_string(),
            line,
            e.inner().message().trim(),
        ));
    }
    Ok(table)
}

impl Config {
    /// Load `path` (if any) and the `VANTAGE_<SECTION>__<KEY>` environment overrides.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        Self::load_with_env(path, std::env::vars())
    }

    pub fn load_with_env(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        // A scheduled check's relative `baseline` path starts at the file's directory.
        let dir = path.map(|p| p.parent().unwrap_or(Path::new(".")));
        crate::baseline::relative_to(dir, || Self::load_inner(path, env))
    }

    fn load_inner(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let origin = path.map_or(Origin::Defaults, |p| Origin::File(p.to_path_buf()));
        let table = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::ReadFile {
                    what: "--config",
                    path: p.to_path_buf(),
                    source,
                })?;
                file_table(p, &text)?
            }
            None => toml::Table::new(),
        };
        let env: Vec<(String, String)> = env.into_iter().collect();
        let mut names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        if let Some(e) = names.into_iter().find_map(misspelt_override) {
            return Err(e);
        }
        let overrides = overrides(env);
        // An override that reads as a number or boolean is tried as one first; if its key
        // wants a string (a region named `123`), it is tried again as the string.
        let mut as_string = BTreeSet::new();
        loop {
            let mut merged = table.clone();
            for o in &overrides {
                insert(
                    &mut merged,
                    &o.path,
                    o.value(!as_string.contains(&o.variable)),
                );
            }
            let written = Written::of(&merged);
            let e = match serde_path_to_error::deserialize::<_, Config>(toml::Value::Table(merged))
            {
                Ok(cfg) => {
                    cfg.validate(&origin, &written)
                        .map_err(|e| blame_override(e, &overrides))?;
                    return Ok(cfg);
                }
                Err(e) => e,
            };
            let key = e.path().to_string();
            let message = e.inner().message().trim().to_string();
            let culprit = overrides.iter().find(|o| {
                let k = o.key();
                key == k
                    || key.starts_with(&format!("{k}."))
                    || key.starts_with(&format!("{k}["))
                    || (message.starts_with("unknown field `")
                        && k == format!("{key}.{}", field_of(&message)))
            });
            match culprit {
                Some(o) if !as_string.contains(&o.variable) && !o.value(true).is_str() => {
                    as_string.insert(o.variable.clone());
                }
                Some(o) => {
                    return Err(classify(
                        Origin::Variable(o.variable.clone()),
                        key,
                        None,
                        &format!("{message}{}", o.list_hint()),
                    ))
                }
                None => return Err(classify(origin, key, None, &message)),
            }
        }
    }
}

/// What the operator wrote (the file and the `VANTAGE_…` variables merged), for refusals
/// that name an entry as written or tell a value given from a default.
impl Written {
    fn of(table: &toml::Table) -> Written {
        let given = |section: &str, key: &str| {
            table
                .get(section)
                .and_then(toml::Value::as_table)
                .is_some_and(|t| t.contains_key(key))
        };
        let targets = match table.get("checks") {
            Some(toml::Value::Array(checks)) => checks
                .iter()
                .map(|c| {
                    c.get("target")
                        .and_then(toml::Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                })
                .collect(),
            _ => Vec::new(),
        };
        Written {
            targets,
            check_timeout: given("probe", "check_timeout"),
            default_deadline: given("fleet", "default_deadline"),
        }
    }
}

/// A value refused by validation came from the `VANTAGE_…` variable that set its key, when
/// one did: the error names the variable, not the file (which may not hold the key at all).
fn blame_override(e: ConfigError, overrides: &[Override]) -> ConfigError {
    match e {
        ConfigError::Invalid {
            origin,
            key,
            message,
        } => {
            let setter = overrides.iter().find(|o| {
                let k = o.key();
                key == k || key.starts_with(&format!("{k}.")) || key.starts_with(&format!("{k}["))
            });
            ConfigError::Invalid {
                origin: setter.map_or(origin, |o| Origin::Variable(o.variable.clone())),
                key,
                message,
            }
        }
        other => other,
    }
}

fn field_of(message: &str) -> &str {
    message
        .strip_prefix("unknown field `")
        .and_then(|r| r.split_once('`'))
        .map_or("", |(f, _)| f)
}
