//! Open-loop Poisson all-to-all traffic (SIRD §5.1), with the optional incast overlay.
//!
//! Why this shape: simulations draw millions of messages, so `next()` must be
//! cheap. Each host is an independent Poisson source with its own random
//! stream (`Stream::Workload`, index = host); the sources are merged with a
//! binary heap keyed by `(time, host)`, so each message costs O(log n_hosts)
//! and allocates nothing. Per-host streams make the sequence a pure function of
//! (configuration, seed), and keep one host's draws from shifting another's.
//!
//! Each host draws, in this order: the first inter-arrival gap; then for each
//! message, the receiver (uniform among the other hosts, or among the other
//! `receivers` when they are given), the size, and the gap to its next message.
//! With `senders` given, only those hosts are sources (each still on the
//! stream of its own host number). Gaps are exponential with mean
//! `mean_size / per_host_rate`. Arrival times are accumulated in floating-point
//! picoseconds and truncated to integer picoseconds, so there is no drift.
//! Messages at equal times come out in host order; an incast event at the same
//! time as background messages comes first.

use crate::config::{LoadReference, Poisson};
use crate::incast::OverlayGen;
use crate::{MessageSpec, SizeDist, WorkloadEnv};
use fabriclab_engine::{stream, ConfigError, SimRng, Stream, Time, S};
use rand::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Fraction of a host's possible receivers that are outside its rack,
/// averaged over hosts: `mean_h (n - rack_size(h)) / (n - 1)`. With equal racks
/// this is `(n_hosts - rack_size) / (n_hosts - 1)`, e.g. 128/143 for SIRD's
/// 144 hosts in racks of 16. Zero with a single rack or fewer than two hosts.
pub fn cross_rack_fraction(rack_of: &[u32]) -> f64 {
    let n = rack_of.len();
    if n < 2 {
        return 0.0;
    }
    let mut size: HashMap<u32, u64> = HashMap::new();
    for &r in rack_of {
        *size.entry(r).or_insert(0) += 1;
    }
    let outside: u64 = rack_of.iter().map(|r| n as u64 - size[r]).sum();
    outside as f64 / (n as f64 * (n - 1) as f64)
}

/// Offered payload rate of one host in bytes/s (background and overlay
/// together), from `load` and `load_reference`; see [`LoadReference`].
pub fn per_host_bytes_per_s(cfg: &Poisson, env: &WorkloadEnv) -> Result<f64, ConfigError> {
    if env.host_rate_bps == 0 {
        return Err(ConfigError::new("workload.load", "the host link rate is 0, so no load can be offered".into()));
    }
    let host = cfg.load * env.host_rate_bps as f64 / 8.0;
    match cfg.load_reference {
        LoadReference::Host => Ok(host),
        LoadReference::Receivers => {
            let count = |l: &Option<Vec<u32>>| l.as_ref().map_or(env.n_hosts as usize, Vec::len) as f64;
            Ok(host * count(&cfg.receivers) / count(&cfg.senders))
        }
        LoadReference::Core => {
            if env.rack_of.len() != env.n_hosts as usize {
                return Err(ConfigError::new(
                    "workload.load_reference",
                    format!("needs the rack of each of the {} hosts, got {}", env.n_hosts, env.rack_of.len()),
                ));
            }
            let f_cross = cross_rack_fraction(&env.rack_of);
            if f_cross <= 0.0 {
                return Err(ConfigError::value(
                    "workload.load_reference",
                    "\"core\"",
                    "\"host\": with a single rack no traffic crosses the core",
                ));
            }
            if !(env.core_ratio.is_finite() && env.core_ratio > 0.0) {
                return Err(ConfigError::value(
                    "workload.load_reference",
                    format!("\"core\" with a core/host capacity ratio of {}", env.core_ratio),
                    "a positive core capacity",
                ));
            }
            Ok(host * env.core_ratio / f_cross)
        }
    }
}

struct HostSource {
    rng: SimRng,
    /// Next arrival, picoseconds (exact, before truncation).
    next_ps: f64,
}

pub(crate) struct PoissonGen {
    n: u32,
    /// `workload.receivers`, when given; `position[h]` is host h's index in it.
    receivers: Option<Vec<u32>>,
    position: Vec<Option<u32>>,
    sizes: SizeDist,
    mean_gap_ps: f64,
    end_ps: f64,
    hosts: Vec<HostSource>,
    heap: BinaryHeap<Reverse<(Time, u32)>>,
    overlay: Option<OverlayGen>,
    total_bytes_per_s: f64,
}

