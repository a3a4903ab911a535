//! End-to-end tests of the probe engine and the `vantage` command, in one test binary.

#![allow(clippy::unwrap_used)]

mod support;

mod auth;
mod cli;
mod codemap;
mod dns_tls;
mod fixture_faults;
mod fleet;
mod hostile;
mod peers;
mod procs;
mod prometheus;
mod schema;
mod snapshot;
