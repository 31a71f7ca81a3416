//! ExpressPass through the whole simulator: lone-message latency (one credit
//! round trip over the ideal), the paper's bounded data queues under incast
//! while credits are dropped, convergence of a newcomer to its fair share,
//! and loss recovery.

mod common;
use common::*;
use fabriclab::engine::serialization_time;
use fabriclab::metrics::{MessageRecord, Summary};
use fabriclab::net::wire::packets_for;

const MSS: u32 = 1460;
const FRAME: u64 = 1538;
/// Credit spacing at 100 Gbps: the link time of a credit plus a full frame.
const T_C: u64 = (84 + 1538) * 80;

const DUMBBELL: &str = "[topology]\nkind = \"dumbbell\"\nhosts_left = 1\nhosts_right = 1\n";
const LEAF_SPINE: &str = "[topology]\nkind = \"leaf_spine\"\n";

fn lone(topo: &str, src: u32, dst: u32, size: u64, extra: &[&str]) -> MessageRecord {
    let t = trace(&[(0.0, src, dst, size)]);
    let text = format!(
        "{topo}[protocol]\nname = \"expresspass\"\n{}[run]\nduration_ms = 5.0\nwarmup_ms = 0.0\n",
        trace_workload(&t)
    );
    let out = simulate(&text, extra);
    assert_eq!(out.messages.len(), 1);
    out.messages[0]
}

fn fct(m: &MessageRecord) -> u64 {
    m.end_ps.unwrap_or_else(|| panic!("message of {} B did not complete", m.size)) - m.start_ps
}

const PATHS: [(&str, u32, u32); 3] = [(DUMBBELL, 0, 1), (LEAF_SPINE, 0, 1), (LEAF_SPINE, 0, 143)];

/// The ideal latency of a 1-byte message is the one-way latency of an 84-byte
/// frame, i.e. of a CREDIT_REQUEST or a CREDIT on that path.
fn control_one_way(topo: &str, src: u32, dst: u32) -> u64 {
    lone(topo, src, dst, 1, &[]).ideal_ps
}

#[test]
fn lone_single_packet_message_pays_exactly_one_credit_round_trip() {
    // No unscheduled data: CREDIT_REQUEST out, the first credit (sent at once) back, then the data.
    for (topo, src, dst) in PATHS {
        let ctrl = control_one_way(topo, src, dst);
        for size in [1u64, 100, 1000, 1459, 1460] {
            let m = lone(topo, src, dst, size, &[]);
            assert_eq!(fct(&m), m.ideal_ps + 2 * ctrl, "{src}->{dst} {size} B");
        }
    }
}

#[test]
fn lone_message_at_full_credit_rate_is_clocked_by_credits() {
    // Starting at the maximum credit rate without jitter, credits arrive one per
    // T_C = (84 + 1538) B of link time, and each releases one packet at once:
    // the last packet leaves (n - 1) T_C after the first. (Full packets only: a
    // short last packet would catch up with the one before it on the way.)
    let full =
        ["protocol.expresspass.alpha=1", "protocol.expresspass.small_flow_packets=0", "protocol.expresspass.jitter=0"];
    for (topo, src, dst) in PATHS {
        let ctrl = control_one_way(topo, src, dst);
        for size in [2 * 1460u64, 69 * 1460, 685 * 1460] {
            let n = packets_for(size, MSS);
            let last = lone(topo, src, dst, MSS as u64, &[]).ideal_ps;
            let m = lone(topo, src, dst, size, &full);
            assert_eq!(fct(&m), 2 * ctrl + (n - 1) * T_C + last, "{src}->{dst} {size} B");
            assert!(fct(&m) > m.ideal_ps + 2 * ctrl);
        }
    }
}

