use vantage_agent::catalog::{raising, CheckId};

use super::*;

/// Every finding id leads somewhere: to the checks that raise it, or to the merge code that
/// derives it (which names it by its variant).
#[test]
fn every_finding_is_raised_by_a_check_or_derived_where_it_says() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for &id in FindingId::ALL {
        let s = spec(id);
        assert!(
            !raising(id).is_empty() || s.derived.is_some(),
            "{id}: no check raises it and nothing derives it"
        );
        if let Some((file, how)) = s.derived {
            assert!(!how.is_empty(), "{id}");
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            assert!(
                text.contains(&format!("FindingId::{id:?}")),
                "{id}: {file} does not derive it"
            );
        }
        assert!(!s.title.is_empty() && !s.remediation.is_empty() && !s.spec.is_empty());
    }
}

/// A check's default finding carries at least the check's own highest severity, unless the
/// merge sends the worst outcomes elsewhere (the conditional findings).
#[test]
fn default_findings_can_carry_their_checks_severity() {
    for &c in CheckId::ALL {
        let check = c.spec();
        let worst = c
            .findings()
            .map(|f| spec(f).severity)
            .max()
            .expect("a check maps to at least one finding");
        assert!(
            worst >= check.max_severity,
            "{c}: can fail at {:?}, its findings carry at most {worst:?}",
            check.max_severity
        );
    }
}
