//! Hostile targets cost bounded time and memory: each check ends by its deadline with a
//! failure or a named bound, and reads stop at the engine's byte caps (asserted through what
//! was observed, not through wall time).

use vantage_agent::catalog::CheckId;
use vantage_agent::model::{Cause, CheckResult, Outcome, RegionResult, RegionStatus, Severity};
use vantage_agent::surface::{ListKind, ListSurface};
use vantage_fixture::{Hostile, HostileServer};

use crate::run::{assert_problems, assert_seen, check, options, problems, run};

use Outcome::{Fail, Warn};
use Severity::{High, Low, Medium};

/// Run the engine on a hostile server of `kind`.
async fn run_on(kind: Hostile) -> RegionResult {
    let server = HostileServer::start(kind).await.unwrap();
    run(&server.url()).await
}

/// [`run_on`]: the result, and its `era.detect`.
async fn era_of(kind: Hostile) -> (RegionResult, CheckResult) {
    let region = run_on(kind).await;
    let era = check(&region, CheckId::EraDetect);
    (region, era)
}

/// A target that accepts and never answers ends by the per-exchange timeout. The timeout is
/// this vantage's own wait running out, no evidence that the target is not MCP
/// (`checks.md` 4.1 (c), 4): `era.detect` is `unknown` for it, and nothing fails.
#[tokio::test]
async fn a_target_that_never_answers_times_out() {
    let (region, era) = era_of(Hostile::NeverAnswers).await;
    assert_eq!(region.status, RegionStatus::Complete);
    assert_problems(&region, &[]);
    assert_seen(
        &era,
        (era.outcome, era.cause),
        (Outcome::Unknown, Some(Cause::Timeout)),
        "server/discover: accepted the connection, never answered within",
    );
}

/// A body the vantage stopped reading at its own cap was not observed whole: `era.detect`
/// is `unknown` for the cap (rt6 #4), never "not MCP"; the evidence names the cap.
#[track_caller]
fn unknown_for_the_cap(region: &RegionResult, caps: &[&str]) {
    let era = check(region, CheckId::EraDetect);
    crate::shared::assert_cut_by_a_cap(&era, "era.detect");
    assert!(
        caps.iter().any(|c| era.observed.contains(c)),
        "{}",
        era.observed
    );
    assert_eq!(problems(region), vec![]);
}

/// JSON nested deeper than the parser's 128 levels (valid JSON: other clients parse it)
/// was not seen whole: the vantage's own bound, `unknown` for the cap (rt15 #13), never
/// "not MCP".
#[tokio::test]
async fn json_deeper_than_the_parser_goes_is_the_vantages_cap() {
    let region = run_on(Hostile::DeepJson).await;
    let era = check(&region, CheckId::EraDetect);
    assert!(!era.observed.contains("not MCP"), "{}", era.observed);
    unknown_for_the_cap(&region, &["JSON parser's 128-level nesting cap"]);
}

#[tokio::test]
async fn an_endless_body_stops_at_the_body_cap() {
    unknown_for_the_cap(&run_on(Hostile::EndlessBody).await, &["body size cap"]);
}

#[tokio::test]
async fn a_gigabyte_content_length_is_never_trusted() {
    unknown_for_the_cap(
        &run_on(Hostile::HugeContentLength).await,
        &["body size cap"],
    );
}

#[tokio::test]
async fn an_endless_event_stream_stops_at_a_stream_cap() {
    unknown_for_the_cap(
        &run_on(Hostile::EndlessSse).await,
        &["stream size cap", "SSE event count cap"],
    );
}

/// hyper's own bounds on a chunked body's framing (16 KiB of chunk extensions, a trailer
/// section over 16 KiB or 100 fields) stop the read: the vantage's cap (rt15 #10), never
/// "body cut short: … the connection ended" (the target never closed) and never blocked.
/// A finite, complete, valid body with a 20,000-byte extension is refused by hyper alone:
/// the same cap, not the target's fault.
#[tokio::test]
async fn the_clients_chunk_extension_and_trailer_bounds_are_the_vantages_caps() {
    for (kind, cap) in [
        (Hostile::EndlessChunkExtension, "16 KiB chunk-extension cap"),
        (Hostile::LongChunkExtension, "16 KiB chunk-extension cap"),
        (
            Hostile::EndlessTrailers,
            "trailer (16 KiB or 100 fields) cap",
        ),
    ] {
        let region = run_on(kind).await;
        let era = check(&region, CheckId::EraDetect);
        assert!(
            !era.observed.contains("cut short"),
            "{kind:?}: {}",
            era.observed
        );
        unknown_for_the_cap(&region, &[cap]);
    }
}

