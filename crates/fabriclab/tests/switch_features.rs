//! Switch features (issue 7): PFC, shared buffers and partitions, INT, the
//! rate-limited control class, Aeolus selective dropping. Trimming is tested
//! with NDP (tests/ndp.rs); the RED curve in net::red's unit tests.

mod common;
use common::*;
use fabriclab::config::Config;
use fabriclab::net::int::IntStack;
use fabriclab::net::{Packet, CONTROL, INT, UNSCHEDULED};
use fabriclab::sim::{run_custom, RunOutput};
use fabriclab::transport::{Cx, HostInfo, Message, Transport};
use fabriclab_engine::{serialization_time, Time, NS};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

fn incast() -> String {
    experiment("kind = \"star\"\nhosts = 21", "dctcp", 100.0)
        + "[workload]\nkind = \"incast\"\nsenders = 20\nbytes = 80000\n"
}

const PFC: [&str; 4] = [
    "network.buffer_bytes=40000",
    "network.pfc.xoff_bytes=20000",
    "network.pfc.xon_bytes=10000",
    "network.pfc.headroom_bytes=60000",
];

#[test]
fn pfc_pauses_the_senders_of_an_incast_and_loses_nothing() {
    let lossy = simulate(&incast(), &["network.buffer_bytes=40000"]).summary;
    assert!(lossy.drops > 0, "the incast must overflow 40 KB without PFC");
    let out = simulate(&incast(), &PFC);
    let s = &out.summary;
    assert!(s.pfc_pauses > 0);
    assert_eq!(s.pfc_resumes, s.pfc_pauses, "every PAUSE is followed by a RESUME once the queue drains");
    assert_eq!(s.drops, 0);
    assert_eq!((s.messages_completed, s.bytes_delivered), (20, 20 * 80_000));
    assert_eq!(s.packets_sent, s.packets_received + s.packets_in_flight);
    // Lossless packets bypass the 40 KB port limit; what bounds the switch is
    // XOFF + headroom per ingress link, and the senders hold the rest back.
    assert!(s.switch_queue_max_bytes > 40_000);
    assert!(s.switch_queue_max_bytes <= 20 * (20_000 + 60_000), "{}", s.switch_queue_max_bytes);
}

#[test]
fn pfc_pauses_propagate_across_a_fabric_without_loss() {
    let text = r#"
[topology]
kind = "leaf_spine"
tors = 3
hosts_per_tor = 4
spines = 2
[protocol]
name = "dctcp"
[workload]
kind = "incast"
senders = 11
receiver = 0
bytes = 200000
[run]
duration_ms = 100.0
warmup_ms = 0.0
"#;
    let out = simulate(text, &PFC);
    let s = &out.summary;
    assert!(s.pfc_pauses > 0);
    assert_eq!(s.drops, 0);
    assert_eq!(s.messages_completed, 11);
    // Spine ports towards the receiver's ToR were paused and queued in turn.
    let spine_ports_queued = out.ports.iter().filter(|p| !p.tor && p.peer == 12 && p.max_bytes > 0).count();
    assert!(spine_ports_queued > 0);
}

#[test]
fn pfc_head_of_line_blocking_delays_an_innocent_flow() {
    // Host 1 sends into a 10-to-1 incast at host 0 and, at the same time, a
    // message to idle host 20. Without PFC the second message only shares
    // host 1's NIC; with PFC the NIC is paused for the incast and the second
    // message waits behind it: head-of-line blocking.
    let mut rows: Vec<(f64, u32, u32, u64)> = (1..=10).map(|h| (0.0, h, 0, 400_000)).collect();
    rows.push((0.0, 1, 20, 400_000));
    let t = trace(&rows);
    let base = format!("[topology]\nkind = \"star\"\nhosts = 21\n[protocol]\nname = \"dctcp\"\n{}", trace_workload(&t));
    let victim = |o: &RunOutput| {
        let m = o.messages.iter().find(|m| m.dst == 20).unwrap();
        m.end_ps.unwrap() - m.start_ps
    };
    let free = simulate(&base, &[]);
    let paused = simulate(&base, &PFC);
    assert!(paused.summary.pfc_pauses > 0);
    assert_eq!(paused.summary.messages_completed, 11);
    let (a, b) = (victim(&free), victim(&paused));
    assert!(b > 2 * a, "victim FCT {a} ps without PFC, {b} ps with PFC");
}

