//! Token counts: each agent step's `metrics` are its model response's usage; the
//! trajectory's `final_metrics` are checked against their sum, or carried on the last response
//! when no step records its own. Costs, token ids and log probabilities are noted.

use super::Import;
use super::schema::{FINAL_METRICS_FIELDS, METRICS_FIELDS};
use crate::session::Event;
use crate::trace::TraceError;
use crate::trace::json::{Node, Object};

/// A token count of the usage of a step or the whole trajectory.
#[derive(Default, Clone, Copy, PartialEq)]
pub(super) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
}

impl Tokens {
    /// The counts of `metrics` at `keys` (prompt, completion, cached; absent: 0), and whether
    /// it records the prompt's or the completion's.
    fn read(metrics: &Object<'_>, keys: [&str; 3]) -> Result<(Self, bool), TraceError> {
        let [input, output, cached] = keys.map(|key| metrics.parse::<u64>(key));
        let (input, output, cached) = (input?, output?, cached?);
        let tokens = Self {
            input: input.unwrap_or(0),
            output: output.unwrap_or(0),
            cached: cached.unwrap_or(0),
        };
        Ok((tokens, input.is_some() || output.is_some()))
    }
}

impl Import {
    /// A step's `metrics`: its tokens (what else it holds is noted).
    pub(super) fn metrics(&mut self, node: Node<'_>) -> Result<Tokens, TraceError> {
        let metrics = node.object()?;
        self.notes
            .unknown_fields(&metrics, METRICS_FIELDS, "steps[].metrics");
        let (tokens, recorded) = Tokens::read(
            &metrics,
            ["prompt_tokens", "completion_tokens", "cached_tokens"],
        )?;
        if recorded {
            self.usage_recorded = true;
        }
        if metrics.get("cost_usd").is_some() {
            self.notes
                .add("costs in USD (`steps[].metrics.cost_usd`)", "step");
        }
        if ["prompt_token_ids", "completion_token_ids", "logprobs"]
            .iter()
            .any(|key| metrics.get(key).is_some())
        {
            self.notes.add(
                "token ids and log probabilities (`steps[].metrics`)",
                "step",
            );
        }
        self.notes.extra(&metrics, "steps[].metrics", "step");
        self.tokens.input += tokens.input;
        self.tokens.output += tokens.output;
        self.tokens.cached += tokens.cached;
        Ok(tokens)
    }

    /// `final_metrics`: the trajectory's totals. Evidence sums the steps' usage; when no step
    /// records any, the totals go on the last model response, so the run's usage is still
    /// the trajectory's.
    pub(super) fn final_metrics(&mut self, node: Node<'_>) -> Result<(), TraceError> {
        let metrics = node.object()?;
        self.notes
            .unknown_fields(&metrics, FINAL_METRICS_FIELDS, "final_metrics");
        let (totals, recorded) = Tokens::read(
            &metrics,
            [
                "total_prompt_tokens",
                "total_completion_tokens",
                "total_cached_tokens",
            ],
        )?;
        let _: Option<u64> = metrics.parse("total_steps")?;
        if metrics.get("total_cost_usd").is_some() {
            self.notes.add(
                "the total cost in USD (`final_metrics.total_cost_usd`)",
                "run",
            );
        }
        self.notes.extra(&metrics, "final_metrics", "run");
        if !recorded {
            return Ok(());
        }
        if self.usage_recorded {
            if totals != self.tokens {
                self.notes.add(
                    "token totals (`final_metrics`) other than the sum of the steps' `metrics` (the steps' imported)",
                    "run",
                );
            }
            return Ok(());
        }
        let last = self
            .records
            .iter_mut()
            .rev()
            .find_map(|r| match &mut r.event {
                Event::ModelResponse {
                    input_tokens,
                    output_tokens,
                    cached_input_tokens,
                    ..
                } => Some((input_tokens, output_tokens, cached_input_tokens)),
                _ => None,
            });
        if let Some((input_tokens, output_tokens, cached_input_tokens)) = last {
            (*input_tokens, *output_tokens, *cached_input_tokens) =
                (totals.input, totals.output, totals.cached);
            self.usage_recorded = true;
            self.notes.add(
                "token totals (`final_metrics`) put on the last model response: no step records its own",
                "run",
            );
        }
        Ok(())
    }
}
