//! Validating a grader component before it is used: is it a component at all, does it
//! import only what the sandbox grants, does it export a supported version of the grader
//! world, and which graders (with which config schemas) does it provide.
//!
//! # What "imports only what the sandbox grants" means
//!
//! The sandbox links every WASI preview 2 interface but grants almost nothing through
//! them (see `sandbox.rs`). A component may import exactly the interfaces in
//! [`GRANTED_IMPORTS`]: I/O streams, the (virtual) clocks, the (seeded) random sources,
//! the filesystem (which holds only the read-only `/workspace` preopen), the CLI
//! interfaces of `wasi:cli` (an empty environment, no arguments, captured stdout/stderr,
//! an empty stdin, no terminal) and the grader world's own types. Rust's standard library
//! and the preview 1 adapter import `wasi:cli/environment` in every component, so that
//! import is accepted: the sandbox answers it with no variables.
//!
//! `wasi:sockets/*` is linked, and every socket operation is refused (no TCP, no UDP, no
//! name lookup; the hostile-guest tests prove it). A component that imports it is accepted
//! and the imports are reported as *denied*: componentize-py's CPython imports the socket
//! interfaces in every component, so refusing them would refuse every Python grader.
//! `evalhost grader check --strict` ([`ComponentReport::strict`]) refuses them too.
//! Anything else — `wasi:http/*`, a WASI interface not in the list, any non-WASI
//! interface (e.g. an `env` import) — is refused by name before the component is ever
//! instantiated.

use std::path::Path;

use wasmtime::component::Component;

use super::component::GraderComponent;
use super::versions::{Missing, NEWEST_WORLD_VERSION, missing_against_newest};
use super::{GraderHost, GraderHostError, GraderInfo};

/// The interfaces (without version) a grader component may import, each with what the
/// sandbox gives it there.
pub(crate) const GRANTED_IMPORTS: &[(&str, &str)] = &[
    ("wasi:io/error", "I/O errors"),
    ("wasi:io/poll", "polling"),
    ("wasi:io/streams", "byte streams"),
    (
        "wasi:clocks/wall-clock",
        "a clock frozen at 2026-01-01T00:00:00Z",
    ),
    ("wasi:clocks/monotonic-clock", "a clock frozen at 0"),
    ("wasi:random/random", "seeded randomness"),
    ("wasi:random/insecure", "seeded randomness"),
    ("wasi:random/insecure-seed", "a fixed seed"),
    ("wasi:filesystem/types", "the read-only /workspace preopen"),
    (
        "wasi:filesystem/preopens",
        "one preopen: /workspace, read-only",
    ),
    ("wasi:cli/environment", "no variables, no arguments"),
    ("wasi:cli/exit", "exit ends the call with an error"),
    ("wasi:cli/stdin", "an empty stdin"),
    ("wasi:cli/stdout", "captured, capped"),
    ("wasi:cli/stderr", "captured, capped"),
    ("wasi:cli/terminal-input", "no terminal"),
    ("wasi:cli/terminal-output", "no terminal"),
    ("wasi:cli/terminal-stdin", "no terminal"),
    ("wasi:cli/terminal-stdout", "no terminal"),
    ("wasi:cli/terminal-stderr", "no terminal"),
    ("evalhost:grader/types", "the grader world's types"),
    (
        "evalhost:grader/judge",
        "the judge, answered only for graders granted it (recorded judgments unless recording)",
    ),
];

/// What `evalhost grader check` found in a valid component.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ComponentReport {
    /// Where the component came from.
    pub origin: String,
    /// sha256 of the component's bytes, lowercase hex.
    pub digest: String,
    /// Size of the component in bytes.
    pub size: usize,
    /// The grader world version the component targets, e.g. `0.1.0`.
    pub world_version: String,
    /// The newest grader world version this host loads ([`super::NEWEST_WORLD_VERSION`]).
    pub newest_world_version: String,
    /// What the component lacks against the newest version: each export and import a later
    /// version added ([`super::missing_against_newest`]); empty when it targets the newest.
    pub missing: Vec<Missing>,
    /// Every granted import, as named in the component (e.g. `wasi:io/streams@0.2.6`), sorted.
    pub imports: Vec<String>,
    /// Imports the sandbox links but refuses every call of (`wasi:sockets/*`: no network),
    /// sorted. Accepted unless checking strictly; see [`ComponentReport::strict`].
    pub denied_imports: Vec<String>,
    /// The graders the component provides.
    pub graders: Vec<GraderInfo>,
}

