//! The listing stage (spec sections 3.3 to 3.5), after the transport checks: the lists a
//! client reads before it can use a server (`tools/list`, `resources/list`,
//! `resources/templates/list`, `prompts/list`, page by page), read-only, for the
//! capabilities the server advertises; the unadvertised ones probed once (2026-07-28);
//! tools listed twice, side by side, the second reading over connections of its own (in a
//! second session on a 2025-11-25 server); a bogus
//! cursor; and `subscriptions/listen` when a list change can be announced. It never calls
//! a tool, reads a resource or gets a prompt. Bounded by pages, bytes and time (the bounds
//! are in the report). Every request goes through the engine's client and `send`.

mod audit;
mod lint;
pub(crate) mod listen;
mod pages;
mod partial;
mod problems;
mod rules;
mod session;
mod tool_list;
mod tool_rules;

use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use secrecy::SecretString;
use serde_json::{json, Map, Value};

use crate::catalog::CheckId;
use crate::egress::EgressClient;
use crate::engine::Engine;
use crate::model::{Cause, Era};
use crate::probe::http::{exchange, Exchange, ExchangeError, Limits, ProbeRequest, SseRead, Watch};
use crate::probe::verdict::{Recorder, Verdict};
use crate::progress::ProgressStage;
use crate::surface::{ListKind, ListingBounds, Surface};
use crate::target::Target;
use pages::ListRead;
use session::Session;

pub use rules::BOGUS_CURSOR;

/// What the listing needs from the run.
pub(crate) struct Listing<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) client: &'a EgressClient,
    pub(crate) target: &'a Target,
    /// When the listing must have finished (a little before the run's deadline).
    pub(crate) deadline: Instant,
    pub(crate) token: Option<&'a SecretString>,
    pub(crate) bounds: ListingBounds,
}

impl Listing<'_> {
    pub(crate) async fn send(
        &self,
        req: &ProbeRequest,
        sse: SseRead,
    ) -> Result<Exchange, ExchangeError> {
        self.engine
            .send(self.client, self.target, req, self.deadline, sse)
            .await
    }

    /// [`Listing::send`] under the listing's own read caps (pages larger than any other
    /// answer, under bounds of their own).
    pub(crate) async fn send_with(
        &self,
        req: &ProbeRequest,
        sse: SseRead,
        limits: &Limits,
    ) -> Result<Exchange, ExchangeError> {
        let budget = self.engine.budget(self.deadline);
        exchange(self.client, &self.target.url, req, limits, budget, sse)
            .await
            .map(|(ex, _)| ex)
    }

    pub(crate) fn engine_limits(&self) -> Limits {
        self.engine.options().limits
    }
}

/// The time the listing leaves to the rest of the run.
const RESERVE: Duration = Duration::from_millis(100);

/// The listing's own deadline: the run's, less what the end of the run needs.
pub(crate) fn deadline(run_deadline: Instant) -> Instant {
    run_deadline.checked_sub(RESERVE).unwrap_or(run_deadline)
}

/// JSON-RPC ids: each list's pages count up from its base.
fn base_id(kind: ListKind, second: bool) -> i64 {
    let k = match kind {
        ListKind::Tools => 1,
        ListKind::Resources => 2,
        ListKind::ResourceTemplates => 3,
        ListKind::Prompts => 4,
    };
    1000 * k + if second { 5000 } else { 0 }
}

const ABSENT_BASE: i64 = 800;
const LISTEN_ID: i64 = 850;
const CURSOR_ID: i64 = 851;

/// Record every listing check as skipped for `reason`.
pub(crate) fn skip_all(rec: &mut Recorder, reason: &str) {
    for id in rules::checks() {
        rec.record_ms(id, Verdict::skip(reason), 0);
    }
}

/// Why a modern-only server's lists were not read when its `server/discover` declared no
/// capabilities. The lists are due (the era is known), so this is no skip: nothing was
/// observed (`checks.md` 4.1), cause `malformed` (the answer lacked what the listing needs).
const NO_CAPS_MODERN: &str = "not observed: server/discover declared no capabilities (see discover.shape), so the lists this server serves are unknown and none was read; fix the discover result, then check again";

