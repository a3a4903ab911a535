//! Helpers of the agent client's tests (`tests/client.rs`): a mock coordinator fed by
//! channels over an in-memory transport, loopback targets, and the agent under test.

pub mod agent;
pub mod mock;
pub mod target;
pub mod transport;
