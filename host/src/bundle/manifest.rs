//! `bundle.toml` (what a bundle's author writes) and `MANIFEST.toml` (what `pack` derives
//! from it and what is signed: name, version, graders, and every file with its sha256).
//!
//! The signed bytes are the manifest file's bytes exactly as stored in the archive; they
//! are never re-rendered, so a signature made by any tool over them stays valid.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::BundleError;

/// The author's description of a bundle, at the root of the bundle's source directory.
pub(crate) const SOURCE_FILE: &str = "bundle.toml";
/// The signed manifest, at the root of every bundle archive.
pub(crate) const MANIFEST_FILE: &str = "MANIFEST.toml";
/// The manifest format this host writes and reads.
pub(crate) const MANIFEST_FORMAT: u32 = 1;
/// The capability of reading the run's workspace, read-only.
pub(crate) const READS_WORKSPACE: &str = "reads-workspace";
/// The capability of asking the judge (`evalhost:grader/judge`, WIT 0.3.0); the project's
/// `[trust] allow_judge = false` refuses it.
pub(crate) const JUDGE: &str = "judge";
/// Every capability a bundle grader may declare.
pub(crate) const CAPABILITIES: &[&str] = &[READS_WORKSPACE, JUDGE];

/// sha256 of `bytes`, lowercase hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// 64 lowercase hex digits (a digest is also a directory name: nothing else may pass).
pub(crate) fn is_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `bundle.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleSource {
    /// The bundle's name, as cases write it before the `/`.
    pub name: String,
    /// A semver version.
    pub version: String,
    /// One line on what the graders check.
    #[serde(default)]
    pub description: String,
    /// The graders it provides, by name.
    pub graders: BTreeMap<String, GraderSource>,
}

/// One `[graders.NAME]` table of `bundle.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraderSource {
    /// The component file providing the grader, relative to the bundle directory.
    pub component: String,
    /// What the grader asks for: `reads-workspace`, `judge`.
    #[serde(default)]
    pub capabilities: Vec<String>,
}

/// `MANIFEST.toml`: everything a signature vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `MANIFEST_FORMAT`.
    pub format: u32,
    /// The bundle's name.
    pub name: String,
    /// Its semver version.
    pub version: String,
    /// One line on what it checks.
    pub description: String,
    /// The graders it provides, by name.
    pub graders: BTreeMap<String, ManifestGrader>,
    /// Every file of the bundle except the manifest itself, sorted by path.
    pub files: Vec<ManifestFile>,
}

/// A grader of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestGrader {
    /// The component file (one of `files`).
    pub component: String,
    /// What it is granted.
    pub capabilities: Vec<String>,
}

/// A file of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestFile {
    /// Relative path inside the bundle, `/`-separated.
    pub path: String,
    /// sha256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
}

