//! Homa: exact lone-message latency (and the cost of the grant loop when
//! RTTbytes is below the RTT), per-packet grants, and the behaviours the Homa
//! and SIRD papers report: overcommitment trades queueing for goodput, and
//! priorities let short messages bypass the long queues it builds.

mod common;
use common::*;
use fabriclab::engine::{serialization_time, NS};
use fabriclab::metrics::MessageRecord;
use fabriclab::net::wire::data_wire;

/// RTTbytes on the default fabric: 100 KB rounded up to whole packets.
const RTT_BYTES: u64 = 69 * 1460;

fn fct(m: &MessageRecord) -> u64 {
    m.end_ps.expect("completes") - m.start_ps
}

#[test]
fn lone_message_up_to_rtt_bytes_takes_exactly_its_ideal_latency() {
    // Inter-rack with ECMP: one path, so the ideal is the single-path pipeline.
    let cases = [
        (&dumbbell("homa"), 0, 1, "spray"),
        (&leaf_spine("homa"), 0, 1, "spray"),
        (&leaf_spine("homa"), 0, 143, "ecmp"),
    ];
    for (base, src, dst, lb) in cases {
        let lb = format!("network.load_balancing={lb}");
        for size in [1u64, 100, 1459, 1460, 1461, 2920, 99_999, 100_000, RTT_BYTES] {
            let m = lone(base, src, dst, size, &[&lb]);
            assert_eq!(fct(&m), m.ideal_ps, "size {size} {src}->{dst}");
        }
    }
}

#[test]
fn grants_keep_a_lone_scheduled_message_at_line_rate() {
    // RTTbytes (69 packets, 8.49 us at 100 Gbps) exceeds the 7.5 us RTT, so the
    // GRANT released by the first packet's arrival is back before the
    // unscheduled prefix is out, and so on: no stall, no request packet.
    for (dst, lb) in [(1, "spray"), (143, "ecmp"), (143, "spray")] {
        let lb = format!("network.load_balancing={lb}");
        for size in [RTT_BYTES + 1, 150_001, 1_000_000, 5_000_000] {
            let m = lone(&leaf_spine("homa"), 0, dst, size, &[&lb]);
            assert_eq!(fct(&m), m.ideal_ps, "size {size} 0->{dst} {lb}");
        }
    }
}

#[test]
fn rtt_bytes_below_the_rtt_stalls_once_per_window() {
    // RTTbytes = 14 packets (1.72 us) on a 7.5 us path: the GRANT for packet i
    // is released by the arrival of packet i - 14 and needs one RTT, so the
    // sender stalls RTT - 14 T every 14 packets (14 packets per RTT). Messages
    // of full packets, so that every packet is delayed by the stalls before it
    // (a short last packet would regain part of a stall: in the ideal it
    // queues behind its predecessor).
    let t_pkt = serialization_time(data_wire(1460) as u64, 100_000_000_000);
    let stall = 7_500 * NS - 14 * t_pkt;
    for n in [15u64, 28, 29, 68, 205] {
        let m = lone(
            &leaf_spine("homa"),
            0,
            143,
            n * 1460,
            &["network.load_balancing=ecmp", "protocol.homa.rtt_bytes_bdp=0.2"],
        );
        assert_eq!(fct(&m), m.ideal_ps + (n - 1) / 14 * stall, "{n} packets");
    }
}

#[test]
fn one_grant_per_scheduled_packet_and_one_ack_per_message() {
    // A lone 1 MB message: 685 DATA packets, one GRANT per arrival until the
    // whole message is granted (685 - 69), one ACK (still in flight when the
    // run stops at the message's completion); no RESEND, no NEED_ACK.
    let out = lone_run(&leaf_spine("homa"), 0, 143, 1_000_000, &["network.load_balancing=ecmp"]);
    let n = 1_000_000u64.div_ceil(1460);
    let s = &out.summary;
    assert_eq!(s.packets_sent, n + (n - 69) + 1);
    assert_eq!((s.packets_received, s.packets_in_flight), (s.packets_sent - 1, 1));
}

// ---------------------------------------------------------------- behaviours

/// Poisson WKc at 90% load on a small non-oversubscribed leaf-spine (16 hosts;
/// the 144-host fabric behaves alike but is slow for a test).
fn wkc_high_load(k: u32) -> fabriclab::metrics::Summary {
    let text = r#"
[topology]
kind = "leaf_spine"
tors = 2
hosts_per_tor = 8
spines = 2
[protocol]
name = "homa"
[workload]
kind = "poisson"
size_dist = "wkc"
load = 0.9
[run]
duration_ms = 20.0
warmup_ms = 2.0
seed = 1
"#;
    let k = format!("protocol.homa.overcommitment={k}");
    simulate(text, &[&k]).summary
}

