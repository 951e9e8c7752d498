//! What each run cost (docs/cost.md): a live run's usage at the price of the live model, a
//! replayed recording's at the price of the model it was recorded with; and the suite's
//! `--max-cost` budget, which stops the runner from starting runs once it is spent.

use super::RunOptions;
use crate::case::Case;
use crate::config::PriceTable;
use crate::report::{BudgetReport, PriceSource, RunReport, SuiteSummary};

/// Set `report`'s costs: `cost_usd` for a live run of a priced model (what its requests
/// cost; a run that made none cost 0), `recorded_cost_usd` for a replayed recording of a
/// priced model. Replay's scripted model has no price.
pub(super) fn price_run(report: &mut RunReport, case: &Case, options: &RunOptions) {
    let Some(prices) = &options.prices else {
        return;
    };
    if let Some(live) = &options.live {
        let usage = &report.usage;
        report.cost_usd = prices.price(live.model()).map(|price| {
            price.cost(
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.output_tokens,
            )
        });
    } else {
        report.recorded_cost_usd = recorded_cost(case, prices);
    }
}

/// What the live run `case`'s script was recorded from cost, at today's price of its model:
/// the recorded usage of every step (the whole recording, whatever the replay did with it).
/// `None` without a recorded model, a step without recorded usage, or a price for the model.
fn recorded_cost(case: &Case, prices: &PriceTable) -> Option<f64> {
    let model = case.recorded_model.as_deref()?;
    let usage = case.recorded_usage()?;
    let price = prices.price(model)?;
    Some(price.cost(
        usage.input_tokens,
        usage.cached_input_tokens,
        usage.output_tokens,
    ))
}

impl RunOptions {
    /// The budget is spent: no run starts any more.
    pub(super) fn budget_spent(&self) -> bool {
        self.budget.as_ref().is_some_and(|b| b.is_spent())
    }
}

/// The report's price source (when some run has a cost) and budget.
pub(super) fn suite_costs(
    options: &RunOptions,
    summary: &SuiteSummary,
) -> (Option<PriceSource>, Option<BudgetReport>) {
    let priced = summary.cost_usd.is_some() || summary.recorded_cost_usd.is_some();
    let prices = options
        .prices
        .as_deref()
        .filter(|_| priced)
        .map(PriceSource::of);
    let budget = options.budget.as_ref().map(|b| BudgetReport {
        max_cost_usd: b.limit_usd(),
        spent_usd: b.spent_usd(),
        exhausted: b.is_spent(),
    });
    (prices, budget)
}
