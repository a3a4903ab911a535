//! Reading one list page by page, following `nextCursor`, under the listing's bounds: pages
//! per list, bytes per page, bytes of the whole listing (shared by every list), and time.
//! Each page's items are digested (and tools audited) as they arrive, then dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::audit::ToolAudit;
use super::problems::Problems;
use super::rules::another_reason;
use super::session::Session;
use super::Listing;
use crate::model::{Cause, Severity};
use crate::probe::http::{clip, Limits, Rpc, SseRead};
use crate::surface::{
    item_canonical, item_digest, list_digests, ListKind, ListSurface, SurfaceItem,
};

/// Why a read ended before the last page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// A bound of the listing was reached (named, with its value).
    Cap(String),
    /// The listing's time ran out.
    Deadline,
    /// The first page was refused: what came back (HTTP status, JSON-RPC code, summary).
    Refused {
        status: u16,
        code: Option<i64>,
        summary: String,
    },
    /// A later page broke the list (a cursor refused with a JSON-RPC error, a page without
    /// its array): why.
    Broken(String),
    /// The request for `page` was answered for another reason than the list (a rate limit,
    /// a gateway, the authorization layer): why, and its cause (`checks.md` 4.1).
    Answered {
        cause: Cause,
        page: u32,
        reason: String,
    },
    /// No answer to the request for `page` (1 for the first): why, and its cause.
    NoAnswer {
        cause: Cause,
        page: u32,
        message: String,
    },
}

impl Stop {
    pub(crate) fn describe(&self) -> String {
        match self {
            Stop::Cap(what) => format!("stopped at the {what}"),
            Stop::Deadline => "stopped: the check's deadline was near".into(),
            Stop::Refused { summary, .. } => format!("refused: {summary}"),
            Stop::Broken(why) => why.clone(),
            Stop::Answered {
                page: 1, reason, ..
            } => format!("answered for another reason: {reason}"),
            Stop::Answered { page, reason, .. } => {
                format!("page {page} was answered for another reason: {reason}")
            }
            Stop::NoAnswer {
                page: 1, message, ..
            } => format!("no answer: {message}"),
            Stop::NoAnswer { page, message, .. } => {
                format!("page {page} got no answer: {message}")
            }
        }
    }

    /// Why a rule judged on what was read before this stop has no evidence about the rest:
    /// a bound of the listing (`size-cap`), the deadline (the vantage's own), the exchange's
    /// own cause, an answer that refused the list (`other-reason`) or broke it (`malformed`).
    pub(crate) fn cause(&self) -> Cause {
        match self {
            Stop::Cap(_) => Cause::SizeCap,
            Stop::Deadline => Cause::Deadline,
            Stop::Refused { .. } => Cause::OtherReason,
            Stop::Broken(_) => Cause::Malformed,
            Stop::Answered { cause, .. } | Stop::NoAnswer { cause, .. } => *cause,
        }
    }
}

/// The cache hints and result type of one page.
#[derive(Debug, Clone)]
pub(crate) struct PageMeta {
    pub(crate) ttl_ms: Option<Value>,
    pub(crate) cache_scope: Option<Value>,
    /// `result.resultType` as sent (absent: `None`).
    pub(crate) result_type: Option<Value>,
}

/// One list as read.
#[derive(Debug)]
pub(crate) struct ListRead {
    pub(crate) kind: ListKind,
    pub(crate) pages: u32,
    pub(crate) bytes: u64,
    pub(crate) stop: Option<Stop>,
    /// (key, digest) of every item read, in order.
    pub(crate) items: Vec<(String, String)>,
    pub(crate) metas: Vec<PageMeta>,
    /// How many times a nextCursor was followed.
    pub(crate) cursors_followed: u32,
    /// Cursor rules broken (refused, repeated, not a string, scope changed between pages).
    pub(crate) cursor_problems: Problems,
    /// The result is not a list of items (missing array, an item without its key).
    pub(crate) shape: Problems,
    /// For tools: the per-tool rules.
    pub(crate) audit: Option<ToolAudit>,
}

impl ListRead {
    fn new(kind: ListKind, audit: bool) -> Self {
        ListRead {
            kind,
            pages: 0,
            bytes: 0,
            stop: None,
            items: Vec::new(),
            metas: Vec::new(),
            cursors_followed: 0,
            cursor_problems: Problems::default(),
            shape: Problems::default(),
            audit: (audit && kind == ListKind::Tools).then(ToolAudit::default),
        }
    }

    /// A list that could not be read at all, for `stop`.
    pub(crate) fn unread(kind: ListKind, stop: Stop) -> Self {
        ListRead {
            stop: Some(stop),
            ..ListRead::new(kind, false)
        }
    }

    pub(crate) fn complete(&self) -> bool {
        self.stop.is_none()
    }

