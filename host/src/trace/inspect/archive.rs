//! The members of an Inspect `.eval` log, a zip archive. Inspect (0.3.285) compresses each
//! member with Zstandard (zip method 93), which the `zip` crate reads only with its `zstd`
//! feature (the C library): those members are read raw and decoded by `ruzstd`, the pure-Rust
//! decoder evalhost already has; stored and deflated members (older Inspect) by `zip` itself.
//! A hostile archive is bounded: its member count, each member's size once decompressed, and
//! the total decompressed.

use std::io::{Cursor, Read};
use std::path::Path;

use zip::{CompressionMethod, ZipArchive};

use crate::trace::TraceError;

/// Most members an archive may have (a log of 10,000 samples of 3 epochs has ~60,000).
pub(super) const MAX_MEMBERS: usize = 100_000;
/// Largest member once decompressed.
pub(super) const MAX_MEMBER_BYTES: u64 = 64 << 20;
/// Most bytes decompressed from one archive, all members together.
pub(super) const MAX_TOTAL_BYTES: u64 = 1 << 30;

/// An open `.eval` archive.
pub(super) struct Archive<'a> {
    path: &'a Path,
    zip: ZipArchive<Cursor<&'a [u8]>>,
    /// Bytes decompressed so far.
    total: u64,
}

