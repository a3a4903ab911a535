//! The one rule for a region label, shared by `vantage check --region`, `vantage-agent
//! --region` and the configuration (`[[agents]] region`, `fleet.local_region`): the label
//! names findings, JUnit suites, metric labels and log lines, so an empty one ("not tied to
//! a region"), a path (`a/b`), one made only of dots (`.`, `..`: a path's own names) or an
//! unprintable one is refused before anything runs.

/// The rule, as said in every refusal.
pub const RULE: &str =
    "a region label is 1 to 63 letters, digits, `-`, `_` or `.`, not only dots (e.g. eu-west)";

/// What is wrong with `label` (`None`: it is a valid region label). The message ends
/// with [`RULE`].
pub fn label_problem(label: &str) -> Option<String> {
    if label.is_empty() {
        return Some(format!("the region label is empty; {RULE}"));
    }
    if let Some(bad) = label
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        let shown = if bad.is_ascii_graphic() {
            format!("`{bad}`")
        } else {
            format!("U+{:04X}", bad as u32)
        };
        return Some(format!(
            "the region label `{}` has {shown}; {RULE}",
            label.escape_debug()
        ));
    }
    if label.chars().all(|c| c == '.') {
        return Some(format!(
            "the region label `{label}` is only dots (a path's own names); {RULE}"
        ));
    }
    if label.chars().count() > 63 {
        return Some(format!(
            "the region label is {} characters long; {RULE}",
            label.chars().count()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_refused_by_the_rule() {
        for ok in ["local", "eu-west", "us_1", "123", "ap.south"] {
            assert_eq!(label_problem(ok), None, "{ok}");
        }
        let cases = [
            ("", "the region label is empty; "),
            ("a/b", "the region label `a/b` has `/`; "),
            ("eu west", "the region label `eu west` has U+0020; "),
            (
                "eu\u{1b}[31m",
                "the region label `eu\\u{1b}[31m` has U+001B; ",
            ),
            ("é", "the region label `é` has U+00E9; "),
        ];
        for (label, head) in cases {
            let e = label_problem(label).unwrap();
            assert!(e.starts_with(head), "{label:?}: {e}");
            assert!(e.ends_with(RULE), "{e}");
        }
        let long = "a".repeat(64);
        assert!(label_problem(&long)
            .unwrap()
            .starts_with("the region label is 64 characters long"));
        assert_eq!(label_problem(&"a".repeat(63)), None);
    }

    /// `.` and `..` (and any label of dots only) read as a path's own names: refused with
    /// the rule (red team round 11, nit 4). Dots inside a label stay allowed.
    #[test]
    fn labels_of_dots_only_are_refused() {
        for label in [".", "..", "..."] {
            let e = label_problem(label).unwrap_or_else(|| panic!("{label} accepted"));
            assert_eq!(
                e,
                format!("the region label `{label}` is only dots (a path's own names); {RULE}")
            );
        }
        for ok in ["a.b", ".a", "x..y", "-"] {
            assert_eq!(label_problem(ok), None, "{ok}");
        }
    }
}