    /// At least one page was answered with a result.
    pub(crate) fn answered(&self) -> bool {
        !self.metas.is_empty()
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.items.iter().map(|(k, _)| k.as_str()).collect()
    }

    /// The report's view of this list.
    pub(crate) fn surface(&self, max_items: u32) -> ListSurface {
        let digests: Vec<String> = self.items.iter().map(|(_, d)| d.clone()).collect();
        let (digest, set_digest) = list_digests(&digests);
        ListSurface {
            kind: self.kind,
            digest,
            set_digest,
            count: self.items.len() as u32,
            pages: self.pages,
            bytes: self.bytes,
            complete: self.complete(),
            stopped: self.stop.as_ref().map(Stop::describe),
            items: self
                .items
                .iter()
                .take(max_items as usize)
                .map(|(name, digest)| SurfaceItem {
                    name: name.clone(),
                    digest: digest.clone(),
                })
                .collect(),
            items_truncated: self.items.len() > max_items as usize,
        }
    }
}

/// The time kept back at the end of the listing for what follows it.
const MARGIN: Duration = Duration::from_millis(50);

fn mib(bytes: u64) -> String {
    if bytes % (1024 * 1024) == 0 {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// Read `kind` in `session` from its first page, `first_id` being the JSON-RPC id of the
/// first request (later pages count up from it). `spent` is shared by every list of the
/// pass: the total byte bound. With `audit`, each tool is judged by the per-tool rules as
/// it arrives (a second reading of the same list only needs its digests).
pub(crate) async fn read(
    l: &Listing<'_>,
    session: &Session,
    kind: ListKind,
    first_id: i64,
    spent: &AtomicU64,
    audit: bool,
) -> ListRead {
    let b = l.bounds;
    let mut out = ListRead::new(kind, audit);
    let mut cursor: Option<String> = None;
    let mut seen_cursors: Vec<String> = Vec::new();
    let mut scope: Option<Value> = None;
    loop {
        if Instant::now() + MARGIN >= l.deadline {
            out.stop = Some(Stop::Deadline);
            break;
        }
        if out.pages >= b.max_pages {
            out.stop = Some(Stop::Cap(format!("page cap ({} pages)", b.max_pages)));
            break;
        }
        let left = b
            .max_total_bytes
            .saturating_sub(spent.load(Ordering::Relaxed));
        if left == 0 {
            out.stop = Some(Stop::Cap(format!(
                "listing size cap ({})",
                mib(b.max_total_bytes)
            )));
            break;
        }
        let page_cap = b.max_page_bytes.min(left);
        let limits = Limits {
            body_bytes: page_cap as usize,
            sse_line_bytes: page_cap as usize,
            sse_events: 64,
            ..l.engine_limits()
        };
        let mut params = Map::new();
        if let Some(c) = &cursor {
            params.insert("cursor".into(), json!(c));
        }
        let id = first_id + i64::from(out.pages);
        let req = session
            .request(kind.method(), id, params)
            .with_bearer(l.token);
        let ex = match l.send_with(&req, SseRead::UntilResponse, &limits).await {
            Ok(ex) => ex,
            Err(e) => {
                out.stop = Some(Stop::NoAnswer {
                    cause: e.cause,
                    page: out.pages + 1,
                    message: e.message,
                });
                break;
            }
        };
        if let Some(cap) = ex.capped {
            let what = if page_cap < b.max_page_bytes {
                format!("listing size cap ({})", mib(b.max_total_bytes))
            } else {
                format!(
                    "page size cap ({}; the {cap} cap of one read)",
                    mib(b.max_page_bytes)
                )
            };
            spent.fetch_add(page_cap, Ordering::Relaxed);
            out.stop = Some(Stop::Cap(what));
            break;
        }
        if let Some(got) = ex.result_id_mismatch(&json!(id)) {
            // Not an answer to this request (transport.post-result-shape, a MUST): the list
            // does not work for a client, which matches answers by id.
            let page = out.pages + 1;
            let answer = format!(
                "{} with id {}, not the request's id {id}: not an answer to the request (a JSON-RPC response MUST echo its request's id)",
                ex.status,
                clip(&got.to_string(), 40)
            );
            if out.pages == 0 {
                out.stop = Some(Stop::Refused {
                    status: ex.status,
                    code: None,
                    summary: answer,
                });
            } else {
                let why = format!("{} page {page} was answered {answer}", kind.method());
                out.cursor_problems.push(Severity::Medium, why.clone());
                out.stop = Some(Stop::Broken(why));
            }
            break;
        }
        let result = match ex.rpc() {
            Some(Rpc::Result { result, .. }) if (200..300).contains(&ex.status) => result,
            other => {
                let code = match other {
                    Some(Rpc::Error { code, .. }) => Some(code),
                    _ => None,
                };
                let page = out.pages + 1;
                if let Some((cause, reason)) = another_reason(&ex, kind.method(), l.token.is_some())
                {
                    out.stop = Some(Stop::Answered {
                        cause,
                        page,
                        reason,
                    });
                } else if out.pages == 0 {
                    out.stop = Some(Stop::Refused {
                        status: ex.status,
                        code,
                        summary: ex.summary(),
                    });
                } else if code.is_none() && !(200..300).contains(&ex.status) {
                    // No JSON-RPC error says the cursor was refused: an answer from
                    // something else than the MCP layer, and the rest was not read.
                    out.stop = Some(Stop::Answered {
                        cause: Cause::OtherReason,
                        page,
                        reason: format!(
                            "{} answered {} without a JSON-RPC error, so nothing says the server refused its cursor",
                            kind.method(),
                            ex.summary()
                        ),
                    });
                } else {
                    let why = format!(
                        "the server refused the cursor it issued (page {page}): {}",
                        ex.summary()
                    );
                    out.cursor_problems.push(Severity::Medium, why.clone());
                    out.stop = Some(Stop::Broken(why));
                }
                break;
            }
        };
        out.pages += 1;
        out.metas.push(PageMeta {
            ttl_ms: result.get("ttlMs").cloned(),
            cache_scope: result.get("cacheScope").cloned(),
            result_type: result.get("resultType").cloned(),
        });
        if session.is_modern() {
            let this = result.get("cacheScope").cloned();
            match &scope {
                None => scope = this,
                Some(s) if Some(s) != this.as_ref() => out.cursor_problems.push(
                    Severity::Medium,
                    format!(
                        "{}: cacheScope {} on page 1 but {} on page {} (every page MUST carry the same)",
                        kind.method(),
                        s,
                        this.map(|v| v.to_string()).unwrap_or_else(|| "absent".into()),
                        out.pages
                    ),
                ),
                _ => {}
            }
        }
        let Some(items) = result.get(kind.field()).and_then(Value::as_array) else {
            out.shape.push(
                Severity::High,
                format!(
                    "result.{} is missing or not an array (page {})",
                    kind.field(),
                    out.pages
                ),
            );
            out.stop = Some(Stop::Broken(format!(
                "result.{} is not an array",
                kind.field()
            )));
            break;
        };
        let mut page_bytes = 0u64;
        for item in items {
            let (len, digest) = item_canonical(item);
            page_bytes += len as u64;
            let index = out.items.len();
            if let Some(audit) = out.audit.as_mut() {
                audit.tool(index, item, len);
            }
            match item.get(kind.key()).and_then(Value::as_str) {
                Some(key) => out.items.push((key.to_string(), digest)),
                None if kind != ListKind::Tools => out.shape.push(
                    Severity::High,
                    format!("{}[{index}] has no string {}", kind.field(), kind.key()),
                ),
                None => {}
            }
        }
        let next = result.get("nextCursor");
        // A page costs its items and its cursor (a hostile server may put its bytes there).
        page_bytes += 64 + next.and_then(Value::as_str).map_or(0, |c| c.len() as u64);
        out.bytes += page_bytes;
        spent.fetch_add(page_bytes, Ordering::Relaxed);
        match next {
            None => break,
            Some(Value::String(next)) => {
                // Cursors are remembered by digest: their count is bounded, their size is not.
                let key = item_digest(&Value::String(next.clone()));
                if seen_cursors.contains(&key) {
                    let why = format!(
                        "{} issued the cursor {} twice (the list never ends)",
                        kind.method(),
                        crate::probe::http::clip(next, 40)
                    );
                    out.cursor_problems.push(Severity::Medium, why.clone());
                    out.stop = Some(Stop::Broken(why));
                    break;
                }
                seen_cursors.push(key);
                out.cursors_followed += 1;
                cursor = Some(next.clone());
            }
            // A JSON null is read as an absent cursor (the end), with a warning.
            Some(Value::Null) => {
                out.cursor_problems.push(
                    Severity::Low,
                    format!(
                        "{}: nextCursor is null, not a string (read as the end; omit it instead)",
                        kind.method()
                    ),
                );
                break;
            }
            // Any other value says the list goes on, with a cursor no client can send back
            // (a cursor is an opaque string, MUST): the rest exists and cannot be read, so the
            // list is read in part, broken by the server.
            Some(other) => {
                let why = format!(
                    "{} page {}: nextCursor is {}, not a string: the list goes on, but no client can ask for the rest (a cursor MUST be an opaque string)",
                    kind.method(),
                    out.pages,
                    clip(&other.to_string(), 40)
                );
                out.cursor_problems.push(Severity::Medium, why.clone());
                out.stop = Some(Stop::Broken(why));
                break;
            }
        }
    }
    out
}
