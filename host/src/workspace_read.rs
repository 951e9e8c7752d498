//! evalhost's own reads of a tree the agent controls: the finished workspace (the `--out`
//! snapshot, the HTML report's diff, the sweep before grading, all in `crate::runner`) and,
//! during the run, the built-in agent's file tools (`crate::agent::tools`).
//!
//! The agent, or a process that outlived its run, may change the tree while evalhost reads
//! it: swap a directory for a symlink to `~/.ssh` right after it was listed, leave a FIFO
//! where a file was (opening it for reading waits for a writer forever), make a directory of
//! 400,000 entries. So nothing here opens a path by name from `/`:
//!
//! - [`Tree`] opens every path relative to the workspace's directory handle, with `openat2`'s
//!   `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (no symlink is followed at any component, `..`
//!   cannot leave the tree) and `O_NOFOLLOW`; on kernels without `openat2` (before 5.6) one
//!   component at a time with `O_NOFOLLOW`, which holds the same;
//! - files are opened `O_NONBLOCK`, and their type is checked with `fstat` after opening
//!   ([`check_regular`]): a FIFO, socket or device is reported ([`ReadError::NotRegular`]),
//!   never read;
//! - reads stop at the caller's cap ([`read_capped`]);
//! - a listing stops as soon as its caller says so ([`Tree::walk`]), not after reading a huge
//!   directory whole.
//!
//! The file tools keep cap-std's resolution, which follows symlinks that stay inside the
//! workspace (an agent's `current -> v2` is legitimate) and refuses those leading out in the
//! kernel (`openat2` with `RESOLVE_BENEATH`); they open through [`nonblocking`] and check and
//! read with [`check_regular`] and [`read_capped`], as the post-run reads do.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::Mode;

/// What a path is, from `fstat`/`fstatat` (symlinks not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

impl Kind {
    /// The kind of a `st_mode`.
    pub(crate) fn from_mode(mode: u32) -> Kind {
        match mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            libc::S_IFIFO => Kind::Fifo,
            libc::S_IFSOCK => Kind::Socket,
            libc::S_IFCHR => Kind::CharDevice,
            libc::S_IFBLK => Kind::BlockDevice,
            _ => Kind::Other,
        }
    }

    /// `a FIFO`, `a socket`, ... for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::File => "a regular file",
            Kind::Dir => "a directory",
            Kind::Symlink => "a symlink",
            Kind::Fifo => "a FIFO",
            Kind::Socket => "a socket",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
            Kind::Other => "a special file",
        }
    }

    /// A FIFO, socket or device: never opened for reading.
    pub(crate) fn is_special(self) -> bool {
        !matches!(self, Kind::File | Kind::Dir | Kind::Symlink)
    }
}

/// Why a file of the tree was not read. The messages name no path: callers add it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// A FIFO, socket, device or directory where a regular file was expected.
    #[error("it is {}, not a regular file", .0.describe())]
    NotRegular(Kind),
    /// A component of the path is a symlink, or the path leads out of the tree.
    #[error("it leads through a symlink or out of the workspace")]
    Symlink,
    #[error("{0}")]
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(error: io::Error) -> Self {
        match Errno::from_raw(error.raw_os_error().unwrap_or(0)) {
            // ELOOP: a symlink with RESOLVE_NO_SYMLINKS or O_NOFOLLOW; EXDEV: out of the tree.
            Errno::ELOOP | Errno::EXDEV => ReadError::Symlink,
            _ => ReadError::Io(error),
        }
    }
}

/// `Ok(size)` when the opened `file` is a regular file, else what it is (`fstat`, after
/// opening: what the name pointed at when it was listed does not matter).
pub(crate) fn check_regular(file: impl AsFd) -> Result<u64, ReadError> {
    let stat = nix::sys::stat::fstat(file).map_err(|e| ReadError::Io(e.into()))?;
    match Kind::from_mode(stat.st_mode) {
        Kind::File => Ok(stat.st_size.max(0) as u64),
        kind => Err(ReadError::NotRegular(kind)),
    }
}

