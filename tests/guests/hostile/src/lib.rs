//! A hostile grader component: every grader is a probe that tries to break
//! out of evalhost's sandbox or exhaust its limits.
//!
//! A probe that gets what it tried for returns a **pass** whose message says
//! what it got, so a host test that sees a pass knows the sandbox failed. A
//! probe the sandbox stops returns [`GradeError::Failed`] with the OS error
//! text, or traps (fuel, deadline, memory, stack). `ok` always passes, to show
//! the component still works after a probe; `clock` reports the (virtual)
//! wall clock and a (seeded) random number. Every probe ignores its config;
//! `hold-memory` and `use-memory` (not probes: they pass) take a MiB count.
//!
//! Built for `wasm32-wasip2` by the host's build script; never used natively.

use std::hash::BuildHasher;
use std::hint::black_box;
use std::io::Write;

use evalhost_sdk::message::quote_excerpt;
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict, WORKSPACE};

/// Defines a probe grader: a unit struct named `$ty`, registered as `$name`.
macro_rules! probe {
    ($ty:ident, $name:literal, $summary:literal, |$evidence:ident| $body:block) => {
        #[doc = $summary]
        pub struct $ty;

        impl Grader for $ty {
            type Config = serde::de::IgnoredAny;
            const NAME: &'static str = $name;
            const VERSION: &'static str = "0.1.0";
            const SUMMARY: &'static str = $summary;

            fn config_schema() -> serde_json::Value {
                serde_json::json!({})
            }

            fn grade(_: &Self::Config, $evidence: &Evidence) -> Result<Verdict, GradeError> {
                $body
            }
        }
    };
}

/// A pass reporting what a read got, or the OS error that stopped it.
fn read_probe(path: &str) -> Result<Verdict, GradeError> {
    std::fs::read(path)
        .map(|bytes| {
            Verdict::pass_with(format!(
                "read {path}: {}",
                quote_excerpt(&String::from_utf8_lossy(&bytes))
            ))
        })
        .map_err(|e| GradeError::Failed(format!("{path}: {e}")))
}

probe!(
    ReadEtcPasswd,
    "read-etc-passwd",
    "Reads /etc/passwd",
    |_evidence| { read_probe("/etc/passwd") }
);

probe!(
    ReadParent,
    "read-parent",
    "Reads secret.txt beside the workspace, through /workspace/.. and through a relative ../",
    |_evidence| {
        let mut errors = Vec::new();
        for path in ["/workspace/../secret.txt", "../secret.txt"] {
            match read_probe(path) {
                Ok(verdict) => return Ok(verdict),
                Err(error) => errors.push(error.message().to_owned()),
            }
        }
        Err(GradeError::Failed(errors.join("; ")))
    }
);

probe!(
    ReadSymlink,
    "read-symlink",
    "Reads /workspace/link, which the test points outside the workspace",
    |_evidence| { read_probe(&format!("{WORKSPACE}/link")) }
);

probe!(
    WriteFile,
    "write-file",
    "Creates /workspace/pwned.txt",
    |_evidence| {
        let path = format!("{WORKSPACE}/pwned.txt");
        std::fs::write(&path, "pwned")
            .map(|()| Verdict::pass_with(format!("wrote {path}")))
            .map_err(|e| GradeError::Failed(format!("{path}: {e}")))
    }
);

probe!(
    InfiniteLoop,
    "infinite-loop",
    "Loops forever without I/O",
    |_evidence| {
        let mut counter = 0u64;
        loop {
            // The optimizer must assume `black_box` reads and writes `counter`,
            // so the loop cannot be removed or proven endless.
            counter = black_box(counter).wrapping_add(1);
        }
    }
);

probe!(
    Alloc1Gib,
    "alloc-1gib",
    "Allocates 1 GiB and touches every page",
    |_evidence| {
        const GIB: usize = 1 << 30;
        let mut memory: Vec<u8> = Vec::new();
        memory
            .try_reserve_exact(GIB)
            .map_err(|e| GradeError::Failed(format!("allocating 1 GiB: {e}")))?;
        memory.resize(GIB, 0xA5);
        let memory = black_box(memory);
        let touched = memory.iter().step_by(4096).filter(|&&b| b == 0xA5).count();
        Ok(Verdict::pass_with(format!(
            "allocated 1 GiB and touched {touched} pages"
        )))
    }
);

