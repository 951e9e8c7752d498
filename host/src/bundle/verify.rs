//! Opening a bundle archive: read it safely into memory, check the signature over the
//! manifest bytes, then the exact file set and every digest. Nothing touches the disk
//! until all of it passed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::BundleError;
use super::archive::{UnpackLimits, read_archive, unpack};
use super::manifest::{MANIFEST_FILE, Manifest, manifest_origin, sha256_hex};
use super::sshsig::{AllowedSigners, Signer, read_signature};

/// How a bundle's signature was judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signature {
    /// Verified against an allowed_signers file.
    Verified(Signer),
    /// No signature file; accepted because the policy allows unsigned bundles.
    Unsigned,
    /// A signature exists but no allowed_signers file was given; accepted because the policy
    /// allows bundles it cannot check.
    Unchecked,
}

/// What verifying a bundle needs to know.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Whose signatures are accepted; `None` when no allowed_signers file is configured.
    pub allowed_signers: Option<AllowedSigners>,
    /// Require this signer identity (a principal of the matching allowed_signers line).
    pub identity: Option<String>,
    /// Accept a bundle without a signature, or one that cannot be checked.
    pub allow_unsigned: bool,
    /// The signature file (default: the archive path plus `.sig`).
    pub signature: Option<PathBuf>,
    /// Unpacker caps.
    pub limits: UnpackLimits,
}

/// A bundle whose signature, file set and digests all checked out, held in memory.
#[derive(Debug, Clone)]
pub struct VerifiedBundle {
    /// The archive it came from.
    pub archive: PathBuf,
    /// The parsed manifest.
    pub manifest: Manifest,
    /// The manifest's exact bytes (what was signed).
    pub manifest_bytes: Vec<u8>,
    /// sha256 of `manifest_bytes`: the bundle's identity in the store and the lock.
    pub digest: String,
    /// Every file but the manifest, path → bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// How the signature was judged.
    pub signature: Signature,
    /// The signature text, when there was one.
    pub signature_text: Option<String>,
}

/// The signature file of `archive`: `ARCHIVE.sig`.
pub fn signature_path(archive: &Path) -> PathBuf {
    let mut name = archive.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

/// The manifest's exact bytes from an archive (what `evalhost bundle manifest` prints).
pub fn manifest_bytes(archive: &Path, limits: &UnpackLimits) -> Result<Vec<u8>, BundleError> {
    take_manifest(archive, &mut read_archive(archive, limits)?)
}

/// The manifest out of an archive's files.
fn take_manifest(
    archive: &Path,
    files: &mut BTreeMap<String, Vec<u8>>,
) -> Result<Vec<u8>, BundleError> {
    files
        .remove(MANIFEST_FILE)
        .ok_or_else(|| BundleError::NoManifest {
            archive: archive.to_owned(),
            file: MANIFEST_FILE,
        })
}

/// What the signature at `sig_path` (its text, if the file exists) over `manifest_bytes` is
/// worth under the policy: verified against `signers` (and `identity`), or accepted
/// unchecked/unsigned only when unsigned bundles are allowed and no identity is required.
/// `origin` names the bundle in messages. Used at install and again at every run.
pub(crate) fn judge_signature(
    manifest_bytes: &[u8],
    signature_text: Option<&str>,
    sig_path: &Path,
    origin: &Path,
    signers: Option<&AllowedSigners>,
    identity: Option<&str>,
    allow_unsigned: bool,
) -> Result<Signature, BundleError> {
    let unsigned_ok = allow_unsigned && identity.is_none();
    match (signature_text, signers) {
        (Some(text), Some(signers)) => Ok(Signature::Verified(signers.verify(
            manifest_bytes,
            text,
            sig_path,
            origin,
            identity,
        )?)),
        (Some(_), None) if unsigned_ok => Ok(Signature::Unchecked),
        (Some(_), None) => Err(BundleError::NoAllowedSigners {
            signature: sig_path.to_owned(),
        }),
        (None, _) if unsigned_ok => Ok(Signature::Unsigned),
        (None, _) => Err(BundleError::Unsigned {
            archive: origin.to_owned(),
            signature: sig_path.to_owned(),
        }),
    }
}

/// Verify the bundle at `archive` (its signature at `options.signature`, else `ARCHIVE.sig`).
pub fn verify_bundle(
    archive: &Path,
    options: &VerifyOptions,
) -> Result<VerifiedBundle, BundleError> {
    let file = std::fs::File::open(archive).map_err(BundleError::io("read", archive))?;
    let sig_path = options
        .signature
        .clone()
        .unwrap_or_else(|| signature_path(archive));
    let signature_text = read_signature(&sig_path)?;
    verify_bundle_from(
        archive,
        std::io::BufReader::new(file),
        signature_text,
        &sig_path,
        options,
    )
}

/// Verify a bundle read from `gzip` (a file, or a blob fetched from a registry) with the
/// signature text `signature_text`: the same checks in the same order as [`verify_bundle`].
/// `archive` and `sig_path` name the two in messages.
pub(crate) fn verify_bundle_from(
    archive: &Path,
    gzip: impl std::io::Read,
    signature_text: Option<String>,
    sig_path: &Path,
    options: &VerifyOptions,
) -> Result<VerifiedBundle, BundleError> {
    let mut files = unpack(archive, gzip, &options.limits)?;
    let manifest_bytes = take_manifest(archive, &mut files)?;
    let signature = judge_signature(
        &manifest_bytes,
        signature_text.as_deref(),
        sig_path,
        archive,
        options.allowed_signers.as_ref(),
        options.identity.as_deref(),
        options.allow_unsigned,
    )?;
    let manifest = Manifest::parse(&manifest_bytes, &manifest_origin(archive))?;
    check_files(archive, &manifest, &files)?;
    Ok(VerifiedBundle {
        archive: archive.to_owned(),
        digest: sha256_hex(&manifest_bytes),
        manifest,
        manifest_bytes,
        files,
        signature,
        signature_text,
    })
}

/// The archive's files are exactly the manifest's, each with its digest.
fn check_files(
    archive: &Path,
    manifest: &Manifest,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), BundleError> {
    let digests: BTreeMap<&str, String> = files
        .iter()
        .map(|(path, bytes)| (path.as_str(), sha256_hex(bytes)))
        .collect();
    let missing: Vec<&super::manifest::ManifestFile> = manifest
        .files
        .iter()
        .filter(|f| !files.contains_key(&f.path))
        .collect();
    let extra: Vec<&str> = digests
        .keys()
        .copied()
        .filter(|path| manifest.file(path).is_none())
        .collect();
    for listed in &missing {
        if let Some(to) = extra.iter().find(|path| digests[*path] == listed.sha256) {
            return Err(BundleError::RenamedFile {
                archive: archive.to_owned(),
                from: listed.path.clone(),
                to: (*to).to_owned(),
            });
        }
    }
    if let Some(file) = extra.first() {
        return Err(BundleError::ExtraFile {
            archive: archive.to_owned(),
            file: (*file).to_owned(),
        });
    }
    if let Some(file) = missing.first() {
        return Err(BundleError::MissingFile {
            archive: archive.to_owned(),
            file: file.path.clone(),
        });
    }
    for listed in &manifest.files {
        let actual = &digests[listed.path.as_str()];
        if *actual != listed.sha256 {
            return Err(BundleError::DigestMismatch {
                archive: archive.to_owned(),
                file: listed.path.clone(),
                expected: listed.sha256.clone(),
                actual: actual.clone(),
            });
        }
    }
    Ok(())
}
