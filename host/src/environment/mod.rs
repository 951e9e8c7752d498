//! Environments: a case's runs execute inside a container started from an image (Docker,
//! or Podman through the same command line), instead of on the host under the namespaces or
//! Landlock of `crate::confine` (docs/environments.md).
//!
//! `spec.rs` is what an environment is (plain data, from a case, `--environment` or a Harbor
//! task); `engine.rs` the container engine's command line; `image.rs` the image a case's runs
//! start from (pulled, built, its set-up committed once, its digest); `container.rs` one
//! run's container (started with evalhost's labels, its commands executed, removed however
//! the run ends); `reap.rs` removes the containers an evalhost that died left behind;
//! `files.rs` lists and hashes the files of an image's working directory or a case's environment.

mod container;
mod engine;
mod files;
mod image;
mod reap;
mod spec;

use std::path::PathBuf;

pub use container::{Container, ContainerSpec, Mount};
pub(crate) use files::{regular_files, sha256_of};
pub use image::{Images, PreparedImage};
pub use reap::reap;
pub use spec::{
    DEFAULT_PIDS, DEFAULT_WORKDIR, Environment, ImageSource, Network, VERIFIER_LOGS, Verifier,
    parse_memory,
};

/// Why an environment could not be made or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvironmentError {
    /// Neither `docker` nor `podman` is on `PATH`, and `EVALHOST_DOCKER` names none.
    #[error(
        "no container engine: neither `docker` nor `podman` is on PATH (install Docker, docs/environments.md, or name one with EVALHOST_DOCKER)"
    )]
    NoEngine,
    /// The container engine's program could not be started.
    #[error("failed to start the container engine `{program}`: {error}")]
    Spawn {
        /// The engine's program.
        program: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// A step of the engine failed (a pull, a build, the set-up, starting a container).
    #[error("{what} failed ({status}){}", if said.is_empty() { String::new() } else { format!(": {said}") })]
    Failed {
        /// The step, e.g. `starting a container of debian:bookworm`.
        what: String,
        /// How it ended: the engine's exit status, or why it was refused.
        status: String,
        /// What the engine printed (the end of its stderr, else stdout); may be empty.
        said: String,
    },
    /// A temporary directory (the image's working directory's copy) could not be made.
    #[error("failed to make a temporary directory in `{path}`: {error}")]
    TempDir {
        /// The directory it was to be made in.
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// Under `--locked-images`, the case's tag names another image than the one recorded.
    #[error(
        "image {image} is now {now}, not {recorded} as the case was recorded with (the tag moved; refused under --locked-images)"
    )]
    Moved {
        /// The image as the case names it.
        image: String,
        /// The image id the case recorded (its `digest:`).
        recorded: String,
        /// The image id the tag names now.
        now: String,
    },
}
