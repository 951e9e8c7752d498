//! Confinement of a run's processes (`host/src/confine/`, docs/security.md), on the real
//! binary: one escape script, run by the built-in agent's `bash` (through the real agent loop)
//! and as an external agent, tries to replace and append to the run's session log, write
//! outside the workspace (absolute path, `..`, a planted symlink, `/tmp`), read a file in the
//! invoking user's home (a fake HOME given to evalhost), connect to a loopback port that is
//! not the endpoint, write after `setsid` and after a double fork, and signal a process
//! outside the run. Where runs get namespaces (bubblewrap), it also tries what Landlock alone
//! let through to a red team running as root: another run's temp root, the case files,
//! root's capabilities (`CapEff`, `mknod`, `/etc/shadow`), a provider key in
//! `/proc/<evalhost>/environ`, a packet socket, UDP to the host, a pathname UNIX socket (as
//! Docker's API is), an `env -i` survivor. Each attempt is refused; the work beside them is
//! still done; the verdicts are as expected; the same script escapes with `--no-confine`.
//! Then: Landlock alone, a case widening its confinement, a machine lacking features
//! (`EVALHOST_CONFINE_NAMESPACES`, `EVALHOST_CONFINE_ABI`), `--require-confinement`.

use crate::support::evalhost::{Evalhost, Output};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

const SECRET: &str = "hunter2-not-for-agents";

/// A provider key in evalhost's environment, which no run may read (`/proc/<pid>/environ`).
const KEY_VAR: &str = "EVALHOST_TEST_PROVIDER_KEY";
const KEY: &str = "sk-test-not-for-agents-4f1c";

