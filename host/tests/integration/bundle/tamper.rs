//! The tamper suite: every way a bundle can be altered or forged is refused with its own
//! message, and nothing reaches the store, the lock, or a run.

use std::path::PathBuf;

use crate::support::bundle::{
    Entry, IDENTITY, Project, read_entries, ssh_keygen, write_entries, write_tar,
};

/// A project trusting one key, with a signed 1.0.0 bundle: `(project, bundle, key)`.
fn signed() -> (Project, PathBuf, PathBuf) {
    let p = Project::new();
    let bundle = p.pack("1.0.0");
    let key = p.keygen("team_key");
    p.allowed_signers(&key);
    p.trust("allowed_signers = \"allowed_signers\"\nallow_unsigned = false");
    p.sign(&bundle, &key);
    (p, bundle, key)
}

/// Install `bundle` and expect a refusal containing every one of `expected`; then check that
/// nothing was installed or pinned. The refusal message.
fn refused(p: &Project, bundle: &std::path::Path, expected: &[&str]) -> String {
    let lock = std::fs::read(p.project().join("evalhost.lock")).ok();
    let before = p.store_files();
    let err = p.refused(&["bundle", "install", bundle.to_str().unwrap()]);
    for needle in expected {
        assert!(err.contains(needle), "expected `{needle}` in:\n{err}");
    }
    assert_eq!(p.store_files(), before, "the store changed after: {err}");
    assert_eq!(
        std::fs::read(p.project().join("evalhost.lock")).ok(),
        lock,
        "the lock changed after: {err}"
    );
    err
}

/// A copy of the signed bundle as `name` (signature copied along) after `edit` of its files.
fn variant(
    p: &Project,
    bundle: &std::path::Path,
    name: &str,
    edit: impl FnOnce(&mut Vec<(String, Vec<u8>)>),
) -> PathBuf {
    let mut entries = read_entries(bundle);
    edit(&mut entries);
    let out = p.path(name);
    write_entries(&out, &entries);
    std::fs::copy(
        p.path("acme-checks-1.0.0.tar.gz.sig"),
        p.path(&format!("{name}.sig")),
    )
    .unwrap();
    out
}

fn flip(bytes: &mut [u8], at: usize) {
    bytes[at] ^= 0x01;
}

#[test]
fn the_untouched_bundle_installs() {
    let (p, bundle, _) = signed();
    // Re-packed by the test's own tar writer, still accepted: the variants below differ
    // from it only by their one change.
    let same = variant(&p, &bundle, "same.tar.gz", |_| {});
    let out = p.ok(&["bundle", "install", same.to_str().unwrap()]);
    assert!(out.contains(&format!("signed by {IDENTITY}")), "{out}");
}

#[test]
fn a_flipped_byte_in_a_component_is_a_digest_mismatch() {
    let (p, bundle, _) = signed();
    let b = variant(&p, &bundle, "component.tar.gz", |entries| {
        let (_, bytes) = entries
            .iter_mut()
            .find(|(path, _)| path == "final_text_is.wasm")
            .unwrap();
        let middle = bytes.len() / 2;
        flip(bytes, middle);
    });
    refused(
        &p,
        &b,
        &[
            "file `final_text_is.wasm` has sha256",
            "but the manifest says",
            "modified after signing",
        ],
    );
}

#[test]
fn a_flipped_byte_in_the_manifest_breaks_the_signature() {
    let (p, bundle, _) = signed();
    let b = variant(&p, &bundle, "manifest.tar.gz", |entries| {
        let (_, bytes) = entries
            .iter_mut()
            .find(|(path, _)| path == "MANIFEST.toml")
            .unwrap();
        let at = bytes.len() - 5;
        flip(bytes, at);
    });
    refused(
        &p,
        &b,
        &[
            "does not match the manifest",
            "the manifest or the signature was modified",
        ],
    );
}

#[test]
fn a_flipped_byte_in_the_signature_is_refused() {
    let (p, bundle, _) = signed();
    let sig_path = p.path("acme-checks-1.0.0.tar.gz.sig");
    let sig = ssh_key::SshSig::from_pem(std::fs::read(&sig_path).unwrap()).unwrap();
    let mut bytes = sig.signature_bytes().to_vec();
    flip(&mut bytes, 10);
    let forged = ssh_key::SshSig::new(
        sig.public_key().clone(),
        sig.namespace(),
        sig.hash_alg(),
        ssh_key::Signature::new(sig.algorithm(), bytes).unwrap(),
    )
    .unwrap();
    std::fs::write(&sig_path, forged.to_pem(ssh_key::LineEnding::LF).unwrap()).unwrap();
    refused(&p, &bundle, &["does not match the manifest"]);
    // Garbage instead of a signature has its own message.
    std::fs::write(
        &sig_path,
        "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n",
    )
    .unwrap();
    refused(&p, &bundle, &["is not an OpenSSH signature"]);
}

