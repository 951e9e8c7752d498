//! pass@k and pass^k: the unbiased estimators (as in tau-bench) from n runs with c passes;
//! and the Wilson score interval on a pass rate.

/// z for a two-sided 95% interval.
const Z_95: f64 = 1.959_963_984_540_054;

/// Probability that at least one of `k` runs drawn from the `n` made passes:
/// `1 − C(n−c, k) / C(n, k)`. Requires `k ≤ n`; returns 0 when `n` or `k` is 0.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> f64 {
    if n == 0 || k == 0 || k > n || c > n {
        return 0.0;
    }
    1.0 - choose_ratio(n - c, n, k)
}

/// Probability that all of `k` runs drawn from the `n` made pass: `C(c, k) / C(n, k)`.
/// Requires `k ≤ n`; returns 0 when `n` or `k` is 0.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> f64 {
    if n == 0 || k == 0 || k > n || c > n {
        return 0.0;
    }
    choose_ratio(c, n, k)
}

/// `C(a, k) / C(n, k)` for `a ≤ n`, as a product of `k` ratios (no overflow for n ≤ 2^32).
fn choose_ratio(a: u32, n: u32, k: u32) -> f64 {
    if k > a {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * f64::from(a - i) / f64::from(n - i))
}

/// The Wilson score 95% interval `(low, high)` on the pass rate `c / n`.
///
/// Unlike the normal approximation it stays inside `[0, 1]` and is informative at `c = 0`
/// and `c = n`. With no runs (`n = 0`) nothing is known: `(0, 1)`. `c` is capped at `n`.
pub(crate) fn wilson_interval(n: u32, c: u32) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = f64::from(n);
    let p = f64::from(c).min(n) / n;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((center - half).max(0.0), (center + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn five_runs_three_passes_k_two() {
        assert!(close(pass_at_k(5, 3, 2), 0.9));
        assert!(close(pass_hat_k(5, 3, 2), 0.3));
    }

    #[test]
    fn k_equal_n_means_at_least_once_and_every_time() {
        assert!(close(pass_at_k(3, 2, 3), 1.0));
        assert!(close(pass_hat_k(3, 2, 3), 0.0));
        assert!(close(pass_at_k(3, 0, 3), 0.0));
        assert!(close(pass_hat_k(3, 3, 3), 1.0));
    }

    #[test]
    fn k_below_n_by_hand() {
        // n=4, c=2, k=2: pass@k = 1 - C(2,2)/C(4,2) = 1 - 1/6; pass^k = C(2,2)/C(4,2) = 1/6.
        assert!(close(pass_at_k(4, 2, 2), 5.0 / 6.0));
        assert!(close(pass_hat_k(4, 2, 2), 1.0 / 6.0));
        // n=5, c=3, k=1: both are the pass rate.
        assert!(close(pass_at_k(5, 3, 1), 0.6));
        assert!(close(pass_hat_k(5, 3, 1), 0.6));
        // n=10, c=9, k=3: pass@k = 1 (at most one failure among 3), pass^k = C(9,3)/C(10,3) = 84/120.
        assert!(close(pass_at_k(10, 9, 3), 1.0));
        assert!(close(pass_hat_k(10, 9, 3), 0.7));
    }

    fn near(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 5e-5 && (a.1 - b.1).abs() < 5e-5
    }

    #[test]
    fn wilson_by_hand() {
        // n=10, c=5: center 0.5, half = 1.96*sqrt(0.025 + 0.0096)/1.3841 = 0.2366.
        assert!(
            near(wilson_interval(10, 5), (0.2366, 0.7634)),
            "{:?}",
            wilson_interval(10, 5)
        );
        // n=5, c=3: (0.2307, 0.8824).
        assert!(
            near(wilson_interval(5, 3), (0.2307, 0.8824)),
            "{:?}",
            wilson_interval(5, 3)
        );
        // All passed: the upper bound is 1, the lower n/(n+z^2): 3/(3+3.8415) = 0.4385.
        assert!(
            near(wilson_interval(3, 3), (0.4385, 1.0)),
            "{:?}",
            wilson_interval(3, 3)
        );
        // None passed: mirrored.
        assert!(
            near(wilson_interval(3, 0), (0.0, 0.5615)),
            "{:?}",
            wilson_interval(3, 0)
        );
        // One run that passed: 1/(1+3.8415) = 0.2065.
        assert!(
            near(wilson_interval(1, 1), (0.2065, 1.0)),
            "{:?}",
            wilson_interval(1, 1)
        );
    }

    #[test]
    fn wilson_without_runs_knows_nothing() {
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
        let (low, high) = wilson_interval(2, 7);
        assert!(close(high, 1.0) && low > 0.0);
    }

    #[test]
    fn degenerate_inputs_are_zero() {
        assert_eq!(pass_at_k(0, 0, 0), 0.0);
        assert_eq!(pass_hat_k(2, 1, 3), 0.0);
    }
}
