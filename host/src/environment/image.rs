//! The image a case's runs start from: the one named (pulled when missing), or built from its
//! Dockerfile; the environment's `setup:` committed on top once, as an image of its own that
//! later runs and invocations reuse; its id (what the report calls its digest) checked
//! against the one the case was recorded with; and the files it holds in its working
//! directory, exported once for every run's workspace.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::engine::Engine;
use super::{DEFAULT_WORKDIR, Environment, EnvironmentError, ImageSource};

/// The label every image and container evalhost makes carries.
pub const LABEL: &str = "evalhost";

/// An image ready for a case's runs.
#[derive(Debug)]
pub struct PreparedImage {
    /// What containers start from: the image's id (`sha256:…`); with a set-up, the id of the
    /// image it committed.
    pub id: String,
    /// The id of the image the case names (pulled or built), before any set-up: what a case's
    /// `digest:` pins and what reports call the run's digest.
    pub named_id: String,
    /// The image as the case named it (`debian:bookworm`, `build env/Dockerfile`).
    pub source: String,
    /// The registry digest of the named image (`NAME@sha256:…`), when it has one.
    pub repo_digest: Option<String>,
    /// Where the workspace is mounted and commands start.
    pub workdir: String,
    /// What the image holds in `workdir`, copied into every run's workspace.
    pub workdir_files: tempfile::TempDir,
    /// Those files' paths (relative, `/`-separated), SHA-256 and sizes: to graders they are
    /// seeded, not made by the agent. Hashed once, up to [`MAX_LISTED_FILES`].
    pub workdir_listing: Vec<ImageFile>,
    /// Said under every run of the case: a moved tag.
    pub warnings: Vec<String>,
}

/// A regular file the image holds in its working directory.
#[derive(Debug, Clone)]
pub struct ImageFile {
    pub path: String,
    pub sha256: String,
    pub size: u64,
}

/// Files of an image's working directory listed for graders; past it the rest are not.
pub const MAX_LISTED_FILES: usize = 20_000;

/// The images of one suite's environments, each prepared once (by the first run that needs
/// it; the others wait for it).
#[derive(Debug, Default)]
pub struct Images {
    engine: std::sync::OnceLock<Option<Engine>>,
    /// Containers of evalhost processes that died, removed before the first image is
    /// prepared (`reap.rs`).
    reaped: tokio::sync::OnceCell<Vec<String>>,
    prepared: Mutex<HashMap<String, Arc<tokio::sync::OnceCell<Prepared>>>>,
    /// `--locked-images`: a tag that moved since the case was recorded is an error.
    pub locked: bool,
}

type Prepared = Result<Arc<PreparedImage>, Arc<EnvironmentError>>;

impl Images {
    /// No image prepared yet; `locked`: `--locked-images`.
    pub fn new(locked: bool) -> Self {
        Self {
            engine: std::sync::OnceLock::new(),
            reaped: tokio::sync::OnceCell::new(),
            prepared: Mutex::default(),
            locked,
        }
    }

    /// The container engine, located once.
    pub fn engine(&self) -> Result<&Engine, EnvironmentError> {
        self.engine
            .get_or_init(|| Engine::locate().ok())
            .as_ref()
            .ok_or(EnvironmentError::NoEngine)
    }

    /// The image of `environment`, prepared on the first call.
    pub async fn prepare(
        &self,
        environment: &Environment,
    ) -> Result<Arc<PreparedImage>, Arc<EnvironmentError>> {
        let engine = self.engine().map_err(Arc::new)?;
        self.reaped
            .get_or_init(|| async { super::reap(engine).await.unwrap_or_default() })
            .await;
        // What the image is made of (not the run's limits or network).
        let key = serde_json::to_string(&(
            &environment.image,
            &environment.digest,
            &environment.workdir,
            &environment.env,
            &environment.setup,
        ))
        .unwrap_or_default();
        let cell = {
            let mut prepared = self
                .prepared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            prepared.entry(key).or_default().clone()
        };
        cell.get_or_init(|| async {
            prepare(engine, environment, self.locked)
                .await
                .map(Arc::new)
                .map_err(Arc::new)
        })
        .await
        .clone()
    }
}

/// What `docker image inspect` says of an image.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Inspected {
    id: String,
    #[serde(default)]
    repo_digests: Option<Vec<String>>,
    config: Option<InspectedConfig>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct InspectedConfig {
    #[serde(default)]
    working_dir: Option<String>,
}

