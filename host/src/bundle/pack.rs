//! `evalhost bundle pack`: a bundle source directory becomes a signed-ready archive. Every
//! file is listed in the manifest with its sha256, and every component gets the checks of
//! `evalhost grader check` and must provide the graders declared for it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::BundleError;
use super::archive::{UnpackLimits, check_entry_path, write_archive};
use super::manifest::{BundleSource, MANIFEST_FILE, Manifest, sha256_hex};
use crate::grader::GraderHost;

/// What `pack` wrote.
#[derive(Debug, Clone)]
pub struct PackedBundle {
    /// The archive.
    pub archive: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// sha256 of the manifest bytes.
    pub digest: String,
}

/// Pack the bundle source directory `dir` into `out` (default `NAME-VERSION.tar.gz` in the
/// current directory when `out` is `None`).
pub fn pack(
    dir: &Path,
    out: Option<&Path>,
    host: &GraderHost,
) -> Result<PackedBundle, BundleError> {
    let source = BundleSource::read(dir)?;
    let limits = UnpackLimits::default();
    let mut files = BTreeMap::new();
    collect(dir, dir, &limits, &mut files)?;
    for (name, grader) in &source.graders {
        let component_error = |message: String| BundleError::Component {
            grader: name.clone(),
            component: grader.component.clone(),
            message,
        };
        let bytes = files
            .get(&grader.component)
            .ok_or_else(|| component_error(format!("no such file in `{}`", dir.display())))?;
        let origin = dir.join(&grader.component).display().to_string();
        let (_, report) = host
            .check_component(bytes, &origin)
            .map_err(|e| component_error(e.to_string()))?;
        if !report.graders.iter().any(|g| &g.name == name) {
            let provided: Vec<&str> = report.graders.iter().map(|g| g.name.as_str()).collect();
            return Err(component_error(format!(
                "the component provides no grader `{name}` (it provides: {})",
                provided.join(", ")
            )));
        }
    }
    let manifest = Manifest::build(&source, &files);
    let manifest_bytes = manifest.to_bytes();
    let digest = sha256_hex(&manifest_bytes);
    let archive = out
        .map(Path::to_owned)
        .unwrap_or_else(|| PathBuf::from(format!("{}-{}.tar.gz", manifest.name, manifest.version)));
    files.insert(MANIFEST_FILE.to_owned(), manifest_bytes);
    write_archive(&archive, &files)?;
    Ok(PackedBundle {
        archive,
        manifest,
        digest,
    })
}

/// Every regular file under `dir` (dot-files and dot-directories left out), by relative
/// `/`-separated path; symlinks and special files are refused.
fn collect(
    root: &Path,
    dir: &Path,
    limits: &UnpackLimits,
    files: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), BundleError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(BundleError::io("read", dir))?
        .collect::<Result<_, _>>()
        .map_err(BundleError::io("read", dir))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let unpackable = |reason: &str| BundleError::UnpackableFile {
            path: path.clone(),
            reason: reason.to_owned(),
        };
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(unpackable("the file name is not UTF-8"));
        };
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(BundleError::io("read", &path))?;
        if kind.is_dir() {
            collect(root, &path, limits, files)?;
            continue;
        }
        if !kind.is_file() {
            return Err(unpackable(
                "a bundle holds regular files only (no symlinks or devices)",
            ));
        }
        let relative = path
            .strip_prefix(root)
            .map_err(|_| unpackable("outside the bundle directory"))?
            .to_str()
            .ok_or_else(|| unpackable("the path is not UTF-8"))?
            .replace(std::path::MAIN_SEPARATOR, "/");
        if relative.ends_with(".tar.gz") || relative.ends_with(".sig") {
            return Err(unpackable(
                "looks like a packed bundle or its signature; a bundle directory holds sources only (pack with -o outside it)",
            ));
        }
        if relative == MANIFEST_FILE {
            return Err(unpackable("MANIFEST.toml is written by pack; remove it"));
        }
        check_entry_path(&relative).map_err(unpackable)?;
        if files.len() >= limits.max_files {
            return Err(unpackable(&format!(
                "a bundle holds at most {} files",
                limits.max_files
            )));
        }
        let bytes = std::fs::read(&path).map_err(BundleError::io("read", &path))?;
        let total: u64 = files.values().map(|b| b.len() as u64).sum::<u64>() + bytes.len() as u64;
        if total > limits.max_total_bytes {
            return Err(unpackable(&format!(
                "the bundle's files add up to more than {} bytes",
                limits.max_total_bytes
            )));
        }
        files.insert(relative, bytes);
    }
    Ok(())
}
