//! Statistics over seeds: the mean and a 95% confidence interval (Student's t),
//! and the sample rule for percentiles.

/// How many samples must lie beyond a percentile, over all seeds together,
/// before it is judged (1,000 samples for a p99).
pub const MIN_BEYOND: f64 = 10.0;

/// A value over seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub n: usize,
    pub mean: f64,
    /// Half the width of the 95% interval; `None` with a single seed.
    pub half_width: Option<f64>,
}

impl Estimate {
    pub fn of(values: &[f64]) -> Option<Estimate> {
        let n = values.len();
        if n == 0 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let half_width = (n > 1).then(|| {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t975(n - 1) * (var / n as f64).sqrt()
        });
        Some(Estimate { n, mean, half_width })
    }

    pub fn lo(&self) -> f64 {
        self.mean - self.half_width.unwrap_or(0.0)
    }

    pub fn hi(&self) -> f64 {
        self.mean + self.half_width.unwrap_or(0.0)
    }
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// Samples expected beyond the `percentile` (e.g. 99) among `samples` values.
pub fn beyond(samples: u64, percentile: f64) -> f64 {
    samples as f64 * (1.0 - percentile / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_interval() {
        let e = Estimate::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(e.n, 3);
        assert!((e.mean - 2.0).abs() < 1e-12);
        // sd = 1, t(2) = 4.303: half width 4.303 / sqrt(3).
        assert!((e.half_width.unwrap() - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        let one = Estimate::of(&[5.0]).unwrap();
        assert_eq!((one.half_width, one.lo(), one.hi()), (None, 5.0, 5.0));
        assert!(Estimate::of(&[]).is_none());
        assert!(Estimate::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn samples_beyond_a_percentile() {
        assert!((beyond(1000, 99.0) - 10.0).abs() < 1e-9);
        assert!(beyond(900, 99.0) < MIN_BEYOND);
        assert!((beyond(20, 50.0) - 10.0).abs() < 1e-9);
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(1000), 1.960);
    }
}
