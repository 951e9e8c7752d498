//! How a bundle is laid out in a registry: one OCI image manifest whose first layer is the
//! bundle archive, byte for byte as `bundle pack` wrote it, and whose second layer (when the
//! bundle is signed) is its SSHSIG signature. Two layers of one manifest rather than a
//! referrer artifact: registries without the referrers API (CNCF distribution 2.x, many
//! mirrors) keep the two together, and one digest names both.
//!
//! ```text
//! manifest  application/vnd.oci.image.manifest.v1+json, artifactType application/vnd.evalhost.bundle.v1
//!   config  application/vnd.oci.empty.v1+json ({})
//!   layer   application/vnd.evalhost.bundle.v1.tar+gzip     title NAME-VERSION.tar.gz
//!   layer   application/vnd.evalhost.bundle.signature.v1    title NAME-VERSION.tar.gz.sig (optional)
//! ```
//!
//! Reading accepts any manifest with exactly one bundle layer and at most one signature
//! layer, whatever its config (so an artifact pushed by another client, e.g. `oras push`
//! with those two media types, installs); annotations are informational and never trusted.

use std::collections::BTreeMap;

use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};

use super::OciReference;
use crate::bundle::BundleError;
use crate::bundle::manifest::sha256_hex;

/// The manifest's `artifactType`.
pub(crate) const ARTIFACT_TYPE: &str = "application/vnd.evalhost.bundle.v1";
/// The bundle archive layer (the `.tar.gz` of `evalhost bundle pack`).
pub(crate) const BUNDLE_LAYER: &str = "application/vnd.evalhost.bundle.v1.tar+gzip";
/// The signature layer (the armored SSHSIG of `evalhost bundle sign`).
pub(crate) const SIGNATURE_LAYER: &str = "application/vnd.evalhost.bundle.signature.v1";
/// The OCI empty descriptor's media type (the config of an artifact without one).
pub(crate) const EMPTY_CONFIG: &str = "application/vnd.oci.empty.v1+json";
/// The empty config's bytes.
pub(crate) const EMPTY_CONFIG_DATA: &[u8] = b"{}";
/// The layer annotation that names the file (oras writes the layer under this name).
pub(crate) const TITLE: &str = "org.opencontainers.image.title";
/// Most bytes of a signature layer (an SSHSIG is well under 1 KiB).
pub(crate) const MAX_SIGNATURE_BYTES: u64 = 64 * 1024;
/// Most bytes of a manifest.
pub(crate) const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// One layer to push: its media type, file name and bytes.
#[derive(Debug, Clone)]
pub struct Layer {
    /// [`BUNDLE_LAYER`] or [`SIGNATURE_LAYER`].
    pub media_type: &'static str,
    /// The file name (the `org.opencontainers.image.title` annotation).
    pub title: String,
    /// The bytes.
    pub data: Vec<u8>,
}

impl Layer {
    /// `sha256:<hex>` of the bytes.
    pub fn digest(&self) -> String {
        format!("sha256:{}", sha256_hex(&self.data))
    }
}

/// The layers of a pulled bundle manifest.
#[derive(Debug, Clone)]
pub struct BundleLayers {
    /// The archive layer.
    pub bundle: OciDescriptor,
    /// The signature layer, when the bundle is signed.
    pub signature: Option<OciDescriptor>,
}

/// The manifest bytes to push for `layers` (deterministic: the same bundle and signature
/// always make the same manifest, so pushing them again does not move a tag).
pub(crate) fn manifest_for(layers: &[Layer], annotations: BTreeMap<String, String>) -> Vec<u8> {
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_owned()),
        artifact_type: Some(ARTIFACT_TYPE.to_owned()),
        config: OciDescriptor {
            media_type: EMPTY_CONFIG.to_owned(),
            digest: format!("sha256:{}", sha256_hex(EMPTY_CONFIG_DATA)),
            size: EMPTY_CONFIG_DATA.len() as i64,
            ..OciDescriptor::default()
        },
        layers: layers
            .iter()
            .map(|layer| OciDescriptor {
                media_type: layer.media_type.to_owned(),
                digest: layer.digest(),
                size: layer.data.len() as i64,
                annotations: Some(BTreeMap::from([(TITLE.to_owned(), layer.title.clone())])),
                ..OciDescriptor::default()
            })
            .collect(),
        subject: None,
        annotations: Some(annotations),
    };
    serde_json::to_vec(&manifest).expect("a manifest always serializes")
}

