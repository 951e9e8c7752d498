//! Talking to an OCI registry (oras-project's `oci-client`): push a bundle's layers and
//! manifest, resolve a tag to its manifest digest, and fetch the layers with their digests
//! checked and their sizes capped as they stream. Nothing here trusts the registry: every
//! byte is checked against the digest asked for, and the bundle is then verified exactly as
//! a file is (see [`crate::bundle::verify_bundle_from`]).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use futures_util::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor};
use oci_client::secrets::RegistryAuth;

use super::OciReference;
use super::credentials::registry_auth;
use super::layout::{
    BundleLayers, EMPTY_CONFIG_DATA, Layer, MAX_MANIFEST_BYTES, bundle_layers, manifest_for,
};
use crate::bundle::BundleError;
use crate::bundle::manifest::sha256_hex;
use crate::message::error_chain;

/// How to reach a registry.
#[derive(Debug, Clone, Default)]
pub struct RegistryOptions {
    /// Speak plain HTTP to a registry that is not on loopback (loopback always is plain HTTP).
    pub insecure: bool,
    /// The environment credentials are read from (`EVALHOST_REGISTRY_USERNAME`/`_PASSWORD`,
    /// `DOCKER_CONFIG`, `HOME`).
    pub env: HashMap<String, String>,
}

/// A connection to the registry of one reference.
pub struct Registry {
    client: oci_client::Client,
    auth: RegistryAuth,
    reference: OciReference,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("reference", &self.reference)
            .finish_non_exhaustive()
    }
}

/// A manifest a reference resolved to.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The manifest's exact bytes.
    pub bytes: Vec<u8>,
    /// `sha256:<hex>` of those bytes.
    pub digest: String,
    /// Its bundle and signature layers.
    pub layers: BundleLayers,
}

/// The layers of a resolved bundle, each checked against its digest.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The archive's bytes.
    pub archive: Vec<u8>,
    /// The signature text, when the bundle is signed.
    pub signature: Option<String>,
}

impl Registry {
    /// A client for `reference`'s registry, with the credentials the environment gives for it.
    pub fn connect(
        reference: &OciReference,
        options: &RegistryOptions,
    ) -> Result<Self, BundleError> {
        crate::tls::install_crypto_provider();
        let config = ClientConfig {
            protocol: protocol(reference, options.insecure),
            connect_timeout: Some(Duration::from_secs(30)),
            read_timeout: Some(Duration::from_secs(120)),
            ..ClientConfig::default()
        };
        let client = oci_client::Client::try_from(config).map_err(|e| BundleError::Registry {
            reference: reference.to_string(),
            action: "set up a client for",
            message: error_chain(&e),
            unreachable: true,
        })?;
        Ok(Self {
            client,
            auth: registry_auth(&reference.registry, &options.env)?,
            reference: reference.clone(),
        })
    }

    fn failed(
        &self,
        action: &'static str,
        error: oci_client::errors::OciDistributionError,
    ) -> BundleError {
        let unreachable = matches!(&error, oci_client::errors::OciDistributionError::RequestError(e) if e.is_connect() || e.is_timeout());
        BundleError::Registry {
            reference: self.reference.to_string(),
            action,
            message: error_chain(&error),
            unreachable,
        }
    }

    /// Push `layers` (the archive, then the signature) and the manifest naming them to the
    /// reference's tag; the manifest's digest (`sha256:<hex>`).
    pub async fn push(
        &self,
        layers: &[Layer],
        annotations: BTreeMap<String, String>,
    ) -> Result<String, BundleError> {
        let target = self.reference.to_client();
        self.client
            .store_auth_if_needed(target.resolve_registry(), &self.auth)
            .await;
        let blobs = layers
            .iter()
            .map(|layer| (layer.data.clone(), layer.digest()))
            .chain([(
                EMPTY_CONFIG_DATA.to_vec(),
                format!("sha256:{}", sha256_hex(EMPTY_CONFIG_DATA)),
            )]);
        for (data, digest) in blobs {
            let exists = self
                .client
                .blob_exists(&target, &digest)
                .await
                .map_err(|e| self.failed("push to", e))?;
            if !exists {
                self.client
                    .push_blob(&target, data, &digest)
                    .await
                    .map_err(|e| self.failed("push to", e))?;
            }
        }
        let manifest = manifest_for(layers, annotations);
        let digest = format!("sha256:{}", sha256_hex(&manifest));
        self.client
            .push_manifest_raw(
                &target,
                manifest,
                reqwest::header::HeaderValue::from_static(OCI_IMAGE_MEDIA_TYPE),
            )
            .await
            .map_err(|e| self.failed("push to", e))?;
        Ok(digest)
    }

