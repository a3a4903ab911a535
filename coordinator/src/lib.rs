//! Vantage coordinator: merges what the vantages observed into findings and a decision,
//! renders reports, and runs the `vantage` command.

pub mod api;
pub mod baseline;
pub mod checks;
pub mod clock;
pub mod config;
pub mod exit;
pub mod explain;
pub mod findings;
pub mod fleet;
pub mod local;
pub mod merge;
pub mod metrics;
pub mod rate;
mod reload;
pub mod remediation;
pub mod render;
pub mod report;
pub mod schedule;
pub mod serve;
mod shutdown;
mod stacks;
pub mod surface;
pub mod token_file;

#[cfg(test)]
mod test_reports;