impl ComponentReport {
    /// The strict check: an error when the component imports anything the sandbox only
    /// links to refuse (sockets), as `evalhost grader check --strict` reports it.
    pub fn strict(&self) -> Result<(), CheckError> {
        if self.denied_imports.is_empty() {
            return Ok(());
        }
        Err(CheckError::ForbiddenImports {
            origin: self.origin.clone(),
            imports: self
                .denied_imports
                .iter()
                .map(|name| format!("{name} ({SOCKETS_REFUSED})"))
                .collect(),
        })
    }
}

/// Why a component is not a usable grader component.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The file could not be read.
    #[error("failed to read `{}`: {error}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why reading failed.
        error: std::io::Error,
    },
    /// The bytes are not WebAssembly at all.
    #[error("`{origin}` is not a WebAssembly file ({found})")]
    NotWasm {
        /// Where the bytes came from.
        origin: String,
        /// What the file starts with instead.
        found: String,
    },
    /// A core module, not a component.
    #[error(
        "`{origin}` is a core WebAssembly module, not a component: build for wasm32-wasip2, or wrap the module with `wasm-tools component new` (see docs/writing-graders.md)"
    )]
    CoreModule {
        /// Where the bytes came from.
        origin: String,
    },
    /// The component imports interfaces the sandbox does not grant.
    #[error(
        "`{origin}` imports what the grader sandbox does not grant: {}",
        imports.join("; ")
    )]
    ForbiddenImports {
        /// Where the bytes came from.
        origin: String,
        /// Each refused import with the reason, e.g. `wasi:sockets/tcp@0.2.6 (network access)`.
        imports: Vec<String>,
    },
    /// The component does not export the grader world's functions.
    #[error(
        "`{origin}` does not export the evalhost grader world (needs `list-graders`, `check-config` and `grade`; it exports: {exports}); build it for the `grader` world of evalhost:grader {} (wit/since_vX.Y.Z)",
        super::WORLD_VERSIONS.join(" or ")
    )]
    MissingExports {
        /// Where the bytes came from.
        origin: String,
        /// What it exports instead.
        exports: String,
    },
    /// A grader's config schema is not JSON.
    #[error("`{origin}`: grader `{grader}` has a config schema that is not valid JSON: {message}")]
    BadSchema {
        /// Where the bytes came from.
        origin: String,
        /// The grader.
        grader: String,
        /// The JSON error.
        message: String,
    },
    /// The component provides no grader at all.
    #[error("`{origin}` provides no graders (`list-graders` returned an empty list)")]
    NoGraders {
        /// Where the bytes came from.
        origin: String,
    },
    /// Compiling, linking or listing failed.
    #[error(transparent)]
    Host(#[from] GraderHostError),
}

/// The world's exports every supported version has.
const WORLD_EXPORTS: [&str; 3] = ["list-graders", "check-config", "grade"];

impl GraderHost {
    /// Check a component file; see [`GraderHost::check_component`].
    pub fn check_component_file(
        &self,
        path: &Path,
    ) -> Result<(GraderComponent, ComponentReport), CheckError> {
        let bytes = std::fs::read(path).map_err(|source| CheckError::Read {
            path: path.to_owned(),
            error: source,
        })?;
        self.check_component(&bytes, &path.display().to_string())
    }

