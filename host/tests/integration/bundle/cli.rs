//! Grader bundles end to end: pack the example bundle (component built from source), sign
//! it, cross-check both ways with the real `ssh-keygen`, install it, and run a case graded
//! by it; the JSON report names the bundle and the component digest.

use crate::support::bundle;
use crate::support::guests;

use crate::support::bundle::{IDENTITY, Project, ssh_keygen};
use sha2::{Digest, Sha256};

#[test]
fn our_signature_verifies_with_ssh_keygen_and_its_signature_with_us() {
    let p = Project::new();
    let bundle = p.pack("1.0.0");
    let key = p.keygen("team_key");
    let signers = p.allowed_signers(&key);
    let b = bundle.to_str().unwrap();

    let out = p.ok(&[
        "bundle",
        "sign",
        b,
        "--key",
        key.to_str().unwrap(),
        "--identity",
        IDENTITY,
    ]);
    assert!(
        out.contains(&format!(
            "{IDENTITY} namespaces=\"evalhost-bundle\" ssh-ed25519 "
        )),
        "{out}"
    );
    let sig = p.path("acme-checks-1.0.0.tar.gz.sig");
    let armored = std::fs::read_to_string(&sig).unwrap();
    assert!(
        armored.starts_with("-----BEGIN SSH SIGNATURE-----\n"),
        "{armored}"
    );

    // `evalhost bundle manifest B | ssh-keygen -Y verify ...` succeeds.
    let manifest = p.ok(&["bundle", "manifest", b]);
    assert!(
        manifest.contains("final_text_is.wasm") && manifest.contains("sha256"),
        "{manifest}"
    );
    let openssh_verify = |bytes: &[u8]| {
        let (signers, sig) = (signers.to_str().unwrap(), sig.to_str().unwrap());
        ssh_keygen(
            &[
                "-Y",
                "verify",
                "-f",
                signers,
                "-I",
                IDENTITY,
                "-n",
                "evalhost-bundle",
                "-s",
                sig,
            ],
            bytes,
        )
    };
    let (ok, out, err) = openssh_verify(manifest.as_bytes());
    assert!(ok, "ssh-keygen refused our signature: {out}{err}");
    assert!(
        out.contains(&format!(
            "Good \"evalhost-bundle\" signature for {IDENTITY}"
        )),
        "{out}"
    );
    // ... and fails for other bytes, so the check above means something.
    let (ok, _, _) = openssh_verify(format!("{manifest} ").as_bytes());
    assert!(!ok);

    // A signature made by ssh-keygen over the printed manifest is accepted by us.
    let (ok, armored, err) = ssh_keygen(
        &[
            "-Y",
            "sign",
            "-n",
            "evalhost-bundle",
            "-f",
            key.to_str().unwrap(),
        ],
        manifest.as_bytes(),
    );
    assert!(ok, "{err}");
    let theirs = p.path("openssh.sig");
    std::fs::write(&theirs, armored).unwrap();
    let out = p.ok(&[
        "bundle",
        "verify",
        b,
        "--allowed-signers",
        signers.to_str().unwrap(),
        "--signature",
        theirs.to_str().unwrap(),
        "--identity",
        IDENTITY,
    ]);
    assert!(
        out.contains(&format!("verified acme-checks 1.0.0: signed by {IDENTITY}")),
        "{out}"
    );
}

