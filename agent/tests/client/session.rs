//! The session's life in paused time: what the agent registers with, what it does when
//! refused, how long it waits between attempts, and what makes it reconnect.

use std::time::Duration;

use tokio::time::Instant;
use tonic::Status;
use vantage_agent::client::AgentConfig;
use vantage_agent::dial::{KEEPALIVE_INTERVAL, KEEPALIVE_TIMEOUT};

use crate::support::agent::{
    config, registered, Agent, AGENT_ID, BACKOFF_MAX, BACKOFF_MIN, REGION, TOKEN,
};
use crate::support::mock::{Mock, Seen};
use crate::support::transport::ConnId;

/// The timer wheel rounds each sleep up to the next millisecond.
const ROUNDING: Duration = Duration::from_millis(2);

const HEARTBEAT: Duration = Duration::from_millis(2500);

#[track_caller]
fn within(what: &str, waited: Duration, low: Duration, high: Duration) {
    assert!(
        waited >= low && waited <= high + ROUNDING,
        "{what}: waited {waited:?}, outside [{low:?}, {high:?}]"
    );
}

#[tokio::test(start_paused = true)]
async fn registration_carries_region_token_and_version_and_heartbeats_carry_the_load() {
    let mut mock = Mock::start();
    let agent = Agent::start(config(), &mock);
    let attach = mock.attach().await;
    let expected = format!("Bearer {TOKEN}");
    assert_eq!(attach.authorization.as_deref(), Some(expected.as_str()));
    let r = &attach.register;
    assert_eq!(
        (r.region.as_str(), r.agent_id.as_str(), r.version.as_str()),
        (REGION, AGENT_ID, env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(r.max_concurrency, 2);
    assert!(
        r.capabilities.iter().any(|c| c == "probe.v1"),
        "{:?}",
        r.capabilities
    );
    assert!(!agent.ready(), "ready before the coordinator confirmed");
    let session = attach.accept(HEARTBEAT);
    let (first, at) = mock
        .heartbeat(session.conn, "a first heartbeat", |_| true)
        .await;
    assert_eq!((first.in_flight, first.queued, first.dropped), (0, 0, 0));
    assert!(agent.ready());
    assert_eq!(agent.readyz().await, (200, "ready\n".to_string()));
    // At the interval the coordinator asked for.
    let (_, next) = mock
        .heartbeat(session.conn, "a second heartbeat", |_| true)
        .await;
    within("between heartbeats", next - at, HEARTBEAT, HEARTBEAT);
}

#[tokio::test(start_paused = true)]
async fn a_refused_agent_stays_up_unready_and_retries_at_the_slowest_pace() {
    let mut mock = Mock::start();
    let mut agent = Agent::start(config(), &mock);
    let (_, mut last) = mock.dialed().await;
    for status in [
        Status::permission_denied("this token is bound to region `us`, not `eu`"),
        Status::unauthenticated("unknown agent token: the coordinator has no [[agents]] entry with this token (2 configured)"),
        Status::permission_denied("this token is bound to region `us`, not `eu`"),
    ] {
        let message = status.message().to_string();
        mock.attach().await.refuse(status);
        let (_, at) = mock.dialed().await;
        // The ceiling, every time, without jitter: neither growing nor reset by a refusal.
        within("retry after a refusal", at - last, BACKOFF_MAX, BACKOFF_MAX);
        last = at;
        assert!(agent.is_running(), "a refused agent must not exit");
        assert!(!agent.ready());
        assert_eq!(agent.last_error(), format!("refused: {message}"));
        assert_eq!(
            agent.readyz().await,
            (503, format!("not ready: refused: {message}\n"))
        );
    }
    // Told to stop while it waits, it stops at once, without a Leaving (it never registered).
    mock.attach()
        .await
        .refuse(Status::unauthenticated("unknown agent token"));
    let asked = Instant::now();
    agent.stop();
    agent.stopped().await;
    assert_eq!(asked.elapsed(), Duration::ZERO);
}

/// The wait from `last` to `at` is in the upper half of `step`; the step doubles (up to the
/// ceiling). Returns where in the step the wait fell.
#[track_caller]
fn next(last: &mut Instant, at: Instant, step: &mut Duration, what: &str) -> f64 {
    let waited = at - *last;
    within(what, waited, *step / 2, *step);
    *last = at;
    let fraction = waited.as_secs_f64() / step.as_secs_f64();
    *step = (*step * 2).min(BACKOFF_MAX);
    fraction
}

#[tokio::test(start_paused = true)]
async fn reconnects_back_off_jittered_and_exponentially_and_reset_only_after_a_registration() {
    let mut mock = Mock::start();
    let agent = Agent::start(config(), &mock);
    let (_, mut last) = mock.dialed().await;
    let mut step = BACKOFF_MIN;
    let mut fractions = Vec::new();
    // A coordinator that is not up yet: each wait is in the upper half of a doubling step.
    for _ in 0..5 {
        mock.attach()
            .await
            .refuse(Status::unavailable("starting up"));
        let (_, at) = mock.dialed().await;
        fractions.push(next(&mut last, at, &mut step, "after `unavailable`"));
    }
    assert!(
        fractions.windows(2).any(|w| (w[0] - w[1]).abs() > 1e-3),
        "the waits are jittered: {fractions:?}"
    );
    // A stream that opens but never confirms the registration does not reset it either.
    mock.attach().await.accept_unconfirmed().end();
    let (_, at) = mock.dialed().await;
    next(&mut last, at, &mut step, "after an unconfirmed stream");
    assert_eq!(
        agent.last_error(),
        "the coordinator did not confirm the registration"
    );
    // Growth stops at the ceiling.
    mock.attach()
        .await
        .refuse(Status::unavailable("starting up"));
    let (_, at) = mock.dialed().await;
    assert_eq!(step, BACKOFF_MAX);
    next(&mut last, at, &mut step, "at the ceiling");
    // A registration resets it: the stream that follows a registered one waits the first step.
    let session = mock.accept_then_heartbeat(HEARTBEAT).await;
    let ended = Instant::now();
    session.end();
    let (_, at) = mock.dialed().await;
    assert_eq!(agent.last_error(), "the coordinator closed the stream");
    let mut step = BACKOFF_MIN;
    let mut from = ended;
    next(&mut from, at, &mut step, "after a registered stream");
    // ... and it grows again from there.
    mock.attach()
        .await
        .refuse(Status::unavailable("starting up"));
    let (_, again) = mock.dialed().await;
    next(&mut from, again, &mut step, "the step after the reset");
}

/// The agent's next dial comes `low` to `high` after `since`, and its last error is `why`:
/// the new connection.
async fn redialled(
    mock: &mut Mock,
    agent: &Agent,
    since: Instant,
    (low, high): (Duration, Duration),
    why: &str,
) -> ConnId {
    let (conn, at) = mock.dialed().await;
    within(&format!("redial after {why}"), at - since, low, high);
    assert_eq!(agent.last_error(), why);
    conn
}

#[tokio::test(start_paused = true)]
async fn reconnect_makes_the_agent_redial_at_once_without_waiting_for_the_stream_to_close() {
    let (mut mock, agent, session) = registered(config(), HEARTBEAT).await;
    let told = Instant::now();
    // The coordinator says Reconnect and keeps its side of the stream open.
    session.reconnect("rolling update");
    match mock.next_not_heartbeat().await {
        Seen::Closed { conn, .. } => assert_eq!(conn, session.conn),
        other => panic!("the agent did not end its stream after Reconnect: {other:?}"),
    }
    let why = "reconnecting: the coordinator went away (rolling update)";
    let conn = redialled(&mut mock, &agent, told, (BACKOFF_MIN / 2, BACKOFF_MIN), why).await;
    assert_ne!(conn, session.conn);
    let _again = mock.accept_then_heartbeat(HEARTBEAT).await;
    assert!(agent.ready());
    drop(session);
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_fails_after_registration_is_redialled_by_what_the_status_says() {
    let mut mock = Mock::start();
    let agent = Agent::start(config(), &mock);
    // A coordinator that fails the stream (shutting down): the first step again.
    let session = mock.accept_then_heartbeat(HEARTBEAT).await;
    let failed = Instant::now();
    session.fail(Status::unavailable("the coordinator is shutting down"));
    let why = "stream: the coordinator is shutting down";
    redialled(
        &mut mock,
        &agent,
        failed,
        (BACKOFF_MIN / 2, BACKOFF_MIN),
        why,
    )
    .await;
    // A token withdrawn while connected (a reload without its [[agents]] entry): refused,
    // unready, and the slow pace.
    let session = mock.accept_then_heartbeat(HEARTBEAT).await;
    assert!(agent.ready());
    let failed = Instant::now();
    session.fail(Status::permission_denied(
        "this agent's token was withdrawn",
    ));
    let why = "refused: this agent's token was withdrawn";
    redialled(&mut mock, &agent, failed, (BACKOFF_MAX, BACKOFF_MAX), why).await;
    assert!(!agent.ready());
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_gone_silent_is_noticed_by_the_keepalive_and_redialled() {
    let (mut mock, agent, session) = registered(config(), Duration::from_secs(1)).await;
    // Nothing from the coordinator reaches the agent any more; the connection stays open and
    // the agent's own heartbeats still go out (the fleet protocol has no heartbeat
    // acknowledgement: the HTTP/2 keepalive is what hears the silence).
    let stalled = Instant::now();
    session.stall();
    mock.heartbeat(session.conn, "a heartbeat sent into the silence", |_| true)
        .await;
    let (conn, at) = mock.dialed().await;
    assert_ne!(conn, session.conn);
    // Pinged after at most KEEPALIVE_INTERVAL of silence, dropped KEEPALIVE_TIMEOUT later,
    // redialled after the first backoff step.
    within(
        "redial after the coordinator went silent",
        at - stalled,
        KEEPALIVE_TIMEOUT,
        KEEPALIVE_INTERVAL + KEEPALIVE_TIMEOUT + BACKOFF_MIN,
    );
    assert!(!agent.ready());
    let why = agent.last_error();
    assert!(
        why.starts_with("stream: ") && why.ends_with("; the connection to the coordinator broke"),
        "{why}"
    );
    assert!(
        !why.contains("does not look like the coordinator's gRPC port"),
        "a silent coordinator is not a wrong port: {why}"
    );
    let _again = mock.accept_then_heartbeat(HEARTBEAT).await;
    assert!(agent.ready());
}

/// A directory of the test's own, removed even when the test fails.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An agent started with `--token-file` (holding TOKEN) in a directory of its own, and the
/// mock coordinator it dials.
fn with_token_file(name: &str) -> (TempDir, std::path::PathBuf, Mock, Agent) {
    let dir =
        TempDir(std::env::temp_dir().join(format!("vantage-agent-{name}-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("a directory for the token file");
    let file = dir.0.join("agent.token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("the token file");
    let cfg = AgentConfig {
        token_file: Some(file.clone()),
        ..config()
    };
    let mock = Mock::start();
    let agent = Agent::start(cfg, &mock);
    (dir, file, mock, agent)
}

/// `--token-file` is re-read before each attempt: after an in-place rotation (a mounted
/// Secret updated) the agent presents the new token on its next attempt, without a
/// restart; a file gone half-way through a rotation keeps the token read before.
#[tokio::test(start_paused = true)]
async fn a_rotated_token_file_is_presented_on_the_next_attempt() {
    let (_dir, file, mut mock, agent) = with_token_file("rotate");
    let bearer = |t: &str| Some(format!("Bearer {t}"));
    let attach = mock.attach().await;
    assert_eq!(attach.authorization, bearer(TOKEN));
    // Rotated in place; the coordinator, reloaded, refuses the old token.
    let rotated = "agent-token-eu-rotated-9876543210";
    std::fs::write(&file, format!("{rotated}\n")).unwrap();
    attach.refuse(Status::unauthenticated("unknown agent token"));
    let attach = mock.attach().await;
    assert_eq!(attach.authorization, bearer(rotated));
    // The file is gone for a moment: the token read before, not a stop.
    std::fs::remove_file(&file).unwrap();
    attach.refuse(Status::unavailable("restarting"));
    let attach = mock.attach().await;
    assert_eq!(attach.authorization, bearer(rotated));
    assert!(agent.is_running());
    let session = attach.accept(HEARTBEAT);
    mock.heartbeat(session.conn, "a heartbeat", |_| true).await;
    assert!(agent.ready());
}

/// A refused token with `--token-file` holding another one since the refused attempt (a
/// rotation in place that the coordinator's reload got to first): the agent retries at its
/// shortest backoff with the new token, not after `--backoff-max` (red team round 11, nit 5).
/// The file unchanged since that attempt: the slow pace, as for any refusal.
#[tokio::test(start_paused = true)]
async fn a_refusal_after_the_token_file_changed_is_retried_at_the_shortest_backoff() {
    let (_dir, file, mut mock, agent) = with_token_file("rotate-fast");
    let bearer = |t: &str| Some(format!("Bearer {t}"));
    let (_, last) = mock.dialed().await;
    let attach = mock.attach().await;
    assert_eq!(attach.authorization, bearer(TOKEN));
    let rotated = "agent-token-eu-rotated-fast-5678";
    std::fs::write(&file, format!("{rotated}\n")).unwrap();
    attach.refuse(Status::unauthenticated(
        "this agent's token was revoked by a configuration reload",
    ));
    let (_, at) = mock.dialed().await;
    within(
        "retry with a new token in the file",
        at - last,
        BACKOFF_MIN / 2,
        BACKOFF_MIN,
    );
    let attach = mock.attach().await;
    assert_eq!(attach.authorization, bearer(rotated));
    assert_eq!(
        agent.last_error(),
        "refused: this agent's token was revoked by a configuration reload"
    );
    // The new token refused too, and the file unchanged since: the slow pace.
    attach.refuse(Status::unauthenticated("unknown agent token"));
    let (_, again) = mock.dialed().await;
    within(
        "retry with the same file",
        again - at,
        BACKOFF_MAX,
        BACKOFF_MAX,
    );
    assert_eq!(mock.attach().await.authorization, bearer(rotated));
    assert!(agent.is_running() && !agent.ready());
}
