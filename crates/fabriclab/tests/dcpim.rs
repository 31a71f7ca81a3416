//! dcPIM: exact lone-message latency (short messages at the ideal, long ones
//! after one matching phase, paced at c/k of the line rate), the matching's
//! channel limit (hosts driven directly, every packet visible), and the
//! incast behaviour the matching buys (a small downlink queue).

mod common;
use common::*;
use fabriclab::engine::{serialization_time, stream, SimRng, Stream, Time};
use fabriclab::net::wire::data_wire;
use fabriclab::net::{Fabric, Packet};
use fabriclab::transport::dcpim::{Dcpim, DcpimHeader, DcpimParams};
use fabriclab::transport::{AppEvent, Cx, HostInfo, Message, Transport};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

const GBPS100: u64 = 100_000_000_000;

fn info(id: u32, n_hosts: u32, base_rtt: Time) -> HostInfo {
    HostInfo::at_100gbps(id, n_hosts, 8, base_rtt)
}

fn base_rtt(base: &str) -> Time {
    let cfg = config(base, &[]);
    Fabric::build(cfg.topology.build(), 8, u64::MAX, u64::MAX).unwrap().base_rtt(1460)
}

#[test]
fn short_messages_take_exactly_their_ideal_latency() {
    for (base, src, dst) in [(&dumbbell("dcpim"), 0, 1), (&leaf_spine("dcpim"), 0, 1), (&leaf_spine("dcpim"), 0, 143)] {
        for size in [1u64, 100, 1459, 1460, 1461, 2920, 50_000, 99_999, 100_000] {
            let m = lone(base, src, dst, size, &[]);
            let fct = m.end_ps.expect("completes") - m.start_ps;
            assert_eq!(fct, m.ideal_ps, "size {size} {src}->{dst}");
        }
    }
}

/// A long message notifies its receiver, waits for the next epoch boundary,
/// is matched in that epoch's first round on as many channels c as it needs
/// to finish in one data phase, and from the end of the matching phase
/// receives one token per packet every k/c packet times. With full packets
/// and no other traffic nothing queues, so its completion time is exact:
/// boundary + M + (n - 1) token intervals + one token and one data packet
/// one-way.
#[test]
fn long_messages_wait_for_one_matching_phase_then_run_at_the_matched_rate() {
    let p = DcpimParams::default();
    let k = p.channels as u64;
    for (base, src, dst) in [(&dumbbell("dcpim"), 0, 1), (&leaf_spine("dcpim"), 0, 143), (&leaf_spine("dcpim"), 0, 1)] {
        let t = p.timing(&info(0, 2, base_rtt(base)));
        let link_pkts = (t.epoch / t.packet) / k;
        // One-way latencies: a control packet is a minimum frame (a 6-byte message), then a full packet.
        let owd_ctrl = lone(base, src, dst, 6, &[]).ideal_ps;
        let owd_data = lone(base, src, dst, 1460, &[]).ideal_ps;
        assert_eq!(data_wire(6), 84);
        // From just above 1 BDP (69 packets) to all k channels' worth of one data phase.
        let lp = link_pkts;
        for n in [69, 70, lp, lp + 1, 2 * lp + 1, 3 * lp + 1, k * lp] {
            let size = n * 1460;
            if size <= 100_000 {
                continue; // short
            }
            let m = lone(base, src, dst, size, &[]);
            let fct = m.end_ps.expect("completes") - m.start_ps;
            let c = n.div_ceil(link_pkts).min(k);
            let interval = (k * t.packet).div_ceil(c);
            let boundary = owd_ctrl.div_ceil(t.epoch) * t.epoch;
            let expected = boundary + t.matching + (n - 1) * interval + owd_ctrl + owd_data;
            assert_eq!(fct, expected, "{src}->{dst} {n} packets on {c} channels");
            assert!(fct >= m.ideal_ps + t.matching, "{n} packets: fct {fct} < ideal {} + M", m.ideal_ps);
        }
    }
}

