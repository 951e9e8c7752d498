//! `evalhost bundle pack|sign|manifest|verify|install|push|list|remove`: vetted grader
//! bundles, as files or through OCI registries.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;

use super::{Failure, exit};
use crate::bundle::registry::{self, OciReference, RegistryOptions};
use crate::bundle::{
    BundleError, BundleResolver, BundleStore, LOCK_FILE, Lock, Signature, TrustPolicy,
    UnpackLimits, VerifiedBundle, manifest_bytes, pack, signature_path, sshsig, verify_bundle,
};
use crate::config::ConfigSources;
use crate::grader::GraderHost;

/// `evalhost bundle ...`.
#[derive(Debug, clap::Args)]
pub struct BundleArgs {
    #[command(subcommand)]
    pub command: BundleCommand,
}

/// The bundle subcommands.
#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    /// Pack a bundle directory (bundle.toml + components) into NAME-VERSION.tar.gz.
    #[command(after_help = "Examples:
  evalhost bundle pack graders/bundles/acme-checks
  evalhost bundle pack acme-checks -o dist/acme-checks-1.0.0.tar.gz

Exit status: 0 packed; 2 bad bundle directory or manifest; 3 writing the archive failed.")]
    Pack(PackArgs),
    /// Sign a bundle's manifest with an OpenSSH key: writes BUNDLE.sig (SSHSIG, namespace evalhost-bundle).
    #[command(after_help = "Examples:
  evalhost bundle sign acme-checks-1.0.0.tar.gz --key ~/.ssh/id_ed25519 --identity team@example.com

Exit status: 0 signed; 2 bad bundle or key; 3 writing the signature failed.")]
    Sign(SignArgs),
    /// Print the bundle's manifest: exactly the bytes a signature covers.
    #[command(after_help = "Examples:
  evalhost bundle manifest B.tar.gz
  # cross-check the signature with OpenSSH:
  evalhost bundle manifest B.tar.gz | ssh-keygen -Y verify -f allowed_signers -I team@example.com -n evalhost-bundle -s B.tar.gz.sig

Exit status: 0 printed; 2 not a readable bundle.")]
    Manifest(ManifestArgs),
    /// Verify a bundle (signature, signer, exact file set, every digest) without installing it.
    #[command(after_help = "Examples:
  evalhost bundle verify acme-checks-1.0.0.tar.gz
  evalhost bundle verify acme-checks-1.0.0.tar.gz --allowed-signers allowed_signers --identity team@example.com

Exit status: 0 verified; 2 refused (the error says why).")]
    Verify(VerifyArgs),
    /// Verify a bundle (a file or oci://HOST/REPO:TAG), install it into the local store and pin it in evalhost.lock.
    #[command(after_help = "Examples:
  evalhost bundle install acme-checks-1.0.0.tar.gz
  evalhost bundle install oci://ghcr.io/acme/checks:1.0.0
  evalhost bundle install oci://127.0.0.1:5000/acme/checks@sha256:9c41...

A registry bundle is verified exactly as a file is before anything is written; evalhost.lock
records its reference and manifest digest, and a tag that names another manifest later is
refused unless --update-lock is given. Credentials: EVALHOST_REGISTRY_USERNAME and
EVALHOST_REGISTRY_PASSWORD, else the Docker config ($DOCKER_CONFIG/config.json or
~/.docker/config.json). The store is $EVALHOST_BUNDLE_STORE, else
$XDG_DATA_HOME/evalhost/bundles, else ~/.local/share/evalhost/bundles.
Exit status: 0 installed; 2 refused (nothing was installed); 3 the registry could not be reached.")]
    Install(InstallArgs),
    /// Push a bundle and its signature to an OCI registry (oci://HOST[:PORT]/REPO:TAG).
    #[command(after_help = "Examples:
  evalhost bundle push acme-checks-1.0.0.tar.gz oci://ghcr.io/acme/checks:1.0.0
  evalhost bundle push acme-checks-1.0.0.tar.gz oci://127.0.0.1:5000/acme/checks:1.0.0

