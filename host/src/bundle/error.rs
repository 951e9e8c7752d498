//! Why a bundle was refused. Every variant names the file, entry or grader involved, and
//! digests as expected vs actual, so the refusal says what to look at.

use std::path::PathBuf;

/// Why packing, signing, verifying, installing or loading a grader bundle failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// A file could not be read or written.
    #[error("failed to {action} `{}`: {error}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `create`, ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// `bundle.toml` or `MANIFEST.toml` is not valid TOML or has unknown or mistyped fields.
    #[error("{}: {message}", path.display())]
    Parse {
        /// The file (inside an archive: `ARCHIVE!MANIFEST.toml`).
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A field of `bundle.toml` or the manifest has a value evalhost does not accept.
    #[error("{}: field `{field}`: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field, e.g. `graders.no_todo.capabilities`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Packing found a file it will not put in a bundle (a symlink, a device, a reserved name).
    #[error("cannot pack `{}`: {reason}", path.display())]
    UnpackableFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A component named by `bundle.toml` failed `evalhost grader check`, or does not provide
    /// the grader it is declared for.
    #[error("bundle grader `{grader}` (component `{component}`): {message}")]
    Component {
        /// The grader as declared.
        grader: String,
        /// The component file, relative to the bundle.
        component: String,
        /// What the check found.
        message: String,
    },
    /// The archive is not a gzip-compressed tar, or is truncated.
    #[error("`{}` is not a readable .tar.gz bundle: {message}", archive.display())]
    Corrupt {
        /// The archive.
        archive: PathBuf,
        /// The decoder's message.
        message: String,
    },
    /// An archive entry whose path is absolute, climbs out with `..`, or is not plain UTF-8.
    #[error("`{}`: refusing entry `{entry}`: {reason}", archive.display())]
    UnsafePath {
        /// The archive.
        archive: PathBuf,
        /// The entry's path as stored.
        entry: String,
        /// `absolute path`, `contains ..`, ...
        reason: &'static str,
    },
    /// An archive entry that is a symlink, hardlink, device or other non-regular file.
    #[error("`{}`: refusing entry `{entry}`: a {kind} (a bundle holds regular files only)", archive.display())]
    UnsafeEntry {
        /// The archive.
        archive: PathBuf,
        /// The entry's path.
        entry: String,
        /// `symlink`, `hardlink`, `character device`, ...
        kind: &'static str,
    },
    /// The same path appears twice in the archive.
    #[error("`{}`: entry `{entry}` appears twice", archive.display())]
    DuplicateEntry {
        /// The archive.
        archive: PathBuf,
        /// The entry's path.
        entry: String,
    },
    /// The archive holds more files than a bundle may.
    #[error("`{}` holds more than {limit} files; refusing it", archive.display())]
    TooManyFiles {
        /// The archive.
        archive: PathBuf,
        /// The cap.
        limit: usize,
    },
    /// The archive's files add up to more than a bundle may unpack to.
    #[error("`{}`: entry `{entry}` would take the unpacked size past the {limit}-byte cap; refusing the bundle", archive.display())]
    TooLarge {
        /// The archive.
        archive: PathBuf,
        /// The entry that crossed the cap.
        entry: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// The gzip stream decompresses to more than the cap: a decompression bomb.
    #[error("`{}` decompresses to more than {limit} bytes (a decompression bomb?); refused after reading {limit} bytes", archive.display())]
    DecompressionBomb {
        /// The archive.
        archive: PathBuf,
        /// The cap on decompressed bytes.
        limit: u64,
    },
    /// The archive has no `MANIFEST.toml`.
    #[error("`{}` has no {file}: it is not an evalhost bundle (make one with `evalhost bundle pack`)", archive.display())]
    NoManifest {
        /// The archive.
        archive: PathBuf,
        /// `MANIFEST.toml`.
        file: &'static str,
    },
    /// The archive holds a file the manifest does not list.
    #[error("`{}`: file `{file}` is not listed in the manifest (an extra file); refusing the bundle", archive.display())]
    ExtraFile {
        /// The archive.
        archive: PathBuf,
        /// The unlisted file.
        file: String,
    },
    /// The manifest lists a file the archive does not hold.
    #[error("`{}`: file `{file}` is listed in the manifest but missing from the archive", archive.display())]
    MissingFile {
        /// The archive.
        archive: PathBuf,
        /// The missing file.
        file: String,
    },
    /// A listed file is missing and an unlisted one has its exact digest.
    #[error("`{}`: file `{from}` of the manifest was renamed to `{to}`; refusing the bundle", archive.display())]
    RenamedFile {
        /// The archive.
        archive: PathBuf,
        /// The name in the manifest.
        from: String,
        /// The name in the archive.
        to: String,
    },
    /// A file's sha256 differs from the manifest's.
    #[error("`{}`: file `{file}` has sha256 {actual}, but the manifest says {expected} (modified after signing)", archive.display())]
    DigestMismatch {
        /// The archive or store directory.
        archive: PathBuf,
        /// The file.
        file: String,
        /// The manifest's digest.
        expected: String,
        /// The file's digest.
        actual: String,
    },
    /// No signature file, and the trust policy does not allow unsigned bundles.
    #[error("`{}` is unsigned (no `{}`) and the trust policy refuses unsigned bundles ([trust] allow_unsigned = false)", archive.display(), signature.display())]
    Unsigned {
        /// The archive.
        archive: PathBuf,
        /// Where the signature was looked for.
        signature: PathBuf,
    },
    /// The bundle is signed but there is no allowed_signers file to check it against, and
    /// the policy refuses bundles it cannot check.
    #[error("cannot check the signature `{}`: no allowed_signers file (set [trust] allowed_signers in evalhost.toml; `evalhost bundle verify` and `bundle install` also take --allowed-signers FILE)", signature.display())]
    NoAllowedSigners {
        /// The signature file.
        signature: PathBuf,
    },
    /// The signature file is not an armored SSHSIG.
    #[error("`{}` is not an OpenSSH signature (-----BEGIN SSH SIGNATURE-----): {message}", signature.display())]
    MalformedSignature {
        /// The signature file.
        signature: PathBuf,
        /// The decoder's message.
        message: String,
    },
    /// A valid signature for another purpose.
    #[error("`{}` was made for namespace `{found}`, not `{expected}` (sign with `-n {expected}`)", signature.display())]
    WrongNamespace {
        /// The signature file.
        signature: PathBuf,
        /// The signature's namespace.
        found: String,
        /// `evalhost-bundle`.
        expected: &'static str,
    },
    /// The signing key is not in allowed_signers (for this namespace or identity).
    #[error("`{}` is signed by key {fingerprint}, which `{}` does not allow{detail}", signature.display(), allowed_signers.display())]
    UnknownSigner {
        /// The signature file.
        signature: PathBuf,
        /// The signing key's SHA256 fingerprint.
        fingerprint: String,
        /// The allowed_signers file.
        allowed_signers: PathBuf,
        /// e.g. ` for identity team@example.com`.
        detail: String,
    },
    /// The signature does not verify over the manifest.
    #[error("`{}` does not match the manifest of `{}`: the manifest or the signature was modified", signature.display(), archive.display())]
    BadSignature {
        /// The signature file.
        signature: PathBuf,
        /// The archive.
        archive: PathBuf,
    },
    /// A line of an allowed_signers file could not be read.
    #[error("{}:{line}: {message}", path.display())]
    AllowedSigners {
        /// The allowed_signers file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The private key could not be used.
    #[error("cannot sign with `{}`: {message}", key.display())]
    Key {
        /// The private key file.
        key: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Installing a version lower than the lock pins.
    #[error("bundle `{name}` {version} is older than {locked}, which `{}` pins: refusing the rollback", lock.display())]
    Rollback {
        /// The bundle.
        name: String,
        /// The version offered.
        version: String,
        /// The locked version.
        locked: String,
        /// The lock file.
        lock: PathBuf,
    },
    /// The same version with other contents than the lock (or the store) pins.
    #[error("bundle `{name}` {version} has manifest digest {actual}, but `{}` pins {expected}: its contents changed without a new version", pinned_by.display())]
    LockMismatch {
        /// The bundle.
        name: String,
        /// The version.
        version: String,
        /// The pinned digest.
        expected: String,
        /// The digest found.
        actual: String,
        /// The lock file or store entry that pins it.
        pinned_by: PathBuf,
    },
    /// `evalhost.lock` is not readable.
    #[error("{}: {message}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A case names a bundle the store does not have.
    #[error("bundle `{name}` is not installed in `{}` (install it with {install})", store.display())]
    NotInstalled {
        /// The bundle.
        name: String,
        /// The store.
        store: PathBuf,
        /// How to install it: the command for the registry reference or the archive
        /// `evalhost.lock` pins it from, else the two forms (`NotInstalled::install_hint`).
        install: String,
    },
    /// The installed versions do not include the locked one.
    #[error("bundle `{name}`: `{}` pins {locked}, but the store has {installed} (install {locked}, or install the newer bundle again to update the lock)", lock.display())]
    LockedVersionMissing {
        /// The bundle.
        name: String,
        /// The locked version.
        locked: String,
        /// The versions installed.
        installed: String,
        /// The lock file.
        lock: PathBuf,
    },
    /// A case names a grader the bundle does not provide.
    #[error("bundle `{name}` {version} provides no grader `{grader}` (it provides: {provided})")]
    UnknownGrader {
        /// The bundle.
        name: String,
        /// Its version.
        version: String,
        /// The grader asked for.
        grader: String,
        /// What it provides.
        provided: String,
    },
    /// The trust policy refuses `path/to/x.wasm#grader` references.
    #[error("`{reference}` names a component by path, but the trust policy refuses loose .wasm files ([trust] allow_wasm_paths = false in {}); use a signed bundle", policy.display())]
    WasmPathRefused {
        /// The reference as written.
        reference: String,
        /// The evalhost.toml that set the policy.
        policy: PathBuf,
    },
    /// The trust policy refuses graders that ask the judge.
    #[error("`{reference}` asks for the `judge` capability, but the trust policy refuses it ([trust] allow_judge = false in {}); remove the grader or allow the judge", policy.display())]
    JudgeRefused {
        /// The grader reference as written.
        reference: String,
        /// The evalhost.toml that set the policy.
        policy: PathBuf,
    },
    /// A registry reference evalhost cannot use.
    #[error(
        "`{reference}` is not a bundle reference: {message} (expected oci://HOST[:PORT]/REPO:TAG or oci://HOST[:PORT]/REPO@sha256:DIGEST)"
    )]
    BadReference {
        /// The reference as written.
        reference: String,
        /// What is wrong.
        message: String,
    },
    /// The registry could not be reached, refused the request or answered an error.
    #[error("failed to {action} `{reference}`: {message}")]
    Registry {
        /// The reference.
        reference: String,
        /// `push`, `resolve`, `fetch the bundle layer of`, ...
        action: &'static str,
        /// The client's or the registry's message.
        message: String,
        /// Whether the registry could not be reached at all (rather than refused).
        unreachable: bool,
    },
    /// The registry credentials (Docker config or environment) could not be read.
    #[error("registry credentials for `{registry}`: {message}")]
    Credentials {
        /// The registry (`HOST[:PORT]`).
        registry: String,
        /// What is wrong.
        message: String,
    },
    /// The manifest at a reference is not an evalhost bundle in the documented layout.
    #[error(
        "`{reference}` is not an evalhost bundle: {message} (see docs/bundles.md, \"Registries\")"
    )]
    NotABundle {
        /// The reference.
        reference: String,
        /// What is missing or unexpected.
        message: String,
    },
    /// The registry served bytes whose digest differs from the one asked for.
    #[error(
        "`{reference}`: the registry served {what} with digest sha256:{actual}, but {expected} was asked for (modified in the registry?); refusing the bundle"
    )]
    RegistryDigestMismatch {
        /// The reference.
        reference: String,
        /// `the bundle layer`, `the manifest`, ...
        what: String,
        /// The digest asked for (`sha256:...`).
        expected: String,
        /// The digest of what was served (hex).
        actual: String,
    },
    /// A manifest or layer larger than a bundle may be.
    #[error("`{reference}`: {what} is larger than the {limit}-byte cap; refusing it")]
    BlobTooLarge {
        /// The reference.
        reference: String,
        /// `the bundle layer`, `the signature layer`, `the manifest`.
        what: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// A tag that now names another manifest than the lock recorded for it.
    #[error("`{reference}` now resolves to manifest {actual}, but `{}` pins {expected} for it (bundle {bundle}): the tag moved; refusing it (run `evalhost bundle install {reference} --update-lock` to accept the new manifest on purpose)", lock.display())]
    TagMoved {
        /// The reference.
        reference: String,
        /// The bundle the lock pins from it and its version: `` `name` 1.2.0 ``.
        bundle: String,
        /// The manifest digest the lock recorded.
        expected: String,
        /// The manifest digest the tag names now.
        actual: String,
        /// The lock file.
        lock: PathBuf,
    },
    /// `bundle remove NAME VERSION` of a version that is not installed.
    #[error("bundle `{name}` {version} is not installed in `{}` (installed: {installed})", store.display())]
    VersionNotInstalled {
        /// The bundle.
        name: String,
        /// The version asked for.
        version: String,
        /// The versions installed.
        installed: String,
        /// The store.
        store: PathBuf,
    },
}

impl BundleError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| BundleError::Io {
            action,
            path,
            error: source,
        }
    }
}
