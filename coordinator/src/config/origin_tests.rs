//! Where a configuration error says the value came from: the `VANTAGE_…` variable that set a
//! key, or the file.

use super::tests::{load_text, var};
use super::{ConfigError, Origin};

/// A value that validation refuses is blamed on the `VANTAGE_…` variable that set it, not on
/// the file, which may not hold the key or may hold a good value (red team round 11, item 6).
#[test]
fn a_refused_override_names_its_variable_not_the_file() {
    for (name, text, variable, value, key) in [
        (
            "blame-region",
            "[fleet]\nlocal_region = \"ok\"\n",
            "VANTAGE_FLEET__LOCAL_REGION",
            "a;b",
            "fleet.local_region",
        ),
        (
            "blame-timeout",
            "[probe]\ncheck_timeout = \"5s\"\n",
            "VANTAGE_PROBE__CHECK_TIMEOUT",
            "0s",
            "probe.check_timeout",
        ),
    ] {
        let e = load_text(name, text, vec![var(variable, value)]).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Invalid { origin: Origin::Variable(v), key: k, .. }
                if v == variable && k == key),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("environment variable {variable}: key `{key}`"))
                && !e.to_string().contains("vantage.toml"),
            "{e}"
        );
    }
    // The same value in the file is still the file's.
    let e = load_text(
        "blame-file",
        "[probe]\ncheck_timeout = \"0s\"\n",
        Vec::new(),
    )
    .unwrap_err();
    assert!(
        matches!(
            &e,
            ConfigError::Invalid {
                origin: Origin::File(_),
                ..
            }
        ),
        "{e:?}"
    );
}
