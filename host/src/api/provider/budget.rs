//! `--max-cost`: a live suite's budget, shared by every request to the provider. Each
//! attempt (retries included) is checked against it before it is sent, and each answer's
//! usage is charged to it at the model's price as it arrives. Once what was spent reaches the
//! limit, every further attempt is refused ([`super::ProviderError::BudgetSpent`]) and the
//! runner starts no further run (docs/cost.md).
//!
//! Requests already in flight when the limit is reached still finish and are charged, so the
//! spend can pass the limit by what those cost (at most `max_concurrency` answers). An attempt
//! that fails reports no usage, and is charged nothing.

use std::sync::Mutex;

use crate::config::ModelPrice;

/// A shared budget in USD.
#[derive(Debug)]
pub struct CostBudget {
    limit_usd: f64,
    price: ModelPrice,
    spent_usd: Mutex<f64>,
}

impl CostBudget {
    /// A budget of `limit_usd` for requests priced at `price`.
    pub fn new(limit_usd: f64, price: ModelPrice) -> Self {
        Self {
            limit_usd,
            price,
            spent_usd: Mutex::new(0.0),
        }
    }

    /// The limit, USD.
    pub fn limit_usd(&self) -> f64 {
        self.limit_usd
    }

    /// What was spent so far, USD.
    pub fn spent_usd(&self) -> f64 {
        *self.spent_usd.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What was spent reached the limit: no request may be sent any more.
    pub fn is_spent(&self) -> bool {
        self.spent_usd() >= self.limit_usd
    }

    /// Charge one answer's usage.
    pub(crate) fn charge(&self, input_tokens: u64, cached_input_tokens: u64, output_tokens: u64) {
        let cost = self
            .price
            .cost(input_tokens, cached_input_tokens, output_tokens);
        *self.spent_usd.lock().unwrap_or_else(|e| e.into_inner()) += cost;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_spent_once_charges_reach_the_limit() {
        let price = ModelPrice {
            input: 1.0,
            cached_input: 0.5,
            output: 2.0,
        };
        let budget = CostBudget::new(0.004, price);
        assert!(!budget.is_spent());
        // 1,000 input (500 cached) + 1,000 output: 0.0005 + 0.00025 + 0.002.
        budget.charge(1_000, 500, 1_000);
        assert!((budget.spent_usd() - 0.00275).abs() < 1e-12);
        assert!(!budget.is_spent());
        budget.charge(1_000, 500, 1_000);
        assert!(budget.is_spent(), "{}", budget.spent_usd());
    }
}
