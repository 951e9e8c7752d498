//! Descriptors evalhost's caller left open. A process inherits every descriptor its parent did
//! not mark close-on-exec; evalhost would hand those on to every process a run starts (the
//! agent's bash, an external agent): a caller's `exec 7<secret` would reach the agent as
//! `/dev/fd/7`. [`close_on_exec_inherited`] marks every descriptor from 3 up close-on-exec,
//! once per process (the CLI), and [`mark_all`] before each process a run starts (a library
//! embedding evalhost may open more): evalhost's own descriptors are close-on-exec already
//! (Rust opens them so), and what a run is meant to get it is given explicitly.

use std::sync::Once;

/// Mark every descriptor ≥ 3 close-on-exec (`close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`, Linux
/// 5.11; before that, each descriptor listed in `/proc/self/fd`), once per process: the CLI
/// calls it first thing in `main`.
pub fn close_on_exec_inherited() {
    static ONCE: Once = Once::new();
    ONCE.call_once(mark_all);
}

/// The same, every time: before each process a run starts (`crate::confine`), so that a
/// descriptor an embedding program opened without close-on-exec after evalhost's first run
/// does not reach a later one either. One system call.
pub(crate) fn mark_all() {
    if !close_range_cloexec() {
        each_listed();
    }
}

#[allow(unsafe_code)]
fn close_range_cloexec() -> bool {
    // SAFETY: with CLOSE_RANGE_CLOEXEC, close_range only sets the close-on-exec flag of the
    // descriptors in the range: it closes none, and touches no memory.
    let result = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    result == 0
}

#[allow(unsafe_code)]
fn each_listed() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<libc::c_int> = dir
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd >= 3)
        .collect();
    for fd in fds {
        // SAFETY: F_GETFD/F_SETFD read and set a descriptor's flags; on a descriptor that is
        // no longer open (the listing's own) they fail with EBADF and change nothing.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    fn cloexec(fd: libc::c_int) -> bool {
        nix::fcntl::FdFlag::from_bits_truncate(
            nix::fcntl::fcntl(unsafe_borrow(fd), nix::fcntl::FcntlArg::F_GETFD).unwrap(),
        )
        .contains(nix::fcntl::FdFlag::FD_CLOEXEC)
    }

    #[allow(unsafe_code)]
    fn unsafe_borrow(fd: libc::c_int) -> std::os::fd::BorrowedFd<'static> {
        // SAFETY: the tests' descriptors stay open while they are looked at.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }
    }

    #[test]
    fn both_ways_mark_a_descriptor_left_open() {
        for mark in [super::close_range_cloexec as fn() -> bool, || {
            super::each_listed();
            true
        }] {
            let file = std::fs::File::open("/dev/null").unwrap();
            let fd = file.as_raw_fd();
            nix::fcntl::fcntl(
                unsafe_borrow(fd),
                nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
            )
            .unwrap();
            assert!(!cloexec(fd));
            assert!(mark());
            assert!(cloexec(fd));
        }
    }
}