impl BundleSource {
    /// Read and check `DIR/bundle.toml`.
    pub fn read(dir: &Path) -> Result<Self, BundleError> {
        let path = dir.join(SOURCE_FILE);
        let text = std::fs::read_to_string(&path).map_err(BundleError::io("read", &path))?;
        let source: BundleSource = toml::from_str(&text).map_err(|e| BundleError::Parse {
            path: path.clone(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        check_name(&path, &source.name)?;
        check_version(&path, &source.version)?;
        check_graders(
            &path,
            source
                .graders
                .iter()
                .map(|(name, g)| (name, &g.component, &g.capabilities)),
        )?;
        Ok(source)
    }
}

impl Manifest {
    /// The manifest of `source` over `files` (path → bytes).
    pub fn build(source: &BundleSource, files: &BTreeMap<String, Vec<u8>>) -> Self {
        Manifest {
            format: MANIFEST_FORMAT,
            name: source.name.clone(),
            version: source.version.clone(),
            description: source.description.clone(),
            graders: source
                .graders
                .iter()
                .map(|(name, g)| {
                    (
                        name.clone(),
                        ManifestGrader {
                            component: g.component.clone(),
                            capabilities: g.capabilities.clone(),
                        },
                    )
                })
                .collect(),
            files: files
                .iter()
                .map(|(path, bytes)| ManifestFile {
                    path: path.clone(),
                    sha256: sha256_hex(bytes),
                    size: bytes.len() as u64,
                })
                .collect(),
        }
    }

    /// The bytes to store and sign.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let body = toml::to_string(self).expect("a manifest always serializes");
        format!(
            "# evalhost bundle manifest: these exact bytes are what a bundle signature covers.\n{body}"
        )
        .into_bytes()
    }

    /// Parse and check manifest bytes; `origin` names them in errors.
    pub fn parse(bytes: &[u8], origin: &Path) -> Result<Self, BundleError> {
        let text = std::str::from_utf8(bytes).map_err(|e| BundleError::Parse {
            path: origin.to_owned(),
            message: format!("not UTF-8: {e}"),
        })?;
        let manifest: Manifest = toml::from_str(text).map_err(|e| BundleError::Parse {
            path: origin.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        if manifest.format != MANIFEST_FORMAT {
            return Err(invalid(
                origin,
                "format",
                format!(
                    "manifest format {} is not supported (this evalhost reads format {MANIFEST_FORMAT})",
                    manifest.format
                ),
            ));
        }
        check_name(origin, &manifest.name)?;
        check_version(origin, &manifest.version)?;
        let mut seen = std::collections::BTreeSet::new();
        for (index, file) in manifest.files.iter().enumerate() {
            let field = format!("files[{index}]");
            if let Err(reason) = super::archive::check_entry_path(&file.path) {
                return Err(invalid(
                    origin,
                    &field,
                    format!("path `{}`: {reason}", file.path),
                ));
            }
            if file.path == MANIFEST_FILE || !seen.insert(file.path.as_str()) {
                return Err(invalid(
                    origin,
                    &field,
                    format!("`{}` is listed twice or is reserved", file.path),
                ));
            }
            if !is_digest(&file.sha256) {
                return Err(invalid(
                    origin,
                    &field,
                    "sha256 must be 64 lowercase hex digits".into(),
                ));
            }
        }
        check_graders(
            origin,
            manifest
                .graders
                .iter()
                .map(|(name, g)| (name, &g.component, &g.capabilities)),
        )?;
        for (name, grader) in &manifest.graders {
            if !seen.contains(grader.component.as_str()) {
                return Err(invalid(
                    origin,
                    &format!("graders.{name}.component"),
                    format!("`{}` is not one of the manifest's files", grader.component),
                ));
            }
        }
        Ok(manifest)
    }

    /// The entry of `path` in `files`.
    pub fn file(&self, path: &str) -> Option<&ManifestFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

fn invalid(path: &Path, field: &str, message: String) -> BundleError {
    BundleError::Invalid {
        path: path.to_owned(),
        field: field.to_owned(),
        message,
    }
}

/// A bundle name: lowercase ASCII letters, digits, `-` and `_`, starting with a letter or
/// digit (it is a path component of the store and the part of `bundle/grader` before `/`).
fn check_name(path: &Path, name: &str) -> Result<(), BundleError> {
    let ok = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(invalid(
            path,
            "name",
            format!(
                "`{name}` is not a bundle name (lowercase letters, digits, `-`, `_`; at most 64)"
            ),
        ))
    }
}

fn check_version(path: &Path, version: &str) -> Result<(), BundleError> {
    semver::Version::parse(version).map(drop).map_err(|e| {
        invalid(
            path,
            "version",
            format!("`{version}` is not a semver version such as 1.2.0: {e}"),
        )
    })
}

fn check_graders<'a>(
    path: &Path,
    graders: impl Iterator<Item = (&'a String, &'a String, &'a Vec<String>)>,
) -> Result<(), BundleError> {
    let mut any = false;
    for (name, component, capabilities) in graders {
        any = true;
        if name.is_empty() || name.contains(['/', '#']) || name.chars().any(char::is_whitespace) {
            return Err(invalid(
                path,
                &format!("graders.{name}"),
                "a grader name must be non-empty without `/`, `#` or spaces".into(),
            ));
        }
        if let Err(reason) = super::archive::check_entry_path(component) {
            return Err(invalid(
                path,
                &format!("graders.{name}.component"),
                format!("`{component}`: {reason}"),
            ));
        }
        for capability in capabilities {
            if !CAPABILITIES.contains(&capability.as_str()) {
                return Err(invalid(
                    path,
                    &format!("graders.{name}.capabilities"),
                    format!(
                        "unknown capability `{capability}` (known: {})",
                        CAPABILITIES.join(", ")
                    ),
                ));
            }
        }
    }
    if any {
        Ok(())
    } else {
        Err(invalid(
            path,
            "graders",
            "a bundle provides at least one grader".into(),
        ))
    }
}

/// `ARCHIVE!MANIFEST.toml`, naming the manifest inside an archive in errors.
pub(crate) fn manifest_origin(archive: &Path) -> PathBuf {
    PathBuf::from(format!("{}!{MANIFEST_FILE}", archive.display()))
}
