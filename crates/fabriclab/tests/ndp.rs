//! NDP: exact lone-message latency, trimming turns incast overflow into
//! NACKs and retransmissions (no message lost, no timeout needed), PULL pacing
//! holds the receiver's downlink at its rate and serves messages round-robin.

mod common;
use common::*;
use fabriclab::metrics::MessageRecord;
use fabriclab::net::wire::data_wire;

fn fct(m: &MessageRecord) -> u64 {
    m.end_ps.expect("completes") - m.start_ps
}

#[test]
fn lone_messages_take_exactly_their_ideal_latency() {
    // The first window (69 packets, 8.49 us) outlasts the 7.5 us RTT, so PULLs
    // keep a lone sender at line rate past it: every size is exact.
    for (base, dst) in [(dumbbell("ndp"), 1), (leaf_spine("ndp"), 1), (leaf_spine("ndp"), 143)] {
        for size in [1u64, 1460, 1461, 100_000, 100_740, 500_000, 2_000_000] {
            let out = lone_run(&base, 0, dst, size, &[]);
            let m = out.messages[0];
            assert_eq!(fct(&m), m.ideal_ps, "size {size} to {dst}");
            assert_eq!(out.summary.trims, 0);
        }
    }
}

fn incast() -> String {
    experiment("kind = \"star\"\nhosts = 21", "ndp", 50.0)
        + "[workload]\nkind = \"incast\"\nsenders = 20\nbytes = 200000\n"
}

#[test]
fn incast_is_trimmed_nacked_and_retransmitted_without_loss() {
    let out = simulate(&incast(), &[]);
    let s = &out.summary;
    // 20 first windows of 69 packets at once into one 100 Gbps port with an 8-packet data queue.
    assert!(s.trims > 500, "trims {}", s.trims);
    assert_eq!(s.drops, 0);
    assert_eq!((s.messages_completed, s.bytes_delivered), (20, 20 * 200_000));
    // Every trimmed packet was sent again: data packets = packets needed + trims.
    let needed = 20 * 200_000u64.div_ceil(1460);
    assert_eq!(s.data_packets_sent, needed + s.trims);
    // The receiver's downlink holds the 8-packet data queue plus a burst of
    // trimmed headers (20 arrive per data packet time while the burst lasts).
    let down = out.ports.iter().find(|p| p.peer == 0).unwrap();
    assert!(down.max_bytes <= 2 * 8 * data_wire(1460) as u64, "{}", down.max_bytes);
    // Recovery is by NACK, within a few RTTs of the ideal: no 1 ms timeout fired.
    let last = out.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap();
    let line_rate_ps = (needed * data_wire(1460) as u64 * 80) as f64; // 80 ps per byte at 100 Gbps
    assert!((last as f64) < 1.3 * line_rate_ps + 50e6, "last completion {last} ps");
}

#[test]
fn without_trimming_the_same_incast_drops_and_waits_for_timeouts() {
    let trimmed = simulate(&incast(), &[]).summary;
    let dropped = simulate(&incast(), &["network.trimming=false", "network.buffer_bytes=12304"]).summary;
    assert_eq!(dropped.trims, 0);
    assert!(dropped.drops > 0);
    assert_eq!(dropped.messages_completed, 20, "RTOs recover the dropped packets");
    let end = |s: &fabriclab::metrics::Summary| s.sim_time_s;
    assert!(end(&dropped) > end(&trimmed) + 0.9e-3, "{} vs {}", end(&dropped), end(&trimmed));
}

#[test]
fn pulls_serve_incast_messages_round_robin_at_the_link_rate() {
    // Equal messages finish together (round-robin pulls), and the downlink
    // stays busy: the last completes near the line-rate time of all the bytes.
    let out = simulate(&incast(), &[]);
    let ends: Vec<u64> = out.messages.iter().map(|m| m.end_ps.unwrap()).collect();
    let (first, last) = (*ends.iter().min().unwrap(), *ends.iter().max().unwrap());
    assert!((last - first) as f64 / (last as f64) < 0.15, "first {first} last {last}");
    let bytes_on_wire = 20 * 137 * data_wire(1460) as u64;
    let busy = bytes_on_wire * 80; // ps at 100 Gbps
    assert!(last as f64 > busy as f64 && (last as f64) < 1.15 * busy as f64 + 10e6, "last {last}, busy {busy}");
}
