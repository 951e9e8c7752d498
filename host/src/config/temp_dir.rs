//! Where a run's temp root (`workspace/`, `home/`, `tmp/`) is made.
//!
//! `$TMPDIR` when it is set. Otherwise `/var/tmp` when it is fit for a workspace (a writable
//! directory, not mounted `noexec` or read-only: an agent runs the scripts it writes), and the
//! system temp directory if not. `/var/tmp` is on a disk where `/tmp` may be a tmpfs, so what
//! an agent writes fills a disk, not the machine's memory: a RAM-backed root (`/dev/shm`, the
//! default until the red team of issue 34 filled it) let one run turn a filled "disk" into
//! filled RAM. RAM is faster for a replay suite's churn of small files (on a 2-core VM a
//! 1,000-case replay suite took 2.8 s with temp roots on ext4 and 1.9 s on tmpfs,
//! `docs/performance.md`): `TMPDIR=/dev/shm` opts into it, for suites whose agents are trusted
//! not to fill it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The default parent of temp roots, on a disk.
const VAR_TMP: &str = "/var/tmp";

/// The directory temp roots are made in (decided once per process).
pub(crate) fn temp_parent() -> &'static Path {
    static PARENT: OnceLock<PathBuf> = OnceLock::new();
    PARENT.get_or_init(|| choose(std::env::var_os("TMPDIR").filter(|v| !v.is_empty())))
}

fn choose(tmpdir: Option<std::ffi::OsString>) -> PathBuf {
    match tmpdir {
        Some(dir) => PathBuf::from(dir),
        None if fit_for_workspaces(Path::new(VAR_TMP)) => PathBuf::from(VAR_TMP),
        None => std::env::temp_dir(),
    }
}

/// A directory we can write to, that lets programs run.
fn fit_for_workspaces(dir: &Path) -> bool {
    use nix::sys::statvfs::{FsFlags, statvfs};
    use nix::unistd::{AccessFlags, access};
    let Ok(vfs) = statvfs(dir) else { return false };
    dir.is_dir()
        && !vfs
            .flags()
            .intersects(FsFlags::ST_NOEXEC | FsFlags::ST_RDONLY)
        && access(dir, AccessFlags::W_OK | AccessFlags::X_OK).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpdir_wins_when_set() {
        assert_eq!(
            choose(Some("/some/where".into())),
            PathBuf::from("/some/where")
        );
    }

    #[test]
    fn a_missing_or_unwritable_directory_is_not_fit() {
        assert!(!fit_for_workspaces(Path::new("/no/such/dir")));
        assert!(!fit_for_workspaces(Path::new("/proc/self")));
    }

    #[test]
    fn without_tmpdir_the_choice_is_var_tmp_when_it_is_fit_never_shm() {
        let chosen = choose(None);
        if fit_for_workspaces(Path::new(VAR_TMP)) {
            assert_eq!(chosen, PathBuf::from(VAR_TMP));
        } else {
            assert_eq!(chosen, std::env::temp_dir());
        }
        assert_ne!(chosen, PathBuf::from("/dev/shm"));
    }
}
