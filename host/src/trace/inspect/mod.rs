//! Inspect AI logs (docs/traces.md): one run per sample and epoch.
//!
//! Two containers hold the same samples. A `.eval` log is a zip archive (`archive.rs`):
//! `header.json` (the eval: `eval.model`, `eval.dataset.sample_ids`, `status`, results), one
//! `samples/<id>_epoch_<n>.json` per sample and epoch, `summaries.json`, `reductions.json` and
//! `_journal/` (what the writer had while it ran; an unfinished log has only
//! `_journal/start.json` for its header). A `.json` log is one document with `eval`, `status`
//! and `samples`. Each sample (`EvalSample`) maps as `sample.rs` says, its messages read by `message.rs`
//! and its events by `events.rs`; what the records cannot
//! carry (scores, targets, system messages, other events, ...) is counted in the notes.

mod archive;
mod events;
mod message;
mod sample;

use std::path::Path;

use archive::Archive;
use sample::{LogFacts, Mapped};

use super::json::{Doc, Object};
use super::{ImportedRun, Runs, TraceError};

pub(super) fn runs(path: &Path, bytes: &[u8]) -> Result<Runs, TraceError> {
    let mut log = Log::default();
    if bytes.starts_with(b"PK\x03\x04") {
        log.read_archive(path, bytes)?;
    } else {
        log.read_document(path, bytes)?;
    }
    Ok(log.into_runs())
}

/// A log being read: its samples' runs, the dataset's order of sample ids, what is noted.
#[derive(Default)]
struct Log {
    mapped: Vec<Mapped>,
    order: Vec<String>,
    notes: Notes,
}

impl Log {
    /// The samples of a `.eval` archive.
    fn read_archive(&mut self, path: &Path, bytes: &[u8]) -> Result<(), TraceError> {
        let mut archive = Archive::open(path, bytes)?;
        let (member, header) = match archive.text("header.json")? {
            Some(text) => ("header.json", text),
            None => match archive.text("_journal/start.json")? {
                Some(text) => ("_journal/start.json", text),
                None => {
                    return Err(TraceError::Archive {
                        path: path.to_owned(),
                        member: "header.json".to_owned(),
                        message: "missing (and so is `_journal/start.json`): not an Inspect log"
                            .to_owned(),
                    });
                }
            },
        };
        let doc = Doc::member(path, member, &header);
        let facts = self.header(&doc.root()?.object()?)?;
        for name in archive.names() {
            if !(name.starts_with("samples/") && name.ends_with(".json")) {
                continue;
            }
            let Some(text) = archive.text(&name)? else {
                continue;
            };
            let doc = Doc::member(path, &name, &text);
            let sample = doc.root()?.object()?;
            self.mapped
                .push(sample::map(&sample, &facts, &mut self.notes)?);
        }
        Ok(())
    }

    /// The samples of a `.json` log.
    fn read_document(&mut self, path: &Path, bytes: &[u8]) -> Result<(), TraceError> {
        let doc = Doc::file(path, bytes)?;
        let log = doc.root()?.object()?;
        let facts = self.header(&log)?;
        for node in log.list("samples")?.unwrap_or_default() {
            self.mapped
                .push(sample::map(&node.object()?, &facts, &mut self.notes)?);
        }
        Ok(())
    }

    /// The eval's model, from a header (or a whole `.json` log), and the dataset's sample
    /// order; notes a log that did not finish.
    fn header(&mut self, header: &Object<'_>) -> Result<LogFacts, TraceError> {
        let eval = header.require("eval")?.object()?;
        let model = eval.string("model")?.unwrap_or_default();
        if let Some(dataset) = eval.object("dataset")? {
            for id in dataset.list("sample_ids")?.unwrap_or_default() {
                self.order.push(id.id()?);
            }
        }
        // `_journal/start.json` has no status: the eval was still running.
        let status = header
            .string("status")?
            .unwrap_or_else(|| "started".to_owned());
        if status != "success" {
            self.notes.count(
                format!("log status `{status}` (the eval did not finish: samples it did not write are not here)"),
                1,
            );
        }
        Ok(LogFacts { model })
    }

    /// The runs as the dataset orders its samples, epoch by epoch (an archive holds them in
    /// the order they finished), and the notes.
    fn into_runs(mut self) -> (Vec<ImportedRun>, Vec<String>) {
        let position: std::collections::HashMap<&str, usize> = self
            .order
            .iter()
            .enumerate()
            .rev()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        self.mapped.sort_by_key(|m| {
            let at = position.get(m.id.as_str()).copied();
            (m.epoch, at.unwrap_or(usize::MAX))
        });
        (
            self.mapped.into_iter().map(|m| m.run).collect(),
            self.notes.into_lines(),
        )
    }
}

/// What the log holds that the runs do not carry, each named once with how often it occurred.
#[derive(Debug, Default)]
pub(super) struct Notes {
    lines: Vec<(String, u64, bool)>,
}

impl Notes {
    /// `n` more occurrences of `what`.
    pub fn count(&mut self, what: impl Into<String>, n: u64) {
        self.add(what.into(), n, false);
    }

    /// One more sample that has `what`.
    pub fn sample(&mut self, what: &str) {
        self.add(what.to_owned(), 1, true);
    }

    fn add(&mut self, what: String, n: u64, samples: bool) {
        match self.lines.iter_mut().find(|(w, _, _)| *w == what) {
            Some((_, count, _)) => *count += n,
            None => self.lines.push((what, n, samples)),
        }
    }

    fn into_lines(self) -> Vec<String> {
        self.lines
            .into_iter()
            .map(|(what, n, samples)| match (samples, n) {
                (false, _) => format!("{what}: {n}"),
                (true, 1) => format!("{what}: 1 sample"),
                (true, _) => format!("{what}: {n} samples"),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