/// Whether runs get namespaces of their own here (bubblewrap installed and working). CI
/// installs it (`.ci/run`) and sets `EVALHOST_REQUIRE_TOOLCHAINS=1`, where its absence fails.
fn namespaces() -> bool {
    let works = Command::new("bwrap")
        .args(["--unshare-all", "--ro-bind", "/", "/", "--", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        works || std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_none(),
        "bubblewrap is required here: apt-get install bubblewrap"
    );
    works
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// What an escape run is pointed at, all outside the run.
struct Targets {
    dir: tempfile::TempDir,
    /// evalhost's HOME: the invoking user's home as far as the run is concerned.
    home: PathBuf,
    /// Where the escapes try to write.
    outside: PathBuf,
    listener: TcpListener,
    sleeper: Child,
    /// A UDP port on the host's loopback the escapes send to.
    udp: UdpSocket,
    /// A UNIX socket in a system directory, as Docker's API is (`/var/run/docker.sock`).
    unix: UnixListener,
    unix_path: PathBuf,
    /// The argument of the `sleep` a survivor runs (unique per test, to find it after).
    survivor: String,
}

impl Targets {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(home.join("secret.txt"), SECRET).unwrap();
        // Another run's temp root, as a concurrent run (or evalhost) would have it.
        let decoy = dir.path().join("runs/decoy-run/workspace");
        std::fs::create_dir_all(&decoy).unwrap();
        std::fs::write(decoy.join("answer.txt"), SECRET).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let sleeper = Command::new("sleep").arg("60").spawn().unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let unique = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace('.', "");
        let unix_path = PathBuf::from(format!("/var/tmp/evalhost-docker-{unique}.sock"));
        let _ = std::fs::remove_file(&unix_path);
        let unix = UnixListener::bind(&unix_path).unwrap();
        unix.set_nonblocking(true).unwrap();
        // Unique among the tests of this process (each kills its own survivor when done).
        static SURVIVORS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(10);
        let n = SURVIVORS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let survivor = format!("{}.{n}", 3000 + std::process::id() % 1000);
        Self {
            dir,
            home,
            outside,
            listener,
            sleeper,
            udp,
            unix,
            unix_path,
            survivor,
        }
    }

    /// The file the `/tmp` escape tries to write (one per test).
    fn tmp_target(&self) -> PathBuf {
        let unique = self.dir.path().file_name().unwrap().to_string_lossy();
        PathBuf::from(format!("/tmp/evalhost-escape{unique}"))
    }

    fn port(&self) -> u16 {
        self.listener.local_addr().unwrap().port()
    }

    /// `evalhost run --out OUT ARGS CASES` on the one case `file` holding `yaml`, with this
    /// target's home and `env`: the output and OUT.
    fn run(
        &self,
        file: &str,
        yaml: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Output, PathBuf) {
        let cases = self.dir.path().join("cases");
        std::fs::create_dir_all(&cases).unwrap();
        std::fs::write(cases.join(file), yaml).unwrap();
        let out = self.dir.path().join("out");
        let mut all = vec!["--out", out.to_str().unwrap()];
        all.extend_from_slice(args);
        all.push(cases.to_str().unwrap());
        (evalhost(&self.home, &all, env), out)
    }

    /// The escape script: each attempt prints `refused NAME` or `ESCAPED NAME`; the work in
    /// the workspace, HOME and TMPDIR is done around them. With `namespaced`, also the
    /// attempts only namespaces refuse ([`NAMESPACE_ATTEMPTS`]).
    fn script(&self, namespaced: bool) -> String {
        let mut script = self.landlock_script();
        if namespaced {
            script.push_str(&self.namespace_script());
        }
        script
    }

    /// What Landlock alone refused already; more are in [`Targets::namespace_script`].
    fn landlock_script(&self) -> String {
        let out = self.outside.display();
        let secret = self.home.join("secret.txt");
        let secret = secret.display();
        let port = self.port();
        let pid = self.sleeper.id();
        let tmp_name = self.tmp_target();
        let tmp_name = tmp_name.display();
        format!(
            r#"try() {{ name=$1; shift; if ( eval "$@" ) >/dev/null 2>&1; then echo "ESCAPED $name"; else echo "refused $name"; fi; }}
echo started > work.txt
try session-replace 'rm -f ../session/session.jsonl; printf forged > ../session/session.jsonl'
try session-append 'ok=0; for f in /proc/$PPID/fd/* /proc/[0-9]*/fd/*; do case "$(readlink "$f")" in *"(deleted)") printf forged >> "$f" && ok=1;; esac; done; [ $ok = 1 ]'
try absolute 'echo x > {out}/absolute.txt'
try dotdot 'echo x > ../dotdot.txt'
try symlink 'ln -s {out}/symlink.txt planted && echo x > planted'
try tmp 'echo x > {tmp_name}'
try read-home 'cat {secret}'
try connect 'echo hi > /dev/tcp/127.0.0.1/{port}'
try signal 'kill -TERM {pid}'
setsid sh -c 'echo x > {out}/setsid.txt; echo ok > setsid-ok.txt'
(sh -c 'echo x > {out}/forked.txt; echo ok > forked-ok.txt' &)
sleep 0.5
echo home > "$HOME/home.txt" && cat "$HOME/home.txt"
echo tmp > "$TMPDIR/tmp.txt" && cat "$TMPDIR/tmp.txt"
echo done >> work.txt
"#
        )
    }

    /// What a red team did as root with Landlock alone, and what the namespaces add: see
    /// other runs' directories and the case files, write in `/dev` and fill RAM through
    /// `/dev/shm`, use root's capabilities (make a device node, read `/etc/shadow`), read
    /// evalhost's environment through `/proc`, open a packet socket, send UDP, reach a
    /// pathname UNIX socket (the Docker API), leave a survivor behind.
    fn namespace_script(&self) -> String {
        let udp = self.udp.local_addr().unwrap().port();
        let unix = self.unix_path.display();
        let survivor = &self.survivor;
        let cases = self.dir.path().join("cases");
        let cases = cases.display();
        let (dev_file, shm_file) = self.device_files();
        let (dev_file, shm_file) = (dev_file.display(), shm_file.display());
        format!(
            r#"try other-runs 'ls "$(dirname "$(dirname "$PWD")")" | grep -q decoy-run'
try case-files 'ls {cases} | grep -q yaml'
try dev-write 'echo x > {dev_file}'
try shm-fill 'head -c 100000000 /dev/zero > {shm_file}'
try capabilities '! grep -q "^CapEff:[[:space:]]*0000000000000000$" /proc/self/status'
try mknod 'mknod kmsg c 1 11'
try shadow '[ -s /etc/shadow ] && head -c1 /etc/shadow'
try environ 'cat /proc/[0-9]*/environ | tr "\0" "\n" | grep -q "^{KEY_VAR}=sk-"'
try raw-socket '/usr/bin/python3 -c "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)"'
try unix-socket '/usr/bin/python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])" {unix}'
echo hi > /dev/udp/127.0.0.1/{udp} 2>/dev/null
setsid env -i /bin/sleep {survivor} </dev/null >/dev/null 2>&1 &
sleep 0.5
echo namespaced >> work.txt
echo end
"#
        )
    }

    /// Where the escapes try to write a file in `/dev`, and 100 MB into `/dev/shm` (RAM).
    fn device_files(&self) -> (PathBuf, PathBuf) {
        (
            PathBuf::from(format!("/dev/evalhost-escape-{}", self.survivor)),
            PathBuf::from(format!("/dev/shm/evalhost-fill-{}", self.survivor)),
        )
    }

    /// The survivor's pid, when a `sleep` with its argument runs on the host.
    fn survivor_pid(&self) -> Option<u32> {
        let needle = format!("sleep\0{}\0", self.survivor);
        std::fs::read_dir("/proc")
            .ok()?
            .flatten()
            .find_map(|entry| {
                let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
                let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
                String::from_utf8_lossy(&cmdline)
                    .ends_with(&needle)
                    .then_some(pid)
            })
    }

    /// None of the namespace escapes reached the host.
    fn assert_namespaces_held(&self) {
        let mut buf = [0u8; 16];
        assert_eq!(
            self.udp.recv(&mut buf).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "a UDP datagram left the run"
        );
        assert_eq!(
            self.unix.accept().map(|_| ()).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "the run reached the UNIX socket"
        );
        assert_eq!(self.survivor_pid(), None, "a process outlived its run");
        let (dev_file, shm_file) = self.device_files();
        assert!(
            !dev_file.exists() && !shm_file.exists(),
            "written to the host's /dev"
        );
    }

    /// Nothing reached the targets: no file outside, the secret unread, nobody connected,
    /// the sleeper alive.
    fn assert_untouched(&mut self, output: &str) {
        let written: Vec<_> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(written.is_empty(), "written outside: {written:?}");
        let tmp = self.tmp_target();
        assert!(!tmp.exists(), "{} was written", tmp.display());
        assert!(!output.contains(SECRET), "the secret was read:\n{output}");
        assert_eq!(
            self.listener.accept().map(|_| ()).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "something connected to the listener"
        );
        assert!(
            self.sleeper.try_wait().unwrap().is_none(),
            "the process outside the run was signalled"
        );
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        let _ = self.sleeper.kill();
        let _ = self.sleeper.wait();
        let _ = std::fs::remove_file(&self.unix_path);
        let (dev_file, shm_file) = self.device_files();
        let _ = std::fs::remove_file(dev_file);
        let _ = std::fs::remove_file(shm_file);
        if let Some(pid) = self.survivor_pid() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

/// What namespaces refuse beyond [`ATTEMPTS`] (as root: Landlock alone let each through).
const NAMESPACE_ATTEMPTS: [&str; 10] = [
    "other-runs",
    "case-files",
    "dev-write",
    "shm-fill",
    "capabilities",
    "mknod",
    "shadow",
    "environ",
    "raw-socket",
    "unix-socket",
];

const ATTEMPTS: [&str; 9] = [
    "session-replace",
    "session-append",
    "absolute",
    "dotdot",
    "symlink",
    "tmp",
    "read-home",
    "connect",
    "signal",
];

/// Run `evalhost run ARGS CASES` with `home` as evalhost's HOME: (exit code, stdout, stderr).
fn evalhost(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Evalhost::new()
        .arg("run")
        .args(args)
        .env("HOME", home)
        .env(KEY_VAR, KEY)
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-cache"),
        )
        // Temp roots beside a decoy of another run's (`Targets::new`), where there is one.
        .envs(runs_dir(home).map(|runs| ("TMPDIR", runs)))
        .envs(env.iter().copied())
        .run()
}

/// The directory runs' temp roots go in, beside `home` (made by [`Targets::new`]).
fn runs_dir(home: &Path) -> Option<PathBuf> {
    let runs = home.parent()?.join("runs");
    runs.is_dir().then_some(runs)
}

/// `text` as a YAML block scalar's lines, indented by `indent` spaces.
fn block(text: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

/// The legitimate work, as graders see it.
const WORK_GRADERS: &str = "graders:
  - file_contains: {path: work.txt, text: \"started\\ndone\"}
  - file_exists: setsid-ok.txt
  - file_exists: forked-ok.txt
";

/// A case whose built-in agent runs `escape.sh` with bash.
fn agent_case(script: &str) -> String {
    format!(
        "name: escape-agent
prompt: Try to escape.
approve: all
workspace:
  files:
    escape.sh: |
{script}model:
  - call: {{tool: bash, arguments: {{command: bash escape.sh}}}}
  - text: I tried.
    expect_input_contains: refused signal
{WORK_GRADERS}  - final_text_contains: I tried.
",
        script = block(script, 6)
    )
}

/// A case whose external agent is the escape script itself.
fn external_case(script: &str) -> String {
    format!(
        "name: escape-external
prompt: Try to escape.
workspace:
  files:
    escape.sh: |
{script}agent: {{command: [bash, escape.sh]}}
{WORK_GRADERS}  - final_text_contains: refused session-replace
",
        script = block(script, 6)
    )
}

/// Check one escape run: exit 0, every attempt refused (with `namespaced`, the
/// [`NAMESPACE_ATTEMPTS`] too), the log intact.
fn assert_refused(targets: &mut Targets, out: &Path, case: &str, stdout: &str, namespaced: bool) {
    let log = std::fs::read_to_string(out.join(case).join("run-1.jsonl")).unwrap();
    for line in log.lines() {
        let record: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a forged line in the session log ({e}): {line}"));
        assert!(record["type"].is_string(), "{line}");
    }
    assert!(
        log.starts_with("{\"at_ms\":0,\"type\":\"session_start\""),
        "{log}"
    );
    let output = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["type"] == "tool_result" || r["type"] == "turn_end")
        .map(|r| {
            format!(
                "{}{}",
                r["output"].as_str().unwrap_or(""),
                r["final_text"].as_str().unwrap_or("")
            )
        })
        .collect::<String>();
    let namespace_attempts: &[&str] = if namespaced { &NAMESPACE_ATTEMPTS } else { &[] };
    for attempt in ATTEMPTS.iter().chain(namespace_attempts) {
        assert!(
            output.contains(&format!("refused {attempt}\n")),
            "{attempt} not refused:\n{output}\n{stdout}"
        );
    }
    assert!(!output.contains("ESCAPED"), "{output}");
    assert!(
        output.contains("home\ntmp"),
        "HOME and TMPDIR writable:\n{output}"
    );
    targets.assert_untouched(&output);
    if namespaced {
        targets.assert_namespaces_held();
    }
}

/// Run the escape script through the built-in agent's `bash`, with `env` for evalhost.
fn escape_through_the_agent_loop(namespaced: bool, env: &[(&str, &str)]) {
    let mut targets = Targets::new();
    let (output, out) = targets.run(
        "escape-agent.yaml",
        &agent_case(&targets.script(namespaced)),
        &[],
        env,
    );
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains(
        "\nConfinement: runs write only their workspace, HOME and TMPDIR; read the system but not your home; connect only to the model endpoint.\n"
    ), "{stdout}");
    assert_eq!(
        stdout.contains("\nConfinement layer: namespaces of each run's own (bubblewrap "),
        namespaced,
        "{stdout}"
    );
    assert_refused(&mut targets, &out, "escape-agent", stdout, namespaced);
}

#[test]
fn escapes_through_the_agent_loop_are_refused_and_the_work_is_done() {
    escape_through_the_agent_loop(namespaces(), &[]);
}

#[test]
fn with_landlock_alone_escapes_through_the_agent_loop_are_refused() {
    // The fallback where bubblewrap or user namespaces are missing.
    escape_through_the_agent_loop(false, &[("EVALHOST_CONFINE_NAMESPACES", "0")]);
}

#[test]
fn escapes_of_an_external_agent_are_refused_and_the_work_is_done() {
    let namespaced = namespaces();
    let mut targets = Targets::new();
    let (output, out) = targets.run(
        "escape-external.yaml",
        &external_case(&targets.script(namespaced)),
        &[],
        &[],
    );
    output.assert_code(0);
    let stdout = output.stdout();
    assert_refused(&mut targets, &out, "escape-external", stdout, namespaced);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let allowed = &report["confinement"];
    assert_eq!(allowed["enforced"], true, "{allowed}");
    assert_eq!(
        allowed["write"],
        serde_json::json!(["workspace", "home", "tmp"])
    );
    assert_eq!(allowed["read"][0], "system");
    assert_eq!(allowed["connect"], serde_json::json!(["endpoint"]));
    assert_eq!(allowed["namespaces"].is_string(), namespaced, "{allowed}");
}

#[test]
fn without_confinement_the_same_script_escapes() {
    // The escape tests above fail if confinement breaks: here the same attempts succeed.
    let namespaced = namespaces();
    let mut targets = Targets::new();
    let (output, _) = targets.run(
        "escape-external.yaml",
        &external_case(&targets.script(namespaced)),
        &["--no-confine"],
        &[],
    );
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(
        stdout.contains(
            "\nConfinement: off (--no-confine): the agent's processes ran with your full rights.\n"
        ),
        "{stdout}{stderr}"
    );
    for name in ["absolute.txt", "setsid.txt", "forked.txt"] {
        assert!(
            targets.outside.join(name).exists(),
            "{name}: {stdout}{stderr}"
        );
    }
    assert!(targets.listener.accept().is_ok(), "nothing connected");
    assert!(
        targets.sleeper.try_wait().unwrap().is_some(),
        "not signalled"
    );
    assert!(targets.tmp_target().exists());
    let _ = std::fs::remove_file(targets.tmp_target());
    if namespaced {
        let mut buf = [0u8; 16];
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(
            targets.udp.recv(&mut buf).is_ok(),
            "no UDP datagram arrived"
        );
        assert!(
            targets.unix.accept().is_ok(),
            "the UNIX socket was not reached"
        );
        assert!(targets.survivor_pid().is_some(), "no survivor");
    }
}

#[test]
fn without_confinement_root_keeps_its_capabilities_and_reads_the_environment() {
    // The control of the namespace attempts that need root to escape at all.
    if !is_root() || !namespaces() {
        return;
    }
    let targets = Targets::new();
    let (output, out) = targets.run(
        "escape-external.yaml",
        &external_case(&targets.script(true)),
        &["--no-confine"],
        &[],
    );
    let log = std::fs::read_to_string(out.join("escape-external").join("run-1.jsonl")).unwrap();
    for attempt in NAMESPACE_ATTEMPTS {
        assert!(
            log.contains(&format!("ESCAPED {attempt}\\n")),
            "{attempt} did not escape without confinement:\n{log}\n{}",
            output.stderr()
        );
    }
}

#[test]
fn a_case_widens_its_own_confinement_and_the_report_says_so() {
    let targets = Targets::new();
    let cases = targets.dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    let out = targets.outside.display().to_string();
    let secret = targets.home.join("secret.txt").display().to_string();
    let port = targets.port();
    let script = format!(
        "echo x > {out}/allowed.txt && cat {secret} > read.txt && echo hi > /dev/tcp/127.0.0.1/{port} && echo widened"
    );
    std::fs::write(
        cases.join("widened.yaml"),
        format!(
            "name: widened
prompt: Use what the case allows.
confine: {{write: [{out}], read: [~/secret.txt], connect: [{port}]}}
agent: {{command: [bash, -c, '{script}']}}
graders:
  - final_text_contains: widened
  - file_contains: {{path: read.txt, text: {SECRET}}}
"
        ),
    )
    .unwrap();
    let report_dir = targets.dir.path().join("report");
    let output = evalhost(
        &targets.home,
        &[
            "--out",
            report_dir.to_str().unwrap(),
            cases.to_str().unwrap(),
        ],
        &[],
    );
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!(
            "\nConfinement of widened: also write {out}; also read {secret}; also connect to port {port}.\n"
        )),
        "{stdout}"
    );
    assert!(targets.outside.join("allowed.txt").exists());
    assert!(
        targets.listener.accept().is_ok(),
        "the allowed port was not reached"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        report["cases"][0]["confine"],
        serde_json::json!({"read": [secret], "write": [out], "connect": [port]})
    );
}

