//! `evalhost completions SHELL`: a completion script generated from the clap definition.

use std::io::Write as _;

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Args, exit};

/// `evalhost completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Print the completion script for `args.shell` on stdout.
pub fn completions(args: CompletionsArgs) -> u8 {
    let mut command = Args::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "evalhost", &mut script);
    // A closed stdout (`| head`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(&script);
    exit::OK
}
