//! Ports forwarded into a sandbox's network namespace: the run's model endpoint (for an
//! external agent) and the ports a case widened its confinement to.
//!
//! bubblewrap starts the sandbox and writes its first process's pid to the info descriptor,
//! then waits on the block descriptor before running the program. Meanwhile a short-lived
//! child of evalhost joins the sandbox's network namespace (through the user namespace that
//! owns it when evalhost is not root: a single-threaded process may; evalhost's threads may
//! not), waits for bubblewrap to give it its loopback address, makes a listening socket on `127.0.0.1:PORT`
//! there for each port, hands them back over a UNIX socket and exits. evalhost then serves
//! each listener from outside — relaying its connections to the same port on the host's
//! loopback — and lets the sandbox go. Nothing else leaves the namespace: UDP, DNS, raw and
//! packet sockets have no interface but the sandbox's own loopback.

use std::ffi::{CString, OsString};
use std::io::{self, Read};
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use tokio::task::JoinSet;

/// Most ports one sandbox gets forwarded (the endpoint and a case's `connect:` list).
const MAX_PORTS: usize = 32;

/// How the run's model endpoint is served on a listener in the sandbox: by the run's own
/// session (`model::Session::serve_on`), which refuses — and records as this run's endpoint
/// error — a request for any other session.
pub(crate) type ServeEndpoint<'a> = &'a dyn Fn(std::net::TcpListener) -> io::Result<()>;

/// The descriptors bubblewrap reports on and waits on, made before it starts.
pub(crate) struct Pending {
    ports: Vec<u16>,
    /// Which of `ports` is the model endpoint's (served by the run's session when a server is
    /// given to [`Pending::start`], else relayed like the others).
    endpoint: Option<u16>,
    info_read: OwnedFd,
    info_write: OwnedFd,
    block_read: OwnedFd,
    block_write: OwnedFd,
}

impl Pending {
    pub(crate) fn new(ports: Vec<u16>, endpoint: Option<u16>) -> io::Result<Self> {
        if ports.len() > MAX_PORTS {
            return Err(io::Error::other(format!(
                "at most {MAX_PORTS} ports can be forwarded into a run"
            )));
        }
        let (info_read, info_write) = pipe()?;
        let (block_read, block_write) = pipe()?;
        Ok(Self {
            ports,
            endpoint,
            info_read,
            info_write,
            block_read,
            block_write,
        })
    }

    /// `--info-fd N --block-fd M` for bubblewrap's command line.
    pub(crate) fn arguments(&self) -> [OsString; 4] {
        [
            "--info-fd".into(),
            self.info_write.as_raw_fd().to_string().into(),
            "--block-fd".into(),
            self.block_read.as_raw_fd().to_string().into(),
        ]
    }

    /// The two descriptors bubblewrap must inherit (they are made close-on-exec, so that no
    /// other process started meanwhile gets them; the child clears the flag before `exec`).
    pub(crate) fn inherited(&self) -> [RawFd; 2] {
        [self.info_write.as_raw_fd(), self.block_read.as_raw_fd()]
    }

    /// After bubblewrap started: make the listeners in its network namespace, serve them (the
    /// endpoint's by `serve` when given), and let the sandbox run. The relays last as long as
    /// the returned value; the endpoint's listener as long as the session serving it.
    pub(crate) fn start(self, serve: Option<ServeEndpoint<'_>>) -> io::Result<Forwarding> {
        let Pending {
            ports,
            endpoint,
            info_read,
            info_write,
            block_read,
            block_write,
        } = self;
        // Ours are closed, so a bubblewrap that fails early ends our read.
        drop(info_write);
        drop(block_read);
        // The relays run on the runtime that awaits the sandbox's process.
        let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
        let _entered = runtime.enter();
        let pid = sandbox_pid(info_read)?;
        let listeners = listeners_in(pid, &ports)?;
        let mut relays = JoinSet::new();
        for (listener, port) in listeners.into_iter().zip(&ports) {
            if let (Some(serve), true) = (serve, endpoint == Some(*port)) {
                serve(listener)?;
                continue;
            }
            listener.set_nonblocking(true)?;
            let listener = tokio::net::TcpListener::from_std(listener)?;
            relays.spawn(relay(listener, *port));
        }
        nix::unistd::write(&block_write, b"x").map_err(io::Error::from)?;
        Ok(Forwarding { _relays: relays })
    }
}