#[test]
fn an_installed_bundle_grades_a_case_and_the_report_names_it() {
    let p = Project::new();
    let bundle = p.pack("1.0.0");
    let key = p.keygen("team_key");
    p.allowed_signers(&key);
    p.trust(
        "allowed_signers = \"allowed_signers\"\nallow_unsigned = false\nallow_wasm_paths = false",
    );
    let b = bundle.to_str().unwrap();
    p.ok(&["bundle", "sign", b, "--key", key.to_str().unwrap()]);

    let out = p.ok(&["bundle", "install", b]);
    assert!(
        out.contains(&format!("signed by {IDENTITY}")) && out.contains("pinned in evalhost.lock"),
        "{out}"
    );
    let lock = std::fs::read_to_string(p.project().join("evalhost.lock")).unwrap();
    assert!(
        lock.contains("[bundles.acme-checks]") && lock.contains("version = \"1.0.0\""),
        "{lock}"
    );
    // Installing the same bundle again is fine (content-addressed, same digest).
    p.ok(&["bundle", "install", b]);

    // The shipped example case, graded by the installed bundle.
    let example = bundle::repo().join("graders/bundles/cases/acme-final-text.yaml");
    std::fs::copy(&example, p.project().join("acme-final-text.yaml")).unwrap();
    p.ok(&["check", "acme-final-text.yaml"]);
    let output = p.evalhost(&["run", "--out", "out", "acme-final-text.yaml"]);
    output.assert_code(0);
    let _out = output.stdout();
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.project().join("out/report.json")).unwrap(),
    )
    .unwrap();
    let verdict = &report["cases"][0]["runs"][0]["verdicts"][0];
    assert_eq!(verdict["grader"], "acme-checks/final_text_is", "{verdict}");
    assert_eq!(verdict["outcome"], "pass", "{verdict}");
    assert_eq!(
        verdict["bundle"],
        serde_json::json!({"name": "acme-checks", "version": "1.0.0"})
    );
    let component = std::fs::read(guests::v0_2_0()).unwrap();
    assert_eq!(
        verdict["component_digest"],
        hex::encode(Sha256::digest(&component))
    );

    // The grader fails on other text: the bundle's component really grades.
    std::fs::write(
        p.project().join("fails.yaml"),
        "name: fails\nprompt: Say done.\nmodel:\n  - text: not done\ngraders:\n  - acme-checks/final_text_is: done\n",
    )
    .unwrap();
    let output = p.evalhost(&["run", "fails.yaml"]);
    output.assert_code(1);

    // A built-in grader's verdict has `bundle: null`.
    let case = p.case("builtin", "final_text_contains");
    p.ok(&["run", "--out", "out2", &case]);
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.project().join("out2/report.json")).unwrap(),
    )
    .unwrap();
    let verdict = &report["cases"][0]["runs"][0]["verdicts"][0];
    assert!(
        verdict.get("bundle").is_some_and(|b| b.is_null()),
        "{verdict}"
    );
}

#[test]
fn unknown_graders_missing_bundles_and_refused_paths_are_load_time_errors() {
    let p = Project::new();
    let bundle = p.pack("1.0.0");
    p.ok(&["bundle", "install", bundle.to_str().unwrap()]);

    let case = p.case("unknown-grader", "acme-checks/no_such_grader");
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("unknown-grader.yaml")
            && err.contains("graders[0].\"acme-checks/no_such_grader\""),
        "{err}"
    );
    assert!(
        err.contains("provides no grader `no_such_grader` (it provides: final_text_is)"),
        "{err}"
    );
    // `evalhost check` binds bundle graders the same way.
    let err = p.refused(&["check", &case]);
    assert!(err.contains("provides no grader `no_such_grader`"), "{err}");

    let case = p.case("missing-bundle", "other-team/final_text_is");
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("missing-bundle.yaml") && err.contains("bundle `other-team` is not installed"),
        "{err}"
    );

    // Loose .wasm components: allowed by default, refused by the policy.
    std::fs::copy(guests::v0_2_0(), p.project().join("loose.wasm")).unwrap();
    let case = p.case("loose", "loose.wasm#final_text_is");
    p.ok(&["run", &case]);
    p.trust("allow_wasm_paths = false");
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("loose.yaml") && err.contains("allow_wasm_paths = false"),
        "{err}"
    );
}

/// "Not installed" says how to install the bundle the way the project got it: the registry
/// reference `evalhost.lock` pins it from (never a `.tar.gz` for a registry's bundle), the
/// archive of the pinned version, or, unpinned, either form.
#[test]
fn a_missing_bundle_names_the_command_that_installs_it() {
    let p = Project::new();
    let case = p.case("missing", "acme-checks/final_text_is");
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("bundle `acme-checks` is not installed in `")
            && err.contains("(install it with `evalhost bundle install acme-checks-VERSION.tar.gz`, or `evalhost bundle install oci://HOST/REPO:TAG` from a registry)"),
        "{err}"
    );
    let lock = |from: &str| {
        let text = format!(
            "lock_format = 1\n\n[bundles.acme-checks]\nversion = \"1.0.0\"\nmanifest_sha256 = \"{}\"\n{from}",
            "a".repeat(64)
        );
        std::fs::write(p.project().join("evalhost.lock"), text).unwrap();
    };
    lock(&format!(
        "oci_reference = \"oci://ghcr.io/acme/checks:1.0.0\"\noci_digest = \"sha256:{}\"\n",
        "b".repeat(64)
    ));
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("(install it with `evalhost bundle install oci://ghcr.io/acme/checks:1.0.0`)")
            && !err.contains(".tar.gz"),
        "{err}"
    );
    lock("");
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("(install it with `evalhost bundle install acme-checks-1.0.0.tar.gz`)"),
        "{err}"
    );
}

