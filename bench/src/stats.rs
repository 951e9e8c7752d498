//! Percentiles of measured durations.

use std::time::Duration;

/// p50 and p99 of a set of timings.
#[derive(Debug, Clone, Copy)]
pub struct Percentiles {
    pub p50: Duration,
    pub p99: Duration,
}

impl Percentiles {
    /// Nearest-rank percentiles of `times` (zero when empty).
    pub fn of(mut times: Vec<Duration>) -> Self {
        times.sort();
        let at = |q: f64| {
            if times.is_empty() {
                Duration::ZERO
            } else {
                let rank = ((q * times.len() as f64).ceil() as usize).clamp(1, times.len());
                times[rank - 1]
            }
        };
        Self {
            p50: at(0.50),
            p99: at(0.99),
        }
    }
}

/// Microseconds, for tables.
pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let times = (1..=100).map(Duration::from_micros).collect();
        let p = Percentiles::of(times);
        assert_eq!(p.p50, Duration::from_micros(50));
        assert_eq!(p.p99, Duration::from_micros(99));
    }
}
