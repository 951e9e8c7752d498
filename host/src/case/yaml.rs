//! A YAML document as a tree of located nodes, read with hardened parser options.
//!
//! The case parser validates by hand over this tree rather than through derived serde
//! structs, so that every error can name both the place (line:col) and the field path.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{MessageFormatter, Spanned, UserMessageFormatter};

/// Most text a case document may expand to once YAML aliases are replayed, in bytes.
///
/// The parser budgets replayed events but not the bytes they carry, so an alias of a large
/// anchored string would otherwise multiply memory; this caps the total.
const MAX_EXPANDED_TEXT_BYTES: usize = 16 * 1024 * 1024;
/// Deepest nesting of lists and maps. Building the tree recurses once per level, so this
/// keeps parsing well inside a 2 MiB thread stack even in unoptimised builds.
const MAX_DEPTH: usize = 32;
/// Most values (scalars, lists, maps) in a document.
const MAX_NODES: usize = 50_000;
/// Most YAML aliases, and most anchors, in a document.
const MAX_ALIASES: usize = 1_000;
/// Most values YAML aliases may replay in total: this is what stops an alias bomb.
const MAX_REPLAYED_EVENTS: usize = 10_000;

/// A YAML node with where it was written.
#[derive(Debug)]
pub(crate) struct Node {
    pub value: Value,
    /// 1-based line; 0 when unknown.
    pub line: usize,
    /// 1-based column; 0 when unknown.
    pub column: usize,
    /// The node's source text, for scalars read as strings (`42` stays `42`, not `42.0`).
    raw: Option<(usize, usize)>,
}

/// The value of a node.
#[derive(Debug)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    String(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Value {
    /// What kind of value this is, for "expected X, found Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::UInt(_) => "an integer",
            Value::Float(_) => "a number",
            Value::String(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a map",
        }
    }
}

impl Node {
    /// An empty map where this node is: an empty document read as a map of no fields.
    pub fn empty_map_here(&self) -> Node {
        Node {
            value: Value::Map(Vec::new()),
            line: self.line,
            column: self.column,
            raw: None,
        }
    }

    /// The node as text if it is a scalar other than null: strings as they are, and numbers
    /// and booleans as written in the file, as YAML loaders do for string-typed fields.
    pub(crate) fn scalar_text(&self, source: &str) -> Option<String> {
        // A quoted scalar is a string unless tagged (`!!int "42"`); its span holds the quotes.
        let written = || {
            self.raw
                .and_then(|(start, len)| source.get(start..start.checked_add(len)?))
                .filter(|text| !text.starts_with(['"', '\'']))
                .map(str::to_owned)
        };
        match &self.value {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(written().unwrap_or_else(|| b.to_string())),
            Value::Int(n) => Some(written().unwrap_or_else(|| n.to_string())),
            Value::UInt(n) => Some(written().unwrap_or_else(|| n.to_string())),
            Value::Float(n) => Some(written().unwrap_or_else(|| n.to_string())),
            Value::Null | Value::Seq(_) | Value::Map(_) => None,
        }
    }
}

/// Why a document could not be read as YAML.
#[derive(Debug)]
pub(crate) struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Parse one YAML document into a located tree.
///
/// Duplicate keys are passed through to the tree so the case parser can report them with
/// the field path; aliases, nesting and size are bounded so a hostile file is refused fast.
pub(crate) fn parse_document(source: &str) -> Result<Node, SyntaxError> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: 1,
            max_nodes: MAX_NODES,
            max_aliases: MAX_ALIASES,
            max_anchors: MAX_ALIASES,
            max_depth: MAX_DEPTH,
            max_total_scalar_bytes: MAX_EXPANDED_TEXT_BYTES,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: MAX_REPLAYED_EVENTS,
            max_replay_stack_depth: MAX_DEPTH,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        strict_booleans: true,
        with_snippet: false,
    };
    let _budget = ExpansionBudget::start();
    match serde_saphyr::from_str_with_options::<Spanned<Value>>(source, options) {
        Ok(root) => Ok(Node::from(root)),
        Err(err) => {
            let (line, column) = err
                .location()
                .map(|l| (to_usize(l.line()), to_usize(l.column())))
                .unwrap_or((0, 0));
            Err(SyntaxError {
                line,
                column,
                // Parser messages may quote input; keep the one-line error shape.
                message: describe(&err)
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect(),
            })
        }
    }
}

