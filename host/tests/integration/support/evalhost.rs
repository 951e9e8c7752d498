//! Running the real `evalhost` binary in a test: a command builder and its output, whose
//! assertions print the command and both streams when they fail.
//!
//! ```ignore
//! let output = Evalhost::new().args(["run", "cases/mino"]).run();
//! output.assert_code(0);
//! assert!(output.stdout().contains("PASS"), "{output}");
//! ```

#![allow(dead_code)]

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use super::common::repo;

/// The binary `cargo test` built, as this test process's own hard link of it
/// (`target/debug/test-bin/evalhost`, made once): the wheel test's maturin runs cargo, which
/// removes and links `target/debug/evalhost` again even when nothing was compiled, and a test
/// starting that path at that moment finds no file. The link keeps the built file whatever
/// happens to the name.
fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let built = Path::new(env!("CARGO_BIN_EXE_evalhost"));
        let dir = built.parent().expect("target/debug").join("test-bin");
        std::fs::create_dir_all(&dir).expect("target/debug/test-bin");
        let staged = dir.join(format!(".evalhost-{}", std::process::id()));
        let mut tries = 0;
        loop {
            let _ = std::fs::remove_file(&staged);
            match std::fs::hard_link(built, &staged) {
                Ok(()) => break,
                // The name is between cargo's remove and link: try again.
                Err(_) if tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(error) => panic!("link {}: {error}", built.display()),
            }
        }
        // The name `evalhost` (messages show it), replaced at once for every test process.
        let path = dir.join("evalhost");
        std::fs::rename(&staged, &path).expect("rename the test binary");
        path
    })
}

/// `evalhost ARGS`, run in the repository root with the tests' own component cache
/// (`target/test-cache`) and the history off (`EVALHOST_HISTORY=off`) unless told otherwise.
pub struct Evalhost {
    command: Command,
}

impl Default for Evalhost {
    fn default() -> Self {
        Self::new()
    }
}

impl Evalhost {
    /// The binary `cargo test` built, in the repository root, with the tests' component cache.
    pub fn new() -> Self {
        let mut command = Command::new(binary());
        command
            .current_dir(repo())
            .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
            // No test records into the repository's history unless it names a store
            // (`--history` wins over the variable).
            .env("EVALHOST_HISTORY", "off");
        Self { command }
    }

    /// The path of the binary, for tests that must start it through another program.
    pub fn program() -> &'static Path {
        binary()
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(name, value);
        self
    }

    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.command.envs(vars);
        self
    }

    pub fn env_remove(mut self, name: impl AsRef<OsStr>) -> Self {
        self.command.env_remove(name);
        self
    }

    pub fn env_clear(mut self) -> Self {
        self.command.env_clear();
        self
    }

    pub fn stdin(mut self, stdin: impl Into<Stdio>) -> Self {
        self.command.stdin(stdin);
        self
    }

    /// The underlying command, for what the builder does not cover (e.g. `pre_exec`).
    pub fn command_mut(&mut self) -> &mut Command {
        &mut self.command
    }

    /// Run to completion, capturing both streams.
    pub fn run(mut self) -> Output {
        let output = self
            .command
            .output()
            .unwrap_or_else(|error| panic!("`{}` did not start: {error}", describe(&self.command)));
        Output::from_process(&self.command, output)
    }

    pub fn stdout(mut self, stdout: impl Into<Stdio>) -> Self {
        self.command.stdout(stdout);
        self
    }

    pub fn stderr(mut self, stderr: impl Into<Stdio>) -> Self {
        self.command.stderr(stderr);
        self
    }

    /// Start it without waiting, for tests that signal or time the process (streams as set,
    /// inherited otherwise).
    pub fn spawn(mut self) -> Child {
        self.command
            .spawn()
            .unwrap_or_else(|error| panic!("`{}` did not start: {error}", describe(&self.command)))
    }

    /// The builder's command, for tests that run it themselves.
    pub fn into_command(self) -> Command {
        self.command
    }
}

/// `PROGRAM ARG...` as a shell would show it (the program's file name only).
fn describe(command: &Command) -> String {
    let program = Path::new(command.get_program());
    let mut line = program
        .file_name()
        .unwrap_or(program.as_os_str())
        .to_string_lossy()
        .into_owned();
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// What a finished `evalhost` left: exit code (-1 when killed by a signal) and both streams.
/// `Display` shows the command, the code and both streams, for assertion messages.
#[derive(Debug, Clone)]
pub struct Output {
    command: String,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Output {
    /// An output made elsewhere (e.g. from a spawned child), for the same assertions.
    pub fn from_process(command: &Command, output: std::process::Output) -> Self {
        Self {
            command: describe(command),
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    pub fn code(&self) -> i32 {
        self.code
    }

    pub fn stdout(&self) -> &str {
        &self.stdout
    }

    pub fn stderr(&self) -> &str {
        &self.stderr
    }

    /// Assert the exit code, printing the command and both streams if it differs.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code\n{self}");
        self
    }

    /// Assert exit code 0.
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        self.assert_code(0)
    }

    #[track_caller]
    pub fn assert_stdout_contains(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{self}"
        );
        self
    }

    #[track_caller]
    pub fn assert_stderr_contains(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{self}"
        );
        self
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "command: {}\nexit code: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }
}
