//! The listing verdicts, table-driven over lists built by hand.

use serde_json::json;

use super::*;
use crate::model::Outcome;
use crate::probe::listing::audit::ToolAudit;
use crate::probe::listing::pages::PageMeta;
use crate::probe::listing::test_server::expect;
use crate::probe::listing::tool_list::{list_shape, name_format, order, variance};
use crate::probe::test_support::json_answer;

const FAIL_MEDIUM: (Outcome, Option<Severity>, Option<Cause>) =
    (Outcome::Fail, Some(Severity::Medium), None);

fn meta(ttl: Value, scope: &str) -> PageMeta {
    PageMeta {
        ttl_ms: Some(ttl),
        cache_scope: Some(json!(scope)),
        result_type: Some(serde_json::json!("complete")),
    }
}

fn tools(names: &[(&str, &str)]) -> ListRead {
    let mut audit = ToolAudit::default();
    for (i, (n, _)) in names.iter().enumerate() {
        audit.tool(
            i,
            &json!({"name": n, "inputSchema": {"type": "object", "additionalProperties": false}}),
            60,
        );
    }
    ListRead {
        kind: ListKind::Tools,
        pages: 1,
        bytes: 60 * names.len() as u64,
        stop: None,
        items: names
            .iter()
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect(),
        metas: vec![meta(json!(0), "private")],
        cursors_followed: 0,
        cursor_problems: Problems::default(),
        shape: Problems::default(),
        audit: Some(audit),
    }
}

fn ex(status: u16, body: Value) -> Result<Exchange, ExchangeError> {
    Ok(json_answer(status, body))
}

fn not_found() -> Result<Exchange, ExchangeError> {
    ex(
        404,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}),
    )
}

#[test]
fn advertised_lists_must_work_and_the_others_must_be_404() {
    let t = tools(&[("a", "1")]);
    let v = caps(&[&t], &[(ListKind::Prompts, not_found())], true, false);
    assert_eq!(v.outcome, Outcome::Pass, "{}", v.observed);
    assert!(v.observed.contains("prompts/list 404 -32601"));

    let mut refused = tools(&[]);
    refused.metas.clear();
    refused.stop = Some(Stop::Refused {
        status: 404,
        code: Some(-32601),
        summary: "404 application/json JSON-RPC error -32601".into(),
    });
    let v = caps(&[&refused], &[], true, false);
    expect(
        "refused",
        &v,
        (Outcome::Fail, Some(Severity::High), None),
        &["tools is advertised, but tools/list answered 404"],
    );

    let served = ex(
        200,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"prompts": []}}),
    );
    let v = caps(&[&t], &[(ListKind::Prompts, served)], true, false);
    expect(
        "served",
        &v,
        FAIL_MEDIUM,
        &["served although prompts is not advertised"],
    );

    let wrong_status = ex(
        200,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}}),
    );
    let v = caps(&[&t], &[(ListKind::Prompts, wrong_status)], true, false);
    assert!(
        v.observed.contains("MUST come with HTTP 404"),
        "{}",
        v.observed
    );

    // Templates are optional: -32601 there is no failure.
    let mut templates = tools(&[]);
    templates.kind = ListKind::ResourceTemplates;
    templates.metas.clear();
    templates.stop = Some(Stop::Refused {
        status: 404,
        code: Some(-32601),
        summary: "404".into(),
    });
    let v = caps(&[&t, &templates], &[], true, false);
    assert_eq!(v.outcome, Outcome::Pass, "{}", v.observed);
    assert!(v.observed.contains("optional"));

    // An unanswered probe decides nothing.
    let lost: Result<Exchange, ExchangeError> = Err(ExchangeError {
        cause: Cause::Timeout,
        message: "timed out".into(),
    });
    let v = caps(&[], &[(ListKind::Tools, lost)], true, false);
    expect(
        "the exchange's own cause",
        &v,
        (Outcome::Unknown, None, Some(Cause::Timeout)),
        &[],
    );
}

