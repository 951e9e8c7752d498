//! Binding `bundle-name/grader-name` references of cases to installed bundles at load time:
//! the lock decides the version, the store must hold it with the pinned digest, the trust
//! policy re-checks the signature it was installed with, and every component's digest is
//! checked against the manifest before the component is compiled.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::BundleError;
use super::lock::Lock;
use super::manifest::{JUDGE, MANIFEST_FILE, READS_WORKSPACE};
use super::sshsig::{AllowedSigners, read_signature};
use super::store::{BundleStore, StoredBundle};
use super::trust::TrustPolicy;
use super::verify::judge_signature;
use crate::grader::BundleRef;
use crate::grader::{GraderComponent, GraderHost};

/// A bundle grader ready to bind.
#[derive(Debug, Clone)]
pub struct BundleGrader {
    /// The component providing it.
    pub component: GraderComponent,
    /// The bundle and version it came from (one shared copy per bundle).
    pub bundle: Arc<BundleRef>,
    /// Whether it was granted the run's workspace (`reads-workspace`).
    pub reads_workspace: bool,
    /// Whether it was granted the judge (`judge`, which the trust policy allowed).
    pub judge: bool,
}

/// Resolves bundle graders for one suite, loading each bundle and component once.
#[derive(Debug)]
pub struct BundleResolver {
    store: Option<BundleStore>,
    lock: Lock,
    policy: TrustPolicy,
    /// Each bundle opened, with the reference its graders' verdicts share.
    bundles: HashMap<String, (StoredBundle, Arc<BundleRef>)>,
    components: HashMap<(String, String), GraderComponent>,
}

impl Default for BundleResolver {
    /// No store, an empty lock, the default policy: every bundle reference is "not installed".
    fn default() -> Self {
        Self::new(None, Lock::default(), TrustPolicy::default())
    }
}

impl BundleResolver {
    /// A resolver over `store` (`None`: no store could be located), pinned by `lock`.
    pub fn new(store: Option<BundleStore>, lock: Lock, policy: TrustPolicy) -> Self {
        Self {
            store,
            lock,
            policy,
            bundles: HashMap::new(),
            components: HashMap::new(),
        }
    }

    /// The trust policy in force (it also governs `.wasm` path references).
    pub fn policy(&self) -> &TrustPolicy {
        &self.policy
    }

