//! How many runs a side would detect a given change of a pass rate: the sample size for
//! comparing two proportions with the normal approximation and Fleiss's continuity correction
//! (Fleiss, Levin & Paik, "Statistical Methods for Rates and Proportions", 3rd ed., 2003,
//! §4.2, eqs. 4.14 and 4.19):
//!
//! ```text
//! n′ = (z₁₋α/₂ · √(2 p̄ q̄) + z₁₋β · √(p₁q₁ + p₂q₂))² / Δ²
//! n  = n′/4 · (1 + √(1 + 4 / (n′ Δ)))²          (continuity-corrected)
//! ```
//!
//! with `Δ = |p₂ − p₁|`, `p̄ = (p₁ + p₂)/2`, `q = 1 − p`. The corrected n approximates what
//! Fisher's exact test (the per-case test) needs; the uncorrected n′ is what a z-test would
//! need, and is smaller. This is the standard formula rather than the power of Fisher's test by
//! exact enumeration: the answer is "how many runs to plan", for which the approximation is
//! the one textbooks and power calculators give, and it costs nothing per case.

/// z₀.₉₇₅: a two-sided test at α = 0.05.
const Z_TWO_SIDED_05: f64 = 1.959_963_984_540_054;
/// z₀.₈: power 0.8.
const Z_POWER_80: f64 = 0.841_621_233_572_914_3;

/// The change of a pass rate a case's runs should detect: 20 points.
pub const DETECTABLE_CHANGE: f64 = 0.2;

/// Runs a side that detect a change of [`DETECTABLE_CHANGE`] with power 0.8 at α = 0.05
/// (two-sided), around `pooled`, the pass rate of both sides together: the two rates are
/// `pooled ∓ 0.1`, moved together so both stay in [0, 1] (0 and 0.2 below a pooled rate of
/// 0.1). Between 44 (at the edges) and 107 (around 0.5).
pub(crate) fn runs_needed(pooled: f64) -> u32 {
    let half = DETECTABLE_CHANGE / 2.0;
    let center = if pooled.is_finite() {
        pooled.clamp(half, 1.0 - half)
    } else {
        0.5
    };
    let n = fleiss(center - half, center + half, true);
    // At most 107 for these rates: the cast cannot overflow.
    n.ceil() as u32
}

/// Runs a side to tell `p1` from `p2` with power 0.8 at α = 0.05, two-sided (Fleiss's
/// formula; with his continuity correction when `corrected`). `p1 ≠ p2`, both in [0, 1].
pub(crate) fn fleiss(p1: f64, p2: f64, corrected: bool) -> f64 {
    let delta = (p2 - p1).abs();
    let mean = (p1 + p2) / 2.0;
    let root = Z_TWO_SIDED_05 * (2.0 * mean * (1.0 - mean)).sqrt()
        + Z_POWER_80 * (p1 * (1.0 - p1) + p2 * (1.0 - p2)).sqrt();
    let n = root * root / (delta * delta);
    if corrected {
        n / 4.0 * (1.0 + (1.0 + 4.0 / (n * delta)).sqrt()).powi(2)
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 50% vs 70%, α = 0.05 two-sided, power 0.8: 93 a group without the continuity
    /// correction (the textbook z-test figure; R's `power.prop.test(p1 = .5, p2 = .7,
    /// power = .8)` solves the same equation), 103 with it. The raw numbers were computed
    /// independently in Python with scipy's `norm.ppf` for the quantiles: 92.99884482754571
    /// and 102.75554896418836.
    #[test]
    fn fifty_against_seventy_percent() {
        assert!((fleiss(0.5, 0.7, false) - 92.99884482754571).abs() < 1e-9);
        assert!((fleiss(0.5, 0.7, true) - 102.75554896418836).abs() < 1e-9);
        assert_eq!(fleiss(0.5, 0.7, false).ceil(), 93.0);
        assert_eq!(fleiss(0.5, 0.7, true).ceil(), 103.0);
    }

    #[test]
    fn twenty_points_need_44_to_107_runs() {
        // 0.4 vs 0.6: 106.689...; 0 vs 0.2 (and 0.8 vs 1): 43.54...
        assert_eq!(runs_needed(0.5), 107);
        assert_eq!(runs_needed(0.0), 44);
        assert_eq!(runs_needed(0.05), 44);
        assert_eq!(runs_needed(1.0), 44);
        assert_eq!(runs_needed(f64::NAN), 107);
        let mut last = 0;
        for step in 0..=10 {
            let n = runs_needed(f64::from(step) / 20.0);
            assert!(n >= last, "the need grows towards 0.5");
            last = n;
        }
    }
}
