//! pass@k and pass^k: the unbiased estimators (as in tau-bench) from n runs with c passes.

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
    fn degenerate_inputs_are_zero() {
        assert_eq!(pass_at_k(0, 0, 0), 0.0);
        assert_eq!(pass_hat_k(2, 1, 3), 0.0);
    }
}
