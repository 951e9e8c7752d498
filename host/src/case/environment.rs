//! The `environment:` field of a case, and `--environment` for a suite: the container image a
//! case's runs execute in and how their container is made, read into
//! [`crate::environment::Environment`] (declared in `format.rs`; docs/case-format.md).
//!
//! ```yaml
//! environment:
//!   build: env/Dockerfile          # or image: debian:bookworm
//!   workdir: /app
//!   setup: ["apt-get install -y jq"]
//!   memory: 2g
//!   network: endpoint
//! ```
//!
//! Paths (a Dockerfile, its context, a Harbor task's `tests/` and `solution/`) are kept as
//! written, relative to the case file, until loading has taken the case's digest; then
//! [`Case::resolve_environment_files`] makes them absolute, so the digest does not depend on
//! where the case is.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use super::format::{Build, ENV_NAME, Environment as EnvironmentMap, IMAGE_REFERENCE, IMAGES};
use super::located::{Doc, child};
use super::yaml::{Node, Value};
use super::{Case, CaseError};
use crate::environment::{Environment, ImageSource, Network, parse_memory};

/// Read the `environment:` map `node` (field path `field`); every problem is noted, located
/// at the value it is about.
pub(super) fn environment(doc: &Doc, node: &Node, field: &str) -> Option<Environment> {
    let fields = doc.fields(node, field, EnvironmentMap::FIELDS)?;
    let base = case_dir(doc.path());
    let image = match (fields.get("image"), fields.get("build")) {
        (Some(image), None) => image_reference(doc, image, &child(field, "image")),
        (None, Some(build)) => self::build(doc, build, &child(field, "build"), &base),
        (Some(_), Some(_)) => {
            doc.note(doc.invalid(
                node,
                field,
                format!("give `{}` or `{}`, not both", IMAGES[0], IMAGES[1]),
            ));
            None
        }
        (None, None) => {
            doc.note(doc.invalid(
                node,
                field,
                "missing `image` (NAME[:TAG] or NAME@sha256:DIGEST) or `build` (a Dockerfile)",
            ));
            None
        }
    };
    let text = |name: &str| -> Option<(String, &Node)> {
        let node = fields.get(name)?;
        Some((doc.keep(doc.string(node, &child(field, name)))?, node))
    };
    let digest = text("digest").and_then(|(digest, node)| match digest_problem(&digest) {
        Some(problem) => {
            doc.note(doc.invalid(node, &child(field, "digest"), problem));
            None
        }
        None => Some(digest),
    });
    let workdir = text("workdir").and_then(|(workdir, node)| {
        if workdir.starts_with('/') && !workdir.contains('\0') {
            Some(workdir)
        } else {
            doc.note(doc.invalid(
                node,
                &child(field, "workdir"),
                format!("`{workdir}` is not an absolute path in the container (e.g. /app)"),
            ));
            None
        }
    });
    let env = fields
        .get("env")
        .map(|node| variables(doc, node, &child(field, "env")))
        .unwrap_or_default();
    let setup = fields
        .get("setup")
        .map(|node| setup(doc, node, &child(field, "setup")))
        .unwrap_or_default();
    let cpus = fields.get("cpus").and_then(|node| {
        let cpus_field = child(field, "cpus");
        let cpus = match node.value {
            Value::UInt(n) => n as f64,
            Value::Int(n) => n as f64,
            Value::Float(n) => n,
            ref other => {
                doc.note(doc.invalid(
                    node,
                    &cpus_field,
                    format!("expected a number of CPUs, found {}", other.kind()),
                ));
                return None;
            }
        };
        if cpus.is_finite() && cpus > 0.0 {
            Some(cpus)
        } else {
            doc.note(doc.invalid(
                node,
                &cpus_field,
                format!("must be more than 0, found {cpus}"),
            ));
            None
        }
    });
    let memory_bytes = fields.get("memory").and_then(|node| {
        let memory_field = child(field, "memory");
        let written = doc.keep(doc.text(node, &memory_field, "a size such as 512m or 2g"))?;
        doc.keep(parse_memory(&written).map_err(|m| doc.invalid(node, &memory_field, m)))
    });
    let pids = fields.get("pids").and_then(|node| {
        let pids = match node.value {
            Value::UInt(n) => u32::try_from(n).ok().filter(|n| *n > 0),
            _ => None,
        };
        if pids.is_none() {
            let written = doc
                .scalar(node)
                .unwrap_or_else(|| node.value.kind().to_owned());
            doc.note(doc.invalid(
                node,
                &child(field, "pids"),
                format!(
                    "expected a whole number of processes from 1 to {}, found {written}",
                    u32::MAX
                ),
            ));
        }
        pids
    });
    let network = fields
        .get("network")
        .and_then(|node| {
            let written = doc.scalar(node);
            match written.as_deref() {
                Some("endpoint") => Some(Network::Endpoint),
                Some("none") => Some(Network::None),
                _ => {
                    let found = written
                        .map(|w| format!("{w:?}"))
                        .unwrap_or_else(|| node.value.kind().to_owned());
                    doc.note(doc.invalid(
                        node,
                        &child(field, "network"),
                        format!("expected endpoint or none, found {found}"),
                    ));
                    None
                }
            }
        })
        .unwrap_or_default();
    Some(Environment {
        image: image?,
        digest,
        workdir,
        env,
        setup,
        cpus,
        memory_bytes,
        pids,
        network,
    })
}

