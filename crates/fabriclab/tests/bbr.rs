//! BBR over REPS and trimming (SMaRTT-REPS's baseline): a lone flow runs at
//! line rate; flows sharing one bottleneck converge to their fair shares with
//! a queue bounded by cwnd_gain x BDP; an incast that overflows the buffer is
//! repaired by NACKs alone. (The state machine is tested exactly in
//! transport/bbr/tests.rs.)

mod common;
use common::*;
use fabriclab::net::wire::data_wire;

/// `n` senders on a star each send `bytes` to host 0 at once.
fn incast(n: u32, bytes: u64) -> fabriclab::sim::RunOutput {
    let text = experiment(&format!("kind = \"star\"\nhosts = {}", n + 1), "bbr", 50.0)
        + SMARTT_NETWORK
        + &format!("[workload]\nkind = \"incast\"\nsenders = {n}\nbytes = {bytes}\n");
    simulate(&text, &[])
}

/// Serialisation of `bytes` of payload on a 100 Gbps link, ps.
fn line_rate_ps(bytes: u64) -> f64 {
    (bytes.div_ceil(1460) * data_wire(1460) as u64 * 80) as f64
}

#[test]
fn a_lone_flow_runs_at_line_rate() {
    // The initial window is one BDP and Startup paces at 2.89 x line rate: the
    // NIC is the limit, so a lone message takes its ideal latency.
    for size in [1u64, 1460, 100_000, 2_000_000] {
        let out = lone_run(&format!("{}{SMARTT_NETWORK}", dumbbell("bbr")), 0, 1, size, &[]);
        let m = out.messages[0];
        let fct = m.end_ps.unwrap() - m.start_ps;
        assert!(fct >= m.ideal_ps && fct < m.ideal_ps + m.ideal_ps / 20 + 1_000_000, "{size}: {fct} vs {}", m.ideal_ps);
        assert_eq!((out.summary.trims, out.summary.drops), (0, 0));
    }
}

#[test]
fn two_flows_share_a_bottleneck_with_a_bounded_queue() {
    let short = incast(2, 10_000_000);
    let long = incast(2, 40_000_000);
    for (out, bytes) in [(&short, 10_000_000u64), (&long, 40_000_000)] {
        let s = &out.summary;
        assert_eq!((s.messages_completed, s.bytes_delivered, s.drops), (2, 2 * bytes, 0));
        let ends: Vec<f64> = out.messages.iter().map(|m| m.end_ps.unwrap() as f64).collect();
        let (first, last) = (ends[0].min(ends[1]), ends[0].max(ends[1]));
        // The bottleneck stays busy: delivery at the link rate, within 5%.
        let ideal = line_rate_ps(2 * bytes);
        assert!(last < 1.05 * ideal, "last {last} vs line rate {ideal}");
        // Both flows get a real share, though not an equal one: BBRv1 flows run
        // cwnd-limited (2 x their own BtlBw estimate) and nothing pulls the
        // estimates together without ProbeRTT (Hock, Bless, Zitterbart, ICNP
        // 2017). The first flow delivered its bytes at most 2x faster.
        assert!(first > 0.5 * last, "first {first}, last {last}");
    }
    // Every trim is Startup's: after it the queue stays inside the 1-BDP buffer,
    // so four times the data brings no further trim.
    assert!(short.summary.trims > 0);
    assert_eq!(long.summary.trims, short.summary.trims);
}

#[test]
fn an_overflowing_incast_is_repaired_by_nacks() {
    let out = incast(8, 2_000_000);
    let s = &out.summary;
    assert_eq!((s.messages_completed, s.bytes_delivered, s.drops), (8, 16_000_000, 0));
    // 8 flows x 1 BDP at once into a 1-BDP buffer: trims, each resent once.
    assert!(s.trims > 0);
    assert_eq!(s.data_packets_sent, 8 * 2_000_000u64.div_ceil(1460) + s.trims, "no timeout");
    let last = out.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap() as f64;
    assert!(last < 1.3 * line_rate_ps(16_000_000) + 50e6, "last {last}");
}
