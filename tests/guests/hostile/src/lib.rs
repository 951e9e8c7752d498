//! A hostile grader component: every grader is a probe that tries to break
//! out of evalhost's sandbox or exhaust its limits.
//!
//! A probe that gets what it tried for returns a **pass** whose message says
//! what it got, so a host test that sees a pass knows the sandbox failed. A
//! probe the sandbox stops returns [`GradeError::Failed`] with the OS error
//! text, or traps (fuel, deadline, memory, stack). `ok` always passes, to show
//! the component still works after a probe; `clock` reports the (virtual)
//! wall clock and a (seeded) random number. Every probe ignores its config.
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
    "Prints 10 MiB to stdout",
    |_evidence| {
        const CHUNK: usize = 64 * 1024;
        const TOTAL: usize = 10 * 1024 * 1024;
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
    "Passes with a 16 MiB message",
    |_evidence| { Ok(Verdict::pass_with("x".repeat(16 * 1024 * 1024))) }
);

probe!(Panic, "panic", "Panics", |_evidence| {
    panic!("the panic probe panicked")
});

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
);
