//! Where a run's temp root (`workspace/`, `home/`, `tmp/`) is made.
//!
//! `$TMPDIR` when it is set. Otherwise a RAM-backed `/dev/shm` when it is fit for a workspace
//! (tmpfs, writable, not `noexec` — an agent runs the scripts it writes —, at least
//! [`MIN_SHM_FREE`] free), and the system temp directory if not. A run creates and deletes a
//! handful of directories and files; on ext4 that churn is costly (inode allocation skips
//! recently deleted inodes by reading them back): on a 2-core VM a 1,000-case replay suite
//! took 2.8 s with temp roots on ext4 and 1.9 s on tmpfs (`docs/performance.md`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Least free space for `/dev/shm` to be used (Docker's default `/dev/shm` is 64 MiB: too
/// small for a suite's workspaces).
pub const MIN_SHM_FREE: u64 = 1 << 30;

const SHM: &str = "/dev/shm";

/// The directory temp roots are made in (decided once per process).
pub fn temp_parent() -> &'static Path {
    static PARENT: OnceLock<PathBuf> = OnceLock::new();
    PARENT.get_or_init(|| choose(std::env::var_os("TMPDIR").filter(|v| !v.is_empty())))
}

fn choose(tmpdir: Option<std::ffi::OsString>) -> PathBuf {
    match tmpdir {
        Some(dir) => PathBuf::from(dir),
        None if fit_for_workspaces(Path::new(SHM)) => PathBuf::from(SHM),
        None => std::env::temp_dir(),
    }
}

/// A tmpfs we can write to, that lets programs run, with room for workspaces.
fn fit_for_workspaces(dir: &Path) -> bool {
    use nix::sys::statfs::{TMPFS_MAGIC, statfs};
    use nix::sys::statvfs::{FsFlags, statvfs};
    use nix::unistd::{AccessFlags, access};
    let Ok(fs) = statfs(dir) else { return false };
    let Ok(vfs) = statvfs(dir) else { return false };
    let free = vfs.blocks_available().saturating_mul(vfs.fragment_size());
    fs.filesystem_type() == TMPFS_MAGIC
        && !vfs
            .flags()
            .intersects(FsFlags::ST_NOEXEC | FsFlags::ST_RDONLY)
        && free >= MIN_SHM_FREE
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
    fn a_disk_directory_is_not_taken_for_a_tmpfs() {
        let disk = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert!(!fit_for_workspaces(disk));
        assert!(!fit_for_workspaces(Path::new("/no/such/dir")));
    }

    #[test]
    fn without_tmpdir_the_choice_is_shm_exactly_when_it_is_fit() {
        let chosen = choose(None);
        if fit_for_workspaces(Path::new(SHM)) {
            assert_eq!(chosen, PathBuf::from(SHM));
        } else {
            assert_eq!(chosen, std::env::temp_dir());
        }
    }
}
