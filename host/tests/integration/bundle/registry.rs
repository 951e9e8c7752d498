//! Bundles through a real OCI registry (CNCF distribution, Debian's `docker-registry`, on
//! 127.0.0.1): push, install and run; a blob modified in the registry's storage refused; a
//! moved tag refused by evalhost.lock until `--update-lock`; an htpasswd-protected registry
//! with credentials from the Docker config and the environment; and interop both ways with
//! the Python ORAS client.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::support::bundle::{IDENTITY, Project};
use crate::support::registry::{TestRegistry, digest_after, oras, oras_python};

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A project trusting one key, with the signed example bundle at `version`: the archive.
fn signed_bundle(p: &Project, version: &str) -> std::path::PathBuf {
    let key = if p.path("team_key").exists() {
        p.path("team_key")
    } else {
        let key = p.keygen("team_key");
        p.allowed_signers(&key);
        p.trust("allowed_signers = \"allowed_signers\"\nallow_unsigned = false");
        key
    };
    let bundle = p.pack(version);
    p.sign(&bundle, &key);
    bundle
}

/// The bundle manifest digest of `archive` (what the store and the lock name).
fn manifest_digest(p: &Project, archive: &Path) -> String {
    sha256(
        p.ok(&["bundle", "manifest", archive.to_str().unwrap()])
            .as_bytes(),
    )
}

#[test]
fn a_pushed_bundle_installs_runs_and_is_listed_and_removed() {
    let p = Project::new();
    let Some(registry) = TestRegistry::start(p.tmp.path(), None) else {
        return;
    };
    let bundle = signed_bundle(&p, "1.0.0");
    let digest = manifest_digest(&p, &bundle);
    let tag = registry.oci("acme/checks:1.0.0");

    let out = p.ok(&["bundle", "push", bundle.to_str().unwrap(), &tag]);
    let oci_digest = digest_after(&out, "(OCI manifest ");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "verified acme-checks 1.0.0: signed by {IDENTITY} (SHA256:"
        )) && lines[0].ends_with(&format!(
            "; 2 files; graders final_text_is; manifest sha256 {digest}"
        )),
        "{out}"
    );
    assert_eq!(
        lines[1],
        format!("pushed to {tag} (OCI manifest {oci_digest})")
    );
    assert_eq!(
        lines[2],
        format!(
            "install with: evalhost bundle install {}",
            registry.oci(&format!("acme/checks@{oci_digest}"))
        )
    );

    // The documented layout, as the registry stores it.
    let stored = std::fs::read(registry.blob_file(&oci_digest)).unwrap();
    assert_eq!(format!("sha256:{}", sha256(&stored)), oci_digest);
    let manifest = registry.manifest(&oci_digest);
    assert_eq!(
        manifest["artifactType"],
        "application/vnd.evalhost.bundle.v1"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.oci.empty.v1+json"
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 2, "{manifest}");
    assert_eq!(
        layers[0]["mediaType"],
        "application/vnd.evalhost.bundle.v1.tar+gzip"
    );
    assert_eq!(
        layers[0]["annotations"]["org.opencontainers.image.title"],
        "acme-checks-1.0.0.tar.gz"
    );
    assert_eq!(
        layers[0]["digest"],
        format!("sha256:{}", sha256(&std::fs::read(&bundle).unwrap()))
    );
    assert_eq!(
        layers[1]["mediaType"],
        "application/vnd.evalhost.bundle.signature.v1"
    );

    // Pushing the same bundle again makes the same manifest: the tag does not move.
    let again = p.ok(&["bundle", "push", bundle.to_str().unwrap(), &tag]);
    assert_eq!(digest_after(&again, "(OCI manifest "), oci_digest);

    let out = p.ok(&["bundle", "install", &tag]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("verified acme-checks 1.0.0: signed by "),
        "{out}"
    );
    assert_eq!(lines[1], format!("from {tag} (OCI manifest {oci_digest})"));
    assert_eq!(
        lines[2],
        format!(
            "installed into {}",
            p.store().join("objects").join(&digest).display()
        )
    );
    let lock = std::fs::read_to_string(p.project().join("evalhost.lock")).unwrap();
    assert!(
        lock.contains(&format!(
            "[bundles.acme-checks]\nversion = \"1.0.0\"\nmanifest_sha256 = \"{digest}\"\noci_reference = \"{tag}\"\noci_digest = \"{oci_digest}\"\n"
        )),
        "{lock}"
    );
    // Installing the same tag again is a no-op that agrees with the lock.
    p.ok(&["bundle", "install", &tag]);

    let case = p.case("greet", "acme-checks/final_text_is");
    let output = p.evalhost(&["run", &case]);
    output.assert_code(0);

    let listed = p.ok(&["bundle", "list"]);
    assert_eq!(
        listed,
        format!(
            "acme-checks 1.0.0  sha256 {}  signed  pinned ({tag})\n",
            &digest[..12]
        )
    );

    let out = p.ok(&["bundle", "remove", "acme-checks"]);
    assert_eq!(
        out,
        format!(
            "removed acme-checks 1.0.0 (manifest sha256 {digest}) from {}\nevalhost.lock still pins acme-checks 1.0.0 (install it again, or pass --unpin to drop the pin)\n",
            p.store().display()
        )
    );
    assert!(p.store_files().is_empty(), "{:?}", p.store_files());
    assert_eq!(
        p.ok(&["bundle", "list"]),
        format!(
            "no bundles installed in {}\nacme-checks 1.0.0  pinned in evalhost.lock but not installed (evalhost bundle install {tag})\n",
            p.store().display()
        )
    );
    // The pinned tag installs again on a machine with an empty store (what CI does).
    p.ok(&["bundle", "install", &tag]);
    let err = p.refused(&["bundle", "remove", "acme-checks", "9.9.9"]);
    assert_eq!(
        err,
        format!(
            "Error: bundle `acme-checks` 9.9.9 is not installed in `{}` (installed: 1.0.0)\n",
            p.store().display()
        )
    );
    let out = p.ok(&["bundle", "remove", "acme-checks", "1.0.0", "--unpin"]);
    assert!(
        out.ends_with("unpinned acme-checks from evalhost.lock\n"),
        "{out}"
    );
    let lock = std::fs::read_to_string(p.project().join("evalhost.lock")).unwrap();
    assert!(!lock.contains("acme-checks"), "{lock}");
}