impl PoissonGen {
    pub(crate) fn new(cfg: &Poisson, env: &WorkloadEnv) -> Result<PoissonGen, ConfigError> {
        cfg.check()?;
        if env.n_hosts < 2 {
            return Err(ConfigError::new(
                "workload.kind",
                format!("\"poisson\" needs at least 2 hosts, the topology has {}", env.n_hosts),
            ));
        }
        let n = env.n_hosts;
        for (key, list) in [("workload.senders", &cfg.senders), ("workload.receivers", &cfg.receivers)] {
            if let Some(&h) = list.iter().flatten().find(|&&h| h >= n) {
                return Err(ConfigError::value(key, h, &format!("host numbers below {n} (the topology's hosts)")));
            }
        }
        let mut sends = vec![cfg.senders.is_none(); n as usize];
        for &h in cfg.senders.iter().flatten() {
            sends[h as usize] = true;
        }
        let mut position = vec![None; n as usize];
        if let Some(r) = &cfg.receivers {
            for (i, &h) in r.iter().enumerate() {
                position[h as usize] = Some(i as u32);
            }
            if r.len() == 1 && sends[r[0] as usize] {
                return Err(ConfigError::value(
                    "workload.receivers",
                    format!("{r:?}"),
                    &format!("a receiver other than sender {} for every sender", r[0]),
                ));
            }
        }
        let sizes = cfg.size_distribution()?;
        let per_host = per_host_bytes_per_s(cfg, env)?;
        let total_bytes_per_s = per_host * sends.iter().filter(|&&s| s).count() as f64;
        let (overlay, background_share) = match &cfg.incast {
            Some(o) => (Some(OverlayGen::new(o, env, total_bytes_per_s)?), 1.0 - o.share),
            None => (None, 1.0),
        };
        let background = per_host * background_share;
        let mean_gap_ps = sizes.mean() / background * S as f64;
        if !(mean_gap_ps.is_finite() && mean_gap_ps > 0.0) {
            return Err(ConfigError::value("workload.load", cfg.load, "a load giving a finite message rate"));
        }
        let end_ps = env.end as f64;
        let mut hosts = Vec::with_capacity(n as usize);
        let mut heap = BinaryHeap::with_capacity(n as usize);
        for h in 0..n {
            let mut rng = stream(env.seed, Stream::Workload, h as u64);
            let next_ps = exp_gap(&mut rng, mean_gap_ps);
            if next_ps < end_ps && sends[h as usize] {
                heap.push(Reverse((next_ps as Time, h)));
            }
            hosts.push(HostSource { rng, next_ps });
        }
        let receivers = cfg.receivers.clone();
        Ok(PoissonGen { n, receivers, position, sizes, mean_gap_ps, end_ps, hosts, heap, overlay, total_bytes_per_s })
    }

    pub(crate) fn offered_bytes_per_s(&self) -> f64 {
        self.total_bytes_per_s
    }

    pub(crate) fn sizes(&self) -> &SizeDist {
        &self.sizes
    }

    #[inline]
    pub(crate) fn next(&mut self) -> Option<MessageSpec> {
        if let Some(ov) = &mut self.overlay {
            if let Some(t) = ov.peek_time() {
                let background_first = matches!(self.heap.peek(), Some(top) if top.0 .0 < t);
                if !background_first {
                    return ov.next_message();
                }
            }
        }
        let Reverse((time, src)) = self.heap.pop()?;
        let host = &mut self.hosts[src as usize];
        let dst = match &self.receivers {
            None => uniform_other(&mut host.rng, self.n, src),
            Some(r) => match self.position[src as usize] {
                None => r[host.rng.gen_range(0..r.len())],
                Some(i) => r[uniform_other(&mut host.rng, r.len() as u32, i) as usize],
            },
        };
        let size = self.sizes.sample(&mut host.rng);
        host.next_ps += exp_gap(&mut host.rng, self.mean_gap_ps);
        if host.next_ps < self.end_ps {
            self.heap.push(Reverse((host.next_ps as Time, src)));
        }
        Some(MessageSpec { time, src, dst, size, incast: false })
    }
}

/// A number in `0..n` other than `not`, uniformly.
#[inline]
fn uniform_other(rng: &mut SimRng, n: u32, not: u32) -> u32 {
    let x = rng.gen_range(0..n - 1);
    x + (x >= not) as u32
}

/// An exponential gap with mean `mean_ps`.
#[inline]
fn exp_gap(rng: &mut SimRng, mean_ps: f64) -> f64 {
    // 1 - [0, 1) is in (0, 1], so the logarithm is finite.
    -(1.0 - rng.gen::<f64>()).ln() * mean_ps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_rack_fraction_matches_sird() {
        let racks: Vec<u32> = (0..144).map(|h| h / 16).collect();
        assert!((cross_rack_fraction(&racks) - 128.0 / 143.0).abs() < 1e-15);
        assert_eq!(cross_rack_fraction(&[0, 0, 0]), 0.0);
        assert_eq!(cross_rack_fraction(&[5]), 0.0);
        assert_eq!(cross_rack_fraction(&[0, 1]), 1.0);
        // Unequal racks: sizes 1 and 3 -> (3 + 3*1) / (4*3).
        assert!((cross_rack_fraction(&[7, 9, 9, 9]) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn exp_gap_has_the_right_mean() {
        let mut rng = stream(9, Stream::Workload, 0);
        let n = 200_000;
        let sum: f64 = (0..n).map(|_| exp_gap(&mut rng, 1000.0)).sum();
        let mean = sum / n as f64;
        assert!((mean - 1000.0).abs() < 10.0, "{mean}"); // 4.5 standard errors
    }
}