    /// Check that `bytes` are a grader component evalhost can run, and load it.
    ///
    /// Stricter than `GraderHost::load_component`: imports are held to
    /// `GRANTED_IMPORTS`, and the component must provide at least one grader whose config
    /// schema is JSON.
    pub fn check_component(
        &self,
        bytes: &[u8],
        origin: &str,
    ) -> Result<(GraderComponent, ComponentReport), CheckError> {
        check_header(bytes, origin)?;
        let (component, digest) = self.shared.compile(bytes, origin)?;
        let (imports, denied_imports) = check_imports(&component, &self.shared.engine, origin)?;
        check_exports(&component, &self.shared.engine, origin)?;
        let loaded =
            GraderComponent::from_compiled(self.shared.clone(), &component, digest, origin)?;
        if loaded.graders().is_empty() {
            return Err(CheckError::NoGraders {
                origin: origin.to_owned(),
            });
        }
        for info in loaded.graders() {
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&info.config_schema) {
                return Err(CheckError::BadSchema {
                    origin: origin.to_owned(),
                    grader: info.name.clone(),
                    message: e.to_string(),
                });
            }
        }
        let report = ComponentReport {
            origin: origin.to_owned(),
            digest: loaded.digest().to_owned(),
            size: bytes.len(),
            world_version: loaded.world_version().to_owned(),
            newest_world_version: NEWEST_WORLD_VERSION.to_owned(),
            missing: missing_against_newest(loaded.world_version()),
            imports,
            denied_imports,
            graders: loaded.graders().to_vec(),
        };
        Ok((loaded, report))
    }
}

/// Tell a component from a core module or a file that is not WebAssembly.
fn check_header(bytes: &[u8], origin: &str) -> Result<(), CheckError> {
    const MAGIC: &[u8] = b"\0asm";
    if !bytes.starts_with(MAGIC) {
        let found = if bytes.is_empty() {
            "the file is empty".to_owned()
        } else {
            let head: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
            format!(
                "it starts with bytes {}, not the wasm magic 00 61 73 6d",
                head.join(" ")
            )
        };
        return Err(CheckError::NotWasm {
            origin: origin.to_owned(),
            found,
        });
    }
    // Bytes 4..8: version (u16) and layer (u16); layer 0 is a core module, 1 a component.
    match bytes.get(6..8) {
        Some([0, 0]) => Err(CheckError::CoreModule {
            origin: origin.to_owned(),
        }),
        // Anything else (a component, or a truncated file) is left to the compiler, whose
        // error names what is wrong.
        _ => Ok(()),
    }
}

/// What a socket import gets in the sandbox.
const SOCKETS_REFUSED: &str = "network access: the sandbox grants no sockets";

/// The granted imports and the denied (socket) imports, each sorted; an error naming each
/// import the sandbox does not link at all.
fn check_imports(
    component: &Component,
    engine: &wasmtime::Engine,
    origin: &str,
) -> Result<(Vec<String>, Vec<String>), CheckError> {
    let ty = component.component_type();
    let mut names: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_owned()).collect();
    names.sort();
    let (denied, rest): (Vec<String>, Vec<String>) =
        names.into_iter().partition(|name| is_socket(name));
    let refused: Vec<String> = rest
        .iter()
        .filter_map(|name| refusal(name).map(|why| format!("{name} ({why})")))
        .collect();
    if refused.is_empty() {
        Ok((rest, denied))
    } else {
        Err(CheckError::ForbiddenImports {
            origin: origin.to_owned(),
            imports: refused,
        })
    }
}

fn is_socket(name: &str) -> bool {
    name.starts_with("wasi:sockets/")
}

/// Why the sandbox does not grant the import `name`, or `None` when it does.
///
/// `wasi:sockets/*` gets a reason too, but [`GraderHost::check_component`] accepts it (as a
/// denied import) unless checking strictly.
pub fn refusal(name: &str) -> Option<&'static str> {
    let interface = name.split('@').next().unwrap_or(name);
    if GRANTED_IMPORTS
        .iter()
        .any(|(granted, _)| *granted == interface)
    {
        return None;
    }
    Some(if is_socket(interface) {
        SOCKETS_REFUSED
    } else if interface.starts_with("wasi:http/") {
        "network access: the sandbox grants no HTTP"
    } else if interface.starts_with("wasi:") {
        "a WASI interface the sandbox does not grant"
    } else {
        "not provided by the grader sandbox"
    })
}

fn check_exports(
    component: &Component,
    engine: &wasmtime::Engine,
    origin: &str,
) -> Result<(), CheckError> {
    let ty = component.component_type();
    let exports: Vec<&str> = ty.exports(engine).map(|(n, _)| n).collect();
    if WORLD_EXPORTS.iter().all(|e| exports.contains(e)) {
        return Ok(());
    }
    Err(CheckError::MissingExports {
        origin: origin.to_owned(),
        exports: if exports.is_empty() {
            "nothing".to_owned()
        } else {
            exports.join(", ")
        },
    })
}
