//! `task.toml`, as Harbor 0.26 reads it (`harbor.models.task.config.TaskConfig`,
//! `schema_version` 1.0 to 1.4): what evalhost honours, and every field it cannot honour
//! refused with what it is and why, at its line. Harbor ignores a key it does not know;
//! evalhost refuses it, so a task is never run otherwise than its author meant
//! (docs/harbor.md lists each field).

use std::collections::BTreeMap;
use std::path::Path;

use super::super::environment::reference_problem;
use super::super::{CaseError, check_timeout_secs};
use super::spans::{Entry, TomlDoc};
use crate::environment::parse_memory;

/// The `schema_version`s of `task.toml` this reader knows (Harbor 0.26 writes 1.4).
pub(super) const SCHEMA_VERSIONS: [&str; 5] = ["1.0", "1.1", "1.2", "1.3", "1.4"];

/// Seconds the verifier may take when `[verifier] timeout_sec` is not given (Harbor's
/// default).
pub(super) const DEFAULT_VERIFIER_TIMEOUT_SECS: f64 = 600.0;

/// What evalhost takes from a `task.toml`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct TaskConfig {
    /// `[task] description`.
    pub description: String,
    /// `[metadata] tags`, then `[task] keywords`, each once.
    pub tags: Vec<String>,
    /// `[agent] timeout_sec`.
    pub agent_timeout_secs: Option<f64>,
    /// `[verifier] timeout_sec` (default [`DEFAULT_VERIFIER_TIMEOUT_SECS`]).
    pub verifier_timeout_secs: f64,
    /// `[verifier] env`.
    pub verifier_env: BTreeMap<String, String>,
    /// `[environment] docker_image`: a prebuilt image instead of `environment/Dockerfile`.
    pub docker_image: Option<String>,
    /// `[environment] cpus`.
    pub cpus: Option<f64>,
    /// `[environment] memory_mb` (or the older `memory = "4G"`), in bytes.
    pub memory_bytes: Option<u64>,
    /// `[environment] workdir`.
    pub workdir: Option<String>,
    /// `[environment] env`.
    pub env: BTreeMap<String, String>,
}

/// Read the text of `path` (a `task.toml`); every problem is reported, each at its line.
pub(super) fn read(path: &Path, text: &str) -> Result<TaskConfig, CaseError> {
    let doc = TomlDoc::new(path, text);
    let root = doc.parse()?;
    let mut config = TaskConfig {
        verifier_timeout_secs: DEFAULT_VERIFIER_TIMEOUT_SECS,
        ..TaskConfig::default()
    };
    let mut keywords = Vec::new();
    for entry in doc.entries(root.get_ref(), "") {
        match entry.key {
            "schema_version" | "version" => schema_version(&doc, &entry),
            "task" => {
                if let Some((description, words)) = package(&doc, &entry) {
                    config.description = description;
                    keywords = words;
                }
            }
            "metadata" => {
                if let Some(tags) = metadata_tags(&doc, &entry) {
                    config.tags = tags;
                }
            }
            "verifier" => verifier(&doc, &entry, &mut config),
            "agent" => agent(&doc, &entry, &mut config),
            "environment" => environment(&doc, &entry, &mut config),
            "solution" => solution(&doc, &entry),
            // Where the task came from: nothing to run.
            "source" => drop(doc.string(&entry)),
            "steps" | "multi_step_reward_strategy" => doc.refused(
                &entry,
                "refused: a multi-step task (its steps run one after another in one container, each with its own instruction and verifier); evalhost runs single-step tasks",
            ),
            "artifacts" if doc.is_empty(&entry) => {}
            "artifacts" => doc.refused(
                &entry,
                "refused: evalhost does not collect files from the container; the finished workspace is what graders and --out see",
            ),
            _ => unknown(&doc, &entry, TOP_LEVEL),
        }
    }
    for keyword in keywords {
        if !config.tags.contains(&keyword) {
            config.tags.push(keyword);
        }
    }
    doc.finish(Some(config))
}