/// At most `cap` bytes of a file.
pub(crate) struct Capped {
    pub bytes: Vec<u8>,
    /// The file had more than `cap` bytes (`bytes` holds the first `cap`).
    pub over: bool,
}

/// Read at most `cap` bytes of `file`; one byte past the cap tells "exactly at the cap" from
/// "over it" without reading more.
pub(crate) fn read_capped(file: impl Read, cap: u64) -> io::Result<Capped> {
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    let over = bytes.len() as u64 > cap;
    if over {
        bytes.truncate(cap as usize);
    }
    Ok(Capped { bytes, over })
}

/// `options` made to open without blocking (a FIFO with no writer, a device): the file
/// tools' opens, checked with [`check_regular`] after.
pub(crate) fn nonblocking(options: &mut cap_std::fs::OpenOptions) -> &mut cap_std::fs::OpenOptions {
    use cap_std::fs::OpenOptionsExt;
    options.custom_flags(libc::O_NONBLOCK)
}

/// One entry of a [`Tree::walk`].
pub(crate) struct Entry {
    /// Relative to the tree's root.
    pub path: PathBuf,
    pub kind: Kind,
    /// For a file, its size when listed.
    pub size: u64,
    /// For a symlink, its target (never followed).
    pub target: Option<PathBuf>,
}

/// A directory tree the agent controls, read through its directory handle only.
pub(crate) struct Tree {
    root: OwnedFd,
}

/// `openat2` is missing (ENOSYS): open one component at a time from then on.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

