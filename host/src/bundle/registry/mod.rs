//! Bundles through OCI registries: `evalhost bundle push FILE oci://HOST/REPO:TAG` uploads the
//! archive and its signature as two layers of one manifest ([`layout`]); `evalhost bundle
//! install oci://...` resolves the reference to a manifest digest, checks it against
//! `evalhost.lock` (a tag that moved is refused), fetches the layers with their digests
//! checked, and verifies the bundle exactly as a file install does — all before anything is
//! written. See docs/bundles.md, "Registries".

mod client;
mod credentials;
pub(crate) mod layout;
mod reference;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use client::Resolved;
pub use client::{Registry, RegistryOptions};
pub(crate) use layout::{BUNDLE_LAYER, SIGNATURE_LAYER};
pub use reference::{OciReference, SCHEME};

use super::verify::{VerifiedBundle, VerifyOptions, verify_bundle_from};
use super::{BundleError, Lock};
use layout::Layer;

/// A bundle fetched from a registry and verified.
#[derive(Debug, Clone)]
pub struct PulledBundle {
    /// The bundle, verified as a file install verifies it.
    pub bundle: VerifiedBundle,
    /// The OCI manifest digest (`sha256:...`) the reference named.
    pub oci_digest: String,
}

/// Push the archive `archive` (named `file_name`) and its signature text to `reference`'s
/// tag; the manifest digest (`sha256:...`). `bundle` is the archive, verified, for the
/// manifest's informational annotations.
pub async fn push(
    reference: &OciReference,
    options: &RegistryOptions,
    file_name: &str,
    archive: Vec<u8>,
    bundle: &VerifiedBundle,
) -> Result<String, BundleError> {
    if reference.digest.is_some() || reference.tag.is_none() {
        return Err(BundleError::BadReference {
            reference: reference.to_string(),
            message:
                "push to a tag, not a digest (the digest is the manifest's, known after the push)"
                    .into(),
        });
    }
    let mut layers = vec![Layer {
        media_type: BUNDLE_LAYER,
        title: file_name.to_owned(),
        data: archive,
    }];
    if let Some(signature) = &bundle.signature_text {
        layers.push(Layer {
            media_type: SIGNATURE_LAYER,
            title: format!("{file_name}.sig"),
            data: signature.clone().into_bytes(),
        });
    }
    let manifest = &bundle.manifest;
    let annotations = BTreeMap::from([
        (
            "org.opencontainers.image.title".to_owned(),
            manifest.name.clone(),
        ),
        (
            "org.opencontainers.image.version".to_owned(),
            manifest.version.clone(),
        ),
        (
            "dev.evalhost.bundle.manifest-sha256".to_owned(),
            bundle.digest.clone(),
        ),
    ]);
    Registry::connect(reference, options)?
        .push(&layers, annotations)
        .await
}

/// Fetch and verify the bundle at `reference`. With `lock`, a tag that names another
/// manifest than the lock recorded for it is refused before any layer is fetched.
pub async fn pull(
    reference: &OciReference,
    options: &RegistryOptions,
    verify: &VerifyOptions,
    lock: Option<&Lock>,
) -> Result<PulledBundle, BundleError> {
    let registry = Registry::connect(reference, options)?;
    let resolved = registry.resolve().await?;
    let name = reference.to_string();
    if let Some(lock) = lock {
        lock.check_source(&name, &resolved.digest)?;
    }
    // The gzip of at most `max_total_bytes` of files, tar headers and all.
    let max_archive = verify.limits.max_total_bytes + 1024 * 1024;
    let fetched = registry.fetch(&resolved, max_archive).await?;
    let origin = PathBuf::from(&name);
    let bundle = verify_bundle_from(
        &origin,
        fetched.archive.as_slice(),
        fetched.signature,
        &PathBuf::from(format!("{name} (signature layer)")),
        verify,
    )?;
    Ok(PulledBundle {
        bundle,
        oci_digest: resolved.digest,
    })
}
