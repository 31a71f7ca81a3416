//! Swift through the whole simulator: exact lone-message latency, a long-lived
//! incast settling at the target delay at line rate, hop scaling of the target,
//! and sub-packet windows (pacing) keeping a large incast near its target.
//!
//! Queues are converted to delays at the 100 Gbps receiver link: 12.5 bytes per ns.

mod common;
use common::*;
use fabriclab::net::wire::{data_wire, packets_for, payload_of};

const MSS: u32 = 1460;
/// Bytes per microsecond at 100 Gbps.
const B_PER_US: f64 = 12_500.0;

/// Swift's fabric target (us) with the SIRD Table 2 defaults: base_target =
/// 2 x base RTT, h = 1.25 BDP / 100 Gbps = 10 us per switch, flow scaling
/// falling from fs_range = 5 x base RTT at 0.1 packets to 0 at 100 packets.
fn target_us(base_rtt_us: f64, hops: u32, cwnd_pkts: f64) -> f64 {
    let fs_range = 5.0 * base_rtt_us;
    let alpha = fs_range / (1.0 / 0.1f64.sqrt() - 1.0 / 100f64.sqrt());
    let fs = (alpha / cwnd_pkts.sqrt() - alpha / 100f64.sqrt()).clamp(0.0, fs_range);
    2.0 * base_rtt_us + 10.0 * hops as f64 + fs
}

/// The equilibrium target (us) of `n` flows sharing a 100 Gbps bottleneck:
/// the fixed point of cwnd = target x rate / n / 1538 B.
fn equilibrium_target_us(base_rtt_us: f64, hops: u32, n: u64) -> f64 {
    let mut target = target_us(base_rtt_us, hops, 100.0);
    for _ in 0..50 {
        target = target_us(base_rtt_us, hops, target * B_PER_US / n as f64 / 1538.0);
    }
    target
}

/// Wire bytes of `count` messages of `size` bytes.
fn wire_bytes(size: u64, count: u64) -> u64 {
    (0..packets_for(size, MSS)).map(|i| data_wire(payload_of(size, MSS, i)) as u64).sum::<u64>() * count
}

fn lone(topology: &str, src: u32, dst: u32, size: u64, extra: &[&str]) -> f64 {
    let out = simulate(
        &format!(
            "{topology}\n[protocol]\nname = \"swift\"\n[workload]\nkind = \"incast\"\nreceiver = {dst}\n\
             sender_hosts = [{src}]\nbytes = {size}\n[run]\nduration_ms = 5.0\nwarmup_ms = 0.0\n"
        ),
        extra,
    );
    assert_eq!(out.messages.len(), 1);
    out.messages[0].slowdown().unwrap_or_else(|| panic!("{src}->{dst} {size} B did not complete"))
}

#[test]
fn swift_lone_message_completes_at_exactly_its_ideal_latency() {
    let dumbbell = "[topology]\nkind = \"dumbbell\"\nhosts_left = 1\nhosts_right = 1";
    let leaf_spine = "[topology]\nkind = \"leaf_spine\"";
    for (topo, src, dst) in [(dumbbell, 0, 1), (leaf_spine, 0, 143), (leaf_spine, 0, 1)] {
        for size in [100u64, 1459, 1460, 1461, 100_000, 300_000] {
            let s = lone(topo, src, dst, size, &[]);
            assert!((s - 1.0).abs() < 1e-9, "{src}->{dst} {size} B: slowdown {s}");
        }
    }
    // The 1-BDP initial window is what makes it exact: half a BDP stalls on ACKs.
    let s = lone(leaf_spine, 0, 143, 300_000, &["protocol.swift.init_cwnd_bdp=0.5"]);
    eprintln!("300 KB inter-rack with a 0.5-BDP initial window: slowdown {s:.3}");
    assert!(s > 1.05, "slowdown {s}");
}