impl Tree {
    /// Open the directory `root` (not a symlink to one).
    pub(crate) fn open(root: &Path) -> io::Result<Tree> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let root = nix::fcntl::open(root, flags, Mode::empty())?;
        Ok(Tree { root })
    }

    /// Open `rel` beneath the root with `flags`, following no symlink at any component.
    fn open_beneath(&self, rel: &Path, flags: OFlag) -> io::Result<OwnedFd> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let names = names(rel)?;
        if names.is_empty() {
            return Ok(nix::fcntl::openat(&self.root, ".", flags, Mode::empty())?);
        }
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            let how = OpenHow::new()
                .flags(flags)
                .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
            match nix::fcntl::openat2(&self.root, rel, how) {
                Err(Errno::ENOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
                opened => return Ok(opened?),
            }
        }
        // Each component is one name (no `/`, no `..`) opened `O_NOFOLLOW` in the directory
        // opened before it: no symlink is followed and nothing leaves the tree either.
        let (last, parents) = names.split_last().expect("not empty");
        let mut dir: Option<OwnedFd> = None;
        for name in parents {
            let flags = OFlag::O_RDONLY
                | OFlag::O_DIRECTORY
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC
                | OFlag::O_NONBLOCK;
            let at = dir.as_ref().map_or(self.root.as_fd(), |d| d.as_fd());
            let opened = nix::fcntl::openat(at, *name, flags, Mode::empty());
            // O_DIRECTORY | O_NOFOLLOW on a symlink is ENOTDIR: say ELOOP, as openat2 does.
            let is_link = || {
                nix::sys::stat::fstatat(at, *name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| Kind::from_mode(st.st_mode) == Kind::Symlink)
            };
            dir = Some(match opened {
                Err(Errno::ENOTDIR) if is_link() => return Err(Errno::ELOOP.into()),
                opened => opened?,
            });
        }
        let at = dir.as_ref().map_or(self.root.as_fd(), |d| d.as_fd());
        Ok(nix::fcntl::openat(at, *last, flags, Mode::empty())?)
    }

    /// Open the regular file `rel` for reading: `(file, size)`, or why not.
    pub(crate) fn open_file(&self, rel: &Path) -> Result<(File, u64), ReadError> {
        let file = File::from(self.open_beneath(rel, OFlag::O_RDONLY)?);
        let size = check_regular(&file)?;
        Ok((file, size))
    }

    /// At most `cap` bytes of the regular file `rel`.
    pub(crate) fn read(&self, rel: &Path, cap: u64) -> Result<Capped, ReadError> {
        let (file, _) = self.open_file(rel)?;
        Ok(read_capped(file, cap)?)
    }

    /// Visit every entry, parents before their children, until `visit` breaks (then
    /// `Ok(false)`): a directory is read one entry at a time, so a huge one costs no more
    /// than the entries visited. Symlinks are visited, never followed.
    pub(crate) fn walk(&self, mut visit: impl FnMut(Entry) -> ControlFlow<()>) -> io::Result<bool> {
        let mut pending = vec![PathBuf::new()];
        while let Some(dir_path) = pending.pop() {
            let fd = self.open_beneath(&dir_path, OFlag::O_RDONLY | OFlag::O_DIRECTORY)?;
            let dir = cap_std::fs::Dir::from_std_file(File::from(fd));
            for entry in dir.entries()? {
                let entry = entry?;
                let name = entry.file_name();
                // `fstatat(AT_SYMLINK_NOFOLLOW)` relative to the directory's handle.
                let meta = entry.metadata()?;
                let kind = kind_of(&meta);
                let target = match kind {
                    Kind::Symlink => Some(PathBuf::from(nix::fcntl::readlinkat(
                        dir.as_fd(),
                        name.as_os_str(),
                    )?)),
                    _ => None,
                };
                let path = dir_path.join(&name);
                if kind == Kind::Dir {
                    pending.push(path.clone());
                }
                let entry = Entry {
                    path,
                    kind,
                    size: if kind == Kind::File { meta.len() } else { 0 },
                    target,
                };
                if visit(entry).is_break() {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Remove the non-directory `rel` (a special file), making its directory writable by its
    /// owner first when the agent left it read-only.
    pub(crate) fn remove(&self, rel: &Path) -> io::Result<()> {
        let parent = rel.parent().unwrap_or(Path::new(""));
        let name = rel.file_name().unwrap_or_default();
        let dir = self.open_beneath(parent, OFlag::O_RDONLY | OFlag::O_DIRECTORY)?;
        let unlink = || nix::unistd::unlinkat(&dir, name, nix::unistd::UnlinkatFlags::NoRemoveDir);
        match unlink() {
            Err(Errno::EACCES | Errno::EPERM) => {
                nix::sys::stat::fchmod(&dir, Mode::S_IRWXU)?;
                Ok(unlink()?)
            }
            other => Ok(other?),
        }
    }
}

fn kind_of(meta: &cap_std::fs::Metadata) -> Kind {
    use cap_std::fs::MetadataExt;
    Kind::from_mode(meta.mode())
}

/// The names of `rel`'s components; `..`, `/` and prefixes are refused (a path of the tree
/// is made of names).
fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    rel.components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(io::Error::from(Errno::EXDEV)),
        })
        .collect()
}

