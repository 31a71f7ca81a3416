//! `kind = "permutation"`: every host sends one message of `bytes` to a
//! distinct host at `start_us` — the classic fabric stress test (htsim's
//! permutation). With `cross_rack` every pair sits in different racks, so all
//! traffic crosses the ToR uplinks.

use crate::{MessageSpec, WorkloadEnv};
use fabriclab_engine::{from_us, stream, ConfigError, SimRng, Stream};
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Permutation {
    /// Bytes each host sends.
    pub bytes: u64,
    /// When every message starts, microseconds.
    pub start_us: f64,
    /// Pair hosts only across racks.
    pub cross_rack: bool,
}

impl Default for Permutation {
    fn default() -> Self {
        Permutation { bytes: 2_000_000, start_us: 0.0, cross_rack: true }
    }
}

impl Permutation {
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.bytes == 0 {
            return Err(ConfigError::value("workload.bytes", 0, "a positive number of bytes"));
        }
        if !(self.start_us.is_finite() && self.start_us >= 0.0) {
            return Err(ConfigError::value("workload.start_us", self.start_us, "a number >= 0"));
        }
        Ok(())
    }

    /// The messages, one per host, in host order.
    pub(crate) fn messages(&self, env: &WorkloadEnv) -> Result<Vec<MessageSpec>, ConfigError> {
        self.check()?;
        let n = env.n_hosts as usize;
        let mut rng = stream(env.seed, Stream::Workload, u64::MAX);
        let dst = if self.cross_rack { cross_rack(&env.rack_of, &mut rng)? } else { derangement(n, &mut rng) };
        let time = from_us(self.start_us);
        Ok((0..n)
            .map(|s| MessageSpec { time, src: s as u32, dst: dst[s] as u32, size: self.bytes, incast: false })
            .collect())
    }
}

/// A uniformly random cyclic permutation (Sattolo's algorithm): no fixed points.
fn derangement(n: usize, rng: &mut SimRng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.gen_range(0..i));
    }
    // p is one n-cycle; following it maps every host to another one.
    let mut next = vec![0; n];
    for i in 0..n {
        next[p[i]] = p[(i + 1) % n];
    }
    next
}

/// A permutation in which every host's peer is in another rack: racks are
/// paired by a random cyclic permutation, and the hosts of each rack by a
/// random bijection with the hosts of the next rack. Needs equal-sized racks.
fn cross_rack(rack_of: &[u32], rng: &mut SimRng) -> Result<Vec<usize>, ConfigError> {
    let racks = rack_of.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); racks];
    for (h, &r) in rack_of.iter().enumerate() {
        members[r as usize].push(h);
    }
    if racks < 2 || members.iter().any(|m| m.len() != members[0].len()) {
        return Err(ConfigError::value(
            "workload.cross_rack",
            true,
            "false on fabrics with fewer than two racks or racks of unequal size",
        ));
    }
    let rack_next = derangement(racks, rng);
    let mut dst = vec![0; rack_of.len()];
    for r in 0..racks {
        let mut peers = members[rack_next[r]].clone();
        for i in (1..peers.len()).rev() {
            peers.swap(i, rng.gen_range(0..=i));
        }
        for (&h, &p) in members[r].iter().zip(&peers) {
            dst[h] = p;
        }
    }
    Ok(dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(n: u32, rack: u32) -> WorkloadEnv {
        WorkloadEnv {
            n_hosts: n,
            host_rate_bps: 100_000_000_000,
            rack_of: (0..n).map(|h| h / rack).collect(),
            core_ratio: 1.0,
            mss: 1460,
            seed: 3,
            end: u64::MAX,
        }
    }

    fn is_permutation(msgs: &[MessageSpec], n: usize) -> bool {
        let mut seen = vec![false; n];
        msgs.iter().all(|m| m.src != m.dst && !std::mem::replace(&mut seen[m.dst as usize], true))
    }

    #[test]
    fn every_host_sends_once_and_receives_once_across_racks() {
        let e = env(128, 4);
        let msgs = Permutation::default().messages(&e).unwrap();
        assert_eq!(msgs.len(), 128);
        assert!(is_permutation(&msgs, 128));
        assert!(msgs.iter().all(|m| e.rack_of[m.src as usize] != e.rack_of[m.dst as usize]));
        assert!(msgs.iter().all(|m| m.size == 2_000_000 && m.time == 0));
    }

    #[test]
    fn without_racks_it_is_a_derangement_and_seeded() {
        let e = env(10, 1);
        let p = Permutation { cross_rack: false, ..Default::default() };
        let a = p.messages(&e).unwrap();
        assert!(is_permutation(&a, 10));
        assert_eq!(a, p.messages(&e).unwrap());
        assert_ne!(a, p.messages(&WorkloadEnv { seed: 4, ..e.clone() }).unwrap());
        let err = Permutation::default().messages(&env(10, 10)).unwrap_err();
        assert_eq!(err.key, "workload.cross_rack");
    }
}