/// The bundle and signature layers of the manifest `bytes` pulled from `reference`.
pub(crate) fn bundle_layers(
    reference: &OciReference,
    bytes: &[u8],
) -> Result<BundleLayers, BundleError> {
    let not_a_bundle = |message: String| BundleError::NotABundle {
        reference: reference.to_string(),
        message,
    };
    let manifest: OciImageManifest = serde_json::from_slice(bytes)
        .map_err(|e| not_a_bundle(format!("its manifest is not an OCI image manifest: {e}")))?;
    if manifest.schema_version != 2 {
        return Err(not_a_bundle(format!(
            "manifest schemaVersion {} (expected 2)",
            manifest.schema_version
        )));
    }
    if let Some(media_type) = manifest
        .media_type
        .as_deref()
        .filter(|t| *t != OCI_IMAGE_MEDIA_TYPE)
    {
        return Err(not_a_bundle(format!(
            "manifest media type `{media_type}` (expected {OCI_IMAGE_MEDIA_TYPE})"
        )));
    }
    if let Some(artifact_type) = manifest
        .artifact_type
        .as_deref()
        .filter(|t| *t != ARTIFACT_TYPE)
    {
        return Err(not_a_bundle(format!(
            "artifactType `{artifact_type}` (expected {ARTIFACT_TYPE})"
        )));
    }
    let mut bundle = None;
    let mut signature = None;
    for layer in manifest.layers {
        let slot = match layer.media_type.as_str() {
            BUNDLE_LAYER => &mut bundle,
            SIGNATURE_LAYER => &mut signature,
            other => {
                return Err(not_a_bundle(format!(
                    "a layer of media type `{other}` (a bundle has one {BUNDLE_LAYER} layer and at most one {SIGNATURE_LAYER} layer)"
                )));
            }
        };
        if layer.urls.as_ref().is_some_and(|urls| !urls.is_empty()) {
            return Err(not_a_bundle(format!(
                "its {} layer names external urls (a bundle's layers live in the registry)",
                layer.media_type
            )));
        }
        if slot.is_some() {
            return Err(not_a_bundle(format!(
                "two layers of media type {}",
                layer.media_type
            )));
        }
        *slot = Some(layer);
    }
    let bundle = bundle.ok_or_else(|| not_a_bundle(format!("no {BUNDLE_LAYER} layer")))?;
    Ok(BundleLayers { bundle, signature })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> OciReference {
        OciReference::parse("oci://127.0.0.1:5000/acme/checks:1.0.0").unwrap()
    }

    #[test]
    fn a_pushed_manifest_reads_back_and_is_deterministic() {
        let layers = [
            Layer {
                media_type: BUNDLE_LAYER,
                title: "b.tar.gz".into(),
                data: b"archive".to_vec(),
            },
            Layer {
                media_type: SIGNATURE_LAYER,
                title: "b.tar.gz.sig".into(),
                data: b"sig".to_vec(),
            },
        ];
        let bytes = manifest_for(&layers, BTreeMap::new());
        assert_eq!(bytes, manifest_for(&layers, BTreeMap::new()));
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.contains(r#""artifactType":"application/vnd.evalhost.bundle.v1""#),
            "{text}"
        );
        let read = bundle_layers(&reference(), &bytes).unwrap();
        assert_eq!(read.bundle.digest, layers[0].digest());
        assert_eq!(read.signature.unwrap().size, 3);
    }

    #[test]
    fn other_artifacts_are_refused_with_the_reason() {
        let image = br#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:00","size":2},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:00","size":2}]}"#;
        let err = bundle_layers(&reference(), image).unwrap_err().to_string();
        assert!(
            err.starts_with("`oci://127.0.0.1:5000/acme/checks:1.0.0` is not an evalhost bundle: a layer of media type `application/vnd.oci.image.layer.v1.tar+gzip`"),
            "{err}"
        );
        let empty = br#"{"schemaVersion":2,"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:00","size":2},"layers":[]}"#;
        let err = bundle_layers(&reference(), empty).unwrap_err().to_string();
        assert!(
            err.contains("no application/vnd.evalhost.bundle.v1.tar+gzip layer"),
            "{err}"
        );
    }
}