#[test]
fn a_kernel_without_a_feature_is_named_and_require_confinement_refuses_it() {
    let home = tempfile::tempdir().unwrap();
    let mino = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/mino");
    let mino = mino.to_str().unwrap();
    let no_namespaces = ("EVALHOST_CONFINE_NAMESPACES", "0");
    let output = evalhost(
        home.path(),
        &[mino],
        &[("EVALHOST_CONFINE_ABI", "3"), no_namespaces],
    );
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains(
        "\nConfinement missing: namespaces of each run's own (user without capabilities, PID, mount, network: turned off by EVALHOST_CONFINE_NAMESPACES=0), TCP connect rules (Landlock ABI 4), signal and abstract-socket scoping (Landlock ABI 6) (this kernel has Landlock ABI 3).\n"
    ), "{stdout}");
    let output = evalhost(
        home.path(),
        &["--require-confinement", mino],
        &[("EVALHOST_CONFINE_ABI", "0"), no_namespaces],
    );
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "Error: --require-confinement: this machine cannot give namespaces of each run's own (user without capabilities, PID, mount, network: turned off by EVALHOST_CONFINE_NAMESPACES=0), file system rules (Landlock ABI 1), truncation rules (Landlock ABI 3), TCP connect rules (Landlock ABI 4), signal and abstract-socket scoping (Landlock ABI 6) (its Landlock ABI is 0)\n"
    );
    // Namespaces are enough: with Landlock capped, nothing is missing.
    if namespaces() {
        let output = evalhost(
            home.path(),
            &["--require-confinement", mino],
            &[("EVALHOST_CONFINE_ABI", "0")],
        );
        output.assert_code(0);
    }
    // The kernel here has every feature: --require-confinement runs.
    let output = evalhost(home.path(), &["--require-confinement", mino], &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(!stdout.contains("Confinement missing"), "{stdout}");
}

