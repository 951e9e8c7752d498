//! The price table: USD per million tokens (input, cached input, output) per model, so that a
//! run's usage has a cost (docs/cost.md).
//!
//! evalhost ships a default table (`prices.toml`, with the date its prices were compiled,
//! [`PriceTable::as_of`]); `[prices."MODEL"]` in the user's file, then in the project's
//! `evalhost.toml`, replaces an entry or adds one ([`super::ConfigSources::prices`]).
//!
//! **Matching** ([`PriceTable::lookup`]): a model's exact name first; else the longest entry
//! that is the name without a version suffix, where a version suffix is `-YYYYMMDD` or
//! `@YYYYMMDD` (8 digits), `-YYYY-MM-DD`, `-NNN` (3 digits) or `-latest`. So
//! `claude-sonnet-4-5-20250929` and `claude-sonnet-4-5@20250929` are priced as
//! `claude-sonnet-4-5`, `gpt-4.1-2025-04-14` as `gpt-4.1`, `gemini-2.0-flash-001` as
//! `gemini-2.0-flash`; but `gpt-5-pro` is not priced as `gpt-5`, nor `claude-opus-4-8` as
//! `claude-opus-4`: another model is unknown, never priced as a neighbour. An unknown model
//! has no price (its cost is unknown, not 0).
//!
//! ```
//! use evalhost::config::PriceTable;
//!
//! let table = PriceTable::builtin();
//! let price = table.price("claude-sonnet-4-5-20250929").expect("a dated variant");
//! assert_eq!(Some(price), table.price("claude-sonnet-4-5"));
//! assert_eq!(table.price("my-local-model"), None);
//! // 1M input tokens, 400k of them cached, and 100k output tokens:
//! let cost = price.cost(1_000_000, 400_000, 100_000);
//! assert!((cost - (0.6 * 3.0 + 0.4 * 0.30 + 0.1 * 15.0)).abs() < 1e-9);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::Deserialize;

/// The default table, embedded.
const DEFAULT_TABLE: &str = include_str!("prices.toml");

/// USD per million tokens of one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    /// Input tokens not read from a prompt cache.
    pub input: f64,
    /// Input tokens read from a prompt cache (Anthropic's cache reads, OpenAI's and Google's
    /// cached tokens).
    pub cached_input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
}

impl ModelPrice {
    /// The cost in USD of `input_tokens` (cached ones included, as providers count them and
    /// as evalhost's usage does), `cached_input_tokens` of which were cached, and
    /// `output_tokens`. Cached tokens beyond the input are counted as input.
    pub fn cost(&self, input_tokens: u64, cached_input_tokens: u64, output_tokens: u64) -> f64 {
        let cached = cached_input_tokens.min(input_tokens);
        let uncached = input_tokens - cached;
        (uncached as f64 * self.input
            + cached as f64 * self.cached_input
            + output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

/// One entry of the table and where it came from.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    price: ModelPrice,
    /// The configuration file that set it; `None`: the default table.
    from: Option<PathBuf>,
}

/// The price a model matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceMatch<'a> {
    /// The table's entry: the model's name or the name it was matched by.
    pub entry: &'a str,
    /// The entry's price.
    pub price: ModelPrice,
    /// The configuration file that set the price; `None`: the default table.
    pub from: Option<&'a Path>,
}

/// Model → price: the default table with the configuration files' `[prices]` over it.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    as_of: String,
    entries: BTreeMap<String, Entry>,
    /// The configuration files that set prices, in the order applied.
    files: Vec<PathBuf>,
}

/// The default table's file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultFile {
    as_of: String,
    prices: BTreeMap<String, PriceEntry>,
}

/// `[prices."MODEL"]` as written: USD per million tokens.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PriceEntry {
    input: toml::Spanned<f64>,
    /// Default: `input` (no discount for cached tokens).
    #[serde(default)]
    cached_input: Option<toml::Spanned<f64>>,
    output: toml::Spanned<f64>,
}

/// A price of a configuration file that is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BadPrice {
    /// 1-based line in the file.
    pub line: usize,
    pub model: String,
    pub field: &'static str,
    pub message: String,
}

