//! End-to-end tests of the probe engine and the `vantage` command, in one test binary.

#![allow(clippy::unwrap_used)]

mod support;

mod api_errors;
mod auth;
mod auth_paths;
mod auth_unseen;
mod cli;
mod cli_habits;
mod codemap;
mod coordinator_gone;
mod dns_resolver_faults;
mod dns_resolver_faults_support;
mod dns_tls;
mod egress;
mod era_caps;
mod era_unobserved;
mod evidence;
mod evidence_fleet;
mod evidence_support;
mod fixture_faults;
mod fleet;
mod gate;
mod gate_listing;
mod gate_not_mcp;
mod gate_sweep;
mod hostile;
mod junit_consumer;
mod lifecycle;
mod listing_front;
mod markdown_hostile;
mod markdown_summary;
mod modules;
mod net_evidence;
mod operator_errors;
mod peers;
mod procs;
mod progress;
mod prometheus;
mod quickstart;
mod reload_labels;
mod reload_revoke;
mod reports;
mod review_answers;
mod review_deadline;
mod review_leaks;
mod review_small;
mod review_support;
mod schema;
mod secret_query;
mod snapshot;
mod stdout_errors;
mod terminal;
mod token_files;
mod vantage_tls;
