//! A real Docker for the environment tests (Debian's `docker.io`: `dockerd` as root, as
//! `.ci/run` starts it) and the images they run, built from this machine's files and never
//! pulled (no registry on the internet is reachable from CI):
//! - [`busybox_image`]: busybox (Debian's `busybox-static`) with its applets, the host's
//!   `bash` and the libraries `ldd` lists for it, so evalhost's `bash` tool works; seconds to build.
//! - [`debian_image`]: a Debian bookworm minbase root file system from `debootstrap` (about
//!   half a minute, then cached by dockerd), trusting the host's CA bundle so `pip` and `npm`
//!   reach their registries through this machine's TLS proxy, and `apt-get` works from Debian's mirror.
//!
//! Each image is built once: a process checks for it under a per-image file lock (so parallel
//! tests and test processes build it once) and reuses it when its recipe label matches, and
//! a build is imported under a unique tag and only then tagged with its name (a reader never
//! sees half an image). Digest pins push to the `docker-registry` of [`super::registry`].
//! Without `docker info` answering a test is skipped, unless `EVALHOST_REQUIRE_TOOLCHAINS=1`.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use super::registry::TestRegistry;

/// What the images and `dockerd` need, as `.ci/run` installs and starts them.
pub const DOCKER_INSTALL: &str = "apt-get install docker.io busybox-static debootstrap, then start `dockerd` as root (as .ci/run does)";

/// The tiny image: busybox and bash, `WORKDIR /app`.
pub const BUSYBOX_IMAGE: &str = "evalhost-test/busybox:1";
/// The real Debian: a minbase root file system, `WORKDIR /app`.
pub const DEBIAN_IMAGE: &str = "evalhost-test/debian:bookworm";

/// The label naming the recipe an image was built by: an image of another recipe (an older
/// helper's, or one made by hand under the same name) is rebuilt rather than trusted.
const RECIPE_LABEL: &str = "evalhost.test.recipe";
const BUSYBOX_RECIPE: &str = "busybox-bash-1";
const DEBIAN_RECIPE: &str = "debian-bookworm-minbase-1";

/// The host's CA bundle: this machine reaches PyPI, npm and crates.io through a TLS proxy
/// whose CA is only in it (docs: ../shared/NOTES-containers.md).
const HOST_CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const DEBIAN_MIRROR: &str = "http://deb.debian.org/debian";

fn required() -> bool {
    std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1")
}

/// Whether `docker info` answers (a daemon is running and this user may use it); asked once.
pub fn docker_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("docker")
            .arg("info")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `Some(())` when Docker answers; otherwise skips the test (`None`, with a note), or,
/// under `EVALHOST_REQUIRE_TOOLCHAINS=1`, fails it.
pub fn require_docker() -> Option<()> {
    if docker_available() {
        return Some(());
    }
    if required() {
        panic!("Docker is required (EVALHOST_REQUIRE_TOOLCHAINS=1): {DOCKER_INSTALL}");
    }
    eprintln!("skipped: `docker info` fails (no dockerd running, or no access): {DOCKER_INSTALL}");
    None
}

/// `docker ARGS`, whatever its exit.
pub fn docker_output(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the docker client runs")
}

/// `docker ARGS`, which must succeed: its stdout, trimmed.
pub fn docker(args: &[&str]) -> String {
    let output = docker_output(args);
    assert!(
        output.status.success(),
        "docker {} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// [`BUSYBOX_IMAGE`], built on first use. Call [`require_docker`] first.
pub fn busybox_image() -> &'static str {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let changes = ["WORKDIR /app".to_owned(), format!("ENV PATH={PATH}")];
        ensure_image(BUSYBOX_IMAGE, BUSYBOX_RECIPE, &changes, busybox_root);
    });
    BUSYBOX_IMAGE
}

/// [`DEBIAN_IMAGE`], built on first use (`debootstrap`: about half a minute), then kept by
/// dockerd for later processes. Call [`require_docker`] first.
pub fn debian_image() -> &'static str {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let changes = [
            "WORKDIR /app".to_owned(),
            format!("ENV PATH={PATH}"),
            format!("ENV SSL_CERT_FILE={HOST_CA_BUNDLE}"),
            format!("ENV PIP_CERT={HOST_CA_BUNDLE}"),
            format!("ENV NODE_EXTRA_CA_CERTS={HOST_CA_BUNDLE}"),
        ];
        ensure_image(DEBIAN_IMAGE, DEBIAN_RECIPE, &changes, debian_root);
    });
    DEBIAN_IMAGE
}