/// What went wrong, in the terms of a case file rather than the parser's internals.
fn describe(err: &serde_saphyr::Error) -> String {
    use serde_saphyr::Error;
    use serde_saphyr::budget::BudgetBreach;

    // Text budget overruns surface as a plain message from inside the tree builder.
    let text_overrun = EXPANDED_TEXT_BYTES.get() > MAX_EXPANDED_TEXT_BYTES;
    let mut inner = err.without_snippet();
    while let Error::AliasError { error, .. } = inner {
        inner = error.without_snippet();
    }
    let limit = match inner {
        _ if text_overrun => text_limit(),
        Error::Budget { breach, .. } => match breach {
            BudgetBreach::Depth { .. } => format!("nested deeper than {MAX_DEPTH} levels"),
            BudgetBreach::Nodes { .. } => format!("more than {MAX_NODES} values"),
            BudgetBreach::Aliases { .. }
            | BudgetBreach::Anchors { .. }
            | BudgetBreach::AliasAnchorRatio { .. } => {
                format!(
                    "more than {MAX_ALIASES} YAML aliases or anchors, or too many aliases per anchor"
                )
            }
            BudgetBreach::Documents { .. } => {
                return "more than one YAML document (`---`); a case file holds one case".into();
            }
            BudgetBreach::ScalarBytes { .. } => text_limit(),
            other => format!("{other:?}"),
        },
        Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. } => {
            format!("YAML aliases expand to more than {MAX_REPLAYED_EVENTS} values")
        }
        other => {
            return format!(
                "invalid YAML: {}",
                UserMessageFormatter.format_message(other)
            );
        }
    };
    format!("the document is too large or too complex: {limit}")
}

fn text_limit() -> String {
    format!(
        "more than {} MiB of text once YAML aliases are expanded",
        MAX_EXPANDED_TEXT_BYTES / (1024 * 1024)
    )
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl From<Spanned<Value>> for Node {
    fn from(spanned: Spanned<Value>) -> Self {
        let at = spanned.referenced;
        let span = spanned.defined.span();
        let raw = span
            .byte_offset()
            .zip(span.byte_len())
            .and_then(|(start, len)| {
                Some((usize::try_from(start).ok()?, usize::try_from(len).ok()?))
            });
        Node {
            value: spanned.value,
            line: to_usize(at.line()),
            column: to_usize(at.column()),
            raw,
        }
    }
}

thread_local! {
    /// Bytes of text materialised by the parse running on this thread.
    static EXPANDED_TEXT_BYTES: Cell<usize> = const { Cell::new(0) };
}

/// Resets the per-parse text budget on start and on drop.
struct ExpansionBudget;

impl ExpansionBudget {
    fn start() -> Self {
        EXPANDED_TEXT_BYTES.set(0);
        ExpansionBudget
    }

    fn charge<E: de::Error>(bytes: usize) -> Result<(), E> {
        let total = EXPANDED_TEXT_BYTES.get().saturating_add(bytes);
        EXPANDED_TEXT_BYTES.set(total);
        if total > MAX_EXPANDED_TEXT_BYTES {
            return Err(E::custom(text_limit()));
        }
        Ok(())
    }
}

impl Drop for ExpansionBudget {
    fn drop(&mut self) {
        EXPANDED_TEXT_BYTES.set(0);
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Value::deserialize(deserializer)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::UInt(v))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        match i64::try_from(v) {
            Ok(n) => Ok(Value::Int(n)),
            Err(_) => Ok(Value::Float(v as f64)),
        }
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        match u64::try_from(v) {
            Ok(n) => Ok(Value::UInt(n)),
            Err(_) => Ok(Value::Float(v as f64)),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        ExpansionBudget::charge(v.len())?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        ExpansionBudget::charge(v.len())?;
        Ok(Value::String(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Err(E::custom(
                "binary values are not supported; write the text instead",
            )),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Value>>()? {
            items.push(Node::from(item));
        }
        Ok(Value::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Value>>()? {
            let value = map.next_value::<Spanned<Value>>()?;
            entries.push((Node::from(key), Node::from(value)));
        }
        Ok(Value::Map(entries))
    }
}
