//! The bundle archive: a gzip-compressed tar of regular files. Writing is deterministic
//! (sorted, mtime 0, mode 0644, no owner); reading is the safe unpacker, which takes the
//! archive into memory only, refusing absolute paths, `..`, links, devices and other
//! special entries, and capping file count, unpacked size and the decompressed stream
//! (so a decompression bomb is refused as it streams, not after it filled a disk).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use super::BundleError;

/// Caps the unpacker enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnpackLimits {
    /// Most files in one bundle.
    pub max_files: usize,
    /// Most bytes all files of one bundle add up to.
    pub max_total_bytes: u64,
}

impl Default for UnpackLimits {
    fn default() -> Self {
        Self {
            max_files: 256,
            max_total_bytes: 64 * 1024 * 1024,
        }
    }
}

impl UnpackLimits {
    /// Most bytes the gzip stream may decompress to: the files, plus room for tar headers,
    /// padding and long-name records.
    fn max_stream_bytes(&self) -> u64 {
        self.max_total_bytes + (self.max_files as u64 + 4) * 3 * 512 + 64 * 1024
    }
}

/// Why `path` may not name a file in a bundle, or `Ok`.
pub(crate) fn check_entry_path(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("empty path");
    }
    if path.starts_with('/') {
        return Err("absolute path");
    }
    if path.contains('\\') || path.contains('\0') {
        return Err("backslash or NUL in the path");
    }
    for part in path.split('/') {
        match part {
            ".." => return Err("contains `..`"),
            "" | "." => return Err("empty or `.` path component"),
            _ => {}
        }
    }
    Ok(())
}

/// Write `files` (path → bytes, already checked) as a deterministic `.tar.gz`.
pub(crate) fn write_archive(
    out: &Path,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), BundleError> {
    let file = std::fs::File::create(out).map_err(BundleError::io("create", out))?;
    let encoder = GzEncoder::new(std::io::BufWriter::new(file), Compression::best());
    let mut builder = tar::Builder::new(encoder);
    builder.mode(tar::HeaderMode::Deterministic);
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        builder
            .append_data(&mut header, path, bytes.as_slice())
            .map_err(BundleError::io("write", out))?;
    }
    let encoder = builder
        .into_inner()
        .map_err(BundleError::io("write", out))?;
    let mut writer = encoder.finish().map_err(BundleError::io("write", out))?;
    writer.flush().map_err(BundleError::io("write", out))?;
    Ok(())
}

/// Counts the decompressed bytes as they stream and fails once they pass the cap.
struct Capped<R> {
    inner: R,
    read: u64,
    limit: u64,
    exceeded: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // Ask for at most one byte past the cap, so passing it is seen without reading on.
        let room = (self.limit + 1).saturating_sub(self.read);
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.read += n as u64;
        if self.read > self.limit {
            self.exceeded = true;
            return Err(std::io::Error::other("decompressed size cap exceeded"));
        }
        Ok(n)
    }
}

/// Read a bundle archive into memory (path → bytes), refusing anything unsafe.
pub(crate) fn read_archive(
    archive: &Path,
    limits: &UnpackLimits,
) -> Result<BTreeMap<String, Vec<u8>>, BundleError> {
    let file = std::fs::File::open(archive).map_err(BundleError::io("read", archive))?;
    unpack(archive, std::io::BufReader::new(file), limits)
}

/// Unpack a bundle archive's gzip stream into memory (path → bytes), refusing anything
/// unsafe; `archive` names it in errors.
pub(crate) fn unpack(
    archive: &Path,
    gzip: impl Read,
    limits: &UnpackLimits,
) -> Result<BTreeMap<String, Vec<u8>>, BundleError> {
    let mut capped = Capped {
        inner: GzDecoder::new(gzip),
        read: 0,
        limit: limits.max_stream_bytes(),
        exceeded: false,
    };
    let result = read_entries(archive, &mut capped, limits);
    if capped.exceeded {
        return Err(BundleError::DecompressionBomb {
            archive: archive.to_owned(),
            limit: limits.max_stream_bytes(),
        });
    }
    result
}

