//! OpenSSH `SSHSIG` signatures over a bundle's manifest, namespace `evalhost-bundle`, and
//! the `allowed_signers` file that says whose signatures are accepted — the same file and
//! format `ssh-keygen -Y verify` reads, so anyone can cross-check a bundle with OpenSSH.

use std::path::{Path, PathBuf};

use ssh_key::{HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

use super::BundleError;

/// The SSHSIG namespace of bundle signatures (`ssh-keygen -Y sign -n evalhost-bundle`).
pub const NAMESPACE: &str = "evalhost-bundle";

/// Sign `manifest` with the OpenSSH private key at `key`: the armored signature text.
pub fn sign(manifest: &[u8], key: &Path) -> Result<String, BundleError> {
    let key_error = |message: String| BundleError::Key {
        key: key.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(key).map_err(BundleError::io("read", key))?;
    let private = PrivateKey::from_openssh(&text)
        .map_err(|e| key_error(format!("not an OpenSSH private key: {e}")))?;
    if private.is_encrypted() {
        return Err(key_error(format!(
            "the key is passphrase-protected; sign with OpenSSH instead: `evalhost bundle manifest BUNDLE | ssh-keygen -Y sign -n {NAMESPACE} -f {} > BUNDLE.sig`",
            key.display()
        )));
    }
    let signature = private
        .sign(NAMESPACE, HashAlg::Sha512, manifest)
        .map_err(|e| {
            key_error(format!(
                "signing failed ({} keys are supported as ed25519): {e}",
                private.algorithm()
            ))
        })?;
    signature
        .to_pem(LineEnding::LF)
        .map_err(|e| key_error(format!("encoding the signature failed: {e}")))
}

/// The detached signature at `path`, or `None` when there is no such file.
pub(crate) fn read_signature(path: &Path) -> Result<Option<String>, BundleError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(BundleError::Io {
            action: "read",
            path: path.to_owned(),
            error: source,
        }),
    }
}

/// The public half of the key at `key`, as an OpenSSH public key line (for allowed_signers).
pub fn public_key_line(key: &Path) -> Result<String, BundleError> {
    let text = std::fs::read_to_string(key).map_err(BundleError::io("read", key))?;
    let private = PrivateKey::from_openssh(&text).map_err(|e| BundleError::Key {
        key: key.to_owned(),
        message: format!("not an OpenSSH private key: {e}"),
    })?;
    let mut public = private.public_key().clone();
    public.set_comment("");
    public.to_openssh().map_err(|e| BundleError::Key {
        key: key.to_owned(),
        message: e.to_string(),
    })
}

/// One line of an allowed_signers file.
#[derive(Debug, Clone)]
pub struct AllowedSigner {
    /// Principal patterns (`team@example.com`, `*@example.com`).
    pub principals: Vec<String>,
    /// The `namespaces=` option, if given.
    pub namespaces: Option<Vec<String>>,
    /// The key.
    pub key: PublicKey,
    /// 1-based line number, for messages.
    pub line: usize,
}

/// An allowed_signers file (see ssh-keygen(1), "ALLOWED SIGNERS").
#[derive(Debug, Clone)]
pub struct AllowedSigners {
    /// The file.
    pub path: PathBuf,
    /// Its entries, in order.
    pub signers: Vec<AllowedSigner>,
}

/// Who signed a bundle, once verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// The allowed_signers principals of the matching line, comma-separated.
    pub principals: String,
    /// The key's SHA256 fingerprint.
    pub fingerprint: String,
}

impl AllowedSigners {
    /// Read an allowed_signers file.
    pub fn read(path: &Path) -> Result<Self, BundleError> {
        let text = std::fs::read_to_string(path).map_err(BundleError::io("read", path))?;
        Self::parse(&text, path)
    }

    /// Parse allowed_signers text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, BundleError> {
        let mut signers = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let error = |message: String| BundleError::AllowedSigners {
                path: path.to_owned(),
                line: index + 1,
                message,
            };
            signers.push(parse_line(trimmed, index + 1).map_err(error)?);
        }
        Ok(Self {
            path: path.to_owned(),
            signers,
        })
    }

    /// Check `signature` (armored text, from the file `signature_path`) over `manifest`:
    /// namespace, signer, optional identity, then the signature itself.
    pub fn verify(
        &self,
        manifest: &[u8],
        signature: &str,
        signature_path: &Path,
        archive: &Path,
        identity: Option<&str>,
    ) -> Result<Signer, BundleError> {
        let sig = SshSig::from_pem(signature.trim().as_bytes()).map_err(|e| {
            BundleError::MalformedSignature {
                signature: signature_path.to_owned(),
                message: e.to_string(),
            }
        })?;
        if sig.namespace() != NAMESPACE {
            return Err(BundleError::WrongNamespace {
                signature: signature_path.to_owned(),
                found: sig.namespace().to_owned(),
                expected: NAMESPACE,
            });
        }
        let key = PublicKey::new(sig.public_key().clone(), "");
        let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
        let unknown = |detail: String| BundleError::UnknownSigner {
            signature: signature_path.to_owned(),
            fingerprint: fingerprint.clone(),
            allowed_signers: self.path.clone(),
            detail,
        };
        let by_key: Vec<&AllowedSigner> = self
            .signers
            .iter()
            .filter(|s| s.key.key_data() == sig.public_key())
            .collect();
        if by_key.is_empty() {
            return Err(unknown(String::new()));
        }
        let in_namespace: Vec<&AllowedSigner> = by_key
            .into_iter()
            .filter(|s| {
                s.namespaces
                    .as_ref()
                    .is_none_or(|ns| ns.iter().any(|n| n == NAMESPACE))
            })
            .collect();
        if in_namespace.is_empty() {
            return Err(unknown(format!(" for namespace {NAMESPACE}")));
        }
        let signer = match identity {
            None => in_namespace[0],
            Some(identity) => in_namespace
                .into_iter()
                .find(|s| s.principals.iter().any(|p| principal_matches(p, identity)))
                .ok_or_else(|| unknown(format!(" for identity {identity}")))?,
        };
        key.verify(NAMESPACE, manifest, &sig)
            .map_err(|_| BundleError::BadSignature {
                signature: signature_path.to_owned(),
                archive: archive.to_owned(),
            })?;
        Ok(Signer {
            principals: signer.principals.join(","),
            fingerprint,
        })
    }
}

