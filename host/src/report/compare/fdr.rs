//! The Benjamini–Hochberg step-up procedure (Benjamini & Hochberg 1995, "Controlling the false
//! discovery rate", JRSS-B 57(1), 289–300), as q-values (adjusted p-values, R's
//! `p.adjust(p, "BH")`): rejecting every hypothesis whose q ≤ α controls the expected share of
//! false discoveries among the rejections at α (for independent or positively dependent tests).

/// The q-value of each p-value, in the same order: `q₍ᵢ₎ = min over j ≥ i of min(1, p₍ⱼ₎ · m / j)`
/// with the p-values sorted ascending (rank `i` of `m`). O(m log m).
pub(crate) fn q_values(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut q = vec![1.0; m];
    let mut running: f64 = 1.0;
    for (rank, &i) in order.iter().enumerate().rev() {
        let adjusted = (p[i] * m as f64 / (rank + 1) as f64).min(1.0);
        running = running.min(adjusted);
        q[i] = running;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Benjamini & Hochberg (1995), §4.2: the 15 p-values of a study of myocardial infarction
    /// treatments. At q* = 0.05 the procedure rejects the four smallest. The q-values are
    /// scipy 1.17.1's `scipy.stats.false_discovery_control(p)` (= R's `p.adjust(p, "BH")`).
    #[test]
    fn the_papers_example() {
        let p = [
            0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
            0.5719, 0.6528, 0.7590, 1.000,
        ];
        let expected = [
            0.0015,
            0.003,
            0.0095,
            0.035625,
            0.0603,
            0.06385714285714286,
            0.06385714285714286,
            0.0645,
            0.0765,
            0.486,
            0.5811818181818181,
            0.714875,
            0.7532307692307693,
            0.8132142857142857,
            1.0,
        ];
        // Shuffled: q-values follow their p-values, not their positions.
        let shuffle = [14, 3, 7, 0, 11, 5, 9, 1, 13, 2, 6, 12, 4, 10, 8];
        let shuffled: Vec<f64> = shuffle.iter().map(|&i| p[i]).collect();
        let q = q_values(&shuffled);
        for (k, &i) in shuffle.iter().enumerate() {
            assert!(
                (q[k] - expected[i]).abs() < 1e-12,
                "{i}: {} vs {}",
                q[k],
                expected[i]
            );
        }
        assert_eq!(q.iter().filter(|&&q| q <= 0.05).count(), 4);
    }

    #[test]
    fn edge_cases() {
        assert!(q_values(&[]).is_empty());
        assert_eq!(q_values(&[0.03]), [0.03]);
        assert_eq!(q_values(&[1.0, 1.0]), [1.0, 1.0]);
        // Equal p-values share one q-value.
        assert_eq!(q_values(&[0.01, 0.01, 0.01]), [0.01, 0.01, 0.01]);
    }
}