/// Why the 2026-07-28-only listing checks of a dual-era server were not observed when its
/// `server/discover` declared no capabilities (its 2025-11-25 lists were read instead).
const NO_CAPS_DUAL: &str = "not observed: server/discover declared no capabilities (see discover.shape), so the 2026-07-28 lists were not read (the lists initialize advertised were read in a 2025-11-25 session instead); fix the discover result, then check again";

/// Record every listing check as `unknown` (cause `malformed`) for `reason`.
fn unknown_all(rec: &mut Recorder, reason: &str) {
    for id in rules::checks() {
        rec.record_ms(id, Verdict::unknown(Cause::Malformed, reason), 0);
    }
}

/// Run the stage for a server of `era` whose `server/discover` declared `caps` (modern and
/// dual-era servers); record every listing check; return the surface read.
pub(crate) async fn run(
    l: &Listing<'_>,
    era: Era,
    caps: Option<Value>,
    rec: &mut Recorder,
) -> Option<Surface> {
    match era {
        Era::Modern | Era::Dual => match caps.filter(Value::is_object) {
            Some(caps) => Some(modern(l, caps, rec).await),
            // A dual-era server's 2025-11-25 session still says which lists it serves: they
            // are read there, as a legacy-only server's are; what only the 2026-07-28 lists
            // can show was not observed.
            None if era == Era::Dual => legacy(l, rec, Some(NO_CAPS_DUAL)).await,
            None => {
                unknown_all(rec, NO_CAPS_MODERN);
                None
            }
        },
        Era::Legacy => legacy(l, rec, None).await,
        Era::HttpSse => {
            skip_all(
                rec,
                "the deprecated 2024-11-05 HTTP+SSE transport is not listed",
            );
            None
        }
        Era::NotMcp | Era::Unknown => {
            skip_all(rec, "no MCP era was detected, so there is no list to read");
            None
        }
    }
}

fn advertised(caps: &Value) -> Vec<ListKind> {
    ListKind::ALL
        .into_iter()
        .filter(|k| caps.get(k.capability()).is_some_and(|c| !c.is_null()))
        .collect()
}

async fn read_all(
    l: &Listing<'_>,
    session: &Session,
    kinds: &[ListKind],
    spent: &AtomicU64,
) -> Vec<ListRead> {
    futures::future::join_all(
        kinds
            .iter()
            .map(|&k| pages::read(l, session, k, base_id(k, false), spent, true)),
    )
    .await
}

/// The second reading of tools: digests only, under a byte bound of its own.
async fn read_again(l: &Listing<'_>, session: &Session, spent: &AtomicU64) -> ListRead {
    let k = ListKind::Tools;
    pages::read(l, session, k, base_id(k, true), spent, false).await
}

/// The list that paginated first, for the bogus-cursor probe.
fn paginated(reads: &[ListRead]) -> Option<ListKind> {
    reads
        .iter()
        .find(|r| r.cursors_followed > 0)
        .map(|r| r.kind)
}