#[test]
fn shared_buffer_dynamic_threshold_bounds_one_port() {
    // One congested port under DT with alpha holds at most alpha/(1+alpha) of
    // the pool (plus the packet admitted just below the threshold).
    for (alpha, frac) in [(1.0, 0.5), (3.0, 0.75)] {
        let out = simulate(
            &incast(),
            &["network.shared_buffer.bytes=200000", &format!("network.shared_buffer.alpha={alpha}")],
        );
        assert!(out.summary.drops > 0, "alpha {alpha}");
        assert_eq!(out.summary.messages_completed, 20);
        let down = out.ports.iter().find(|p| p.peer == 0).unwrap();
        let bound = (200_000.0 * frac) as u64 + 1538;
        assert!(down.max_bytes <= bound, "alpha {alpha}: {} > {bound}", down.max_bytes);
        assert!(down.max_bytes > bound - 3 * 1538, "alpha {alpha}: the port should fill up to its threshold");
        assert!(down.drops > 0);
    }
}

#[test]
fn static_partition_bounds_each_queue() {
    let out = simulate(&incast(), &["network.queue_buffer_bytes=30000"]);
    assert!(out.summary.drops > 0);
    assert_eq!(out.summary.messages_completed, 20);
    let down = out.ports.iter().find(|p| p.peer == 0).unwrap();
    assert!(down.max_bytes <= 30_000 && down.max_bytes > 30_000 - 2 * 1538, "{}", down.max_bytes);
}

#[test]
fn feature_errors_name_key_value_and_allowed() {
    let err = |o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        Config::from_str_with("", &o, std::path::Path::new(".")).unwrap_err().to_string()
    };
    for (o, parts) in [
        (
            vec!["network.red.kmin_bytes=5000", "network.red.kmax_bytes=100"],
            vec!["network.red.kmax_bytes", "100", ">= kmin"],
        ),
        (vec!["network.red.pmax=1.5"], vec!["network.red.pmax", "1.5", "(0, 1]"]),
        (vec!["network.red.mark_at=middle"], vec!["network.red.mark_at", "middle", "enqueue"]),
        (vec!["network.red.kmin=1"], vec!["kmin"]),
        (vec!["network.red.pmax=0.1", "network.ecn_threshold_bytes=100"], vec!["network.red", "ecn_threshold_bytes"]),
        (vec!["network.pfc.xon_bytes=200000"], vec!["network.pfc.xon_bytes", "200000", "<= xoff_bytes"]),
        (vec!["network.pfc.classes=[9]"], vec!["network.pfc.classes", "9"]),
        (
            vec!["network.priorities=2", "network.pfc.classes=[3]"],
            vec!["network.pfc.classes", "3", "below network.priorities"],
        ),
        (vec!["network.shared_buffer.alpha=0"], vec!["network.shared_buffer.alpha", "0"]),
        (vec!["network.shared_buffer.bytes=10"], vec!["network.shared_buffer.bytes", "10"]),
        (vec!["network.int.hop_bytes=0"], vec!["network.int.hop_bytes", "0"]),
        (vec!["network.control_class.rate_fraction=2"], vec!["network.control_class.rate_fraction", "2"]),
        (
            vec!["protocol.name=expresspass", "network.control_class.rate_fraction=0.1"],
            vec!["network.control_class", "credit_shaping"],
        ),
        (vec!["network.trimming=true"], vec!["network.trimming", "sird", "ndp"]),
        (vec!["network.queue_buffer_bytes=0"], vec!["network.queue_buffer_bytes", "0", "(0, 1099511627776]"]),
        (vec!["network.selective_drop_bytes=0"], vec!["network.selective_drop_bytes", "0"]),
    ] {
        let e = err(&o);
        for p in parts {
            assert!(e.contains(p), "{o:?}: error `{e}` does not mention `{p}`");
        }
    }
    // Resolved configs with features round-trip.
    let o: Vec<String> = [
        "network.red.pmax=0.2",
        "network.pfc.xoff_bytes=50000",
        "network.pfc.xon_bytes=40000",
        "network.int.hop_bytes=8",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cfg = Config::from_str_with("", &o, std::path::Path::new(".")).unwrap();
    assert_eq!(cfg, Config::from_str_with(&cfg.to_toml(), &[], std::path::Path::new(".")).unwrap());
}