/// Defines a grader that allocates the number of MiB its config gives (touching every page)
/// and passes: `hold-memory` keeps the allocation when it returns (the instance's linear
/// memory stays grown for the next call into it), `use-memory` frees it.
macro_rules! memory_grader {
    ($ty:ident, $name:literal, $summary:literal, $keep:literal) => {
        #[doc = $summary]
        pub struct $ty;

        impl Grader for $ty {
            /// MiB to allocate.
            type Config = u32;
            const NAME: &'static str = $name;
            const VERSION: &'static str = "0.1.0";
            const SUMMARY: &'static str = $summary;

            fn config_schema() -> serde_json::Value {
                serde_json::json!({"type": "integer", "minimum": 0})
            }

            fn grade(mib: &u32, _evidence: &Evidence) -> Result<Verdict, GradeError> {
                let memory = black_box(vec![0x5Au8; (*mib as usize) << 20]);
                let touched = memory.iter().step_by(4096).filter(|&&b| b == 0x5A).count();
                if $keep {
                    memory.leak();
                }
                Ok(Verdict::pass_with(format!(
                    "allocated {mib} MiB and touched {touched} pages"
                )))
            }
        }
    };
}

memory_grader!(
    HoldMemory,
    "hold-memory",
    "Allocates its config's number of MiB and keeps them: the memory stays grown",
    true
);

memory_grader!(
    UseMemory,
    "use-memory",
    "Allocates its config's number of MiB and frees them before it returns",
    false
);

/// Recurses `depth` times. Not a tail call, and not an accumulation LLVM can
/// turn into a loop; no locals live in linear memory, so it exhausts the
/// engine's call stack rather than the shadow stack.
#[inline(never)]
fn dive(depth: u64) -> u64 {
    if depth == 0 {
        return 1;
    }
    dive(depth - 1).rotate_left(7) ^ depth
}

probe!(
    DeepRecursion,
    "deep-recursion",
    "Recurses without bound",
    |_evidence| {
        let result = dive(black_box(u64::MAX));
        Ok(Verdict::pass_with(format!("recursed 2^64 times: {result}")))
    }
);

probe!(
    StdoutFlood,
    "stdout-flood",
    "Prints 100 MiB to stdout",
    |_evidence| {
        const CHUNK: usize = 64 * 1024;
        const TOTAL: usize = 100 << 20;
        let chunk = [b'A'; CHUNK];
        let mut stdout = std::io::stdout().lock();
        for written in (0..TOTAL).step_by(CHUNK) {
            stdout
                .write_all(&chunk)
                .and_then(|()| stdout.flush())
                .map_err(|e| GradeError::Failed(format!("stdout after {written} bytes: {e}")))?;
        }
        Ok(Verdict::pass_with(format!("wrote {TOTAL} bytes to stdout")))
    }
);

probe!(
    Env,
    "env",
    "Reports environment variables and arguments",
    |_evidence| {
        let vars: Vec<String> = std::env::vars_os()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        let args: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        if vars.is_empty() && args.is_empty() {
            Err(GradeError::Failed(
                "no environment variables and no arguments".to_owned(),
            ))
        } else {
            Ok(Verdict::pass_with(format!("env: {vars:?}; args: {args:?}")))
        }
    }
);

probe!(AlwaysOk, "ok", "Always passes", |_evidence| {
    Ok(Verdict::pass_with("ok"))
});

/// 8 bytes from `getentropy`, which wasi-libc serves from `wasi:random/random`
/// (std's `RandomState` uses `wasi:random/insecure-seed` instead).
#[allow(unsafe_code)]
fn random_u64() -> Result<u64, GradeError> {
    unsafe extern "C" {
        fn getentropy(buffer: *mut u8, len: usize) -> i32;
    }
    let mut bytes = [0u8; 8];
    // SAFETY: `bytes` is valid for writes of its length, which is within
    // getentropy's 256-byte limit.
    match unsafe { getentropy(bytes.as_mut_ptr(), bytes.len()) } {
        0 => Ok(u64::from_le_bytes(bytes)),
        _ => Err(GradeError::Failed(format!(
            "getentropy: {}",
            std::io::Error::last_os_error()
        ))),
    }
}

probe!(
    Clock,
    "clock",
    "Reports the wall clock and random numbers from both WASI random interfaces",
    |_evidence| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| GradeError::Failed(format!("wall clock before 1970: {e}")))?;
        let random = random_u64()?;
        let seeded = std::collections::hash_map::RandomState::new().hash_one(0u64);
        Ok(Verdict::pass_with(format!(
            "wall clock {} s, random {random}, insecure seed hash {seeded}",
            now.as_secs()
        )))
    }
);

probe!(
    Network,
    "network",
    "Opens TCP connections to loopback and to a public address",
    |_evidence| {
        let mut errors = Vec::new();
        for address in ["127.0.0.1:80", "1.1.1.1:443"] {
            match std::net::TcpStream::connect(address) {
                Ok(_) => return Ok(Verdict::pass_with(format!("connected to {address}"))),
                Err(e) => errors.push(format!("{address}: {e}")),
            }
        }
        Err(GradeError::Failed(errors.join("; ")))
    }
);

