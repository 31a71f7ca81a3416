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
///
/// All packets but the last carry a full MSS, which is what makes this cheap:
/// a closed form over the hops for a single path, and one pass per shared hop
/// otherwise (the full packets stay in order; only the last, shorter one can
/// overtake). `scratch` is reused between calls.
pub fn ideal_latency(size: u64, mss: u32, hops: &[Hop], scratch: &mut Vec<Time>) -> Time {
    let n = packets_for(size, mss);
    let full = data_wire(payload_of(size, mss, 0)) as u64;
    let last = data_wire(payload_of(size, mss, n - 1)) as u64;
    let delays: Time = hops.iter().map(|h| h.delay).sum();
    if hops.iter().all(|h| h.shared) {
        return delays + pipeline(n, full, last, hops);
    }
    sprayed(n, full, last, hops, scratch)
}

/// The SIRD authors' ideal latency (`output.ideal = "payload_and_propagation"`):
/// `size` payload bytes at the slowest rate of `hops`, plus their delays.
pub fn payload_and_propagation(size: u64, hops: &[Hop]) -> Time {
    let slowest = hops.iter().map(|h| h.rate_bps).min().unwrap_or(u64::MAX);
    // A whole message's bits in picoseconds overflow u64 beyond 2 MB (serialization_time is for frames).
    let payload = (u128::from(size) * 8 * u128::from(fabriclab_engine::S)).div_ceil(u128::from(slowest));
    payload as Time + hops.iter().map(|h| h.delay).sum::<Time>()
}

/// The store-and-forward pipeline of `n` packets (`full` wire bytes each but
/// the last, `last`) through shared hops, delays left out. Packet i leaves hop
/// j at the heaviest monotone path to cell (i, j) of the grid whose cell (i, j)
/// weighs packet i's serialisation at hop j (the per-packet recursion
/// `max(this packet at the previous hop, the previous packet here) + own time`
/// unrolled). The last packet's path enters its row at some hop k; before k
/// the heaviest path takes every extra row at the slowest hop so far.
fn pipeline(n: u64, full: u64, last: u64, hops: &[Hop]) -> Time {
    let ser_last = |h: &Hop| serialization_time(last, h.rate_bps);
    // The last packet's own times from hop k to the end (k = 0 first).
    let mut after: Time = hops.iter().map(ser_last).sum();
    if n == 1 {
        return after;
    }
    let (mut before, mut slowest, mut best) = (0, 0, 0);
    for h in hops {
        let s = serialization_time(full, h.rate_bps);
        before += s;
        slowest = slowest.max(s);
        best = best.max(before + (n - 2) * slowest + after);
        after -= ser_last(h);
    }
    best
}

