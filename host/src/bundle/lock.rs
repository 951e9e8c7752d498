//! `evalhost.lock`: the project's pins, bundle name → version → manifest digest. Written by
//! `evalhost bundle install`, read by `evalhost run`. A version lower than the pinned one
//! is a rollback and refused; the pinned version with another digest is refused too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::BundleError;

/// Name of the lock file, beside the project's `evalhost.toml`.
pub const LOCK_FILE: &str = "evalhost.lock";

/// The lock file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    /// Where it is read from and written to.
    pub path: PathBuf,
    /// Pins by bundle name.
    pub bundles: BTreeMap<String, Pin>,
}

/// One bundle's pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The semver version.
    pub version: String,
    /// sha256 of the bundle's manifest, lowercase hex.
    pub manifest_sha256: String,
    /// The registry reference it was installed from (`oci://HOST/REPO:TAG`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_reference: Option<String>,
    /// The OCI manifest digest (`sha256:...`) that reference named at install.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_digest: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LockFile {
    lock_format: u32,
    #[serde(default)]
    bundles: BTreeMap<String, Pin>,
}

impl Lock {
    /// Read the lock at `path`; a missing file is an empty lock.
    pub fn read(path: &Path) -> Result<Self, BundleError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Lock {
                    path: path.to_owned(),
                    bundles: BTreeMap::new(),
                });
            }
            Err(source) => {
                return Err(BundleError::Io {
                    action: "read",
                    path: path.to_owned(),
                    error: source,
                });
            }
        };
        let file: LockFile = toml::from_str(&text).map_err(|e| BundleError::Lock {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        if file.lock_format != 1 {
            return Err(BundleError::Lock {
                path: path.to_owned(),
                message: format!(
                    "lock_format {} is not supported (expected 1)",
                    file.lock_format
                ),
            });
        }
        for (name, pin) in &file.bundles {
            if !super::manifest::is_digest(&pin.manifest_sha256) {
                return Err(BundleError::Lock {
                    path: path.to_owned(),
                    message: format!(
                        "bundles.{name}.manifest_sha256 is not a sha256 digest (64 lowercase hex digits)"
                    ),
                });
            }
            if pin.oci_reference.is_some() != pin.oci_digest.is_some() {
                return Err(BundleError::Lock {
                    path: path.to_owned(),
                    message: format!(
                        "bundles.{name}: oci_reference and oci_digest are written together"
                    ),
                });
            }
            if let Some(digest) = &pin.oci_digest
                && !digest
                    .strip_prefix("sha256:")
                    .is_some_and(super::manifest::is_digest)
            {
                return Err(BundleError::Lock {
                    path: path.to_owned(),
                    message: format!(
                        "bundles.{name}.oci_digest is not sha256: and 64 lowercase hex digits"
                    ),
                });
            }
            if semver::Version::parse(&pin.version).is_err() {
                return Err(BundleError::Lock {
                    path: path.to_owned(),
                    message: format!(
                        "bundles.{name}.version `{}` is not a semver version",
                        pin.version
                    ),
                });
            }
        }
        Ok(Lock {
            path: path.to_owned(),
            bundles: file.bundles,
        })
    }

    /// Whether installing `name` `version` with manifest `digest` agrees with the pin.
    pub fn check(&self, name: &str, version: &str, digest: &str) -> Result<(), BundleError> {
        let Some(pin) = self.bundles.get(name) else {
            return Ok(());
        };
        let offered = semver::Version::parse(version).ok();
        let locked = semver::Version::parse(&pin.version).ok();
        if offered < locked {
            return Err(BundleError::Rollback {
                name: name.to_owned(),
                version: version.to_owned(),
                locked: pin.version.clone(),
                lock: self.path.clone(),
            });
        }
        if offered == locked && pin.manifest_sha256 != digest {
            return Err(BundleError::LockMismatch {
                name: name.to_owned(),
                version: version.to_owned(),
                expected: pin.manifest_sha256.clone(),
                actual: digest.to_owned(),
                pinned_by: self.path.clone(),
            });
        }
        Ok(())
    }

    /// Whether the registry reference `reference` naming OCI manifest `oci_digest` agrees
    /// with the lock: a pin installed from the same reference with another manifest means the
    /// tag moved since, which is refused.
    pub fn check_source(&self, reference: &str, oci_digest: &str) -> Result<(), BundleError> {
        for (name, pin) in &self.bundles {
            if pin.oci_reference.as_deref() == Some(reference)
                && let Some(expected) = &pin.oci_digest
                && expected != oci_digest
            {
                return Err(BundleError::TagMoved {
                    reference: reference.to_owned(),
                    bundle: format!("`{name}` {}", pin.version),
                    expected: expected.clone(),
                    actual: oci_digest.to_owned(),
                    lock: self.path.clone(),
                });
            }
        }
        Ok(())
    }

    /// Pin `name` to `version` and `digest` (after [`Lock::check`]), installed from a file.
    pub fn pin(&mut self, name: &str, version: &str, digest: &str) {
        self.pin_from(name, version, digest, None);
    }

    /// Pin `name` to `version` and `digest`, installed from `source`: the registry reference
    /// and the OCI manifest digest it named (`None`: from a file).
    pub fn pin_from(
        &mut self,
        name: &str,
        version: &str,
        digest: &str,
        source: Option<(String, String)>,
    ) {
        let (oci_reference, oci_digest) = source.unzip();
        self.bundles.insert(
            name.to_owned(),
            Pin {
                version: version.to_owned(),
                manifest_sha256: digest.to_owned(),
                oci_reference,
                oci_digest,
            },
        );
    }

    /// Drop the pin of `name`; whether there was one.
    pub fn unpin(&mut self, name: &str) -> bool {
        self.bundles.remove(name).is_some()
    }

    /// Write the lock back to its path.
    pub fn write(&self) -> Result<(), BundleError> {
        let file = LockFile {
            lock_format: 1,
            bundles: self.bundles.clone(),
        };
        let body = toml::to_string(&file).expect("a lock always serializes");
        let text = format!(
            "# evalhost.lock: written by `evalhost bundle install`; commit it. Pins each grader bundle's\n# version and manifest digest; `evalhost run` refuses anything else.\n{body}"
        );
        std::fs::write(&self.path, text).map_err(BundleError::io("write", &self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollbacks_and_changed_contents_are_refused() {
        let mut lock = Lock {
            path: PathBuf::from("evalhost.lock"),
            ..Lock::default()
        };
        lock.pin("acme", "1.2.0", "aa");
        assert!(lock.check("other", "0.1.0", "bb").is_ok());
        assert!(lock.check("acme", "1.3.0", "bb").is_ok());
        assert!(lock.check("acme", "1.2.0", "aa").is_ok());
        let rollback = lock.check("acme", "1.1.9", "cc").unwrap_err().to_string();
        assert!(
            rollback.contains("older than 1.2.0") && rollback.contains("rollback"),
            "{rollback}"
        );
        let changed = lock.check("acme", "1.2.0", "dd").unwrap_err().to_string();
        assert!(changed.contains("pins aa"), "{changed}");
    }

    #[test]
    fn a_moved_tag_is_refused_and_the_source_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut lock = Lock::read(&dir.path().join("evalhost.lock")).unwrap();
        let digest = "a".repeat(64);
        let tag = "oci://127.0.0.1:5000/acme/checks:stable";
        let (one, two) = (
            format!("sha256:{}", "1".repeat(64)),
            format!("sha256:{}", "2".repeat(64)),
        );
        lock.pin_from("acme", "1.0.0", &digest, Some((tag.into(), one.clone())));
        lock.write().unwrap();
        let lock = Lock::read(&lock.path).unwrap();
        assert_eq!(
            lock.bundles["acme"].oci_digest.as_deref(),
            Some(one.as_str())
        );
        assert!(lock.check_source(tag, &one).is_ok());
        assert!(
            lock.check_source("oci://127.0.0.1:5000/other:1", &two)
                .is_ok()
        );
        let moved = lock.check_source(tag, &two).unwrap_err().to_string();
        assert!(
            moved.starts_with(&format!("`{tag}` now resolves to manifest {two}, but `")),
            "{moved}"
        );
        assert!(
            moved.contains(&format!(
                "pins {one} for it (bundle `acme` 1.0.0): the tag moved"
            )),
            "{moved}"
        );
    }
}