The bundle is verified as `bundle verify` does first; BUNDLE.sig (or --signature) travels with
it as a second layer. Plain HTTP is used for loopback registries only, or with --insecure.
Exit status: 0 pushed; 2 refused (bad bundle, reference, credentials or registry answer);
3 the registry could not be reached.")]
    Push(PushArgs),
    /// List the bundles installed in the store, and what evalhost.lock pins.
    #[command(after_help = "Examples:
  evalhost bundle list

Exit status: 0 listed; 2 unreadable store or lock.")]
    List(ListArgs),
    /// Remove a bundle (every version, or one) from the store.
    #[command(after_help = "Examples:
  evalhost bundle remove acme-checks 1.0.0
  evalhost bundle remove acme-checks --unpin

evalhost.lock keeps its pin (the project still wants that version) unless --unpin is given.
Exit status: 0 removed; 2 not installed; 3 removing files failed.")]
    Remove(RemoveArgs),
}

/// `evalhost bundle pack`.
#[derive(Debug, clap::Args)]
pub struct PackArgs {
    /// The bundle directory (holds bundle.toml).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The archive to write (default: NAME-VERSION.tar.gz in the current directory).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `evalhost bundle sign`.
#[derive(Debug, clap::Args)]
pub struct SignArgs {
    /// The bundle archive.
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// The OpenSSH private key (ed25519, without passphrase; otherwise sign with ssh-keygen).
    #[arg(long, value_name = "KEY")]
    pub key: PathBuf,
    /// The signer identity to print in the allowed_signers line for this key.
    #[arg(long, value_name = "PRINCIPAL")]
    pub identity: Option<String>,
}

/// `evalhost bundle manifest`.
#[derive(Debug, clap::Args)]
pub struct ManifestArgs {
    /// The bundle archive.
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
}

/// `evalhost bundle verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The bundle archive.
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// Accepted signers (default: [trust] allowed_signers of ./evalhost.toml).
    #[arg(long, value_name = "FILE")]
    pub allowed_signers: Option<PathBuf>,
    /// Require this signer identity (a principal in allowed_signers).
    #[arg(long, value_name = "PRINCIPAL")]
    pub identity: Option<String>,
    /// The signature file (default: BUNDLE.sig).
    #[arg(long, value_name = "FILE")]
    pub signature: Option<PathBuf>,
}

/// `evalhost bundle install`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub verify: VerifyArgs,
    /// The lock file to check and update.
    #[arg(long, value_name = "FILE", default_value = LOCK_FILE)]
    pub lock: PathBuf,
    /// Accept a registry tag that now names another manifest than evalhost.lock recorded.
    #[arg(long)]
    pub update_lock: bool,
    /// Speak plain HTTP to a registry that is not on this machine.
    #[arg(long)]
    pub insecure: bool,
}

/// `evalhost bundle push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    #[command(flatten)]
    pub verify: VerifyArgs,
    /// Where to push: oci://HOST[:PORT]/REPO:TAG.
    #[arg(value_name = "REF")]
    pub reference: String,
    /// Speak plain HTTP to a registry that is not on this machine.
    #[arg(long)]
    pub insecure: bool,
}

/// `evalhost bundle list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The lock file whose pins to show.
    #[arg(long, value_name = "FILE", default_value = LOCK_FILE)]
    pub lock: PathBuf,
}

/// `evalhost bundle remove`.
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    /// The bundle's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Only this version (default: every installed version).
    #[arg(value_name = "VERSION")]
    pub version: Option<String>,
    /// Also drop the bundle's pin from the lock file.
    #[arg(long)]
    pub unpin: bool,
    /// The lock file.
    #[arg(long, value_name = "FILE", default_value = LOCK_FILE)]
    pub lock: PathBuf,
}