const TOP_LEVEL: &[&str] = &[
    "schema_version",
    "task",
    "metadata",
    "verifier",
    "agent",
    "environment",
    "solution",
    "source",
];

/// A key of a table that is not in Harbor's task format as evalhost knows it.
fn unknown(doc: &TomlDoc, entry: &Entry, known: &[&str]) {
    doc.refused(
        entry,
        format!(
            "unknown field (evalhost reads here: {}); evalhost reads Harbor's task format {} to {} and refuses a field it does not know rather than run the task otherwise than its author meant",
            known.join(", "),
            SCHEMA_VERSIONS[0],
            SCHEMA_VERSIONS[SCHEMA_VERSIONS.len() - 1],
        ),
    );
}

fn schema_version(doc: &TomlDoc, entry: &Entry) {
    let Some(version) = doc.string(entry) else {
        return;
    };
    if !SCHEMA_VERSIONS.contains(&version.as_str()) {
        doc.invalid(
            entry,
            format!(
                "{version:?} is not a task format evalhost reads ({})",
                SCHEMA_VERSIONS.join(", ")
            ),
        );
    }
}

/// `[task]`: the package's name (not used: the directory names the case), description and
/// keywords.
fn package(doc: &TomlDoc, entry: &Entry) -> Option<(String, Vec<String>)> {
    let table = doc.table(entry)?;
    let mut description = String::new();
    let mut keywords = Vec::new();
    for inner in doc.entries(table, &entry.field) {
        match inner.key {
            "name" | "version" => drop(doc.string(&inner)),
            "description" => description = doc.string(&inner).unwrap_or_default(),
            "keywords" => keywords = doc.strings(&inner).unwrap_or_default(),
            // People, not something to run.
            "authors" => drop(doc.array(&inner)),
            _ => unknown(
                doc,
                &inner,
                &["name", "version", "description", "authors", "keywords"],
            ),
        }
    }
    Some((description, keywords))
}

/// `[metadata]` is the author's own: any keys; `tags`, when it is a list of strings, are the
/// case's tags.
fn metadata_tags(doc: &TomlDoc, entry: &Entry) -> Option<Vec<String>> {
    let table = doc.table(entry)?;
    let tags = doc
        .entries(table, &entry.field)
        .into_iter()
        .find(|e| e.key == "tags")?;
    let tags = doc.strings(&tags)?;
    Some(tags.into_iter().filter(|tag| !tag.is_empty()).collect())
}

fn verifier(doc: &TomlDoc, entry: &Entry, config: &mut TaskConfig) {
    let Some(table) = doc.table(entry) else {
        return;
    };
    for inner in doc.entries(table, &entry.field) {
        match inner.key {
            "timeout_sec" => {
                if let Some(secs) = timeout(doc, &inner) {
                    config.verifier_timeout_secs = secs;
                }
            }
            "env" => {
                if let Some(env) = variables(doc, &inner) {
                    config.verifier_env = env;
                }
            }
            "environment_mode" => {
                if doc.string(&inner).is_some_and(|mode| mode != "shared") {
                    doc.refused(
                        &inner,
                        "refused: the verifier runs in the agent's container after the agent (`shared`); evalhost has no separate verifier container",
                    );
                }
            }
            "environment" => doc.refused(
                &inner,
                "refused: evalhost has no separate verifier container; the verifier runs in the agent's",
            ),
            "collect" if doc.is_empty(&inner) => {}
            "collect" => doc.refused(
                &inner,
                "refused: collect commands run in Docker Compose services, which evalhost does not start",
            ),
            "user" => user(doc, &inner),
            "network_mode" | "allowed_hosts" => network(doc, &inner),
            _ => unknown(
                doc,
                &inner,
                &["timeout_sec", "env", "environment_mode", "network_mode"],
            ),
        }
    }
}

