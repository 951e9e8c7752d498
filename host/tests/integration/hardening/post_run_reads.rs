//! evalhost's own reads of the finished workspace cannot be fooled (`host/src/workspace_read.rs`,
//! docs/security.md): from the attacker's side, through the real agent loop and an external
//! agent, with `--out` and `--html`. A symlink to a secret outside the workspace (a file and a
//! directory), a directory swapped for such a symlink by a process that outlived its run while
//! evalhost copies, a FIFO (for the file tools and for a grader, which would wait on it
//! forever), a directory over the snapshot's entry cap, files past the HTML report's read
//! budget. Each run is bounded by `--timeout` and by a wall clock here. The secret is in no
//! output file, read as an archiver would (following every symlink); the controls show the
//! same scan finds what the workspace does hold.

use crate::support::evalhost::{Evalhost, Output};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const SECRET: &str = "PRIVATE-KEY-not-for-reports-7d3a";
/// Seeded into the workspace: a report may show it (the controls look for it).
const VISIBLE: &str = "visible-seeded-content-5e21";
/// Longest an `evalhost run` here may take before the test calls it hung.
const WALL_CLOCK: Duration = Duration::from_secs(240);

/// A secret outside the workspace (`~/.ssh/id_rsa` of a fake HOME), cases and outputs.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home/.ssh")).unwrap();
        std::fs::write(dir.path().join("home/.ssh/id_rsa"), SECRET).unwrap();
        std::fs::create_dir_all(dir.path().join("cases")).unwrap();
        Self { dir }
    }

    fn ssh(&self) -> PathBuf {
        self.dir.path().join("home/.ssh")
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn html(&self) -> PathBuf {
        self.dir.path().join("report.html")
    }

    /// Write case `name` (JSON is YAML).
    fn case(&self, name: &str, case: Value) -> PathBuf {
        let path = self.dir.path().join("cases").join(format!("{name}.yaml"));
        std::fs::write(&path, case.to_string()).unwrap();
        path
    }

    /// `evalhost run --out --html --timeout 60 ARGS CASE`, killed (and the test failed) after
    /// [`WALL_CLOCK`].
    fn run(&self, case: &Path, args: &[&str]) -> Output {
        let mut command = Evalhost::new()
            .arg("run")
            .arg("--out")
            .arg(self.out())
            .arg("--html")
            .arg(self.html())
            .args(["--timeout", "60"])
            .args(args)
            .arg(case)
            .env("HOME", self.dir.path().join("home"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .into_command();
        let child = command.spawn().unwrap();
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(child.wait_with_output()));
        match rx.recv_timeout(WALL_CLOCK) {
            Ok(output) => Output::from_process(&command, output.unwrap()),
            Err(_) => {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
                panic!("evalhost hung: still running after {WALL_CLOCK:?}");
            }
        }
    }

    /// Every output file's text, read as an archiver following symlinks would.
    fn outputs(&self) -> String {
        let mut text = read_following(&self.out(), 0);
        text.push_str(&std::fs::read_to_string(self.html()).unwrap_or_default());
        text
    }

    fn assert_secret_in_no_output(&self) {
        let outputs = self.outputs();
        assert!(!outputs.contains(SECRET), "the secret reached an output");
        assert_eq!(
            symlinks_leaving(&self.out(), &self.out()),
            Vec::<PathBuf>::new(),
            "--out holds symlinks leading out of it"
        );
    }

    fn notes(&self, case: &str) -> String {
        std::fs::read_to_string(self.out().join(case).join("run-1.workspace-notes.txt"))
            .unwrap_or_default()
    }
}

/// The text of every file under `path`, following symlinks (to a depth, against loops).
fn read_following(path: &Path, depth: usize) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return String::new();
    };
    if meta.is_dir() && depth < 12 {
        let mut names: Vec<_> = std::fs::read_dir(path)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        names.sort();
        names.iter().map(|p| read_following(p, depth + 1)).collect()
    } else if meta.is_file() {
        String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
    } else {
        String::new()
    }
}

/// Symlinks under `dir` whose target resolves outside `root`.
fn symlinks_leaving(dir: &Path, root: &Path) -> Vec<PathBuf> {
    let root = root.canonicalize().unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            let inside = path.canonicalize().is_ok_and(|t| t.starts_with(&root));
            if !inside {
                found.push(path);
            }
        } else if kind.is_dir() {
            found.extend(symlinks_leaving(&path, &root));
        }
    }
    found
}

/// A built-in agent case: one bash call running `command`, then `steps`, then `done`.
fn agent_case(name: &str, command: &str, steps: &[Value], graders: Value) -> Value {
    let mut model = vec![json!({"call": {"tool": "bash", "arguments": {"command": command}}})];
    model.extend(steps.iter().cloned());
    model.push(json!({"text": "done"}));
    json!({
        "name": name,
        "prompt": "Work.",
        "approve": "all",
        "workspace": {"files": {"seeded.txt": VISIBLE}},
        "model": model,
        "graders": graders,
    })
}