    /// The manifest the reference names now, its digest computed from its bytes (and checked
    /// against the reference's digest, when it has one).
    pub async fn resolve(&self) -> Result<Resolved, BundleError> {
        let target = self.reference.to_client();
        let (bytes, _) = self
            .client
            .pull_manifest_raw(&target, &self.auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
            .map_err(|e| self.failed("resolve", e))?;
        if bytes.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(BundleError::BlobTooLarge {
                reference: self.reference.to_string(),
                what: "the manifest".into(),
                limit: MAX_MANIFEST_BYTES,
            });
        }
        let actual = sha256_hex(&bytes);
        if let Some(expected) = &self.reference.digest
            && expected.strip_prefix("sha256:") != Some(actual.as_str())
        {
            return Err(BundleError::RegistryDigestMismatch {
                reference: self.reference.to_string(),
                what: "the manifest".into(),
                expected: expected.clone(),
                actual,
            });
        }
        let layers = bundle_layers(&self.reference, &bytes)?;
        Ok(Resolved {
            bytes: bytes.to_vec(),
            digest: format!("sha256:{actual}"),
            layers,
        })
    }

    /// Fetch the layers of `resolved`: the archive (at most `max_archive_bytes`) and the
    /// signature, each checked against the digest and size its descriptor names.
    pub async fn fetch(
        &self,
        resolved: &Resolved,
        max_archive_bytes: u64,
    ) -> Result<Fetched, BundleError> {
        // Blobs are fetched by the manifest's digest, whatever the tag names by now.
        let archive = self
            .blob(
                &resolved.layers.bundle,
                "the bundle layer",
                max_archive_bytes,
            )
            .await?;
        let signature = match &resolved.layers.signature {
            Some(layer) => {
                let bytes = self
                    .blob(
                        layer,
                        "the signature layer",
                        super::layout::MAX_SIGNATURE_BYTES,
                    )
                    .await?;
                Some(
                    String::from_utf8(bytes).map_err(|_| BundleError::NotABundle {
                        reference: self.reference.to_string(),
                        message: "its signature layer is not UTF-8 text".into(),
                    })?,
                )
            }
            None => None,
        };
        Ok(Fetched { archive, signature })
    }

    /// One blob, streamed with its size capped, its sha256 and size checked.
    async fn blob(
        &self,
        layer: &OciDescriptor,
        what: &str,
        limit: u64,
    ) -> Result<Vec<u8>, BundleError> {
        let too_large = || BundleError::BlobTooLarge {
            reference: self.reference.to_string(),
            what: what.to_owned(),
            limit,
        };
        if layer.size < 0 || layer.size as u64 > limit {
            return Err(too_large());
        }
        let Some(expected) = layer.digest.strip_prefix("sha256:") else {
            return Err(BundleError::NotABundle {
                reference: self.reference.to_string(),
                message: format!("{what} has digest `{}` (expected sha256:)", layer.digest),
            });
        };
        let target = self.reference.to_client();
        self.client
            .store_auth_if_needed(target.resolve_registry(), &self.auth)
            .await;
        let mut stream = self
            .client
            .pull_blob_stream(&target, layer)
            .await
            .map_err(|e| self.failed("fetch a layer of", e))?;
        let size = layer.size as u64;
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(chunk) => {
                    if (bytes.len() + chunk.len()) as u64 > limit {
                        return Err(too_large());
                    }
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() as u64 > size {
                        break;
                    }
                }
                // All bytes are in: this is the client's own digest check at the end of the
                // stream; the check below names both digests.
                Err(_) if bytes.len() as u64 >= size => break,
                Err(e) => {
                    return Err(BundleError::Registry {
                        reference: self.reference.to_string(),
                        action: "fetch a layer of",
                        message: error_chain(&e),
                        unreachable: true,
                    });
                }
            }
        }
        let actual = sha256_hex(&bytes);
        if actual != expected || bytes.len() as u64 != size {
            return Err(BundleError::RegistryDigestMismatch {
                reference: self.reference.to_string(),
                what: format!("{what} ({} bytes)", bytes.len()),
                expected: layer.digest.clone(),
                actual,
            });
        }
        Ok(bytes)
    }
}

/// Plain HTTP for a registry on loopback, or with `--insecure`; HTTPS for every other.
fn protocol(reference: &OciReference, insecure: bool) -> ClientProtocol {
    if reference.is_loopback() || insecure {
        ClientProtocol::HttpsExcept(vec![reference.registry.clone()])
    } else {
        ClientProtocol::Https
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_for_loopback_or_when_asked() {
        let parse = |text: &str| OciReference::parse(text).unwrap();
        let local = parse("oci://127.0.0.1:5000/acme/checks:1");
        assert_eq!(
            protocol(&local, false),
            ClientProtocol::HttpsExcept(vec!["127.0.0.1:5000".into()])
        );
        let remote = parse("oci://registry.example.com/acme/checks:1");
        assert_eq!(protocol(&remote, false), ClientProtocol::Https);
        assert_eq!(
            protocol(&remote, true),
            ClientProtocol::HttpsExcept(vec!["registry.example.com".into()])
        );
        assert_eq!(
            protocol(&parse("oci://10.1.2.3:5000/acme/checks:1"), false),
            ClientProtocol::Https
        );
    }
}