fn agent(doc: &TomlDoc, entry: &Entry, config: &mut TaskConfig) {
    let Some(table) = doc.table(entry) else {
        return;
    };
    for inner in doc.entries(table, &entry.field) {
        match inner.key {
            "timeout_sec" => config.agent_timeout_secs = timeout(doc, &inner),
            "user" => user(doc, &inner),
            "network_mode" | "allowed_hosts" => network(doc, &inner),
            _ => unknown(doc, &inner, &["timeout_sec", "network_mode"]),
        }
    }
}

fn environment(doc: &TomlDoc, entry: &Entry, config: &mut TaskConfig) {
    let Some(table) = doc.table(entry) else {
        return;
    };
    // `memory = "4G"` (older) and `memory_mb`: both may be given if they agree.
    let mut memory: Option<(u64, &str)> = None;
    let mut set_memory = |inner: &Entry, bytes: u64, written: &'static str| match memory {
        Some((earlier, name)) if earlier != bytes => doc.invalid(
            inner,
            format!("{written} disagrees with {name}: give one of them"),
        ),
        _ => memory = Some((bytes, written)),
    };
    for inner in doc.entries(table, &entry.field) {
        match inner.key {
            // How long building may take: a build runs to its end here.
            "build_timeout_sec" => drop(doc.number(&inner)),
            "docker_image" => {
                config.docker_image = doc.string(&inner).filter(|image| {
                    let problem = reference_problem(image);
                    if let Some(problem) = &problem {
                        doc.invalid(&inner, problem.clone());
                    }
                    problem.is_none()
                });
            }
            "os" => {
                if doc
                    .string(&inner)
                    .is_some_and(|os| !os.eq_ignore_ascii_case("linux"))
                {
                    doc.refused(&inner, "refused: evalhost runs Linux containers only");
                }
            }
            "cpus" => {
                config.cpus = doc.number(&inner).filter(|cpus| {
                    if *cpus <= 0.0 {
                        doc.invalid(&inner, format!("must be more than 0, found {cpus}"));
                    }
                    *cpus > 0.0
                });
            }
            "memory_mb" => {
                if let Some(mb) = doc.integer(&inner) {
                    match parse_memory(&format!("{mb}m")) {
                        Ok(bytes) => set_memory(&inner, bytes, "memory_mb"),
                        Err(_) => doc.invalid(
                            &inner,
                            format!("{mb} is not a memory limit: at least 6 (MB)"),
                        ),
                    }
                }
            }
            "memory" => {
                if let Some(written) = doc.string(&inner) {
                    match parse_memory(&written) {
                        Ok(bytes) => set_memory(&inner, bytes, "memory"),
                        Err(message) => doc.invalid(&inner, message),
                    }
                }
            }
            // Harbor's own Docker environment does not limit a container's disk either.
            "storage_mb" => drop(doc.integer(&inner)),
            "storage" => drop(doc.string(&inner)),
            "gpus" => {
                if doc.integer(&inner).is_some_and(|gpus| gpus != 0) {
                    doc.refused(
                        &inner,
                        "refused: evalhost gives a container no GPU, and the task would run without the ones it asks for",
                    );
                }
            }
            "gpu_types" | "mcp_servers" | "allowed_hosts" if doc.is_empty(&inner) => {}
            "gpu_types" | "tpu" => doc.refused(
                &inner,
                "refused: evalhost gives a container no GPU or TPU",
            ),
            "mcp_servers" => doc.refused(
                &inner,
                "refused: evalhost does not start a task's MCP servers for the agent",
            ),
            "healthcheck" => doc.refused(
                &inner,
                "refused: evalhost does not wait on a health check before the agent starts",
            ),
            "skills_dir" => doc.refused(
                &inner,
                "refused: evalhost does not copy skills out of the image; seed `.agents/skills` into the workspace instead",
            ),
            "env" => {
                if let Some(env) = variables(doc, &inner) {
                    config.env = env;
                }
            }
            "workdir" => {
                config.workdir = doc.string(&inner).filter(|workdir| {
                    let absolute = workdir.starts_with('/');
                    if !absolute {
                        doc.invalid(
                            &inner,
                            format!("`{workdir}` is not an absolute path in the container"),
                        );
                    }
                    absolute
                });
            }
            "allow_internet" => {
                if doc.bool(&inner) == Some(true) {
                    doc.refused(&inner, NO_INTERNET);
                }
            }
            "network_mode" => network(doc, &inner),
            _ => unknown(
                doc,
                &inner,
                &[
                    "build_timeout_sec",
                    "docker_image",
                    "os",
                    "cpus",
                    "memory_mb",
                    "memory",
                    "storage_mb",
                    "gpus",
                    "env",
                    "workdir",
                    "allow_internet",
                    "network_mode",
                ],
            ),
        }
    }
    config.memory_bytes = memory.map(|(bytes, _)| bytes);
}

