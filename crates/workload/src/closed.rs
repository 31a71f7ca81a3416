//! Closed-loop workloads: the next message starts when an earlier one
//! completes, so the simulator reports completions back
//! ([`crate::Workload::on_complete`]).
//!
//! - `kind = "all_to_all"`: every host sends `bytes` to every other host,
//!   keeping `window` messages outstanding (SMaRTT-REPS §4.5, Fig. 12:
//!   "windowed all-to-all ... at least k active flows per node"). Host i's
//!   j-th message goes to host (i + j) mod n, j = 1..n-1, the usual shifted
//!   schedule, so at every step the destinations form permutations.
//! - `kind = "ring_allreduce"`: a ring AllReduce of `bytes` per rank over
//!   `ranks` hosts (SMaRTT-REPS §4.1.1: a 4 MB ring AllReduce "with the
//!   logical ring laid out such that all connections traverse the Tier 1
//!   spine"). 2(N-1) steps; in step s rank r sends chunk (r - s) mod N of
//!   the buffer to rank r + 1. Rank r starts step s + 1 once its own step-s
//!   send and the step-s chunk from rank r - 1 have both completed (the data
//!   dependency of the reduce-scatter and all-gather phases).
//!
//! Message ids are the order in which [`ClosedLoop::next`] hands messages
//! out, which is the order the simulator starts them.

