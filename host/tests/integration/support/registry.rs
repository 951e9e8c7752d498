//! What the registry tests share: the CNCF distribution registry (Debian's `docker-registry`)
//! started on 127.0.0.1 with its storage in a temp dir (optionally behind an htpasswd file
//! made by `htpasswd -B`), and the Python `oras` client. Under
//! `EVALHOST_REQUIRE_TOOLCHAINS=1` a missing registry or oras fails the test; otherwise it
//! is skipped with the install command.

#![allow(dead_code)]

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The registry, as `.ci/run` installs it.
pub const REGISTRY_INSTALL: &str = "apt-get install docker-registry apache2-utils";
/// The Python ORAS client, as `.ci/run` installs it.
pub const ORAS_INSTALL: &str = "pip install oras==0.2.43";

fn required() -> bool {
    std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1")
}

fn missing<T>(what: &str, install: &str) -> Option<T> {
    if required() {
        panic!("{what} is required (EVALHOST_REQUIRE_TOOLCHAINS=1): {install}");
    }
    eprintln!("skipped: {what} is not installed: {install}");
    None
}

/// A running `docker-registry serve`, stopped when dropped.
pub struct TestRegistry {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub host: String,
    /// The registry's storage root.
    pub storage: PathBuf,
}

impl TestRegistry {
    /// Start a registry storing under `dir`; with `user`, only that user (password
    /// `password`) may push or pull. `None` (the test skips) when the registry or htpasswd
    /// is not installed.
    pub fn start(dir: &Path, user: Option<(&str, &str)>) -> Option<Self> {
        let have = Command::new("docker-registry")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !have {
            return missing(
                "the CNCF distribution registry (docker-registry)",
                REGISTRY_INSTALL,
            );
        }
        let storage = dir.join("registry-storage");
        std::fs::create_dir_all(&storage).unwrap();
        let auth = match user {
            Some((user, password)) => {
                let output = match Command::new("htpasswd")
                    .args(["-Bbn", user, password])
                    .output()
                {
                    Ok(output) if output.status.success() => output,
                    _ => return missing("htpasswd (apache2-utils)", REGISTRY_INSTALL),
                };
                let file = dir.join("htpasswd");
                std::fs::write(&file, &output.stdout).unwrap();
                format!(
                    "auth:\n  htpasswd:\n    realm: evalhost-test\n    path: {}\n",
                    file.display()
                )
            }
            None => String::new(),
        };
        // A free port: bind, note it, let go (the registry binds it a moment later).
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let host = format!("127.0.0.1:{port}");
        let config = dir.join("registry.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n{auth}",
                storage.display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("registry.log")).unwrap();
        let child = Command::new("docker-registry")
            .args(["serve"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("docker-registry starts");
        let registry = Self {
            child,
            host,
            storage,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the registry did not listen on {} within 20 s: {}",
                registry.host,
                std::fs::read_to_string(dir.join("registry.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(registry)
    }

    /// `oci://127.0.0.1:PORT/PATH`.
    pub fn oci(&self, path: &str) -> String {
        format!("oci://{}/{path}", self.host)
    }

    /// The file the registry keeps the blob `sha256:HEX` in.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
        self.storage
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// The manifest `sha256:HEX` as the registry stores it, parsed.
    pub fn manifest(&self, digest: &str) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.blob_file(digest)).unwrap()).unwrap()
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `Some(())` when the Python `oras` client imports.
pub fn oras() -> Option<()> {
    let ok = Command::new("python3")
        .args(["-c", "import oras.client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(())
    } else {
        missing("the Python ORAS client (oras)", ORAS_INSTALL)
    }
}

/// Run the Python program `script` with oras in `dir`; its stdout (it must succeed).
pub fn oras_python(dir: &Path, script: &str) -> String {
    let output = Command::new("python3")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "oras script failed:\n{script}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The `sha256:...` after `marker` in `text` (e.g. `OCI manifest `).
pub fn digest_after(text: &str, marker: &str) -> String {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("no `{marker}` in:\n{text}"))
        + marker.len();
    text[start..start + 71].to_owned()
}
