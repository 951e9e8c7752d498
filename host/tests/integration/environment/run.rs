//! A case's runs in its environment's container, through `evalhost run` with a real dockerd:
//! the set-up installs a tool the host lacks and the agent uses it; the workspace starts with
//! the image's working directory; the report names the image's digest; and, from the
//! attacker's side, the network rules (the endpoint reachable, another loopback port and the
//! outside — an address of the host beyond its loopback — not), each with a control that
//! shows the test can fail.

use std::path::Path;

use serde_json::Value;

use crate::support::docker::{debian_image, require_docker};
use crate::support::evalhost::{Evalhost, Output};

/// Run `cases` (files in `dir`) with `--out dir/out`; the report.
pub(super) fn run_in(dir: &Path, extra: &[&str], cases: &[&str]) -> (Output, Value) {
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let outcome = Evalhost::new()
        .args(["run", "--history", "off", "--out"])
        .arg(&out)
        .args(extra)
        .args(cases.iter().map(|c| dir.join(c)))
        .current_dir(dir)
        .run();
    let report = std::fs::read_to_string(out.join("report.json"))
        .map(|text| serde_json::from_str(&text).unwrap())
        .unwrap_or(Value::Null);
    (outcome, report)
}

/// The first run of case `name` in `report`.
pub(super) fn first_run<'a>(report: &'a Value, name: &str) -> &'a Value {
    let case = report["cases"]
        .as_array()
        .and_then(|cases| cases.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no case {name} in {report}"));
    &case["runs"][0]
}

const FIGLET: &str = "name: figlet
prompt: Print a banner.
approve: all
environment:
  image: IMAGE
  setup:
    - apt-get update -qq && apt-get install -y -qq --no-install-recommends figlet >/dev/null
  network: none
