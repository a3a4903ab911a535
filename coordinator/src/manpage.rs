//! `vantage man`: man pages rendered from the same clap definitions as `--help`, so the two
//! cannot drift.

use std::path::Path;

use anyhow::{bail, Context};
use clap::CommandFactory;

use crate::args::Cli;

/// The built command tree (subcommands named `vantage-check`, …).
fn command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Print the page of `sub` (or of `vantage` itself), or write every page into `dir`.
pub fn write(sub: Option<&str>, dir: Option<&Path>) -> anyhow::Result<u8> {
    let cmd = command();
    if let Some(dir) = dir {
        if !dir.is_dir() {
            bail!(
                "--dir {}: not a directory; create it first (e.g. mkdir -p {})",
                dir.display(),
                dir.display()
            );
        }
        clap_mangen::generate_to(Cli::command(), dir)
            .with_context(|| format!("writing man pages into {}", dir.display()))?;
        eprintln!("man pages written to {}", dir.display());
        return Ok(vantage_coordinator::exit::OK);
    }
    let page = match sub {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(s) => s.clone(),
            None => {
                let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
                bail!("`{name}` is not a command; one of: {}", names.join(", "));
            }
        },
    };
    let mut text = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut text)
        .context("rendering the man page")?;
    crate::output::to_stdout(&text)
}