/// `principals [options] keytype base64 [comment]`.
fn parse_line(line: &str, number: usize) -> Result<AllowedSigner, String> {
    let tokens = tokenize(line)?;
    let mut tokens = tokens.iter().map(String::as_str);
    let principals = tokens.next().ok_or("missing principals")?;
    let mut next = tokens.next().ok_or("missing key type")?;
    let mut namespaces = None;
    if !is_key_type(next) {
        for option in split_options(next)? {
            let (name, value) = match option.split_once('=') {
                Some((name, value)) => (name.to_ascii_lowercase(), Some(value.trim_matches('"'))),
                None => (option.to_ascii_lowercase(), None),
            };
            match (name.as_str(), value) {
                ("namespaces", Some(value)) => {
                    namespaces = Some(value.split(',').map(|n| n.trim().to_owned()).collect());
                }
                ("cert-authority", _) => {
                    return Err("`cert-authority` (certificate signers) is not supported; list the signing key itself".into());
                }
                ("valid-after" | "valid-before", _) => {
                    return Err(format!(
                        "option `{name}` is not supported; remove it or the line"
                    ));
                }
                _ => return Err(format!("unknown option `{option}`")),
            }
        }
        next = tokens.next().ok_or("missing key type")?;
    }
    let key_type = next;
    let base64 = tokens
        .next()
        .ok_or("missing the base64 key after the key type")?;
    let key = PublicKey::from_openssh(&format!("{key_type} {base64}"))
        .map_err(|e| format!("`{key_type}` key is not readable: {e}"))?;
    Ok(AllowedSigner {
        principals: principals
            .trim_matches('"')
            .split(',')
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect(),
        namespaces,
        key,
        line: number,
    })
}

fn is_key_type(token: &str) -> bool {
    token.starts_with("ssh-") || token.starts_with("ecdsa-") || token.starts_with("sk-")
}

/// Split on whitespace outside double quotes; quotes are kept (options strip them).
fn tokenize(line: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    tokens.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if quoted {
        return Err("unterminated quote".into());
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    Ok(tokens)
}

/// `a,b="x,y",c` → `a`, `b="x,y"`, `c`.
fn split_options(text: &str) -> Result<Vec<String>, String> {
    let mut options = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => options.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    options.push(current);
    if options.iter().any(String::is_empty) {
        return Err(format!("malformed options `{text}`"));
    }
    Ok(options)
}

/// An OpenSSH principal pattern: `*` and `?` wildcards, `!` negation not supported.
fn principal_matches(pattern: &str, identity: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], s) || (!s.is_empty() && go(p, &s[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &s[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), identity.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHGvs2oD9BXGcADdSjpOkK4SG4H5fffOuPiXF5H4Mbd6";

    #[test]
    fn lines_with_options_and_comments() {
        let text = format!(
            "# team keys\nteam@example.com,ops@example.com namespaces=\"evalhost-bundle,git\" {KEY} laptop\n\n*@example.com {KEY}\n"
        );
        let signers = AllowedSigners::parse(&text, Path::new("allowed_signers")).unwrap();
        assert_eq!(signers.signers.len(), 2);
        assert_eq!(
            signers.signers[0].principals,
            ["team@example.com", "ops@example.com"]
        );
        assert_eq!(
            signers.signers[0].namespaces.as_deref(),
            Some(&["evalhost-bundle".to_owned(), "git".to_owned()][..])
        );
        assert_eq!(signers.signers[1].line, 4);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let error = AllowedSigners::parse(
            &format!("a@b {KEY}\nx@y cert-authority {KEY}\n"),
            Path::new("signers"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("signers:2: ") && error.contains("cert-authority"),
            "{error}"
        );
        let error = AllowedSigners::parse("a@b ssh-ed25519 !!!\n", Path::new("s"))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("s:1: "), "{error}");
    }

    #[test]
    fn principal_patterns() {
        assert!(principal_matches("*@example.com", "team@example.com"));
        assert!(principal_matches("team@example.com", "team@example.com"));
        assert!(!principal_matches("team@example.com", "eve@example.com"));
        assert!(principal_matches("t?am@*", "team@x"));
    }
}
