//! A real PostgreSQL server for a test (Debian's package, as `.ci/run` installs it): a fresh
//! cluster in a temp dir, trust authentication, listening on a free loopback port and a
//! socket in that dir; stopped when dropped. As root (CI), the server runs as the
//! `postgres` user the package creates (PostgreSQL refuses to run as root).

#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct PostgresServer {
    child: Child,
    _dir: tempfile::TempDir,
    pub port: u16,
}

impl PostgresServer {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Start one, or `None` (the test skips) when PostgreSQL is not installed, unless
    /// `EVALHOST_REQUIRE_TOOLCHAINS=1` (then the test fails).
    pub fn start() -> Option<Self> {
        let Some(bin) = bin_dir() else {
            if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
                panic!(
                    "PostgreSQL is required (EVALHOST_REQUIRE_TOOLCHAINS=1): apt-get install postgresql"
                );
            }
            eprintln!("skipped: PostgreSQL is not installed (Debian package postgresql)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let user = run_as();
        if let Some((uid, gid)) = user {
            nix::unistd::chown(dir.path(), Some(uid.into()), Some(gid.into())).unwrap();
        }
        let as_user = |command: &mut Command| {
            if let Some((uid, gid)) = user {
                command.uid(uid).gid(gid);
            }
        };
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args([
                "--auth=trust",
                "--username=postgres",
                "--no-sync",
                "--encoding=UTF8",
                "-D",
            ])
            .arg(&data)
            .stdout(Stdio::null());
        as_user(&mut initdb);
        let status = initdb.output().unwrap();
        assert!(status.status.success(), "initdb failed: {status:?}");
        let port = free_port();
        let mut server = Command::new(bin.join("postgres"));
        server
            .arg("-D")
            .arg(&data)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
            .arg(dir.path())
            .args(["-c", "fsync=off", "-c", "max_connections=50"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        as_user(&mut server);
        let child = server.spawn().unwrap();
        let mut started = Self {
            child,
            _dir: dir,
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while postgres::Client::connect(&started.url(), postgres::NoTls).is_err() {
            assert!(Instant::now() < deadline, "PostgreSQL did not start");
            if let Ok(Some(status)) = started.child.try_wait() {
                panic!("PostgreSQL exited: {status}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(started)
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        // SIGINT: PostgreSQL's fast shutdown.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        );
        let _ = self.child.wait();
    }
}

/// The newest installed server's `bin` directory.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("postgres").exists() && bin.join("initdb").exists())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(Path::file_name)
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    versions.pop()
}

/// As root: the `postgres` user's (else `nobody`'s) uid and gid.
fn run_as() -> Option<(u32, u32)> {
    if !nix::unistd::Uid::effective().is_root() {
        return None;
    }
    let user = nix::unistd::User::from_name("postgres")
        .ok()
        .flatten()
        .or_else(|| nix::unistd::User::from_name("nobody").ok().flatten())?;
    Some((user.uid.as_raw(), user.gid.as_raw()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