impl<'a> Archive<'a> {
    pub fn open(path: &'a Path, bytes: &'a [u8]) -> Result<Self, TraceError> {
        let error = |message: String| TraceError::Archive {
            path: path.to_owned(),
            member: "(zip directory)".to_owned(),
            message,
        };
        // Counted before the directory is read into memory: each member has one central
        // directory header, so the signatures bound the count (compressed data may add a
        // few more, never fewer).
        let headers = memchr::memmem::find_iter(bytes, b"PK\x01\x02").count();
        if headers > MAX_MEMBERS {
            return Err(error(format!(
                "more than {MAX_MEMBERS} members: not an Inspect log evalhost reads"
            )));
        }
        let zip = ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| error(format!("not a zip archive evalhost reads: {e}")))?;
        Ok(Self {
            path,
            zip,
            total: 0,
        })
    }

    /// The members' names, in the archive's order.
    pub fn names(&self) -> Vec<String> {
        (0..self.zip.len())
            .filter_map(|i| self.zip.name_for_index(i)?.ok().map(|n| n.into_owned()))
            .collect()
    }

    /// Member `name`'s text, decompressed; `None` when the archive has no such member.
    pub fn text(&mut self, name: &str) -> Result<Option<String>, TraceError> {
        let Some(index) = self.zip.index_for_name(name) else {
            return Ok(None);
        };
        let path = self.path;
        let error = |message: String| TraceError::Archive {
            path: path.to_owned(),
            member: name.to_owned(),
            message,
        };
        let left = MAX_TOTAL_BYTES.saturating_sub(self.total);
        let cap = MAX_MEMBER_BYTES.min(left);
        let too_large = || {
            if cap < MAX_MEMBER_BYTES {
                format!("the archive decompresses to more than {MAX_TOTAL_BYTES} bytes")
            } else {
                format!("larger than {MAX_MEMBER_BYTES} bytes decompressed")
            }
        };
        let raw = self
            .zip
            .by_index_raw(index)
            .map_err(|e| error(format!("unreadable: {e}")))?;
        if raw.encrypted() {
            return Err(error(
                "encrypted: Inspect never encrypts its logs".to_owned(),
            ));
        }
        if raw.size() > cap {
            return Err(error(too_large()));
        }
        let method = raw.compression();
        let mut bytes = Vec::new();
        if method == CompressionMethod::ZSTD {
            let decoder = ruzstd::decoding::StreamingDecoder::new(raw)
                .map_err(|e| error(format!("not a Zstandard stream: {e}")))?;
            decoder
                .take(cap + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| error(format!("corrupt Zstandard stream: {e}")))?;
        } else {
            drop(raw);
            let member = self.zip.by_index(index).map_err(|e| {
                error(format!(
                    "compressed with zip method {method}, which evalhost does not read ({e})"
                ))
            })?;
            member
                .take(cap + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| error(format!("corrupt: {e}")))?;
        }
        if bytes.len() as u64 > cap {
            return Err(error(too_large()));
        }
        self.total += bytes.len() as u64;
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| error(format!("not UTF-8 text: {e}")))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::io::Write;

    use zip::write::SimpleFileOptions;

    use super::*;

    /// A `.eval`-like archive of `members`, each compressed as Inspect does (Zstandard) when
    /// `zstd`, else deflated.
    pub(in crate::trace::inspect) fn archive(members: &[(&str, &str)], zstd: bool) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, text) in members {
            if zstd {
                let compressed = ruzstd::encoding::compress_to_vec(
                    text.as_bytes(),
                    ruzstd::encoding::CompressionLevel::Fastest,
                );
                let options =
                    SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
                // A stored member whose bytes are a Zstandard frame, its header then patched
                // to say method 93 (the writer cannot compress with it without the feature).
                zip.start_file(*name, options).unwrap();
                zip.write_all(&compressed).unwrap();
            } else {
                let options =
                    SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
                zip.start_file(*name, options).unwrap();
                zip.write_all(text.as_bytes()).unwrap();
            }
        }
        let mut bytes = zip.finish().unwrap().into_inner();
        if zstd {
            set_zstd_method(&mut bytes, members);
        }
        bytes
    }

    /// Mark every member as Zstandard (method 93) in its local and central headers, and give
    /// it its decompressed size, as Inspect's writer does.
    fn set_zstd_method(bytes: &mut [u8], members: &[(&str, &str)]) {
        let sizes: std::collections::HashMap<&str, u32> = members
            .iter()
            .map(|(name, text)| (*name, text.len() as u32))
            .collect();
        for (signature, method_at, size_at, name_len_at, name_at) in [
            (b"PK\x03\x04", 8, 22, 26, 30),
            (b"PK\x01\x02", 10, 24, 28, 46),
        ] {
            let starts: Vec<usize> = memchr::memmem::find_iter(bytes, signature).collect();
            for start in starts {
                let name_len = u16::from_le_bytes([
                    bytes[start + name_len_at],
                    bytes[start + name_len_at + 1],
                ]) as usize;
                let name = std::str::from_utf8(&bytes[start + name_at..start + name_at + name_len])
                    .unwrap()
                    .to_owned();
                let Some(size) = sizes.get(name.as_str()) else {
                    continue;
                };
                bytes[start + method_at..start + method_at + 2]
                    .copy_from_slice(&93u16.to_le_bytes());
                bytes[start + size_at..start + size_at + 4].copy_from_slice(&size.to_le_bytes());
            }
        }
    }

    #[test]
    fn zstandard_and_deflated_members_read_as_their_text() {
        for zstd in [true, false] {
            let bytes = archive(
                &[
                    ("header.json", "{\"a\": 1}"),
                    ("samples/1_epoch_1.json", "{}"),
                ],
                zstd,
            );
            let mut archive = Archive::open(Path::new("log.eval"), &bytes).unwrap();
            assert_eq!(archive.names(), ["header.json", "samples/1_epoch_1.json"]);
            assert_eq!(archive.text("header.json").unwrap().unwrap(), "{\"a\": 1}");
            assert_eq!(archive.text("missing.json").unwrap(), None);
        }
    }

    #[test]
    fn a_member_larger_than_its_cap_is_refused_by_name() {
        let big = " ".repeat(MAX_MEMBER_BYTES as usize + 1);
        let bytes = archive(&[("samples/1_epoch_1.json", &big)], true);
        let mut archive = Archive::open(Path::new("log.eval"), &bytes).unwrap();
        let error = archive
            .text("samples/1_epoch_1.json")
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "log.eval: samples/1_epoch_1.json: larger than {MAX_MEMBER_BYTES} bytes decompressed"
            )
        );
    }

    #[test]
    fn a_member_that_lies_about_its_size_is_still_capped() {
        let big = " ".repeat(MAX_MEMBER_BYTES as usize + 10);
        let mut bytes = archive(&[("samples/1_epoch_1.json", &big)], true);
        // Both headers now claim 10 bytes.
        for (signature, size_at) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
            let start = memchr::memmem::find(&bytes, signature).unwrap();
            bytes[start + size_at..start + size_at + 4].copy_from_slice(&10u32.to_le_bytes());
        }
        let mut archive = Archive::open(Path::new("log.eval"), &bytes).unwrap();
        let error = archive
            .text("samples/1_epoch_1.json")
            .unwrap_err()
            .to_string();
        assert!(error.contains("larger than"), "{error}");
    }

    #[test]
    fn not_a_zip_is_named() {
        let error = Archive::open(Path::new("log.eval"), b"PK\x03\x04 not really")
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with("log.eval: (zip directory): not a zip archive"),
            "{error}"
        );
    }
}
