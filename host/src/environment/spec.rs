//! What a case's environment is (`environment:` in a case, `--environment` for a suite, a
//! Harbor task's `environment/`): the image its runs start from and how their container is
//! made. Plain data: `image.rs` makes the image, `container.rs` the container.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where a run's commands execute: a container started from `image`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The image the run's container starts from: a reference, or a Dockerfile to build.
    pub image: ImageSource,
    /// The image digest the case was recorded with (`sha256:…`, the image's id): a tag that
    /// now names another image is a warning, or refused under `--locked-images`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Where the workspace is mounted and commands start (default: the image's `WORKDIR`,
    /// else `/workspace`). What the image holds there is copied into each run's workspace
    /// before the case's seed files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// Variables every process of the run gets, over the image's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Shell commands run once (as root, with the default network) on top of the image; the
    /// result is kept as an image of its own, reused by every run and later invocation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    /// CPUs a run's container may use (fractions allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Bytes of memory a run's container may use (its processes are killed past it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Processes a run's container may have at once (default `DEFAULT_PIDS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<u32>,
    /// What the run's container may reach over the network (default: the endpoint only).
    #[serde(default)]
    pub network: Network,
}

/// A check run in the container after the agent (a Harbor task's `tests/`): its files are
/// copied in only then, so the agent never sees them; its reward becomes the run's
/// `verifier.result` evidence, which the built-in `verifier_reward` grader judges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verifier {
    /// A directory of the host copied to `/tests` in the container after the agent.
    pub tests: PathBuf,
    /// The command run there (`bash /tests/test.sh`), from the working directory.
    pub command: String,
    /// Seconds it may take.
    pub timeout_secs: f64,
    /// Variables it gets, over the environment's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// Where the verifier writes its reward (`reward.txt`: one number; `reward.json`: names to
/// numbers), inside the container, as Harbor's verifiers do.
pub const VERIFIER_LOGS: &str = "/logs/verifier";

/// Processes a run's container may have at once unless the environment says otherwise.
pub const DEFAULT_PIDS: u32 = 4096;

/// Where the workspace is mounted when neither the environment nor the image names a
/// working directory.
pub const DEFAULT_WORKDIR: &str = "/workspace";

/// The image a run's container starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageSource {
    /// An image by reference: `NAME[:TAG]` or `NAME@sha256:…`; pulled when not present.
    Image(String),
    /// An image built from a Dockerfile (paths absolute, resolved beside the case). A base
    /// its `FROM` pins by digest must be present locally or pullable.
    Build {
        /// The Dockerfile.
        dockerfile: PathBuf,
        /// The build's context directory.
        context: PathBuf,
    },
}

impl ImageSource {
    /// How people read it: the reference, or `build DOCKERFILE`.
    pub fn describe(&self) -> String {
        match self {
            ImageSource::Image(reference) => reference.clone(),
            ImageSource::Build { dockerfile, .. } => format!("build {}", dockerfile.display()),
        }
    }
}

/// What a run's container may reach over the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// Nothing at all: no interface but its own loopback.
    None,
    /// The run's model endpoint, on `127.0.0.1:PORT` inside the container as outside, and
    /// nothing else (the default; for evalhost's own agent, whose loop runs outside, it is
    /// `none` for the commands).
    #[default]
    Endpoint,
}

impl Network {
    /// `none` or `endpoint`, as a case writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Network::None => "none",
            Network::Endpoint => "endpoint",
        }
    }
}

/// `512m`, `2g`, `1.5G`, `1048576`: a memory size as Docker writes it (`b`, `k`, `m`, `g`,
/// any case, powers of 1024; a bare number is bytes). At least 6 MiB, Docker's floor.
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => text.split_at(at),
        None => (text, ""),
    };
    let scale: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("`{text}`: expected a size such as 512m or 2g")),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}`: expected a size such as 512m or 2g"))?;
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < (6 << 20) as f64 || bytes > u64::MAX as f64 / 2.0 {
        return Err(format!("`{text}`: a memory limit is at least 6m"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_memory;

    #[test]
    fn memory_sizes_read_as_docker_writes_them() {
        assert_eq!(parse_memory("512m"), Ok(512 << 20));
        assert_eq!(parse_memory("2G"), Ok(2 << 30));
        assert_eq!(parse_memory("1.5g"), Ok(3 << 29));
        assert_eq!(parse_memory("10485760"), Ok(10 << 20));
        assert!(parse_memory("1m").unwrap_err().contains("at least 6m"));
        assert!(parse_memory("lots").unwrap_err().contains("512m"));
        assert!(parse_memory("5t").unwrap_err().contains("512m"));
    }
}