impl PriceEntry {
    /// The price, checked: each field finite and at least 0.
    fn checked(&self, model: &str, text: &str) -> Result<ModelPrice, BadPrice> {
        let check = |field: &'static str, value: &toml::Spanned<f64>| {
            let number = *value.get_ref();
            if number.is_finite() && number >= 0.0 {
                Ok(number)
            } else {
                Err(BadPrice {
                    line: line_of(text, value.span().start),
                    model: model.to_owned(),
                    field,
                    message: format!(
                        "{number} is not a price (USD per million tokens: a number, 0 or more)"
                    ),
                })
            }
        };
        if model.trim().is_empty() {
            return Err(BadPrice {
                line: line_of(text, self.input.span().start),
                model: model.to_owned(),
                field: "input",
                message: "the model's name is empty".to_owned(),
            });
        }
        let input = check("input", &self.input)?;
        Ok(ModelPrice {
            input,
            cached_input: match &self.cached_input {
                Some(value) => check("cached_input", value)?,
                None => input,
            },
            output: check("output", &self.output)?,
        })
    }
}

/// The 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

static BUILTIN: LazyLock<PriceTable> = LazyLock::new(|| {
    let parsed: Result<DefaultFile, _> = toml::from_str(DEFAULT_TABLE);
    // The embedded table is checked by a test; a broken one would be an empty table, never
    // a panic.
    let Ok(file) = parsed else {
        return PriceTable {
            as_of: "unknown".to_owned(),
            entries: BTreeMap::new(),
            files: Vec::new(),
        };
    };
    let entries = file
        .prices
        .iter()
        .filter_map(|(model, entry)| {
            let price = entry.checked(model, DEFAULT_TABLE).ok()?;
            Some((model.clone(), Entry { price, from: None }))
        })
        .collect();
    PriceTable {
        as_of: file.as_of,
        entries,
        files: Vec::new(),
    }
});

impl PriceTable {
    /// evalhost's default table alone.
    pub fn builtin() -> Self {
        BUILTIN.clone()
    }

    /// The date the default table's prices were compiled (`2026-12-01`).
    pub fn as_of(&self) -> &str {
        &self.as_of
    }

    /// The configuration files whose `[prices]` are in the table, in the order applied.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Set `model`'s price (a configuration file's `[prices."MODEL"]`, or an embedder's).
    pub fn set(&mut self, model: &str, price: ModelPrice, from: Option<&Path>) {
        if let Some(file) = from
            && !self.files.iter().any(|f| f == file)
        {
            self.files.push(file.to_owned());
        }
        self.entries.insert(
            model.to_owned(),
            Entry {
                price,
                from: from.map(Path::to_owned),
            },
        );
    }

    /// Apply one file's `[prices]`, each entry checked and located in `text`.
    pub(super) fn apply(
        &mut self,
        file: &Path,
        text: &str,
        prices: &BTreeMap<String, PriceEntry>,
    ) -> Result<(), BadPrice> {
        for (model, entry) in prices {
            let price = entry.checked(model, text)?;
            self.set(model, price, Some(file));
        }
        Ok(())
    }

    /// `model`'s price and the entry it matched (module docs: exact name, else the longest
    /// entry that is the name without a version suffix); `None`: unknown.
    pub fn lookup(&self, model: &str) -> Option<PriceMatch<'_>> {
        fn found<'a>((key, entry): (&'a String, &'a Entry)) -> PriceMatch<'a> {
            PriceMatch {
                entry: key.as_str(),
                price: entry.price,
                from: entry.from.as_deref(),
            }
        }
        if let Some(hit) = self.entries.get_key_value(model) {
            return Some(found(hit));
        }
        // Candidates are the name's prefixes ending before a separator; the longest with a
        // version suffix after it wins.
        model
            .char_indices()
            .filter(|&(i, c)| (c == '-' || c == '@') && i > 0)
            .map(|(i, _)| i)
            .rev()
            .filter(|&i| is_version_suffix(&model[i..]))
            .find_map(|i| self.entries.get_key_value(&model[..i]))
            .map(found)
    }

    /// `model`'s price ([`PriceTable::lookup`]).
    pub fn price(&self, model: &str) -> Option<ModelPrice> {
        self.lookup(model).map(|m| m.price)
    }
}