/// `[solution]`: only an empty `env` (the oracle runs `solve.sh` with the environment's).
fn solution(doc: &TomlDoc, entry: &Entry) {
    let Some(table) = doc.table(entry) else {
        return;
    };
    for inner in doc.entries(table, &entry.field) {
        match inner.key {
            "env" if doc.is_empty(&inner) => {}
            "env" => doc.refused(
                &inner,
                "refused: the oracle runs solution/solve.sh with the environment's variables only; move these to [environment] env",
            ),
            _ => unknown(doc, &inner, &["env"]),
        }
    }
}

/// What a run reaches, and why a task asking for the internet is refused.
const NO_INTERNET: &str = "refused: a run's container reaches its model endpoint and nothing else, never the internet; set allow_internet = false (or leave it out) if the task needs no network";

/// `network_mode`, `allowed_hosts`: only `no-network`, which is what evalhost gives (the
/// model endpoint, which every agent needs, and nothing else).
fn network(doc: &TomlDoc, entry: &Entry) {
    if entry.key == "allowed_hosts" {
        if !doc.is_empty(entry) {
            doc.refused(entry, NO_INTERNET);
        }
        return;
    }
    if doc.string(entry).is_some_and(|mode| mode != "no-network") {
        doc.refused(entry, NO_INTERNET);
    }
}

/// `user`: processes run as the image's user; another is refused.
fn user(doc: &TomlDoc, entry: &Entry) {
    doc.refused(
        entry,
        "refused: the agent and the verifier run as evalhost's own user, who owns the run's directories; evalhost does not switch users",
    );
}

/// A timeout in seconds, as a case's `timeout_secs`.
fn timeout(doc: &TomlDoc, entry: &Entry) -> Option<f64> {
    let secs = doc.number(entry)?;
    check_timeout_secs(secs)
        .map_err(|message| doc.invalid(entry, message))
        .ok()
}

/// `env = { NAME = "value" }`: literal values. Harbor fills `${VAR}` from the host's
/// environment; evalhost refuses, as a run gets nothing of the host's environment.
fn variables(doc: &TomlDoc, entry: &Entry) -> Option<BTreeMap<String, String>> {
    let table = doc.table(entry)?;
    let mut env = BTreeMap::new();
    let mut clean = true;
    for inner in doc.entries(table, &entry.field) {
        let Some(value) = doc.string(&inner) else {
            clean = false;
            continue;
        };
        let name = inner.key;
        let valid_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_name {
            clean = false;
            doc.refused(
                &inner,
                "not a variable name (letters, digits and `_`, not starting with a digit)",
            );
        } else if value.contains("${") {
            clean = false;
            doc.invalid(
                &inner,
                format!(
                    "`{value}` takes a value from the host's environment, which evalhost does not pass into a run; give the value itself"
                ),
            );
        } else {
            env.insert(name.to_owned(), value);
        }
    }
    clean.then_some(env)
}