#[test]
fn swift_long_lived_incast_settles_at_the_target_delay_at_line_rate() {
    let (n, size) = (8u64, 20_000_000u64);
    let out = simulate(&long_incast("swift"), &[]);
    let s = &out.summary;
    assert_eq!(s.messages_completed, n);
    // Star: base RTT 5.5 us, one switch. In equilibrium the RTT sits at the
    // target, whose flow-scaling part depends on each flow's share of the
    // window: fixed point of cwnd = target x rate / N / 1538 B.
    let target = equilibrium_target_us(5.5, 1, n);
    let expected = (target - 5.5) * B_PER_US;
    let end = out.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap();
    let first = out.messages.iter().map(|m| m.end_ps.unwrap()).min().unwrap();
    let ideal = wire_bytes(size, n) * 80; // ps at 100 Gbps
    let ratio = end as f64 / ideal as f64;
    eprintln!(
        "8x20MB: target {target:.2} us -> queue {expected:.0} B; measured after warm-up mean {:.0} B ({:.3}x), \
         max {} B ({:.3}x); last completion {:.3} ms = {ratio:.4} x line rate, first at {:.3} ms",
        s.tor_queue_mean_bytes,
        s.tor_queue_mean_bytes / expected,
        s.tor_queue_max_bytes,
        s.tor_queue_max_bytes as f64 / expected,
        end as f64 / 1e9,
        first as f64 / 1e9
    );
    assert!(
        (0.9 * expected..=1.1 * expected).contains(&s.tor_queue_mean_bytes),
        "mean queue {} not near the target's {expected}",
        s.tor_queue_mean_bytes
    );
    assert!((s.tor_queue_max_bytes as f64) < 1.25 * expected, "max queue {}", s.tor_queue_max_bytes);
    assert!(ratio < 1.005, "receiver link under-used: {ratio}");
    assert!(first as f64 > 0.98 * end as f64, "flows share the link fairly");
    assert_eq!(s.drops, 0);
}

#[test]
fn swift_target_grows_with_the_hops_of_the_path() {
    // 8 x 5 MB into host 0 from its own rack (1 switch, base RTT 5.5 us) and
    // from the other rack (3 switches, 7.5 us): the queue at host 0's downlink
    // follows base_target + hops x h, 20 us more for the inter-rack flows.
    let run = |senders: &str| {
        let out = simulate(
            &format!(
                "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 9\nspines = 2\n[protocol]\n\
                 name = \"swift\"\n[workload]\nkind = \"incast\"\nreceiver = 0\nsender_hosts = [{senders}]\n\
                 bytes = 5000000\n[run]\nduration_ms = 20.0\nwarmup_ms = 1.0\n"
            ),
            &[],
        );
        assert_eq!(out.summary.messages_completed, 8);
        // Mean over the 2 ToRs; only host 0's ToR queues (the uplinks run at 400 Gbps).
        2.0 * out.summary.tor_queue_mean_bytes
    };
    let intra = run("1, 2, 3, 4, 5, 6, 7, 8");
    let inter = run("9, 10, 11, 12, 13, 14, 15, 16");
    // base_target = 2 x 7.5 us (the fabric's largest base RTT) for both.
    let expect_intra = (equilibrium_target_us(7.5, 1, 8) - 5.5) * B_PER_US;
    let expect_inter = (equilibrium_target_us(7.5, 3, 8) - 7.5) * B_PER_US;
    eprintln!(
        "intra-rack queue {intra:.0} B (target -> {expect_intra:.0}), inter-rack {inter:.0} B (-> {expect_inter:.0}), \
         difference {:.1} us",
        (inter - intra) / B_PER_US
    );
    assert!((0.9 * expect_intra..=1.1 * expect_intra).contains(&intra), "intra {intra}");
    assert!((0.9 * expect_inter..=1.1 * expect_inter).contains(&inter), "inter {inter}");
    let diff_us = (inter - intra) / B_PER_US;
    assert!((14.0..=22.0).contains(&diff_us), "2 extra hops x 10 us minus 2 us of base RTT: {diff_us} us");
}

