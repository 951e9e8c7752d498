//! `evalhost bundle pack|sign|manifest|verify|install`: vetted grader bundles.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;

use super::{Failure, exit};
use evalhost::bundle::{
    BundleError, BundleResolver, BundleStore, LOCK_FILE, Lock, Signature, TrustPolicy,
    UnpackLimits, VerifiedBundle, manifest_bytes, pack, signature_path, sshsig, verify_bundle,
};
use evalhost::config::ConfigSources;
use evalhost::grader::GraderHost;

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
    /// Verify a bundle, install it into the local store and pin it in evalhost.lock.
    #[command(after_help = "Examples:
  evalhost bundle install acme-checks-1.0.0.tar.gz

The store is $EVALHOST_BUNDLE_STORE, else $XDG_DATA_HOME/evalhost/bundles, else
~/.local/share/evalhost/bundles. Exit status: 0 installed; 2 refused (nothing was installed).")]
    Install(InstallArgs),
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
    }
}

/// The grader bundles of the project in the current directory: the store, `evalhost.lock`
/// and the `[trust]` policy of `evalhost.toml`, for `evalhost run`.
pub fn project_bundles() -> Result<BundleResolver, Failure> {
    let sources = ConfigSources::from_environment();
    let policy = sources.trust().map_err(Failure::usage)?;
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
            action: "write" | "create" | "rename",
            ..
        } => Failure::internal(error),
        _ => Failure::usage(error),
    }
}

fn project_policy() -> Result<TrustPolicy, Failure> {
    ConfigSources::from_environment()
        .trust()
        .map_err(Failure::usage)
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
    let mut options = policy
        .verify_options(args.allowed_signers.as_deref(), args.identity.clone())
        .map_err(Failure::usage)?;
    options.signature = args.signature.clone();
    let bundle = verify_bundle(&args.bundle, &options).map_err(Failure::usage)?;
    match &bundle.signature {
        Signature::Verified(_) => {}
        Signature::Unsigned => eprintln!(
            "warning: {} is unsigned; accepted because [trust] allow_unsigned is not false",
            args.bundle.display()
        ),
        Signature::Unchecked => eprintln!(
            "warning: the signature of {} was not checked (no allowed_signers file); accepted because [trust] allow_unsigned is not false",
            args.bundle.display()
        ),
    }
    Ok(bundle)
}

fn install(args: InstallArgs) -> Result<u8, Failure> {
    let sources = ConfigSources::from_environment();
    let policy = sources.trust().map_err(Failure::usage)?;
    let bundle = verify(&args.verify, &policy)?;
    let mut lock = Lock::read(&args.lock).map_err(Failure::usage)?;
    let manifest = &bundle.manifest;
    lock.check(&manifest.name, &manifest.version, &bundle.digest)
        .map_err(Failure::usage)?;
    let store = BundleStore::from_env(&sources.env)
        .context("no bundle store: set EVALHOST_BUNDLE_STORE, XDG_DATA_HOME or HOME")
        .map_err(Failure::usage)?;
    let stored = store.install(&bundle).map_err(failure)?;
    lock.pin(&manifest.name, &manifest.version, &bundle.digest);
    lock.write().map_err(Failure::internal)?;
    println!(
        "{}\ninstalled into {}\npinned in {}",
        describe("verified", &bundle),
        stored.dir.display(),
        lock.path.display()
    );
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
