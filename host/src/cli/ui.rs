//! What the global flags ask of every command's output: colour (`--color`, NO_COLOR) and
//! the progress display (`--quiet`, whether stderr is a terminal).

use std::io::IsTerminal;

use clap::ColorChoice;

/// Bold red, for the `Error:` prefix.
const ERROR_STYLE: &str = "\x1b[1;31m";
const RESET: &str = "\x1b[0m";

/// How to write to the terminal, resolved once from the global flags.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// Colour the report on stdout.
    pub color_stdout: bool,
    /// Colour `Error:` lines on stderr.
    pub color_stderr: bool,
    /// Draw a progress bar on stderr during `evalhost run`.
    pub progress: bool,
}

impl Ui {
    /// Resolve `--color` and `--quiet` against the environment and the real streams.
    pub fn new(color: ColorChoice, quiet: bool) -> Self {
        let stderr_is_terminal = std::io::stderr().is_terminal();
        let no_color = no_color(std::env::var_os("NO_COLOR").as_deref());
        Self {
            color_stdout: wants_color(color, std::io::stdout().is_terminal(), no_color),
            color_stderr: wants_color(color, stderr_is_terminal, no_color),
            progress: !quiet && stderr_is_terminal,
        }
    }

    /// `Warning:`, in bold when stderr is coloured.
    pub fn warning_prefix(&self) -> String {
        if self.color_stderr {
            format!("\x1b[1mWarning:{RESET}")
        } else {
            "Warning:".to_owned()
        }
    }

    /// `Error:`, in bold red when stderr is coloured.
    pub fn error_prefix(&self) -> String {
        if self.color_stderr {
            format!("{ERROR_STYLE}Error:{RESET}")
        } else {
            "Error:".to_owned()
        }
    }
}

/// `--color always` and `never` win; `auto` colours a terminal unless NO_COLOR is set
/// (<https://no-color.org>: a command-line flag overrides the variable).
fn wants_color(choice: ColorChoice, is_terminal: bool, no_color: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && !no_color,
    }
}

/// NO_COLOR disables colour when it is set to anything but the empty string.
fn no_color(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_no_color_and_auto_needs_a_terminal() {
        assert!(wants_color(ColorChoice::Always, false, true));
        assert!(!wants_color(ColorChoice::Never, true, false));
        assert!(wants_color(ColorChoice::Auto, true, false));
        assert!(!wants_color(ColorChoice::Auto, true, true));
        assert!(!wants_color(ColorChoice::Auto, false, false));
    }

    #[test]
    fn an_empty_no_color_does_not_disable_colour() {
        assert!(!no_color(None));
        assert!(!no_color(Some("".as_ref())));
        assert!(no_color(Some("1".as_ref())));
    }
}