/// 64 senders x 8 messages of 1 MB into one receiver of a star: 512 flows.
fn large_incast(min_cwnd: f64) -> fabriclab::sim::RunOutput {
    let rows: Vec<(f64, u32, u32, u64)> =
        (1..=64).flat_map(|s| (0..8).map(move |_| (0.0, s, 0u32, 1_000_000u64))).collect();
    let path = trace(&rows);
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 65\n[protocol]\nname = \"swift\"\n[protocol.swift]\n\
         min_cwnd = {min_cwnd}\n{}[run]\nduration_ms = 35.0\nwarmup_ms = 12.0\n",
        trace_workload(&path)
    );
    simulate(&text, &[])
}

#[test]
fn swift_sub_packet_windows_pace_a_512_flow_incast_near_its_target() {
    let flows = 512.0;
    // The 1-BDP initial windows (51 MB) drain by ~10 ms; measure 12..35 ms,
    // before the first flow completes. At the target (~30-45 us) the whole
    // path holds ~300 packets, fewer than one per flow: Swift must run windows
    // below one packet, paced at one packet per RTT/cwnd.
    let paced = large_incast(0.001);
    let floored = large_incast(1.0);
    let (p, f) = (&paced.summary, &floored.summary);
    assert_eq!(p.messages_completed, 0, "measured before any flow ends");
    assert_eq!(p.drops + f.drops, 0);
    // Every flow holding >= 1 packet queues all but the pipe (5.5 us) of 512 packets.
    let one_each = flows * 1538.0 - 5.5 * B_PER_US;
    // The target's range for windows of 0.1..1.5 packets.
    let (lo, hi) = ((target_us(5.5, 1, 1.5) - 5.5) * B_PER_US, (target_us(5.5, 1, 0.1) - 5.5) * B_PER_US);
    eprintln!(
        "512 flows: paced mean {:.0} B max {} B; target band {lo:.0}..{hi:.0} B; with min_cwnd = 1: mean {:.0} B \
         max {} B (one packet each: {one_each:.0} B)",
        p.tor_queue_mean_bytes, p.tor_queue_max_bytes, f.tor_queue_mean_bytes, f.tor_queue_max_bytes
    );
    assert!(
        (lo..=hi).contains(&p.tor_queue_mean_bytes),
        "paced mean queue {} outside the target band",
        p.tor_queue_mean_bytes
    );
    assert!(p.tor_queue_mean_bytes < 0.7 * one_each, "windows did not go below one packet");
    assert!((p.tor_queue_max_bytes as f64) < 1.5 * hi, "paced max queue {}", p.tor_queue_max_bytes);
    // Without sub-packet windows the queue is stuck at one packet per flow.
    assert!(f.tor_queue_mean_bytes > 0.97 * one_each, "floored mean {}", f.tor_queue_mean_bytes);
    // Both keep the receiver busy.
    let delivered = |o: &fabriclab::sim::RunOutput| o.summary.goodput_gbps * o.summary.hosts as f64;
    eprintln!("receiver goodput: paced {:.2} Gbps, floored {:.2} Gbps", delivered(&paced), delivered(&floored));
    assert!(delivered(&paced) > 0.99 * 100.0 * 1460.0 / 1538.0, "paced goodput {}", delivered(&paced));
}

#[test]
fn over_reps_a_permutation_across_an_oversubscribed_core_beats_per_flow_ecmp() {
    // SMaRTT-REPS runs Swift over REPS: a [protocol.swift.lb] table makes
    // Swift choose its entropies (network.load_balancing becomes "sender").
    let base = core_permutation("swift", 2_000_000);
    let last = |extra: &[&str]| {
        let out = simulate(&base, extra);
        assert_eq!(out.summary.messages_completed, 16, "{extra:?}");
        out.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap()
    };
    let ecmp = last(&[]);
    let reps = last(&["protocol.swift.lb.kind=\"reps\""]);
    let cfg = config(&base, &["protocol.swift.lb.kind=\"reps\""]);
    assert_eq!(cfg.network.load_balancing, Some(fabriclab::net::LoadBalancing::Sender));
    assert!((reps as f64) < 0.9 * ecmp as f64, "reps {reps} ecmp {ecmp}");
}