/// The directory a case file's relative paths start from.
/// Bytes of a case's environment files [`Case::with_files_digest`] reads at most.
pub(crate) const FILES_DIGEST_BYTES: u64 = 16 << 20;

pub(super) fn case_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn image_reference(doc: &Doc, node: &Node, field: &str) -> Option<ImageSource> {
    let reference = doc.keep(doc.string(node, field))?;
    match reference_problem(&reference) {
        Some(problem) => {
            doc.note(doc.invalid(node, field, problem));
            None
        }
        None => Some(ImageSource::Image(reference)),
    }
}

/// `build: DOCKERFILE` or `build: {dockerfile, context}`; the Dockerfile must exist beside the
/// case (`base`), the context must be a directory there.
fn build(doc: &Doc, node: &Node, field: &str, base: &Path) -> Option<ImageSource> {
    let (dockerfile, context) = if matches!(node.value, Value::Map(_)) {
        let fields = doc.fields(node, field, Build::FIELDS)?;
        let path = |name: &str| -> Option<(String, &Node)> {
            let node = fields.get(name)?;
            Some((doc.keep(doc.string(node, &child(field, name)))?, node))
        };
        let dockerfile = path("dockerfile");
        if dockerfile.is_none() && fields.get("dockerfile").is_none() {
            doc.note(doc.invalid(node, &child(field, "dockerfile"), "missing required field"));
        }
        (dockerfile?, path("context"))
    } else {
        let written = doc.keep(doc.text(
            node,
            field,
            "a Dockerfile's path or a map {dockerfile, context}",
        ))?;
        ((written, node), None)
    };
    let dockerfile_field = if context.is_some() || matches!(node.value, Value::Map(_)) {
        child(field, "dockerfile")
    } else {
        field.to_owned()
    };
    let (dockerfile_text, dockerfile_node) = dockerfile;
    let dockerfile = normalise(Path::new(&dockerfile_text));
    let found = base.join(&dockerfile);
    if dockerfile_text.is_empty() || !found.is_file() {
        doc.note(doc.invalid(
            dockerfile_node,
            &dockerfile_field,
            format!(
                "no Dockerfile `{dockerfile_text}` (looked for {}); the path is relative to the case file",
                found.display()
            ),
        ));
        return None;
    }
    let context = match context {
        Some((context_text, context_node)) => {
            let context = normalise(Path::new(&context_text));
            if context_text.is_empty() || !base.join(&context).is_dir() {
                doc.note(doc.invalid(
                    context_node,
                    &child(field, "context"),
                    format!(
                        "no directory `{context_text}` (looked for {}); the path is relative to the case file",
                        base.join(&context).display()
                    ),
                ));
                return None;
            }
            context
        }
        None => dockerfile
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    Some(ImageSource::Build {
        dockerfile,
        context,
    })
}

/// `env: {NAME: value}`.
fn variables(doc: &Doc, node: &Node, field: &str) -> BTreeMap<String, String> {
    let Some(entries) = doc.map(node, field, "a map from variable name to value") else {
        return BTreeMap::new();
    };
    let mut env = BTreeMap::new();
    for (name, key, value) in entries {
        let entry_field = child(field, &name);
        if !ENV_NAME_RE.is_match(&name) {
            doc.note(doc.invalid(
                key,
                &entry_field,
                "not a variable name (letters, digits and `_`, not starting with a digit)",
            ));
            continue;
        }
        if let Some(value) =
            doc.keep(doc.text(value, &entry_field, "the variable's value as a string"))
        {
            if value.contains('\0') {
                doc.note(doc.invalid(key, &entry_field, "a value must not contain NUL"));
                continue;
            }
            env.insert(name, value);
        }
    }
    env
}

/// `setup:` a list of shell commands, or one.
fn setup(doc: &Doc, node: &Node, field: &str) -> Vec<String> {
    let one = |item: &Node, field: &str| -> Option<String> {
        let command = doc.keep(doc.text(item, field, "a shell command"))?;
        if command.trim().is_empty() {
            doc.note(doc.invalid(item, field, "a set-up command must not be empty"));
            return None;
        }
        Some(command)
    };
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| one(item, &format!("{field}[{index}]")))
            .collect(),
        _ => one(node, field).into_iter().collect(),
    }
}

