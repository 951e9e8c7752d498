//! Containers an evalhost that died left behind (killed with SIGKILL, its engine client with
//! it): every container labelled with this boot of this machine, evalhost's PID namespace and
//! a pid no process has any more is removed when the next evalhost prepares an image. (A
//! daemon shared by several machines or containers keeps the others' containers: their boot
//! or namespace differs.)

use super::EnvironmentError;
use super::engine::Engine;
use super::image::LABEL;

/// Remove the containers of evalhost processes that are gone; the names removed.
pub async fn reap(engine: &Engine) -> Result<Vec<String>, EnvironmentError> {
    let listed = engine
        .output(
            "listing evalhost's containers",
            [
                "ps",
                "-a",
                "--filter",
                &format!("label={LABEL}.pid"),
                "--format",
                &format!(
                    "{{{{.Names}}}} {{{{.Label \"{LABEL}.pid\"}}}} {{{{.Label \"{LABEL}.boot\"}}}} {{{{.Label \"{LABEL}.pidns\"}}}}"
                ),
            ],
        )
        .await?;
    let mut removed = Vec::new();
    for line in listed.lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(pid), Some(boot), Some(pidns)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        // Only a container of an evalhost of this PID namespace, whose pid means the same.
        if boot != boot_id() || pidns != pid_namespace() || is_alive(pid) {
            continue;
        }
        if engine
            .output("removing a stale container", ["rm", "-f", name])
            .await
            .is_ok()
        {
            removed.push(name.to_owned());
        }
    }
    Ok(removed)
}

/// Whether a process `pid` exists.
fn is_alive(pid: u32) -> bool {
    pid == std::process::id() || std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// evalhost's PID namespace (its inode): containers carry it, so that evalhosts of other
/// containers sharing one engine never reap each other's.
pub(crate) fn pid_namespace() -> &'static str {
    static NAMESPACE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAMESPACE.get_or_init(|| {
        std::fs::read_link("/proc/self/ns/pid")
            .map(|link| link.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

/// This boot of this machine (`/proc/sys/kernel/random/boot_id`): containers carry it, so
/// that a pid is only compared with the processes of the boot that made them.
pub(crate) fn boot_id() -> &'static str {
    static BOOT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|id| id.trim().to_owned())
            .unwrap_or_default()
    })
}