// ---------------------------------------------------------------- probes

/// What a probe host saw arrive.
#[derive(Clone, Copy, Debug)]
struct Seen {
    at: Time,
    tx_time: Time,
    wire: u32,
    ce: bool,
    int: Option<IntStack>,
}

/// A test transport: on start_message it queues `count` packets of `wire`
/// bytes with `flags` to the destination, at line rate; it logs arrivals.
struct Probe {
    id: u32,
    count: u32,
    wire: u32,
    flags: u8,
    out: VecDeque<Packet<u32>>,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Transport for Probe {
    type Header = u32;
    fn start_message(&mut self, _: &mut Cx, msg: &Message) {
        for seq in 0..self.count {
            let p = Packet::new(self.id, msg.dst, self.wire, 1, 0, seq).with_flags(self.flags).with_ect();
            self.out.push_back(p);
        }
    }
    fn on_packet(&mut self, cx: &mut Cx, p: &Packet<u32>) {
        let seen = Seen { at: cx.now, tx_time: p.tx_time, wire: p.wire_bytes, ce: p.ce(), int: cx.int().copied() };
        self.log.lock().unwrap().push(seen);
    }
    fn on_timer(&mut self, _: &mut Cx, _: u64) {}
    fn poll_transmit(&mut self, _: &mut Cx) -> Option<Packet<u32>> {
        self.out.pop_front()
    }
}

/// Three senders on the left of a 100/33 Gbps dumbbell, starting a few ns
/// apart (so no arrival coincides with a departure), each send `count`
/// packets to the host on the right.
fn probe_run(count: u32, wire: u32, flags: u8, overrides: &[&str]) -> Vec<Seen> {
    let (seen, _) = probe_run_out(count, wire, flags, overrides);
    assert_eq!(seen.len(), 3 * count as usize);
    seen
}

fn probe_run_out(count: u32, wire: u32, flags: u8, overrides: &[&str]) -> (Vec<Seen>, RunOutput) {
    let t = trace(&[(0.0, 0, 3, 1), (0.0137, 1, 3, 1), (0.0291, 2, 3, 1)]);
    let text = format!(
        "[topology]\nkind = \"dumbbell\"\nhosts_left = 3\nhosts_right = 1\nhost_rate_gbps = 100.0\n\
         bottleneck_rate_gbps = 33.0\nhost_link_delay_ns = 500.0\nbottleneck_delay_ns = 700.0\nswitch_latency_ns = 250.0\n\
         [run]\nduration_ms = 0.2\nwarmup_ms = 0.0\n{}",
        trace_workload(&t)
    );
    let cfg = config(&text, overrides);
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let out = run_custom(&cfg, move |i: &HostInfo| Probe {
        id: i.id,
        count,
        wire,
        flags,
        out: VecDeque::new(),
        log: l.clone(),
    })
    .unwrap();
    let v = log.lock().unwrap().clone();
    (v, out)
}

#[test]
fn int_records_the_true_queue_at_each_stamping_instant() {
    let (wire, hop) = (1538u32, 8u32);
    let seen = probe_run(6, wire, INT, &["network.int.hop_bytes=8"]);
    let host_ser = serialization_time(wire as u64, 100_000_000_000);
    let bottleneck = 33_000_000_000u64;
    // When each packet reached the left switch, and its first record.
    let arrive: Vec<Time> = seen.iter().map(|s| s.tx_time + host_ser + 500 * NS + 250 * NS).collect();
    let first: Vec<_> = seen.iter().map(|s| s.int.expect("INT asked for").hops()[0]).collect();
    for (i, s) in seen.iter().enumerate() {
        let hops = s.int.unwrap();
        assert_eq!(hops.hops().len(), 2, "two switches on the path");
        assert_eq!(s.wire, wire + 2 * hop, "each hop adds its record");
        let h = first[i];
        assert_eq!(h.rate_bps, bottleneck);
        assert!(arrive.iter().enumerate().all(|(j, &a)| j == i || a != h.ts), "a tie would make the truth ambiguous");
        // Truth: packets that had arrived and had not yet started leaving.
        let queued: u64 =
            (0..seen.len()).filter(|&j| arrive[j] < h.ts && first[j].ts > h.ts).map(|_| (wire + hop) as u64).sum();
        assert_eq!(h.qlen_bytes, queued, "packet {i}");
        let sent: u64 = (0..seen.len()).filter(|&j| first[j].ts <= h.ts).map(|_| (wire + hop) as u64).sum();
        assert_eq!(h.tx_bytes, sent, "packet {i}");
        // The right switch forwards at 100 Gbps what arrives at 33: no queue.
        let second = hops.hops()[1];
        assert_eq!(second.qlen_bytes, 0);
        assert_eq!(second.ts, h.ts + serialization_time((wire + hop) as u64, bottleneck) + 700 * NS + 250 * NS);
    }
    assert!(first.iter().any(|h| h.qlen_bytes > 0), "the bottleneck must queue");
}

#[test]
fn packets_without_the_int_flag_carry_no_records() {
    let seen = probe_run(2, 1538, 0, &["network.int.hop_bytes=8"]);
    assert!(seen.iter().all(|s| s.int.is_none() && s.wire == 1538));
}

#[test]
fn control_class_is_rate_limited_and_marked_above_its_threshold() {
    // 10% of the 33 Gbps bottleneck: one 84-byte control packet per 203.6 ns.
    let seen = probe_run(
        10,
        84,
        CONTROL,
        &["network.control_class.rate_fraction=0.1", "network.control_class.ecn_threshold_bytes=500"],
    );
    let spacing = serialization_time(84, 3_300_000_000);
    let mut at: Vec<Time> = seen.iter().map(|s| s.at).collect();
    at.sort_unstable();
    assert!(at.windows(2).all(|w| w[1] - w[0] >= spacing), "{at:?}");
    // 30 packets arrive at 3 x 100 Gbps: the class queue exceeds 500 B.
    assert!(seen.iter().any(|s| s.ce));
    assert!(seen.iter().take(3).all(|s| !s.ce));
    // Without the class, the same packets go at the full rate.
    let plain = probe_run(10, 84, CONTROL, &[]);
    let mut at2: Vec<Time> = plain.iter().map(|s| s.at).collect();
    at2.sort_unstable();
    assert!(at2.last() < at.last());
}

#[test]
fn selective_drop_drops_only_unscheduled_packets_above_the_threshold() {
    // 30 packets at 3 x 100 Gbps into 33 Gbps: the bottleneck port passes 6000 B.
    let (seen, out) = probe_run_out(10, 1538, UNSCHEDULED, &["network.selective_drop_bytes=6000"]);
    let s = &out.summary;
    assert!(s.selective_drops > 0);
    assert_eq!(s.drops, s.selective_drops);
    assert_eq!(seen.len() as u64 + s.drops, 30);
    let bottleneck = out.ports.iter().find(|p| p.peer == 4).unwrap();
    assert!(bottleneck.max_bytes <= 6000, "{}", bottleneck.max_bytes);
    // Scheduled packets are not subject to it.
    let (seen, out) = probe_run_out(10, 1538, 0, &["network.selective_drop_bytes=6000"]);
    assert_eq!((seen.len(), out.summary.drops), (30, 0));
}

// ------------------------------------------------------ queue accounting

/// The dumbbell's bottleneck port (the one that queues) after a probe run.
fn bottleneck(out: &RunOutput) -> &fabriclab::metrics::PortRecord {
    out.ports.iter().max_by_key(|p| p.max_bytes).expect("ports")
}

const FIRST_BIT: &str = "network.queue_accounting=until_first_bit";

#[test]
fn one_packet_waits_nowhere_under_first_bit_accounting() {
    // One 1,538-byte packet: its ports hold it while they serialise it, or never.
    let t = trace(&[(0.0, 0, 3, 1)]);
    for (accounting, held) in [("until_last_bit", 1538), ("until_first_bit", 0)] {
        let text = format!(
            "[topology]\nkind = \"dumbbell\"\nhosts_left = 3\nhosts_right = 1\n[run]\nduration_ms = 0.05\n\
             warmup_ms = 0.0\n[network]\nqueue_accounting = \"{accounting}\"\n{}",
            trace_workload(&t)
        );
        let cfg = config(&text, &[]);
        let out = run_custom(&cfg, |i: &HostInfo| Probe {
            id: i.id,
            count: 1,
            wire: 1538,
            flags: 0,
            out: VecDeque::new(),
            log: Arc::new(Mutex::new(Vec::new())),
        })
        .unwrap();
        assert!(out.ports.iter().all(|p| p.max_bytes == held || p.max_bytes == 0), "{accounting}");
        assert_eq!(bottleneck(&out).max_bytes, held, "{accounting}");
    }
}

#[test]
fn a_queue_of_three_counts_the_packet_in_service_only_until_its_first_bit() {
    // Three packets reach the 33 Gbps bottleneck 13.7 and 15.4 ns apart, each
    // well inside the first's 372.8 ns of serialisation.
    let (_, last) = probe_run_out(1, 1538, 0, &[]);
    let (_, first) = probe_run_out(1, 1538, 0, &[FIRST_BIT]);
    assert_eq!(bottleneck(&last).max_bytes, 3 * 1538);
    assert_eq!(bottleneck(&first).max_bytes, 2 * 1538);
    // Each packet adds its serialisation time at 1,538 B to the area (the
    // record's window ends with the last delivery: the workload is finite).
    let ser = serialization_time(1538, 33_000_000_000) as f64;
    let window = last.summary.sim_time_s * 1e12;
    assert_eq!(window, first.summary.sim_time_s * 1e12);
    let gap = bottleneck(&last).mean_bytes - bottleneck(&first).mean_bytes;
    assert!((gap - 3.0 * 1538.0 * ser / window).abs() < 1e-6, "{gap}");
}

#[test]
fn the_packet_in_service_counts_toward_a_mark_only_until_its_first_bit() {
    // Threshold 2,000 B, packets of 1,538: the second packet finds the first
    // in service (3,076 B with itself: marked, or 1,538: not); the third finds
    // the second waiting either way.
    let marks = |o: &[&str]| -> Vec<bool> {
        let mut seen = probe_run(1, 1538, 0, o);
        seen.sort_by_key(|s| s.at);
        seen.iter().map(|s| s.ce).collect()
    };
    assert_eq!(marks(&["network.ecn_threshold_bytes=2000"]), [false, true, true]);
    assert_eq!(marks(&["network.ecn_threshold_bytes=2000", FIRST_BIT]), [false, false, true]);
}

#[test]
fn int_reports_the_same_queue_behind_a_packet_under_either_accounting() {
    let qlen = |o: &[&str]| -> Vec<u64> {
        let mut seen = probe_run(6, 1538, INT, o);
        seen.sort_by_key(|s| s.at);
        seen.iter().map(|s| s.int.unwrap().hops()[0].qlen_bytes).collect()
    };
    let last = qlen(&["network.int.hop_bytes=8"]);
    assert!(last.iter().any(|&q| q > 0));
    assert_eq!(last, qlen(&["network.int.hop_bytes=8", FIRST_BIT]));
}

#[test]
fn features_that_never_bind_change_nothing() {
    // The feature path must treat every packet as the plain path does when no
    // limit is reached: same summary, for every protocol (credits and ECN included).
    let t = trace(&[(0.0, 1, 0, 300_000), (0.0, 2, 0, 300_000), (1.0, 3, 4, 50_000), (2.0, 0, 5, 2_000)]);
    for p in ["sird", "homa", "dcpim", "expresspass", "dctcp", "swift", "ndp"] {
        let text = experiment("kind = \"star\"\nhosts = 6", p, 5.0) + &trace_workload(&t);
        let plain = simulate(&text, &[]).summary.without_wall_clock();
        let pooled = simulate(&text, &["network.queue_buffer_bytes=1000000000000"]).summary.without_wall_clock();
        let mut a = serde_json::to_value(&plain).unwrap();
        let mut b = serde_json::to_value(&pooled).unwrap();
        for v in [&mut a, &mut b] {
            v.as_object_mut().unwrap().remove("events");
        }
        assert_eq!(a, b, "{p}");
        assert_eq!(plain.messages_completed, 4, "{p}");
    }
}
