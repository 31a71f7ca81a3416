//! RED-style probabilistic ECN marking, as DCQCN's switches do it: no marks up
//! to Kmin, a probability rising linearly to Pmax at Kmax, certain marks above.
//! Each switch draws from its own seeded stream, so runs stay deterministic.
//! Ports that face another switch may have their own Kmin and Kmax (htsim sets
//! them as a share of each queue, and its oversubscribed fabrics shrink those
//! queues).

use fabriclab_engine::{stream, SimRng, Stream};
use rand::Rng;

pub struct Red {
    /// (Kmin, Kmax) at host-facing ports, then at switch-facing ports.
    pub thresholds: [(u64, u64); 2],
    pub pmax: f64,
    pub at_dequeue: bool,
    rng: Vec<SimRng>,
}

impl Red {
    pub fn new(thresholds: [(u64, u64); 2], pmax: f64, at_dequeue: bool, n_switches: usize, seed: u64) -> Self {
        let rng = (0..n_switches).map(|s| stream(seed, Stream::Switch, s as u64)).collect();
        Red { thresholds, pmax, at_dequeue, rng }
    }

    /// Marking probability for a queue of `q` bytes at a port that faces a
    /// switch (`fabric`) or a host.
    pub fn probability(&self, q: u64, fabric: bool) -> f64 {
        let (kmin, kmax) = self.thresholds[fabric as usize];
        if q <= kmin {
            0.0
        } else if q > kmax {
            1.0
        } else {
            self.pmax * (q - kmin) as f64 / (kmax - kmin) as f64
        }
    }

    /// Whether switch number `switch` marks a packet seeing a queue of `q`
    /// bytes at a port that faces a switch (`fabric`) or a host.
    #[inline]
    pub fn mark(&mut self, switch: usize, q: u64, fabric: bool) -> bool {
        let (kmin, kmax) = self.thresholds[fabric as usize];
        if q <= kmin {
            return false;
        }
        if q > kmax {
            return true;
        }
        self.rng[switch].gen::<f64>() < self.probability(q, fabric)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probability_curve() {
        let r = Red::new([(1000, 3000); 2], 0.2, false, 1, 1);
        assert_eq!(r.probability(1000, false), 0.0);
        assert!((r.probability(2000, false) - 0.1).abs() < 1e-12);
        assert!((r.probability(3000, false) - 0.2).abs() < 1e-12);
        assert_eq!(r.probability(3001, false), 1.0);
    }

    #[test]
    fn marks_with_the_configured_probability() {
        let mut r = Red::new([(1000, 3000); 2], 0.2, false, 2, 9);
        let n = 100_000;
        let marks = (0..n).filter(|_| r.mark(1, 2000, false)).count() as f64 / n as f64;
        assert!((marks - 0.1).abs() < 0.005, "{marks}");
    }

    #[test]
    fn switch_facing_ports_mark_on_their_own_thresholds() {
        // Host-facing ports 20% / 80% of 1,000,000 B; switch-facing ones of a quarter of that.
        let mut r = Red::new([(200_000, 800_000), (50_000, 200_000)], 1.0, true, 1, 3);
        assert_eq!(r.probability(100_000, false), 0.0);
        assert!((r.probability(100_000, true) - 1.0 / 3.0).abs() < 1e-12);
        assert!(!r.mark(0, 200_000, false));
        assert!(r.mark(0, 200_001, true));
    }
}