#[test]
fn order_and_variance_between_two_listings() {
    let a = tools(&[("a", "1"), ("b", "2"), ("c", "3")]);
    let same = tools(&[("a", "1"), ("b", "2"), ("c", "3")]);
    let shuffled = tools(&[("b", "2"), ("a", "1"), ("c", "3")]);
    let other = tools(&[("a", "1"), ("b", "9"), ("d", "4")]);
    assert_eq!(order(Some(&a), Some(&same)).outcome, Outcome::Pass);
    assert_eq!(
        variance(Some(&a), Some(&same), false).outcome,
        Outcome::Pass
    );
    let v = order(Some(&a), Some(&shuffled));
    expect(
        "order(Some(&a), Some(&shuffled))",
        &v,
        (Outcome::Warn, Some(Severity::Low), None),
        &["position 1 was a then b"],
    );
    // The same set in another order is no variance.
    assert_eq!(
        variance(Some(&a), Some(&shuffled), false).outcome,
        Outcome::Pass
    );
    let v = variance(Some(&a), Some(&other), true);
    expect(
        "variance(Some(&a), Some(&other), true)",
        &v,
        FAIL_MEDIUM,
        &[],
    );
    assert_eq!(
        v.observed,
        "the tools differ over a second session: added d; removed c; changed b"
    );
    // Order among the common names only.
    assert_eq!(order(Some(&a), Some(&other)).outcome, Outcome::Pass);
    // An incomplete listing decides nothing.
    let mut cut = tools(&[("a", "1")]);
    cut.stop = Some(Stop::Deadline);
    let v = order(Some(&a), Some(&cut));
    expect(
        "order(Some(&a), Some(&cut))",
        &v,
        (Outcome::Unknown, None, Some(Cause::Deadline)),
        &[],
    );
    let v = variance(Some(&cut), Some(&a), false);
    expect(
        "the cut listing's own cause",
        &v,
        (Outcome::Unknown, None, Some(Cause::Deadline)),
        &[],
    );
    // A second session that could not be opened: the two-listing rules say why.
    let unopened = ListRead::unread(
        ListKind::Tools,
        Stop::NoAnswer {
            cause: Cause::Reset,
            page: 1,
            message: "a second session could not be opened: initialize: reset".into(),
        },
    );
    let v = variance(Some(&a), Some(&unopened), true);
    expect(
        "unopened",
        &v,
        (Outcome::Unknown, None, Some(Cause::Reset)),
        &["second listing", "could not be opened"],
    );
    let v = order(Some(&a), None);
    expect(
        "order(Some(&a), None)",
        &v,
        (Outcome::Unknown, None, Some(Cause::Malformed)),
        &[],
    );
    assert_eq!(order(None, None).outcome, Outcome::Skip);
}

#[test]
fn pagination_rules() {
    let single = tools(&[("a", "1")]);
    assert_eq!(pagination(&[&single]).outcome, Outcome::Skip);
    let mut paged = tools(&[("a", "1"), ("b", "2")]);
    paged.cursors_followed = 1;
    paged.pages = 2;
    let v = pagination(&[&paged]);
    assert_eq!(v.outcome, Outcome::Pass);
    assert!(v.observed.contains("tools/list (2 pages)"));
    let mut refused = tools(&[("a", "1")]);
    refused.cursors_followed = 1;
    refused.cursor_problems.push(
        Severity::Medium,
        "the server refused the cursor it issued (page 2): 400",
    );
    refused.stop = Some(Stop::Broken("refused".into()));
    let v = pagination(&[&refused]);
    expect("pagination(&[&refused])", &v, FAIL_MEDIUM, &[]);
    let mut endless = tools(&[("a", "1")]);
    endless.cursors_followed = 100;
    endless.pages = 100;
    endless.stop = Some(Stop::Cap("page cap (100 pages)".into()));
    let v = pagination(&[&endless]);
    expect(
        "pagination(&[&endless])",
        &v,
        (Outcome::Warn, Some(Severity::Low), Some(Cause::SizeCap)),
        &["page cap (100 pages)"],
    );
}