/// Run an `evalhost bundle` subcommand.
pub fn bundle(args: BundleArgs) -> Result<u8, Failure> {
    match args.command {
        BundleCommand::Pack(args) => pack_bundle(args),
        BundleCommand::Sign(args) => sign(args),
        BundleCommand::Manifest(args) => print_manifest(args),
        BundleCommand::Verify(args) => {
            let bundle = verify(&args, &project_policy()?)?;
            println!("{}", describe("verified", &bundle));
            Ok(exit::OK)
        }
        BundleCommand::Install(args) => install(args),
        BundleCommand::Push(args) => push(args),
        BundleCommand::List(args) => list(args),
        BundleCommand::Remove(args) => remove(args),
    }
}

/// The grader bundles of the project in the current directory: the store, `evalhost.lock`
/// and the `[trust]` policy of `evalhost.toml`, for `evalhost run`.
pub fn project_bundles() -> Result<BundleResolver, Failure> {
    let sources = ConfigSources::from_environment();
    let policy = TrustPolicy::from_config(&sources).map_err(Failure::usage)?;
    let lock = Lock::read(Path::new(LOCK_FILE)).map_err(Failure::usage)?;
    Ok(BundleResolver::new(
        BundleStore::from_env(&sources.env),
        lock,
        policy,
    ))
}

/// Exit 3 when evalhost could not write (the archive, the store), 2 for everything the
/// user can fix in the input.
fn failure(error: BundleError) -> Failure {
    match &error {
        BundleError::Io {
            action: "write" | "create" | "rename" | "remove",
            ..
        }
        | BundleError::Registry {
            unreachable: true, ..
        } => Failure::internal(error),
        _ => Failure::usage(error),
    }
}

fn project_policy() -> Result<TrustPolicy, Failure> {
    TrustPolicy::from_config(&ConfigSources::from_environment()).map_err(Failure::usage)
}

fn pack_bundle(args: PackArgs) -> Result<u8, Failure> {
    let host = GraderHost::with_builtins()
        .context("failed to set up the grader host")
        .map_err(Failure::internal)?;
    let packed = pack(&args.dir, args.output.as_deref(), &host).map_err(failure)?;
    println!(
        "packed {} {} (graders: {}; {} files) into {}\nmanifest sha256 {}\nnext: evalhost bundle sign {} --key ~/.ssh/id_ed25519",
        packed.manifest.name,
        packed.manifest.version,
        packed
            .manifest
            .graders
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        packed.manifest.files.len(),
        packed.archive.display(),
        packed.digest,
        packed.archive.display(),
    );
    Ok(exit::OK)
}

fn sign(args: SignArgs) -> Result<u8, Failure> {
    let manifest =
        manifest_bytes(&args.bundle, &UnpackLimits::default()).map_err(Failure::usage)?;
    let signature = sshsig::sign(&manifest, &args.key).map_err(Failure::usage)?;
    let public = sshsig::public_key_line(&args.key).map_err(Failure::usage)?;
    let out = signature_path(&args.bundle);
    std::fs::write(&out, signature)
        .with_context(|| format!("failed to write {}", out.display()))
        .map_err(Failure::internal)?;
    let identity = args.identity.as_deref().unwrap_or("team@example.com");
    println!(
        "signed {} → {}\nallowed_signers line for this key:\n{identity} namespaces=\"{}\" {public}",
        args.bundle.display(),
        out.display(),
        sshsig::NAMESPACE,
    );
    Ok(exit::OK)
}

fn print_manifest(args: ManifestArgs) -> Result<u8, Failure> {
    use std::io::Write as _;
    let manifest =
        manifest_bytes(&args.bundle, &UnpackLimits::default()).map_err(Failure::usage)?;
    let _ = std::io::stdout().lock().write_all(&manifest);
    Ok(exit::OK)
}

fn verify(args: &VerifyArgs, policy: &TrustPolicy) -> Result<VerifiedBundle, Failure> {
    let mut options = verify_options(args, policy)?;
    options.signature = args.signature.clone();
    let bundle = verify_bundle(&args.bundle, &options).map_err(Failure::usage)?;
    warn_unverified(&bundle, &args.bundle.display().to_string());
    Ok(bundle)
}