#[test]
fn extra_missing_and_renamed_files_are_refused() {
    let (p, bundle, _) = signed();
    let extra = variant(&p, &bundle, "extra.tar.gz", |entries| {
        entries.push(("notes.txt".into(), b"smuggled".to_vec()));
    });
    refused(
        &p,
        &extra,
        &["file `notes.txt` is not listed in the manifest (an extra file)"],
    );
    let missing = variant(&p, &bundle, "missing.tar.gz", |entries| {
        entries.retain(|(path, _)| path != "bundle.toml");
    });
    refused(
        &p,
        &missing,
        &["file `bundle.toml` is listed in the manifest but missing from the archive"],
    );
    let renamed = variant(&p, &bundle, "renamed.tar.gz", |entries| {
        let entry = entries
            .iter_mut()
            .find(|(path, _)| path == "final_text_is.wasm")
            .unwrap();
        entry.0 = "other.wasm".into();
    });
    refused(
        &p,
        &renamed,
        &["file `final_text_is.wasm` of the manifest was renamed to `other.wasm`"],
    );
    let unpacked = variant(&p, &bundle, "no-manifest.tar.gz", |entries| {
        entries.retain(|(path, _)| path != "MANIFEST.toml");
    });
    refused(&p, &unpacked, &["has no MANIFEST.toml"]);
}

#[test]
fn a_key_not_in_allowed_signers_is_refused() {
    let (p, bundle, _) = signed();
    let stranger = p.keygen("stranger_key");
    p.sign(&bundle, &stranger);
    let err = refused(
        &p,
        &bundle,
        &[
            "is signed by key SHA256:",
            "which",
            "allowed_signers` does not allow",
        ],
    );
    assert!(!err.contains("for identity"), "{err}");
    // The trusted key, but an identity it is not listed under.
    let (p, bundle, _) = signed();
    let err = p.refused(&[
        "bundle",
        "install",
        bundle.to_str().unwrap(),
        "--identity",
        "eve@example.com",
    ]);
    assert!(
        err.contains("does not allow for identity eve@example.com"),
        "{err}"
    );
    assert!(p.store_files().is_empty());
}

#[test]
fn a_valid_signature_for_another_namespace_is_refused() {
    let (p, bundle, key) = signed();
    let manifest = p.ok(&["bundle", "manifest", bundle.to_str().unwrap()]);
    let (ok, sig, err) = ssh_keygen(
        &["-Y", "sign", "-n", "git", "-f", key.to_str().unwrap()],
        manifest.as_bytes(),
    );
    assert!(ok, "{err}");
    std::fs::write(p.path("acme-checks-1.0.0.tar.gz.sig"), sig).unwrap();
    refused(
        &p,
        &bundle,
        &["was made for namespace `git`, not `evalhost-bundle`"],
    );
}

#[test]
fn an_older_version_than_locked_is_refused_at_install_and_at_run() {
    let (p, bundle, key) = signed();
    p.ok(&["bundle", "install", bundle.to_str().unwrap()]);
    let older = p.pack("0.9.0");
    p.sign(&older, &key);
    refused(
        &p,
        &older,
        &[
            "bundle `acme-checks` 0.9.0 is older than 1.0.0",
            "evalhost.lock",
            "refusing the rollback",
        ],
    );

    // At run time: the lock pins 1.0.0 but only 0.9.0 is in this store (installed with
    // another lock), so nothing is loaded and no case runs.
    let other = Project::new();
    std::fs::copy(
        p.project().join("allowed_signers"),
        other.project().join("allowed_signers"),
    )
    .unwrap();
    other.trust("allowed_signers = \"allowed_signers\"");
    std::fs::copy(&older, other.path("older.tar.gz")).unwrap();
    std::fs::copy(
        p.path("acme-checks-0.9.0.tar.gz.sig"),
        other.path("older.tar.gz.sig"),
    )
    .unwrap();
    other.ok(&[
        "bundle",
        "install",
        other.path("older.tar.gz").to_str().unwrap(),
        "--lock",
        "other.lock",
    ]);
    std::fs::copy(
        p.project().join("evalhost.lock"),
        other.project().join("evalhost.lock"),
    )
    .unwrap();
    let case = other.case("pinned", "acme-checks/final_text_is");
    let output = other.evalhost(&["run", &case]);
    output.assert_code(2);
    let (out, err) = (output.stdout(), output.stderr());
    assert!(
        err.contains("pinned.yaml") && err.contains("0.9.0 is older than 1.0.0"),
        "{err}"
    );
    assert!(!out.contains("pinned"), "a case ran: {out}");
}

