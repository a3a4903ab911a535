//! `vantage`: check an MCP endpoint from here (`vantage check URL`), try it on a built-in
//! demo target (`vantage demo`), or serve the fixture for experiments (`vantage fixture`).

mod args;
mod cli;
mod endpoints;
mod gone;
mod manpage;
mod output;
mod remote;
mod runtime;
mod terminal;
mod timeouts;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cli::main())
}