/// Whether the symlink at `link` (relative to the tree's root) with `target` might lead out
/// of the tree. Kept inside are relative targets whose `..` come first and do not climb above
/// the root: the link's own directories are real ones (a walk never follows symlinks), so
/// climbing from it stays inside, and what follows descends, through names that are
/// directories or symlinks each checked the same way. A `..` after a name is refused since
/// that name may be a symlink (`l -> ..`, then `m -> l/../..`).
pub(crate) fn leads_outside(link: &Path, target: &Path) -> bool {
    let mut depth = link.components().count().saturating_sub(1) as isize;
    let mut descended = false;
    for component in target.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if descended => return true,
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            Component::Normal(_) => descended = true,
            Component::RootDir | Component::Prefix(_) => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, Tree) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/file.txt"), "inside").unwrap();
        let tree = Tree::open(dir.path()).unwrap();
        (dir, tree)
    }

    #[test]
    fn reads_a_file_beneath_the_root() {
        let (_dir, tree) = tree();
        let read = tree.read(Path::new("a/b/file.txt"), 100).unwrap();
        assert_eq!((read.bytes.as_slice(), read.over), (&b"inside"[..], false));
        let read = tree.read(Path::new("a/b/file.txt"), 3).unwrap();
        assert_eq!((read.bytes.as_slice(), read.over), (&b"ins"[..], true));
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_after_listing_is_not_followed() {
        let (dir, tree) = tree();
        let secret = tempfile::tempdir().unwrap();
        std::fs::create_dir(secret.path().join("b")).unwrap();
        std::fs::write(secret.path().join("b/file.txt"), "secret").unwrap();
        // The attacker's move between the listing and the read.
        std::fs::rename(dir.path().join("a"), dir.path().join("old")).unwrap();
        symlink(secret.path(), dir.path().join("a")).unwrap();
        let error = tree.read(Path::new("a/b/file.txt"), 100).err().unwrap();
        assert!(matches!(error, ReadError::Symlink), "{error:?}");
        // A relative symlink inside is not followed either, nor `..`.
        symlink("old", dir.path().join("inner")).unwrap();
        assert!(matches!(
            tree.read(Path::new("inner/b/file.txt"), 100),
            Err(ReadError::Symlink)
        ));
        assert!(matches!(
            tree.read(Path::new("old/../../x"), 100),
            Err(ReadError::Symlink)
        ));
    }

    #[test]
    fn the_fallback_without_openat2_refuses_symlinks_too() {
        let (dir, tree) = tree();
        symlink("/etc", dir.path().join("etc")).unwrap();
        NO_OPENAT2.store(true, Ordering::Relaxed);
        let through = tree.read(Path::new("etc/passwd"), 100).err();
        let fine = tree.read(Path::new("a/b/file.txt"), 100).map(|r| r.bytes);
        NO_OPENAT2.store(false, Ordering::Relaxed);
        assert!(matches!(through, Some(ReadError::Symlink)), "{through:?}");
        assert_eq!(fine.unwrap(), b"inside");
    }

    #[test]
    fn a_fifo_is_reported_not_read() {
        let (dir, tree) = tree();
        nix::unistd::mkfifo(&dir.path().join("pipe"), Mode::S_IRWXU).unwrap();
        // Without O_NONBLOCK this open would wait for a writer forever.
        let error = tree.read(Path::new("pipe"), 100).err().unwrap();
        assert_eq!(error.to_string(), "it is a FIFO, not a regular file");
        tree.remove(Path::new("pipe")).unwrap();
        assert!(!dir.path().join("pipe").exists());
    }

    #[test]
    fn a_walk_stops_when_told_and_lists_symlinks_without_following() {
        let (dir, tree) = tree();
        for i in 0..100 {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        symlink("/etc", dir.path().join("link")).unwrap();
        let mut seen = 0;
        let complete = tree
            .walk(|_| {
                seen += 1;
                if seen == 10 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .unwrap();
        assert_eq!((complete, seen), (false, 10));
        let mut all = Vec::new();
        assert!(
            tree.walk(|e| {
                all.push((e.path, e.kind, e.target));
                ControlFlow::Continue(())
            })
            .unwrap()
        );
        assert_eq!(all.len(), 104);
        assert!(all.contains(&(
            PathBuf::from("link"),
            Kind::Symlink,
            Some(PathBuf::from("/etc"))
        )));
        assert!(all.contains(&(PathBuf::from("a/b/file.txt"), Kind::File, None)));
        let a = all.iter().position(|e| e.0 == Path::new("a")).unwrap();
        let b = all.iter().position(|e| e.0 == Path::new("a/b")).unwrap();
        assert!(a < b, "parents first");
    }

    #[test]
    fn which_symlinks_lead_outside() {
        let outside = |link: &str, target: &str| leads_outside(Path::new(link), Path::new(target));
        assert!(outside("l", "/etc/passwd"));
        assert!(outside("l", ".."));
        assert!(outside("d/l", "../.."));
        assert!(outside("m", "d/../.."));
        assert!(outside("m", "d/../x"));
        assert!(!outside("l", "a/b/file.txt"));
        assert!(!outside("d/l", "../a"));
        assert!(!outside("d/e/l", "./../../a"));
    }
}