async fn inspect(engine: &Engine, reference: &str) -> Result<Option<Inspected>, EnvironmentError> {
    let mut command = engine.command();
    command
        .args(["image", "inspect", "--", reference])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let output = command
        .output()
        .await
        .map_err(|error| engine.spawn_error(error))?;
    if !output.status.success() {
        return Ok(None);
    }
    let mut images: Vec<Inspected> =
        serde_json::from_slice(&output.stdout).map_err(|error| EnvironmentError::Failed {
            what: format!("reading what `image inspect {reference}` said"),
            status: "bad JSON".into(),
            said: error.to_string(),
        })?;
    Ok(images.pop())
}

async fn prepare(
    engine: &Engine,
    environment: &Environment,
    locked: bool,
) -> Result<PreparedImage, EnvironmentError> {
    let mut warnings = Vec::new();
    let source = environment.image.describe();
    let (base, repo_digest) = match &environment.image {
        ImageSource::Image(reference) => {
            let found = match inspect(engine, reference).await? {
                Some(found) => found,
                None => {
                    engine
                        .output(
                            &format!("pulling image {reference}"),
                            ["pull", "-q", reference],
                        )
                        .await?;
                    inspect(engine, reference)
                        .await?
                        .ok_or_else(|| EnvironmentError::Failed {
                            what: format!("pulling image {reference}"),
                            status: "no image after the pull".into(),
                            said: String::new(),
                        })?
                }
            };
            let repo_digest = match reference.split_once('@') {
                Some(_) => Some(reference.clone()),
                None => found
                    .repo_digests
                    .as_ref()
                    .and_then(|digests| digests.first().cloned()),
            };
            (found, repo_digest)
        }
        ImageSource::Build {
            dockerfile,
            context,
        } => (build(engine, dockerfile, context).await?, None),
    };
    if let Some(recorded) = &environment.digest
        && *recorded != base.id
    {
        let moved = EnvironmentError::Moved {
            image: source.clone(),
            recorded: recorded.clone(),
            now: base.id.clone(),
        };
        if locked {
            return Err(moved);
        }
        warnings.push(moved.to_string());
    }
    let workdir = environment
        .workdir
        .clone()
        .or_else(|| {
            base.config
                .as_ref()
                .and_then(|c| c.working_dir.clone())
                .filter(|w| w.starts_with('/') && w != "/")
        })
        .unwrap_or_else(|| DEFAULT_WORKDIR.to_owned());
    let id = match environment.setup.is_empty() {
        true => base.id.clone(),
        false => set_up(engine, &base.id, environment, &workdir).await?,
    };
    let workdir_files = export_workdir(engine, &id, &workdir).await?;
    let root = workdir_files.path().to_owned();
    let workdir_listing = tokio::task::spawn_blocking(move || list_files(&root))
        .await
        .unwrap_or_default();
    Ok(PreparedImage {
        id,
        named_id: base.id,
        source,
        repo_digest,
        workdir,
        workdir_files,
        workdir_listing,
        warnings,
    })
}

/// The regular files under `root` (symbolic links not followed), hashed; at most
/// [`MAX_LISTED_FILES`].
fn list_files(root: &Path) -> Vec<ImageFile> {
    super::files::regular_files(root, MAX_LISTED_FILES)
        .into_iter()
        .filter_map(|path| {
            let (sha256, size) = super::files::sha256_of(&path).ok()?;
            let relative = path.strip_prefix(root).ok()?;
            Some(ImageFile {
                path: relative.to_string_lossy().into_owned(),
                sha256,
                size,
            })
        })
        .collect()
}

/// Build `dockerfile` with its context.
async fn build(
    engine: &Engine,
    dockerfile: &Path,
    context: &Path,
) -> Result<Inspected, EnvironmentError> {
    let what = format!("building {}", dockerfile.display());
    let tag = format!(
        "evalhost-build/{}",
        &hex::encode(Sha256::digest(dockerfile.as_os_str().as_encoded_bytes()))[..16]
    );
    let mut args: Vec<std::ffi::OsString> = vec!["build".into(), "-q".into(), "-f".into()];
    args.push(dockerfile.as_os_str().to_owned());
    for arg in ["--label", &format!("{LABEL}=build"), "-t", &tag] {
        args.push(arg.into());
    }
    args.push(context.as_os_str().to_owned());
    let out = engine.output(&what, &args).await?;
    let id = out.lines().last().unwrap_or_default().trim().to_owned();
    inspect(engine, &id)
        .await?
        .ok_or_else(|| EnvironmentError::Failed {
            what,
            status: "no image after the build".into(),
            said: out,
        })
}

