use std::path::PathBuf;

use super::{Case, CaseError};

/// Most cases loaded from one directory.
pub const MAX_CASES_PER_DIR: usize = 256;

/// Load cases from files and directories (directories in name order).
pub fn load_cases(_paths: &[PathBuf]) -> Result<Vec<Case>, CaseError> {
    unimplemented!("case loading")
}