#[test]
fn small_flows_start_slower() {
    // ns-2: a flow of n < 40 packets starts at alpha x n / 40 of the maximum
    // credit rate; with alpha = 1/16 the second credit of a 2-packet message
    // comes 320 T_C (41.5 us, +-10% jitter) after the first.
    let (topo, src, dst) = (LEAF_SPINE, 0, 143);
    let ctrl = control_one_way(topo, src, dst);
    let last = lone(topo, src, dst, 1, &[]).ideal_ps;
    for seed in 1..=5 {
        let m = lone(topo, src, dst, 1461, &[&format!("run.seed={seed}")]);
        let gap = fct(&m) - 2 * ctrl - last;
        let nominal = 320 * T_C;
        assert!(gap >= nominal * 9 / 10 && gap <= nominal * 11 / 10, "seed {seed}: second credit after {gap} ps");
    }
}

// ---------------------------------------------------------------- incast

fn incast(topo: &str, senders: u32, receiver: u32, bytes: u64, extra: &[&str]) -> (Summary, Vec<MessageRecord>) {
    let list: Vec<String> = (0..senders).map(|i| i.to_string()).collect();
    let text = format!(
        "{topo}[protocol]\nname = \"expresspass\"\n[workload]\nkind = \"incast\"\nreceiver = {receiver}\n\
         sender_hosts = [{}]\nbytes = {bytes}\n[run]\nduration_ms = 20.0\nwarmup_ms = 0.0\n",
        list.join(", ")
    );
    let out = simulate(&text, extra);
    (out.summary, out.messages)
}

/// Time to move `bytes` of payload at the maximum credit rate of a `gbps` link:
/// one full packet per credit spacing.
fn credit_bound(bytes: u64, gbps: u64) -> u64 {
    bytes.div_ceil(MSS as u64) * serialization_time(84 + FRAME, gbps * 1_000_000_000)
}

#[test]
fn incast_keeps_data_queues_near_zero() {
    // 16 x 2 MB into one host of a star. The receiver's own credit shaper is the
    // credit bottleneck (excess credits die in its host queue); the data its
    // credits release arrive no faster than the downlink drains them.
    let star = "[topology]\nkind = \"star\"\nhosts = 17\n";
    let (s, msgs) = incast(star, 16, 16, 2_000_000, &[]);
    let (dctcp, _) = incast(star, 16, 16, 2_000_000, &["protocol.name=dctcp"]);
    let done = msgs.iter().map(|m| m.end_ps.expect("completes")).max().unwrap();
    let bound = credit_bound(32_000_000, 100);
    eprintln!(
        "star incast: max ToR queue {} B (dctcp {} B), done at {:.1} us = {:.3} x credit bound",
        s.tor_queue_max_bytes,
        dctcp.tor_queue_max_bytes,
        done as f64 / 1e6,
        done as f64 / bound as f64
    );
    assert_eq!((s.messages_completed, s.drops), (16, 0));
    // The switch holds data frames waiting for the receiver's downlink and
    // credits waiting in the 16 senders' credit queues. The receiver's NIC
    // sends at most 2 credits back to back (ns-2 burst), then one per T_C, so a
    // few frames and a few credits at most: 4 frames is a sound ceiling.
    assert!(s.tor_queue_max_bytes <= 4 * FRAME, "max ToR queue {} B", s.tor_queue_max_bytes);
    assert!(dctcp.tor_queue_max_bytes > 50 * s.tor_queue_max_bytes);
    // ... at close to the rate the credits allow.
    assert!(done < bound * 11 / 10, "incast took {done} ps, credit bound {bound} ps");
}