probe!(
    HugeVerdict,
    "huge-verdict",
    "Passes with a 100 MiB message",
    |_evidence| { Ok(Verdict::pass_with("x".repeat(100 << 20))) }
);
probe!(
    ReadSymlinkChain,
    "read-symlink-chain",
    "Reads /workspace/chain, a chain of symlinks inside the workspace whose last link points outside",
    |_evidence| { read_probe(&format!("{WORKSPACE}/chain")) }
);

probe!(
    ReadTrailingSlash,
    "read-trailing-slash",
    "Reads or lists outside the workspace through trailing-slash, `.` and `//` path forms",
    |_evidence| {
        let mut errors = Vec::new();
        for path in [
            "/workspace/../secret.txt/",
            "/workspace/./../secret.txt",
            "/workspace//..//secret.txt",
            "/workspace/link/",
            "/workspace/link/.",
            "/workspace/chain/",
            "//etc/passwd",
            "/workspace/../secret.txt/.",
        ] {
            match read_probe(path) {
                Ok(verdict) => return Ok(verdict),
                Err(error) => errors.push(error.message().to_owned()),
            }
        }
        for dir in ["/workspace/..", "/workspace/../", "/workspace/.././", "/"] {
            match std::fs::read_dir(dir) {
                Ok(entries) => {
                    let names: Vec<String> = entries
                        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
                        .collect();
                    if names.iter().any(|n| n == "secret.txt" || n == "etc") {
                        return Ok(Verdict::pass_with(format!("listed {dir}: {names:?}")));
                    }
                    errors.push(format!("{dir}: listed only {names:?}"));
                }
                Err(e) => errors.push(format!("{dir}: {e}")),
            }
        }
        Err(GradeError::Failed(errors.join("; ")))
    }
);

/// A pass when `attempt` succeeded at changing the workspace, else the OS error.
fn write_probe(what: &str, attempt: std::io::Result<()>) -> Result<Verdict, GradeError> {
    attempt
        .map(|()| Verdict::pass_with(format!("{what}: done")))
        .map_err(|e| GradeError::Failed(format!("{what}: {e}")))
}

probe!(
    Truncate,
    "truncate",
    "Truncates /workspace/notes.md, by opening it for truncation and by set_len",
    |_evidence| {
        let path = format!("{WORKSPACE}/notes.md");
        let by_open = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .map(drop);
        if by_open.is_ok() {
            return write_probe("open with O_TRUNC", by_open);
        }
        let by_set_len = std::fs::File::open(&path).and_then(|f| f.set_len(0));
        match by_set_len {
            Ok(()) => write_probe("set_len(0)", Ok(())),
            Err(e) => Err(GradeError::Failed(format!(
                "{path}: open with O_TRUNC: {}; set_len(0): {e}",
                by_open.err().map(|e| e.to_string()).unwrap_or_default()
            ))),
        }
    }
);

probe!(
    Create,
    "create",
    "Creates /workspace/created.txt and /workspace/created-dir",
    |_evidence| {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(format!("{WORKSPACE}/created.txt"))
            .map(drop);
        if file.is_ok() {
            return write_probe("create created.txt", file);
        }
        let dir = std::fs::create_dir(format!("{WORKSPACE}/created-dir"));
        if dir.is_ok() {
            return write_probe("create created-dir", dir);
        }
        Err(GradeError::Failed(format!(
            "create created.txt: {}; create created-dir: {}",
            file.err().map(|e| e.to_string()).unwrap_or_default(),
            dir.err().map(|e| e.to_string()).unwrap_or_default()
        )))
    }
);

probe!(
    Rename,
    "rename",
    "Renames /workspace/notes.md to /workspace/renamed.md",
    |_evidence| {
        write_probe(
            "rename notes.md",
            std::fs::rename(
                format!("{WORKSPACE}/notes.md"),
                format!("{WORKSPACE}/renamed.md"),
            ),
        )
    }
);

probe!(
    HardLink,
    "hard-link",
    "Hard-links /workspace/notes.md as /workspace/hard.md",
    |_evidence| {
        write_probe(
            "hard-link notes.md",
            std::fs::hard_link(
                format!("{WORKSPACE}/notes.md"),
                format!("{WORKSPACE}/hard.md"),
            ),
        )
    }
);

probe!(
    SetTimes,
    "set-times",
    "Sets the modification time of /workspace/notes.md to the epoch",
    |_evidence| {
        let times = std::fs::FileTimes::new()
            .set_modified(std::time::UNIX_EPOCH)
            .set_accessed(std::time::UNIX_EPOCH);
        write_probe(
            "set-times notes.md",
            std::fs::File::open(format!("{WORKSPACE}/notes.md")).and_then(|f| f.set_times(times)),
        )
    }
);

probe!(
    Remove,
    "remove",
    "Removes /workspace/notes.md",
    |_evidence| {
        write_probe(
            "remove notes.md",
            std::fs::remove_file(format!("{WORKSPACE}/notes.md")),
        )
    }
);

