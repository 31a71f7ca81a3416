//! `kind = "permutation"`: every host sends one message of `bytes` to a
//! distinct host at `start_us` — the classic fabric stress test (htsim's
//! permutation). With `cross_rack` every pair sits in different racks, so all
//! traffic crosses the ToR uplinks; with `cross_pod` in different pods, so in a
//! three-tier fat tree every packet crosses the core (SMaRTT-REPS §4: "selected
//! so that each packet crosses the core switches"). `count` overlays several
//! independent permutations (SMaRTT-REPS Fig. 11c) and `large_bytes` makes one
//! flow bigger than the others (Figs. 11d, 13).

use crate::{MessageSpec, WorkloadEnv};
use fabriclab_engine::{from_us, stream, ConfigError, SimRng, Stream};
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Permutation {
    /// Bytes each host sends.
    pub bytes: u64,
    /// When every message starts, microseconds.
    pub start_us: f64,
    /// Pair hosts only across racks.
    pub cross_rack: bool,
    /// Pair hosts only across pods (three-tier fat trees; racks elsewhere).
    pub cross_pod: bool,
    /// Independent permutations sent at once; every host sends `count` messages.
    pub count: u32,
    /// The message of host `large_src` in the first permutation has this many bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub large_bytes: Option<u64>,
    pub large_src: u32,
}

impl Default for Permutation {
    fn default() -> Self {
        Permutation {
            bytes: 2_000_000,
            start_us: 0.0,
            cross_rack: true,
            cross_pod: false,
            count: 1,
            large_bytes: None,
            large_src: 0,
        }
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
        if !(1..=64).contains(&self.count) {
            return Err(ConfigError::value("workload.count", self.count, "an integer in [1, 64]"));
        }
        if self.large_bytes == Some(0) {
            return Err(ConfigError::value("workload.large_bytes", 0, "a positive number of bytes"));
        }
        Ok(())
    }

    /// The messages: `count` permutations one after the other, each in host order.
    pub(crate) fn messages(&self, env: &WorkloadEnv) -> Result<Vec<MessageSpec>, ConfigError> {
        self.check()?;
        let n = env.n_hosts as usize;
        if self.large_src >= env.n_hosts {
            return Err(ConfigError::value(
                "workload.large_src",
                self.large_src,
                &format!("a host id below {n} (the topology has {n} hosts)"),
            ));
        }
        let mut rng = stream(env.seed, Stream::Workload, u64::MAX);
        let pods: Vec<u32> = env.rack_of.iter().map(|r| r / env.racks_per_pod.max(1)).collect();
        let time = from_us(self.start_us);
        let mut out = Vec::with_capacity(n * self.count as usize);
        for k in 0..self.count {
            let dst = if self.cross_pod {
                cross_group(&pods, &mut rng, "workload.cross_pod")?
            } else if self.cross_rack {
                cross_group(&env.rack_of, &mut rng, "workload.cross_rack")?
            } else {
                derangement(n, &mut rng)
            };
            out.extend((0..n).map(|s| {
                let size = match self.large_bytes {
                    Some(b) if k == 0 && s as u32 == self.large_src => b,
                    _ => self.bytes,
                };
                MessageSpec { time, src: s as u32, dst: dst[s] as u32, size, incast: false }
            }));
        }
        Ok(out)
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

/// A permutation in which every host's peer is in another group (rack or
/// pod): groups are paired by a random cyclic permutation, and the hosts of
/// each group by a random bijection with the hosts of the next group. Needs
/// equal-sized groups; `key` names the option in the error.
fn cross_group(rack_of: &[u32], rng: &mut SimRng, key: &str) -> Result<Vec<usize>, ConfigError> {
    let racks = rack_of.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); racks];
    for (h, &r) in rack_of.iter().enumerate() {
        members[r as usize].push(h);
    }
    if racks < 2 || members.iter().any(|m| m.len() != members[0].len()) {
        return Err(ConfigError::value(
            key,
            true,
            "false on fabrics with fewer than two racks (pods) or racks (pods) of unequal size",
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
            racks_per_pod: 2,
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

    #[test]
    fn cross_pod_parallel_permutations_and_one_large_flow() {
        let e = env(32, 4); // 8 racks of 4, pods of 2 racks
        let p = Permutation { cross_pod: true, count: 3, large_bytes: Some(9), large_src: 5, ..Default::default() };
        let msgs = p.messages(&e).unwrap();
        assert_eq!(msgs.len(), 96);
        for perm in msgs.chunks(32) {
            assert!(is_permutation(perm, 32));
            assert!(perm.iter().all(|m| m.src / 8 != m.dst / 8), "every pair crosses pods");
        }
        let large: Vec<_> = msgs.iter().enumerate().filter(|(_, m)| m.size != 2_000_000).collect();
        assert_eq!(large.len(), 1);
        assert_eq!((large[0].0, large[0].1.src, large[0].1.size), (5, 5, 9));
        assert_ne!(msgs[..32], msgs[32..64], "independent draws");
        let err = Permutation { large_src: 32, ..Default::default() }.messages(&e).unwrap_err();
        assert_eq!(err.key, "workload.large_src");
        let err = Permutation { cross_pod: true, ..Default::default() }.messages(&env(8, 4)).unwrap_err();
        assert_eq!(err.key, "workload.cross_pod");
        assert_eq!(Permutation { count: 0, ..Default::default() }.check().unwrap_err().key, "workload.count");
    }
}
