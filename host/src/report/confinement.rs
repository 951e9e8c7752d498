//! The text report's confinement lines: what every run's processes were allowed, what a
//! case's `confine:` added, and which protections the kernel lacked (`crate::confine`).

use crate::confine::Widening;

use super::{CaseReport, SuiteReport};

/// The header lines, in order: the suite's confinement and the protections missing; then
/// comes a line per case that widened it ([`case_line`]).
pub(super) fn lines(report: &SuiteReport) -> Vec<String> {
    let Some(allowed) = &report.confinement else {
        return Vec::new();
    };
    if !allowed.enforced {
        return vec![
            "Confinement: off (--no-confine): the agent's processes ran with your full rights."
                .to_owned(),
        ];
    }
    let mut lines = vec![format!(
        "Confinement: runs write only their workspace, HOME and TMPDIR; read the system but not your home; {}{}.",
        connect_clause(&allowed.widened),
        widening_clauses(&allowed.widened, false),
    )];
    if let Some(bubblewrap) = &allowed.namespaces {
        lines.push(format!(
            "Confinement layer: namespaces of each run's own ({bubblewrap}): no capabilities, only its own processes, a root of read-only system directories, a network with only the forwarded ports."
        ));
    }
    if !allowed.missing.is_empty() {
        let kernel = match allowed.landlock_abi {
            0 => "this kernel has no Landlock".to_owned(),
            abi => format!("this kernel has Landlock ABI {abi}"),
        };
        lines.push(format!(
            "Confinement missing: {} ({kernel}).",
            allowed.missing.join(", ")
        ));
    }
    lines
}

/// The line of a case whose `confine:` widened the suite's confinement.
pub(super) fn case_line(case: &CaseReport) -> Option<String> {
    (!case.confine.is_empty()).then(|| {
        format!(
            "Confinement of {}:{}.",
            case.name,
            widening_clauses(&case.confine, true)
                .strip_prefix(';')
                .unwrap_or_default()
        )
    })
}

/// The line of a case whose runs ran in its environment's container: the image they started
/// from (the id of the first run's; a run of another image is named too).
pub(super) fn environment_line(case: &CaseReport) -> Option<String> {
    let mut images: Vec<&super::RunImage> = Vec::new();
    for image in case.runs.iter().filter_map(|run| run.image.as_ref()) {
        if !images.contains(&image) {
            images.push(image);
        }
    }
    let first = images.first()?;
    let ids: Vec<String> = images.iter().map(|i| short_id(&i.digest)).collect();
    Some(format!(
        "Environment of {}: {} ({}): its runs' processes ran in a container of it, not under the confinement above.",
        case.name,
        first.source,
        ids.join(", ")
    ))
}

/// `sha256:0123456789ab`: an image id as `docker images` shortens it.
fn short_id(digest: &str) -> String {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    format!("sha256:{}", hex.chars().take(12).collect::<String>())
}

fn connect_clause(widen: &Widening) -> &'static str {
    if widen.any_port {
        "connect to any TCP port"
    } else {
        "connect only to the model endpoint"
    }
}

/// `; also write A, B; also read C; also connect to port N` (and `; connect to any TCP
/// port` when `with_any`: a case's line, whose connect clause is not said before).
fn widening_clauses(widen: &Widening, with_any: bool) -> String {
    let mut out = String::new();
    let list = |paths: &[std::path::PathBuf]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !widen.write.is_empty() {
        out.push_str(&format!("; also write {}", list(&widen.write)));
    }
    if !widen.read.is_empty() {
        out.push_str(&format!("; also read {}", list(&widen.read)));
    }
    if widen.any_port {
        if with_any {
            out.push_str("; connect to any TCP port");
        }
    } else if !widen.connect.is_empty() {
        let ports: Vec<String> = widen.connect.iter().map(u16::to_string).collect();
        let noun = if ports.len() == 1 { "port" } else { "ports" };
        out.push_str(&format!("; also connect to {noun} {}", ports.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn widenings_read_as_clauses() {
        let widen = Widening {
            read: vec![PathBuf::from("/opt/data")],
            write: vec![PathBuf::from("/var/a"), PathBuf::from("/var/b")],
            connect: vec![5432],
            any_port: false,
        };
        assert_eq!(
            widening_clauses(&widen, true),
            "; also write /var/a, /var/b; also read /opt/data; also connect to port 5432"
        );
        let any = Widening {
            any_port: true,
            ..Widening::default()
        };
        assert_eq!(widening_clauses(&any, true), "; connect to any TCP port");
        assert_eq!(widening_clauses(&any, false), "");
        assert_eq!(connect_clause(&any), "connect to any TCP port");
    }
}