#[tokio::test]
async fn a_redirect_to_itself_is_not_followed() {
    let region = run_on(Hostile::RedirectSelf).await;
    assert_problems(
        &region,
        &[(
            CheckId::RedirectNone,
            Fail,
            Some(Medium),
            Some(Cause::SameHost),
        )],
    );
}

/// Every other hostile behaviour ends by its deadline with `era.detect` failing, high, and
/// an observation that names what happened; nothing panics. A body this vantage did not
/// observe is no evidence either way: one the per-exchange timeout cut (a slow drip) is
/// `unknown` for the timeout, and a gzip bomb to a client that accepts identity only is
/// never decoded (`unknown`, another reason); never "not MCP", and nothing fails.
#[tokio::test]
async fn every_hostile_behaviour_ends_with_a_failure() {
    for (kind, cause, needle) in [
        (
            Hostile::SlowDrip,
            Cause::Timeout,
            "but the body did not finish within",
        ),
        (
            Hostile::GzipBomb,
            Cause::OtherReason,
            "Content-Encoding gzip",
        ),
    ] {
        let (region, era) = era_of(kind).await;
        assert_seen(
            &era,
            (era.outcome, era.cause),
            (Outcome::Unknown, Some(cause)),
            needle,
        );
        assert_problems(&region, &[]);
    }
    let table: &[(Hostile, &[&str])] = &[
        (Hostile::LyingLength, &["body cut short"]),
        (Hostile::ResetMidBody, &["body cut short"]),
        (Hostile::InvalidUtf8, &["not MCP"]),
        (Hostile::NotJson, &["Service Unavailable"]),
    ];
    for &(kind, needles) in table {
        let (_, era) = era_of(kind).await;
        assert!(era.outcome.is_problem(), "{kind:?}: {era:?}");
        assert!(era.severity >= Some(High), "{kind:?}: {era:?}");
        assert!(
            needles.iter().any(|n| era.observed.contains(n)),
            "{kind:?}: observed {}",
            era.observed
        );
    }
    // 1 MiB of headers: the vantage's own header cap stopped the read (rt6 #4's nit).
    unknown_for_the_cap(
        &run_on(Hostile::HugeHeaders).await,
        &["headers over 408 KiB"],
    );
}

/// A handshake this vantage's own per-exchange timeout cut is no evidence about the
/// target's TLS (rt6 #1): `tls.handshake` `unknown` for the timeout, naming
/// --check-timeout, and the checks after it `unknown` too (due, unobserved), never a
/// failure.
#[tokio::test]
async fn a_tls_handshake_that_never_completes_times_out() {
    let server = HostileServer::start(Hostile::TlsNeverCompletes)
        .await
        .unwrap();
    let region = run(&server.https_url()).await;
    assert_eq!(problems(&region), vec![]);
    let hs = check(&region, CheckId::TlsHandshake);
    assert_seen(
        &hs,
        (hs.outcome, hs.severity, hs.cause),
        (Outcome::Unknown, None, Some(Cause::Timeout)),
        "the handshake did not complete within 1.5 s, this vantage's per-exchange timeout (--check-timeout)",
    );
    for id in [CheckId::TlsExpiry, CheckId::EraDetect] {
        let c = check(&region, id);
        assert_eq!(
            (c.outcome, c.cause),
            (Outcome::Unknown, Some(Cause::Timeout)),
            "{id}: {}",
            c.observed
        );
    }
}

