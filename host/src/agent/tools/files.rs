//! File tools, confined to the workspace by cap-std: `..` escapes, absolute paths and
//! symlinks leading outside are refused by the directory handle itself, not by string checks.
//! Files are opened without blocking and checked to be regular files after opening
//! ([`crate::workspace_read`]): a FIFO the agent made is reported, never waited on.

use std::io::{self, Write};
use std::path::Path;

use cap_std::fs::{Dir, File, OpenOptions};

use super::ToolOutput;
use super::output::{truncate, with_note};
use crate::session::CallStatus;
use crate::workspace_read::{self, Capped, Kind, ReadError};

/// Largest file `edit_file` loads.
const MAX_EDIT_BYTES: u64 = 8 * 1024 * 1024;

/// Deepest directory nesting `list_files` descends into.
const MAX_LIST_DEPTH: usize = 32;

/// The path a file tool works on.
pub(super) struct Target<'a> {
    pub dir: &'a Dir,
    /// Normalised, workspace-relative (`.` for the root).
    pub relative: &'a Path,
    /// As the model wrote it, for messages.
    pub raw: &'a str,
    /// What `dir` is, for the message when a path leads out of it.
    pub scope: Scope<'a>,
}

/// The directory a file tool is confined to.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scope<'a> {
    /// The workspace (the file tools).
    Workspace,
    /// One skill's folder, `.agents/skills/<name>` (`skill_view`).
    Skill(&'a str),
}

impl Target<'_> {
    /// A result for an I/O error, saying clearly when the path led outside the workspace.
    fn io_failure(&self, action: &str, error: &io::Error) -> ToolOutput {
        let raw = self.raw;
        // cap-std's escape error is PermissionDenied with this text (symlinks out, `..`).
        if error.to_string().contains("a path led outside") {
            return ToolOutput::failed(match self.scope {
                Scope::Workspace => format!(
                    "Path `{raw}` leads outside the workspace (through a symlink or `..`); file tools are confined to the workspace."
                ),
                Scope::Skill(name) => format!(
                    "File `{raw}` leads outside the skill `{name}` (through a symlink or `..`); skill_view reads only files inside `.agents/skills/{name}/`."
                ),
            });
        }
        match error.kind() {
            io::ErrorKind::NotFound => ToolOutput::failed(format!(
                "Cannot {action} `{raw}`: no such file or directory."
            )),
            _ => ToolOutput::failed(format!("Cannot {action} `{raw}`: {error}.")),
        }
    }

    /// A result for a file that could not be opened or read: a directory, a FIFO, socket or
    /// device (never read), or an I/O error.
    fn read_failure(&self, action: &str, error: ReadError) -> ToolOutput {
        let raw = self.raw;
        match error {
            ReadError::NotRegular(Kind::Dir) if action == "read" => ToolOutput::failed(format!(
                "Cannot read `{raw}`: it is a directory; use list_files."
            )),
            ReadError::NotRegular(Kind::Dir) => {
                ToolOutput::failed(format!("Cannot {action} `{raw}`: it is a directory."))
            }
            ReadError::NotRegular(kind) => ToolOutput::failed(format!(
                "Cannot {action} `{raw}`: `{raw}` is {}, not a regular file.",
                kind.describe()
            )),
            ReadError::Symlink => {
                self.io_failure(action, &io::Error::from_raw_os_error(libc::ELOOP))
            }
            ReadError::Io(e) => self.io_failure(action, &e),
        }
    }

    /// Open the file for reading without blocking (a FIFO with no writer), checked to be a
    /// regular file: `(file, size)`.
    fn open_regular(&self) -> Result<(File, u64), ReadError> {
        let mut options = OpenOptions::new();
        options.read(true);
        workspace_read::nonblocking(&mut options);
        let file = self.dir.open_with(self.relative, &options)?;
        let size = workspace_read::check_regular(&file)?;
        Ok((file, size))
    }

    /// At most `cap` bytes of the file (a regular file, opened without blocking).
    fn read_regular(&self, cap: u64) -> Result<Capped, ReadError> {
        let (file, _) = self.open_regular()?;
        Ok(workspace_read::read_capped(file, cap)?)
    }

    /// Write `content` over the file, created if missing: opened without blocking and
    /// checked to be a regular file before it is truncated (a FIFO is refused, not waited on).
    fn write_regular(&self, content: &str) -> Result<(), ReadError> {
        let mut options = OpenOptions::new();
        options.write(true).create(true);
        workspace_read::nonblocking(&mut options);
        let mut file = match self.dir.open_with(self.relative, &options) {
            // O_WRONLY | O_NONBLOCK on a FIFO without a reader.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                return Err(ReadError::NotRegular(Kind::Fifo));
            }
            other => other?,
        };
        workspace_read::check_regular(&file)?;
        file.set_len(0)?;
        file.write_all(content.as_bytes())?;
        Ok(())
    }

    fn is_root(&self) -> bool {
        self.relative == Path::new(".")
    }
}

pub(super) fn read_file(target: &Target<'_>, cap: usize) -> ToolOutput {
    let Capped { bytes, over } = match target.read_regular(cap as u64) {
        Ok(read) => read,
        Err(e) => return target.read_failure("read", e),
    };
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if over {
        truncate(&mut text, cap);
        return ToolOutput::new(
            CallStatus::OutputLimit,
            with_note(
                text,
                &format!("output truncated: the file exceeds the {cap}-byte limit"),
            ),
        );
    }
    ToolOutput::completed(text)
}

