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
            if !super::store::is_digest(&pin.manifest_sha256) {
                return Err(BundleError::Lock {
                    path: path.to_owned(),
                    message: format!(
                        "bundles.{name}.manifest_sha256 is not a sha256 digest (64 lowercase hex digits)"
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

    /// Pin `name` to `version` and `digest` (after [`Lock::check`]).
    pub fn pin(&mut self, name: &str, version: &str, digest: &str) {
        self.bundles.insert(
            name.to_owned(),
            Pin {
                version: version.to_owned(),
                manifest_sha256: digest.to_owned(),
            },
        );
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
}