#[test]
fn in_its_namespace_a_run_reaches_only_its_own_session_and_a_forged_one_is_its_endpoint_error() {
    if !namespaces() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    // The agent asks another session (a forged token) first, then its own.
    let agent = r#"
import json, os, re, urllib.request, urllib.error
own = os.environ["OPENAI_BASE_URL"]
forged = re.sub(r"/s/[^/]+/", "/s/0-00000000000000000000000000000000/", own)
def ask(base):
    body = json.dumps({"model": "scripted", "input": "hi"}).encode()
    request = urllib.request.Request(base + "/responses", body, {"content-type": "application/json"})
    try:
        return urllib.request.urlopen(request).status
    except urllib.error.HTTPError as e:
        return e.code
print("forged", ask(forged), "own", ask(own))
"#;
    std::fs::write(dir.path().join("agent.py"), agent).unwrap();
    let script = dir.path().join("agent.py");
    std::fs::write(
        cases.join("forged.yaml"),
        format!(
            "name: forged
prompt: Ask.
agent: {{command: [/usr/bin/python3, {}]}}
model:
  - text: hi
graders:
  - final_text_contains: hi
",
            script.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = evalhost(
        dir.path(),
        &["--out", out.to_str().unwrap(), cases.to_str().unwrap()],
        &[],
    );
    let log = std::fs::read_to_string(out.join("forged").join("run-1.jsonl")).unwrap();
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"type\":\"endpoint_error\""))
        .collect();
    assert_eq!(errors.len(), 1, "{log}\n{}", output.stdout());
    assert!(
        errors[0].contains("\"status\":403") && errors[0].contains("not this session's token"),
        "{}",
        errors[0]
    );
    // Its own session answered it afterwards.
    assert!(
        log.contains("\"type\":\"model_response\",\"n\":1,"),
        "{log}"
    );
}