static IMAGE_REFERENCE_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(IMAGE_REFERENCE).expect("the reference pattern compiles"));
static ENV_NAME_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(ENV_NAME).expect("the variable name pattern compiles"));

/// Why `reference` is not an image reference (`NAME[:TAG]`, `NAME@sha256:DIGEST`), if it is
/// not. The message is for the field.
pub(crate) fn reference_problem(reference: &str) -> Option<String> {
    // Docker's limit on a name (the part before a tag or digest).
    const MAX_NAME: usize = 255;
    let name_len = reference
        .split('@')
        .next()
        .map(|name| match name.rsplit_once(':') {
            Some((name, tag)) if !tag.contains('/') => name.len(),
            _ => name.len(),
        })
        .unwrap_or_default();
    if IMAGE_REFERENCE_RE.is_match(reference) && name_len <= MAX_NAME {
        return None;
    }
    Some(format!(
        "`{reference}` is not an image reference: expected NAME[:TAG] or NAME@sha256:DIGEST (the name lowercase, e.g. debian:bookworm)"
    ))
}

/// Why `digest` is not an image id (`sha256:` and 64 lowercase hex digits), if it is not.
fn digest_problem(digest: &str) -> Option<String> {
    let hex = digest.strip_prefix("sha256:").unwrap_or_default();
    let is_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if hex.len() == 64 && hex.bytes().all(is_hex) {
        None
    } else {
        Some(format!(
            "`{digest}` is not an image id: expected sha256: and 64 lowercase hex digits"
        ))
    }
}

/// `path` with `.` components and repeated separators dropped (`./env//Dockerfile` is
/// `env/Dockerfile`); `..` is kept, as the file system resolves it.
pub(super) fn normalise(path: &Path) -> PathBuf {
    let normal: PathBuf = path
        .components()
        .filter(|component| !matches!(component, Component::CurDir))
        .collect();
    if normal.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        normal
    }
}

/// Why `--environment VALUE` names no environment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvironmentArgError {
    /// Neither a file nor an image reference.
    #[error("--environment {value}: {problem}, nor a YAML file holding an environment map")]
    NotAnImage {
        /// The `--environment` value.
        value: String,
        /// Why it is no image reference.
        problem: String,
    },
    /// The file's problems, each at its line and field.
    #[error(transparent)]
    File(CaseError),
}

