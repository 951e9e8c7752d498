//! The images and the registry the environment tests run cases in, checked as a case author
//! relies on them: the busybox image runs evalhost's `bash` tool's shell in /app; a container
//! of the Debian image installs a tool the host lacks with `apt-get` and reaches PyPI over
//! TLS (the set-up path of a case's environment); an image pushed to the local registry comes
//! back by digest once it is gone locally; labelled containers are found and are gone once removed.

use std::process::Command;

use crate::support::docker::{
    TempImage, busybox_image, containers_labelled, debian_image, docker, docker_output,
    push_to_registry, registry, require_docker, unique_name,
};

#[test]
fn the_busybox_image_runs_the_hosts_bash_in_app_without_a_network() {
    let Some(()) = require_docker() else {
        return;
    };
    let image = busybox_image();
    let out = docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        image,
        "bash",
        "-c",
        "echo \"$BASH_VERSION\"; pwd; printf 'a\\nb\\n' | grep -c . ; id -un",
    ]);
    let host_bash = Command::new("bash")
        .args(["-c", "echo \"$BASH_VERSION\""])
        .output()
        .unwrap();
    let host_bash = String::from_utf8_lossy(&host_bash.stdout);
    assert_eq!(out, format!("{}\n/app\n2\nroot", host_bash.trim()));
}

#[test]
fn a_container_of_the_debian_image_installs_a_tool_the_host_lacks_and_reaches_pypi() {
    let Some(()) = require_docker() else {
        return;
    };
    let on_host = Command::new("sh")
        .args(["-c", "command -v figlet"])
        .output()
        .unwrap();
    assert!(
        !on_host.status.success(),
        "this test proves a container gets a tool the host lacks, but the host has figlet: {}",
        String::from_utf8_lossy(&on_host.stdout)
    );
    let image = debian_image();
    // The default network (a case's set-up commands), as a Dockerfile's RUN would.
    let script = "set -e
        if command -v figlet; then echo 'figlet is in the image already'; exit 3; fi
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends figlet curl >/dev/null 2>&1
        figlet -f standard ok
        pwd
        curl -sS -o /dev/null -w '%{http_code}\\n' https://pypi.org/simple/pip/";
    let output = docker_output(&["run", "--rm", image, "bash", "-c", script]);
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{out}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    // figlet's standard font draws the `o` of "ok" over six lines, ending in `\___/`.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8, "{out}");
    assert!(lines[4].starts_with(" \\___/"), "{out}");
    // The working directory, and TLS through the host's CA bundle (without `ca-certificates`).
    assert_eq!(lines[6..], ["/app", "200"], "{out}");
}

#[test]
fn an_image_pushed_to_the_local_registry_is_pulled_back_by_digest() {
    let Some(()) = require_docker() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(registry) = registry(dir.path()) else {
        return;
    };
    // An image of its own (a file no other image has), so the pull cannot be served locally.
    let name = unique_name("pushed");
    let image = TempImage(format!("{name}:1"));
    let marker = format!("pushed as {name}");
    let container = docker(&[
        "create",
        busybox_image(),
        "sh",
        "-c",
        &format!("echo '{marker}' >/marker"),
    ]);
    docker(&["start", "--attach", &container]);
    docker(&["commit", &container, &image.0]);
    docker(&["rm", &container]);

    let (by_tag, by_digest) = push_to_registry(&registry, &image.0);
    assert_eq!(by_tag, format!("{}/{name}:1", registry.host));
    assert!(
        by_digest.starts_with(&format!("{}/{name}@sha256:", registry.host)),
        "{by_digest}"
    );
    let id = docker(&["image", "inspect", "--format", "{{.Id}}", &by_tag]);
    // Gone locally: every tag of it removed, so the image itself is.
    docker(&["rmi", &by_tag, &image.0]);
    assert!(!docker_output(&["image", "inspect", &id]).status.success());

    docker(&["pull", "--quiet", &by_digest]);
    let pulled = TempImage(by_digest.clone());
    assert_eq!(
        docker(&["image", "inspect", "--format", "{{.Id}}", &pulled.0]),
        id
    );
    let out = docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        &pulled.0,
        "cat",
        "/marker",
    ]);
    assert_eq!(out, marker);
}

#[test]
fn containers_are_found_by_label_until_removed() {
    let Some(()) = require_docker() else {
        return;
    };
    // A key of this test's own: evalhost's reaper looks at `evalhost.*` labels.
    let label = format!(
        "evalhost-test.images={}",
        unique_name("run").replace('/', "-")
    );
    let other = docker(&[
        "create",
        "--label",
        "evalhost-test.images=another",
        busybox_image(),
        "true",
    ]);
    assert_eq!(containers_labelled(&label), Vec::<String>::new());
    let created = docker(&["create", "--label", &label, busybox_image(), "true"]);
    let started = docker(&[
        "run",
        "--detach",
        "--label",
        &label,
        busybox_image(),
        "sleep",
        "30",
    ]);
    let mut found = containers_labelled(&label);
    found.sort();
    let mut expected = vec![created.clone(), started.clone()];
    expected.sort();
    docker(&["rm", "--force", &created, &started, &other]);
    assert_eq!(found, expected);
    assert_eq!(containers_labelled(&label), Vec::<String>::new());
}
