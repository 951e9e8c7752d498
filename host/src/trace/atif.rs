//! TODO(atif): importer.

use std::path::Path;

use super::{ImportedRun, TraceError};

pub(super) fn runs(
    path: &Path,
    bytes: &[u8],
) -> Result<(Vec<ImportedRun>, Vec<String>), TraceError> {
    let _ = (path, bytes);
    Ok((Vec::new(), Vec::new()))
}