#[test]
fn credits_dropped_at_an_oversubscribed_core_bound_its_queue() {
    // 16 senders in one rack, the receiver in the other, one 50 Gbps spine link:
    // the receiver credits at 100 Gbps, the core's shaped credit queue drops the
    // excess, so the data crossing the core never exceeds 50 Gbps.
    let topo = "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 16\nspines = 1\nfabric_rate_gbps = 50.0\n";
    let (s, msgs) = incast(topo, 16, 16, 2_000_000, &[]);
    let (dctcp, _) = incast(topo, 16, 16, 2_000_000, &["protocol.name=dctcp"]);
    let done = msgs.iter().map(|m| m.end_ps.expect("completes")).max().unwrap();
    let bound = credit_bound(32_000_000, 50);
    eprintln!(
        "core incast: {} credits dropped, max switch queue {} B (dctcp {} B), done at {:.3} x credit bound",
        s.credit_drops,
        s.switch_queue_max_bytes,
        dctcp.switch_queue_max_bytes,
        done as f64 / bound as f64
    );
    assert_eq!((s.messages_completed, s.drops), (16, 0));
    assert!(s.credit_drops > 1000, "only {} credits dropped", s.credit_drops);
    // Switch occupancy counts queued credits too (at most 8 x 84 B per port).
    assert!(s.switch_queue_max_bytes <= 4 * FRAME, "max switch queue {} B", s.switch_queue_max_bytes);
    assert!(dctcp.switch_queue_max_bytes > 100 * s.switch_queue_max_bytes);
    assert!(done < bound * 12 / 10, "core incast took {done} ps, credit bound {bound} ps");
}

// ---------------------------------------------------------------- convergence

/// Payload delivered by each of two long flows into host 143 (A from host 0
/// from t = 0, B from host 16 from t = 200 us) when the run stops at `t_us`.
/// Runs that stop later replay earlier ones exactly, so differences of these
/// give each flow's delivery rate over any window.
fn delivered_at(t_us: f64, extra: &[&str]) -> (u64, u64) {
    let t = trace(&[(0.0, 0, 143, 100_000_000), (200.0, 16, 143, 100_000_000)]);
    let text = format!(
        "{LEAF_SPINE}[protocol]\nname = \"expresspass\"\n{}[run]\nduration_ms = {}\nwarmup_ms = 0.0\n",
        trace_workload(&t),
        t_us / 1e3
    );
    let m = simulate(&text, extra).messages;
    (m[0].delivered, m.get(1).map_or(0, |b| b.delivered))
}

/// Delivery rates (Gbps) of A and B over [from_us, to_us].
fn rates(from_us: f64, to_us: f64, extra: &[&str]) -> (f64, f64) {
    let (a0, b0) = delivered_at(from_us, extra);
    let (a1, b1) = delivered_at(to_us, extra);
    let gbps = |d: u64| d as f64 * 8.0 / ((to_us - from_us) * 1e3);
    (gbps(a1 - a0), gbps(b1 - b0))
}

fn assert_fair(label: &str, from_rtts: f64, extra: &[&str]) {
    let rtt = 7.5; // us, the fabric's base RTT
    let from = 200.0 + from_rtts * rtt;
    let (a, b) = rates(from, from + 20.0 * rtt, extra);
    eprintln!("{label}: {from_rtts} to {} RTTs after B starts: A {a:.1} Gbps, B {b:.1} Gbps", from_rtts + 20.0);
    assert!((a - b).abs() <= 0.2 * a.max(b), "{label}: A {a:.1} vs B {b:.1} Gbps");
    // Together they keep the downlink at the rate credits allow (1460 / 1622 of 100 Gbps).
    assert!(a + b > 0.95 * 100.0 * 1460.0 / 1622.0, "{label}: A + B = {:.1} Gbps", a + b);
}

#[test]
fn newcomer_converges_to_its_fair_share() {
    // Before B arrives A has the whole downlink; B starts at alpha of the max rate.
    let (a, b) = rates(150.0, 200.0, &[]);
    assert!(a > 85.0 && b == 0.0, "A alone: {a:.1} Gbps");
    for seed in ["run.seed=1", "run.seed=2", "run.seed=3"] {
        // With the ns-2 defaults alpha = w_init = 1/2 (the ExpressPass paper's
        // setting) B reaches its share within ~15 RTTs.
        let fast = [seed, "protocol.expresspass.alpha=0.5", "protocol.expresspass.w_init=0.5"];
        assert_fair(&format!("alpha = w_init = 1/2, {seed}"), 15.0, &fast);
        // SIRD Table 2 starts newcomers at 1/16 and raises w in 0.05 steps: ~45 RTTs.
        assert_fair(&format!("SIRD Table 2, {seed}"), 45.0, &[seed]);
    }
    // And not yet at 10 RTTs with SIRD's parameters (the test can tell).
    let (a, b) = rates(200.0 + 10.0 * 7.5, 200.0 + 30.0 * 7.5, &[]);
    eprintln!("SIRD Table 2: 10 to 30 RTTs after B starts: A {a:.1} Gbps, B {b:.1} Gbps");
    assert!(a > 1.3 * b, "SIRD Table 2, 10-30 RTTs: A {a:.1} B {b:.1}");
}

