//! What the bundle tests share: a project directory with its own bundle store, the example
//! bundle packed from source with a component the build made, keys made by the real
//! `ssh-keygen`, and hostile tar archives written with the tar crate's low-level headers.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::common;
use crate::support::evalhost::{Evalhost, Output};
use crate::support::guests;
pub use common::repo;

/// The 0.2.0 test grader (provides `final_text_is`), built from source by host/build.rs.
pub const SSH_KEYGEN: &str = "ssh-keygen";
pub const IDENTITY: &str = "platform@acme.example";

/// A temp project: `dir/project` (cwd of every command, with evalhost.toml), `dir/store`
/// (EVALHOST_BUNDLE_STORE), keys and bundles in `dir`.
pub struct Project {
    pub tmp: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(tmp.path().join("project")).unwrap();
        Self { tmp }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    pub fn project(&self) -> PathBuf {
        self.path("project")
    }

    pub fn store(&self) -> PathBuf {
        self.path("store")
    }

    /// Run `evalhost ARGS` in the project: `(exit code, stdout, stderr)`.
    pub fn evalhost(&self, args: &[&str]) -> Output {
        self.evalhost_env(args, &[])
    }

    /// [`Project::evalhost`] with `env` added (the Docker config is `dir/docker` unless
    /// `env` moves it; registry credentials come only from `env`).
    pub fn evalhost_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Evalhost::new()
            .args(args)
            .current_dir(self.project())
            .env("EVALHOST_BUNDLE_STORE", self.store())
            .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("DOCKER_CONFIG", self.path("docker"))
            .env_remove("EVALHOST_REGISTRY_USERNAME")
            .env_remove("EVALHOST_REGISTRY_PASSWORD")
            .envs(env.iter().copied())
            .run()
    }

    /// `evalhost ARGS`, which must succeed; its stdout.
    /// `evalhost bundle sign BUNDLE --key KEY`, which must succeed.
    pub fn sign(&self, bundle: &Path, key: &Path) {
        self.ok(&[
            "bundle",
            "sign",
            &bundle.to_string_lossy(),
            "--key",
            &key.to_string_lossy(),
        ]);
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.evalhost(args);
        output.assert_code(0);
        output.stdout().to_owned()
    }

    /// `evalhost ARGS`, which must be refused with exit code 2; its stderr.
    pub fn refused(&self, args: &[&str]) -> String {
        let output = self.evalhost(args);
        output.assert_code(2);
        output.stderr().to_owned()
    }

    /// Copy the example bundle source (graders/bundles/acme-checks) and the component into
    /// `dir/NAME`, with `version`; the directory.
    pub fn bundle_source(&self, version: &str) -> PathBuf {
        let dir = self.path(&format!("src-{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        let toml = std::fs::read_to_string(repo().join("graders/bundles/acme-checks/bundle.toml"))
            .unwrap()
            .replace("version = \"1.0.0\"", &format!("version = \"{version}\""));
        std::fs::write(dir.join("bundle.toml"), toml).unwrap();
        std::fs::copy(guests::v0_2_0(), dir.join("final_text_is.wasm")).unwrap();
        dir
    }

    /// Pack the example bundle at `version`: the archive's path.
    pub fn pack(&self, version: &str) -> PathBuf {
        let src = self.bundle_source(version);
        let out = self.path(&format!("acme-checks-{version}.tar.gz"));
        self.ok(&[
            "bundle",
            "pack",
            src.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        out
    }

    /// An ed25519 key pair made by ssh-keygen: the private key's path.
    pub fn keygen(&self, name: &str) -> PathBuf {
        let key = self.path(name);
        let status = Command::new(SSH_KEYGEN)
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&key)
            .status()
            .expect("ssh-keygen must be installed (Debian: apt-get install openssh-client)");
        assert!(status.success());
        key
    }

    /// An allowed_signers file trusting `key` as IDENTITY for bundles.
    pub fn allowed_signers(&self, key: &Path) -> PathBuf {
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        let public: Vec<&str> = public.split_whitespace().take(2).collect();
        let path = self.project().join("allowed_signers");
        std::fs::write(
            &path,
            format!(
                "{IDENTITY} namespaces=\"evalhost-bundle\" {}\n",
                public.join(" ")
            ),
        )
        .unwrap();
        path
    }

    /// `evalhost.toml` with this `[trust]` body.
    pub fn trust(&self, body: &str) {
        std::fs::write(
            self.project().join("evalhost.toml"),
            format!("[trust]\n{body}\n"),
        )
        .unwrap();
    }

    /// A case file using `grader_key` in the project; its path relative to the project.
    pub fn case(&self, name: &str, grader_key: &str) -> String {
        let text = format!(
            "name: {name}\nprompt: Say done.\nmodel:\n  - text: done\ngraders:\n  - {grader_key}: done\n"
        );
        std::fs::write(self.project().join(format!("{name}.yaml")), text).unwrap();
        format!("{name}.yaml")
    }

    /// Every file under the store (nothing may appear there after a refusal).
    pub fn store_files(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else {
                    out.push(path);
                }
            }
        }
        let mut files = Vec::new();
        walk(&self.store(), &mut files);
        files
    }
}

/// `ssh-keygen ARGS` with `stdin`: `(success, stdout, stderr)`.
pub fn ssh_keygen(args: &[&str], stdin: &[u8]) -> (bool, String, String) {
    let mut child = Command::new(SSH_KEYGEN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh-keygen must be installed (Debian: apt-get install openssh-client)");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// One entry of a hand-made tar.
pub struct Entry<'a> {
    pub name: &'a [u8],
    pub kind: tar::EntryType,
    pub data: &'a [u8],
    pub link: &'a [u8],
}

impl<'a> Entry<'a> {
    pub fn file(name: &'a str, data: &'a [u8]) -> Self {
        Self {
            name: name.as_bytes(),
            kind: tar::EntryType::Regular,
            data,
            link: b"",
        }
    }
}

/// Every file of a bundle archive, in order, as `(path, bytes)` (for re-packing variants).
pub fn read_entries(archive: &Path) -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(archive).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = Vec::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_str().unwrap().to_owned();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
        out.push((path, bytes));
    }
    out
}

/// Write `entries` as a .tar.gz with raw headers: names and link targets are stored as
/// given, unchecked (`..`, absolute paths, links and all).
pub fn write_tar(path: &Path, entries: &[Entry]) {
    let file = std::fs::File::create(path).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for entry in entries {
        let mut header = tar::Header::new_old();
        {
            let old = header.as_old_mut();
            old.name[..entry.name.len()].copy_from_slice(entry.name);
            old.linkname[..entry.link.len()].copy_from_slice(entry.link);
        }
        header.set_entry_type(entry.kind);
        header.set_size(entry.data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        builder.append(&header, entry.data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap();
}

/// Re-pack a bundle's entries as a new archive (entries written by [`write_tar`]).
pub fn write_entries(path: &Path, entries: &[(String, Vec<u8>)]) {
    let entries: Vec<Entry> = entries.iter().map(|(p, b)| Entry::file(p, b)).collect();
    write_tar(path, &entries);
}
