//! Cost in reports (docs/cost.md): each run's `cost_usd` (its usage at the price table's price
//! of its model) and `recorded_cost_usd` (a replayed recording: what the live run it replays
//! cost, at today's prices), summed per case and per suite.
//!
//! A sum is of the runs whose cost is known, with a count of those whose cost is not
//! (`runs_without_price`): a suite's cost is never a guess, and never 0 for an unknown model.
//! A report in which no run has a cost (replay, or a model without a price) has no cost at
//! all: `cost_usd` absent and `runs_without_price` 0.

use serde::{Deserialize, Serialize};

use super::{CaseReport, CaseSummary, RunReport};

/// The prices a report's costs were computed with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceSource {
    /// The date of evalhost's default price table (`2026-12-01`).
    pub as_of: String,
    /// The configuration files whose `[prices]` were over it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

impl PriceSource {
    /// The source of `table`'s prices.
    pub fn of(table: &crate::config::PriceTable) -> Self {
        Self {
            as_of: table.as_of().to_owned(),
            files: table
                .files()
                .iter()
                .map(|f| f.display().to_string())
                .collect(),
        }
    }

    /// `prices as of 2026-12-01` (`, [prices] of evalhost.toml` when a file set some).
    pub(crate) fn text(&self) -> String {
        let mut text = format!("prices as of {}", self.as_of);
        if !self.files.is_empty() {
            text.push_str(&format!(", [prices] of {}", self.files.join(", ")));
        }
        text
    }
}

/// `--max-cost`: the live suite's budget and what was spent of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BudgetReport {
    /// The limit, USD.
    pub max_cost_usd: f64,
    /// What every provider request of the suite cost (retries and runs that did not finish
    /// included), USD.
    pub spent_usd: f64,
    /// The budget was reached: model requests were refused from then on and the suite
    /// stopped starting runs (`interrupted` is set; `cancelled` lists the runs not made).
    pub exhausted: bool,
}

/// Costs summed over runs (or cases).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CostSum {
    cost: Option<f64>,
    without_price: u32,
    recorded: Option<f64>,
}

fn add(sum: &mut Option<f64>, value: Option<f64>) {
    if let Some(value) = value {
        *sum = Some(sum.unwrap_or(0.0) + value);
    }
}

impl CostSum {
    /// The runs of one case.
    pub(crate) fn of_runs(runs: &[RunReport]) -> Self {
        let mut sum = Self::default();
        for run in runs {
            add(&mut sum.cost, run.cost_usd);
            sum.without_price += u32::from(run.cost_usd.is_none());
            add(&mut sum.recorded, run.recorded_cost_usd);
        }
        sum.finish()
    }

    /// Add a case's summary: its runs without a price count, and all its runs when none of
    /// them had one.
    pub(crate) fn add_case(&mut self, case: &CaseSummary) {
        add(&mut self.cost, case.cost_usd);
        self.without_price += if case.cost_usd.is_some() {
            case.runs_without_price
        } else {
            case.runs
        };
        add(&mut self.recorded, case.recorded_cost_usd);
    }

    /// The cases' sum.
    pub(crate) fn of_cases(cases: &[CaseReport]) -> Self {
        let mut sum = Self::default();
        for case in cases {
            sum.add_case(&case.summary);
        }
        sum.finish()
    }

    /// Without any cost, no run is "without a price": the report has no cost at all.
    pub(crate) fn finish(mut self) -> Self {
        if self.cost.is_none() {
            self.without_price = 0;
        }
        self
    }

    /// `(cost_usd, runs_without_price, recorded_cost_usd)`.
    pub(crate) fn parts(self) -> (Option<f64>, u32, Option<f64>) {
        (self.cost, self.without_price, self.recorded)
    }
}

/// `$0.0123`: four decimals below $10, two from there.
pub(crate) fn usd(value: f64) -> String {
    if value.abs() < 10.0 {
        format!("${value:.4}")
    } else {
        format!("${value:.2}")
    }
}