fn verify_options(
    args: &VerifyArgs,
    policy: &TrustPolicy,
) -> Result<crate::bundle::VerifyOptions, Failure> {
    policy
        .verify_options(args.allowed_signers.as_deref(), args.identity.clone())
        .map_err(Failure::usage)
}

/// The warning for a bundle accepted without a checked signature.
fn warn_unverified(bundle: &VerifiedBundle, origin: &str) {
    match &bundle.signature {
        Signature::Verified(_) => {}
        Signature::Unsigned => eprintln!(
            "warning: {origin} is unsigned; accepted because [trust] allow_unsigned is not false"
        ),
        Signature::Unchecked => eprintln!(
            "warning: the signature of {origin} was not checked (no allowed_signers file); accepted because [trust] allow_unsigned is not false"
        ),
    }
}

/// A runtime for one registry conversation.
fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
        .map_err(Failure::internal)
}

fn install(args: InstallArgs) -> Result<u8, Failure> {
    let sources = ConfigSources::from_environment();
    let policy = TrustPolicy::from_config(&sources).map_err(Failure::usage)?;
    let text = args.verify.bundle.to_string_lossy().into_owned();
    let (bundle, source) = if text.starts_with(registry::SCHEME) {
        if args.verify.signature.is_some() {
            return Err(Failure::usage(anyhow::anyhow!(
                "--signature applies to bundle files; a registry bundle carries its signature as a layer"
            )));
        }
        let reference = OciReference::parse(&text).map_err(Failure::usage)?;
        let lock = Lock::read(&args.lock).map_err(Failure::usage)?;
        let options = RegistryOptions {
            insecure: args.insecure,
            env: sources.env.clone(),
        };
        let verify = verify_options(&args.verify, &policy)?;
        let pulled = runtime()?
            .block_on(registry::pull(
                &reference,
                &options,
                &verify,
                (!args.update_lock).then_some(&lock),
            ))
            .map_err(failure)?;
        warn_unverified(&pulled.bundle, &text);
        (
            pulled.bundle,
            Some((reference.to_string(), pulled.oci_digest)),
        )
    } else {
        (verify(&args.verify, &policy)?, None)
    };
    let mut lock = Lock::read(&args.lock).map_err(Failure::usage)?;
    let manifest = &bundle.manifest;
    lock.check(&manifest.name, &manifest.version, &bundle.digest)
        .map_err(Failure::usage)?;
    let store = BundleStore::from_env(&sources.env)
        .context("no bundle store: set EVALHOST_BUNDLE_STORE, XDG_DATA_HOME or HOME")
        .map_err(Failure::usage)?;
    let stored = store.install(&bundle).map_err(failure)?;
    let from = source
        .as_ref()
        .map(|(reference, digest)| format!("\nfrom {reference} (OCI manifest {digest})"))
        .unwrap_or_default();
    lock.pin_from(&manifest.name, &manifest.version, &bundle.digest, source);
    lock.write().map_err(Failure::internal)?;
    println!(
        "{}{from}\ninstalled into {}\npinned in {}",
        describe("verified", &bundle),
        stored.dir.display(),
        lock.path.display()
    );
    Ok(exit::OK)
}

fn push(args: PushArgs) -> Result<u8, Failure> {
    let policy = project_policy()?;
    let reference = OciReference::parse(&args.reference).map_err(Failure::usage)?;
    let bundle = verify(&args.verify, &policy)?;
    let path = &args.verify.bundle;
    let archive = std::fs::read(path)
        .with_context(|| format!("failed to read {}", path.display()))
        .map_err(Failure::usage)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| {
            format!(
                "{}-{}.tar.gz",
                bundle.manifest.name, bundle.manifest.version
            )
        });
    let options = RegistryOptions {
        insecure: args.insecure,
        env: ConfigSources::from_environment().env,
    };
    let digest = runtime()?
        .block_on(registry::push(
            &reference, &options, &file_name, archive, &bundle,
        ))
        .map_err(failure)?;
    println!(
        "{}\npushed to {reference} (OCI manifest {digest})\ninstall with: evalhost bundle install {}",
        describe("verified", &bundle),
        reference.with_digest(&digest),
    );
    Ok(exit::OK)
}