// ---------------------------------------------------------------- loss

/// Eight 1 MB flows from one rack to eight receivers in another through one
/// 100 Gbps spine link, with 40 KB port buffers.
fn permutation(extra: &[&str]) -> Summary {
    let rows: Vec<_> = (0..8u32).map(|i| (0.0, i, 8 + i, 1_000_000)).collect();
    let t = trace(&rows);
    let text = format!(
        "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 8\nspines = 1\nfabric_rate_gbps = 100.0\n\
         [network]\nbuffer_bytes = 40000\n[protocol]\nname = \"expresspass\"\n{}\
         [run]\nduration_ms = 100.0\nwarmup_ms = 0.0\n",
        trace_workload(&t)
    );
    simulate(&text, extra).summary
}

#[test]
fn shaped_credits_prevent_data_loss_and_nacks_recover_it_without_shaping() {
    let shaped = permutation(&[]);
    assert_eq!(shaped.drops, 0, "ExpressPass loses no data behind shaped credits");
    assert!(shaped.credit_drops > 0);
    assert_eq!(shaped.bytes_delivered, 8_000_000);
    // Without switch support eight receivers overdrive the core: data is dropped
    // and recovered by NACKs and credit-paced retransmission.
    let unshaped = permutation(&["network.credit_shaping=false"]);
    eprintln!(
        "permutation through the core: shaped {} data drops / {} credit drops; unshaped {} data drops",
        shaped.drops, shaped.credit_drops, unshaped.drops
    );
    assert!(unshaped.drops > 100);
    assert_eq!(unshaped.credit_drops, 0);
    assert_eq!(unshaped.messages_completed, 8);
    assert_eq!(unshaped.bytes_delivered, 8_000_000);
}

#[test]
fn poisson_traffic_recovers_from_every_kind_of_loss() {
    // Tiny buffers and no credit shaping: data, CREDIT_REQUESTs, CREDIT_STOPs
    // and NACKs all get dropped; every message must still complete, once.
    // A 2:1 oversubscribed core, so that unshaped credits overdrive it.
    let topo = "[topology]\nkind = \"leaf_spine\"\ntors = 3\nhosts_per_tor = 4\nspines = 2\nfabric_rate_gbps = 100.0\n";
    for (dist, until_us) in [("wka", 600.0), ("wkb", 1000.0), ("wkc", 3000.0)] {
        let wl = format!("[workload]\nkind = \"poisson\"\nsize_dist = \"{dist}\"\nload = 0.7\n");
        let t = poisson_trace(&wl, &format!("{topo}[run]\nduration_ms = 1.0\nwarmup_ms = 0.0\n"), until_us, 3);
        let text = format!(
            "{topo}[network]\nbuffer_bytes = 9254\ncredit_shaping = false\n[protocol]\nname = \"expresspass\"\n{}\
             [run]\nduration_ms = 200.0\nwarmup_ms = 0.0\n",
            trace_workload(&t)
        );
        let out = simulate(&text, &[]);
        let s = &out.summary;
        eprintln!("{dist}: {} messages, {} drops", s.messages_started, s.drops);
        assert!(s.drops > 0, "{dist}: expected drops");
        assert_eq!(s.messages_completed, s.messages_started, "{dist}");
        assert!(out.messages.iter().all(|m| m.delivered == m.size && m.slowdown().unwrap() >= 1.0));
        assert_eq!(s.packets_sent, s.packets_received + s.drops + s.credit_drops + s.packets_in_flight);
    }
}
