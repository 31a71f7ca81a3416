//! Ideal latency: the completion time a message would have alone in the empty
//! network with its sender at line rate, packets sent back to back and every
//! switch storing and forwarding. Computed exactly with the same per-packet
//! arithmetic the simulator uses, so a lone message has slowdown exactly 1.

use crate::net::fabric::Hop;
use crate::net::wire::{data_wire, packets_for, payload_of};
use fabriclab_engine::{serialization_time, Time};

/// Time from the message's arrival at the idle sender until its last byte is
/// received, over `hops` (the sender's NIC first).
///
/// A shared hop is one link that serves the packets work-conservingly in order
/// of arrival; at a hop that is not shared (parallel sprayed paths) packets do
/// not wait for each other. With all hops shared this is the store-and-forward
/// pipeline of a single path; with spraying it is the best case over path
/// choices, so that no lone message can beat it.
pub fn ideal_latency(size: u64, mss: u32, hops: &[Hop]) -> Time {
    let n = packets_for(size, mss);
    if hops.iter().all(|h| h.shared) {
        return pipeline(size, mss, n, hops);
    }
    // ready[i]: when packet i is at the head of the current hop.
    let wire: Vec<u64> = (0..n).map(|i| data_wire(payload_of(size, mss, i)) as u64).collect();
    let mut ready: Vec<(Time, u64)> = (0..n).map(|i| (0, i)).collect();
    for h in hops {
        if h.shared {
            ready.sort_unstable(); // arrival order, ties by packet index
            let mut free = 0;
            for r in ready.iter_mut() {
                free = free.max(r.0) + serialization_time(wire[r.1 as usize], h.rate_bps);
                r.0 = free + h.delay;
            }
        } else {
            for r in ready.iter_mut() {
                r.0 += serialization_time(wire[r.1 as usize], h.rate_bps) + h.delay;
            }
        }
    }
    ready.iter().map(|r| r.0).max().unwrap_or(0)
}

/// Single-path case without allocation: packets in order through every hop.
fn pipeline(size: u64, mss: u32, n: u64, hops: &[Hop]) -> Time {
    // free[j]: when hop j's link finishes serialising the previous packet.
    let mut free = [0 as Time; crate::net::fabric::MAX_HOPS];
    let mut arrival = 0;
    for i in 0..n {
        let wire = data_wire(payload_of(size, mss, i)) as u64;
        let mut t = 0;
        for (j, h) in hops.iter().enumerate() {
            let start = t.max(free[j]);
            let done = start + serialization_time(wire, h.rate_bps);
            free[j] = done;
            t = done + h.delay;
        }
        arrival = t;
    }
    arrival
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_hop_is_serialisation_plus_delay() {
        let hop = [Hop { rate_bps: 100_000_000_000, delay: 1000, shared: true }];
        assert_eq!(ideal_latency(1460, 1460, &hop), 1538 * 80 + 1000);
        assert_eq!(ideal_latency(2920, 1460, &hop), 2 * 1538 * 80 + 1000);
    }

    #[test]
    fn store_and_forward_pipelines_on_the_bottleneck() {
        let fast = Hop { rate_bps: 400_000_000_000, delay: 0, shared: true };
        let slow = Hop { rate_bps: 100_000_000_000, delay: 0, shared: true };
        // 3 full packets: first crosses the fast hop (20 ps/B), then the slow one (80 ps/B) back to back.
        let t = ideal_latency(3 * 1460, 1460, &[fast, slow]);
        assert_eq!(t, 1538 * 20 + 3 * 1538 * 80);
    }

    #[test]
    fn sprayed_runt_may_overtake_on_parallel_hops() {
        let edge = Hop { rate_bps: 100_000_000_000, delay: 0, shared: true };
        let core = Hop { rate_bps: 10_000_000_000, delay: 0, shared: false };
        // 1460 + 1 bytes: the 84-byte runt crosses the slow parallel hop faster.
        let sprayed = ideal_latency(1461, 1460, &[edge, core, edge]);
        let single = ideal_latency(1461, 1460, &[edge, Hop { shared: true, ..core }, edge]);
        assert_eq!(sprayed, 1538 * 80 + 1538 * 800 + 1538 * 80);
        assert!(sprayed < single);
    }
}
