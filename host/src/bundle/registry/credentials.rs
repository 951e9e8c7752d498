//! Registry credentials, first found wins:
//!
//! 1. `EVALHOST_REGISTRY_USERNAME` and `EVALHOST_REGISTRY_PASSWORD` (both, or neither);
//! 2. the Docker config, `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`: the
//!    `auths` entry of the registry, its `credHelpers` helper or the `credsStore` (what
//!    `docker login` and `oras login` write), read with the `docker_credential` crate;
//! 3. anonymous.

use std::collections::HashMap;
use std::path::PathBuf;

use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::secrets::RegistryAuth;

use crate::bundle::BundleError;

/// The user name variable.
pub(crate) const USERNAME_ENV: &str = "EVALHOST_REGISTRY_USERNAME";
/// The password (or token) variable.
pub(crate) const PASSWORD_ENV: &str = "EVALHOST_REGISTRY_PASSWORD";

/// The Docker config file the environment names, if any.
pub(crate) fn docker_config(env: &HashMap<String, String>) -> Option<PathBuf> {
    let set = |name: &str| env.get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    set("DOCKER_CONFIG")
        .or_else(|| set("HOME").map(|home| home.join(".docker")))
        .map(|dir| dir.join("config.json"))
}

/// The credentials for `registry` (`HOST[:PORT]`).
pub(crate) fn registry_auth(
    registry: &str,
    env: &HashMap<String, String>,
) -> Result<RegistryAuth, BundleError> {
    let failed = |message: String| BundleError::Credentials {
        registry: registry.to_owned(),
        message,
    };
    let var = |name: &str| env.get(name).filter(|v| !v.is_empty()).cloned();
    match (var(USERNAME_ENV), var(PASSWORD_ENV)) {
        (Some(user), Some(password)) => return Ok(RegistryAuth::Basic(user, password)),
        (Some(_), None) | (None, Some(_)) => {
            return Err(failed(format!(
                "set both {USERNAME_ENV} and {PASSWORD_ENV}, or neither"
            )));
        }
        (None, None) => {}
    }
    let Some(path) = docker_config(env) else {
        return Ok(RegistryAuth::Anonymous);
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RegistryAuth::Anonymous),
        Err(e) => return Err(failed(format!("failed to read `{}`: {e}", path.display()))),
    };
    match docker_credential::get_credential_from_reader(std::io::BufReader::new(file), registry) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            Ok(RegistryAuth::Basic(user, password))
        }
        Ok(DockerCredential::IdentityToken(_)) => Err(failed(format!(
            "`{}` holds an identity token for it, which evalhost cannot use; log in with a user name and password or token, or set {USERNAME_ENV} and {PASSWORD_ENV}",
            path.display()
        ))),
        Err(CredentialRetrievalError::NoCredentialConfigured) => Ok(RegistryAuth::Anonymous),
        Err(e) => Err(failed(format!("`{}`: {e}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn docker_config_auths_and_the_environment_give_credentials() {
        let dir = tempfile::tempdir().unwrap();
        // base64("ci:s3cret")
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"auths":{"127.0.0.1:5000":{"auth":"Y2k6czNjcmV0"}}}"#,
        )
        .unwrap();
        let docker = env(&[("DOCKER_CONFIG", dir.path().to_str().unwrap())]);
        let auth = registry_auth("127.0.0.1:5000", &docker).unwrap();
        assert!(matches!(auth, RegistryAuth::Basic(u, p) if u == "ci" && p == "s3cret"));
        assert!(matches!(
            registry_auth("ghcr.io", &docker).unwrap(),
            RegistryAuth::Anonymous
        ));

        let vars = env(&[(USERNAME_ENV, "bot"), (PASSWORD_ENV, "tok")]);
        let auth = registry_auth("ghcr.io", &vars).unwrap();
        assert!(matches!(auth, RegistryAuth::Basic(u, p) if u == "bot" && p == "tok"));
        let half = registry_auth("ghcr.io", &env(&[(USERNAME_ENV, "bot")]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            half,
            "registry credentials for `ghcr.io`: set both EVALHOST_REGISTRY_USERNAME and EVALHOST_REGISTRY_PASSWORD, or neither"
        );

        std::fs::write(dir.path().join("config.json"), "{not json").unwrap();
        let err = registry_auth("127.0.0.1:5000", &docker)
            .unwrap_err()
            .to_string();
        assert!(err.contains("config.json`: "), "{err}");
    }
}