#[test]
fn a_bogus_cursor_wants_32602() {
    let ok = ex(
        200,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid cursor"}}),
    );
    assert_eq!(
        invalid_cursor("tools/list", &ok, false).outcome,
        Outcome::Pass
    );
    let served = ex(
        200,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
    );
    let v = invalid_cursor("tools/list", &served, false);
    expect(
        "invalid_cursor(\"tools/list\", &served, false)",
        &v,
        (Outcome::Warn, Some(Severity::Low), None),
        &[],
    );
    let other = ex(
        500,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom"}}),
    );
    assert!(invalid_cursor("tools/list", &other, false)
        .observed
        .contains("expected JSON-RPC -32602"));
}

#[test]
fn cache_hints_on_every_page() {
    let good = tools(&[("a", "1")]);
    assert_eq!(cache_hints(&[&good]).outcome, Outcome::Pass);
    let mut bad = tools(&[("a", "1")]);
    bad.metas = vec![
        meta(json!(-1), "private"),
        PageMeta {
            ttl_ms: None,
            cache_scope: Some(json!("shared")),
            result_type: Some(serde_json::json!("complete")),
        },
    ];
    let v = cache_hints(&[&bad]);
    expect(
        "bad",
        &v,
        FAIL_MEDIUM,
        &[
            "page 1: ttlMs -1",
            "page 2: ttlMs missing",
            "\"shared\" is neither",
        ],
    );
    assert_eq!(cache_hints(&[]).outcome, Outcome::Skip);
}

/// Fresh eyes round 17, nit 6: the evidence of `cache.hints` leads with a list result that is
/// not complete, every list's before any hint, however many hints are missing (six lines are
/// quoted, then a count); the hints of such a page are not judged (an `input_required` result
/// carries none). Pages that are complete are judged as before.
#[test]
fn a_list_result_type_comes_first_in_cache_hints_evidence() {
    let mut t = tools(&[("a", "1")]);
    t.metas = (0..7)
        .map(|_| PageMeta {
            ttl_ms: None,
            cache_scope: Some(json!("public")),
            result_type: Some(json!("complete")),
        })
        .collect();
    let mut r = tools(&[]);
    r.kind = ListKind::Resources;
    r.audit = None;
    r.metas = vec![
        meta(json!(0), "public"),
        PageMeta {
            ttl_ms: None,
            cache_scope: None,
            result_type: Some(json!("input_required")),
        },
    ];
    let v = cache_hints(&[&t, &r]);
    expect(
        "mixed",
        &v,
        FAIL_MEDIUM,
        &["tools/list page 5: ttlMs missing"],
    );
    assert!(
        v.observed.starts_with(
            "1 of 2 resources/list pages carry resultType \"input_required\" (page 2): a list result MUST be complete"
        ),
        "{}",
        v.observed
    );
    assert!(
        !v.observed.contains("resources/list page 2"),
        "{}",
        v.observed
    );
    assert!(v.observed.ends_with("(and 2 more)"), "{}", v.observed);
}

/// Red team round 15, defect 14, on a list page: the same rule as `discover.shape`
/// (`era::ttl_ms_problem`): a `ttlMs` beyond 2^64 - 1, `6e4` or `60000.0` is an integer;
/// a negative number, a fraction or a string fails medium, naming the page.
#[test]
fn cache_hints_read_ttl_ms_as_an_integer_by_its_value() {
    use crate::probe::era::tests::{TTL_INTEGERS, TTL_NOT_INTEGERS};
    let page = |raw: &str| {
        let ttl: Value = serde_json::from_str(raw).unwrap();
        let mut r = tools(&[("a", "1")]);
        r.metas = vec![meta(json!(0), "public"), meta(ttl.clone(), "public")];
        (ttl, cache_hints(&[&r]))
    };
    for raw in TTL_INTEGERS {
        let (_, v) = page(raw);
        assert_eq!(v.outcome, Outcome::Pass, "{raw}: {}", v.observed);
    }
    for raw in TTL_NOT_INTEGERS {
        let (ttl, v) = page(raw);
        expect(
            raw,
            &v,
            FAIL_MEDIUM,
            &[&format!(
                "tools/list page 2: ttlMs {ttl} is not an integer >= 0"
            )],
        );
    }
}