/// Homa §3.5 / SIRD Fig. 3: a higher degree of overcommitment k keeps more
/// receivers' downlinks busy (goodput) at the price of more queued data.
#[test]
fn overcommitment_trades_queueing_for_goodput() {
    let runs: Vec<_> = [1, 2, 7].iter().map(|&k| (k, wkc_high_load(k))).collect();
    for (k, s) in &runs {
        eprintln!(
            "WKc 0.9, k = {k}: goodput {:.1} Gbps/host, ToR queue mean {:.0} KB, max {:.0} KB",
            s.goodput_gbps,
            s.tor_queue_mean_bytes / 1e3,
            s.tor_queue_max_bytes as f64 / 1e3
        );
    }
    for w in runs.windows(2) {
        let ((k0, a), (k1, b)) = (&w[0], &w[1]);
        assert!(b.goodput_gbps > a.goodput_gbps, "goodput k={k1} {} <= k={k0} {}", b.goodput_gbps, a.goodput_gbps);
        assert!(b.tor_queue_mean_bytes > 2.0 * a.tor_queue_mean_bytes, "mean queue k={k1} vs k={k0}");
    }
    let (one, seven) = (&runs[0].1, &runs[2].1);
    assert!(seven.goodput_gbps > 1.05 * one.goodput_gbps);
    assert!(seven.tor_queue_mean_bytes > 5.0 * one.tor_queue_mean_bytes);
}

/// Sixteen senders each stream 3 MB into host 0 while host 17 sends it a
/// 500 B message every 2 us. Overcommitment (k = 7 granted messages, each
/// with RTTbytes in flight) keeps a long queue at host 0's downlink; with
/// Homa's priorities the short messages (unscheduled, class 0) pass it, with a
/// single class they wait behind it. Measured after the unscheduled burst of
/// the 16 large messages has drained (warm-up 0.3 ms).
fn incast_with_short_messages(extra: &[&str]) -> (fabriclab::metrics::Summary, Vec<f64>) {
    let mut rows: Vec<(f64, u32, u32, u64)> = (1..=16).map(|s| (0.0, s, 0, 3_000_000)).collect();
    for i in 0..500 {
        rows.push((300.0 + 2.0 * i as f64, 17, 0, 500));
    }
    let t = trace(&rows);
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 18\n[protocol]\nname = \"homa\"\n{}[run]\nduration_ms = 6.0\nwarmup_ms = 0.3\n",
        trace_workload(&t)
    );
    let extra: Vec<&str> = [&["protocol.homa.overcommitment=7"][..], extra].concat();
    let out = simulate(&text, &extra);
    assert_eq!(out.summary.messages_completed, out.summary.messages_started);
    let mut short: Vec<f64> = out.messages.iter().filter(|m| m.size == 500).map(|m| m.slowdown().unwrap()).collect();
    short.sort_by(f64::total_cmp);
    (out.summary, short)
}

fn p99(sorted: &[f64]) -> f64 {
    sorted[((sorted.len() as f64 * 0.99).ceil() as usize).saturating_sub(1)]
}

#[test]
fn short_messages_bypass_the_overcommitment_queue_through_priorities() {
    let (s, short) = incast_with_short_messages(&[]);
    let (s1, short1) = incast_with_short_messages(&["network.priorities=1"]);
    eprintln!(
        "incast + short messages: 8 classes: ToR queue max {:.0} KB mean {:.0} KB, short p99 slowdown {:.2}; \
         1 class: max {:.0} KB mean {:.0} KB, short p99 slowdown {:.2}",
        s.tor_queue_max_bytes as f64 / 1e3,
        s.tor_queue_mean_bytes / 1e3,
        p99(&short),
        s1.tor_queue_max_bytes as f64 / 1e3,
        s1.tor_queue_mean_bytes / 1e3,
        p99(&short1)
    );
    assert_eq!(short.len(), 500);
    // The queue is long in both runs...
    assert!(s.tor_queue_max_bytes > 400_000, "max queue {}", s.tor_queue_max_bytes);
    assert!(s1.tor_queue_max_bytes > 400_000, "max queue {}", s1.tor_queue_max_bytes);
    // ...but only a single class makes the short messages wait behind it.
    assert!(p99(&short) < 1.5, "p99 slowdown with priorities {}", p99(&short));
    assert!(p99(&short1) > 5.0 * p99(&short), "p99 slowdown with one class {}", p99(&short1));
    assert!(short1[short1.len() / 2] > 3.0, "median slowdown with one class {}", short1[short1.len() / 2]);
}

/// Shallow buffers under a Poisson workload drop DATA, GRANTs and ACKs alike
/// (control packets share the ports' byte budget): RESENDs recover lost data
/// and lost GRANTs, NEED_ACK probes recover lost ACKs and wholly lost
/// messages. Every message completes exactly once.
#[test]
fn shallow_buffers_lose_every_packet_type_and_recover() {
    let topo = r#"
[topology]
kind = "leaf_spine"
tors = 3
hosts_per_tor = 4
spines = 2
"#;
    for dist in ["wka", "wkb"] {
        let wl = format!("[workload]\nkind = \"poisson\"\nsize_dist = \"{dist}\"\nload = 0.8\n");
        let t = poisson_trace(&wl, topo, 1000.0, 3);
        let text = format!(
            "{topo}[network]\nbuffer_bytes = 20000\n[protocol]\nname = \"homa\"\n{}[run]\nduration_ms = 200.0\nwarmup_ms = 0.0\n",
            trace_workload(&t)
        );
        let out = simulate(&text, &[]);
        let s = &out.summary;
        eprintln!("{dist}: {} messages, {} drops, done at {:.2} ms", s.messages_started, s.drops, s.sim_time_s * 1e3);
        assert!(s.drops > 100, "{dist}: expected drops, got {}", s.drops);
        assert_eq!(s.messages_completed, s.messages_started, "{dist}");
        assert!(out.messages.iter().all(|m| m.delivered == m.size && m.slowdown().unwrap() >= 1.0));
        assert_eq!(s.packets_sent, s.packets_received + s.drops + s.packets_in_flight);
    }
}
