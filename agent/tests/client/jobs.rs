//! Jobs on a registered agent, in real time against loopback targets: a result comes back,
//! an unusable job is refused with its reason, a cancel or the end of a session stops a
//! running job and gives its slot and its count back, a queued job gives up at its
//! deadline, and a stop says `Leaving` and drains.

use std::time::Duration;

use vantage_agent::client::AgentConfig;
use vantage_proto::v1 as pb;

use crate::support::agent::{config, registered, Agent, REGION};
use crate::support::mock::{Mock, Seen, Session};
use crate::support::target::{closed_port, job, Silent};

const HEARTBEAT: Duration = Duration::from_millis(100);
/// Longer than any test waits: a job with it ends only by a cancel, a drain or a session's end.
const FOREVER: Duration = Duration::from_secs(600);

/// An agent that runs one job at a time.
fn one_slot() -> AgentConfig {
    AgentConfig {
        max_concurrency: 1,
        ..config()
    }
}

async fn load(mock: &mut Mock, session: &Session, in_flight: u32, queued: u32) {
    mock.heartbeat(
        session.conn,
        &format!("a heartbeat with {in_flight} running and {queued} queued"),
        |hb| hb.in_flight == in_flight && hb.queued == queued,
    )
    .await;
}

/// A registered agent with `cfg` running one job, `running`, on a silent target: it has
/// sent its request, and a heartbeat counts it.
async fn running(cfg: AgentConfig) -> (Mock, Agent, Session, Silent) {
    let (mut mock, agent, session) = registered(cfg, HEARTBEAT).await;
    let mut silent = Silent::start().await;
    session.job(job("running", &silent.url, FOREVER));
    silent.requested().await;
    load(&mut mock, &session, 1, 0).await;
    (mock, agent, session, silent)
}

/// [`running`], then stop: the first thing the coordinator sees is `Leaving`, on this
/// stream.
async fn stop_with_a_running_job(cfg: AgentConfig) -> (Mock, Agent, Session, Silent) {
    let (mut mock, agent, session, silent) = running(cfg).await;
    agent.stop();
    match mock.next_not_heartbeat().await {
        Seen::Leaving { conn, leaving } => {
            assert_eq!(conn, session.conn);
            assert_eq!(leaving.reason, "the agent is shutting down");
        }
        other => panic!("expected Leaving first, saw {other:?}"),
    }
    (mock, agent, session, silent)
}

/// The next thing (heartbeats aside) is the agent closing `session`'s stream, cleanly.
async fn closed_cleanly(mock: &mut Mock, session: &Session) {
    match mock.next_not_heartbeat().await {
        Seen::Closed { conn, status } => {
            assert_eq!(conn, session.conn);
            assert!(status.is_none(), "closed cleanly: {status:?}");
        }
        other => panic!("expected the agent to close its stream, saw {other:?}"),
    }
}