#[test]
fn a_partial_list_fails_on_what_it_saw_and_never_passes() {
    let mut part = tools(&[("ok", "1")]);
    part.stop = Some(Stop::Cap("page cap (100 pages)".into()));
    let v = name_format(Some(&part));
    // A bound of the listing cut it: no evidence about the rest (the merge names it
    // probe.incomplete, so the decision cannot pass).
    expect(
        "name_format(Some(&part))",
        &v,
        (Outcome::Unknown, None, Some(Cause::SizeCap)),
        &["the rest was not seen"],
    );
    let mut bad = tools(&[("bad name", "1")]);
    if let Some(a) = bad.audit.as_mut() {
        a.tool(
            1,
            &json!({"name": "bad name", "inputSchema": {"type": "object"}}),
            10,
        );
    }
    bad.stop = Some(Stop::Deadline);
    assert_eq!(name_format(Some(&bad)).outcome, Outcome::Warn);
}

/// A list the server broke (a cursor it issued, then refused) has no rest a client could
/// read: the rules that needed all of it point at the failure that broke it, which is a
/// finding of its own, instead of naming the same gap again. Only the first reading is judged
/// that way: a second reading broken alone is a comparison without evidence.
#[test]
fn a_list_the_server_broke_is_named_once_by_its_own_failure() {
    let why = "the server refused the cursor it issued (page 2): 200 JSON-RPC error -32602";
    let mut broken = tools(&[("a", "1"), ("b", "2")]);
    broken.pages = 1;
    broken.cursors_followed = 1;
    broken.stop = Some(Stop::Broken(why.into()));
    broken
        .cursor_problems
        .push(Severity::Medium, why.to_string());
    expect(
        "the failure that broke it",
        &pagination(&[&broken]),
        FAIL_MEDIUM,
        &[],
    );
    for v in [
        name_format(Some(&broken)),
        list_shape(Some(&broken), true),
        order(Some(&broken), Some(&tools(&[("a", "1"), ("b", "2")]))),
    ] {
        expect(
            "broken",
            &v,
            (Outcome::Skip, None, None),
            &["the server broke the list there", why],
        );
    }
    let whole = tools(&[("a", "1"), ("b", "2")]);
    let v = variance(Some(&whole), Some(&broken), false);
    expect(
        "second broken",
        &v,
        (Outcome::Unknown, None, Some(Cause::Malformed)),
        &["second listing"],
    );
}

#[test]
fn list_shape_wants_result_type_on_2026_pages() {
    let mut t = tools(&[("a", "1")]);
    assert_eq!(list_shape(Some(&t), true).outcome, Outcome::Pass);
    t.metas[0].result_type = None;
    let v = list_shape(Some(&t), true);
    expect("list_shape(Some(&t), true)", &v, FAIL_MEDIUM, &[]);
    // A 2025-11-25 result has no resultType.
    assert_eq!(list_shape(Some(&t), false).outcome, Outcome::Pass);
}

/// Red team round 15, defect 4: a list page whose resultType is not "complete" (a type no
/// client knows, or input_required, which a list MUST NOT give) fails tools.list-shape and
/// cache.hints (every list), medium, naming the page and the type.
#[test]
fn a_list_result_that_is_not_complete_fails() {
    for (t, words) in [
        (json!("completed"), "not \"complete\""),
        (json!("input_required"), "input_required is allowed only on"),
        (json!(1), "resultType 1"),
    ] {
        let mut r = tools(&[("a", "1")]);
        r.metas.push(meta(json!(0), "public"));
        r.metas[1].result_type = Some(t.clone());
        let v = list_shape(Some(&r), true);
        expect(
            format!("list_shape {t}"),
            &v,
            FAIL_MEDIUM,
            &["page 2", words],
        );
        let v = cache_hints(&[&r]);
        expect(
            format!("cache_hints {t}"),
            &v,
            FAIL_MEDIUM,
            &["1 of 2 tools/list pages carry resultType", words],
        );
    }
}
