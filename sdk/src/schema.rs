//! A grader's config schema derived from its config type, so the config is written once
//! (feature `schema`, with [`schemars`]).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;

use crate::{Grader, Prepare};

/// The JSON Schema of `G`'s config as a case file writes it ([`Prepare::Written`]), derived
/// with `#[derive(schemars::JsonSchema)]`: use it as [`Grader::config_schema`].
///
/// The schema describes the deserializer (`deny_unknown_fields` is
/// `"additionalProperties": false`, a `#[serde(default)]` field is not required), has every
/// subschema inline (the host embeds it in the case-file schema, where a `$ref` into `$defs`
/// would dangle), and neither `$schema`, `title` nor a top-level `description`: the
/// grader's summary describes it. Field doc comments become the fields' descriptions;
/// `#[schemars(length(min = 1))]`, `range(..)`, `regex(..)` say what serde cannot.
///
/// ```
/// use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
///
/// pub struct Word;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// pub struct Config {
///     /// The word to find.
///     #[schemars(length(min = 1))]
///     word: String,
/// }
///
/// impl Grader for Word {
///     type Config = Config;
///     const NAME: &'static str = "word";
///     const VERSION: &'static str = "1.0.0";
///     const SUMMARY: &'static str = "The final text contains the word";
///
///     fn config_schema() -> serde_json::Value {
///         evalhost_sdk::config_schema_of::<Self>()
///     }
///
///     fn grade(config: &Config, evidence: &Evidence) -> Result<Verdict, GradeError> {
///         Ok(Verdict::pass_if(evidence.final_text.contains(&config.word), || "word".into()))
///     }
/// }
///
/// assert_eq!(
///     Word::config_schema(),
///     serde_json::json!({
///         "type": "object",
///         "properties": {
///             "word": {"type": "string", "minLength": 1, "description": "The word to find."}
///         },
///         "required": ["word"],
///         "additionalProperties": false
///     })
/// );
/// ```
pub fn config_schema_of<G: Grader>() -> serde_json::Value
where
    <G::Config as Prepare>::Written: JsonSchema,
{
    let schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator()
        .into_root_schema_for::<<G::Config as Prepare>::Written>();
    let mut value = schema.to_value();
    if let serde_json::Value::Object(map) = &mut value {
        for key in ["$schema", "title", "description"] {
            map.remove(key);
        }
    }
    value
}