use crate::{MessageSpec, WorkloadEnv};
use fabriclab_engine::{from_us, ConfigError, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AllToAll {
    /// Bytes each host sends to each other host.
    pub bytes: u64,
    /// Messages each host keeps outstanding (k).
    pub window: u32,
    pub start_us: f64,
}

impl Default for AllToAll {
    fn default() -> Self {
        AllToAll { bytes: 1_000_000, window: 4, start_us: 0.0 }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RingAllreduce {
    /// Bytes of the buffer each rank reduces (the AllReduce size).
    pub bytes: u64,
    /// Number of ranks; absent = every host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    pub start_us: f64,
}

impl Default for RingAllreduce {
    fn default() -> Self {
        // SMaRTT-REPS §4.1.1: "4 MB ring-based AllReduce".
        RingAllreduce { bytes: 4_000_000, ranks: None, start_us: 0.0 }
    }
}

pub(crate) fn check_start(start_us: f64) -> Result<(), ConfigError> {
    if !(start_us.is_finite() && (0.0..1.8e13).contains(&start_us)) {
        return Err(ConfigError::value("workload.start_us", start_us, "a time in microseconds, >= 0"));
    }
    Ok(())
}

impl AllToAll {
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.bytes == 0 {
            return Err(ConfigError::value("workload.bytes", 0, "a positive number of bytes"));
        }
        if self.window == 0 {
            return Err(ConfigError::value("workload.window", 0, "an integer >= 1"));
        }
        check_start(self.start_us)
    }
}

impl RingAllreduce {
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.ranks.is_some_and(|r| r < 2) {
            return Err(ConfigError::value("workload.ranks", self.ranks.unwrap_or(0), "an integer >= 2"));
        }
        if self.bytes < self.ranks.unwrap_or(1) as u64 || self.bytes == 0 {
            return Err(ConfigError::value(
                "workload.bytes",
                self.bytes,
                "a positive number of bytes, at least one per rank",
            ));
        }
        check_start(self.start_us)
    }
}

enum Pattern {
    AllToAll {
        bytes: u64,
        n: u32,
        /// Per host: offset of its next destination (1..n).
        next: Vec<u32>,
    },
    Ring {
        bytes: u64,
        /// Hosts in ring order.
        ring: Vec<u32>,
        /// Per rank: steps whose send completed, steps received, steps started.
        sent: Vec<u32>,
        received: Vec<u32>,
        started: Vec<u32>,
    },
}

/// A closed-loop message source.
pub(crate) struct ClosedLoop {
    pattern: Pattern,
    ready: VecDeque<MessageSpec>,
    /// Per message handed out: its sender (all-to-all) or rank and step (ring).
    tags: Vec<(u32, u32)>,
    total_bytes: u64,
}

impl ClosedLoop {
    pub(crate) fn all_to_all(cfg: &AllToAll, env: &WorkloadEnv) -> Result<ClosedLoop, ConfigError> {
        cfg.check()?;
        let n = env.n_hosts;
        if cfg.window > n - 1 {
            return Err(ConfigError::value(
                "workload.window",
                cfg.window,
                &format!("at most {} (the other hosts)", n - 1),
            ));
        }
        let time = from_us(cfg.start_us);
        let mut c = ClosedLoop {
            pattern: Pattern::AllToAll { bytes: cfg.bytes, n, next: vec![cfg.window + 1; n as usize] },
            ready: VecDeque::new(),
            tags: Vec::new(),
            total_bytes: cfg.bytes * n as u64 * (n as u64 - 1),
        };
        for j in 1..=cfg.window {
            for i in 0..n {
                c.ready.push_back(MessageSpec { time, src: i, dst: (i + j) % n, size: cfg.bytes, incast: false });
            }
        }
        Ok(c)
    }

    pub(crate) fn ring_allreduce(cfg: &RingAllreduce, env: &WorkloadEnv) -> Result<ClosedLoop, ConfigError> {
        cfg.check()?;
        let ranks = cfg.ranks.unwrap_or(env.n_hosts);
        if ranks > env.n_hosts {
            return Err(ConfigError::value(
                "workload.ranks",
                ranks,
                &format!("at most {} (the hosts of the topology)", env.n_hosts),
            ));
        }
        if cfg.bytes < ranks as u64 {
            return Err(ConfigError::value("workload.bytes", cfg.bytes, &format!("at least {ranks} (one per rank)")));
        }
        let ring = cross_spine_ring(env, ranks as usize);
        let n = ring.len();
        let mut c = ClosedLoop {
            pattern: Pattern::Ring {
                bytes: cfg.bytes,
                ring,
                sent: vec![0; n],
                received: vec![0; n],
                started: vec![0; n],
            },
            ready: VecDeque::new(),
            tags: Vec::new(),
            total_bytes: cfg.bytes * 2 * (n as u64 - 1),
        };
        for r in 0..n as u32 {
            c.ring_try_start(r, from_us(cfg.start_us));
        }
        Ok(c)
    }

    pub(crate) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    pub(crate) fn next(&mut self) -> Option<MessageSpec> {
        let m = self.ready.pop_front()?;
        let tag = match &self.pattern {
            Pattern::AllToAll { .. } => (m.src, 0),
            Pattern::Ring { ring, started, .. } => {
                let r = ring.iter().position(|&h| h == m.src).expect("a rank") as u32;
                (r, started[r as usize] - 1)
            }
        };
        self.tags.push(tag);
        Some(m)
    }

    /// Message `id` (in hand-out order) completed at `now`.
    pub(crate) fn on_complete(&mut self, id: u64, now: Time) {
        let Some(&(who, step)) = self.tags.get(id as usize) else { return };
        match &mut self.pattern {
            Pattern::AllToAll { bytes, n, next } => {
                let j = &mut next[who as usize];
                if *j < *n {
                    let m = MessageSpec { time: now, src: who, dst: (who + *j) % *n, size: *bytes, incast: false };
                    *j += 1;
                    self.ready.push_back(m);
                }
            }
            Pattern::Ring { ring, sent, received, .. } => {
                let n = ring.len() as u32;
                let peer = (who + 1) % n;
                sent[who as usize] = step + 1;
                received[peer as usize] = step + 1;
                self.ring_try_start(who, now);
                self.ring_try_start(peer, now);
            }
        }
    }

    /// Rank `r` starts its next step if both of its inputs for it are done.
    fn ring_try_start(&mut self, r: u32, now: Time) {
        let Pattern::Ring { bytes, ring, sent, received, started } = &mut self.pattern else { return };
        let n = ring.len() as u32;
        let s = started[r as usize];
        if s >= 2 * (n - 1) || sent[r as usize] < s || received[r as usize] < s {
            return;
        }
        started[r as usize] += 1;
        let chunk = (r + n - s % n) % n;
        let size = *bytes / n as u64 + u64::from((chunk as u64) < *bytes % n as u64);
        let (src, dst) = (ring[r as usize], ring[((r + 1) % n) as usize]);
        self.ready.push_back(MessageSpec { time: now, src, dst, size, incast: false });
    }
}

/// The first `ranks` hosts in an order that alternates pods (racks when
/// there are no pods): the j-th host of pod 0, of pod 1, ..., then the
/// (j+1)-th. With at least two equal pods, neighbours on the ring (the wrap
/// included) are always in different pods, so every hop crosses the top tier.
fn cross_spine_ring(env: &WorkloadEnv, ranks: usize) -> Vec<u32> {
    let pods = env.rack_of.iter().map(|r| r / env.racks_per_pod.max(1)).max().map_or(1, |m| m as usize + 1);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); pods];
    for (h, r) in env.rack_of.iter().enumerate() {
        members[(r / env.racks_per_pod.max(1)) as usize].push(h as u32);
    }
    let longest = members.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest).flat_map(|j| members.iter().filter_map(move |m| m.get(j).copied())).take(ranks).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(n: u32, rack: u32, racks_per_pod: u32) -> WorkloadEnv {
        WorkloadEnv {
            n_hosts: n,
            host_rate_bps: 100_000_000_000,
            rack_of: (0..n).map(|h| h / rack).collect(),
            core_ratio: 1.0,
            racks_per_pod,
            mss: 1460,
            seed: 1,
            end: u64::MAX,
        }
    }

    fn drain(c: &mut ClosedLoop) -> Vec<MessageSpec> {
        std::iter::from_fn(|| c.next()).collect()
    }

    #[test]
    fn all_to_all_keeps_the_window_and_walks_the_shifted_schedule() {
        let mut c = ClosedLoop::all_to_all(&AllToAll { bytes: 7, window: 2, start_us: 1.0 }, &env(4, 2, 1)).unwrap();
        let first = drain(&mut c);
        let pairs: Vec<(u32, u32)> = first.iter().map(|m| (m.src, m.dst)).collect();
        assert_eq!(pairs, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3), (2, 0), (3, 1)]);
        assert!(first.iter().all(|m| m.time == 1_000_000 && m.size == 7));
        // Host 1's first message (id 1) completes: it sends to 1 + 3 = 0.
        c.on_complete(1, 5_000_000);
        assert_eq!(drain(&mut c), [MessageSpec { time: 5_000_000, src: 1, dst: 0, size: 7, incast: false }]);
        // Host 1 has nobody left; a further completion starts nothing.
        c.on_complete(5, 6_000_000);
        assert!(drain(&mut c).is_empty());
        assert_eq!(c.total_bytes(), 7 * 12);
    }

    #[test]
    fn ring_allreduce_crosses_pods_and_follows_the_data_dependency() {
        // 8 hosts, racks of 2, pods of 2 racks: pods {0..4} and {4..8}.
        let e = env(8, 2, 2);
        let mut c =
            ClosedLoop::ring_allreduce(&RingAllreduce { bytes: 10, ranks: Some(4), start_us: 0.0 }, &e).unwrap();
        // Ring 0 -> 4 -> 1 -> 5 -> 0; chunks of 10 / 4: 3, 3, 2, 2.
        let step0 = drain(&mut c);
        let pairs: Vec<(u32, u32, u64)> = step0.iter().map(|m| (m.src, m.dst, m.size)).collect();
        assert_eq!(pairs, [(0, 4, 3), (4, 1, 3), (1, 5, 2), (5, 0, 2)]);
        // Rank 1 (host 4) has received from rank 0 but not finished its own send: waits.
        c.on_complete(0, 100);
        assert!(drain(&mut c).is_empty());
        // Its own send (id 1) completes: rank 1 sends step 1, chunk (1 - 1) = 0.
        c.on_complete(1, 200);
        assert_eq!(drain(&mut c), [MessageSpec { time: 200, src: 4, dst: 1, size: 3, incast: false }]);
        // 2 (N - 1) = 6 steps of 4 messages in all.
        let mut started = 5u64;
        let mut id = 2;
        while id < started {
            c.on_complete(id, 300 + id - 2);
            started += drain(&mut c).len() as u64;
            id += 1;
        }
        assert_eq!(started, 24);
        assert_eq!(c.total_bytes(), 10 * 6);
    }

    #[test]
    fn bad_sizes_name_their_key() {
        let e = env(4, 2, 1);
        let err = ClosedLoop::all_to_all(&AllToAll { window: 4, ..Default::default() }, &e).err().unwrap();
        assert_eq!(err.key, "workload.window");
        let err =
            ClosedLoop::ring_allreduce(&RingAllreduce { ranks: Some(5), ..Default::default() }, &e).err().unwrap();
        assert_eq!(err.key, "workload.ranks");
        let err = ClosedLoop::ring_allreduce(&RingAllreduce { bytes: 3, ..Default::default() }, &e).err().unwrap();
        assert_eq!(err.key, "workload.bytes");
        assert_eq!(RingAllreduce { ranks: Some(1), ..Default::default() }.check().unwrap_err().key, "workload.ranks");
    }
}
