//! What the file holds that no record carries, each named once with how often it occurred:
//! what the steps say that a session log cannot, fields ATIF-v1.8 does not define, and
//! `extra` metadata.

use crate::trace::json::Object;

#[derive(Default)]
pub(super) struct Notes(Vec<(String, &'static str, usize)>);

impl Notes {
    /// One more `unit` of `what` (`unit` is a noun whose plural adds an `s`).
    pub fn add(&mut self, what: &str, unit: &'static str) {
        match self.0.iter_mut().find(|(w, _, _)| w == what) {
            Some((_, _, count)) => *count += 1,
            None => self.0.push((what.to_owned(), unit, 1)),
        }
    }

    /// Notes the fields of `object` not in `known`, by `pattern` (`steps[]`).
    pub fn unknown_fields(&mut self, object: &Object<'_>, known: &[&str], pattern: &str) {
        for key in object.keys() {
            if !known.contains(&key) {
                let what = format!(
                    "fields ATIF-v1.8 does not define (`{}`)",
                    join(pattern, key)
                );
                self.add(&what, "occurrence");
            }
        }
    }

    /// Notes `extra` metadata of `object` (at `pattern`) when there is some.
    pub fn extra(&mut self, object: &Object<'_>, pattern: &str, unit: &'static str) {
        if object.get("extra").is_some() {
            let what = format!("custom metadata (`{}`)", join(pattern, "extra"));
            self.add(&what, unit);
        }
    }

    /// `what: count units`, in the order first noted.
    pub fn finish(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(what, unit, count)| {
                let s = if count == 1 { "" } else { "s" };
                format!("{what}: {count} {unit}{s}")
            })
            .collect()
    }
}

/// The field pattern `key` of `pattern` (`steps[].extra`; `key` alone at the top level).
fn join(pattern: &str, key: &str) -> String {
    if pattern.is_empty() {
        key.to_owned()
    } else {
        format!("{pattern}.{key}")
    }
}
