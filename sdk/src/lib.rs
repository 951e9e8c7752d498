//! Write evalhost graders in Rust.
//!
//! A grader judges one run of an agent: it reads the run's [`Evidence`]
//! (final text, tool calls, usage, events) and the agent's finished workspace,
//! and answers a [`Verdict`]. evalhost runs every grader as a WebAssembly
//! component (`wasm32-wasip2`) in a sandbox: no network, no environment, a
//! virtual clock, bounded CPU and memory, and read-only access to the
//! workspace at [`WORKSPACE`].
//!
//! A grader is a type implementing [`Grader`]; a component provides one or
//! more of them, registered with [`register_graders!`]. The crate must be a
//! `cdylib`; `cargo build --target wasm32-wasip2` then produces a component
//! evalhost loads.
//!
//! ```
//! use evalhost_sdk::{Evidence, GradeError, Grader, Verdict, message};
//! use serde::Deserialize;
//!
//! /// `answer_mentions: {word: hello, at_least: 2}`
//! pub struct AnswerMentions;
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! pub struct Config {
//!     word: String,
//!     #[serde(default = "one")]
//!     at_least: usize,
//! }
//!
//! fn one() -> usize {
//!     1
//! }
//!
//! impl Grader for AnswerMentions {
//!     type Config = Config;
//!     const NAME: &'static str = "answer_mentions";
//!     const VERSION: &'static str = "1.0.0";
//!     const SUMMARY: &'static str = "The final text mentions the word at least N times";
//!
//!     fn config_schema() -> serde_json::Value {
//!         serde_json::json!({
//!             "type": "object",
//!             "properties": {
//!                 "word": {"type": "string", "minLength": 1},
//!                 "at_least": {"type": "integer", "minimum": 1}
//!             },
//!             "required": ["word"],
//!             "additionalProperties": false
//!         })
//!     }
//!
//!     fn check(config: &Config) -> Result<(), String> {
//!         if config.word.is_empty() { Err("word is empty".into()) } else { Ok(()) }
//!     }
//!
//!     fn grade(config: &Config, evidence: &Evidence) -> Result<Verdict, GradeError> {
//!         let seen = evidence.final_text.matches(&config.word).count();
//!         Ok(Verdict::pass_if(seen >= config.at_least, || {
//!             format!(
//!                 "{} {} {}: {} in final text {}",
//!                 Self::NAME,
//!                 message::quote(&config.word),
//!                 config.at_least,
//!                 seen,
//!                 message::quote_excerpt(&evidence.final_text),
//!             )
//!         }))
//!     }
//! }
//!
//! evalhost_sdk::register_graders!(AnswerMentions);
//!
//! // Graders are plain Rust: test them natively, through the same JSON the host sends.
//! let evidence = Evidence { final_text: "hello, hello".into(), ..Evidence::default() };
//! let verdict = evalhost_sdk::grade::<AnswerMentions>(r#"{"word": "hello", "at_least": 3}"#, &evidence)?;
//! assert_eq!(verdict.message, r#"answer_mentions "hello" 3: 2 in final text "hello, hello""#);
//! # Ok::<(), GradeError>(())
//! ```
//!
//! Failure messages follow the shape `<grader> <arg>: <what was seen>`;
//! [`message`] has the quoting helpers the built-in graders use.
//!
//! The config arrives as JSON text (the host converts the case file's YAML).
//! Validate what you can while it is deserialized (`#[serde(try_from = ..)]`
//! newtypes such as [`RelativePath`], `deny_unknown_fields`), and the rest in
//! [`Grader::check`]: the host checks every config when it loads a case, so a
//! typo fails before any run. Work grading needs from the config (a compiled
//! regex) belongs in a [`Prepare`] config type: every export prepares the config
//! once, and `grade` receives the prepared value.
//!
//! With the `schema` feature, `config_schema_of` derives the config schema from
//! the config type (`#[derive(schemars::JsonSchema)]`), so the config is written once.

#![warn(missing_docs)]

// Generated bindings reach the `wit_bindgen` runtime through this crate's own
// name, which the export macro also uses from the grader author's crate.
extern crate self as evalhost_sdk;

pub mod judge;
pub mod message;
#[cfg(feature = "schema")]
mod schema;
mod types;
mod workspace;

pub use __private::bindings::evalhost::grader::types::{
    Event, Evidence, GradeError, GraderInfo, Message, SeededFile, ToolCall, Usage, Verdict,
};
pub use workspace::{RelativePath, WORKSPACE, Workspace, check_relative_path};

#[cfg(feature = "schema")]
pub use schema::config_schema_of;

/// One grader: a check with a name and a config, registered with
/// [`register_graders!`].
///
/// Graders are stateless: there is no `self`, and nothing one call leaves
/// behind may decide another's verdict (the host hands each run's evidence to
/// a fresh instance, whose calls grade only that run). A grader returns a
/// [`Verdict`] (pass or fail, with a message) for the run, or a [`GradeError`]
/// when it cannot judge it at all.
pub trait Grader {
    /// The config `check`, `grade` and `describe` receive. Any `Deserialize` type is read as
    /// written under the grader's name in a case file, e.g. `String` for
    /// `final_text_contains: "done"`; a type implementing [`Prepare`] is made ready from
    /// what is written once per call (a regex compiled), so `grade` never redoes that work.
    type Config: Prepare;

    /// The name case files use, e.g. `file_contains`; unique within a component.
    const NAME: &'static str;

    /// Semver of this grader's behaviour: bump it when the same config and
    /// evidence could get a different verdict.
    const VERSION: &'static str;

    /// One line: what passes.
    const SUMMARY: &'static str;

    /// JSON Schema of [`Grader::Config`], shown to case authors.
    fn config_schema() -> serde_json::Value;

    /// Validation beyond what deserializing (and [`Prepare`]) does. Runs when the host
    /// loads a case and before every grade, so keep it cheap.
    ///
    /// Returns what is wrong with the config, e.g. `call must be 1 or more`.
    fn check(config: &Self::Config) -> Result<(), String> {
        let _ = config;
        Ok(())
    }

    /// Judges one run. A grader may ask the judge model here ([`judge`]) when the host
    /// grants it.
    fn grade(config: &Self::Config, evidence: &Evidence) -> Result<Verdict, GradeError>;

    /// One line saying what the grader checks with `config`, in words a case author reads
    /// (`evalhost grader test` shows it). The default is the grader's name and summary.
    fn describe(config: &Self::Config) -> String {
        let _ = config;
        format!("{}: {}", Self::NAME, Self::SUMMARY)
    }
}

/// A config made ready for grading from what a case file writes: the one step the
/// component's `check-config`, `grade` and `describe` exports all take, once per call, so
/// work done here (compiling a regex, resolving a target) reaches [`Grader::grade`] and is
/// not done twice.
///
/// Every `Deserialize` type is its own written form and needs no preparation; implement
/// this for a type that holds what grading needs instead:
///
/// ```
/// use evalhost_sdk::Prepare;
///
/// /// `{word: "hel+o"}`, compiled.
/// pub struct Matcher { word: String, regex_len: usize }
///
/// #[derive(serde::Deserialize)]
/// pub struct Written { word: String }
///
/// impl Prepare for Matcher {
///     type Written = Written;
///     fn prepare(written: Written) -> Result<Self, String> {
///         if written.word.is_empty() { return Err("word is empty".into()) }
///         Ok(Matcher { regex_len: written.word.len(), word: written.word })
///     }
/// }
/// ```
pub trait Prepare: Sized {
    /// The config as written in the case file.
    type Written: serde::de::DeserializeOwned;

    /// Makes `written` ready for grading, or says what is wrong with it, e.g.
    /// `invalid regular expression "(": ...` (a [`GradeError::InvalidConfig`]).
    fn prepare(written: Self::Written) -> Result<Self, String>;
}

/// A config read as written needs no preparation.
impl<T: serde::de::DeserializeOwned> Prepare for T {
    type Written = T;

    fn prepare(written: T) -> Result<T, String> {
        Ok(written)
    }
}

/// Parses `config` (JSON text) as `G`'s config, prepares and checks it, exactly as the
/// component's `check-config` export does.
///
/// A config that does not fit is a [`GradeError::InvalidConfig`] naming the
/// problem, e.g. ``missing field `status` ``.
pub fn check_config<G: Grader>(config: &str) -> Result<(), GradeError> {
    parse_config::<G>(config).map(drop)
}

/// Parses and checks `config` (JSON text) as [`check_config`] does, then
/// grades `evidence` with `G`, exactly as the component's `grade` export does.
pub fn grade<G: Grader>(config: &str, evidence: &Evidence) -> Result<Verdict, GradeError> {
    let config = parse_config::<G>(config)?;
    G::grade(&config, evidence)
}

/// Parses and checks `config` as [`check_config`] does, then describes it with `G`,
/// exactly as the component's `describe` export does.
pub fn describe<G: Grader>(config: &str) -> Result<String, GradeError> {
    let config = parse_config::<G>(config)?;
    Ok(G::describe(&config))
}

/// What `list-graders` reports for `G`.
pub fn grader_info<G: Grader>() -> GraderInfo {
    GraderInfo {
        name: G::NAME.to_owned(),
        version: G::VERSION.to_owned(),
        summary: G::SUMMARY.to_owned(),
        config_schema: G::config_schema().to_string(),
    }
}

/// The one step every export takes: parse, prepare, check.
fn parse_config<G: Grader>(config: &str) -> Result<G::Config, GradeError> {
    let written: <G::Config as Prepare>::Written =
        serde_json::from_str(config).map_err(|error| {
            let problem = error.to_string();
            // The position is in JSON the host made from the case's YAML, so it
            // would point the user at text they never wrote.
            let problem = match error.line() {
                0 => problem,
                line => {
                    let suffix = format!(" at line {line} column {}", error.column());
                    problem
                        .strip_suffix(&suffix)
                        .map(str::to_owned)
                        .unwrap_or(problem)
                }
            };
            if error.is_syntax() || error.is_eof() {
                GradeError::InvalidConfig(format!("config is not valid JSON: {problem}"))
            } else {
                GradeError::InvalidConfig(problem)
            }
        })?;
    let prepared = G::Config::prepare(written).map_err(GradeError::InvalidConfig)?;
    G::check(&prepared).map_err(GradeError::InvalidConfig)?;
    Ok(prepared)
}

/// Support for [`register_graders!`]; not part of the API.
#[doc(hidden)]
pub mod __private {
    /// Bindings generated from the grader world.
    #[allow(missing_docs, unsafe_code)]
    pub mod bindings {
        wit_bindgen::generate!({
            path: "../wit/since_v0.5.0",
            world: "evalhost:grader/grader@0.5.0",
            // `register_graders!` expands in the grader author's crate, which depends on
            // this SDK only: every path the generated export macro emits goes through it.
            pub_export_macro: true,
            export_macro_name: "__evalhost_export_grader_world",
            default_bindings_module: "::evalhost_sdk::__private::bindings",
            runtime_path: "::evalhost_sdk::__private::wit_bindgen::rt",
            additional_derives: [PartialEq],
        });
    }

    pub use bindings::__evalhost_export_grader_world as export;
    pub use bindings::Guest;
    pub use wit_bindgen;

    std::thread_local! {
        /// The run this instance grades, as `begin-run` handed it (the host calls it once per
        /// instance; a later call replaces it).
        static RUN: std::cell::RefCell<Option<crate::Evidence>> =
            const { std::cell::RefCell::new(None) };
    }

    /// `begin-run`: keep `evidence` for the instance's `grade-in-run` calls.
    pub fn begin_run(evidence: crate::Evidence) {
        RUN.with(|run| *run.borrow_mut() = Some(evidence));
    }

    /// `grade-in-run`: `grade` with the evidence `begin-run` kept; a
    /// [`GradeError::Failed`](crate::GradeError::Failed) before any `begin-run`.
    pub fn grade_in_run(
        grade: impl FnOnce(&crate::Evidence) -> Result<crate::Verdict, crate::GradeError>,
    ) -> Result<crate::Verdict, crate::GradeError> {
        RUN.with(|run| match &*run.borrow() {
            Some(evidence) => grade(evidence),
            None => Err(crate::GradeError::Failed(
                "grade-in-run was called before begin-run: this instance has no evidence".into(),
            )),
        })
    }

    /// The error for a grader name no registered grader has.
    pub fn unknown_grader(name: &str, known: &[&str]) -> crate::GradeError {
        crate::GradeError::UnknownGrader(format!(
            "no grader named {} in this component; it provides: {}",
            crate::message::quote(name),
            known.join(", ")
        ))
    }
}

/// Exports the listed [`Grader`] types as the component's graders.
///
/// Use it once, in the root of a `cdylib` crate built for `wasm32-wasip2`.
/// The component then answers `list-graders` with the graders in this order,
/// and dispatches `check-config` and `grade` by [`Grader::NAME`]; a name that
/// none of them has is a [`GradeError::UnknownGrader`].
///
/// ```
/// # use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
/// # macro_rules! grader { ($t:ident, $n:literal) => {
/// #     pub struct $t;
/// #     impl Grader for $t {
/// #         type Config = serde::de::IgnoredAny;
/// #         const NAME: &'static str = $n;
/// #         const VERSION: &'static str = "1.0.0";
/// #         const SUMMARY: &'static str = "Always passes";
/// #         fn config_schema() -> serde_json::Value { serde_json::json!({}) }
/// #         fn grade(_: &Self::Config, _: &Evidence) -> Result<Verdict, GradeError> { Ok(Verdict::pass()) }
/// #     }
/// # } }
/// # grader!(FileContains, "file_contains");
/// # grader!(FileExists, "file_exists");
/// evalhost_sdk::register_graders!(FileContains, FileExists);
///
/// // The same list, natively: the names in order, and the dispatch the component's
/// // `grade` export uses (`None` for a name none of them has).
/// assert_eq!(__EvalhostGraders::NAMES, ["file_contains", "file_exists"]);
/// let verdict = __EvalhostGraders::grade_named("file_exists", "{}", &Evidence::default());
/// assert_eq!(verdict, Some(Ok(Verdict::pass())));
/// assert_eq!(__EvalhostGraders::grade_named("file_absent", "{}", &Evidence::default()), None);
/// ```
///
/// Outside `wasm32` the macro exports nothing, so the same crate builds and
/// unit-tests natively. Either way it defines `__EvalhostGraders` with the list
/// as data: `__EvalhostGraders::NAMES` (every grader's [`Grader::NAME`], in the
/// order listed) and `__EvalhostGraders::grade_named(name, config, evidence)`
/// (the component's own dispatch, by reference), so a native caller (a
/// benchmark, a test that every grader is documented) reads the one list.
///
/// The expansion names this crate as `evalhost_sdk`: depend on it under that
/// name (no `package = ` rename).
#[macro_export]
macro_rules! register_graders {
    ($($grader:ty),+ $(,)?) => {
        /// The component's graders, as `register_graders!` listed them.
        #[doc(hidden)]
        pub struct __EvalhostGraders;

        impl __EvalhostGraders {
            /// Every grader's name, in the order `register_graders!` listed them (the order
            /// `list-graders` answers).
            pub const NAMES: &'static [&'static str] = &[$(<$grader as $crate::Grader>::NAME),+];

            /// Grades `evidence` with the grader named `grader`, exactly as the component's
            /// `grade` export does (config parsed, prepared and checked first); `None` when
            /// no listed grader has that name.
            pub fn grade_named(
                grader: &str,
                config: &str,
                evidence: &$crate::Evidence,
            ) -> ::core::option::Option<
                ::core::result::Result<$crate::Verdict, $crate::GradeError>,
            > {
                $(
                    if grader == <$grader as $crate::Grader>::NAME {
                        return ::core::option::Option::Some($crate::grade::<$grader>(config, evidence));
                    }
                )+
                ::core::option::Option::None
            }

            fn grade_or_unknown(
                grader: &str,
                config: &str,
                evidence: &$crate::Evidence,
            ) -> ::core::result::Result<$crate::Verdict, $crate::GradeError> {
                Self::grade_named(grader, config, evidence).unwrap_or_else(|| {
                    ::core::result::Result::Err($crate::__private::unknown_grader(
                        grader,
                        Self::NAMES,
                    ))
                })
            }
        }

        impl $crate::__private::Guest for __EvalhostGraders {
            fn list_graders() -> ::std::vec::Vec<$crate::GraderInfo> {
                ::std::vec![$($crate::grader_info::<$grader>()),+]
            }

            fn check_config(
                grader: ::std::string::String,
                config: ::std::string::String,
            ) -> ::core::result::Result<(), $crate::GradeError> {
                $(
                    if grader == <$grader as $crate::Grader>::NAME {
                        return $crate::check_config::<$grader>(&config);
                    }
                )+
                ::core::result::Result::Err($crate::__private::unknown_grader(
                    &grader,
                    Self::NAMES,
                ))
            }

            fn grade(
                grader: ::std::string::String,
                config: ::std::string::String,
                evidence: $crate::Evidence,
            ) -> ::core::result::Result<$crate::Verdict, $crate::GradeError> {
                Self::grade_or_unknown(&grader, &config, &evidence)
            }

            fn describe(
                grader: ::std::string::String,
                config: ::std::string::String,
            ) -> ::core::result::Result<::std::string::String, $crate::GradeError> {
                $(
                    if grader == <$grader as $crate::Grader>::NAME {
                        return $crate::describe::<$grader>(&config);
                    }
                )+
                ::core::result::Result::Err($crate::__private::unknown_grader(
                    &grader,
                    Self::NAMES,
                ))
            }

            fn begin_run(evidence: $crate::Evidence) {
                $crate::__private::begin_run(evidence)
            }

            fn grade_in_run(
                grader: ::std::string::String,
                config: ::std::string::String,
            ) -> ::core::result::Result<$crate::Verdict, $crate::GradeError> {
                $crate::__private::grade_in_run(|evidence| {
                    Self::grade_or_unknown(&grader, &config, evidence)
                })
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::__private::export!(__EvalhostGraders with_types_in $crate::__private::bindings);
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::__private::Guest;
    use serde::Deserialize;

    struct Echo;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct EchoConfig {
        text: String,
        #[serde(default)]
        times: u32,
    }

    impl Grader for Echo {
        type Config = EchoConfig;
        const NAME: &'static str = "echo";
        const VERSION: &'static str = "0.1.0";
        const SUMMARY: &'static str = "Passes when the final text is the config text";

        fn config_schema() -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }

        fn check(config: &EchoConfig) -> Result<(), String> {
            if config.times > 3 {
                Err(format!("times must be 3 or less, not {}", config.times))
            } else {
                Ok(())
            }
        }

        fn grade(config: &EchoConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
            Ok(Verdict::pass_if(evidence.final_text == config.text, || {
                format!(
                    "echo {}: final text {}",
                    message::quote(&config.text),
                    message::quote(&evidence.final_text)
                )
            }))
        }
    }

    register_graders!(Echo);

    fn invalid(result: Result<(), GradeError>) -> String {
        match result {
            Err(GradeError::InvalidConfig(message)) => message,
            other => panic!("expected invalid-config, got {other:?}"),
        }
    }

    #[test]
    fn config_problems_are_named_without_json_positions() {
        assert_eq!(
            invalid(check_config::<Echo>(r#"{"txt": "a"}"#)),
            "unknown field `txt`, expected `text` or `times`"
        );
        assert_eq!(
            invalid(check_config::<Echo>(r#"{"times": 1}"#)),
            "missing field `text`"
        );
        assert_eq!(
            invalid(check_config::<Echo>(r#"{"text": 2}"#)),
            "invalid type: integer `2`, expected a string"
        );
        assert_eq!(
            invalid(check_config::<Echo>(r#"{"text": "a", "times": 9}"#)),
            "times must be 3 or less, not 9"
        );
        assert!(invalid(check_config::<Echo>("{")).starts_with("config is not valid JSON: "));
    }

    #[test]
    fn dispatch_by_name() {
        let evidence = Evidence {
            final_text: "hi".into(),
            ..Evidence::default()
        };
        let infos = __EvalhostGraders::list_graders();
        assert_eq!(infos.len(), 1);
        assert_eq!(infos[0].name, "echo");
        assert_eq!(__EvalhostGraders::NAMES, ["echo"]);
        assert_eq!(infos[0].config_schema, r#"{"type":"object"}"#);

        let verdict =
            __EvalhostGraders::grade("echo".into(), r#"{"text": "hi"}"#.into(), evidence.clone())
                .unwrap();
        assert_eq!(verdict, Verdict::pass());
        let verdict =
            __EvalhostGraders::grade("echo".into(), r#"{"text": "ho"}"#.into(), evidence.clone())
                .unwrap();
        assert_eq!(verdict, Verdict::fail(r#"echo "ho": final text "hi""#));

        match __EvalhostGraders::check_config("ehco".into(), "{}".into()) {
            Err(GradeError::UnknownGrader(message)) => {
                assert_eq!(
                    message,
                    r#"no grader named "ehco" in this component; it provides: echo"#
                )
            }
            other => panic!("expected unknown-grader, got {other:?}"),
        }
        assert!(matches!(
            __EvalhostGraders::grade(
                "echo".into(),
                r#"{"text": "a", "times": 4}"#.into(),
                evidence
            ),
            Err(GradeError::InvalidConfig(_))
        ));
    }

    /// The native dispatch is the component's: the same verdicts and errors, and `None`
    /// where the component answers unknown-grader.
    #[test]
    fn grade_named_is_the_component_s_dispatch() {
        let evidence = Evidence {
            final_text: "hi".into(),
            ..Evidence::default()
        };
        for config in [r#"{"text": "hi"}"#, r#"{"text": "ho"}"#, r#"{"text": 1}"#] {
            assert_eq!(
                __EvalhostGraders::grade_named("echo", config, &evidence),
                Some(__EvalhostGraders::grade(
                    "echo".into(),
                    config.into(),
                    evidence.clone()
                ))
            );
        }
        assert_eq!(
            __EvalhostGraders::grade_named("ehco", "{}", &evidence),
            None
        );
    }

    #[test]
    fn grade_in_run_grades_the_evidence_begin_run_kept() {
        let in_run = |config: &str| __EvalhostGraders::grade_in_run("echo".into(), config.into());
        assert_eq!(
            in_run(r#"{"text": "hi"}"#),
            Err(GradeError::Failed(
                "grade-in-run was called before begin-run: this instance has no evidence".into()
            ))
        );
        let evidence = |text: &str| Evidence {
            final_text: text.into(),
            ..Evidence::default()
        };
        __EvalhostGraders::begin_run(evidence("hi"));
        assert_eq!(in_run(r#"{"text": "hi"}"#), Ok(Verdict::pass()));
        // Every entry of the run grades the same kept evidence, as `grade` would.
        for config in [r#"{"text": "ho"}"#, r#"{"text": "hi", "times": 9}"#] {
            assert_eq!(
                in_run(config),
                __EvalhostGraders::grade("echo".into(), config.into(), evidence("hi"))
            );
        }
        assert!(matches!(
            __EvalhostGraders::grade_in_run("ehco".into(), "{}".into()),
            Err(GradeError::UnknownGrader(_))
        ));
        // A later begin-run replaces it.
        __EvalhostGraders::begin_run(evidence("ho"));
        assert_eq!(in_run(r#"{"text": "ho"}"#), Ok(Verdict::pass()));
    }

    /// A config prepared from `{"n": 1}`, counting its preparations.
    struct Counted(u32);

    static PREPARED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    #[derive(Deserialize)]
    struct CountedWritten {
        n: u32,
    }

    impl Prepare for Counted {
        type Written = CountedWritten;

        fn prepare(written: CountedWritten) -> Result<Self, String> {
            PREPARED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            match written.n {
                0 => Err("n must be 1 or more".into()),
                n => Ok(Counted(n)),
            }
        }
    }

    struct AtMostCalls;

    impl Grader for AtMostCalls {
        type Config = Counted;
        const NAME: &'static str = "at_most_calls";
        const VERSION: &'static str = "0.1.0";
        const SUMMARY: &'static str = "At most n calls";

        fn config_schema() -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }

        fn grade(config: &Counted, evidence: &Evidence) -> Result<Verdict, GradeError> {
            Ok(Verdict::pass_if(
                evidence.calls.len() <= config.0 as usize,
                || "too many".into(),
            ))
        }

        fn describe(config: &Counted) -> String {
            format!("at most {} calls", config.0)
        }
    }

    #[test]
    fn every_export_prepares_the_config_once() {
        use std::sync::atomic::Ordering::SeqCst;
        let before = PREPARED.load(SeqCst);
        check_config::<AtMostCalls>(r#"{"n": 2}"#).unwrap();
        assert_eq!(PREPARED.load(SeqCst), before + 1);
        let verdict = grade::<AtMostCalls>(r#"{"n": 2}"#, &Evidence::default()).unwrap();
        assert_eq!((verdict.pass, PREPARED.load(SeqCst)), (true, before + 2));
        assert_eq!(
            describe::<AtMostCalls>(r#"{"n": 2}"#).unwrap(),
            "at most 2 calls"
        );
        assert_eq!(PREPARED.load(SeqCst), before + 3);
        assert_eq!(
            invalid(check_config::<AtMostCalls>(r#"{"n": 0}"#)),
            "n must be 1 or more"
        );
    }

    #[test]
    fn verdict_helpers() {
        assert_eq!(Verdict::fail("x").with_score(1.5).score, 1.0);
        assert_eq!(Verdict::pass().with_score(f64::NAN).score, 0.0);
        let evidence = Evidence {
            calls: vec![
                ToolCall::completed(1, "bash"),
                ToolCall::completed(2, "read_file"),
            ],
            ..Evidence::default()
        };
        assert_eq!(evidence.call(2).map(|c| c.name.as_str()), Some("read_file"));
        assert!(evidence.call(0).is_none() && evidence.call(3).is_none());
        assert_eq!(
            evidence.call_names().collect::<Vec<_>>(),
            ["bash", "read_file"]
        );
    }
}
