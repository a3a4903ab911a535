//! probe.check_timeout against the deadline of a run the in-process vantage makes: refused
//! where the operator gave both and the wait is not shorter (red team round 11, nits 3, 11),
//! accepted where one is a default (the deadline bounds the wait), as `vantage check` does
//! with --check-timeout and --timeout.

use super::tests::{load_text, var};
use super::{ConfigError, Origin};

const CHECK: &str = "[[checks]]\ntarget = \"https://a.example/mcp\"\ninterval = \"1m\"\n";

fn refusal(name: &str, text: &str, env: Vec<(String, String)>) -> (Origin, String, String) {
    match load_text(name, text, env).unwrap_err() {
        ConfigError::Invalid {
            origin,
            key,
            message,
        } => (origin, key, message),
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn a_wait_not_shorter_than_a_deadline_both_given_is_refused_naming_both() {
    let text = format!("[probe]\ncheck_timeout = \"10s\"\n{CHECK}deadline = \"3s\"\n");
    let (origin, key, message) = refusal("wait-check", &text, vec![]);
    assert!(matches!(origin, Origin::File(_)), "{origin:?}");
    assert_eq!(key, "probe.check_timeout");
    assert!(
        message.starts_with(
            "10s is not shorter than checks[0].deadline (3s, https://a.example/mcp): "
        ) && message
            .ends_with("lower probe.check_timeout below 3s or raise checks[0].deadline above 10s"),
        "{message}"
    );
    // Equal is refused too: the two timers would fire together.
    let text = format!("[probe]\ncheck_timeout = \"3s\"\n{CHECK}deadline = \"3s\"\n");
    let (_, key, _) = refusal("wait-equal", &text, vec![]);
    assert_eq!(key, "probe.check_timeout");
    let text = "[fleet]\ndefault_deadline = \"30s\"\n[probe]\ncheck_timeout = \"40s\"\n";
    let (_, key, message) = refusal("wait-default", text, vec![]);
    assert_eq!(key, "probe.check_timeout");
    assert!(
        message.starts_with("40s is not shorter than fleet.default_deadline (30s, the deadline of a check that names none): ")
            && message.ends_with("raise fleet.default_deadline above 40s"),
        "{message}"
    );
    // Set by a variable over a file that never says it: the variable is named.
    let text = format!("{CHECK}deadline = \"3s\"\n");
    let (origin, key, _) = refusal(
        "wait-var",
        &text,
        vec![var("VANTAGE_PROBE__CHECK_TIMEOUT", "10s")],
    );
    assert_eq!(
        (origin, key.as_str()),
        (
            Origin::Variable("VANTAGE_PROBE__CHECK_TIMEOUT".into()),
            "probe.check_timeout"
        )
    );
}

/// One of the two a default, no in-process vantage, or a check it does not run: accepted.
#[test]
fn a_wait_against_a_default_or_a_run_elsewhere_is_accepted() {
    let agents = "[[agents]]\nname = \"e\"\nregion = \"eu\"\ntoken_env = \"X\"\n";
    for (name, text) in [
        // The default deadline (30s) against a given wait: the deadline bounds it.
        ("wait-ok-1", "[probe]\ncheck_timeout = \"40s\"\n".to_string()),
        // A given deadline against the default wait (5s).
        ("wait-ok-2", format!("{CHECK}deadline = \"3s\"\n")),
        // No in-process vantage: probe.check_timeout times nothing.
        (
            "wait-ok-3",
            format!("[fleet]\nlocal_agent = false\n[probe]\ncheck_timeout = \"10s\"\n{agents}{CHECK}deadline = \"3s\"\n"),
        ),
        // A check only another region runs.
        (
            "wait-ok-4",
            format!("[probe]\ncheck_timeout = \"10s\"\n{agents}{CHECK}deadline = \"3s\"\nregions = [\"eu\"]\n"),
        ),
        (
            "wait-ok-5",
            format!("[probe]\ncheck_timeout = \"2s\"\n{CHECK}deadline = \"3s\"\n"),
        ),
    ] {
        if let Err(e) = load_text(name, &text, vec![]) {
            panic!("{text}: {e}");
        }
    }
}