#[test]
fn unsigned_bundles_are_accepted_by_default_and_refused_by_policy() {
    let p = Project::new();
    let bundle = p.pack("1.0.0");
    let b = bundle.to_str().unwrap();
    let output = p.evalhost(&["bundle", "verify", b]);
    output.assert_code(0);
    let (out, err) = (output.stdout(), output.stderr());
    assert!(
        out.contains("UNSIGNED") && err.contains("warning"),
        "{out}{err}"
    );

    p.trust("allow_unsigned = false");
    let err = p.refused(&["bundle", "install", b]);
    assert!(
        err.contains("is unsigned") && err.contains("allow_unsigned = false"),
        "{err}"
    );
    assert!(p.store_files().is_empty());
    assert!(!p.project().join("evalhost.lock").exists());
}

#[test]
fn pack_refuses_components_that_do_not_provide_their_graders() {
    let p = Project::new();
    let src = p.bundle_source("1.0.0");
    let toml = std::fs::read_to_string(src.join("bundle.toml")).unwrap();
    std::fs::write(
        src.join("bundle.toml"),
        toml.replace("[graders.final_text_is]", "[graders.no_todo]"),
    )
    .unwrap();
    let err = p.refused(&["bundle", "pack", src.to_str().unwrap(), "-o", "x.tar.gz"]);
    assert!(
        err.contains("bundle grader `no_todo` (component `final_text_is.wasm`)")
            && err.contains("provides no grader `no_todo` (it provides: final_text_is)"),
        "{err}"
    );
    std::fs::write(src.join("final_text_is.wasm"), b"not wasm").unwrap();
    std::fs::write(
        src.join("bundle.toml"),
        toml.replace("capabilities = []", "capabilities = [\"network\"]"),
    )
    .unwrap();
    let err = p.refused(&["bundle", "pack", src.to_str().unwrap(), "-o", "x.tar.gz"]);
    assert!(err.contains("unknown capability `network`"), "{err}");
    std::fs::write(src.join("bundle.toml"), &toml).unwrap();
    let err = p.refused(&["bundle", "pack", src.to_str().unwrap(), "-o", "x.tar.gz"]);
    assert!(err.contains("is not a WebAssembly file"), "{err}");
    assert!(!p.project().join("x.tar.gz").exists());
}

#[test]
fn run_rechecks_the_installed_signature_against_todays_allowed_signers() {
    let p = Project::new();
    let bundle = p.pack("1.0.0");
    let key = p.keygen("team_key");
    p.allowed_signers(&key);
    p.trust("allowed_signers = \"allowed_signers\"");
    p.sign(&bundle, &key);
    p.ok(&["bundle", "install", bundle.to_str().unwrap()]);
    let case = p.case("revoked", "acme-checks/final_text_is");
    p.ok(&["run", &case]);
    // The team's key is revoked: another key replaces it in allowed_signers.
    let other = p.keygen("new_key");
    p.allowed_signers(&other);
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("revoked.yaml") && err.contains("does not allow"),
        "{err}"
    );
}

/// `run` and `check` take no `--allowed-signers` (the signers are the project's policy, one
/// place for every run), so their error points at `[trust]`, and names the commands that do
/// take the flag.
#[test]
fn a_signature_nobody_can_check_points_at_the_trust_policy() {
    let p = Project::new();
    let bundle = p.pack("1.0.0");
    let key = p.keygen("team_key");
    p.allowed_signers(&key);
    p.trust("allowed_signers = \"allowed_signers\"");
    p.sign(&bundle, &key);
    p.ok(&["bundle", "install", bundle.to_str().unwrap()]);
    let case = p.case("unchecked", "acme-checks/final_text_is");
    // The policy loses its signers and refuses what it cannot check.
    p.trust("allow_unsigned = false");
    let signature = format!("{}/objects/", p.store().display());
    for command in ["run", "check"] {
        let err = p.refused(&[command, &case]);
        // `run` stops with it (`Error: ...`); `check` lists it among the problems.
        let line = err
            .lines()
            .find(|l| l.contains("cannot check the signature"))
            .unwrap_or_else(|| panic!("{command}: {err}"));
        let line = line.strip_prefix("Error: ").unwrap_or(line);
        let line = line
            .strip_prefix(&format!(
                "unchecked.yaml:6:5: graders[0].\"acme-checks/final_text_is\": cannot check the signature `{signature}"
            ))
            .unwrap_or_else(|| panic!("{command}: {err}"));
        assert!(
            line.ends_with(
                ".sig`: no allowed_signers file (set [trust] allowed_signers in evalhost.toml; \
                 `evalhost bundle verify` and `bundle install` also take --allowed-signers FILE)"
            ),
            "{command}: {err}"
        );
        assert!(!line.contains("pass --allowed-signers"), "{command}: {err}");
    }
}
