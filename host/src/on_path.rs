//! Finding a program on `PATH` the way evalhost starts it: by its full path, so that the
//! standard library starts it with `posix_spawn` (a vfork-style clone) rather than `fork` +
//! `exec`, which it falls back to when the child gets its own `PATH` and the program is a bare
//! name (a `fork` copies the page tables of the whole evalhost process).

use std::ffi::OsStr;
use std::path::PathBuf;

/// The first executable file `name` in an absolute directory of `path` (a relative entry
/// would be looked up from evalhost's directory, not the one the program runs in).
pub(crate) fn find(path: &OsStr, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}
