//! The project's trust policy (`[trust]` in `evalhost.toml`): whose bundle signatures are
//! accepted, and whether unsigned bundles and loose `.wasm` components are. Defaults suit
//! a developer's machine (both allowed); CI sets them to `false`.

use std::path::{Path, PathBuf};

use super::BundleError;
use super::sshsig::AllowedSigners;
use super::verify::VerifyOptions;
use crate::config::{ConfigError, ConfigSources, TrustTable};

/// The trust policy in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    /// The allowed_signers file (resolved against the directory of `origin`).
    pub allowed_signers: Option<PathBuf>,
    /// Accept bundles without a signature or whose signature cannot be checked.
    pub allow_unsigned: bool,
    /// Accept `path/to/grader.wasm#NAME` references.
    pub allow_wasm_paths: bool,
    /// Grant the judge to graders that ask for it (a bundle's `judge` capability, a case
    /// entry's `judge: true`).
    pub allow_judge: bool,
    /// The `evalhost.toml` the policy came from, for messages (`None`: defaults).
    pub origin: Option<PathBuf>,
}

impl Default for TrustPolicy {
    fn default() -> Self {
        Self {
            allowed_signers: None,
            allow_unsigned: true,
            allow_wasm_paths: true,
            allow_judge: true,
            origin: None,
        }
    }
}

impl TrustPolicy {
    /// The project's trust policy for grader bundles: `[trust]` of the project's
    /// `evalhost.toml` (defaults when the file or the table is absent; a `[trust]` in the
    /// user's file is refused).
    pub fn from_config(sources: &ConfigSources) -> Result<Self, ConfigError> {
        Ok(match sources.trust_table()? {
            Some((table, path)) => Self::from_table(&table, &path),
            None => Self::default(),
        })
    }

    /// The policy a `[trust]` table of the file `origin` sets.
    pub fn from_table(table: &TrustTable, origin: &Path) -> Self {
        let base = origin.parent().unwrap_or(Path::new("."));
        Self {
            allowed_signers: table.allowed_signers.as_ref().map(|p| base.join(p)),
            allow_unsigned: table.allow_unsigned.unwrap_or(true),
            allow_wasm_paths: table.allow_wasm_paths.unwrap_or(true),
            allow_judge: table.allow_judge.unwrap_or(true),
            origin: Some(origin.to_owned()),
        }
    }

    /// Whether a `path/to/grader.wasm#NAME` reference may be loaded.
    pub fn check_wasm_path(&self, reference: &str) -> Result<(), BundleError> {
        if self.allow_wasm_paths {
            return Ok(());
        }
        Err(BundleError::WasmPathRefused {
            reference: reference.to_owned(),
            policy: self
                .origin
                .clone()
                .unwrap_or_else(|| PathBuf::from(crate::config::PROJECT_FILE)),
        })
    }

    /// Whether the grader `reference` may be granted the judge it asks for.
    pub fn check_judge(&self, reference: &str) -> Result<(), BundleError> {
        if self.allow_judge {
            return Ok(());
        }
        Err(BundleError::JudgeRefused {
            reference: reference.to_owned(),
            policy: self
                .origin
                .clone()
                .unwrap_or_else(|| PathBuf::from(crate::config::PROJECT_FILE)),
        })
    }

    /// Verification options under this policy; `allowed_signers` given on the command line
    /// replaces the policy's file.
    pub fn verify_options(
        &self,
        allowed_signers: Option<&Path>,
        identity: Option<String>,
    ) -> Result<VerifyOptions, BundleError> {
        let signers = match allowed_signers.or(self.allowed_signers.as_deref()) {
            Some(path) => Some(AllowedSigners::read(path)?),
            None => None,
        };
        Ok(VerifyOptions {
            allowed_signers: signers,
            identity,
            allow_unsigned: self.allow_unsigned,
            ..VerifyOptions::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_in_the_users_file_is_refused_not_ignored() {
        let dir = tempfile::tempdir().expect("temp dir");
        let user = dir.path().join("config.toml");
        std::fs::write(&user, "[trust]\nallow_wasm_paths = false\n").expect("write");
        let sources = ConfigSources {
            user_file: Some(user),
            project_file: None,
            env: Default::default(),
        };
        let error = TrustPolicy::from_config(&sources)
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("config.toml") && error.contains("[trust]"),
            "{error}"
        );

        let project = dir.path().join("evalhost.toml");
        std::fs::write(&project, "[trust]\nallow_wasm_paths = false\n").expect("write");
        let sources = ConfigSources {
            user_file: None,
            project_file: Some(project),
            env: Default::default(),
        };
        assert!(TrustPolicy::from_config(&sources).is_ok());
    }
}
