//! Images pinned by digest: a case naming `NAME@sha256:…` runs the image a real registry
//! (Debian's `docker-registry` on 127.0.0.1) serves under that digest, pulled when missing,
//! and the report carries it; a tag that names another image than the case was recorded
//! with (`digest:`) is a warning, refused under `--locked-images`.

use super::run::{first_run, run_in};
use crate::support::docker::{
    TempImage, busybox_image, docker, push_to_registry, registry, require_docker, unique_name,
};

const CASE: &str = "name: pinned
prompt: Say where.
approve: all
environment:
  image: IMAGE
DIGEST
model:
  - call: {tool: bash, arguments: {command: \"cat /etc/pinned > where.txt\"}}
  - text: done
graders:
  - file_contains: {path: where.txt, text: MARK}
";

/// A local image of busybox with `/etc/pinned` holding `mark`.
fn marked(name: &str, mark: &str) -> TempImage {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Dockerfile"),
        format!("FROM {}\nRUN echo {mark} > /etc/pinned\n", busybox_image()),
    )
    .unwrap();
    docker(&["build", "-q", "-t", name, &dir.path().display().to_string()]);
    TempImage(name.to_owned())
}

#[test]
fn a_digest_pin_runs_the_registrys_image_pulled_by_digest() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(registry) = registry(&dir.path().join("registry")) else {
        return;
    };
    let name = format!("{}:1", unique_name("pinned"));
    let _local = marked(&name, "first");
    let (by_tag, by_digest) = push_to_registry(&registry, &name);
    let _pushed = TempImage(by_tag.clone());
    // Only the registry has it now: the run pulls it by digest.
    docker(&["rmi", "-f", &by_tag]);
    let yaml = CASE
        .replace("IMAGE", &by_digest)
        .replace("DIGEST\n", "")
        .replace("MARK", "first");
    std::fs::write(dir.path().join("pinned.yaml"), yaml).unwrap();
    let (outcome, report) = run_in(dir.path(), &[], &["pinned.yaml"]);
    let _pulled = TempImage(by_digest.clone());
    outcome.assert_code(0);
    let run = first_run(&report, "pinned");
    assert_eq!(run["image"]["source"], by_digest.as_str());
    assert_eq!(run["image"]["repo_digest"], by_digest.as_str());
}

#[test]
fn a_moved_tag_is_a_warning_and_refused_under_locked_images() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}:1", unique_name("moving"));
    let first = marked(&name, "first");
    let recorded = docker(&["image", "inspect", "-f", "{{.Id}}", &first.0]);
    let case = |mark: &str| {
        CASE.replace("IMAGE", &name)
            .replace("DIGEST", &format!("  digest: \"{recorded}\""))
            .replace("MARK", mark)
    };
    std::fs::write(dir.path().join("pinned.yaml"), case("first")).unwrap();
    // Control: the tag still names the recorded image: no warning.
    let (outcome, report) = run_in(dir.path(), &["--locked-images"], &["pinned.yaml"]);
    outcome.assert_code(0);
    assert_eq!(
        first_run(&report, "pinned")["image"]["digest"],
        recorded.as_str()
    );
    assert!(
        !outcome.stdout().contains("the tag moved"),
        "{}",
        outcome.stdout()
    );

    // The tag moves to another image.
    let _second = marked(&name, "second");
    std::fs::write(dir.path().join("pinned.yaml"), case("second")).unwrap();
    let (outcome, report) = run_in(dir.path(), &[], &["pinned.yaml"]);
    outcome.assert_code(0);
    let run = first_run(&report, "pinned");
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains(&format!(
            "not {recorded} as the case was recorded with (the tag moved"
        )),
        "{warnings}"
    );
    assert_ne!(run["image"]["digest"], recorded.as_str());

    let (outcome, report) = run_in(dir.path(), &["--locked-images"], &["pinned.yaml"]);
    outcome.assert_code(1);
    let error = first_run(&report, "pinned")["error"].to_string();
    assert!(
        error.contains("the tag moved; refused under --locked-images"),
        "{error}"
    );
}