async fn modern(l: &Listing<'_>, caps: Value, rec: &mut Recorder) -> Surface {
    let t = Instant::now();
    let (spent, spent_again) = (AtomicU64::new(0), AtomicU64::new(0));
    let kinds = advertised(&caps);
    let first = Session::Modern { close: false };
    // The second reading of tools asks for each connection to be closed after its answer,
    // and such a request goes on a connection of its own (EgressClient's client without an
    // idle pool): never one the first reading keeps open. The two readings run side by side.
    let second = Session::Modern { close: true };
    let absent_kinds: Vec<ListKind> = [ListKind::Tools, ListKind::Resources, ListKind::Prompts]
        .into_iter()
        .filter(|k| !kinds.contains(k))
        .collect();
    let listen_filter = listen::filter(&caps);
    let probe_absent = absent_kinds.iter().enumerate().map(|(i, &k)| {
        let req = first
            .request(k.method(), ABSENT_BASE + i as i64, Map::new())
            .with_bearer(l.token);
        async move { (k, l.send(&req, SseRead::UntilResponse).await) }
    });
    // The listen stream is watched for the listen window after its acknowledgement, beside
    // everything else the listing asks (the bogus cursor too): it delays none of it, and
    // the stage ends at the later of the two.
    let window = l.engine.options().listen_window;
    let listen_probe = async {
        match &listen_filter {
            Some(f) => {
                let req = listen::request(LISTEN_ID, f).with_bearer(l.token);
                let watch = Watch {
                    window,
                    by: l.deadline,
                };
                Some(l.send(&req, SseRead::FirstEventThenEnd(watch)).await)
            }
            None => None,
        }
    };
    let again = async {
        if kinds.contains(&ListKind::Tools) {
            Some(read_again(l, &second, &spent_again).await)
        } else {
            None
        }
    };
    let others = async {
        let (reads, tools_b, absent) = tokio::join!(
            read_all(l, &first, &kinds, &spent),
            again,
            futures::future::join_all(probe_absent),
        );
        let bogus = bogus_cursor(l, &first, paginated(&reads)).await;
        (reads, tools_b, absent, bogus)
    };
    let ((reads, tools_b, absent, bogus), listened) = tokio::join!(others, listen_probe);
    let tools_a = reads.iter().find(|r| r.kind == ListKind::Tools);

    let refs: Vec<&ListRead> = reads.iter().collect();
    rec.record(
        CheckId::CapsDiscoverMatchesHandlers,
        rules::caps(&refs, &absent, true, l.token.is_some()),
        t,
    );
    record_tools(rec, tools_a, tools_b.as_ref(), false, t);
    rec.record(CheckId::PaginationCursor, rules::pagination(&refs), t);
    record_bogus(rec, bogus, l.token.is_some(), t);
    rec.record(CheckId::CacheHints, rules::cache_hints(&refs), t);
    rec.record(
        CheckId::ToolsXMcpHeaderValid,
        tool_list::x_mcp_headers(tools_a),
        t,
    );
    match (listen_filter, listened) {
        (Some(f), Some(got)) => {
            let (sse, ack) = listen::evaluate(&got, LISTEN_ID, &f, l.token.is_some(), window);
            rec.record(CheckId::ListenSse, sse, t);
            rec.record(CheckId::ListenAckFirst, ack, t);
        }
        _ => {
            let why = "the server advertises no listChanged or resources.subscribe capability, so there is nothing to listen for";
            rec.record_ms(CheckId::ListenSse, Verdict::skip(why), 0);
            rec.record_ms(CheckId::ListenAckFirst, Verdict::skip(why), 0);
        }
    }
    surface(l, Era::Modern, &reads)
}

/// The listing in a 2025-11-25 session, on the capabilities `initialize` advertised: a
/// legacy-only server's, or (`modern_unread` says why) a dual-era server's whose
/// `server/discover` declared none, whose 2026-07-28-only checks are then `unknown`.
async fn legacy(
    l: &Listing<'_>,
    rec: &mut Recorder,
    modern_unread: Option<&str>,
) -> Option<Surface> {
    let t = Instant::now();
    let (session, caps) = match session::open_legacy(l, 900).await {
        Ok(s) => s,
        Err(e) => {
            for id in rules::checks() {
                rec.record(
                    id,
                    Verdict::unknown(
                        e.cause,
                        format!("the listing session could not be opened: {}", e.message),
                    ),
                    t,
                );
            }
            return None;
        }
    };
    let (spent, spent_again) = (AtomicU64::new(0), AtomicU64::new(0));
    let kinds = advertised(&caps);
    // The second listing of tools runs in a session of its own, beside the first.
    let again = async {
        if !kinds.contains(&ListKind::Tools) {
            return None;
        }
        Some(match session::open_legacy(l, 901).await {
            Ok((other, _)) => {
                let b = read_again(l, &other, &spent_again).await;
                session::close_legacy(l, &other).await;
                b
            }
            // The second listing has no evidence: the rules that compare two say why.
            Err(e) => ListRead::unread(
                ListKind::Tools,
                pages::Stop::NoAnswer {
                    cause: e.cause,
                    page: 1,
                    message: format!("a second session could not be opened: {}", e.message),
                },
            ),
        })
    };
    let (reads, tools_b) = tokio::join!(read_all(l, &session, &kinds, &spent), again);
    let tools_a = reads.iter().find(|r| r.kind == ListKind::Tools);
    let bogus = bogus_cursor(l, &session, paginated(&reads)).await;
    session::close_legacy(l, &session).await;

    let refs: Vec<&ListRead> = reads.iter().collect();
    // What the server's discover declares is the rule of caps.discover-matches-handlers: a
    // discover that declared nothing leaves it unobserved, whatever initialize advertised.
    if modern_unread.is_none() {
        rec.record(
            CheckId::CapsDiscoverMatchesHandlers,
            rules::caps(&refs, &[], false, l.token.is_some()),
            t,
        );
    }
    record_tools(rec, tools_a, tools_b.as_ref(), true, t);
    rec.record(CheckId::PaginationCursor, rules::pagination(&refs), t);
    record_bogus(rec, bogus, l.token.is_some(), t);
    let modern_only = "a 2026-07-28 rule, and the server speaks 2025-11-25 only";
    for id in [
        CheckId::CapsDiscoverMatchesHandlers,
        CheckId::CacheHints,
        CheckId::ToolsXMcpHeaderValid,
        CheckId::ListenSse,
        CheckId::ListenAckFirst,
    ] {
        match modern_unread {
            Some(why) => rec.record_ms(id, Verdict::unknown(Cause::Malformed, why), 0),
            None if id == CheckId::CapsDiscoverMatchesHandlers => {}
            None => rec.record_ms(id, Verdict::skip(modern_only), 0),
        }
    }
    Some(surface(l, Era::Legacy, &reads))
}