/// The relays of one sandbox; dropping it closes the listeners and every connection.
pub(crate) struct Forwarding {
    _relays: JoinSet<()>,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from)
}

/// The pid (in evalhost's namespace) of the sandbox's first process, from bubblewrap's
/// `{"child-pid": N, ...}`.
fn sandbox_pid(info: OwnedFd) -> io::Result<i32> {
    let mut file = std::fs::File::from(info);
    let mut text = Vec::new();
    let mut chunk = [0u8; 512];
    // The document is a few hundred bytes and ends with `}`.
    while !text.contains(&b'}') && text.len() < 64 * 1024 {
        match file.read(&mut chunk)? {
            0 => break,
            n => text.extend_from_slice(&chunk[..n]),
        }
    }
    #[derive(serde::Deserialize)]
    struct Info {
        #[serde(rename = "child-pid")]
        child_pid: i32,
    }
    let info: Info = serde_json::from_slice(&text)
        .map_err(|_| io::Error::other("bubblewrap did not start the sandbox"))?;
    Ok(info.child_pid)
}

/// Listening sockets on `127.0.0.1:PORT` inside the network namespace of `pid`, made by a
/// forked child that joins the namespaces (see the module's documentation).
#[allow(unsafe_code)]
pub(super) fn listeners_in(pid: i32, ports: &[u16]) -> io::Result<Vec<std::net::TcpListener>> {
    // Everything the child needs is made before the fork: after it, the child of a
    // multi-threaded process may only make system calls.
    let net = CString::new(format!("/proc/{pid}/ns/net")).map_err(io::Error::other)?;
    let addrs: Vec<libc::sockaddr_in> = ports
        .iter()
        .map(|port| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        })
        .collect();
    let mut fds = [-1 as RawFd; MAX_PORTS];
    let mut pair = [-1 as RawFd; 2];
    // SAFETY: `pair` has room for the two descriptors.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just made and are owned here alone.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    // SAFETY: the child runs only async-signal-safe system calls on memory made above, then
    // `_exit`s; it never returns into Rust code.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(io::Error::last_os_error());
    }
    if child == 0 {
        // SAFETY: see above.
        let status = unsafe { make_listeners(&net, &addrs, &mut fds) };
        // SAFETY: see above.
        unsafe {
            send_fds(theirs.as_raw_fd(), status, &fds[..addrs.len()]);
            libc::_exit(0);
        }
    }
    drop(theirs);
    let received = receive_fds(&ours, ports.len());
    let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(child), None);
    received
}

/// `ioctl` on a namespace descriptor: the user namespace that owns it (`_IO(0xb7, 0x1)`).
const NS_GET_USERNS: libc::c_ulong = 0xb701;

/// How long the forked child waits (in milliseconds) for bubblewrap to give the sandbox its
/// loopback address: bubblewrap reports the sandbox's pid first, and sets up the loopback
/// before it reads the block descriptor, which is only written after the listeners exist.
const LOOPBACK_TRIES: u32 = 5_000;

/// In the forked child: join the sandbox's network namespace (evalhost as root may as it is;
/// anyone else through the user namespace that owns it, where it holds every capability) and
/// listen on each address. Returns 0, or the step that failed (1: user namespace, 2: network
/// namespace, 3: a socket) in the low byte and its errno above.
#[allow(unsafe_code)]
unsafe fn make_listeners(
    net: &CString,
    addrs: &[libc::sockaddr_in],
    fds: &mut [RawFd; MAX_PORTS],
) -> i32 {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: plain system calls on valid C strings and owned buffers.
    unsafe {
        let net_ns = libc::open(net.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if net_ns < 0 {
            return 2 | (errno() << 8);
        }
        if libc::setns(net_ns, libc::CLONE_NEWNET) != 0 {
            let owner = libc::ioctl(net_ns, NS_GET_USERNS);
            if owner < 0 || libc::setns(owner, libc::CLONE_NEWUSER) != 0 {
                return 1 | (errno() << 8);
            }
            if libc::setns(net_ns, libc::CLONE_NEWNET) != 0 {
                return 2 | (errno() << 8);
            }
        }
        for (addr, fd) in addrs.iter().zip(fds.iter_mut()) {
            let socket = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if socket < 0 {
                return 3 | (errno() << 8);
            }
            let one: libc::c_int = 1;
            libc::setsockopt(
                socket,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&raw const one).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            );
            let mut tries = 0;
            while libc::bind(
                socket,
                std::ptr::from_ref(addr).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            ) != 0
            {
                tries += 1;
                if errno() != libc::EADDRNOTAVAIL || tries >= LOOPBACK_TRIES {
                    return 3 | (errno() << 8);
                }
                let millisecond = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 1_000_000,
                };
                libc::nanosleep(&millisecond, std::ptr::null_mut());
            }
            if libc::listen(socket, 128) != 0 {
                return 3 | (errno() << 8);
            }
            *fd = socket;
        }
    }
    0
}

