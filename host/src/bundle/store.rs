//! The local bundle store, content-addressed by manifest digest:
//!
//! ```text
//! STORE/objects/<manifest sha256>/MANIFEST.toml, bundle.toml, <components>...
//! STORE/objects/<manifest sha256>.sig      the signature it was installed with, if any
//! STORE/refs/<name>/<version>              the manifest sha256 of that version
//! ```
//!
//! The store is `$EVALHOST_BUNDLE_STORE`, else `$XDG_DATA_HOME/evalhost/bundles`, else
//! `~/.local/share/evalhost/bundles`. A bundle is written to a temporary directory inside
//! the store and renamed into place only when complete; loading re-checks the manifest's
//! digest and every component's digest, so a store modified after install is refused.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::BundleError;
use super::manifest::{MANIFEST_FILE, Manifest, is_digest, sha256_hex};
use super::verify::VerifiedBundle;

/// A bundle store directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleStore {
    /// The store's root.
    pub root: PathBuf,
}

/// An installed bundle, its manifest re-checked against its digest.
#[derive(Debug, Clone)]
pub struct StoredBundle {
    /// Its directory in the store.
    pub dir: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
    /// The manifest's sha256.
    pub digest: String,
}

/// One installed bundle version, as [`BundleStore::list`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The bundle's name.
    pub name: String,
    /// The version.
    pub version: semver::Version,
    /// The manifest sha256.
    pub digest: String,
    /// Whether it was installed with a signature.
    pub signed: bool,
}

impl BundleStore {
    /// The store at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The store the environment names (see the module docs); `None` when neither
    /// `EVALHOST_BUNDLE_STORE`, `XDG_DATA_HOME` nor `HOME` is set.
    pub fn from_env(env: &HashMap<String, String>) -> Option<Self> {
        let set = |name: &str| env.get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        set(crate::config::STORE_ENV)
            .or_else(|| crate::config::data_home(env).map(|d| d.join("evalhost").join("bundles")))
            .map(Self::new)
    }

    fn object(&self, digest: &str) -> PathBuf {
        self.root.join("objects").join(digest)
    }

    fn reference(&self, name: &str, version: &str) -> PathBuf {
        self.root.join("refs").join(name).join(version)
    }