fn record_tools(
    rec: &mut Recorder,
    a: Option<&ListRead>,
    b: Option<&ListRead>,
    legacy: bool,
    t: Instant,
) {
    rec.record(
        CheckId::ToolsListShape,
        tool_list::list_shape(a, !legacy),
        t,
    );
    rec.record(CheckId::ToolsNameFormat, tool_list::name_format(a), t);
    rec.record(CheckId::ToolsDeterministicOrder, tool_list::order(a, b), t);
    rec.record(
        CheckId::ToolsNoPerConnectionVariance,
        tool_list::variance(a, b, legacy),
        t,
    );
    rec.record(CheckId::ToolsSchemaValid, lint::schema_verdict(a), t);
    rec.record(
        CheckId::ToolsInputConstrained,
        lint::constrained_verdict(a),
        t,
    );
    rec.record(CheckId::ToolsSurfaceSize, lint::size_verdict(a), t);
}

type Bogus = Option<(ListKind, Result<Exchange, ExchangeError>)>;

/// A list request with a cursor the server never issued, on a list that paginates.
async fn bogus_cursor(l: &Listing<'_>, session: &Session, kind: Option<ListKind>) -> Bogus {
    let kind = kind?;
    let params = Map::from_iter([("cursor".to_string(), json!(BOGUS_CURSOR))]);
    let req = session
        .request(kind.method(), CURSOR_ID, params)
        .with_bearer(l.token);
    Some((kind, l.send(&req, SseRead::UntilResponse).await))
}

fn record_bogus(rec: &mut Recorder, bogus: Bogus, token: bool, t: Instant) {
    let v = match &bogus {
        Some((kind, got)) => rules::invalid_cursor(kind.method(), got, token),
        None => Verdict::skip("no list was paginated, so the server has no cursors to validate"),
    };
    rec.record(CheckId::PaginationInvalidCursor, v, t);
}

impl Engine {
    /// The stage, as the protocol stages call it after the transport checks.
    pub(crate) async fn listing_stage(
        &self,
        r: &mut crate::protocol::Run<'_>,
        era: Era,
        caps: Option<Value>,
    ) {
        let Some(bounds) = self.options().listing else {
            skip_all(r.rec, "listing is off for this vantage");
            return;
        };
        r.st.progress.stage(ProgressStage::Listing);
        let l = Listing {
            engine: self,
            client: r.client,
            target: r.target,
            deadline: deadline(r.deadline),
            token: self.options().credentials.token.as_ref(),
            bounds,
        };
        r.st.surface = run(&l, era, caps, r.rec).await;
    }
}

fn surface(l: &Listing<'_>, era: Era, reads: &[ListRead]) -> Surface {
    Surface {
        era,
        bounds: l.bounds,
        lists: reads
            .iter()
            .map(|r| r.surface(l.bounds.max_items_reported))
            .collect(),
    }
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod egress_tests;

#[cfg(test)]
#[path = "id_tests.rs"]
mod id_tests;

#[cfg(test)]
#[path = "cursor_tests.rs"]
mod cursor_tests;

#[cfg(test)]
#[path = "name_tests.rs"]
mod name_tests;

#[cfg(test)]
#[path = "test_server.rs"]
mod test_server;
