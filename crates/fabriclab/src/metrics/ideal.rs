//! Ideal latency: the completion time a message would have alone in the empty
//! network with its sender at line rate, packets sent back to back and every
//! switch storing and forwarding. Computed exactly with the same per-packet
//! arithmetic the simulator uses, so a lone message has slowdown exactly 1.

use crate::net::fabric::Hop;
use crate::net::wire::{data_wire, packets_for, payload_of};
use fabriclab_engine::{serialization_time, Time};

/// Time from the message's arrival at the idle sender until its last byte is
/// received, over `hops` (the sender's NIC first).
pub fn ideal_latency(size: u64, mss: u32, hops: &[Hop]) -> Time {
    // free[j]: when hop j's link finishes serialising the previous packet.
    let mut free = [0 as Time; crate::net::fabric::MAX_HOPS];
    let n = packets_for(size, mss);
    let mut arrival = 0;
    // Packets of equal size behave identically; only the last one may differ,
    // but a pipeline of identical packets still needs the recurrence per packet
    // because hops have different rates. It is O(packets * hops).
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
        let hop = [Hop {
            rate_bps: 100_000_000_000,
            delay: 1000,
        }];
        assert_eq!(ideal_latency(1460, 1460, &hop), 1538 * 80 + 1000);
        assert_eq!(ideal_latency(2920, 1460, &hop), 2 * 1538 * 80 + 1000);
    }

    #[test]
    fn store_and_forward_pipelines_on_the_bottleneck() {
        let fast = Hop {
            rate_bps: 400_000_000_000,
            delay: 0,
        };
        let slow = Hop {
            rate_bps: 100_000_000_000,
            delay: 0,
        };
        // 3 full packets: first crosses the fast hop (20 ps/B), then the slow one (80 ps/B) back to back.
        let t = ideal_latency(3 * 1460, 1460, &[fast, slow]);
        assert_eq!(t, 1538 * 20 + 3 * 1538 * 80);
    }
}