/// With `prompt_channels` (the simulator since 2023), a pair matched in
/// round 1 starts at once on channels idle in the current data phase, until
/// the matching ends and its data phase takes over: a lone long message
/// waits one round instead of a whole matching phase.
#[test]
fn prompt_channels_start_a_lone_message_after_one_round() {
    let p = DcpimParams { prompt_channels: true, ..Default::default() };
    let k = p.channels as u64;
    let (base, src, dst) = (&leaf_spine("dcpim"), 0, 143);
    let t = p.timing(&info(0, 2, base_rtt(base)));
    let lp = (t.epoch / t.packet) / k;
    let owd_ctrl = lone(base, src, dst, 6, &[]).ideal_ps;
    let owd_data = lone(base, src, dst, 1460, &[]).ideal_ps;
    let boundary = owd_ctrl.div_ceil(t.epoch) * t.epoch;
    for n in [69, 70, lp + 1, 2 * lp + 1, k * lp] {
        let m = lone(base, src, dst, n * 1460, &["protocol.dcpim.prompt_channels=true"]);
        let fct = m.end_ps.expect("completes") - m.start_ps;
        let c = n.div_ceil(lp).min(k);
        let interval = (k * t.packet).div_ceil(c);
        // Tokens from the end of round 1; those due after the matching phase
        // restart on the data phase's own clock.
        let in_prompt = (t.matching - t.round).div_ceil(interval);
        let last_token = if n <= in_prompt {
            boundary + t.round + (n - 1) * interval
        } else {
            boundary + t.matching + (n - in_prompt - 1) * interval
        };
        let expected = last_token + owd_ctrl + owd_data;
        assert!(fct.abs_diff(expected) <= t.packet, "{n} packets on {c}: fct {fct} expected {expected}");
        let without = lone(base, src, dst, n * 1460, &[]);
        assert!(fct < without.end_ps.unwrap(), "{n} packets: prompt {fct} vs {}", without.end_ps.unwrap());
        assert!(fct >= m.ideal_ps + t.round);
    }
}

#[test]
fn a_message_longer_than_one_data_phase_keeps_its_channels() {
    // 2 MB needs 18 channel-phases: it is matched on all k channels in
    // consecutive epochs and runs at line rate after the first matching.
    let p = DcpimParams::default();
    let t = p.timing(&info(0, 2, base_rtt(&leaf_spine("dcpim"))));
    let m = lone(&leaf_spine("dcpim"), 0, 143, 2_000_000, &[]);
    let extra = m.end_ps.unwrap() - m.start_ps - m.ideal_ps;
    assert!(extra >= t.epoch + t.matching - 8_000_000, "extra {extra}");
    assert!(extra <= t.epoch + t.matching + 10_000_000, "extra {extra}");
}

// ------------------------------------------------------------ direct drive

/// Hosts joined by one ideal switch: NIC and downlink serialise at 100 Gbps
/// (FIFO), each side adds `delay`. Every packet passes through `observe`.
struct Harness {
    hosts: Vec<Dcpim>,
    rngs: Vec<SimRng>,
    heap: BinaryHeap<Reverse<(Time, u64)>>,
    events: Vec<Ev>,
    nic_free: Vec<Time>,
    down_free: Vec<Time>,
    delay: Time,
    timers: Vec<(Time, u64)>,
    app: Vec<AppEvent>,
    completed: usize,
    /// Receiver -> token expiry (one per data phase) -> senders tokened, tokens.
    tokens: BTreeMap<(u32, Time), (BTreeSet<u32>, u64)>,
}

#[derive(Clone, Copy)]
enum Ev {
    Start(Message),
    Timer(u32, u64),
    NicFree(u32),
    Arrive(Packet<DcpimHeader>),
}

impl Harness {
    fn new(n: u32, p: &DcpimParams, delay: Time) -> Harness {
        let rtt = 2 * (2 * delay) + 2 * serialization_time(1538, GBPS100) + 2 * serialization_time(84, GBPS100);
        Harness {
            hosts: (0..n).map(|i| Dcpim::new(p, &info(i, n, rtt))).collect(),
            rngs: (0..n).map(|i| stream(1, Stream::Host, i as u64)).collect(),
            heap: BinaryHeap::new(),
            events: Vec::new(),
            nic_free: vec![0; n as usize],
            down_free: vec![0; n as usize],
            delay,
            timers: Vec::new(),
            app: Vec::new(),
            completed: 0,
            tokens: BTreeMap::new(),
        }
    }