/// Sprayed hops: full packets keep their order (every hop treats them alike),
/// so a shared hop serves them in order with the last packet slotted in by its
/// arrival time (after any full packet that arrives at the same time: ties go
/// by packet index). Unshared hops add the same time to every full packet.
fn sprayed(n: u64, full: u64, last: u64, hops: &[Hop], ready: &mut Vec<Time>) -> Time {
    ready.clear();
    ready.resize((n - 1) as usize, 0);
    // Full packet i is ready at ready[i] + shift; the last packet at `runt`.
    let (mut shift, mut runt) = (0, 0);
    for h in hops {
        let (s, s_last) = (serialization_time(full, h.rate_bps), serialization_time(last, h.rate_bps));
        if !h.shared {
            shift += s + h.delay;
            runt += s_last + h.delay;
            continue;
        }
        let mut free = 0;
        let mut runt_served = false;
        for r in ready.iter_mut() {
            let at = *r + shift;
            if !runt_served && runt < at {
                free = free.max(runt) + s_last;
                runt = free + h.delay;
                runt_served = true;
            }
            free = free.max(at) + s;
            *r = free + h.delay;
        }
        if !runt_served {
            runt = free.max(runt) + s_last + h.delay;
        }
        shift = 0;
    }
    // Full packets leave each hop in order, so the last of them arrives last.
    ready.last().map_or(runt, |&r| runt.max(r + shift))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_hop_is_serialisation_plus_delay() {
        let hop = [Hop { rate_bps: 100_000_000_000, delay: 1000, shared: true }];
        assert_eq!(ideal_latency(1460, 1460, &hop, &mut Vec::new()), 1538 * 80 + 1000);
        assert_eq!(ideal_latency(2920, 1460, &hop, &mut Vec::new()), 2 * 1538 * 80 + 1000);
    }

    /// The SIRD artifact's inter-rack ideal for 1 MB (app_hlp.py): 80 us at
    /// 100 Gbps plus 2 x 1.25 + 2 x 0.5 us; never above the store-and-forward one.
    #[test]
    fn payload_and_propagation_is_the_sird_artifacts_formula() {
        let host = Hop { rate_bps: 100_000_000_000, delay: 1_250_000, shared: true };
        let core = Hop { rate_bps: 400_000_000_000, delay: 500_000, shared: false };
        let path = [host, core, core, host];
        assert_eq!(payload_and_propagation(1_000_000, &path), 83_500_000);
        // 30 MB (WKc's largest): its bits in picoseconds are beyond u64.
        assert_eq!(payload_and_propagation(30_000_000, &path), 2_400_000_000 + 3_500_000);
        for size in [1, 100, 1460, 1461, 99_999, 1_000_000, 30_000_000] {
            assert!(payload_and_propagation(size, &path) <= ideal_latency(size, 1460, &path, &mut Vec::new()));
        }
    }

    #[test]
    fn store_and_forward_pipelines_on_the_bottleneck() {
        let fast = Hop { rate_bps: 400_000_000_000, delay: 0, shared: true };
        let slow = Hop { rate_bps: 100_000_000_000, delay: 0, shared: true };
        // 3 full packets: first crosses the fast hop (20 ps/B), then the slow one (80 ps/B) back to back.
        let t = ideal_latency(3 * 1460, 1460, &[fast, slow], &mut Vec::new());
        assert_eq!(t, 1538 * 20 + 3 * 1538 * 80);
    }

    #[test]
    fn sprayed_runt_may_overtake_on_parallel_hops() {
        let edge = Hop { rate_bps: 100_000_000_000, delay: 0, shared: true };
        let core = Hop { rate_bps: 10_000_000_000, delay: 0, shared: false };
        // 1460 + 1 bytes: the 84-byte runt crosses the slow parallel hop faster.
        let sprayed = ideal_latency(1461, 1460, &[edge, core, edge], &mut Vec::new());
        let single = ideal_latency(1461, 1460, &[edge, Hop { shared: true, ..core }, edge], &mut Vec::new());
        assert_eq!(sprayed, 1538 * 80 + 1538 * 800 + 1538 * 80);
        assert!(sprayed < single);
    }

    /// Packet by packet, as the definition reads: every packet's ready time,
    /// shared hops serving in (time, packet index) order.
    fn reference(size: u64, mss: u32, hops: &[Hop]) -> Time {
        let n = packets_for(size, mss);
        let wire: Vec<u64> = (0..n).map(|i| data_wire(payload_of(size, mss, i)) as u64).collect();
        let mut ready: Vec<(Time, u64)> = (0..n).map(|i| (0, i)).collect();
        for h in hops {
            if h.shared {
                ready.sort_unstable();
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

    fn hop() -> impl proptest::strategy::Strategy<Value = Hop> {
        use proptest::prelude::*;
        let rates = prop::sample::select(vec![
            10_000_000_000u64,
            25_000_000_000,
            40_000_000_000,
            100_000_000_000,
            200_000_000_000,
            400_000_000_000,
            800_000_000_000,
            3_000_000_007,
        ]);
        (rates, 0u64..2_000_000, any::<bool>()).prop_map(|(rate_bps, delay, shared)| Hop { rate_bps, delay, shared })
    }

    proptest::proptest! {
        #[test]
        fn closed_forms_equal_the_packet_by_packet_definition(
            size in proptest::prop_oneof![0u64..20_000, 0u64..3_000_000],
            mss in proptest::prop_oneof![proptest::strategy::Just(1460u32), 64u32..9000],
            hops in proptest::collection::vec(hop(), 1..=crate::net::fabric::MAX_HOPS),
        ) {
            let mut scratch = Vec::new();
            proptest::prop_assert_eq!(ideal_latency(size, mss, &hops, &mut scratch), reference(size, mss, &hops));
            let single: Vec<Hop> = hops.iter().map(|h| Hop { shared: true, ..*h }).collect();
            proptest::prop_assert_eq!(ideal_latency(size, mss, &single, &mut scratch), reference(size, mss, &single));
        }
    }
}
