//! Vantage coordinator: merges what the vantages observed into findings and a decision,
//! renders reports, and runs the `vantage` command.

pub mod exit;
pub mod findings;
pub mod fixture;
pub mod local;
pub mod merge;
pub mod render;
pub mod report;
