//! A list read in part, or answered for another reason than the list, decides nothing
//! about the rest (`checks.md` 4.1): the rules that needed all of it are `unknown` with the
//! cause, never `pass`, and a rate limit or a gateway is never the server's own failure.

use serde_json::json;

use super::*;
use crate::model::Outcome;
use crate::probe::http::Body;
use crate::probe::listing::pages::PageMeta;
use crate::probe::listing::test_server::expect;
use crate::probe::test_support::answer_with;

fn read(kind: ListKind, pages: u32, stop: Option<Stop>) -> ListRead {
    ListRead {
        kind,
        pages,
        bytes: 100,
        stop,
        items: vec![("a".into(), "1".into())],
        metas: (0..pages)
            .map(|_| PageMeta {
                ttl_ms: Some(json!(0)),
                cache_scope: Some(json!("public")),
                result_type: Some(serde_json::json!("complete")),
            })
            .collect(),
        cursors_followed: pages.saturating_sub(1),
        cursor_problems: Problems::default(),
        shape: Problems::default(),
        audit: None,
    }
}

/// An answer labelled text/html with `status` and `headers` (its body `{"error": "x"}`).
fn answer(status: u16, headers: &[(&'static str, &'static str)]) -> Exchange {
    answer_with(
        status,
        Some("text/html"),
        Body::Json(json!({"error": "x"})),
        headers,
    )
}

#[test]
fn answers_for_another_reason_name_it_and_their_cause() {
    let (cause, why) =
        another_reason(&answer(429, &[("retry-after", "30")]), "tools/list", false).unwrap();
    assert_eq!(cause, Cause::OtherReason);
    assert!(
        why.starts_with("tools/list: rate limited: answered 429")
            && why.contains("Retry-After: 30"),
        "{why}"
    );
    let (cause, why) = another_reason(&answer(502, &[]), "prompts/list", false).unwrap();
    assert_eq!(cause, Cause::OtherReason);
    assert!(why.contains("a gateway answered 502"), "{why}");
    let (cause, why) = another_reason(&answer(401, &[]), "tools/list", false).unwrap();
    assert_eq!(cause, Cause::OtherReason);
    assert!(why.contains("--token-env"), "{why}");
    for status in [401, 403] {
        let (cause, _) = another_reason(&answer(status, &[]), "tools/list", true).unwrap();
        assert_eq!(cause, Cause::CredentialRefused, "{status}");
    }
    // A 404 or a 400 is the MCP layer's own answer about the method.
    for status in [400, 404, 500] {
        assert!(another_reason(&answer(status, &[]), "tools/list", false).is_none());
    }
}

#[test]
fn a_list_cut_by_a_bound_leaves_caps_cache_hints_and_pagination_unknown() {
    let whole = read(ListKind::Tools, 1, None);
    let cut = read(
        ListKind::Resources,
        100,
        Some(Stop::Cap("page cap (100 pages)".into())),
    );
    for v in [
        caps(&[&whole, &cut], &[], true, false),
        cache_hints(&[&whole, &cut]),
    ] {
        expect(
            "cut",
            &v,
            (Outcome::Unknown, None, Some(Cause::SizeCap)),
            &["page cap (100 pages)"],
        );
    }
    // Whole, they pass.
    let done = read(ListKind::Resources, 3, None);
    assert_eq!(
        caps(&[&whole, &done], &[], true, false).outcome,
        Outcome::Pass
    );
    assert_eq!(cache_hints(&[&whole, &done]).outcome, Outcome::Pass);
    // A problem on the part read still fails.
    let mut bad = read(
        ListKind::Prompts,
        2,
        Some(Stop::Cap("page cap (100 pages)".into())),
    );
    bad.metas[1].ttl_ms = None;
    assert_eq!(cache_hints(&[&bad]).outcome, Outcome::Fail);
}

#[test]
fn a_rate_limit_mid_list_is_not_a_refused_cursor() {
    let limited = read(
        ListKind::Tools,
        1,
        Some(Stop::Answered {
            cause: Cause::OtherReason,
            page: 2,
            reason: "tools/list: rate limited: answered 429".into(),
        }),
    );
    let mut limited = limited;
    limited.cursors_followed = 1;
    expect(
        "limited",
        &pagination(&[&limited]),
        (Outcome::Unknown, None, Some(Cause::OtherReason)),
        &[
            "tools/list was not read to its end (1 cursors followed); the rest was not seen (",
            "page 2 was answered for another reason",
        ],
    );
    // An unanswered first page leaves pagination unknown too (the list may paginate).
    let mut first = read(ListKind::Prompts, 0, None);
    first.items.clear();
    first.stop = Some(Stop::Answered {
        cause: Cause::OtherReason,
        page: 1,
        reason: "prompts/list: a gateway answered 502".into(),
    });
    let whole = read(ListKind::Tools, 1, None);
    assert_eq!(pagination(&[&whole, &first]).outcome, Outcome::Unknown);
    expect(
        "first",
        &caps(&[&whole, &first], &[], true, false),
        (Outcome::Unknown, None, Some(Cause::OtherReason)),
        &[],
    );
}
