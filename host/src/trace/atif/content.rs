//! A step's `message` or a result's `content`: text, or content parts whose text parts are
//! joined by newlines (images and audio are noted).

use super::Import;
use super::schema::{CONTENT_PART_FIELDS, required};
use crate::trace::TraceError;
use crate::trace::json::{Kind, Node};

impl Import {
    /// The text of `node`; its parts' unknown fields are noted by the pattern `parts`.
    pub(super) fn text(&mut self, node: Node<'_>, parts: &str) -> Result<String, TraceError> {
        match node.kind() {
            Kind::String => node.parse(),
            Kind::List => {
                let mut texts = Vec::new();
                for part in node.list()? {
                    let part = part.object()?;
                    self.notes.unknown_fields(&part, CONTENT_PART_FIELDS, parts);
                    let kind: String = required(&part, "type")?.parse()?;
                    if kind == "text" {
                        texts.push(required(&part, "text")?.parse::<String>()?);
                    } else {
                        self.notes
                            .add("image and audio content parts, not imported", "part");
                    }
                }
                Ok(texts.join("\n"))
            }
            _ => Err(node.expected("text or a list of content parts")),
        }
    }
}