/// An external agent case: `bash -c COMMAND`.
fn external_case(name: &str, command: &str, graders: Value) -> Value {
    json!({
        "name": name,
        "prompt": "Work.",
        "workspace": {"files": {"seeded.txt": VISIBLE}},
        "agent": {"command": ["bash", "-c", command]},
        "graders": graders,
    })
}

/// Plant symlinks to the secret file and its directory, and one that stays inside.
fn plant_symlinks(ssh: &Path) -> String {
    let ssh = ssh.display();
    format!(
        "mkdir -p d && echo hello > d/note.txt && ln -s {ssh}/id_rsa key && ln -s {ssh} ssh \
         && ln -s ../../.. up && ln -s d/note.txt inside && echo planted"
    )
}

fn check_symlinks_left_out(setup: &Setup, case: &str, output: &Output) {
    output.assert_code(0);
    setup.assert_secret_in_no_output();
    let workspace = setup.out().join(case).join("run-1.workspace");
    // Kept: the files, and the symlink that stays inside.
    assert_eq!(
        std::fs::read_link(workspace.join("inside")).unwrap(),
        Path::new("d/note.txt")
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("d/note.txt")).unwrap(),
        "hello\n"
    );
    let notes = setup.notes(case);
    for link in ["key", "ssh", "up"] {
        assert!(
            notes.contains(&format!("`{link}` left out: a symlink to `")),
            "{link}:\n{notes}"
        );
        assert!(workspace.join(link).symlink_metadata().is_err(), "{link}");
    }
    // Control: the same scan finds what the workspace holds.
    assert!(setup.outputs().contains(VISIBLE));
    assert!(
        read_following(&setup.ssh(), 0).contains(SECRET),
        "the scan follows symlinks"
    );
}

#[test]
fn symlinks_to_a_secret_reach_no_output_through_the_agent_loop() {
    let setup = Setup::new();
    let case = setup.case(
        "links-agent",
        agent_case(
            "links-agent",
            &plant_symlinks(&setup.ssh()),
            &[],
            json!([{"file_exists": "d/note.txt"}]),
        ),
    );
    let output = setup.run(&case, &[]);
    check_symlinks_left_out(&setup, "links-agent", &output);
}

#[test]
fn symlinks_to_a_secret_reach_no_output_from_an_external_agent() {
    let setup = Setup::new();
    let case = setup.case(
        "links-external",
        external_case(
            "links-external",
            &plant_symlinks(&setup.ssh()),
            json!([{"file_exists": "d/note.txt"}]),
        ),
    );
    let output = setup.run(&case, &[]);
    check_symlinks_left_out(&setup, "links-external", &output);
}

#[test]
fn a_directory_swapped_for_a_symlink_after_the_run_leaks_nothing() {
    // The red team's attack: a process that outlived its run (`setsid env -i`, which only
    // namespaces stop; `--no-confine` lets it live here) swaps directories for symlinks to
    // `~/.ssh` while evalhost lists and copies the workspace. Before, the key landed in
    // `--out` and in the HTML diff (4 runs of 4); now a swapped directory is an error of the
    // read, never followed.
    let setup = Setup::new();
    let ssh = setup.ssh().display().to_string();
    std::fs::write(setup.ssh().join("f.txt"), SECRET).unwrap();
    let swapper = format!(
        "end=$((SECONDS+6)); while [ $SECONDS -lt $end ]; do for i in $(seq 1 200); do \
         mv d$i x$i 2>/dev/null && ln -s {ssh} d$i 2>/dev/null; rm -f d$i; mv x$i d$i 2>/dev/null; \
         done; done"
    );
    let command = format!(
        "for i in $(seq 1 200); do mkdir d$i && echo benign > d$i/f.txt; done; \
         setsid env -i /bin/bash -c '{swapper}' </dev/null >/dev/null 2>&1 & echo started"
    );
    let case = setup.case(
        "swap",
        json!({
            "name": "swap",
            "prompt": "Work.",
            "approve": "all",
            "runs": 3,
            "workspace": {"files": {"seeded.txt": VISIBLE}},
            "model": [
                {"call": {"tool": "bash", "arguments": {"command": command}}},
                {"text": "done"},
            ],
            "graders": [{"tool_called": "bash"}],
        }),
    );
    let output = setup.run(&case, &["--no-confine", "--jobs", "1"]);
    // The survivor may also make removing the temp root fail: an errored run, not a leak.
    assert!([0, 1].contains(&output.code()), "{output}");
    setup.assert_secret_in_no_output();
    // Let the survivors finish before the temp directory goes.
    std::thread::sleep(Duration::from_secs(7));
}

