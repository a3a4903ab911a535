//! A list request redirected (red team round 15, defect 5).

use super::*;
use crate::probe::http::Body;
use crate::probe::test_support::answer_with;

/// tools/list answered 308 was "tools is advertised, but tools/list answered 308" (high,
/// caps.discover-matches-handlers): the capabilities were blamed for a redirect. It says
/// nothing about the list: `unknown`, the redirect being redirect.none's.
#[test]
fn a_list_redirected_says_nothing_about_the_capabilities() {
    let moved = answer_with(
        308,
        None,
        Body::Empty,
        &[("location", "http://127.0.0.2:3000/mcp")],
    );
    let (cause, why) = another_reason(&moved, "tools/list", false).expect("another reason");
    assert_eq!(cause, Cause::OtherReason);
    assert!(
        why.starts_with("tools/list answered with a redirect (308 to http://127.0.0.2:3000/mcp)"),
        "{why}"
    );
    let absent: Vec<Absent> = vec![(ListKind::Prompts, Ok(moved))];
    let v = caps(&[], &absent, true, false);
    assert_eq!(
        (v.outcome, v.cause),
        (crate::model::Outcome::Unknown, Some(Cause::OtherReason)),
        "{}",
        v.observed
    );
}
