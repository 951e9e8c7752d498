//! The files of a directory evalhost hashes for an environment: the image's working
//! directory (exported once, so graders know its files as seeded) and a case's environment
//! files (its Dockerfile, a task's `tests/` and `solution/`, folded into the case's digest).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The regular files under `root` (itself, when it is one), in path order; symbolic links
/// are not followed, at most `max` files.
pub(crate) fn regular_files(root: &Path, max: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                if let Ok(entries) = std::fs::read_dir(&path) {
                    pending.extend(entries.flatten().map(|e| e.path()));
                }
            }
            Ok(meta) if meta.is_file() && files.len() < max => files.push(path),
            _ => {}
        }
    }
    files.sort();
    files
}

/// The SHA-256 (hex) and size of the file at `path`, read as a stream.
pub(crate) fn sha256_of(path: &Path) -> std::io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let size = std::io::copy(&mut std::fs::File::open(path)?, &mut hasher)?;
    Ok((hex::encode(hasher.finalize()), size))
}
