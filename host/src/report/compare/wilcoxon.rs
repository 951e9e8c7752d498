//! The Wilcoxon signed-rank test (Wilcoxon 1945, "Individual comparisons by ranking methods",
//! Biometrics Bulletin 1(6), 80–83), two-sided, on paired differences: here, each case's pass
//! rate on B minus its pass rate on A.
//!
//! Zero differences are dropped (Wilcoxon's own rule, R's and scipy's default); the others are
//! ranked by absolute value, ties sharing their average rank. The statistic is V, the sum of
//! the ranks of the positive differences (R's `V`). With at most [`EXACT_MAX`] non-zero
//! differences the p-value is exact: the distribution of V over the 2ⁿ equally likely sign
//! assignments (the permutation distribution, which stays exact with tied ranks), counted by
//! dynamic programming over doubled ranks (whole numbers). With more, it is the normal
//! approximation with the tie correction of the variance and a continuity correction of 0.5
//! (R's `wilcox.test(..., exact = FALSE, correct = TRUE)`):
//! `z = (V − n(n+1)/4 − ½·sign) / √(n(n+1)(2n+1)/24 − Σ(t³ − t)/48)`.

use std::cmp::Ordering;

/// Up to this many non-zero differences the p-value is exact (R's `wilcox.test` switches at 50
/// too). The exact count costs n · n(n+1) steps: 127,500 at 50.
pub(crate) const EXACT_MAX: usize = 50;

/// A paired difference `numerator / denominator` (a pass-rate difference `(p_b·n_a − p_a·n_b)
/// / (n_a·n_b)`), kept exact so that equal differences of cases with different run counts
/// (1/3 and 2/6) tie as they should.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Difference {
    pub numerator: i64,
    /// Greater than 0.
    pub denominator: u64,
}

impl Difference {
    /// `passed_b / runs_b − passed_a / runs_a`, for runs on both sides (> 0).
    pub(crate) fn of_rates(passed_a: u32, runs_a: u32, passed_b: u32, runs_b: u32) -> Self {
        let numerator =
            i64::from(passed_b) * i64::from(runs_a) - i64::from(passed_a) * i64::from(runs_b);
        Self {
            numerator,
            denominator: (u64::from(runs_a) * u64::from(runs_b)).max(1),
        }
    }

    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        let left = u128::from(self.numerator.unsigned_abs()) * u128::from(other.denominator);
        let right = u128::from(other.numerator.unsigned_abs()) * u128::from(self.denominator);
        left.cmp(&right)
    }
}

/// How the p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The exact permutation distribution of V.
    Exact,
    /// The normal approximation, with tie and continuity corrections.
    Normal,
}

/// The outcome of the signed-rank test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SignedRank {
    /// V: the sum of the ranks of the positive differences.
    pub statistic: f64,
    /// Differences that were not zero (the n of the test).
    pub nonzero: usize,
    pub p_value: f64,
    pub method: Method,
}

/// The two-sided signed-rank test of `differences`. Without a non-zero difference: V = 0, p = 1.
pub(crate) fn signed_rank(differences: &[Difference]) -> SignedRank {
    let mut nonzero: Vec<Difference> = differences
        .iter()
        .copied()
        .filter(|d| d.numerator != 0)
        .collect();
    nonzero.sort_by(Difference::cmp_magnitude);
    let n = nonzero.len();
    // Each difference's rank, doubled (average ranks of ties are halves), and the tie groups'
    // sizes.
    let mut doubled_ranks = Vec::with_capacity(n);
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && nonzero[end].cmp_magnitude(&nonzero[start]) == Ordering::Equal {
            end += 1;
        }
        // Ranks start + 1 ..= end; their mean doubled is start + 1 + end.
        let doubled = (start + 1 + end) as u64;
        doubled_ranks.extend(std::iter::repeat_n(doubled, end - start));
        let t = (end - start) as f64;
        tie_term += t * t * t - t;
        start = end;
    }
    let doubled_v: u64 = nonzero
        .iter()
        .zip(&doubled_ranks)
        .filter(|(d, _)| d.numerator > 0)
        .map(|(_, r)| r)
        .sum();
    let statistic = doubled_v as f64 / 2.0;
    if n == 0 {
        return SignedRank {
            statistic,
            nonzero: 0,
            p_value: 1.0,
            method: Method::Exact,
        };
    }
    if n <= EXACT_MAX {
        return SignedRank {
            statistic,
            nonzero: n,
            p_value: exact_p(&doubled_ranks, doubled_v),
            method: Method::Exact,
        };
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let variance = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
    let p_value = if variance <= 0.0 {
        1.0
    } else {
        let centered = statistic - mean;
        let z = (centered - 0.5 * centered.signum()) / variance.sqrt();
        (2.0 * normal_cdf(-z.abs())).min(1.0)
    };
    SignedRank {
        statistic,
        nonzero: n,
        p_value,
        method: Method::Normal,
    }
}