/// The environment `--environment VALUE` names for a whole suite: a YAML file holding one
/// environment map (read as a case's `environment:`, its paths relative to the file), or an
/// image reference.
pub fn environment_arg(value: &str) -> Result<Environment, EnvironmentArgError> {
    let path = Path::new(value);
    let looks_like_file = value.ends_with(".yaml") || value.ends_with(".yml");
    if !path.is_file() && !looks_like_file {
        return match reference_problem(value) {
            None => Ok(image_environment(value)),
            Some(problem) => Err(EnvironmentArgError::NotAnImage {
                value: value.to_owned(),
                problem,
            }),
        };
    }
    environment_file(path).map_err(EnvironmentArgError::File)
}

/// An environment file: one environment map.
fn environment_file(path: &Path) -> Result<Environment, CaseError> {
    let text = super::read::read_text(path, "environment file")?;
    let doc = Doc::new(path, &text);
    let root = doc.root()?;
    let read = if matches!(root.value, Value::Null) {
        doc.note(CaseError::Malformed {
            location: doc.at(1, 1),
            message: "the environment file is empty; it holds one environment map (image or build, workdir, ...)".into(),
        });
        None
    } else {
        environment(&doc, &root, "")
    };
    let mut environment = doc.finish(read)?;
    let base = std::path::absolute(case_dir(path)).map_err(|error| CaseError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    resolve(&mut environment, &base);
    Ok(environment)
}

/// An environment of the image `reference` and nothing else set.
fn image_environment(reference: &str) -> Environment {
    Environment {
        image: ImageSource::Image(reference.to_owned()),
        digest: None,
        workdir: None,
        env: BTreeMap::new(),
        setup: Vec::new(),
        cpus: None,
        memory_bytes: None,
        pids: None,
        network: Network::default(),
    }
}

/// The environment's paths made absolute, from `base`.
fn resolve(environment: &mut Environment, base: &Path) {
    if let ImageSource::Build {
        dockerfile,
        context,
        ..
    } = &mut environment.image
    {
        *dockerfile = normalise(&base.join(&*dockerfile));
        *context = normalise(&base.join(&*context));
    }
}

impl Case {
    /// The case's digest with the files its environment, verifier and solution name folded
    /// in (a Dockerfile, a task's `tests/` and `solution/`, up to [`FILES_DIGEST_BYTES`]):
    /// a changed verifier is a changed case to `--resume` and the history. Call it before
    /// [`Case::resolve_environment_files`], with `digest` the content's.
    pub(crate) fn with_files_digest(&self, digest: String) -> String {
        use sha2::{Digest, Sha256};
        let base = if self.path.is_dir() {
            self.path.clone()
        } else {
            case_dir(&self.path)
        };
        let mut named: Vec<PathBuf> = Vec::new();
        if let Some(Environment {
            image: ImageSource::Build { dockerfile, .. },
            ..
        }) = &self.environment
        {
            named.push(base.join(dockerfile));
        }
        if let Some(verifier) = &self.verifier {
            named.push(base.join(&verifier.tests));
        }
        if let Some(solution) = &self.solution {
            named.push(base.join(solution));
        }
        if named.is_empty() {
            return digest;
        }
        let mut hasher = Sha256::new();
        hasher.update(digest.as_bytes());
        let mut budget = FILES_DIGEST_BYTES;
        for root in named {
            for file in crate::environment::regular_files(&root, usize::MAX) {
                let Ok((sha256, size)) = crate::environment::sha256_of(&file) else {
                    continue;
                };
                budget = budget.saturating_sub(size);
                if budget == 0 {
                    break;
                }
                hasher.update(
                    file.strip_prefix(&base)
                        .unwrap_or(&file)
                        .as_os_str()
                        .as_encoded_bytes(),
                );
                hasher.update([0]);
                hasher.update(sha256.as_bytes());
            }
        }
        hex::encode(hasher.finalize())
    }

    /// The paths of the case's environment, verifier and solution made absolute: they are
    /// written relative to the case file (a Harbor task's, to its directory). Loading calls
    /// it after the case's digest is taken, so the digest does not depend on where the case
    /// is.
    pub(crate) fn resolve_environment_files(&mut self) {
        if self.environment.is_none() && self.verifier.is_none() && self.solution.is_none() {
            return;
        }
        let base = if self.path.is_dir() {
            self.path.clone()
        } else {
            case_dir(&self.path)
        };
        let Ok(base) = std::path::absolute(base) else {
            return;
        };
        if let Some(environment) = &mut self.environment {
            resolve(environment, &base);
        }
        if let Some(verifier) = &mut self.verifier {
            verifier.tests = normalise(&base.join(&verifier.tests));
        }
        if let Some(solution) = &mut self.solution {
            *solution = normalise(&base.join(&*solution));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::case::{load_case, parse_case};

    const CASE: &str =
        "name: c\nprompt: Go.\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n";

    /// A case file `c.yaml` in a fresh directory, with `env/Dockerfile` beside it.
    fn case_dir_with_dockerfile() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("env")).unwrap();
        std::fs::write(dir.path().join("env/Dockerfile"), "FROM x\n").unwrap();
        let file = dir.path().join("c.yaml");
        (dir, file)
    }

    #[test]
    fn every_field_is_read_into_the_environment() {
        let yaml = format!(
            "{CASE}environment:\n  image: registry.local:5000/team/tools@sha256:{}\n  digest: sha256:{}\n  workdir: /app\n  env: {{LANG: C.UTF-8, DEBUG: 1}}\n  setup: [\"apt-get install -y jq\", \"jq --version\"]\n  cpus: 1.5\n  memory: 2g\n  pids: 512\n  network: none\n",
            "a".repeat(64),
            "b".repeat(64)
        );
        let case = parse_case(Path::new("c.yaml"), &yaml).unwrap();
        let environment = case.environment.unwrap();
        assert_eq!(
            environment.image,
            ImageSource::Image(format!(
                "registry.local:5000/team/tools@sha256:{}",
                "a".repeat(64)
            ))
        );
        assert_eq!(
            environment.digest,
            Some(format!("sha256:{}", "b".repeat(64)))
        );
        assert_eq!(environment.workdir.as_deref(), Some("/app"));
        assert_eq!(environment.env["LANG"], "C.UTF-8");
        assert_eq!(environment.env["DEBUG"], "1");
        assert_eq!(environment.setup, ["apt-get install -y jq", "jq --version"]);
        assert_eq!(environment.cpus, Some(1.5));
        assert_eq!(environment.memory_bytes, Some(2 << 30));
        assert_eq!(environment.pids, Some(512));
        assert_eq!(environment.network, Network::None);
        // Nothing else: the defaults.
        let plain = parse_case(
            Path::new("c.yaml"),
            &format!("{CASE}environment: {{image: debian, setup: apt-get update}}\n"),
        )
        .unwrap();
        let plain = plain.environment.unwrap();
        assert_eq!(plain.network, Network::Endpoint);
        assert_eq!(plain.setup, ["apt-get update"]);
        assert_eq!(
            (plain.cpus, plain.memory_bytes, plain.pids),
            (None, None, None)
        );
        assert!(
            parse_case(Path::new("c.yaml"), CASE)
                .unwrap()
                .environment
                .is_none()
        );
    }

    #[test]
    fn a_dockerfile_is_found_beside_the_case_and_made_absolute_after_the_digest() {
        let (dir, file) = case_dir_with_dockerfile();
        std::fs::write(
            &file,
            format!("{CASE}environment:\n  build: ./env//Dockerfile\n"),
        )
        .unwrap();
        let case = load_case(&file).unwrap();
        let ImageSource::Build {
            dockerfile,
            context,
            ..
        } = &case.environment.as_ref().unwrap().image
        else {
            panic!("{:?}", case.environment);
        };
        let dir = std::path::absolute(dir.path()).unwrap();
        assert_eq!(dockerfile, &dir.join("env/Dockerfile"));
        assert_eq!(context, &dir.join("env"));
        // The same case elsewhere has the same digest.
        let (other, other_file) = case_dir_with_dockerfile();
        std::fs::write(
            &other_file,
            format!("{CASE}environment:\n  build: {{dockerfile: env/Dockerfile, context: env}}\n"),
        )
        .unwrap();
        assert_eq!(load_case(&other_file).unwrap().digest, case.digest);
        drop(other);
        // A context of its own.
        std::fs::write(
            &file,
            format!("{CASE}environment:\n  build: {{dockerfile: env/Dockerfile, context: .}}\n"),
        )
        .unwrap();
        let case = load_case(&file).unwrap();
        let Some(ImageSource::Build { context, .. }) = case.environment.map(|e| e.image) else {
            panic!();
        };
        assert_eq!(context, dir);
    }

    #[test]
    fn bad_values_are_located_at_their_field() {
        let (dir, file) = case_dir_with_dockerfile();
        let error = |environment: &str| {
            parse_case(&file, &format!("{CASE}environment: {environment}\n"))
                .unwrap_err()
                .to_string()
                .replace(&format!("{}", file.display()), "c.yaml")
                .replace(&format!("{}", dir.path().display()), "DIR")
        };
        for (environment, expected) in [
            (
                "{image: Debian}",
                "c.yaml:7:22: environment.image: `Debian` is not an image reference: expected NAME[:TAG] or NAME@sha256:DIGEST (the name lowercase, e.g. debian:bookworm)",
            ),
            (
                "{image: debian, build: env/Dockerfile}",
                "c.yaml:7:14: environment: give `image` or `build`, not both",
            ),
            (
                "{workdir: /app}",
                "c.yaml:7:14: environment: missing `image` (NAME[:TAG] or NAME@sha256:DIGEST) or `build` (a Dockerfile)",
            ),
            (
                "{build: env/Containerfile}",
                "c.yaml:7:22: environment.build: no Dockerfile `env/Containerfile` (looked for DIR/env/Containerfile); the path is relative to the case file",
            ),
            (
                "{build: {dockerfile: env/Dockerfile, context: ctx}}",
                "c.yaml:7:60: environment.build.context: no directory `ctx` (looked for DIR/ctx); the path is relative to the case file",
            ),
            (
                "{image: debian, digest: sha256:abc}",
                "c.yaml:7:38: environment.digest: `sha256:abc` is not an image id: expected sha256: and 64 lowercase hex digits",
            ),
            (
                "{image: debian, workdir: app}",
                "c.yaml:7:39: environment.workdir: `app` is not an absolute path in the container (e.g. /app)",
            ),
            (
                "{image: debian, env: {1X: a}}",
                "c.yaml:7:36: environment.env.\"1X\": not a variable name (letters, digits and `_`, not starting with a digit)",
            ),
            (
                "{image: debian, memory: lots}",
                "c.yaml:7:38: environment.memory: `lots`: expected a size such as 512m or 2g",
            ),
            (
                "{image: debian, cpus: 0}",
                "c.yaml:7:36: environment.cpus: must be more than 0, found 0",
            ),
            (
                "{image: debian, pids: 0}",
                "c.yaml:7:36: environment.pids: expected a whole number of processes from 1 to 4294967295, found 0",
            ),
            (
                "{image: debian, network: host}",
                "c.yaml:7:39: environment.network: expected endpoint or none, found \"host\"",
            ),
            (
                "{image: debian, setup: [\"\"]}",
                "c.yaml:7:38: environment.setup[0]: a set-up command must not be empty",
            ),
            (
                "{image: debian, ports: [80]}",
                "c.yaml:7:30: environment.ports: unknown field, expected one of: image, build, digest, workdir, env, setup, cpus, memory, pids, network",
            ),
        ] {
            assert_eq!(error(environment), expected, "{environment}");
        }
    }

    #[test]
    fn image_references_are_docker_s() {
        for good in [
            "debian",
            "debian:bookworm",
            "evalhost-test/debian:bookworm",
            "localhost:5000/a/b_c.d__e-f:v1.2-rc_3",
            &format!("ghcr.io/org/img@sha256:{}", "0".repeat(64)),
            &format!("img:tag@sha256:{}", "f".repeat(64)),
        ] {
            assert_eq!(reference_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "Debian",
            "debian:",
            "debian:-x",
            "a//b",
            "-a",
            "debian@sha256:abc",
            "debian bookworm",
            &"a".repeat(256),
        ] {
            assert!(reference_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn the_command_line_names_an_image_or_an_environment_file() {
        let image = environment_arg("evalhost-test/debian:bookworm").unwrap();
        assert_eq!(
            image.image,
            ImageSource::Image("evalhost-test/debian:bookworm".into())
        );
        assert_eq!(image.network, Network::Endpoint);
        assert_eq!(
            environment_arg("Not An Image").unwrap_err().to_string(),
            "--environment Not An Image: `Not An Image` is not an image reference: expected NAME[:TAG] or NAME@sha256:DIGEST (the name lowercase, e.g. debian:bookworm), nor a YAML file holding an environment map"
        );
        let (dir, _) = case_dir_with_dockerfile();
        let file = dir.path().join("environment.yaml");
        std::fs::write(&file, "build: env/Dockerfile\nmemory: 512m\n").unwrap();
        let from_file = environment_arg(file.to_str().unwrap()).unwrap();
        let dir = std::path::absolute(dir.path()).unwrap();
        assert_eq!(
            from_file.image,
            ImageSource::Build {
                dockerfile: dir.join("env/Dockerfile"),
                context: dir.join("env"),
            }
        );
        assert_eq!(from_file.memory_bytes, Some(512 << 20));
        std::fs::write(&file, "image: debian\ncpu: 2\n").unwrap();
        let error = environment_arg(file.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "{}:2:1: cpu: unknown field, expected one of: image, build, digest, workdir, env, setup, cpus, memory, pids, network; did you mean `cpus`?",
                file.display()
            )
        );
        let missing = dir.join("nowhere.yaml");
        assert!(
            environment_arg(missing.to_str().unwrap())
                .unwrap_err()
                .to_string()
                .starts_with(&format!("{}: failed to read", missing.display()))
        );
    }

    /// The schema describes exactly the fields the parser accepts: both come from
    /// `format.rs`.
    #[test]
    fn the_schema_has_the_environment_fields() {
        let schema = crate::case::case_schema([]);
        let keys = |pointer: &str| {
            let mut keys: Vec<String> = schema
                .pointer(pointer)
                .and_then(serde_json::Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            keys.sort();
            keys
        };
        let sorted = |fields: &[&str]| {
            let mut fields: Vec<String> = fields.iter().map(|f| (*f).to_owned()).collect();
            fields.sort();
            fields
        };
        assert_eq!(
            keys("/$defs/Environment/properties"),
            sorted(EnvironmentMap::FIELDS)
        );
        assert_eq!(keys("/$defs/Build/properties"), sorted(Build::FIELDS));
        assert_eq!(schema["required"], serde_json::json!(["name"]));
    }

    #[test]
    fn confine_is_refused_beside_an_environment() {
        let yaml =
            format!("{CASE}environment:\n  image: debian:bookworm\nconfine: {{connect: [5432]}}\n");
        let error = crate::case::parse_case(Path::new("c.yaml"), &yaml)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("confine: does not apply to a case with an environment"),
            "{error}"
        );
    }

    #[test]
    fn a_changed_dockerfile_changes_the_cases_digest() {
        let (dir, file) = case_dir_with_dockerfile();
        std::fs::write(
            &file,
            format!("{CASE}environment:\n  build: env/Dockerfile\n"),
        )
        .unwrap();
        let before = load_case(&file).unwrap().digest;
        assert_eq!(load_case(&file).unwrap().digest, before, "a load is stable");
        std::fs::write(dir.path().join("env/Dockerfile"), "FROM y\n").unwrap();
        assert_ne!(load_case(&file).unwrap().digest, before);
    }
}