model:
  - call: {tool: bash, arguments: {command: \"figlet ok > banner.txt; pwd > where.txt; cat seeded.txt\"}}
  - text: done
workspace:
  files:
    seeded.txt: from the case
graders:
  - result_status: {call: 1, status: completed}
  - file_contains: {path: banner.txt, text: \"|_|\"}
  - file_contains: {path: where.txt, text: /app}
";

#[test]
fn a_set_up_installs_a_tool_the_host_lacks_and_the_agent_uses_it() {
    let Some(()) = require_docker() else { return };
    assert!(
        !Path::new("/usr/bin/figlet").exists(),
        "this test needs a host without figlet"
    );
    let dir = tempfile::tempdir().unwrap();
    let image = debian_image();
    std::fs::write(
        dir.path().join("figlet.yaml"),
        FIGLET.replace("IMAGE", image),
    )
    .unwrap();
    let html = dir.path().join("report.html");
    let (outcome, report) = run_in(
        dir.path(),
        &["--html", html.to_str().unwrap()],
        &["figlet.yaml"],
    );
    outcome.assert_code(0);
    assert!(
        outcome
            .stdout()
            .contains(&format!("Environment of figlet: {image} (sha256:")),
        "{}",
        outcome.stdout()
    );
    let run = first_run(&report, "figlet");
    assert_eq!(run["image"]["source"], image);
    let digest = run["image"]["digest"].as_str().unwrap();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!(
            r#"image <code>{image}</code> · <code title="{digest}">{}</code>"#,
            &digest[..19]
        )),
        "the HTML report names the run's image"
    );
    // The digest is the named image's (what a case pins); the set-up's image is what ran.
    let base = crate::support::docker::docker(&["image", "inspect", "-f", "{{.Id}}", image]);
    assert_eq!(digest, base);
    let setup = run["image"]["setup_digest"].as_str().unwrap();
    assert!(setup.starts_with("sha256:") && setup != base, "{setup}");
    let banner =
        std::fs::read_to_string(dir.path().join("out/figlet/run-1.workspace/banner.txt")).unwrap();
    assert!(banner.contains("|_|"), "{banner}");
    // Pinned to that digest (as `record --live` writes it), the case with its set-up is the
    // same image: no moved tag, also under --locked-images.
    std::fs::write(
        dir.path().join("figlet.yaml"),
        FIGLET.replace("IMAGE", &format!("{image}\n  digest: \"{digest}\"")),
    )
    .unwrap();
    let (outcome, _) = run_in(dir.path(), &["--locked-images"], &["figlet.yaml"]);
    outcome.assert_code(0);

    // Control: without the set-up, figlet is missing in the image as on the host.
    let plain = FIGLET
        .replace("IMAGE", image)
        .replace("  setup:\n    - apt-get update -qq && apt-get install -y -qq --no-install-recommends figlet >/dev/null\n", "");
    std::fs::write(dir.path().join("figlet.yaml"), plain).unwrap();
    let (outcome, _) = run_in(dir.path(), &[], &["figlet.yaml"]);
    outcome.assert_code(1);
    outcome.assert_stdout_contains("file_contains banner.txt");
    let log = std::fs::read_to_string(dir.path().join("out/figlet/run-1.jsonl")).unwrap();
    assert!(log.contains("figlet: command not found"), "{log}");
}

/// An agent in bash alone: one Responses request to the endpoint over `/dev/tcp`, then a
/// connection to another port of loopback and one to the outside; what it saw goes to
/// `net.txt`.
const AGENT: &str = r#"#!/bin/bash
url=$OPENAI_BASE_URL
hostport=${url#http://}; hostport=${hostport%%/*}
path=/${url#http://*/}/responses
if exec 3<>/dev/tcp/${hostport%:*}/${hostport#*:}; then
  body='{"model":"scripted","input":"hi","stream":false}'
  printf 'POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "$path" ${#body} "$body" >&3
  grep -q 'hello from the model' <&3 && echo "endpoint answered" >> net.txt
else
  echo "endpoint unreachable" >> net.txt
fi
(exec 4<>/dev/tcp/127.0.0.1/$OTHER_PORT) 2>/dev/null && echo "reached port $OTHER_PORT" >> net.txt || echo "no port $OTHER_PORT" >> net.txt
timeout 3 bash -c "exec 5<>/dev/tcp/$OUTSIDE" 2>/dev/null && echo "reached the outside" >> net.txt || echo "no outside" >> net.txt
[ -S /var/run/docker.sock ] && echo "docker socket" >> net.txt || echo "no docker socket" >> net.txt
grep CapEff /proc/self/status | tr -d '\t' >> net.txt
cat /etc/evalhost-where >> net.txt 2>/dev/null || echo "on the host" >> net.txt
"#;

const NETWORK: &str = "name: network
prompt: hi
environment:
  image: IMAGE
  setup: [\"echo in the container > /etc/evalhost-where\"]
  network: NETWORK
agent: {command: [./agent.sh]}
model:
  - text: hello from the model
graders:
  - final_text_contains: hello from the model
";

#[test]
fn the_endpoint_is_reachable_from_the_container_and_nothing_else() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent.sh");
    std::fs::write(&agent, AGENT).unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // A service on the host's loopback the agent must not reach.
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let case = |network: &str| {
        NETWORK
            .replace("IMAGE", debian_image())
            .replace("NETWORK", network)
    };
    let net = |dir: &Path| {
        std::fs::read_to_string(dir.join("out/network/run-1.workspace/net.txt")).unwrap()
    };
    // And one beyond the loopback: on every interface, reached at one of the host's own
    // addresses that is not loopback (`hostname -I`).
    let outside = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let addresses = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .unwrap();
    let gateway = String::from_utf8_lossy(&addresses.stdout)
        .split_whitespace()
        .find(|a| {
            a.parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| !ip.is_loopback())
        })
        .expect("the host has an IPv4 address beyond the loopback")
        .to_owned();
    let outside_var = format!("OUTSIDE={gateway}/{}", outside.local_addr().unwrap().port());
    let port_var = format!("OTHER_PORT={port}");
    // The agent's variables come from the case; the port is told through a seeded file.
    let with_port = |yaml: String| {
        yaml.replace(
            "agent: {command: [./agent.sh]}",
            &format!("agent: {{command: [env, {port_var}, {outside_var}, ./agent.sh]}}"),
        )
    };

    std::fs::write(dir.path().join("network.yaml"), with_port(case("endpoint"))).unwrap();
    let (outcome, _) = run_in(dir.path(), &[], &["network.yaml"]);
    outcome.assert_code(0);
    let seen = net(dir.path());
    assert_eq!(
        seen,
        format!(
            "endpoint answered\nno port {port}\nno outside\nno docker socket\nCapEff:0000000000000000\nin the container\n"
        ),
        "{}",
        outcome.stdout()
    );

    // `network: none`: not even the endpoint.
    std::fs::write(dir.path().join("network.yaml"), with_port(case("none"))).unwrap();
    let (outcome, _) = run_in(dir.path(), &[], &["network.yaml"]);
    assert!(
        net(dir.path()).starts_with("endpoint unreachable\n"),
        "{}",
        outcome.stdout()
    );

    // Control: the same agent on the host, unconfined, reaches the port (the test can fail).
    let host = case("endpoint").replace(
        &format!("environment:\n  image: {}\n  setup: [\"echo in the container > /etc/evalhost-where\"]\n  network: endpoint\n", debian_image()),
        "",
    );
    std::fs::write(dir.path().join("network.yaml"), with_port(host)).unwrap();
    let (outcome, _) = run_in(dir.path(), &["--no-confine"], &["network.yaml"]);
    outcome.assert_code(0);
    // evalhost runs as root here, beside dockerd's socket: on the host, unconfined, the
    // agent sees both.
    let seen = net(dir.path());
    assert!(
        seen.starts_with(&format!(
            "endpoint answered\nreached port {port}\nreached the outside\ndocker socket\nCapEff:"
        )) && !seen.contains("CapEff:0000000000000000")
            && seen.ends_with("on the host\n"),
        "{seen}"
    );
    drop((other, outside));
}

/// A case `name` whose agent runs one bash `command` in a container of `environment` (the
/// lines under `environment:`), passing when the command completes.
pub(super) fn bash_case(name: &str, environment: &str, command: &str) -> String {
    format!(
        "name: {name}\nprompt: Go.\napprove: all\nenvironment:\n{environment}model:\n  - call: {{tool: bash, arguments: {{command: {}}}}}\n  - text: done\ngraders:\n  - result_status: {{call: 1, status: completed}}\n",
        serde_json::Value::from(command)
    )
}

/// The output of the first tool call of case `name`'s first run, kept under `dir/out`.
pub(super) fn first_tool_output(dir: &Path, name: &str) -> String {
    let log = std::fs::read_to_string(dir.join(format!("out/{name}/run-1.jsonl"))).unwrap();
    log.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|record| record["type"] == "tool_result")
        .map(|record| record["output"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no tool result in {log}"))
}

#[test]
fn evalhosts_own_agent_reaches_nothing_from_the_container() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let command = format!(
        "[ -S /var/run/docker.sock ] && echo docker-socket || echo no-docker-socket; grep CapEff /proc/self/status; (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached-{port} || echo unreached-{port}; set -- /proc/[0-9]*; echo processes $#"
    );
    let in_busybox = format!("  image: {}\n", crate::support::docker::busybox_image());
    let case = bash_case("probe", &in_busybox, &command);
    let result = |dir: &Path| first_tool_output(dir, "probe");
    std::fs::write(dir.path().join("probe.yaml"), &case).unwrap();
    let (outcome, _) = run_in(dir.path(), &[], &["probe.yaml"]);
    outcome.assert_code(0);
    let seen = result(dir.path());
    let (probes, processes) = seen.rsplit_once("processes ").unwrap();
    assert_eq!(
        probes,
        format!("no-docker-socket\nCapEff:\t0000000000000000\nunreached-{port}\n")
    );
    // Its own processes only (the engine's init, the holder, this call's): evalhost and its
    // environment are not in its /proc.
    let processes: usize = processes.trim().parse().unwrap();
    assert!(processes <= 8, "{seen}");

    // Control: the same command on the host, unconfined, finds the socket, the port and the
    // machine's processes.
    let host = case.replace(&format!("environment:\n{in_busybox}"), "");
    std::fs::write(dir.path().join("probe.yaml"), host).unwrap();
    let (outcome, _) = run_in(dir.path(), &["--no-confine"], &["probe.yaml"]);
    outcome.assert_code(0);
    let seen = result(dir.path());
    let (probes, processes) = seen.rsplit_once("processes ").unwrap();
    assert!(
        probes.starts_with("docker-socket\n") && probes.ends_with(&format!("reached-{port}\n")),
        "{seen}"
    );
    assert!(processes.trim().parse::<usize>().unwrap() > 8, "{seen}");
    drop(other);
}

const BROKEN: &str = "name: broken
prompt: Go.
environment:
  ENVIRONMENT
model:
  - text: ok
graders:
  - final_text_contains: ok
";

#[test]
fn an_environment_that_cannot_be_made_is_a_named_run_error() {
    let dir = tempfile::tempdir().unwrap();
    let write = |environment: &str| {
        std::fs::write(
            dir.path().join("broken.yaml"),
            BROKEN.replace("ENVIRONMENT", environment),
        )
        .unwrap();
    };
    // No engine at all: named, with what to do (no Docker needed for this one).
    write("image: debian:bookworm");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let outcome = Evalhost::new()
        .args(["run", "--history", "off"])
        .arg(dir.path().join("broken.yaml"))
        .env("PATH", &bin)
        .env_remove("EVALHOST_DOCKER")
        .run();
    outcome.assert_code(1);
    outcome.assert_stdout_contains(
        "broken run 1: case broken: environment: no container engine: neither `docker` nor `podman` is on PATH",
    );

    let Some(()) = require_docker() else { return };
    // An image no registry serves (nothing on the internet is reachable either).
    write("image: 127.0.0.1:9/evalhost-test/missing:1");
    let (outcome, _) = run_in(dir.path(), &[], &["broken.yaml"]);
    outcome.assert_code(1);
    outcome.assert_stdout_contains(
        "broken run 1: case broken: environment: pulling image 127.0.0.1:9/evalhost-test/missing:1 failed (exit status: 1): ",
    );
    // A set-up command that fails: its output is in the error.
    write(&format!(
        "image: {}\n  setup: [\"echo no such tool >&2; exit 3\"]",
        crate::support::docker::busybox_image()
    ));
    let (outcome, _) = run_in(dir.path(), &[], &["broken.yaml"]);
    outcome.assert_code(1);
    outcome.assert_stdout_contains(
        "broken run 1: case broken: environment: the environment's set-up (echo no such tool >&2; exit 3) failed (exit status: 3): no such tool",
    );
}

#[test]
fn environment_on_the_command_line_runs_the_cases_that_name_none_in_it() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let image = crate::support::docker::busybox_image();
    // The case names no environment; the second one names its own, which stands.
    std::fs::write(
        dir.path().join("probe.yaml"),
        bash_case("probe", "", "pwd > where.txt").replace("environment:\n", ""),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("own.yaml"),
        bash_case(
            "own",
            &format!("  image: {}\n", debian_image()),
            "pwd > where.txt",
        ),
    )
    .unwrap();
    let (outcome, report) = run_in(
        dir.path(),
        &["--environment", image],
        &["probe.yaml", "own.yaml"],
    );
    outcome.assert_code(0);
    assert_eq!(first_run(&report, "probe")["image"]["source"], image);
    assert_eq!(first_run(&report, "own")["image"]["source"], debian_image());
    let where_ = std::fs::read_to_string(dir.path().join("out/probe/run-1.workspace/where.txt"));
    assert_eq!(where_.unwrap(), "/app\n", "the image's WORKDIR");

    // Control: without the flag the case runs on the host, in its temp workspace.
    let (outcome, report) = run_in(dir.path(), &[], &["probe.yaml"]);
    outcome.assert_code(0);
    assert!(first_run(&report, "probe").get("image").is_none());
    let where_ = std::fs::read_to_string(dir.path().join("out/probe/run-1.workspace/where.txt"));
    assert!(where_.unwrap().ends_with("/workspace\n"));
}

/// The agent leaves a process that escapes its call (`setsid env -i`: no marker, no group)
/// and keeps writing a full reward where the verifier writes its own.
const FORGER: &str = "name: forger
task: ./task
model:
  - call: {tool: bash, arguments: {command: \"mkdir -p /tmp/f; setsid env -i sh -c 'while :; do echo 1 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.1; done' >/dev/null 2>&1 < /dev/null &\"}}
  - text: done
";

#[test]
fn nothing_the_agent_left_running_forges_the_verifiers_reward() {
    let Some(()) = require_docker() else { return };
    debian_image();
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(crate::support::common::repo().join("cases/harbor/hello-world"))
        .arg(&task)
        .status()
        .unwrap();
    assert!(copied.success());
    // The verifier gives 0, then waits: a forger still running would overwrite it with 1.
    std::fs::write(
        task.join("tests/test.sh"),
        "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\nsleep 1\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("forger.yaml"), FORGER).unwrap();
    let (outcome, report) = run_in(dir.path(), &[], &["forger.yaml"]);
    outcome.assert_code(1);
    let verdict = first_run(&report, "forger")["verdicts"][0].to_string();
    assert!(verdict.contains("reward 0"), "{verdict}");
}

const BUILT: &str = "name: built
prompt: Add a file.
approve: all
environment:
  build: env/Dockerfile
model:
  - call: {tool: bash, arguments: {command: \"cat readme.txt > copy.txt\"}}
  - text: done
graders:
  - file_contains: {path: copy.txt, text: from the image}
  - workspace_diff: {created: [copy.txt]}
";

#[test]
fn a_built_images_working_directory_starts_the_workspace_and_is_not_the_agents_work() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("env")).unwrap();
    std::fs::write(
        dir.path().join("env/Dockerfile"),
        format!(
            "FROM {}\nRUN mkdir -p /app && echo from the image > /app/readme.txt\nWORKDIR /app\n",
            crate::support::docker::busybox_image()
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("built.yaml"), BUILT).unwrap();
    let (outcome, report) = run_in(dir.path(), &[], &["built.yaml"]);
    outcome.assert_code(0);
    let run = first_run(&report, "built");
    let source = run["image"]["source"].as_str().unwrap();
    assert!(
        source.starts_with("build ") && source.ends_with("env/Dockerfile"),
        "{source}"
    );
    // Control: the image's file counts as the agent's when the grader says it made it.
    std::fs::write(
        dir.path().join("built.yaml"),
        BUILT.replace("created: [copy.txt]", "created: [copy.txt, readme.txt]"),
    )
    .unwrap();
    let (outcome, _) = run_in(dir.path(), &[], &["built.yaml"]);
    outcome.assert_code(1);
    outcome.assert_stdout_contains("workspace_diff");
}