/// The text report's cost lines: `Cost: $0.0123 (prices as of 2026-12-01; 3 runs without a
/// price).`, `Recorded cost: ...`, `Budget: ...`; empty for a report without cost.
pub(crate) fn text_lines(report: &super::SuiteReport) -> String {
    let s = &report.summary;
    let prices = report
        .prices
        .as_ref()
        .map_or_else(|| "prices unknown".to_owned(), PriceSource::text);
    let mut out = String::new();
    if let Some(cost) = s.cost_usd {
        let without = match s.runs_without_price {
            0 => String::new(),
            1 => "; 1 run without a price".to_owned(),
            n => format!("; {n} runs without a price"),
        };
        out.push_str(&format!("Cost: {} ({prices}{without}).\n", usd(cost)));
    }
    if let Some(recorded) = s.recorded_cost_usd {
        out.push_str(&format!(
            "Recorded cost: {} (what the live runs these cases replay cost, at {prices}).\n",
            usd(recorded)
        ));
    }
    if let Some(budget) = &report.budget {
        let state = if budget.exhausted {
            "reached: model requests were refused from then on and the suite stopped starting runs"
        } else {
            "not reached"
        };
        out.push_str(&format!(
            "Budget: --max-cost {} {state} ({} spent, retries included).\n",
            usd(budget.max_cost_usd),
            usd(budget.spent_usd)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{case, suite};

    fn priced(name: &str, costs: &[Option<f64>]) -> CaseReport {
        let mut case = case(name, costs.len() as u32);
        for (run, cost) in case.runs.iter_mut().zip(costs) {
            run.cost_usd = *cost;
        }
        case.summary = CaseSummary::of(&case.runs);
        case
    }

    #[test]
    fn sums_count_runs_without_a_price_only_when_some_run_has_one() {
        let a = priced("a", &[Some(0.25), None, Some(0.5)]);
        assert_eq!(a.summary.cost_usd, Some(0.75));
        assert_eq!(a.summary.runs_without_price, 1);
        let b = priced("b", &[None, None]);
        assert_eq!(
            (b.summary.cost_usd, b.summary.runs_without_price),
            (None, 0)
        );
        let report = suite(vec![a.clone(), b.clone()], vec![]);
        assert_eq!(report.summary.cost_usd, Some(0.75));
        // a's one, and both of b's.
        assert_eq!(report.summary.runs_without_price, 3);
        let unpriced = suite(vec![b], vec![]);
        assert_eq!(
            (
                unpriced.summary.cost_usd,
                unpriced.summary.runs_without_price
            ),
            (None, 0)
        );
        let json = serde_json::to_value(unpriced.summary).unwrap();
        assert!(json.get("cost_usd").is_none() && json.get("runs_without_price").is_none());
        // Zero is a cost (a priced model that was free), not an unknown one.
        let free = priced("free", &[Some(0.0)]);
        assert_eq!(free.summary.cost_usd, Some(0.0));
    }

    #[test]
    fn the_text_says_the_cost_its_prices_and_the_runs_without_one() {
        let mut report = suite(
            vec![priced("a", &[Some(0.0123), None]), priced("b", &[None])],
            vec![],
        );
        report.prices = Some(PriceSource {
            as_of: "2026-12-01".into(),
            files: vec![],
        });
        assert_eq!(
            text_lines(&report),
            "Cost: $0.0123 (prices as of 2026-12-01; 2 runs without a price).\n"
        );
        report.budget = Some(BudgetReport {
            max_cost_usd: 0.01,
            spent_usd: 0.0123,
            exhausted: true,
        });
        assert!(
            text_lines(&report).ends_with(
                "Budget: --max-cost $0.0100 reached: model requests were refused from then on and the suite stopped starting runs ($0.0123 spent, retries included).\n"
            ),
            "{}",
            text_lines(&report)
        );
        assert_eq!(usd(12.345), "$12.35");
        assert_eq!(text_lines(&suite(vec![priced("c", &[None])], vec![])), "");
    }
}
