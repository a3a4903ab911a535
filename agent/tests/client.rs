//! The agent's dial-out client against a mock coordinator (`support::mock`): a real tonic
//! `Fleet` server in the test, over an in-memory transport, driven through channels.
//!
//! `session`: registration, refusal, backoff, `Reconnect` and a coordinator gone silent, in
//! paused time (`start_paused`), so waits are asserted to the millisecond without sleeping.
//! `jobs`: jobs against loopback targets (a closed port, a listener that never answers):
//! results, refusals, cancels, deadlines and the drain on stop. These touch real sockets,
//! whose bytes arrive outside tokio's clock, so they run in real time and assert only what
//! they observe, never a duration.

mod support;

#[path = "client/jobs.rs"]
mod jobs;
#[path = "client/session.rs"]
mod session;