fn region(result: &pb::JobResult) -> &pb::RegionResult {
    result.region.as_ref().expect("a region section")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_runs_and_its_result_comes_back() {
    let (mut mock, _agent, session) = registered(config(), HEARTBEAT).await;
    session.job(job("j1", &closed_port().await, Duration::from_secs(30)));
    let result = mock.result().await;
    assert_eq!(result.job_id, "j1");
    assert_eq!(result.refused, "");
    let r = region(&result);
    assert_eq!((r.region.as_str(), r.status.as_str()), (REGION, "complete"));
    let connect = r
        .checks
        .iter()
        .find(|c| c.id == "net.connect")
        .unwrap_or_else(|| panic!("no connect check in {:?}", r.checks));
    assert_eq!(
        (connect.outcome.as_str(), connect.cause.as_deref()),
        ("fail", Some("refused")),
        "{connect:?}"
    );
    load(&mut mock, &session, 0, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_does_not_convert_is_refused_with_its_reason() {
    let (mut mock, agent, session) = registered(config(), HEARTBEAT).await;
    let mut prefix = job("j1", &closed_port().await, Duration::from_secs(30));
    prefix.assume_global = vec!["not-a-prefix".into()];
    session.job(prefix);
    session.job(job("j2", "ftp://127.0.0.1/mcp", Duration::from_secs(30)));
    // Each job runs in its own task: the results come in either order.
    let mut results = [mock.result().await, mock.result().await];
    results.sort_by(|a, b| a.job_id.cmp(&b.job_id));
    for (result, (id, reason)) in results.iter().zip([
        ("j1", "assume_global: `not-a-prefix` is not a CIDR prefix"),
        ("j2", "target `ftp://127.0.0.1/mcp`"),
    ]) {
        assert_eq!(result.job_id, id);
        assert!(result.refused.contains(reason), "{}", result.refused);
        let r = region(result);
        assert_eq!((r.region.as_str(), r.status.as_str()), (REGION, "error"));
        assert!(r.checks.is_empty(), "nothing ran: {:?}", r.checks);
    }
    assert_eq!(
        agent
            .state
            .jobs_run
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_running_job_and_gives_its_slot_and_count_back() {
    let (mut mock, _agent, session, mut silent) = running(one_slot()).await;
    session.cancel("running");
    load(&mut mock, &session, 0, 0).await;
    silent.all_closed().await;
    // The one slot is free again, and the cancelled job never answers.
    session.job(job("next", &closed_port().await, Duration::from_secs(30)));
    let result = mock.result().await;
    assert_eq!(result.job_id, "next");
    assert_eq!(region(&result).status, "complete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_job_leaves_the_queue_on_cancel_or_at_its_deadline() {
    let (mut mock, _agent, session, silent) = running(one_slot()).await;
    session.job(job("cancelled", &silent.url, FOREVER));
    load(&mut mock, &session, 1, 1).await;
    session.cancel("cancelled");
    load(&mut mock, &session, 1, 0).await;
    // A job that cannot get a slot before its deadline ends as `timeout`, having run nothing.
    session.job(job("late", &silent.url, Duration::from_millis(300)));
    let result = mock.result().await;
    assert_eq!(result.job_id, "late");
    assert_eq!(result.refused, "");
    let r = region(&result);
    assert_eq!((r.region.as_str(), r.status.as_str()), (REGION, "timeout"));
    assert!(r.checks.is_empty(), "{:?}", r.checks);
    load(&mut mock, &session, 1, 0).await;
    session.cancel("running");
    load(&mut mock, &session, 0, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_job_is_cut_off_at_its_deadline() {
    let (mut mock, _agent, session) = registered(config(), HEARTBEAT).await;
    let mut silent = Silent::start().await;
    session.job(job("j1", &silent.url, Duration::from_secs(1)));
    let result = mock.result().await;
    assert_eq!(result.job_id, "j1");
    let r = region(&result);
    assert_eq!(r.region, REGION);
    // Cut off by the overall deadline (`partial`), or by the exchange's own timeout, which
    // never outlives the deadline (the stages after it skipped): either way no check passes
    // but the connection's, the one thing seen to work.
    assert!(
        matches!(r.status.as_str(), "partial" | "complete"),
        "{}",
        r.status
    );
    let passed: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| c.outcome == "pass")
        .map(|c| c.id.as_str())
        .collect();
    assert!(
        passed.iter().all(|id| *id == "net.connect"),
        "{:?}",
        r.checks
    );
    if !passed.is_empty() {
        // It connected: every connection it opened is closed again.
        silent.all_closed().await;
    }
    load(&mut mock, &session, 0, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_a_session_stops_its_jobs_and_gives_their_count_back() {
    let (mut mock, _agent, session, mut silent) = running(config()).await;
    session.reconnect("rolling update");
    let again = mock.accept(HEARTBEAT).await;
    silent.all_closed().await;
    // The job died with its session: the new stream's heartbeats count nothing running.
    let (hb, _) = mock.heartbeat(again.conn, "a heartbeat", |_| true).await;
    assert_eq!((hb.in_flight, hb.queued), (0, 0));
    drop(session);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_says_leaving_lets_a_running_job_finish_and_closes() {
    let (mut mock, mut agent, session, silent) = stop_with_a_running_job(config()).await;
    // The job can end only now (its target closes the connections), within the drain.
    silent.release();
    let result = mock.result().await;
    assert_eq!(result.job_id, "running");
    assert_eq!(region(&result).region, REGION);
    closed_cleanly(&mut mock, &session).await;
    // The coordinator closes its side in turn; the agent is done.
    session.end();
    agent.stopped().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_still_running_when_the_drain_ends_is_abandoned() {
    let cfg = AgentConfig {
        drain_timeout: Duration::from_millis(300),
        ..config()
    };
    let (mut mock, mut agent, session, mut silent) = stop_with_a_running_job(cfg).await;
    // No result: the stream closes with the job still running, and the job is stopped.
    closed_cleanly(&mut mock, &session).await;
    session.end();
    agent.stopped().await;
    silent.all_closed().await;
    let in_flight = agent
        .state
        .in_flight
        .load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(in_flight, 0);
}

/// Red team round 12 (D3): an agent that refused every job still said only "ready" and
/// `vantage_agent_jobs_total 0`. Each refusal is counted (`vantage_agent_jobs_refused_total`);
/// a job that ran is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_jobs_are_counted() {
    let (mut mock, agent, session) = registered(config(), HEARTBEAT).await;
    session.job(job("j1", "ftp://127.0.0.1/mcp", Duration::from_secs(30)));
    session.job(job("j2", "ftp://127.0.0.2/mcp", Duration::from_secs(30)));
    session.job(job("j3", &closed_port().await, Duration::from_secs(30)));
    let mut refused = 0;
    for _ in 0..3 {
        refused += usize::from(!mock.result().await.refused.is_empty());
    }
    assert_eq!(refused, 2);
    let count = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(count(&agent.state.jobs_refused), 2);
    assert_eq!(count(&agent.state.jobs_run), 1);
}

/// Red team round 12 (N2): a job that waited for a slot behind a busy agent's --concurrency
/// ran with what was left of its deadline, and the checks the deadline cut said only "the
/// overall deadline (2.149258905 s) ran out first". They name the wait and the flag now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_cut_by_its_deadline_after_waiting_for_a_slot_names_the_wait() {
    let (mut mock, _agent, session, silent) = running(one_slot()).await;
    session.job(job("queued", &silent.url, Duration::from_secs(4)));
    load(&mut mock, &session, 1, 1).await;
    // At least a quarter of its deadline in the queue (the note's threshold is a tenth).
    tokio::time::sleep(Duration::from_secs(1)).await;
    session.cancel("running");
    let result = mock.result().await;
    assert_eq!(result.job_id, "queued");
    let r = region(&result);
    assert_eq!(r.status, "partial", "{:?}", r.checks);
    let cut: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| c.cause.as_deref() == Some("deadline"))
        .map(|c| c.observed.as_str())
        .collect();
    assert!(!cut.is_empty(), "{:?}", r.checks);
    for observed in cut {
        assert!(
            observed.starts_with("not run: the overall deadline ran out first (")
                && observed.contains("s for a slot behind this agent's --concurrency, every slot busy: raise the agent's --concurrency")
                && observed.contains("of the job's 4 s after it waited "),
            "{observed}"
        );
    }
}
