//! Environments: a case's runs execute inside a container started from an image (Docker,
//! or Podman through the same command line), instead of on the host under `crate::confine`'s
//! namespaces or Landlock (docs/environments.md).
//!
//! `spec.rs` is what an environment is (plain data, from a case, `--environment` or a Harbor
//! task); `engine.rs` the container engine's command line; `image.rs` the image a case's runs
//! start from (pulled, built, its set-up committed once, its digest); `container.rs` one
//! run's container (started with evalhost's labels, its commands executed, removed however
//! the run ends); `reap.rs` removes the containers an evalhost that died left behind.

mod spec;

pub use spec::{
    DEFAULT_PIDS, DEFAULT_WORKDIR, Environment, ImageSource, Network, VERIFIER_LOGS, Verifier,
    parse_memory,
};