/// The recipe label of the local image `name`, if there is one.
fn recipe_of(name: &str) -> Option<String> {
    let output = docker_output(&[
        "image",
        "inspect",
        "--format",
        &format!("{{{{index .Config.Labels \"{RECIPE_LABEL}\"}}}}"),
        name,
    ]);
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Make sure the local image `name` exists, built by `recipe`: else fill a root file system
/// with `fill` and `docker import` it with `changes` (Dockerfile instructions).
fn ensure_image(name: &str, recipe: &str, changes: &[String], fill: fn(&Path)) {
    if recipe_of(name).as_deref() == Some(recipe) {
        return;
    }
    let lock_path = std::env::temp_dir().join(format!(
        "evalhost-test-image-{}.lock",
        name.replace(['/', ':'], "-")
    ));
    let lock = std::fs::File::create(&lock_path)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", lock_path.display()));
    lock.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}: {e}", lock_path.display()));
    // Another process may have built it while this one waited.
    if recipe_of(name).as_deref() == Some(recipe) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    fill(&root);

    let building = format!("{}:1", unique_name("building"));
    let mut import = Command::new("docker");
    import.arg("import");
    for change in changes
        .iter()
        .cloned()
        .chain([format!("LABEL {RECIPE_LABEL}={recipe}")])
    {
        import.arg("--change").arg(change);
    }
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(&root)
        .args(["--numeric-owner", "-cf", "-", "."])
        .stdout(Stdio::piped())
        .spawn()
        .expect("tar runs");
    let imported = import
        .args(["-", &building])
        .stdin(tar.stdout.take().unwrap())
        .output()
        .expect("the docker client runs");
    let tarred = tar.wait().unwrap();
    assert!(
        tarred.success() && imported.status.success(),
        "building {name}: tar ({tarred}) | docker import ({}) failed: {}",
        imported.status,
        String::from_utf8_lossy(&imported.stderr)
    );
    docker(&["tag", &building, name]);
    docker(&["rmi", &building]);
}