/// Peak memory of this process while 100 hostile checks run at once, from the kernel's own
/// accounting (VmHWM): bounded by the read caps, not by what the targets send.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_hostile_checks_at_once_stay_within_bounded_memory() {
    fn vm_hwm_kib() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
            .unwrap()
    }
    let kinds = [
        Hostile::EndlessBody,
        Hostile::EndlessSse,
        Hostile::HugeContentLength,
        Hostile::GzipBomb,
        Hostile::DeepJson,
        Hostile::HugeHeaders,
        Hostile::NeverAnswers,
        Hostile::SlowDrip,
        Hostile::NotJson,
        Hostile::RedirectSelf,
        Hostile::EndlessPages,
        Hostile::HugeToolList,
    ];
    let mut servers = Vec::new();
    for k in kinds {
        servers.push(HostileServer::start(k).await.unwrap());
    }
    let before = vm_hwm_kib();
    let engine = vantage_agent::Engine::new(options()).unwrap();
    let targets: Vec<vantage_agent::Target> = (0..100)
        .map(|i| vantage_agent::Target::parse(&servers[i % servers.len()].url()).unwrap())
        .collect();
    let results = futures::future::join_all(targets.iter().map(|t| engine.run(t))).await;
    let after = vm_hwm_kib();
    let grown_mib = after.saturating_sub(before) as f64 / 1024.0;
    eprintln!(
        "100 concurrent hostile checks: peak RSS {before} KiB -> {after} KiB (+{grown_mib:.1} MiB)"
    );
    assert_eq!(results.len(), 100);
    // Each kind's own verdict is the tests above; here, with 100 runs sharing two cores, a
    // slow target may meet the run's overall deadline before its own timeout: that is a
    // named bound too (`unknown`, cause `deadline`), never a pass; and a 100 MiB list read
    // by 100 runs on a loaded machine may run out its per-exchange timeout before its byte
    // cap (cause `timeout`, a bound as well); a gzip bomb to a client that accepts identity
    // only is not observed at all (`unknown`, cause `other-reason`). Never a pass.
    for (i, r) in results.iter().enumerate() {
        assert!(
            r.checks.iter().any(|c| c.outcome == Fail
                || (c.outcome != Outcome::Pass
                    && matches!(
                        c.cause,
                        Some(
                            Cause::SizeCap
                                | Cause::Deadline
                                | Cause::Timeout
                                | Cause::OtherReason
                        )
                    ))),
            "{:?}: a hostile target must fail something, or hit a named cap, a timeout or the deadline: {:#?}",
            kinds[i % kinds.len()],
            r.checks
                .iter()
                .filter(|c| c.outcome != Outcome::Pass)
                .map(|c| (c.id, c.outcome, c.cause, &c.observed))
                .collect::<Vec<_>>()
        );
    }
    // 100 checks x a few exchanges x the 256 KiB body cap, and the listing's 4 MiB page for
    // the few huge tool lists among them, is the worst case; a 1 GiB body, an endless
    // stream, a gzip bomb, 10,000 pages or a 100 MiB tool list must not show up here.
    assert!(grown_mib < 192.0, "peak memory grew by {grown_mib:.1} MiB");
}

/// A rule stopped at a bound: a low warning, or no evidence either way.
const WARN_LOW: (Outcome, Option<Severity>) = (Warn, Some(Low));
const UNKNOWN: (Outcome, Option<Severity>) = (Outcome::Unknown, None);

/// `id` stopped at a size cap: `want` (outcome, severity), naming the cap (`needle`).
#[track_caller]
fn assert_at_cap(
    region: &RegionResult,
    id: CheckId,
    want: (Outcome, Option<Severity>),
    needle: &str,
) {
    let c = check(region, id);
    let (outcome, severity) = want;
    let want = (outcome, severity, Some(Cause::SizeCap));
    assert_seen(&c, (c.outcome, c.severity, c.cause), want, needle);
}

/// What the listing read of `kind`.
fn list_read(region: &RegionResult, kind: ListKind) -> ListSurface {
    let surface = region.surface.as_ref().expect("a surface in the result");
    surface
        .list(kind)
        .expect("the list is in the result")
        .clone()
}

