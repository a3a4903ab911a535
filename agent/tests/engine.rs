//! The probe engine's own observations, with no coordinator and no process: an [`Engine`]
//! runs a [`Job`] against the in-repo fixture (`vantage_fixture`) with its faults, its
//! authorization server, hostile targets, and the lab (a DNS server and a TLS front on
//! loopback), and each test asserts per check id the outcome, severity, cause and what was
//! observed (the agent's `RegionResult`).
//!
//! What the coordinator makes of these results (findings, the decision, exit codes, reports)
//! is tested in `coordinator/tests/e2e` (`fixture_faults`, `auth`, `dns_tls`, `hostile`).
//!
//! [`Engine`]: vantage_agent::Engine
//! [`Job`]: vantage_agent::Job

// Helpers outside `#[test]` functions (the lab, the fixtures) unwrap too: a test's setup.
#![allow(clippy::unwrap_used)]

// What these tests share with `coordinator/tests/e2e` (and `era_front.rs`).
#[path = "shared/probe.rs"]
mod shared;
#[path = "shared/faults.rs"]
mod shared_faults;

#[path = "engine/run.rs"]
mod run;

#[path = "engine/auth.rs"]
mod auth;
#[path = "engine/auth_act.rs"]
mod auth_act;
#[path = "engine/auth_beside.rs"]
mod auth_beside;
#[path = "engine/auth_limiter.rs"]
mod auth_limiter;
#[path = "engine/auth_paths.rs"]
mod auth_paths;
#[path = "engine/auth_shape.rs"]
mod auth_shape;
#[path = "engine/dns_tls.rs"]
mod dns_tls;
#[path = "engine/faults.rs"]
mod faults;
#[path = "engine/hostile.rs"]
mod hostile;
#[path = "engine/listing.rs"]
mod listing;
#[path = "engine/localhost.rs"]
mod localhost;