#[test]
fn a_sandbox_bubblewrap_cannot_start_is_the_run_s_error_in_bubblewrap_s_words() {
    if !namespaces() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A bubblewrap that works for the probe, and fails as a broken system's would for a run.
    let fake = dir.path().join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\ncase \"$*\" in *--info-fd*) echo 'bwrap: Creating new namespace failed: no space left' >&2; exit 1;; esac\nexec bwrap \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(
        cases.join("agent.yaml"),
        "name: agent\nprompt: Go.\nagent: {command: [bash, -c, 'echo hi']}\ngraders:\n  - final_text_contains: hi\n",
    )
    .unwrap();
    let output = evalhost(
        dir.path(),
        &[cases.to_str().unwrap()],
        &[("EVALHOST_BWRAP", fake.to_str().unwrap())],
    );
    output.assert_code(1);
    assert!(
        output.stdout().contains(
            "agent run 1: external agent `bash` could not be started: bubblewrap did not start the sandbox: bwrap: Creating new namespace failed: no space left\n"
        ),
        "{}",
        output.stdout()
    );
}

/// Two cases run one after the other: the first leaves an `env -i` survivor writing a tick
/// every 10 ms into a directory both may write, for 0.3 s of its run and after; the second
/// says whether the ticks (`none` if there were none) still grow.
fn survivor_suite(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    let ticks = shared.join("ticks");
    let survivor = shared.join("survivor.sh");
    std::fs::write(
        &survivor,
        format!(
            "for i in $(/usr/bin/seq 1000); do echo $i >> {}; /bin/sleep 0.01; done\n",
            ticks.display()
        ),
    )
    .unwrap();
    let confine = format!("confine: {{write: [{}]}}\n", shared.display());
    std::fs::write(
        cases.join("a-survivor.yaml"),
        format!(
            "name: a-survivor\nprompt: Go.\n{confine}agent: {{command: [bash, -c, 'setsid env -i /bin/sh {s} </dev/null >/dev/null 2>&1 & sleep 0.3; echo started']}}\ngraders:\n  - final_text_contains: started\n",
            s = survivor.display()
        ),
    )
    .unwrap();
    std::fs::write(
        cases.join("b-observer.yaml"),
        format!(
            "name: b-observer\nprompt: Go.\n{confine}agent: {{command: [bash, -c, 'a=$(wc -l < {t}); sleep 0.5; b=$(wc -l < {t}); if [ \"$a\" -eq 0 ]; then echo none; elif [ \"$a\" = \"$b\" ]; then echo still; else echo growing; fi']}}\ngraders:\n  - final_text_contains: still\n",
            t = ticks.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut all = vec!["--jobs", "1", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push(cases.to_str().unwrap());
    let output = evalhost(dir.path(), &all, &[]);
    let log = std::fs::read_to_string(out.join("b-observer").join("run-1.jsonl")).unwrap();
    // Whatever survived is ended with the test's directory.
    let _ = Command::new("pkill")
        .args(["-f", survivor.to_str().unwrap()])
        .status();
    format!("{log}\n{}", output.stdout())
}

#[test]
fn a_survivor_of_a_run_is_dead_before_the_next_run_starts() {
    if !namespaces() {
        return;
    }
    let seen = survivor_suite(&[]);
    assert!(seen.contains("\"final_text\":\"still\""), "{seen}");
    // Control: unconfined, the same survivor is still writing during the next run.
    let seen = survivor_suite(&["--no-confine"]);
    assert!(seen.contains("\"final_text\":\"growing\""), "{seen}");
}