    fn at(&mut self, t: Time, ev: Ev) {
        self.heap.push(Reverse((t, self.events.len() as u64)));
        self.events.push(ev);
    }

    fn after_call(&mut self, now: Time, h: u32) {
        for (t, tok) in std::mem::take(&mut self.timers) {
            self.at(t, Ev::Timer(h, tok));
        }
        for e in self.app.drain(..) {
            self.completed += matches!(e, AppEvent::Completed { .. }) as usize;
        }
        self.pull(now, h);
    }

    fn pull(&mut self, now: Time, h: u32) {
        if self.nic_free[h as usize] > now {
            return;
        }
        let mut cx = Cx::new(now, &mut self.rngs[h as usize], &mut self.timers, &mut self.app);
        let pkt = self.hosts[h as usize].poll_transmit(&mut cx);
        for (t, tok) in std::mem::take(&mut self.timers) {
            self.at(t, Ev::Timer(h, tok));
        }
        let Some(pkt) = pkt else { return };
        if let DcpimHeader::Token { expires, .. } = pkt.hdr {
            let e = self.tokens.entry((pkt.src, expires)).or_default();
            e.0.insert(pkt.dst);
            e.1 += 1;
        }
        let ser = serialization_time(pkt.wire_bytes as u64, GBPS100);
        self.nic_free[h as usize] = now + ser;
        self.at(now + ser, Ev::NicFree(h));
        let d = pkt.dst as usize;
        let start = (now + ser + self.delay).max(self.down_free[d]);
        self.down_free[d] = start + ser;
        self.at(start + ser + self.delay, Ev::Arrive(pkt));
    }

    fn run(&mut self, until: Time) {
        while let Some(Reverse((now, i))) = self.heap.pop() {
            if now > until {
                break;
            }
            let ev = self.events[i as usize];
            let h = match ev {
                Ev::Start(m) => m.src,
                Ev::Timer(h, _) | Ev::NicFree(h) => h,
                Ev::Arrive(p) => p.dst,
            };
            let mut cx = Cx::new(now, &mut self.rngs[h as usize], &mut self.timers, &mut self.app);
            let host = &mut self.hosts[h as usize];
            match ev {
                Ev::Start(m) => host.start_message(&mut cx, &m),
                Ev::Timer(_, tok) => host.on_timer(&mut cx, tok),
                Ev::NicFree(_) => {}
                Ev::Arrive(p) => host.on_packet(&mut cx, &p),
            }
            self.after_call(now, h);
        }
    }
}

/// An 8-to-1 incast of long messages that each need a single channel, then
/// an all-to-all of longer ones: no host is ever matched on more than k
/// channels, seen both from the protocol's own count and on the wire (the
/// senders a receiver tokens in one data phase, and how many tokens: at most
/// one per packet time). The incast makes the limit bind: 8 senders ask,
/// exactly k are admitted per epoch.
#[test]
fn receivers_and_senders_are_matched_on_at_most_k_channels() {
    for (k, prompt_channels) in [(1u32, false), (2, false), (4, false), (2, true), (4, true)] {
        let p = DcpimParams { channels: k, prompt_channels, ..Default::default() };
        let n = 12u32;
        let mut h = Harness::new(n, &p, 3_000_000);
        let t = h.hosts[0].timing();
        let one_channel = (t.epoch / t.packet) / 4 * 1460; // fits one channel for every k <= 4
        assert!(one_channel > 100_000);
        let mut starts = Vec::new();
        for s in 1..9 {
            starts.push((s, 0, one_channel, 0));
        }
        for s in 0..n {
            for j in 1..4u32 {
                starts.push((s, (s + 3 * j) % n, 300_000 * j as u64, 5 * t.epoch * j as u64));
            }
        }
        for (i, &(src, dst, size, start)) in starts.iter().enumerate() {
            h.at(start, Ev::Start(Message { id: i as u64, src, dst, size, start }));
        }
        h.run(50_000_000_000);
        assert_eq!(h.completed, starts.len(), "k = {k}");
        for (i, host) in h.hosts.iter().enumerate() {
            let s = host.stats();
            assert!(s.max_rx_channels <= k && s.max_rx_senders <= k, "k = {k}, host {i}: {s:?}");
            assert!(s.max_live_channels <= k, "k = {k}, host {i}: {s:?}");
            assert!(s.max_tx_channels <= k && s.max_tx_receivers <= k, "k = {k}, host {i}: {s:?}");
        }
        let s0 = h.hosts[0].stats();
        assert_eq!((s0.max_rx_channels, s0.max_rx_senders), (k, k), "k = {k}: {s0:?}");
        for (&(r, _), (senders, count)) in &h.tokens {
            assert!(senders.len() <= k as usize, "k = {k}: receiver {r} tokened {senders:?} in one phase");
            assert!(*count <= t.epoch / t.packet + k as u64, "receiver {r}: {count} tokens in one phase");
        }
        let split = h.tokens.iter().filter(|((r, _), (s, _))| *r == 0 && s.len() == k as usize).count();
        assert!(split > 0, "k = {k}: the incast receiver never tokened k senders in one phase");
    }
}