    /// Write a verified bundle into the store (a no-op for its files when already there).
    /// The same name and version with other contents is refused: versions are immutable.
    pub fn install(&self, bundle: &VerifiedBundle) -> Result<StoredBundle, BundleError> {
        let manifest = &bundle.manifest;
        let reference = self.reference(&manifest.name, &manifest.version);
        if let Some(existing) = read_reference(&reference)?
            && existing != bundle.digest
        {
            return Err(BundleError::LockMismatch {
                name: manifest.name.clone(),
                version: manifest.version.clone(),
                expected: existing,
                actual: bundle.digest.clone(),
                pinned_by: reference,
            });
        }
        let object = self.object(&bundle.digest);
        if !object.is_dir() {
            let objects = self.root.join("objects");
            std::fs::create_dir_all(&objects).map_err(BundleError::io("create", &objects))?;
            let staging = tempfile::Builder::new()
                .prefix(".incoming-")
                .tempdir_in(&objects)
                .map_err(BundleError::io("create a directory in", &objects))?;
            let files = bundle
                .files
                .iter()
                .map(|(p, b)| (p.as_str(), b.as_slice()))
                .chain([(MANIFEST_FILE, bundle.manifest_bytes.as_slice())]);
            for (path, bytes) in files {
                // Paths were checked by the unpacker: relative, no `..`, no links.
                let target = staging.path().join(path);
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(BundleError::io("create", parent))?;
                }
                std::fs::write(&target, bytes).map_err(BundleError::io("write", &target))?;
            }
            // Another install of the same digest may have won the race: the object is then
            // in place, and `staging` is removed when dropped.
            match std::fs::rename(staging.path(), &object) {
                Ok(()) => drop(staging.keep()),
                Err(_) if object.is_dir() => {}
                Err(source) => return Err(BundleError::io("create", &object)(source)),
            }
        }
        if let Some(signature) = &bundle.signature_text {
            let path = object.with_extension("sig");
            std::fs::write(&path, signature).map_err(BundleError::io("write", &path))?;
        }
        let parent = reference.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(parent).map_err(BundleError::io("create", parent))?;
        std::fs::write(&reference, format!("{}\n", bundle.digest))
            .map_err(BundleError::io("write", &reference))?;
        self.open(&manifest.name, &manifest.version, &bundle.digest)
    }

    /// Every installed version of `name` with its manifest digest, oldest first.
    pub fn versions(&self, name: &str) -> Result<Vec<(semver::Version, String)>, BundleError> {
        let dir = self.root.join("refs").join(name);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(BundleError::Io {
                    action: "read",
                    path: dir,
                    error: source,
                });
            }
        };
        let mut versions = Vec::new();
        for entry in entries {
            let entry = entry.map_err(BundleError::io("read", &dir))?;
            let Some(version) = entry
                .file_name()
                .to_str()
                .and_then(|v| semver::Version::parse(v).ok())
            else {
                continue;
            };
            if let Some(digest) = read_reference(&entry.path())? {
                versions.push((version, digest));
            }
        }
        versions.sort();
        Ok(versions)
    }

    /// Every installed bundle version, by name, oldest version first.
    pub fn list(&self) -> Result<Vec<Installed>, BundleError> {
        let refs = self.root.join("refs");
        let entries = match std::fs::read_dir(&refs) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(BundleError::io("read", &refs)(source)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(BundleError::io("read", &refs))?;
            if let Some(name) = entry.file_name().to_str()
                && !name.starts_with('.')
            {
                names.push(name.to_owned());
            }
        }
        names.sort();
        let mut installed = Vec::new();
        for name in names {
            for (version, digest) in self.versions(&name)? {
                installed.push(Installed {
                    signed: self.object(&digest).with_extension("sig").is_file(),
                    name: name.clone(),
                    version,
                    digest,
                });
            }
        }
        Ok(installed)
    }

    /// Remove `name` `version` (every version when `None`) from the store: its ref, and its
    /// files once no other ref names the same digest. The removed versions.
    pub fn remove(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<Vec<(semver::Version, String)>, BundleError> {
        let versions = self.versions(name)?;
        if versions.is_empty() {
            return Err(BundleError::NotInstalled {
                name: name.to_owned(),
                store: self.root.clone(),
                install: super::resolve::install_hint(name, None),
            });
        }
        let removed: Vec<(semver::Version, String)> = match version {
            None => versions,
            Some(wanted) => {
                let found: Vec<_> = versions
                    .iter()
                    .filter(|(v, _)| v.to_string() == wanted)
                    .cloned()
                    .collect();
                if found.is_empty() {
                    return Err(BundleError::VersionNotInstalled {
                        name: name.to_owned(),
                        version: wanted.to_owned(),
                        installed: versions
                            .iter()
                            .map(|(v, _)| v.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        store: self.root.clone(),
                    });
                }
                found
            }
        };
        for (version, _) in &removed {
            let reference = self.reference(name, &version.to_string());
            std::fs::remove_file(&reference).map_err(BundleError::io("remove", &reference))?;
        }
        let dir = self.root.join("refs").join(name);
        // Only when empty: another version may still be there.
        let _ = std::fs::remove_dir(&dir);
        let still_named: Vec<String> = self.list()?.into_iter().map(|i| i.digest).collect();
        for (_, digest) in &removed {
            if still_named.contains(digest) {
                continue;
            }
            let object = self.object(digest);
            if object.is_dir() {
                std::fs::remove_dir_all(&object).map_err(BundleError::io("remove", &object))?;
            }
            let signature = object.with_extension("sig");
            if signature.is_file() {
                std::fs::remove_file(&signature).map_err(BundleError::io("remove", &signature))?;
            }
        }
        Ok(removed)
    }

    /// Open an installed bundle, checking that its manifest still has `digest`.
    pub fn open(
        &self,
        name: &str,
        version: &str,
        digest: &str,
    ) -> Result<StoredBundle, BundleError> {
        if !is_digest(digest) {
            return Err(BundleError::Invalid {
                path: self.reference(name, version),
                field: "manifest_sha256".into(),
                message: format!("`{digest}` is not a sha256 digest (64 lowercase hex digits)"),
            });
        }
        let dir = self.object(digest);
        let manifest_path = dir.join(MANIFEST_FILE);
        let bytes =
            std::fs::read(&manifest_path).map_err(BundleError::io("read", &manifest_path))?;
        let actual = sha256_hex(&bytes);
        if actual != digest {
            return Err(BundleError::DigestMismatch {
                archive: dir,
                file: MANIFEST_FILE.to_owned(),
                expected: digest.to_owned(),
                actual,
            });
        }
        let manifest = Manifest::parse(&bytes, &manifest_path)?;
        if manifest.name != name || manifest.version != version {
            return Err(BundleError::Invalid {
                path: manifest_path,
                field: "name/version".into(),
                message: format!(
                    "the store lists it as {name} {version}, but it is {} {}",
                    manifest.name, manifest.version
                ),
            });
        }
        Ok(StoredBundle {
            dir,
            manifest,
            digest: digest.to_owned(),
        })
    }
}

impl StoredBundle {
    /// The bytes of the manifest file `path`, checked against the manifest's digest.
    pub fn read_file(&self, path: &str) -> Result<Vec<u8>, BundleError> {
        let listed = self
            .manifest
            .file(path)
            .ok_or_else(|| BundleError::MissingFile {
                archive: self.dir.clone(),
                file: path.to_owned(),
            })?;
        let full = self.dir.join(path);
        let bytes = std::fs::read(&full).map_err(BundleError::io("read", &full))?;
        let actual = sha256_hex(&bytes);
        if actual != listed.sha256 {
            return Err(BundleError::DigestMismatch {
                archive: self.dir.clone(),
                file: path.to_owned(),
                expected: listed.sha256.clone(),
                actual,
            });
        }
        Ok(bytes)
    }
}

/// The digest a ref file holds; `None` when there is no such ref.
fn read_reference(path: &Path) -> Result<Option<String>, BundleError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text.trim().to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(BundleError::Io {
            action: "read",
            path: path.to_owned(),
            error: source,
        }),
    }
}