pub(super) fn write_file(target: &Target<'_>, content: &str) -> ToolOutput {
    if target.is_root() {
        return ToolOutput::failed(format!(
            "Cannot write `{}`: it is the workspace directory.",
            target.raw
        ));
    }
    if let Some(parent) = target
        .relative
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        // Look before creating: create_dir_all on a symlink leading outside reports only
        // "File exists", while metadata names the escape.
        match target.dir.metadata(parent) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return ToolOutput::failed(format!(
                    "Cannot write `{}`: `{}` is not a directory.",
                    target.raw,
                    display(parent)
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Err(e) = target.dir.create_dir_all(parent) {
                    return target.io_failure("create the parent directories of", &e);
                }
            }
            Err(e) => return target.io_failure("write", &e),
        }
    }
    match target.write_regular(content) {
        Ok(()) => ToolOutput::completed(format!(
            "Wrote {} bytes to `{}`.",
            content.len(),
            target.raw
        )),
        Err(e) => target.read_failure("write", e),
    }
}

pub(super) fn edit_file(target: &Target<'_>, old_text: &str, new_text: &str) -> ToolOutput {
    let raw = target.raw;
    if old_text.is_empty() {
        return ToolOutput::failed(format!(
            "Cannot edit `{raw}`: old_text is empty; give the exact text to replace."
        ));
    }
    let content = match target.read_regular(MAX_EDIT_BYTES) {
        Ok(Capped { over: true, .. }) => {
            return ToolOutput::failed(format!(
                "Cannot edit `{raw}`: the file is larger than {MAX_EDIT_BYTES} bytes."
            ));
        }
        Ok(Capped { bytes, .. }) => match String::from_utf8(bytes) {
            Ok(content) => content,
            Err(_) => {
                return ToolOutput::failed(format!("Cannot edit `{raw}`: it is not UTF-8 text."));
            }
        },
        Err(e) => return target.read_failure("edit", e),
    };
    let Some(at) = content.find(old_text) else {
        return ToolOutput::failed(format!("Cannot edit `{raw}`: old_text was not found."));
    };
    let occurrences = count_occurrences(&content, old_text);
    if occurrences > 1 {
        return ToolOutput::failed(format!(
            "Cannot edit `{raw}`: old_text occurs {occurrences} times; it must occur exactly once. Include more surrounding text."
        ));
    }
    let edited = format!(
        "{}{new_text}{}",
        &content[..at],
        &content[at + old_text.len()..]
    );
    match target.write_regular(&edited) {
        Ok(()) => ToolOutput::completed(format!("Edited `{raw}`: replaced 1 occurrence.")),
        Err(e) => target.read_failure("write", e),
    }
}

/// Occurrences of `needle`, overlapping ones included ("aa" occurs twice in "aaa", and an
/// edit there would be ambiguous).
fn count_occurrences(haystack: &str, needle: &str) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(i) = haystack[from..].find(needle) {
        count += 1;
        let start = from + i;
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    count
}

pub(super) fn list_files(target: &Target<'_>, cap: usize) -> ToolOutput {
    let meta = match target.dir.metadata(target.relative) {
        Ok(meta) => meta,
        Err(e) => return target.io_failure("list", &e),
    };
    if !meta.is_dir() {
        return ToolOutput::completed(display(target.relative));
    }
    let mut listing = Listing {
        dir: target.dir,
        lines: String::new(),
        cap,
        over: false,
    };
    if let Err(e) = listing.walk(target.relative, 0) {
        return target.io_failure("list", &e);
    }
    if listing.over {
        let mut text = listing.lines;
        truncate(&mut text, cap);
        return ToolOutput::new(
            CallStatus::OutputLimit,
            with_note(
                text,
                &format!("output truncated: the listing exceeds the {cap}-byte limit"),
            ),
        );
    }
    if listing.lines.is_empty() {
        return ToolOutput::completed("(empty directory)");
    }
    ToolOutput::completed(listing.lines)
}

struct Listing<'a> {
    dir: &'a Dir,
    lines: String,
    cap: usize,
    over: bool,
}

impl Listing<'_> {
    /// Append the entries under `path`, sorted, depth first; stop once past the cap so a huge
    /// tree costs no more than the cap. Symlinks are listed, never followed. A directory is
    /// read only as far as the cap can show: every line takes at least two bytes, so past
    /// `cap / 2` entries the listing is over the cap whatever their order.
    fn walk(&mut self, path: &Path, depth: usize) -> io::Result<()> {
        let mut entries = Vec::new();
        for entry in self.dir.read_dir(path)? {
            if entries.len() > self.cap / 2 {
                // Printing these already goes over the cap.
                break;
            }
            let entry = entry?;
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            entries.push((entry.file_name(), is_dir));
        }
        entries.sort();
        for (name, is_dir) in entries {
            if self.over {
                return Ok(());
            }
            let child = if path == Path::new(".") {
                Path::new(&name).to_path_buf()
            } else {
                path.join(&name)
            };
            self.lines.push_str(&display(&child));
            if is_dir {
                self.lines.push('/');
            }
            self.lines.push('\n');
            if self.lines.len() > self.cap {
                self.over = true;
                return Ok(());
            }
            // `.git` is protected: its name may show, its contents may not.
            if is_dir && name != ".git" && depth < MAX_LIST_DEPTH {
                self.walk(&child, depth + 1)?;
            }
        }
        Ok(())
    }
}

fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_overlapping_occurrences() {
        assert_eq!(count_occurrences("aaa", "aa"), 2);
        assert_eq!(count_occurrences("abc", "b"), 1);
        assert_eq!(count_occurrences("éaé", "é"), 2);
        assert_eq!(count_occurrences("abc", "x"), 0);
    }
}