/// Copy `binary` and every library `ldd` lists for it into `root` at the same paths.
fn copy_with_libraries(root: &Path, binary: &Path) {
    let output = Command::new("ldd").arg(binary).output().expect("ldd runs");
    // A static binary: ldd says "not a dynamic executable" and fails.
    let listing = String::from_utf8_lossy(&output.stdout);
    let libraries = listing
        .split_whitespace()
        .filter(|word| word.starts_with('/'))
        .map(Path::new);
    for file in std::iter::once(binary).chain(libraries) {
        let target = root.join(file.strip_prefix("/").unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        // Follows symbolic links: the image gets the file under the name the loader asks for.
        std::fs::copy(file, &target)
            .unwrap_or_else(|e| panic!("cannot copy {} into the image: {e}", file.display()));
    }
}

/// busybox (its applets as links in /bin), bash and its libraries, /etc/passwd with root
/// and nobody, /tmp, /app.
fn busybox_root(root: &Path) {
    let busybox = Path::new("/bin/busybox");
    let bash = Path::new("/bin/bash");
    for (file, package) in [(busybox, "busybox-static"), (bash, "bash")] {
        assert!(
            file.exists(),
            "{} is missing to build {BUSYBOX_IMAGE}: apt-get install {package}",
            file.display()
        );
    }
    let bin = root.join("bin");
    copy_with_libraries(root, busybox);
    copy_with_libraries(root, bash);
    let applets = Command::new(busybox)
        .arg("--list")
        .output()
        .expect("busybox runs");
    for applet in String::from_utf8_lossy(&applets.stdout).lines() {
        let link = bin.join(applet);
        if !applet.is_empty() && !applet.contains('/') && !link.exists() {
            std::os::unix::fs::symlink("busybox", link).unwrap();
        }
    }
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(
        etc.join("passwd"),
        "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
    )
    .unwrap();
    std::fs::write(etc.join("group"), "root:x:0:\nnogroup:x:65534:\n").unwrap();
    for dir in ["app", "root", "tmp"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    set_mode(&root.join("tmp"), 0o1777);
}

/// `debootstrap --variant=minbase bookworm`, without the downloaded packages and package
/// lists (`apt-get update` first, as with Debian's own images), with the host's CA bundle
/// where TLS clients look for it (also in /usr/local/share/ca-certificates, so installing
/// `ca-certificates` in a container keeps it), and /app.
fn debian_root(root: &Path) {
    let have = Command::new("debootstrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        have,
        "debootstrap is missing to build {DEBIAN_IMAGE}: apt-get install debootstrap"
    );
    let log = root.with_file_name("debootstrap.log");
    let status = Command::new("debootstrap")
        .args(["--variant=minbase", "bookworm"])
        .arg(root)
        .arg(DEBIAN_MIRROR)
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::from(
            std::fs::File::create(log.with_extension("err")).unwrap(),
        ))
        .status()
        .expect("debootstrap runs");
    assert!(
        status.success(),
        "debootstrap --variant=minbase bookworm {} {DEBIAN_MIRROR} failed ({status}; it needs root):\n{}\n{}",
        root.display(),
        tail(&log),
        tail(&log.with_extension("err"))
    );
    for dir in ["var/cache/apt/archives", "var/lib/apt/lists"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() && path.file_name().is_some_and(|n| n != "lock") {
                std::fs::remove_file(path).unwrap();
            }
        }
    }
    std::fs::write(
        root.join("etc/apt/sources.list"),
        format!("deb {DEBIAN_MIRROR} bookworm main\n"),
    )
    .unwrap();
    if Path::new(HOST_CA_BUNDLE).exists() {
        for target in [
            HOST_CA_BUNDLE,
            "/usr/local/share/ca-certificates/host-ca-bundle.crt",
        ] {
            let target = root.join(target.strip_prefix('/').unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(HOST_CA_BUNDLE, target).unwrap();
        }
    }
    std::fs::create_dir_all(root.join("app")).unwrap();
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The last lines of a log file, for a failure message.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// A registry for digest pins: [`TestRegistry`] without authentication, storing under
/// `dir`. dockerd talks plain HTTP to it because it treats 127.0.0.0/8 as insecure by
/// default (`docker info`: "Insecure Registries: 127.0.0.0/8").
pub fn registry(dir: &Path) -> Option<TestRegistry> {
    TestRegistry::start(dir, None)
}

/// Tag the local `image` (`name[:tag]`) into `registry` and `docker push` it: its
/// references there by tag and by digest (`127.0.0.1:PORT/name:tag`,
/// `127.0.0.1:PORT/name@sha256:...`).
pub fn push_to_registry(registry: &TestRegistry, image: &str) -> (String, String) {
    let (name, tag) = match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, tag),
        _ => (image, "latest"),
    };
    let repository = format!("{}/{name}", registry.host);
    let by_tag = format!("{repository}:{tag}");
    docker(&["tag", image, &by_tag]);
    docker(&["push", &by_tag]);
    let digests = docker(&[
        "image",
        "inspect",
        "--format",
        "{{range .RepoDigests}}{{println .}}{{end}}",
        &by_tag,
    ]);
    let by_digest = digests
        .lines()
        .find(|line| line.starts_with(&format!("{repository}@sha256:")))
        .unwrap_or_else(|| panic!("no digest in {repository} after pushing {image}: {digests}"))
        .to_owned();
    (by_tag, by_digest)
}

/// The ids of all containers, running or not, carrying `label` (`key` or `key=value`), e.g.
/// `evalhost.run=RUN`: for "no container outlives a run".
pub fn containers_labelled(label: &str) -> Vec<String> {
    docker(&[
        "ps",
        "--all",
        "--quiet",
        "--no-trunc",
        "--filter",
        &format!("label={label}"),
    ])
    .lines()
    .map(str::to_owned)
    .collect()
}

/// A local image a test made, removed (with its tags) when dropped.
pub struct TempImage(pub String);

impl Drop for TempImage {
    fn drop(&mut self) {
        let _ = docker_output(&["rmi", "--force", &self.0]);
    }
}

/// A name no other test or process uses: `evalhost-test/PREFIX-PID-NANOS`.
pub fn unique_name(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("evalhost-test/{prefix}-{}-{nanos}", std::process::id())
}
