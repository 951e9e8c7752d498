//! The Landlock ruleset of one run (built in evalhost with the `landlock` crate) and the two
//! system calls that enforce it on the calling thread, which then starts the run's process.

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, Scope, path_beneath_rules,
};

use super::system::Readable;
use super::{RunDirs, Widening};

/// Devices every program writes to (`> /dev/null`) or needs for a terminal (Codex runs its
/// commands on a pseudo-terminal).
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The kernel's Landlock ABI version, 0 when Landlock is absent or disabled.
#[allow(unsafe_code)]
pub(super) fn kernel_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with the VERSION flag the kernel reads no attribute (null, size 0).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

/// The ruleset for a run in `dirs`, for Landlock ABI `abi` (1 ..= [`super::TARGET_ABI`],
/// supported by the kernel): every right the ABI knows is handled, so whatever no rule grants
/// is refused. `None` only if the kernel made no ruleset.
pub(super) fn build(
    abi: u32,
    readable: &Readable,
    dirs: &RunDirs<'_>,
    widen: &Widening,
    endpoint_port: u16,
) -> Result<Option<OwnedFd>, RulesetError> {
    let abi = ABI::from(abi as i32);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))?;
    let restrict_net = abi >= ABI::V4 && !widen.any_port;
    if restrict_net {
        ruleset = ruleset.handle_access(AccessNet::ConnectTcp)?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::from_all(ABI::V6))?;
    }
    let mut writable: Vec<PathBuf> = vec![dirs.home.to_owned(), dirs.tmp.to_owned()];
    let mut readable: Vec<&PathBuf> = readable.roots.iter().chain(&widen.read).collect();
    let workspace = dirs.workspace.to_owned();
    if dirs.workspace_read_only {
        readable.push(&workspace);
    } else {
        writable.push(workspace.clone());
    }
    writable.extend(DEVICES.iter().map(PathBuf::from));
    writable.extend(widen.write.iter().cloned());
    let mut created = ruleset
        .create()?
        .no_new_privs(true)
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi)))?;
    if restrict_net {
        let ports = std::iter::once(endpoint_port).chain(widen.connect.iter().copied());
        created = created.add_rules(
            ports.map(|port| Ok::<_, RulesetError>(NetPort::new(port, AccessNet::ConnectTcp))),
        )?;
    }
    // With `HardRequirement` on a supported ABI the ruleset always has its descriptor.
    Ok(created.into())
}

/// On the calling thread only (and every process it starts from then on): no new
/// privileges, then the ruleset `fd` (when not -1). The thread stays confined for good.
#[allow(unsafe_code)]
pub(super) fn restrict_self(fd: libc::c_int) -> std::io::Result<()> {
    // SAFETY: plain system calls on integers.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if fd >= 0 && libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
