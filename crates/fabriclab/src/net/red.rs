//! RED-style probabilistic ECN marking, as DCQCN's switches do it: no marks up
//! to Kmin, a probability rising linearly to Pmax at Kmax, certain marks above.
//! Each switch draws from its own seeded stream, so runs stay deterministic.

use fabriclab_engine::{stream, SimRng, Stream};
use rand::Rng;

pub struct Red {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
    pub at_dequeue: bool,
    rng: Vec<SimRng>,
}

impl Red {
    pub fn new(kmin: u64, kmax: u64, pmax: f64, at_dequeue: bool, n_switches: usize, seed: u64) -> Self {
        let rng = (0..n_switches).map(|s| stream(seed, Stream::Switch, s as u64)).collect();
        Red { kmin, kmax, pmax, at_dequeue, rng }
    }

    /// Marking probability for a queue of `q` bytes.
    pub fn probability(&self, q: u64) -> f64 {
        if q <= self.kmin {
            0.0
        } else if q > self.kmax {
            1.0
        } else {
            self.pmax * (q - self.kmin) as f64 / (self.kmax - self.kmin) as f64
        }
    }

    /// Whether switch number `switch` marks a packet seeing a queue of `q` bytes.
    #[inline]
    pub fn mark(&mut self, switch: usize, q: u64) -> bool {
        if q <= self.kmin {
            return false;
        }
        if q > self.kmax {
            return true;
        }
        self.rng[switch].gen::<f64>() < self.probability(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probability_curve() {
        let r = Red::new(1000, 3000, 0.2, false, 1, 1);
        assert_eq!(r.probability(1000), 0.0);
        assert!((r.probability(2000) - 0.1).abs() < 1e-12);
        assert!((r.probability(3000) - 0.2).abs() < 1e-12);
        assert_eq!(r.probability(3001), 1.0);
    }

    #[test]
    fn marks_with_the_configured_probability() {
        let mut r = Red::new(1000, 3000, 0.2, false, 2, 9);
        let n = 100_000;
        let marks = (0..n).filter(|_| r.mark(1, 2000)).count() as f64 / n as f64;
        assert!((marks - 0.1).abs() < 0.005, "{marks}");
    }
}
