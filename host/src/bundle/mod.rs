//! Vetted grader bundles: a team packs its grader components with a manifest of every
//! file's sha256, signs the manifest with its SSH key (OpenSSH `SSHSIG`, namespace
//! `evalhost-bundle`), and other projects verify and install it into a local,
//! content-addressed store, pinned by `evalhost.lock`. Cases then name its graders as
//! `bundle-name/grader-name`. See docs/bundles.md.
//!
//! - `manifest`: `bundle.toml` and the signed `MANIFEST.toml`;
//! - `archive`: the deterministic packer's writer and the safe unpacker;
//! - [`pack()`]: a source directory becomes an archive, components checked;
//! - `sshsig`: signing, verifying, `allowed_signers`;
//! - [`verify_bundle`]: signature, exact file set, digests — all before anything is written;
//! - [`BundleStore`], [`Lock`], [`TrustPolicy`], [`BundleResolver`] (load time);
//! - `registry`: push to and install from OCI registries (`oci://HOST/REPO:TAG`).
//!
//! ```no_run
//! use std::path::Path;
//! use evalhost::bundle::{BundleStore, Lock, TrustPolicy, verify_bundle};
//!
//! let policy = TrustPolicy::default();
//! let options = policy.verify_options(Some(Path::new("allowed_signers")), None)?;
//! let bundle = verify_bundle(Path::new("acme-checks-1.0.0.tar.gz"), &options)?;
//! let mut lock = Lock::read(Path::new("evalhost.lock"))?;
//! lock.check(&bundle.manifest.name, &bundle.manifest.version, &bundle.digest)?;
//! BundleStore::new("/tmp/store").install(&bundle)?;
//! lock.pin(&bundle.manifest.name, &bundle.manifest.version, &bundle.digest);
//! lock.write()?;
//! # Ok::<(), evalhost::bundle::BundleError>(())
//! ```

pub(crate) mod archive;
mod error;
mod lock;
pub(crate) mod manifest;
mod pack;
pub(crate) mod registry;
mod resolve;
pub(crate) mod sshsig;
mod store;
mod trust;
mod verify;

pub use archive::UnpackLimits;
pub use error::BundleError;
pub use lock::Pin;
pub use lock::{LOCK_FILE, Lock};
pub use manifest::{Manifest, ManifestFile, ManifestGrader};
pub use pack::PackedBundle;
pub use pack::pack;
pub use registry::{OciReference, Registry, RegistryOptions, Resolved};
pub use resolve::BundleGrader;
pub use resolve::BundleResolver;
pub use sshsig::NAMESPACE;
pub use sshsig::{AllowedSigners, Signer};
pub use store::BundleStore;
pub use store::{Installed, StoredBundle};
pub use trust::TrustPolicy;
pub use verify::{Signature, VerifiedBundle, VerifyOptions, verify_bundle};
pub(crate) use verify::{manifest_bytes, signature_path};
