//! Fisher's exact test for two binomial samples (Fisher 1935; Agresti, "Categorical Data
//! Analysis", 3rd ed., §3.5), two-sided.
//!
//! Why Fisher's and not Boschloo's: Fisher's test conditions on the total number of passes, so
//! its null distribution is one hypergeometric distribution and its p-value is a sum over at
//! most `min(n₁, n₂) + 1` tables, computed here in O(support) multiplications (no search over a
//! nuisance parameter, as Boschloo's unconditional test needs: a maximisation over the common
//! pass rate of sums over all `(n₁+1)(n₂+1)` tables, far too slow for 10,000 cases). It is the
//! test R's `fisher.test` and scipy's `fisher_exact` compute, so its numbers can be checked by
//! anyone. The price: it is conservative for small samples (its true size is below α), so a
//! verdict of "regressed" is, if anything, harder to earn.
//!
//! The two-sided p-value is R's: the probability, under the null, of every table at most as
//! likely as the observed one (with R's relative tolerance of 1e-7 for ties of likelihood).

/// Tables within this relative distance of the observed table's probability count as equally
/// likely (R's `fisher.test` uses the same: `relErr <- 1 + 10^(-7)`), so the floating-point
/// rounding of two equal probabilities never decides whether a table is counted.
const RELATIVE_TIE: f64 = 1e-7;

/// Terms smaller than this fraction of the running sum end a tail's walk: the tail's terms
/// decrease from there on, and at most 20,001 of them remain, so what is left is below 1e-14
/// of the sum.
const NEGLIGIBLE: f64 = 1e-18;

/// The two-sided p-value of Fisher's exact test for `passed_a` of `runs_a` against
/// `passed_b` of `runs_b`. Passes beyond the runs are capped at the runs. A side without runs,
/// or tables whose margins admit only one table (every run passed, or none did), give 1.
pub(crate) fn fisher_exact(passed_a: u32, runs_a: u32, passed_b: u32, runs_b: u32) -> f64 {
    let n1 = f64::from(runs_a);
    let n2 = f64::from(runs_b);
    let a = f64::from(passed_a.min(runs_a));
    let m = a + f64::from(passed_b.min(runs_b));
    let total = n1 + n2;
    // The support of X, A's passes given the margins: max(0, m − n₂) ..= min(m, n₁).
    let low = (m - n2).max(0.0);
    let high = m.min(n1);
    if high <= low {
        return 1.0;
    }
    let log_choose_total = log_choose(total, n1);
    let pmf = |x: f64| (log_choose(m, x) + log_choose(total - m, n1 - x) - log_choose_total).exp();
    let threshold = pmf(a) * (1.0 + RELATIVE_TIE);
    // The hypergeometric distribution is unimodal: walk out from its mode in both directions;
    // the tables at most as likely as the observed one are the two tails past the point where
    // the terms fall to the threshold.
    let mode = ((n1 + 1.0) * (m + 1.0) / (total + 2.0))
        .floor()
        .clamp(low, high);
    // P(X = x + 1) / P(X = x) and P(X = x − 1) / P(X = x).
    let up = |x: f64| (m - x) * (n1 - x) / ((x + 1.0) * (n2 - m + x + 1.0));
    let down = |x: f64| x * (n2 - m + x) / ((m - x + 1.0) * (n1 - x + 1.0));
    let at_mode = pmf(mode);
    if at_mode <= threshold {
        // The observed table is as likely as the most likely one: every table counts (exactly
        // 1, not a sum that rounds below it).
        return 1.0;
    }
    let mut p = 0.0;
    for (step, end) in [(1.0, high), (-1.0, low)] {
        let (mut x, mut term) = if step > 0.0 {
            (mode, at_mode)
        } else if mode > low {
            (mode - 1.0, at_mode * down(mode))
        } else {
            continue;
        };
        loop {
            if term <= threshold {
                p += term;
                if term < p * NEGLIGIBLE {
                    break;
                }
            }
            if x == end {
                break;
            }
            term *= if step > 0.0 { up(x) } else { down(x) };
            x += step;
        }
    }
    p.min(1.0)
}

/// ln C(n, k) for 0 ≤ k ≤ n (whole numbers held in f64).
fn log_choose(n: f64, k: f64) -> f64 {
    log_factorial(n) - log_factorial(k) - log_factorial(n - k)
}

/// ln n! = ln Γ(n + 1).
fn log_factorial(n: f64) -> f64 {
    libm::lgamma(n + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_relative(found: f64, expected: f64, tolerance: f64) {
        assert!(
            ((found - expected) / expected).abs() < tolerance,
            "found {found:e}, expected {expected:e}"
        );
    }

    /// Expected values from scipy 1.17.1, `scipy.stats.fisher_exact([[a, n1 - a], [b, n2 - b]])`
    /// (two-sided; the same rule as R's `fisher.test`), except where a comment derives them.
    #[test]
    fn p_values_match_scipy() {
        // 3/3 vs 0/3: the two extreme tables, each 1/C(6,3) = 1/20: p = 0.1.
        assert_relative(fisher_exact(3, 3, 0, 3), 0.1, 1e-12);
        // 10/10 vs 0/10: 2/C(20,10) = 2/184756 = 1.0825088e-5.
        assert_relative(fisher_exact(10, 10, 0, 10), 1.082508822446903e-05, 1e-10);
        assert_relative(fisher_exact(0, 10, 10, 10), 1.082508822446903e-05, 1e-10);
        // 20/20 vs 0/20: 2/C(40,20).
        assert_relative(fisher_exact(20, 20, 0, 20), 1.4508889103849688e-11, 1e-9);
        assert_relative(fisher_exact(7, 12, 2, 10), 0.09907120743034056, 1e-10);
        assert_relative(fisher_exact(45, 50, 30, 60), 5.116582166685195e-06, 1e-9);
        // n = 10,000 a side.
        assert_relative(
            fisher_exact(5000, 10000, 4800, 10000),
            0.004878795768906845,
            1e-8,
        );
        assert_relative(
            fisher_exact(9990, 10000, 9950, 10000),
            1.553682296670937e-07,
            1e-8,
        );
        assert_relative(
            fisher_exact(10000, 10000, 9990, 10000),
            0.0019487333250303282,
            1e-8,
        );
    }

    #[test]
    fn tables_with_nothing_to_tell_give_one() {
        assert_eq!(fisher_exact(3, 3, 2, 3), 1.0);
        assert_eq!(fisher_exact(2, 4, 2, 4), 1.0);
        assert_eq!(fisher_exact(1, 1, 0, 1), 1.0);
        assert_eq!(fisher_exact(0, 5, 0, 5), 1.0);
        assert_eq!(fisher_exact(5, 5, 5, 5), 1.0);
        assert_eq!(fisher_exact(0, 0, 3, 3), 1.0);
        assert_eq!(fisher_exact(0, 0, 0, 0), 1.0);
        // Passes beyond the runs are capped, not trusted.
        assert_eq!(fisher_exact(9, 3, 0, 3), fisher_exact(3, 3, 0, 3));
    }

    #[test]
    fn symmetric_and_in_range() {
        for (a, n1, b, n2) in [(1, 3, 0, 3), (4, 9, 7, 8), (0, 1, 1, 30), (17, 40, 3, 5)] {
            let p = fisher_exact(a, n1, b, n2);
            assert!((0.0..=1.0).contains(&p), "{p}");
            assert_relative(fisher_exact(b, n2, a, n1), p, 1e-12);
            assert_relative(fisher_exact(n1 - a, n1, n2 - b, n2), p, 1e-12);
        }
    }
}