/// The image of `base` with `environment.setup` run on it (as root, with the engine's
/// default network), made once: it is tagged by what it is made of, and reused.
async fn set_up(
    engine: &Engine,
    base: &str,
    environment: &Environment,
    workdir: &str,
) -> Result<String, EnvironmentError> {
    let mut key = Sha256::new();
    key.update(base.as_bytes());
    key.update(
        serde_json::to_vec(&(&environment.setup, &environment.env, workdir)).unwrap_or_default(),
    );
    let tag = format!("evalhost-setup:{}", &hex::encode(key.finalize())[..16]);
    if let Some(found) = inspect(engine, &tag).await? {
        return Ok(found.id);
    }
    let name = format!("evalhost-setup-{}", crate::process_group::new_marker());
    let scratch = Scratch::new(engine, &name);
    let mut script = String::from("set -e\n");
    for command in &environment.setup {
        script.push_str(command);
        script.push('\n');
    }
    let mut args: Vec<String> = vec![
        "run".into(),
        "--name".into(),
        name.clone(),
        "--label".into(),
        format!("{LABEL}=setup"),
        "--label".into(),
        format!("{LABEL}.pid={}", std::process::id()),
        "--label".into(),
        format!("{LABEL}.boot={}", super::reap::boot_id()),
        "--label".into(),
        format!("{LABEL}.pidns={}", super::reap::pid_namespace()),
        "-w".into(),
        workdir.into(),
        "--user".into(),
        "0:0".into(),
    ];
    // By name: the values are in the client's environment, not on its command line.
    for name in environment.env.keys() {
        args.extend(["-e".into(), name.clone()]);
    }
    args.extend(["--entrypoint".into(), "sh".into(), base.into(), "-c".into()]);
    args.push(script);
    let ran = engine
        .output_with(
            &format!(
                "the environment's set-up ({})",
                environment.setup.join("; ")
            ),
            &args,
            &environment.env,
        )
        .await;
    let committed = match ran {
        Ok(_) => {
            engine
                .output(
                    "keeping the set-up's result",
                    ["commit", name.as_str(), tag.as_str()],
                )
                .await
        }
        Err(error) => Err(error),
    };
    scratch.remove().await;
    committed?;
    inspect(engine, &tag)
        .await?
        .map(|found| found.id)
        .ok_or_else(|| EnvironmentError::Failed {
            what: "keeping the set-up's result".into(),
            status: "no image after the commit".into(),
            said: String::new(),
        })
}

/// What `image` holds in `workdir`, copied out once through a container that never starts.
async fn export_workdir(
    engine: &Engine,
    image: &str,
    workdir: &str,
) -> Result<tempfile::TempDir, EnvironmentError> {
    let dir = tempfile::Builder::new()
        .prefix("evalhost-image-workdir-")
        .tempdir_in(crate::config::temp_parent())
        .map_err(|error| EnvironmentError::TempDir {
            path: crate::config::temp_parent().to_owned(),
            error,
        })?;
    let name = format!("evalhost-export-{}", crate::process_group::new_marker());
    let scratch = Scratch::new(engine, &name);
    engine
        .output(
            "reading the image's working directory",
            [
                "create",
                "--name",
                &name,
                "--label",
                &format!("{LABEL}=export"),
                "--label",
                &format!("{LABEL}.pid={}", std::process::id()),
                "--label",
                &format!("{LABEL}.boot={}", super::reap::boot_id()),
                "--label",
                &format!("{LABEL}.pidns={}", super::reap::pid_namespace()),
                // It never starts: any command will do (an image may have none).
                "--entrypoint",
                "/never-started",
                image,
            ],
        )
        .await?;
    let source = format!("{name}:{workdir}/.");
    let copied = engine
        .output(
            "reading the image's working directory",
            ["cp".as_ref(), source.as_ref(), dir.path().as_os_str()] as [&std::ffi::OsStr; 3],
        )
        .await;
    scratch.remove().await;
    match copied {
        Ok(_) => Ok(dir),
        // An image without its working directory: the workspace starts empty.
        Err(EnvironmentError::Failed { said, .. })
            if said.contains("No such container:path")
                || said.contains("Could not find the file") =>
        {
            Ok(dir)
        }
        Err(error) => Err(error),
    }
}

/// A container of the image's preparation (the set-up's, the export's): removed by
/// [`Scratch::remove`] when the preparation is done with it, else (the run preparing it was
/// cancelled mid-way) when dropped.
struct Scratch<'a> {
    engine: &'a Engine,
    name: String,
    removed: bool,
}

impl<'a> Scratch<'a> {
    fn new(engine: &'a Engine, name: &str) -> Self {
        Self {
            engine,
            name: name.to_owned(),
            removed: false,
        }
    }

    async fn remove(mut self) {
        self.removed = true;
        let _ = self
            .engine
            .output("removing a container", ["rm", "-f", &self.name])
            .await;
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        if !self.removed {
            let _ =
                self.engine
                    .output_blocking(&["rm".into(), "-f".into(), self.name.clone().into()]);
        }
    }
}
