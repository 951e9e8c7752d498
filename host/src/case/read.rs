//! Reading the files of a case source (case files, fixtures and their scenario files, Nexus
//! case directories): bounded in size and decoded as UTF-8, every error naming the file.

use std::io::Read;
use std::path::Path;

use super::{CaseError, Location, MAX_CASE_FILE_BYTES};

/// The file at `path` as UTF-8 text, at most [`MAX_CASE_FILE_BYTES`]; `what` names the kind
/// of file in errors (`case file`: "the most a case file may be", "save case files as
/// UTF-8").
pub(crate) fn read_text(path: &Path, what: &str) -> Result<String, CaseError> {
    let bytes = read_bytes(path, MAX_CASE_FILE_BYTES as u64, what)?;
    String::from_utf8(bytes).map_err(|e| not_utf8(path, e.as_bytes(), e.utf8_error(), what))
}

/// The bytes of the file at `path`, at most `max`; a larger file is an error.
pub(crate) fn read_bytes(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, CaseError> {
    let read_error = |error| CaseError::Read {
        path: path.to_path_buf(),
        error,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    // Read one byte past the limit to tell "at the limit" from "over it" without trusting
    // the file's reported size.
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > max {
        return Err(CaseError::malformed(
            path,
            0,
            format!(
                "the file is larger than {} MiB, the most a {what} may be",
                max / (1024 * 1024)
            ),
        ));
    }
    Ok(bytes)
}

/// The error at the first byte of `bytes` that is not UTF-8.
fn not_utf8(path: &Path, bytes: &[u8], error: std::str::Utf8Error, what: &str) -> CaseError {
    let valid = bytes
        .get(..error.valid_up_to())
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or_default();
    let line = valid.matches('\n').count() + 1;
    let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let byte = bytes.get(error.valid_up_to()).copied().unwrap_or_default();
    CaseError::Malformed {
        location: Location {
            path: path.into(),
            line,
            column,
        },
        message: format!("the file is not valid UTF-8 (byte 0x{byte:02x}); save {what}s as UTF-8"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn text_is_refused_at_its_first_byte_that_is_not_utf8() {
        let (_dir, path) = file(b"{\"a\": 1}\n{\"b\": \"caf\xe9\"}\n");
        assert_eq!(
            read_text(&path, "fixture").unwrap_err().to_string(),
            format!(
                "{}:2:11: the file is not valid UTF-8 (byte 0xe9); save fixtures as UTF-8",
                path.display()
            )
        );
        let (_dir, path) = file("héllo\n".as_bytes());
        assert_eq!(read_text(&path, "fixture").unwrap(), "héllo\n");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_one_at_it_is_read() {
        let (_dir, path) = file(&[b'x'; 2 * 1024 * 1024]);
        assert_eq!(
            read_bytes(&path, 2 * 1024 * 1024, "journal file")
                .unwrap()
                .len(),
            2 * 1024 * 1024
        );
        assert_eq!(
            read_bytes(&path, 1024 * 1024, "journal file")
                .unwrap_err()
                .to_string(),
            format!(
                "{}: the file is larger than 1 MiB, the most a journal file may be",
                path.display()
            )
        );
    }

    #[test]
    fn a_missing_file_is_a_read_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_text(&dir.path().join("none.yaml"), "case file").unwrap_err();
        assert!(matches!(error, CaseError::Read { .. }), "{error}");
    }
}