#[test]
fn a_store_modified_after_install_is_refused_at_run() {
    let (p, bundle, _) = signed();
    p.ok(&["bundle", "install", bundle.to_str().unwrap()]);
    let component = p
        .store_files()
        .into_iter()
        .find(|f| f.ends_with("final_text_is.wasm"))
        .unwrap();
    let mut bytes = std::fs::read(&component).unwrap();
    flip(&mut bytes, 100);
    std::fs::write(&component, bytes).unwrap();
    let case = p.case("tampered-store", "acme-checks/final_text_is");
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("tampered-store.yaml") && err.contains("file `final_text_is.wasm` has sha256"),
        "{err}"
    );
}

#[test]
fn hostile_archives_are_refused_before_anything_is_unpacked() {
    let p = Project::new();
    p.trust("allow_unsigned = true");
    let cases: [(&str, Entry, &str); 4] = [
        (
            "dotdot",
            Entry::file("../x", b"escaped"),
            "refusing entry `../x`: contains `..`",
        ),
        (
            "absolute",
            Entry::file("/tmp/evalhost-bundle-x", b"escaped"),
            "refusing entry `/tmp/evalhost-bundle-x`: absolute path",
        ),
        (
            "symlink",
            Entry {
                name: b"link",
                kind: tar::EntryType::Symlink,
                data: b"",
                link: b"/etc/passwd",
            },
            "refusing entry `link`: a symlink",
        ),
        (
            "hardlink",
            Entry {
                name: b"hard",
                kind: tar::EntryType::Link,
                data: b"",
                link: b"/etc/passwd",
            },
            "refusing entry `hard`: a hardlink",
        ),
    ];
    for (name, entry, message) in cases {
        let path = p.path(&format!("{name}.tar.gz"));
        write_tar(
            &path,
            &[Entry::file("MANIFEST.toml", b"format = 1\n"), entry],
        );
        refused(&p, &path, &[message]);
        assert!(!p.path("x").exists() && !std::path::Path::new("/tmp/evalhost-bundle-x").exists());
    }
    let device = p.path("device.tar.gz");
    write_tar(
        &device,
        &[Entry {
            name: b"dev",
            kind: tar::EntryType::Char,
            data: b"",
            link: b"",
        }],
    );
    refused(&p, &device, &["refusing entry `dev`: a character device"]);
}

#[test]
fn a_gzip_bomb_is_refused_while_it_streams() {
    use std::io::Write;
    let p = Project::new();
    // A GNU long-name record claiming 256 MiB: the tar reader would buffer all of it as a
    // file name, so only counting decompressed bytes stops it (~256 KiB compressed).
    let path = p.path("bomb.tar.gz");
    let file = std::fs::File::create(&path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut header = tar::Header::new_gnu();
    header.as_gnu_mut().unwrap().name[..13].copy_from_slice(b"././@LongLink");
    header.set_entry_type(tar::EntryType::GNULongName);
    let size: u64 = 256 << 20;
    header.set_size(size);
    header.set_cksum();
    gz.write_all(header.as_bytes()).unwrap();
    let zeros = vec![b'a'; 1 << 20];
    for _ in 0..256 {
        gz.write_all(&zeros).unwrap();
    }
    gz.finish().unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() < 2 << 20);
    refused(
        &p,
        &path,
        &["decompresses to more than", "decompression bomb"],
    );

    // A plain oversized file is refused from its header, before its data is read.
    let big = p.path("big.tar.gz");
    let data = vec![0u8; 65 << 20];
    write_tar(&big, &[Entry::file("big.bin", &data)]);
    refused(
        &p,
        &big,
        &["entry `big.bin` would take the unpacked size past the"],
    );
}