// ------------------------------------------------------------ incast

const STAR9: &str = r#"
[topology]
kind = "star"
hosts = 9
[protocol]
name = "dcpim"
[workload]
kind = "incast"
senders = 8
receiver = 0
bytes = 2000000
[run]
duration_ms = 10.0
warmup_ms = 0.0
"#;

/// Matching admits at most k senders at 1/k of the rate each, so an 8-to-1
/// incast of long messages barely queues at the receiver's downlink.
#[test]
fn incast_keeps_the_downlink_queue_small() {
    let out = simulate(STAR9, &[]);
    let s = &out.summary;
    let dctcp = simulate(STAR9, &["protocol.name=dctcp"]).summary;
    eprintln!("incast max ToR queue: dcpim {} B, dctcp {} B", s.tor_queue_max_bytes, dctcp.tor_queue_max_bytes);
    assert_eq!(s.messages_completed, 8);
    // A few packets: tokens are paced at exactly the line rate, so what else
    // reaches the downlink (control packets, the overlap of two epochs' first
    // and last tokens) lingers until a token slot goes unused.
    assert!(s.tor_queue_max_bytes <= 10 * 1538, "max queue {}", s.tor_queue_max_bytes);
    assert!(s.tor_queue_max_bytes * 50 < dctcp.tor_queue_max_bytes);
    // After the first matching the downlink stays busy: 16 MB at line rate plus a few epochs.
    let last = out.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap();
    let line_rate = 16_000_000.0 * 1538.0 / 1460.0 * 80.0;
    eprintln!("dcpim incast: done at {last} ps, line-rate bound {line_rate}");
    assert!((last as f64) < line_rate * 1.15, "incast took {last} ps");
}

/// The invariants (tests/invariants.rs) with the optional prompt channels
/// and with k = 1, on a slice of WKb at 70% load.
#[test]
fn options_keep_the_invariants() {
    let topo = "[topology]\nkind = \"leaf_spine\"\ntors = 3\nhosts_per_tor = 4\nspines = 2\n\
                [run]\nduration_ms = 50.0\nwarmup_ms = 0.0\n";
    let wl = "[workload]\nkind = \"poisson\"\nsize_dist = \"wkb\"\nload = 0.7\n";
    let t = poisson_trace(wl, topo, 1000.0, 3);
    let text = format!("{topo}[protocol]\nname = \"dcpim\"\n{}", trace_workload(&t));
    for extra in [["protocol.dcpim.prompt_channels=true"], ["protocol.dcpim.channels=1"]] {
        let out = simulate(&text, &extra);
        let s = &out.summary;
        assert!(s.messages_started > 50);
        assert_eq!(s.messages_completed, s.messages_started, "{extra:?}");
        assert_eq!(s.packets_sent, s.packets_received + s.drops + s.packets_in_flight, "{extra:?}");
        for m in &out.messages {
            assert_eq!(m.delivered, m.size, "{extra:?}: message {}", m.id);
            assert!(m.slowdown().unwrap() >= 1.0, "{extra:?}: message {}", m.id);
        }
    }
}