fn list(args: ListArgs) -> Result<u8, Failure> {
    let sources = ConfigSources::from_environment();
    let store = BundleStore::from_env(&sources.env)
        .context("no bundle store: set EVALHOST_BUNDLE_STORE, XDG_DATA_HOME or HOME")
        .map_err(Failure::usage)?;
    let installed = store.list().map_err(Failure::usage)?;
    let lock = Lock::read(&args.lock).map_err(Failure::usage)?;
    if installed.is_empty() {
        println!("no bundles installed in {}", store.root.display());
    }
    for bundle in &installed {
        let pin = lock.bundles.get(&bundle.name);
        let pinned = match pin {
            Some(pin) if pin.manifest_sha256 == bundle.digest => match &pin.oci_reference {
                Some(reference) => format!("  pinned ({reference})"),
                None => "  pinned".to_owned(),
            },
            _ => String::new(),
        };
        println!(
            "{} {}  sha256 {}  {}{pinned}",
            bundle.name,
            bundle.version,
            &bundle.digest[..12],
            if bundle.signed { "signed" } else { "unsigned" },
        );
    }
    for (name, pin) in &lock.bundles {
        let present = installed
            .iter()
            .any(|b| b.name == *name && b.digest == pin.manifest_sha256);
        if !present {
            println!(
                "{name} {}  pinned in {} but not installed{}",
                pin.version,
                lock.path.display(),
                pin.oci_reference
                    .as_ref()
                    .map(|r| format!(" (evalhost bundle install {r})"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(exit::OK)
}

fn remove(args: RemoveArgs) -> Result<u8, Failure> {
    let sources = ConfigSources::from_environment();
    let store = BundleStore::from_env(&sources.env)
        .context("no bundle store: set EVALHOST_BUNDLE_STORE, XDG_DATA_HOME or HOME")
        .map_err(Failure::usage)?;
    let mut lock = Lock::read(&args.lock).map_err(Failure::usage)?;
    let removed = store
        .remove(&args.name, args.version.as_deref())
        .map_err(failure)?;
    for (version, digest) in &removed {
        println!(
            "removed {} {version} (manifest sha256 {digest}) from {}",
            args.name,
            store.root.display()
        );
    }
    let pinned = lock.bundles.get(&args.name).cloned();
    if let Some(pin) = pinned
        && removed.iter().any(|(v, _)| v.to_string() == pin.version)
    {
        if args.unpin {
            lock.unpin(&args.name);
            lock.write().map_err(Failure::internal)?;
            println!("unpinned {} from {}", args.name, lock.path.display());
        } else {
            println!(
                "{} still pins {} {} (install it again, or pass --unpin to drop the pin)",
                lock.path.display(),
                args.name,
                pin.version
            );
        }
    }
    Ok(exit::OK)
}

/// `verified acme-checks 1.0.0: signed by ...; 2 files; graders a, b; manifest sha256 ...`.
fn describe(verb: &str, bundle: &VerifiedBundle) -> String {
    let signer = match &bundle.signature {
        Signature::Verified(s) => format!("signed by {} ({})", s.principals, s.fingerprint),
        Signature::Unsigned => "UNSIGNED".to_owned(),
        Signature::Unchecked => "signature NOT CHECKED".to_owned(),
    };
    let graders: Vec<&str> = bundle.manifest.graders.keys().map(String::as_str).collect();
    format!(
        "{verb} {} {}: {signer}; {} files; graders {}; manifest sha256 {}",
        bundle.manifest.name,
        bundle.manifest.version,
        bundle.files.len(),
        graders.join(", "),
        bundle.digest
    )
}