#[test]
fn a_blob_modified_in_the_registry_is_refused_before_anything_is_stored() {
    let p = Project::new();
    let Some(registry) = TestRegistry::start(p.tmp.path(), None) else {
        return;
    };
    let bundle = signed_bundle(&p, "1.0.0");
    let tag = registry.oci("acme/checks:1.0.0");
    let out = p.ok(&["bundle", "push", bundle.to_str().unwrap(), &tag]);
    let oci_digest = digest_after(&out, "(OCI manifest ");
    let layer = registry.manifest(&oci_digest)["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .to_owned();

    // Someone with write access to the registry's storage flips one byte of the archive.
    let blob = registry.blob_file(&layer);
    let mut bytes = std::fs::read(&blob).unwrap();
    let last = bytes.len() - 10;
    bytes[last] ^= 0x55;
    std::fs::write(&blob, &bytes).unwrap();

    let err = p.refused(&["bundle", "install", &tag]);
    assert_eq!(
        err,
        format!(
            "Error: `{tag}`: the registry served the bundle layer ({} bytes) with digest sha256:{}, but {layer} was asked for (modified in the registry?); refusing the bundle\n",
            bytes.len(),
            sha256(&bytes)
        )
    );
    assert!(p.store_files().is_empty(), "{:?}", p.store_files());
    assert!(!p.project().join("evalhost.lock").exists());

    // A manifest modified after signing, pushed with the old signature (a consistent
    // registry, a forged bundle), is refused by the same checks as a file.
    let forged = p.path("forged/acme-checks-1.0.0.tar.gz");
    std::fs::create_dir_all(forged.parent().unwrap()).unwrap();
    let mut entries = crate::support::bundle::read_entries(&bundle);
    for (path, bytes) in &mut entries {
        if path == "MANIFEST.toml" {
            let text = String::from_utf8(bytes.clone()).unwrap();
            assert!(text.contains("\ndescription = \""), "{text}");
            *bytes = text
                .replace("\ndescription = \"", "\ndescription = \"FORGED ")
                .into_bytes();
        }
    }
    crate::support::bundle::write_entries(&forged, &entries);
    std::fs::copy(
        bundle.with_extension("gz.sig"),
        forged.with_extension("gz.sig"),
    )
    .unwrap();
    // `push` verifies first: this takes a project that does not check signatures.
    let pusher = Project::new();
    let forged_tag = registry.oci("acme/checks:forged");
    pusher.ok(&["bundle", "push", forged.to_str().unwrap(), &forged_tag]);
    let err = p.refused(&["bundle", "install", &forged_tag]);
    assert_eq!(
        err,
        format!(
            "Error: `{forged_tag} (signature layer)` does not match the manifest of `{forged_tag}`: the manifest or the signature was modified\n"
        )
    );
    assert!(p.store_files().is_empty(), "{:?}", p.store_files());
}

#[test]
fn an_unreachable_registry_exits_3() {
    let p = Project::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tag = format!("oci://127.0.0.1:{port}/acme/checks:1.0.0");
    let output = p.evalhost(&["bundle", "install", &tag]);
    output.assert_code(3);
    let err = output.stderr();
    assert!(
        err.starts_with(&format!("Error: failed to resolve `{tag}`: ")),
        "{err}"
    );
}

#[test]
fn a_moved_tag_is_refused_by_the_lock_until_it_is_updated_on_purpose() {
    let p = Project::new();
    let Some(registry) = TestRegistry::start(p.tmp.path(), None) else {
        return;
    };
    let stable = registry.oci("acme/checks:stable");
    let v1 = signed_bundle(&p, "1.0.0");
    let out = p.ok(&["bundle", "push", v1.to_str().unwrap(), &stable]);
    let d1 = digest_after(&out, "(OCI manifest ");
    p.ok(&["bundle", "install", &stable]);

    let v2 = signed_bundle(&p, "1.1.0");
    let out = p.ok(&["bundle", "push", v2.to_str().unwrap(), &stable]);
    let d2 = digest_after(&out, "(OCI manifest ");
    assert_ne!(d1, d2);

    let err = p.refused(&["bundle", "install", &stable]);
    assert_eq!(
        err,
        format!(
            "Error: `{stable}` now resolves to manifest {d2}, but `evalhost.lock` pins {d1} for it (bundle `acme-checks` 1.0.0): the tag moved; refusing it (run `evalhost bundle install {stable} --update-lock` to accept the new manifest on purpose)\n"
        )
    );
    let listed = p.ok(&["bundle", "list"]);
    assert!(!listed.contains("1.1.0"), "{listed}");

    let out = p.ok(&["bundle", "install", &stable, "--update-lock"]);
    assert!(out.starts_with("verified acme-checks 1.1.0: "), "{out}");
    let lock = std::fs::read_to_string(p.project().join("evalhost.lock")).unwrap();
    assert!(
        lock.contains("version = \"1.1.0\"") && lock.contains(&format!("oci_digest = \"{d2}\"")),
        "{lock}"
    );

    // The old manifest, by digest: an older version than the lock pins is a rollback.
    let old = registry.oci(&format!("acme/checks@{d1}"));
    let err = p.refused(&["bundle", "install", &old, "--update-lock"]);
    assert_eq!(
        err,
        "Error: bundle `acme-checks` 1.0.0 is older than 1.1.0, which `evalhost.lock` pins: refusing the rollback\n"
    );
    // A digest the registry does not hold.
    let missing = registry.oci(&format!("acme/checks@sha256:{}", "0".repeat(64)));
    let err = p.refused(&["bundle", "install", &missing]);
    assert!(
        err.starts_with(&format!("Error: failed to resolve `{missing}`: ")),
        "{err}"
    );
}

#[test]
fn a_password_protected_registry_takes_credentials_from_docker_config_or_the_environment() {
    let p = Project::new();
    let Some(registry) = TestRegistry::start(p.tmp.path(), Some(("ci", "s3cret-pw"))) else {
        return;
    };
    let bundle = signed_bundle(&p, "1.0.0");
    let tag = registry.oci("acme/checks:1.0.0");
    let b = bundle.to_str().unwrap();

    // Anonymous: refused by the registry, with its answer.
    let err = p.refused(&["bundle", "push", b, &tag]);
    assert!(
        err.starts_with(&format!("Error: failed to push to `{tag}`: ")),
        "{err}"
    );

    // `docker login` writes base64("user:password") under auths.HOST.
    let docker = p.path("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64_encode(b"ci:s3cret-pw");
    std::fs::write(
        docker.join("config.json"),
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, registry.host),
    )
    .unwrap();
    p.ok(&["bundle", "push", b, &tag]);
    std::fs::remove_file(docker.join("config.json")).unwrap();

    let err = p.refused(&["bundle", "install", &tag]);
    assert!(
        err.starts_with(&format!("Error: failed to resolve `{tag}`: ")),
        "{err}"
    );
    let wrong = [
        ("EVALHOST_REGISTRY_USERNAME", "ci"),
        ("EVALHOST_REGISTRY_PASSWORD", "wrong"),
    ];
    let output = p.evalhost_env(&["bundle", "install", &tag], &wrong);
    output.assert_code(2);
    assert!(p.store_files().is_empty());

    let right = [
        ("EVALHOST_REGISTRY_USERNAME", "ci"),
        ("EVALHOST_REGISTRY_PASSWORD", "s3cret-pw"),
    ];
    let output = p.evalhost_env(&["bundle", "install", &tag], &right);
    output.assert_code(0);
    let out = output.stdout();
    assert!(
        out.starts_with("verified acme-checks 1.0.0: signed by "),
        "{out}"
    );
}

#[test]
fn oras_pulls_what_evalhost_pushes_and_evalhost_installs_what_oras_pushes() {
    let p = Project::new();
    let Some(registry) = TestRegistry::start(p.tmp.path(), None) else {
        return;
    };
    if oras().is_none() {
        return;
    }
    let bundle = signed_bundle(&p, "1.0.0");
    let host = &registry.host;
    p.ok(&[
        "bundle",
        "push",
        bundle.to_str().unwrap(),
        &registry.oci("acme/checks:1.0.0"),
    ]);

    // oras pulls both layers under their titles, byte for byte.
    let pulled = p.path("pulled");
    let out = oras_python(
        p.tmp.path(),
        &format!(
            "import oras.client\nc = oras.client.OrasClient(hostname='{host}', insecure=True)\nfor f in sorted(c.pull(target='{host}/acme/checks:1.0.0', outdir='{}')): print(f)\n",
            pulled.display()
        ),
    );
    assert_eq!(
        out,
        format!(
            "{0}/acme-checks-1.0.0.tar.gz\n{0}/acme-checks-1.0.0.tar.gz.sig\n",
            pulled.display()
        )
    );
    assert_eq!(
        std::fs::read(pulled.join("acme-checks-1.0.0.tar.gz")).unwrap(),
        std::fs::read(&bundle).unwrap()
    );
    assert_eq!(
        std::fs::read(pulled.join("acme-checks-1.0.0.tar.gz.sig")).unwrap(),
        std::fs::read(bundle.with_extension("gz.sig")).unwrap()
    );

    // oras pushes the two files with the documented media types; evalhost installs them.
    let dir = p.path("oras-push");
    std::fs::create_dir_all(&dir).unwrap();
    let v2 = signed_bundle(&p, "1.1.0");
    std::fs::copy(&v2, dir.join("acme-checks-1.1.0.tar.gz")).unwrap();
    std::fs::copy(
        v2.with_extension("gz.sig"),
        dir.join("acme-checks-1.1.0.tar.gz.sig"),
    )
    .unwrap();
    oras_python(
        &dir,
        &format!(
            "import oras.client\nc = oras.client.OrasClient(hostname='{host}', insecure=True)\nc.push(target='{host}/acme/checks:1.1.0', files=['acme-checks-1.1.0.tar.gz:application/vnd.evalhost.bundle.v1.tar+gzip', 'acme-checks-1.1.0.tar.gz.sig:application/vnd.evalhost.bundle.signature.v1'])\n"
        ),
    );
    let out = p.ok(&["bundle", "install", &registry.oci("acme/checks:1.1.0")]);
    assert!(
        out.starts_with(&format!(
            "verified acme-checks 1.1.0: signed by {IDENTITY} (SHA256:"
        )),
        "{out}"
    );

    // An artifact that is not a bundle is refused, naming what it holds.
    std::fs::write(dir.join("notes.txt"), "hello").unwrap();
    oras_python(
        &dir,
        &format!(
            "import oras.client\nc = oras.client.OrasClient(hostname='{host}', insecure=True)\nc.push(target='{host}/acme/notes:1', files=['notes.txt:text/plain'])\n"
        ),
    );
    let notes = registry.oci("acme/notes:1");
    let err = p.refused(&["bundle", "install", &notes]);
    assert_eq!(
        err,
        format!(
            "Error: `{notes}` is not an evalhost bundle: a layer of media type `text/plain` (a bundle has one application/vnd.evalhost.bundle.v1.tar+gzip layer and at most one application/vnd.evalhost.bundle.signature.v1 layer) (see docs/bundles.md, \"Registries\")\n"
        )
    );
}

/// Standard base64 with padding (what `docker login` writes), without a crate.
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