/// Eight senders on a 9-host star, 2 MB each to host 0, Swift over REPS on
/// SMaRTT-REPS's 1-BDP buffers, trimming (true) or drop-tail (false).
fn reps_incast(trimming: bool) -> fabriclab::sim::RunOutput {
    let text = experiment("kind = \"star\"\nhosts = 9", "swift", 50.0)
        + SMARTT_NETWORK
        + &format!("[protocol.swift]\ntrimming = {trimming}\n[protocol.swift.lb]\nkind = \"reps\"\n")
        + "[workload]\nkind = \"incast\"\nsenders = 8\nbytes = 2000000\n";
    simulate(&text, &[])
}

#[test]
fn with_trimming_a_trimmed_segment_is_nacked_and_resent_without_timeouts() {
    // Eight 1-BDP initial windows into a 1-BDP buffer overflow at once.
    let trim = reps_incast(true);
    let s = &trim.summary;
    assert_eq!((s.messages_completed, s.bytes_delivered, s.drops), (8, 16_000_000, 0));
    assert!(s.trims > 0);
    // Each trimmed segment is resent once on its NACK, and no go-back-N: beyond
    // those only a few fast retransmissions when REPS reorders past a recovery.
    let needed = 8 * 2_000_000u64.div_ceil(1460);
    let extra = s.data_packets_sent - needed - s.trims;
    assert!(extra <= 8, "{extra} retransmissions beyond the {} trims", s.trims);
    // Drop-tail loses the same first burst and must find the holes by
    // duplicate ACKs and timeouts: the incast ends later.
    let drop = reps_incast(false);
    assert!(drop.summary.drops > 0 && drop.summary.trims == 0);
    let last = |o: &fabriclab::sim::RunOutput| o.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap();
    assert!(last(&trim) < last(&drop), "trimming {} drop-tail {}", last(&trim), last(&drop));
}

/// Three senders each send one MSS to host 3 at t = 0 on an all-100 Gb/s
/// dumbbell (1272 ns per link, no switch latency: the thesis's Fig. 4.2
/// setting), `notify` and `delay` set, every host's arrivals logged. A fourth
/// message, at 20 us, keeps the run going until their notifications and ACKs
/// are back; arrivals after 20 us are left out.
fn one_packet_each(notify: &str, delay_us: Option<f64>) -> Vec<fabriclab::transport::tap::Arrival> {
    let t = trace(&[(0.0, 0, 3, 1460), (0.0, 1, 3, 1460), (0.0, 2, 3, 1460), (20.0, 0, 3, 1460)]);
    let topo = "kind = \"dumbbell\"\nhosts_left = 3\nhosts_right = 1\nhost_link_delay_ns = 1272.0\n\
                bottleneck_delay_ns = 1272.0\nswitch_latency_ns = 0.0";
    let text = experiment(topo, "swift", 1.0) + &trace_workload(&t);
    let mut set = vec![format!("protocol.swift.notify=\"{notify}\"")];
    set.extend(delay_us.map(|d| format!("protocol.swift.notify_delay_us={d}")));
    let set: Vec<&str> = set.iter().map(|s| s.as_str()).collect();
    let (out, log) = fabriclab::sim::run_tapped(&config(&text, &set)).unwrap();
    assert_eq!(out.summary.messages_completed, 4);
    let s = &out.summary;
    assert_eq!(s.packets_sent, s.packets_received + s.drops + s.packets_in_flight);
    log.into_iter().filter(|a| a.time < 20 * fabriclab_engine::US).collect()
}

