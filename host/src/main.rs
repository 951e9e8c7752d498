//! The `evalhost` command line. Everything it does lives in the library; this is the edge
//! where errors become messages and exit codes.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