/// A valid MCP server whose tools/list never ends (10,000 pages) or is one 100 MiB page: the
/// listing stops at its bounds, names the bound, and never passes what it did not read (a
/// part is never a pass).
#[tokio::test]
async fn hostile_surfaces_stop_at_the_listing_bounds() {
    let region = run_on(Hostile::EndlessPages).await;
    let page_cap = "page cap (100 pages)";
    assert_at_cap(&region, CheckId::PaginationCursor, WARN_LOW, page_cap);
    let tools = list_read(&region, ListKind::Tools);
    assert_eq!((tools.pages, tools.complete), (100, false));
    assert!(tools.stopped.as_deref().unwrap_or("").contains("page cap"));
    for id in [
        CheckId::ToolsListShape,
        CheckId::ToolsNameFormat,
        CheckId::ToolsSchemaValid,
    ] {
        assert_at_cap(&region, id, UNKNOWN, page_cap);
    }

    let region = run_on(Hostile::HugeToolList).await;
    let size_cap = "page size cap (4 MiB";
    assert_at_cap(&region, CheckId::ToolsSurfaceSize, WARN_LOW, size_cap);
    assert_at_cap(&region, CheckId::ToolsListShape, UNKNOWN, size_cap);
    let bounds = region.surface.as_ref().unwrap().bounds;
    assert_eq!(
        (bounds.max_pages, bounds.max_page_bytes),
        (100, 4 * 1024 * 1024),
        "the bounds are in the result"
    );
}

/// resources/list or prompts/list cut at the page bound: the rules that needed the whole
/// list are `unknown` (size-cap) naming the bound; the tool rules, whose list was read whole,
/// still pass.
#[tokio::test]
async fn endless_resource_and_prompt_lists_leave_their_rules_unknown() {
    for (kind, list) in [
        (Hostile::EndlessResourcePages, ListKind::Resources),
        (Hostile::EndlessPromptPages, ListKind::Prompts),
    ] {
        let region = run_on(kind).await;
        let read = list_read(&region, list);
        assert_eq!((read.pages, read.complete), (100, false), "{kind:?}");
        let page_cap = "page cap (100 pages)";
        for id in [CheckId::CapsDiscoverMatchesHandlers, CheckId::CacheHints] {
            assert_at_cap(&region, id, UNKNOWN, page_cap);
        }
        assert_at_cap(&region, CheckId::PaginationCursor, WARN_LOW, page_cap);
        assert_eq!(
            check(&region, CheckId::ToolsListShape).outcome,
            Outcome::Pass,
            "{kind:?}: the tool list was read whole"
        );
    }
}

/// A protected endpoint (401, Bearer, `resource_metadata` on the same server) whose
/// metadata URL answers 200 application/json with a body that never ends (HTTP/1.0 style,
/// ended only by a close that never comes).
async fn endless_metadata_server() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                if head.starts_with(b"GET /meta ") {
                    let _ = s
                        .write_all(b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{\"resource\":\"")
                        .await;
                    let block = vec![b'a'; 64 * 1024];
                    while s.write_all(&block).await.is_ok() {}
                } else {
                    let answer = format!(
                        "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer resource_metadata=\"http://{addr}/meta\"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    );
                    let _ = s.write_all(answer.as_bytes()).await;
                }
            });
        }
    });
    (addr, task)
}

/// An endless protected-resource-metadata body stops at the vantage's body size cap: the
/// document was not seen whole, so `auth.prm` is `unknown` for the cap (rt15 #10), never
/// "no protected resource metadata" (high): that is said only when every URL was observed.
#[tokio::test]
async fn an_endless_metadata_body_is_not_observed_metadata() {
    let (addr, task) = endless_metadata_server().await;
    let region = run(&format!("http://{addr}/mcp")).await;
    task.abort();
    assert!(region.protected, "{region:?}");
    let prm = check(&region, CheckId::AuthPrm);
    assert_eq!(
        (prm.outcome, prm.severity, prm.cause),
        (Outcome::Unknown, None, Some(Cause::SizeCap)),
        "{}",
        prm.observed
    );
    assert!(prm.observed.contains("body size cap"), "{}", prm.observed);
    assert!(
        !prm.observed.contains("no protected resource metadata"),
        "{}",
        prm.observed
    );
}