fn read_entries<R: Read>(
    archive: &Path,
    reader: &mut R,
    limits: &UnpackLimits,
) -> Result<BTreeMap<String, Vec<u8>>, BundleError> {
    let corrupt = |e: std::io::Error| BundleError::Corrupt {
        archive: archive.to_owned(),
        message: e.to_string(),
    };
    let mut tar = tar::Archive::new(reader);
    let mut files = BTreeMap::new();
    let mut total: u64 = 0;
    for entry in tar.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        let raw = entry.path_bytes();
        let Ok(name) = std::str::from_utf8(&raw) else {
            return Err(BundleError::UnsafePath {
                archive: archive.to_owned(),
                entry: String::from_utf8_lossy(&raw).into_owned(),
                reason: "the path is not UTF-8",
            });
        };
        let name = name.strip_prefix("./").unwrap_or(name).to_owned();
        let entry_type = entry.header().entry_type();
        if entry_type.is_dir() {
            check_path(archive, name.trim_end_matches('/'))?;
            continue;
        }
        if let Some(kind) = unsafe_kind(entry_type) {
            return Err(BundleError::UnsafeEntry {
                archive: archive.to_owned(),
                entry: name,
                kind,
            });
        }
        check_path(archive, &name)?;
        if files.len() >= limits.max_files {
            return Err(BundleError::TooManyFiles {
                archive: archive.to_owned(),
                limit: limits.max_files,
            });
        }
        let size = entry.size();
        total = total.saturating_add(size);
        if total > limits.max_total_bytes {
            return Err(BundleError::TooLarge {
                archive: archive.to_owned(),
                entry: name,
                limit: limits.max_total_bytes,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(1 << 20));
        (&mut entry)
            .take(size)
            .read_to_end(&mut bytes)
            .map_err(corrupt)?;
        if files.contains_key(&name) {
            return Err(BundleError::DuplicateEntry {
                archive: archive.to_owned(),
                entry: name,
            });
        }
        files.insert(name, bytes);
    }
    Ok(files)
}

fn check_path(archive: &Path, name: &str) -> Result<(), BundleError> {
    check_entry_path(name).map_err(|reason| BundleError::UnsafePath {
        archive: archive.to_owned(),
        entry: name.to_owned(),
        reason,
    })
}

/// What a non-regular entry is, or `None` for a regular file.
fn unsafe_kind(entry_type: tar::EntryType) -> Option<&'static str> {
    use tar::EntryType;
    match entry_type {
        EntryType::Regular | EntryType::Continuous => None,
        EntryType::Symlink => Some("symlink"),
        EntryType::Link => Some("hardlink"),
        EntryType::Char => Some("character device"),
        EntryType::Block => Some("block device"),
        EntryType::Fifo => Some("fifo"),
        EntryType::GNUSparse => Some("sparse file"),
        _ => Some("special entry"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_paths_stay_inside_the_bundle() {
        assert!(check_entry_path("graders/x.wasm").is_ok());
        assert_eq!(check_entry_path("/etc/passwd"), Err("absolute path"));
        assert_eq!(check_entry_path("a/../../x"), Err("contains `..`"));
        assert_eq!(check_entry_path("../x"), Err("contains `..`"));
        assert!(check_entry_path("a//b").is_err());
        assert!(check_entry_path("").is_err());
    }

    #[test]
    fn a_stream_past_the_cap_is_cut_off() {
        let mut capped = Capped {
            inner: std::io::repeat(0),
            read: 0,
            limit: 10_000,
            exceeded: false,
        };
        let mut sink = Vec::new();
        assert!(capped.read_to_end(&mut sink).is_err());
        assert!(capped.exceeded);
        // It stopped one byte past the cap, not at the end of the (endless) stream.
        assert_eq!(capped.read, 10_001);
        assert!(sink.len() <= 10_000);
    }
}
