//! The `confine:` field: what a case adds to the default confinement of its runs
//! (`crate::confine`, `docs/case-format.md`).
//!
//! ```yaml
//! confine:
//!   read: [/opt/datasets, ~/.rustup]   # readable beyond the system
//!   write: [/var/cache/build]          # writable beyond workspace, HOME and TMPDIR
//!   connect: [5432]                    # TCP ports beyond the endpoint's
//!   network: any                       # every TCP port (default: endpoint)
//! ```

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::confine::Widening;

// The field as written, and its part of the case format (`format.rs`).
/// Widening of a run's confinement.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Confine")]
pub(super) struct ConfineField {
    /// Paths the run's processes may also read and execute: absolute, or starting with `~/`.
    #[serde(default)]
    #[schemars(inner(regex(pattern = r"^(/|~/)")))]
    read: Vec<String>,
    /// Paths the run's processes may also write: absolute, or starting with `~/`.
    #[serde(default)]
    #[schemars(inner(regex(pattern = r"^(/|~/)")))]
    write: Vec<String>,
    /// TCP ports the run's processes may also connect to.
    #[serde(default)]
    #[schemars(inner(range(min = 1)))]
    connect: Vec<u16>,
    /// `any`: connect to every TCP port (default `endpoint`: the model endpoint's only).
    network: Option<Network>,
}

/// `network:`: which TCP ports a run may connect to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Network {
    /// The model endpoint's port, and `connect:`'s (the default).
    Endpoint,
    /// Every port.
    Any,
}

const SHAPE: &str =
    "{read: [PATH...], write: [PATH...], connect: [PORT...], network: endpoint|any}";

/// Validate the `confine:` value (as JSON); `~/` is the invoking user's `home`. The error is
/// the message for the field.
pub(super) fn widening(value: serde_json::Value, home: Option<&Path>) -> Result<Widening, String> {
    let field: ConfineField =
        serde_json::from_value(value).map_err(|e| format!("{e} (expected {SHAPE})"))?;
    let paths = |list: Vec<String>, name: &str| -> Result<Vec<PathBuf>, String> {
        list.into_iter()
            .map(|p| path(&p, home).map_err(|m| format!("{name}: {m}")))
            .collect()
    };
    if let Some(port) = field.connect.iter().find(|p| **p == 0) {
        return Err(format!("connect: {port} is not a port (1 to 65535)"));
    }
    Ok(Widening {
        read: paths(field.read, "read")?,
        write: paths(field.write, "write")?,
        connect: field.connect,
        any_port: field.network == Some(Network::Any),
    })
}

/// An absolute path, or one under `~/`.
pub(crate) fn path(text: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(rest) = text.strip_prefix("~/") {
        return match home {
            Some(home) => Ok(home.join(rest)),
            None => Err(format!("`{text}`: there is no HOME to expand `~` with")),
        };
    }
    let path = PathBuf::from(text);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(format!(
            "`{text}` is relative; give an absolute path or one starting with ~/"
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::case::parse_case;
    use crate::confine::Widening;

    const CASE: &str =
        "name: c\nprompt: Go.\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n";

    #[test]
    fn the_field_widens_paths_and_ports() {
        let yaml = format!(
            "{CASE}confine: {{read: [/opt/data], write: [/var/cache/x], connect: [5432], network: any}}\n"
        );
        let case = parse_case(Path::new("c.yaml"), &yaml).unwrap();
        assert_eq!(
            case.confine,
            Widening {
                read: vec![PathBuf::from("/opt/data")],
                write: vec![PathBuf::from("/var/cache/x")],
                connect: vec![5432],
                any_port: true,
            }
        );
        let plain = parse_case(Path::new("c.yaml"), CASE).unwrap();
        assert!(plain.confine.is_empty());
    }

    #[test]
    fn tilde_is_the_home_and_relative_paths_are_refused() {
        let home = Path::new("/home/ada");
        assert_eq!(
            super::path("~/.rustup", Some(home)).unwrap(),
            PathBuf::from("/home/ada/.rustup")
        );
        for (value, message) in [
            (
                "{read: [data]}",
                "c.yaml:7:10: confine: read: `data` is relative; give an absolute path or one starting with ~/",
            ),
            (
                "{network: all}",
                "c.yaml:7:10: confine: unknown variant `all`, expected `endpoint` or `any`",
            ),
            (
                "{connect: [0]}",
                "c.yaml:7:10: confine: connect: 0 is not a port (1 to 65535)",
            ),
        ] {
            let yaml = format!("{CASE}confine: {value}\n");
            let error = parse_case(Path::new("c.yaml"), &yaml)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(message), "{error}");
        }
    }
}