/// Room for the control message carrying [`MAX_PORTS`] descriptors.
const CONTROL_SPACE: usize = 256;

/// In the forked child: send `status` and, when it is 0, the descriptors.
#[allow(unsafe_code)]
unsafe fn send_fds(socket: RawFd, status: i32, fds: &[RawFd]) {
    let mut status = status;
    let mut iov = libc::iovec {
        iov_base: (&raw mut status).cast(),
        iov_len: size_of::<i32>(),
    };
    let mut control = [0u8; CONTROL_SPACE];
    // SAFETY: a zeroed msghdr is valid; the pointers set below outlive the call.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        if status == 0 && !fds.is_empty() {
            let bytes = std::mem::size_of_val(fds) as libc::c_uint;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(bytes) as usize;
            let header = libc::CMSG_FIRSTHDR(&msg);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(bytes) as usize;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(header).cast(), fds.len());
        }
        libc::sendmsg(socket, &msg, 0);
    }
}

/// In evalhost: the child's status and `count` descriptors.
#[allow(unsafe_code)]
fn receive_fds(socket: &OwnedFd, count: usize) -> io::Result<Vec<std::net::TcpListener>> {
    let mut status: i32 = -1;
    let mut iov = libc::iovec {
        iov_base: (&raw mut status).cast(),
        iov_len: size_of::<i32>(),
    };
    let mut control = [0u8; CONTROL_SPACE];
    // SAFETY: a zeroed msghdr is valid; the buffers outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len();
    // SAFETY: as above.
    let got = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut listeners = Vec::new();
    // SAFETY: the kernel filled `control` up to `msg_controllen`.
    unsafe {
        let mut header = libc::CMSG_FIRSTHDR(&msg);
        while !header.is_null() {
            if (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(header).cast::<RawFd>();
                let n =
                    ((*header).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / size_of::<RawFd>();
                for i in 0..n {
                    let fd = std::ptr::read_unaligned(data.add(i));
                    listeners.push(std::net::TcpListener::from(OwnedFd::from_raw_fd(fd)));
                }
            }
            header = libc::CMSG_NXTHDR(&msg, header);
        }
    }
    if got as usize != size_of::<i32>() || status != 0 || listeners.len() != count {
        let step = match status & 0xff {
            1 => "joining the sandbox's user namespace",
            2 => "joining the sandbox's network namespace",
            3 => "listening on a forwarded port",
            _ => "forwarding ports into the sandbox",
        };
        let cause = io::Error::from_raw_os_error(status >> 8);
        return Err(io::Error::other(format!("{step}: {cause}")));
    }
    Ok(listeners)
}

/// Relay every connection made inside the sandbox to `port` on the host's loopback.
async fn relay(listener: tokio::net::TcpListener, port: u16) {
    let mut connections = JoinSet::new();
    let host = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        let Ok((mut inside, _)) = listener.accept().await else {
            return;
        };
        let _ = inside.set_nodelay(true);
        connections.spawn(async move {
            let Ok(mut outside) = tokio::net::TcpStream::connect(host).await else {
                return;
            };
            let _ = outside.set_nodelay(true);
            let _ = tokio::io::copy_bidirectional(&mut inside, &mut outside).await;
        });
        // Finished connections are let go as new ones come.
        while connections.try_join_next().is_some() {}
    }
}