/// The FIFO work: the file tools on a FIFO, then a grader reading it.
fn fifo_steps() -> Vec<Value> {
    [
        ("read_file", json!({"path": "pipe"})),
        (
            "edit_file",
            json!({"path": "pipe", "old_text": "a", "new_text": "b"}),
        ),
        ("write_file", json!({"path": "pipe", "content": "x"})),
    ]
    .into_iter()
    .map(|(tool, arguments)| json!({"call": {"tool": tool, "arguments": arguments}}))
    .collect()
}

/// The outputs of the run's tool calls, in order.
fn tool_results(setup: &Setup, case: &str) -> Vec<String> {
    let log = std::fs::read_to_string(setup.out().join(case).join("run-1.jsonl")).unwrap();
    log.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "tool_result")
        .map(|r| r["output"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn fifo_graders() -> Value {
    json!([{"file_contains": {"path": "pipe", "text": "x"}}, {"file_exists": "seeded.txt"}])
}

fn check_fifo_not_waited_on(setup: &Setup, case: &str, output: &Output) {
    // The grader found the FIFO gone: a failed run, in bounded time, said why.
    output.assert_code(1);
    output.assert_stdout_contains(
        "warning: `pipe` (a FIFO) was removed from the finished workspace before grading",
    );
    setup.assert_secret_in_no_output();
    // Removed before grading, so neither the snapshot nor the HTML diff meets it.
    let snapshot = setup.out().join(case).join("run-1.workspace");
    assert!(snapshot.join("seeded.txt").is_file());
    assert!(snapshot.join("pipe").symlink_metadata().is_err());
}

#[test]
fn a_fifo_hangs_neither_the_file_tools_nor_a_grader_through_the_agent_loop() {
    let setup = Setup::new();
    let case = setup.case(
        "fifo-agent",
        agent_case(
            "fifo-agent",
            "mkfifo pipe && echo made",
            &fifo_steps(),
            fifo_graders(),
        ),
    );
    let output = setup.run(&case, &[]);
    check_fifo_not_waited_on(&setup, "fifo-agent", &output);
    let results = tool_results(&setup, "fifo-agent");
    assert_eq!(
        results[1..],
        [
            "Cannot read `pipe`: `pipe` is a FIFO, not a regular file.",
            "Cannot edit `pipe`: `pipe` is a FIFO, not a regular file.",
            "Cannot write `pipe`: `pipe` is a FIFO, not a regular file.",
        ],
    );
}

#[test]
fn a_fifo_made_by_an_external_agent_hangs_no_grader() {
    let setup = Setup::new();
    let case = setup.case(
        "fifo-external",
        external_case("fifo-external", "mkfifo pipe && echo made", fifo_graders()),
    );
    let output = setup.run(&case, &[]);
    check_fifo_not_waited_on(&setup, "fifo-external", &output);
}

#[test]
fn control_a_regular_file_in_place_of_the_fifo_is_read_by_the_tools_and_the_grader() {
    let setup = Setup::new();
    let case = setup.case(
        "file-agent",
        agent_case(
            "file-agent",
            "echo x > pipe",
            &fifo_steps()[..1],
            fifo_graders(),
        ),
    );
    let output = setup.run(&case, &[]);
    output.assert_code(0);
    assert!(!output.stdout().contains("was removed"), "{output}");
    assert_eq!(tool_results(&setup, "file-agent")[1..], ["x\n"]);
}

#[test]
fn a_huge_directory_stops_the_listing_at_the_cap() {
    let setup = Setup::new();
    let case = setup.case(
        "huge-dir",
        agent_case(
            "huge-dir",
            "mkdir big && cd big && seq 1 6000 | xargs touch && echo made",
            &[],
            json!([{"tool_called": "bash"}]),
        ),
    );
    let output = setup.run(&case, &[]);
    output.assert_code(0);
    assert!(!setup.out().join("huge-dir/run-1.workspace").exists());
    assert_eq!(
        setup.notes("huge-dir"),
        "evalhost: notes on this run's workspace snapshot (run-1.workspace):\n\
         - not kept: the workspace has more than 4096 entries\n"
    );
}

#[test]
fn the_html_report_reads_at_most_its_budget_of_each_run() {
    // 40 files of 1,000,000 bytes: before, all were read (2,000 of 1 MiB reached 3.9 GB).
    let setup = Setup::new();
    let case = setup.case(
        "big-files",
        agent_case(
            "big-files",
            "for i in $(seq -w 1 40); do yes 0123456789abcdef | head -c 1000000 > f$i.txt; done; echo made",
            &[],
            json!([{"tool_called": "bash"}]),
        ),
    );
    let output = setup.run(&case, &[]);
    output.assert_code(0);
    let html = std::fs::read_to_string(setup.html()).unwrap();
    let not_shown = html
        .matches("not shown: the report reads at most 8 MiB of each run&#39;s workspace")
        .count()
        + html
            .matches("not shown: the report reads at most 8 MiB of each run's workspace")
            .count();
    // 8 of the 40 fit in 8 MiB.
    assert_eq!(not_shown, 32, "{}", &html[..html.len().min(2000)]);
}
