//! Vantage probe engine: what one vantage point observes of a remote MCP endpoint
//! (Model Context Protocol 2026-07-28, Streamable HTTP).
//!
//! [`Engine::run_job`] resolves the name, connects to every address, checks TLS, refuses to
//! follow redirects, detects the era and runs the transport checks, each request changed in
//! exactly one way from a valid one, and returns a [`model::RegionResult`]. The coordinator
//! links this crate to run an in-process vantage, so one machine and a fleet measure with
//! the same code.

pub mod backoff;
mod boundary;
pub mod catalog;
pub mod client;
pub mod convert;
pub mod credentials;
pub mod dial;
pub mod egress;
pub mod engine;
pub mod health;
pub mod job;
pub mod logging;
pub mod model;
pub mod netclass;
pub mod pem;
pub mod probe;
pub mod progress;
mod protocol;
pub mod region;
pub mod session;
pub mod stack;
mod state;
mod stop;
pub mod surface;
pub mod target;
mod transport_stage;

pub use credentials::Credentials;
pub use engine::{Engine, EngineError, ProbeOptions};
pub use job::{Job, Policy};
pub use target::{Target, TargetError};