    /// The grader `grader` of the bundle `name`.
    pub fn grader(
        &mut self,
        host: &GraderHost,
        name: &str,
        grader: &str,
    ) -> Result<BundleGrader, BundleError> {
        if !self.bundles.contains_key(name) {
            let stored = self.open(name)?;
            let reference = Arc::new(BundleRef {
                name: stored.manifest.name.clone(),
                version: stored.manifest.version.clone(),
            });
            self.bundles.insert(name.to_owned(), (stored, reference));
        }
        let (stored, bundle) = &self.bundles[name];
        let manifest = &stored.manifest;
        let Some(entry) = manifest.graders.get(grader) else {
            return Err(BundleError::UnknownGrader {
                name: name.to_owned(),
                version: manifest.version.clone(),
                grader: grader.to_owned(),
                provided: manifest
                    .graders
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let bundle = bundle.clone();
        let key = (name.to_owned(), entry.component.clone());
        let component = match self.components.get(&key) {
            Some(component) => component.clone(),
            None => {
                let bytes = stored.read_file(&entry.component)?;
                let origin = format!("{name}@{}/{}", manifest.version, entry.component);
                let (component, _) =
                    host.check_component(&bytes, &origin)
                        .map_err(|e| BundleError::Component {
                            grader: grader.to_owned(),
                            component: entry.component.clone(),
                            message: e.to_string(),
                        })?;
                self.components.insert(key, component.clone());
                component
            }
        };
        if !component.graders().iter().any(|g| g.name == grader) {
            return Err(BundleError::Component {
                grader: grader.to_owned(),
                component: entry.component.clone(),
                message: "the component does not provide this grader, though the manifest says so"
                    .into(),
            });
        }
        let judge = entry.capabilities.iter().any(|c| c == JUDGE);
        if judge {
            self.policy.check_judge(&format!("{name}/{grader}"))?;
        }
        Ok(BundleGrader {
            component,
            bundle,
            reads_workspace: entry.capabilities.iter().any(|c| c == READS_WORKSPACE),
            judge,
        })
    }

    /// The installed version of `name` the lock allows, checked.
    fn open(&self, name: &str) -> Result<StoredBundle, BundleError> {
        let Some(store) = &self.store else {
            return Err(BundleError::NotInstalled {
                name: name.to_owned(),
                store: PathBuf::from(
                    "(no store: set EVALHOST_BUNDLE_STORE, XDG_DATA_HOME or HOME)",
                ),
                install: install_hint(name, self.lock.bundles.get(name)),
            });
        };
        let versions = store.versions(name)?;
        let Some((newest, newest_digest)) = versions.last() else {
            return Err(BundleError::NotInstalled {
                name: name.to_owned(),
                store: store.root.clone(),
                install: install_hint(name, self.lock.bundles.get(name)),
            });
        };
        let (version, digest) = match self.lock.bundles.get(name) {
            None => (newest.to_string(), newest_digest.clone()),
            Some(pin) => {
                let locked = semver::Version::parse(&pin.version).ok();
                match versions.iter().find(|(v, _)| Some(v) == locked.as_ref()) {
                    Some((_, digest)) if *digest == pin.manifest_sha256 => {
                        (pin.version.clone(), digest.clone())
                    }
                    Some((_, digest)) => {
                        return Err(BundleError::LockMismatch {
                            name: name.to_owned(),
                            version: pin.version.clone(),
                            expected: pin.manifest_sha256.clone(),
                            actual: digest.clone(),
                            pinned_by: self.lock.path.clone(),
                        });
                    }
                    None if Some(newest) < locked.as_ref() => {
                        return Err(BundleError::Rollback {
                            name: name.to_owned(),
                            version: newest.to_string(),
                            locked: pin.version.clone(),
                            lock: self.lock.path.clone(),
                        });
                    }
                    None => {
                        return Err(BundleError::LockedVersionMissing {
                            name: name.to_owned(),
                            locked: pin.version.clone(),
                            installed: versions
                                .iter()
                                .map(|(v, _)| v.to_string())
                                .collect::<Vec<_>>()
                                .join(", "),
                            lock: self.lock.path.clone(),
                        });
                    }
                }
            }
        };
        let stored = store.open(name, &version, &digest)?;
        self.check_trust(&stored)?;
        Ok(stored)
    }

    /// The signature the bundle was installed with, checked against today's policy.
    fn check_trust(&self, stored: &StoredBundle) -> Result<(), BundleError> {
        let sig_path = stored.dir.with_extension("sig");
        let signature = read_signature(&sig_path)?;
        let signers = match (&signature, &self.policy.allowed_signers) {
            (Some(_), Some(path)) => Some(AllowedSigners::read(path)?),
            _ => None,
        };
        let manifest_path = stored.dir.join(MANIFEST_FILE);
        let manifest =
            std::fs::read(&manifest_path).map_err(BundleError::io("read", &manifest_path))?;
        judge_signature(
            &manifest,
            signature.as_deref(),
            &sig_path,
            &stored.dir,
            signers.as_ref(),
            None,
            self.policy.allow_unsigned,
        )?;
        Ok(())
    }
}

/// How to install bundle `name`, as a `NotInstalled` error says it: from the registry
/// reference `evalhost.lock` pinned it from (`evalhost bundle install oci://…`), from the
/// archive of the pinned version (`NAME-VERSION.tar.gz`), or, without a pin, either form.
pub(crate) fn install_hint(name: &str, pin: Option<&super::lock::Pin>) -> String {
    match pin {
        Some(super::lock::Pin {
            oci_reference: Some(reference),
            ..
        }) => format!("`evalhost bundle install {reference}`"),
        Some(pin) => format!("`evalhost bundle install {name}-{}.tar.gz`", pin.version),
        None => format!(
            "`evalhost bundle install {name}-VERSION.tar.gz`, or `evalhost bundle install oci://HOST/REPO:TAG` from a registry"
        ),
    }
}

#[cfg(test)]
mod install_hint_tests {
    use super::install_hint;
    use crate::bundle::lock::Pin;

    #[test]
    fn the_hint_names_where_the_lock_pinned_the_bundle_from() {
        let pin = |oci_reference: Option<&str>| Pin {
            version: "1.0.0".into(),
            manifest_sha256: "0".repeat(64),
            oci_reference: oci_reference.map(str::to_owned),
            oci_digest: None,
        };
        assert_eq!(
            install_hint(
                "acme-checks",
                Some(&pin(Some("oci://ghcr.io/acme/checks:1.0.0")))
            ),
            "`evalhost bundle install oci://ghcr.io/acme/checks:1.0.0`"
        );
        assert_eq!(
            install_hint("acme-checks", Some(&pin(None))),
            "`evalhost bundle install acme-checks-1.0.0.tar.gz`"
        );
        assert_eq!(
            install_hint("acme-checks", None),
            "`evalhost bundle install acme-checks-VERSION.tar.gz`, or `evalhost bundle install oci://HOST/REPO:TAG` from a registry"
        );
    }
}
