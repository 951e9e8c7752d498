//! `oci://HOST[:PORT]/REPO:TAG` and `oci://HOST[:PORT]/REPO@sha256:DIGEST`: where a bundle
//! lives in a registry. The host is always written out (no implicit Docker Hub), and so is
//! the tag or digest (no implicit `latest`).

use std::fmt;
use std::net::IpAddr;

use crate::bundle::BundleError;

/// The scheme that marks a registry reference on the command line.
pub const SCHEME: &str = "oci://";

/// A parsed bundle reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciReference {
    /// `HOST[:PORT]` as written.
    pub registry: String,
    /// The repository path, e.g. `acme/checks`.
    pub repository: String,
    /// The tag, when one was given.
    pub tag: Option<String>,
    /// `sha256:<64 hex>`, when one was given (it wins over the tag).
    pub digest: Option<String>,
}

impl OciReference {
    /// Parse `oci://HOST[:PORT]/REPO:TAG` or `...@sha256:DIGEST` (the `oci://` may be left
    /// out where only a registry reference makes sense, as for `bundle push`).
    pub fn parse(text: &str) -> Result<Self, BundleError> {
        let bad = |message: &str| BundleError::BadReference {
            reference: text.to_owned(),
            message: message.to_owned(),
        };
        let rest = text.strip_prefix(SCHEME).unwrap_or(text);
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("no repository after the registry host"))?;
        if registry.is_empty() {
            return Err(bad("no registry host"));
        }
        if !registry
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        {
            return Err(bad(
                "the registry host may hold letters, digits, `-`, `.`, `:` (a port) and `[]` (IPv6) only",
            ));
        }
        let (name, digest) = match path.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (path, None),
        };
        // A tag is after the last `:` of the last path component.
        let last_slash = name.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match name[last_slash..].rfind(':') {
            Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
            None => (name, None),
        };
        if repository.is_empty()
            || !repository.split('/').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)
                    })
            })
        {
            return Err(bad(
                "the repository must be lowercase letters, digits, `.`, `_`, `-` and `/`",
            ));
        }
        if let Some(tag) = tag {
            let valid = !tag.is_empty()
                && tag.len() <= 128
                && !tag.starts_with(['.', '-'])
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if !valid {
                return Err(bad(&format!(
                    "`{tag}` is not a tag (letters, digits, `.`, `_`, `-`; at most 128)"
                )));
            }
        }
        if let Some(digest) = digest {
            let hex = digest.strip_prefix("sha256:").unwrap_or("");
            if !crate::bundle::manifest::is_digest(hex) {
                return Err(bad(&format!(
                    "`{digest}` is not a digest (sha256: and 64 lowercase hex digits)"
                )));
            }
        }
        if tag.is_none() && digest.is_none() {
            return Err(bad("no tag or digest (write :TAG or @sha256:DIGEST)"));
        }
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        })
    }

    /// Whether the registry is on this machine (`localhost`, `127.0.0.0/8`, `[::1]`): only
    /// then is plain HTTP used without `--insecure`.
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or(rest),
            None => self.registry.split(':').next().unwrap_or(&self.registry),
        };
        host.eq_ignore_ascii_case("localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// The same repository at `digest` (`sha256:...`).
    pub fn with_digest(&self, digest: &str) -> Self {
        Self {
            registry: self.registry.clone(),
            repository: self.repository.clone(),
            tag: None,
            digest: Some(digest.to_owned()),
        }
    }

    /// The reference as oci-client takes it.
    pub(crate) fn to_client(&self) -> oci_client::Reference {
        match &self.digest {
            Some(digest) => oci_client::Reference::with_digest(
                self.registry.clone(),
                self.repository.clone(),
                digest.clone(),
            ),
            // `parse` requires a tag when there is no digest.
            None => oci_client::Reference::with_tag(
                self.registry.clone(),
                self.repository.clone(),
                self.tag.clone().unwrap_or_default(),
            ),
        }
    }
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_digests_and_ports_parse_and_print_back() {
        let r = OciReference::parse("oci://127.0.0.1:5000/acme/checks:1.0.0").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "acme/checks");
        assert_eq!(r.tag.as_deref(), Some("1.0.0"));
        assert!(r.is_loopback());
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/acme/checks:1.0.0");

        let digest = format!("sha256:{}", "a".repeat(64));
        let r = OciReference::parse(&format!("ghcr.io/acme/checks@{digest}")).unwrap();
        assert_eq!(r.digest.as_deref(), Some(digest.as_str()));
        assert!(!r.is_loopback());
        assert_eq!(r.to_string(), format!("oci://ghcr.io/acme/checks@{digest}"));

        assert!(
            OciReference::parse("oci://localhost/x:y")
                .unwrap()
                .is_loopback()
        );
        assert!(
            OciReference::parse("oci://[::1]:5000/x:y")
                .unwrap()
                .is_loopback()
        );
        assert!(
            !OciReference::parse("oci://10.0.0.1:5000/x:y")
                .unwrap()
                .is_loopback()
        );
    }

    #[test]
    fn what_is_not_a_reference_is_refused_with_the_reason() {
        for (text, reason) in [
            ("oci://acme-checks", "no repository"),
            ("oci:///acme:1", "no registry host"),
            ("oci://ghcr.io/acme/checks", "no tag or digest"),
            ("oci://ghcr.io/Acme/checks:1", "lowercase"),
            ("oci://ghcr.io/acme/checks:", "is not a tag"),
            ("oci://ghcr.io/acme/checks@sha256:abc", "is not a digest"),
            ("oci://gh cr.io/acme:1", "registry host"),
        ] {
            let err = OciReference::parse(text).unwrap_err().to_string();
            assert!(err.contains(reason), "{text}: {err}");
            assert!(
                err.starts_with(&format!("`{text}` is not a bundle reference")),
                "{err}"
            );
        }
    }
}