/// `min(1, 2·min(P(V ≤ v), P(V ≥ v)))` over the 2ⁿ sign assignments of the ranks, in doubled
/// units.
fn exact_p(doubled_ranks: &[u64], doubled_v: u64) -> f64 {
    let total: u64 = doubled_ranks.iter().sum();
    let mut distribution = vec![0.0f64; total as usize + 1];
    distribution[0] = 1.0;
    let mut reach = 0usize;
    for &rank in doubled_ranks {
        let rank = rank as usize;
        reach += rank;
        for s in (0..=reach).rev() {
            let with = if s >= rank {
                distribution[s - rank]
            } else {
                0.0
            };
            distribution[s] = 0.5 * (distribution[s] + with);
        }
    }
    let v = doubled_v as usize;
    let at_most: f64 = distribution[..=v].iter().sum();
    let at_least: f64 = distribution[v..].iter().sum();
    (2.0 * at_most.min(at_least)).min(1.0)
}

/// Φ(x), the standard normal CDF: `erfc(−x/√2) / 2`.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(values: &[i64]) -> Vec<Difference> {
        values
            .iter()
            .map(|&numerator| Difference {
                numerator,
                denominator: 1,
            })
            .collect()
    }

    /// Hollander & Wolfe's depression-scale data, R's `?wilcox.test` example:
    /// `wilcox.test(x, y, paired = TRUE)` gives V = 40, p-value = 0.03906 (= 2 · 10/512);
    /// scipy 1.17.1 `wilcoxon(d, method="exact")`: p = 0.0390625. Differences in thousandths.
    #[test]
    fn exact_without_ties() {
        let result = signed_rank(&whole(&[952, -147, 1022, 430, 620, 590, 490, -80, 10]));
        assert_eq!(result.statistic, 40.0);
        assert_eq!(result.nonzero, 9);
        assert_eq!(result.method, Method::Exact);
        assert!((result.p_value - 0.0390625).abs() < 1e-12, "{result:?}");
    }

    /// With ties and a zero: the exact permutation distribution, checked by enumerating all
    /// 2¹⁰ and 2¹² sign assignments in Python (scipy's `rankdata` for the average ranks).
    #[test]
    fn exact_with_ties() {
        let result = signed_rank(&whole(&[1, 2, 2, -1, 3, 3, -2, 1, 0, 2, 4]));
        assert_eq!(result.statistic, 47.5);
        assert_eq!(result.nonzero, 10);
        assert!((result.p_value - 0.046875).abs() < 1e-12, "{result:?}");
        let result = signed_rank(&whole(&[3, -1, 2, 5, 2, -2, 4, 1, 3, 6, 0, -3, 2]));
        assert_eq!(result.statistic, 64.0);
        assert!((result.p_value - 0.05224609375).abs() < 1e-12, "{result:?}");
    }

    /// 80 differences with ties and 9 zeros (71 non-zero: the normal approximation): scipy
    /// 1.17.1 `wilcoxon(d, zero_method="wilcox", method="approx", correction=True)` gives
    /// p = 0.0045029373852225755 (its statistic is min(V, W−) = 786; V = 1770).
    #[test]
    fn normal_approximation_with_ties() {
        let d = [
            1, 1, 3, 5, -3, -2, 4, 5, -1, -1, 4, 0, -1, 4, -1, 0, 2, 1, -3, -3, 4, 3, 4, 1, 4, -1,
            1, 4, -2, -1, -2, 1, 5, -2, 0, 0, 5, -2, 1, -1, -3, 3, -3, -1, 1, 1, -2, 5, 3, 5, -3,
            3, -1, 1, 5, -1, 3, -2, -1, 5, 0, 1, -1, -2, 0, 2, 1, 3, 0, 2, 3, 5, 0, -3, 3, 1, 4, 1,
            0, -3,
        ];
        let result = signed_rank(&whole(&d));
        assert_eq!(result.nonzero, 71);
        assert_eq!(result.statistic, 1770.0);
        assert_eq!(result.method, Method::Normal);
        assert!(
            (result.p_value - 0.0045029373852225755).abs() < 1e-12,
            "{result:?}"
        );
    }

    #[test]
    fn rates_of_different_run_counts_tie_exactly() {
        // 1/3 − 0/3 and 2/6 − 0/6 are the same difference; −1/3 as well in magnitude.
        let d = [
            Difference::of_rates(0, 3, 1, 3),
            Difference::of_rates(0, 6, 2, 6),
            Difference::of_rates(1, 3, 0, 3),
            Difference::of_rates(3, 3, 3, 3),
        ];
        let result = signed_rank(&d);
        assert_eq!(result.nonzero, 3);
        // Three tied ranks of 2: V = 4.
        assert_eq!(result.statistic, 4.0);
    }

    #[test]
    fn nothing_changed_gives_one() {
        let result = signed_rank(&whole(&[0, 0, 0]));
        assert_eq!((result.statistic, result.p_value), (0.0, 1.0));
        assert_eq!(signed_rank(&[]).p_value, 1.0);
    }

    /// Φ(−1.96) = 0.024997895148220435, Φ(−3) = 0.0013498980316300933 (scipy `norm.cdf`).
    #[test]
    fn normal_cdf_known_values() {
        assert!((normal_cdf(-1.96) - 0.024997895148220435).abs() < 1e-15);
        assert!((normal_cdf(-3.0) - 0.0013498980316300933).abs() < 1e-16);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-16);
    }
}