#[test]
fn notifications_arrive_when_and_with_the_delay_computed_by_hand() {
    use fabriclab::net::program::P_NOTE;
    use fabriclab_engine::{NS, US};
    // Each packet is 1538 B on the wire (123.04 ns), a notification or ACK
    // 84 B (6.72 ns). All three reach switch0 at 123.04 + 1272 = 1395.04 ns,
    // in sender order: host 0's is sent at once, host 1's finds only it (in
    // service, not counted), host 2's finds host 1's queued: 1538 B, 123.04 ns
    // at ingress; it leaves the queue 2 x 123.04 ns later (a wait of 246.08
    // ns). Hosts 0 and 1 are notified by switch1 (the last hop), where they
    // never wait. A notification sent through the network takes 2 x
    // (6.72 + 1272) ns back to host 2 from switch0.
    let from_switch0 = 1_278_720;
    let notes = |log: &[fabriclab::transport::tap::Arrival]| -> Vec<(u32, u64, u32)> {
        let mut v: Vec<_> =
            log.iter().filter(|a| a.prog & P_NOTE != 0).map(|a| (a.host, a.time, a.prog_qlen)).collect();
        v.sort();
        v
    };
    let host2 = |log: &[fabriclab::transport::tap::Arrival]| notes(log).into_iter().find(|n| n.0 == 2).unwrap();
    let ing = one_packet_each("ingress", None);
    assert_eq!(notes(&ing).len(), 3);
    assert_eq!(host2(&ing), (2, 1_395_040 + from_switch0, 123_040));
    let egr = one_packet_each("egress", None);
    assert_eq!(host2(&egr), (2, 1_395_040 + 246_080 + from_switch0, 246_080));
    // With a configured delay, exactly that long after generation.
    assert_eq!(host2(&one_packet_each("ingress", Some(1.0))), (2, 1_395_040 + US, 123_040));
    assert_eq!(host2(&one_packet_each("egress", Some(0.5))), (2, 1_641_120 + 500 * NS, 246_080));
    // Host 0's is made at switch1's ingress: 2 x 1395.04 ns, no wait.
    let h0 = notes(&one_packet_each("ingress", Some(0.0)))[0];
    assert_eq!(h0, (0, 2_790_080, 0));
    // The receiver loop: host 2's packet reaches host 3 at 1641.12 + 2 x
    // 1395.04 ns, and its ACK is back after 3 x (6.72 + 1272) ns: 8267.36 ns,
    // the base RTT (3 x 1395.04 + 3 x 1278.72 = 8021.28 ns) plus the 246.08
    // ns it waited, which is what the egress notification carried.
    let rcvr = one_packet_each("receiver", None);
    assert!(notes(&rcvr).is_empty());
    let ack = rcvr.iter().find(|a| a.host == 2 && a.src == 3).unwrap();
    assert_eq!(ack.time, 8_267_360);
    assert_eq!(8_021_280 + 246_080, ack.time);
}

/// Bolt's Fig. 4.2 dumbbell (experiments/bolt/notify.toml): a second flow joins at 2 ms. Returns
/// the bottleneck queue's peak after the join and when it is first back below half of it (us
/// after the join).
fn join_peak_and_half_drain(notify: &str) -> (u64, f64) {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/bolt/notify.toml");
    let set = vec![format!("protocol.swift.notify=\"{notify}\""), "run.duration_ms=2.5".into()];
    let cfg = fabriclab::config::Config::load(&file, &set).unwrap();
    let out = fabriclab::sim::run(&cfg, &mut |_, _| {}).unwrap();
    let join = 2_000 * fabriclab_engine::US;
    let after: Vec<(u64, u64)> =
        out.queue_series.iter().filter(|s| s.time >= join).map(|s| (s.time, s.bytes)).collect();
    let &(peak_at, peak) = after.iter().max_by_key(|s| (s.1, std::cmp::Reverse(s.0))).unwrap();
    let back = after.iter().find(|s| s.0 > peak_at && s.1 <= peak / 2).expect("the queue drains");
    (peak, (back.0 - join) as f64 / 1e6)
}

#[test]
fn notifications_from_ingress_drain_a_joining_flows_queue_sooner_than_acks() {
    // The thesis's Fig. 4.2 (right): the earlier the notification, the sooner Swift reacts.
    let (rcvr_peak, rcvr) = join_peak_and_half_drain("receiver");
    let (egr_peak, egr) = join_peak_and_half_drain("egress");
    let (ing_peak, ing) = join_peak_and_half_drain("ingress");
    assert!(ing_peak < rcvr_peak && egr_peak <= rcvr_peak, "peaks {ing_peak} {egr_peak} {rcvr_peak}");
    assert!(ing < egr && egr < rcvr, "back below half the peak after {ing} {egr} {rcvr} us");
}