/// Whether `suffix` (starting with its separator) is a version suffix: `-YYYYMMDD`,
/// `@YYYYMMDD`, `-YYYY-MM-DD`, `-NNN` or `-latest`.
fn is_version_suffix(suffix: &str) -> bool {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = suffix.strip_prefix('@') {
        return digits(rest, 8);
    }
    let Some(rest) = suffix.strip_prefix('-') else {
        return false;
    };
    if digits(rest, 8) || digits(rest, 3) || rest == "latest" {
        return true;
    }
    let parts: Vec<&str> = rest.split('-').collect();
    matches!(parts.as_slice(), [y, m, d] if digits(y, 4) && digits(m, 2) && digits(d, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(input: f64, cached_input: f64, output: f64) -> ModelPrice {
        ModelPrice {
            input,
            cached_input,
            output,
        }
    }

    #[test]
    fn the_default_table_parses_whole_and_states_its_date() {
        let file: DefaultFile = toml::from_str(DEFAULT_TABLE).expect("prices.toml parses");
        let table = PriceTable::builtin();
        assert_eq!(table.as_of(), "2026-12-01");
        assert_eq!(table.as_of, file.as_of);
        // Every entry is a valid price: none was dropped.
        assert_eq!(table.entries.len(), file.prices.len());
        assert!(table.entries.len() >= 30, "{}", table.entries.len());
        for model in [
            "gpt-5",
            "gpt-4.1-mini",
            "claude-sonnet-4-5",
            "gemini-2.5-pro",
        ] {
            assert!(table.price(model).is_some(), "{model}");
        }
        assert!(table.files().is_empty());
        assert_eq!(table.price("claude-haiku-4-5"), Some(price(1.0, 0.1, 5.0)));
    }

    #[test]
    fn dated_variants_match_the_longest_entry_and_other_names_none() {
        let table = PriceTable::builtin();
        let entry = |model: &str| table.lookup(model).map(|m| m.entry);
        assert_eq!(
            entry("claude-sonnet-4-5-20250929"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(
            entry("claude-sonnet-4-5@20250929"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(entry("claude-opus-4-20250514"), Some("claude-opus-4"));
        assert_eq!(entry("claude-opus-4-1-20250805"), Some("claude-opus-4-1"));
        assert_eq!(entry("claude-3-5-haiku-latest"), Some("claude-3-5-haiku"));
        assert_eq!(entry("gpt-4.1-2025-04-14"), Some("gpt-4.1"));
        assert_eq!(entry("gpt-4.1-mini-2025-04-14"), Some("gpt-4.1-mini"));
        assert_eq!(entry("gemini-2.0-flash-001"), Some("gemini-2.0-flash"));
        assert_eq!(entry("gpt-4o-mini"), Some("gpt-4o-mini"));
        // Not a version: another model, unknown rather than priced as a neighbour.
        assert_eq!(entry("gpt-5-pro"), None);
        assert_eq!(entry("claude-opus-4-8"), None);
        assert_eq!(entry("gpt-4.1-2025"), None);
        assert_eq!(entry("scripted"), None);
        assert_eq!(entry(""), None);
        assert_eq!(entry("-20250101"), None);
    }

    #[test]
    fn a_file_replaces_and_adds_entries_and_bad_values_name_line_and_field() {
        let text = "[prices.\"gpt-5\"]\ninput = 1.0\noutput = 2.0\n\n[prices.\"my-model\"]\ninput = 0.5\ncached_input = 0.1\noutput = 1\n";
        #[derive(Deserialize)]
        struct File {
            prices: BTreeMap<String, PriceEntry>,
        }
        let file: File = toml::from_str(text).unwrap();
        let mut table = PriceTable::builtin();
        let path = Path::new("/p/evalhost.toml");
        table.apply(path, text, &file.prices).unwrap();
        // Replaced whole: `cached_input` defaults to `input`.
        let gpt5 = table.lookup("gpt-5").unwrap();
        assert_eq!(gpt5.price, price(1.0, 1.0, 2.0));
        assert_eq!(gpt5.from, Some(path));
        assert_eq!(table.price("my-model-20260101"), Some(price(0.5, 0.1, 1.0)));
        assert_eq!(table.lookup("gpt-4o").unwrap().from, None);
        assert_eq!(table.files(), [path.to_owned()]);

        let bad = "[prices.\"m\"]\ninput = 1.0\n\noutput = -3\n";
        let file: File = toml::from_str(bad).unwrap();
        let error = PriceTable::builtin()
            .apply(path, bad, &file.prices)
            .unwrap_err();
        assert_eq!((error.line, error.field), (4, "output"), "{error:?}");
        assert_eq!(error.model, "m");
        let nan = "[prices.\"m\"]\ninput = nan\noutput = 1\n";
        let file: File = toml::from_str(nan).unwrap();
        let error = PriceTable::builtin()
            .apply(path, nan, &file.prices)
            .unwrap_err();
        assert_eq!((error.line, error.field), (2, "input"), "{error:?}");
    }

    #[test]
    fn cost_prices_cached_input_apart_and_never_more_cached_than_input() {
        let p = price(2.0, 0.5, 8.0);
        assert_eq!(p.cost(0, 0, 0), 0.0);
        assert!((p.cost(1_000_000, 0, 0) - 2.0).abs() < 1e-12);
        assert!((p.cost(1_000_000, 1_000_000, 0) - 0.5).abs() < 1e-12);
        assert!(
            (p.cost(1_000, 250, 500) - (750.0 * 2.0 + 250.0 * 0.5 + 500.0 * 8.0) / 1e6).abs()
                < 1e-15
        );
        // More cached than input (a provider's odd report): all input, priced as cached.
        assert!((p.cost(100, 400, 0) - 100.0 * 0.5 / 1e6).abs() < 1e-15);
    }
}

#[cfg(test)]
mod sources_tests {
    use super::super::{ConfigError, ConfigSources};

    #[test]
    fn the_project_file_overrides_the_users_and_errors_name_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("config.toml");
        let project = dir.path().join("evalhost.toml");
        std::fs::write(
            &user,
            "[prices.\"gpt-5\"]\ninput = 9\noutput = 9\n[prices.\"mine\"]\ninput = 1\noutput = 2\n",
        )
        .unwrap();
        std::fs::write(&project, "[prices.\"gpt-5\"]\ninput = 3\noutput = 4\n").unwrap();
        let sources = ConfigSources {
            user_file: Some(user.clone()),
            project_file: Some(project.clone()),
            env: Default::default(),
        };
        let table = sources.prices().unwrap();
        let gpt5 = table.lookup("gpt-5").unwrap();
        assert_eq!((gpt5.price.input, gpt5.price.output), (3.0, 4.0));
        assert_eq!(gpt5.from, Some(project.as_path()));
        assert_eq!(table.lookup("mine").unwrap().from, Some(user.as_path()));
        assert_eq!(table.files(), [user.clone(), project.clone()]);

        std::fs::write(
            &project,
            "[provider]\nmodel = \"m\"\n\n[prices.\"gpt-5\"]\ninput = 3\noutput = \"x\"\n",
        )
        .unwrap();
        let error = sources.prices().unwrap_err();
        assert!(matches!(error, ConfigError::Parse { .. }), "{error}");
        let text = error.to_string();
        assert!(
            text.contains("evalhost.toml") && text.contains("line 6"),
            "{text}"
        );
        std::fs::write(&project, "[prices.\"gpt-5\"]\ninput = 3\noutput = -1\n").unwrap();
        let text = sources.prices().unwrap_err().to_string();
        assert!(
            text.ends_with(
                "evalhost.toml:3: [prices.\"gpt-5\"] field `output`: -1 is not a price (USD per million tokens: a number, 0 or more)"
            ),
            "{text}"
        );
    }
}
