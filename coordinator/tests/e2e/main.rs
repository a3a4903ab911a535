//! End-to-end tests of the probe engine and the `vantage` command, in one test binary.

#![allow(clippy::unwrap_used)]

mod support;

mod auth;
mod cli;
mod dns_tls;
mod fixture_faults;
mod fleet;
mod hostile;
mod lifecycle;
mod operator_errors;
mod peers;
mod procs;
mod prometheus;
mod quickstart;
mod schema;