probe!(
    SocketListen,
    "socket-listen",
    "Opens listening TCP and bound UDP sockets",
    |_evidence| {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0");
        if let Ok(listener) = &tcp {
            return Ok(Verdict::pass_with(format!(
                "listening on {:?}",
                listener.local_addr()
            )));
        }
        let udp = std::net::UdpSocket::bind("0.0.0.0:0");
        if let Ok(socket) = &udp {
            return Ok(Verdict::pass_with(format!(
                "bound UDP {:?}",
                socket.local_addr()
            )));
        }
        Err(GradeError::Failed(format!(
            "tcp listen: {}; udp bind: {}",
            tcp.err().map(|e| e.to_string()).unwrap_or_default(),
            udp.err().map(|e| e.to_string()).unwrap_or_default()
        )))
    }
);

probe!(
    MemoryCopyLoop,
    "memory-copy-loop",
    "Copies 32 MiB within a 64 MiB buffer forever (one `memory.copy` per iteration)",
    |_evidence| {
        const HALF: usize = 32 << 20;
        let mut buffer = vec![0x5Au8; 2 * HALF];
        let mut round = 0u8;
        loop {
            buffer[0] = round;
            // With bulk memory (on by default for wasm32-wasip2) this is a single
            // `memory.copy`: a few units of fuel for 32 MiB of work.
            buffer.copy_within(..HALF, HALF);
            // The buffer escapes every round, so the copy cannot be proven dead.
            round = black_box(&mut buffer)[HALF].wrapping_add(1);
        }
    }
);

probe!(
    OpenFiles,
    "open-files",
    "Opens /workspace/notes.md a million times without closing (host descriptors)",
    |_evidence| {
        let mut files = Vec::new();
        for _ in 0..1_000_000 {
            match std::fs::File::open(format!("{WORKSPACE}/notes.md")) {
                Ok(file) => files.push(file),
                Err(e) => {
                    return Err(GradeError::Failed(format!(
                        "open failed after {} files: {e}",
                        files.len()
                    )));
                }
            }
        }
        Ok(Verdict::pass_with(format!(
            "holding {} open files",
            files.len()
        )))
    }
);

probe!(
    Unreachable,
    "unreachable",
    "Executes the `unreachable` instruction",
    |_evidence| { unreachable_instruction() }
);

/// The `unreachable` instruction itself (on a native build, for `cargo clippy --workspace`,
/// an abort).
fn unreachable_instruction() -> ! {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    std::process::abort();
}

probe!(Panic, "panic", "Panics", |_evidence| {
    panic!("the panic probe panicked")
});

probe!(
    JudgeOnce,
    "judge-once",
    "Asks the judge one question about the final text and passes with its answer",
    |evidence| {
        let answer = evalhost_sdk::judge::ask_text("Say what you see.", &evidence.final_text)?;
        Ok(Verdict::pass_with(format!(
            "judge said {}",
            quote_excerpt(&answer)
        )))
    }
);

probe!(
    JudgeLoop,
    "judge-loop",
    "Asks the judge again and again, ignoring every error, and would pass if it ever stopped",
    |evidence| {
        let mut asked: u64 = 0;
        loop {
            let question = evalhost_sdk::judge::question(
                "Say what you see.",
                &format!("{} #{asked}", evidence.final_text),
                None,
            );
            let _ = black_box(evalhost_sdk::judge::ask(&question));
            asked += 1;
            if asked == u64::MAX {
                return Ok(Verdict::pass_with("the judge loop ended"));
            }
        }
    }
);

probe!(
    JudgeTwice,
    "judge-twice",
    "Asks the judge two questions about the final text and passes with both answers, in order",
    |evidence| {
        let first = evalhost_sdk::judge::ask_text("Say what you see first.", &evidence.final_text)?;
        let second =
            evalhost_sdk::judge::ask_text("Say what you see second.", &evidence.final_text)?;
        Ok(Verdict::pass_with(format!(
            "judge said {}, then {}",
            quote_excerpt(&first),
            quote_excerpt(&second)
        )))
    }
);

evalhost_sdk::register_graders!(
    ReadEtcPasswd,
    ReadParent,
    ReadSymlink,
    WriteFile,
    InfiniteLoop,
    Alloc1Gib,
    DeepRecursion,
    StdoutFlood,
    Env,
    AlwaysOk,
    Clock,
    Network,
    HugeVerdict,
    Panic,
    ReadSymlinkChain,
    ReadTrailingSlash,
    Truncate,
    Create,
    Rename,
    HardLink,
    SetTimes,
    Remove,
    SocketListen,
    MemoryCopyLoop,
    OpenFiles,
    Unreachable,
    JudgeOnce,
    JudgeLoop,
    JudgeTwice,
    HoldMemory,
    UseMemory,
);
