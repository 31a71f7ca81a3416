//! The loop rules one at a time (docs/protocols/sird.md, "AIMD loops"), with the
//! defaults of the authors' simulator: credit in wire bytes, a full packet = 1538.
use super::loops::BucketLoop;
use super::*;
use crate::transport::AppEvent;
use fabriclab_engine::{stream, Stream, US};

const FULL: f64 = 1538.0;

fn rules() -> LoopRules {
    let info = HostInfo::at_100gbps(0, 4, 2, 8 * US);
    Sird::new(&SirdParams::default(), &info).rules
}

/// A loop at `size` whose alpha is `alpha` and stays so (no window closes).
fn steady(r: &LoopRules, size: f64, alpha: f64, floor: f64) -> BucketLoop {
    let mut l = BucketLoop::new(r, floor);
    (l.size, l.alpha, l.win_target_pkts) = (size, alpha, u32::MAX);
    l
}

#[test]
fn defaults_are_the_artifacts_loop() {
    let r = rules();
    assert_eq!((r.increase, r.cut, r.g, r.alpha_init), (Increase::PerPacket, Cut::OnMark, 0.08, 0.0));
    assert_eq!((r.full, r.max, r.cut_interval_windows), (FULL, 100_000.0, 1.5));
    let l = BucketLoop::new(&r, 10_000.0);
    // Bucket at its maximum; alpha updated after the first packet; first cut after
    // one bucket of full packets (100,000 / 1538 = 65).
    assert_eq!((l.size, l.win_target_pkts, l.next_cut_pkts), (100_000.0, 1, 65));
}

#[test]
fn per_packet_increase_is_one_packet_per_bucket_of_packets() {
    let r = rules();
    let mut l = steady(&r, 50_000.0, 0.0, 10_000.0);
    l.on_data(&r, 1538, false, 50_000.0);
    assert_eq!(l.size, 50_000.0 + FULL * FULL / 50_000.0);
    // The step follows the combined bucket, not this loop's own.
    let mut l = steady(&r, 50_000.0, 0.0, 10_000.0);
    l.on_data(&r, 1538, false, 20_000.0);
    assert_eq!(l.size, 50_000.0 + FULL * FULL / 20_000.0);
    // A marked packet that may not cut still grows the bucket (as in the artifact).
    let mut l = steady(&r, 50_000.0, 0.5, 10_000.0);
    l.next_cut_pkts = 10;
    l.on_data(&r, 1538, true, 50_000.0);
    assert_eq!(l.size, 50_000.0 + FULL * FULL / 50_000.0);
    // A bucket's worth of unmarked packets adds one full packet, to within rounding.
    let mut l = steady(&r, 50_000.0, 0.0, 10_000.0);
    for _ in 0..(50_000.0 / FULL) as u32 {
        let c = l.size.min(100_000.0);
        l.on_data(&r, 1538, false, c);
    }
    assert!((l.size - 50_000.0 - FULL).abs() < 0.05 * FULL, "grew to {}", l.size);
}

#[test]
fn cut_on_a_marked_packet_at_most_once_per_interval() {
    let r = rules();
    let mut l = steady(&r, 80_000.0, 0.5, 10_000.0);
    l.next_cut_pkts = 10;
    let ai = |s: f64| s + FULL * FULL / 80_000.0;
    // Unmarked packets never cut.
    for _ in 0..9 {
        let s = l.size;
        l.on_data(&r, 1538, false, 80_000.0);
        assert_eq!(l.size, ai(s));
    }
    // The tenth packet since the last cut is marked: cut by alpha/2, then the increase.
    let s = l.size;
    l.on_data(&r, 1538, true, 80_000.0);
    assert_eq!(l.size, ai(s * 0.75));
    // The next cut waits 1.5 windows of the combined bucket: 1.5 * 80,000 / 1538 = 78 packets.
    assert_eq!(l.next_cut_pkts, 78);
    for i in 1..78 {
        let s = l.size;
        l.on_data(&r, 1538, true, 80_000.0);
        assert_eq!(l.size, ai(s), "packet {i} after the cut");
    }
    let s = l.size;
    l.on_data(&r, 1538, true, 80_000.0);
    assert_eq!(l.size, ai(s * 0.75));
}

#[test]
fn alpha_follows_marked_packets_once_per_window() {
    let r = rules();
    let mut l = BucketLoop::new(&r, 10_000.0);
    // First window: one packet, marked: alpha = 0.08.
    assert!(l.on_data(&r, 1538, true, 100_000.0));
    assert_eq!(l.alpha, 0.08);
    // Later windows: the combined bucket in full packets (here 30,000 / 1538 = 19).
    l.set_window(&r, 30_000.0);
    assert_eq!(l.win_target_pkts, 19);
    for i in 0..19 {
        let closed = l.on_data(&r, 1538, i % 2 == 0, 30_000.0);
        assert_eq!(closed, i == 18);
    }
    assert_eq!(l.alpha, 0.92 * 0.08 + 0.08 * (10.0 / 19.0));
}

#[test]
fn floors_hold_each_bucket() {
    let r = rules();
    let (sf, nf) = (0.1 * 100_000.0, 0.03 * 100_000.0);
    for floor in [sf, nf] {
        let mut l = steady(&r, 100_000.0, 1.0, floor);
        for _ in 0..200 {
            l.next_cut_pkts = 0;
            l.on_data(&r, 1538, true, l.size);
        }
        // Each cut halves, each packet adds FULL^2/bucket: it settles just above the floor.
        assert!(l.size >= floor && l.size < floor + FULL * FULL / floor + 1.0, "floor {floor}: {}", l.size);
    }
}

#[test]
fn old_per_window_rules_remain_reachable() {
    let p = SirdParams {
        increase: Increase::PerWindow,
        cut: Cut::PerWindow,
        credit_bytes: CreditBytes::Payload,
        alpha_init: 1.0,
        g: 1.0 / 16.0,
        ..SirdParams::default()
    };
    let r = Sird::new(&p, &HostInfo::at_100gbps(0, 4, 2, 8 * US)).rules;
    let mut l = BucketLoop::new(&r, 1460.0);
    // No change until a bucket's worth of bytes, then one MSS (capped at the max)
    // or a cut by alpha/2 if anything in the window was marked.
    l.size = 14_600.0;
    for _ in 0..9 {
        assert!(!l.on_data(&r, 1460, false, l.size));
    }
    assert!(l.on_data(&r, 1460, false, l.size));
    assert_eq!(l.size, 16_060.0);
    for i in 0..11 {
        l.on_data(&r, 1460, i == 0, l.size);
    }
    // alpha: 1 -> 15/16 after the unmarked window -> (15/16)^2 + (1/16)(1/11).
    let alpha = 15.0 / 16.0 * (15.0 / 16.0) + 1.0 / 16.0 / 11.0;
    assert_eq!(l.size, 16_060.0 * (1.0 - alpha / 2.0));
}

/// Drives one host by hand.
struct Host {
    sird: Sird,
    rng: SimRng,
    timers: Vec<(Time, u64)>,
    app: Vec<AppEvent>,
}

use fabriclab_engine::SimRng;

impl Host {
    fn new(id: u32, p: &SirdParams) -> Host {
        let info = HostInfo::at_100gbps(id, 4, 2, 8 * US);
        Host { sird: Sird::new(p, &info), rng: stream(1, Stream::Host, id as u64), timers: vec![], app: vec![] }
    }
    fn with<R>(&mut self, now: Time, f: impl FnOnce(&mut Sird, &mut Cx) -> R) -> R {
        let mut cx = Cx::new(now, &mut self.rng, &mut self.timers, &mut self.app);
        f(&mut self.sird, &mut cx)
    }
    fn start(&mut self, now: Time, id: MsgId, dst: u32, size: u64) {
        let m = Message { id, src: self.sird.info.id, dst, size, start: now };
        self.with(now, |s, cx| s.start_message(cx, &m));
    }
    fn recv(&mut self, now: Time, src: u32, hdr: SirdHeader, ce: bool) {
        let mut p = Packet::new(src, self.sird.info.id, 1538, LOW, 0, hdr).with_ect();
        if ce {
            p.ecn |= crate::net::ECN_CE;
        }
        self.with(now, |s, cx| s.on_packet(cx, &p));
    }
    fn poll(&mut self, now: Time) -> Option<Packet<SirdHeader>> {
        self.with(now, |s, cx| s.poll_transmit(cx))
    }
    /// The csn bit of the next DATA packet.
    fn next_csn(&mut self, now: Time) -> bool {
        loop {
            match self.poll(now).expect("something to send").hdr {
                SirdHeader::Data { csn, .. } => return csn,
                _ => continue,
            }
        }
    }
}

#[test]
fn csn_is_suppressed_below_csn_min_messages() {
    let p = SirdParams::default();
    let mut h = Host::new(0, &p);
    // One fully scheduled message (above UnschT) to host 1, credited far beyond SThr.
    h.start(0, 1, 1, 1_000_000);
    for index in 0..60 {
        h.recv(US, 1, SirdHeader::Credit { msg: 1, index }, false);
    }
    assert!(h.sird.accumulated as f64 >= h.sird.sthr);
    assert_eq!(h.sird.active_out, 1);
    assert!(!h.next_csn(2 * US), "one message in progress: no csn");
    // A second message (with an unscheduled prefix) makes two: csn again.
    h.start(3 * US, 2, 2, 50_000);
    assert_eq!(h.sird.active_out, 2);
    assert!(h.next_csn(3 * US));
    // Today's rule: csn_min_messages = 0 marks with one message too.
    let mut h = Host::new(0, &SirdParams { csn_min_messages: 0, ..p });
    h.start(0, 1, 1, 1_000_000);
    for index in 0..60 {
        h.recv(US, 1, SirdHeader::Credit { msg: 1, index }, false);
    }
    assert!(h.next_csn(2 * US));
}

#[test]
fn unscheduled_prefix_holds_b_and_the_sender_bucket_until_it_arrives() {
    let mut h = Host::new(1, &SirdParams::default());
    // A 50,000 B message is entirely unscheduled: 35 packets, 34 x 1538 + data_wire(360).
    let charge = 34 * 1538 + data_wire(50_000 - 34 * 1460) as u64;
    let data = |index| SirdHeader::Data { msg: 7, size: 50_000, index, scheduled: false, csn: false };
    h.recv(0, 0, data(0), false);
    assert_eq!(h.sird.b_used, charge - 1538);
    assert_eq!(h.sird.peers[0].as_ref().unwrap().sb, charge - 1538);
    for i in 1..35 {
        h.recv(i as Time * US, 0, data(i), false);
    }
    assert_eq!((h.sird.b_used, h.sird.peers[0].as_ref().unwrap().sb), (0, 0));
}

#[test]
fn bucket_state_survives_idle_periods() {
    // The artifact keeps a sender's buckets and alpha for the host's lifetime (its
    // reset-after-idle rule is disabled): an idle gap changes nothing.
    let mut h = Host::new(1, &SirdParams::default());
    // Ten wholly unscheduled messages of 60 packets (92,280 B on the wire, below UnschT):
    // every packet holds credit it returns, as a real sender's would.
    let data = |msg, index| SirdHeader::Data { msg, size: 60 * 1460, index, scheduled: false, csn: true };
    for i in 0..600 {
        h.recv(i as Time * US / 10, 0, data(10 + u64::from(i / 60), i % 60), i % 3 == 0);
    }
    let before = h.sird.peers[0].clone().unwrap();
    assert!(before.sender_bkt.size < 90_000.0 && before.net_bkt.size < 100_000.0, "{before:?}");
    // 10 ms later a new message from the same sender: one more packet's worth of
    // loop arithmetic on the old state, not a fresh bucket.
    h.recv(10_000 * US, 0, SirdHeader::Data { msg: 2, size: 1460, index: 0, scheduled: false, csn: false }, false);
    let after = h.sird.peers[0].as_ref().unwrap();
    let combined = before.cap();
    let r = h.sird.rules;
    let mut expect = before.clone();
    expect.on_data(&r, 1538, false, false);
    assert_eq!(after.sender_bkt.size, expect.sender_bkt.size);
    assert_eq!(after.net_bkt.size, expect.net_bkt.size);
    assert!(after.sender_bkt.size < before.sender_bkt.size + FULL * FULL / combined + 1e-9);
}

/// Destinations of the next `n` DATA packets.
fn next_data_dsts(h: &mut Host, now: Time, n: usize) -> Vec<(u32, MsgId)> {
    (0..n)
        .map(|_| loop {
            let p = h.poll(now).expect("something to send");
            if let SirdHeader::Data { msg, .. } = p.hdr {
                break (p.dst, msg);
            }
        })
        .collect()
}

#[test]
fn deficit_policy_runs_the_artifacts_deficit_round_robin() {
    // Two receivers, fully unscheduled messages: the one to receiver 2 has fewer bytes, so
    // receiver 2 earns 0.5 / 2 + 0.5 = 0.75 a packet and receiver 1 earns 0.25. Deficits
    // (1, 2): (0.25, 0.75) -> +quanta (0.5, 1.5), 2 sends; (0.75, 1.25), 2; (1, 1), a tie: 1;
    // (0.25, 1.75), 2; ... so 2, 2, 1, 2, 2, 2, 1, 2.
    let p = SirdParams { sender_policy: SenderPolicy::Deficit, ..SirdParams::default() };
    let mut h = Host::new(0, &p);
    h.start(0, 1, 1, 90_000);
    h.start(0, 2, 2, 50_000);
    let dsts: Vec<u32> = next_data_dsts(&mut h, US, 8).into_iter().map(|(d, _)| d).collect();
    assert_eq!(dsts, [2, 2, 1, 2, 2, 2, 1, 2]);
    // Over a long run the SRPT receiver has three packets in four.
    let to2 = next_data_dsts(&mut h, US, 24).iter().filter(|(d, _)| *d == 2).count();
    assert_eq!(to2, 18);
    // Our own turns start with the round-robin turn: receiver 1 first.
    let mut h = Host::new(0, &SirdParams::default());
    h.start(0, 1, 1, 90_000);
    h.start(0, 2, 2, 50_000);
    let dsts: Vec<u32> = next_data_dsts(&mut h, US, 8).into_iter().map(|(d, _)| d).collect();
    assert_eq!(dsts, [1, 2, 2, 2, 1, 2, 2, 2]);
}

#[test]
fn deficit_policy_sends_an_unannounced_message_first_and_resets_idle_receivers() {
    let p = SirdParams { sender_policy: SenderPolicy::Deficit, ..SirdParams::default() };
    let mut h = Host::new(0, &p);
    // A 10 KB message to receiver 1 starts; after its first packet a 50 KB one to the same
    // receiver goes first for one packet (it is not announced yet), then SRPT again.
    h.start(0, 1, 1, 10_000);
    assert_eq!(next_data_dsts(&mut h, US, 1), [(1, 1)]);
    h.start(US, 2, 1, 50_000);
    assert_eq!(next_data_dsts(&mut h, US, 3), [(1, 2), (1, 1), (1, 1)]);
    // A receiver that had nothing to send at the last round starts again from zero: a
    // stale deficit of 5 left for receiver 3 is forgotten, so it ends the round below 1
    // (with the 5 kept it would send and keep 4.75).
    h.sird.drr[3] = (5.0, 1);
    h.start(US, 3, 3, 5_000);
    next_data_dsts(&mut h, US, 1);
    assert!(h.sird.drr[3].0 < 1.0, "{:?}", h.sird.drr[3]);
}

#[test]
fn unsch_t_in_wire_bytes_schedules_messages_just_below_the_bdp() {
    // UnschT = 100,000 B. In wire bytes (the default, as the artifact), 65 packets are
    // 64 x 1538 + the last one.
    let wire = SirdParams::default();
    assert_eq!(wire.unsch_t_bytes, CreditBytes::Wire);
    let w = Host::new(0, &wire);
    let d = Host::new(0, &SirdParams { unsch_t_bytes: CreditBytes::Payload, ..SirdParams::default() });
    // 94,000 B: 64 x 1538 + data_wire(560) = 99,070 on the wire, unscheduled both ways.
    assert_eq!((d.sird.unscheduled_packets(94_000), w.sird.unscheduled_packets(94_000)), (65, 65));
    // 95,000 B: 65 x 1538 + data_wire(100) = 100,148 on the wire: entirely scheduled there.
    assert_eq!((d.sird.unscheduled_packets(95_000), w.sird.unscheduled_packets(95_000)), (66, 0));
    assert_eq!((d.sird.unscheduled_packets(100_000), w.sird.unscheduled_packets(100_000)), (69, 0));
    assert_eq!(w.sird.unscheduled_packets(100_001), 0);
    // The sender asks for credit for all of it.
    let mut w = Host::new(0, &wire);
    w.start(0, 5, 1, 95_000);
    match w.poll(0).expect("a CREDITREQ").hdr {
        SirdHeader::CreditReq { sched_from, .. } => assert_eq!(sched_from, 0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn held_credit_caps_a_new_unscheduled_prefix() {
    let p = SirdParams { unsch_capped_by_held_credit: true, ..SirdParams::default() };
    let mut h = Host::new(0, &p);
    // 80,000 B to receiver 1, nothing sent yet: 54 x 1538 + data_wire(1,160) = 84,290 B held.
    h.start(0, 1, 1, 80_000);
    assert!(h.sird.control.is_empty(), "entirely unscheduled: no CREDITREQ");
    // 30,000 B to the same receiver: 100,000 - 84,290 = 15,710 B left, 10 full packets;
    // the other 11 packets wait for credit, asked for with a CREDITREQ.
    h.start(0, 2, 1, 30_000);
    match h.sird.control.pop_front().expect("a CREDITREQ").hdr {
        SirdHeader::CreditReq { msg: 2, sched_from, .. } => assert_eq!(sched_from, 10),
        other => panic!("{other:?}"),
    }
    // To another receiver, nothing is held: the whole message is unscheduled.
    h.start(0, 3, 2, 30_000);
    assert!(h.sird.control.is_empty());
    // Without the cap, as before.
    let mut d = Host::new(0, &SirdParams::default());
    d.start(0, 1, 1, 80_000);
    d.start(0, 2, 1, 30_000);
    assert!(d.sird.control.is_empty());

    // The receiver learns the cut from the CREDITREQ: packets 10..21 leave the charge of the
    // unscheduled prefix (21 x ... = 31,638 B) and are credited instead.
    let mut r = Host::new(1, &p);
    r.recv(0, 0, SirdHeader::CreditReq { msg: 2, size: 30_000, sched_from: 10 }, false);
    assert_eq!(r.sird.b_used, 10 * 1538);
    assert_eq!(r.sird.peers[0].as_ref().unwrap().sb, 10 * 1538);
    let credit = loop {
        match r.poll(US).expect("a CREDIT").hdr {
            SirdHeader::Credit { msg: 2, index } => break index,
            _ => continue,
        }
    };
    assert_eq!(credit, 10);
}

/// Credits `h` sends at `now` (with `credit_pacing = false`, all it may send), by packet index.
fn credits_now(h: &mut Host, now: Time) -> Vec<u32> {
    let mut v = vec![];
    while let Some(p) = h.poll(now) {
        if let SirdHeader::Credit { index, .. } = p.hdr {
            v.push(index);
        }
    }
    v
}

#[test]
fn sender_bucket_checked_before_the_credit_allows_one_packet_more() {
    // Receiver 1, a 1 MB message from sender 0 (entirely scheduled), B not binding.
    let run = |check: SenderBucketCheck, sender_bkt: f64| {
        let p = SirdParams { sender_bucket_check: check, credit_pacing: false, ..SirdParams::default() };
        let mut h = Host::new(1, &p);
        h.recv(0, 0, SirdHeader::CreditReq { msg: 9, size: 1_000_000, sched_from: 0 }, false);
        h.sird.peer(0).set_buckets(sender_bkt, 100_000.0);
        let n = credits_now(&mut h, 0).len();
        (n, h.sird.peers[0].as_ref().unwrap().sb)
    };
    // A bucket of 10,000 B: after the credit, 6 x 1538 = 9,228 <= 10,000 and the 7th would
    // make 10,766; before it, the 7th goes (9,228 <= 10,000) and the 8th does not.
    assert_eq!(run(SenderBucketCheck::After, 10_000.0), (6, 9_228));
    assert_eq!(run(SenderBucketCheck::Before, 10_000.0), (7, 10_766));
    // At the largest bucket both stop at 65 packets (99,970 B): with the check before, the
    // credit must also keep sb_i within 1 BDP (the artifact's srpb_bytes_ >= credit_needed).
    assert_eq!(run(SenderBucketCheck::After, 100_000.0), (65, 99_970));
    assert_eq!(run(SenderBucketCheck::Before, 100_000.0), (65, 99_970));
    // Just below it: 99,000 B. After: 64 (98,432). Before: 98,432 <= 99,000, but 65 packets
    // (99,970) fit in 1 BDP too, so 65; the 66th would pass 1 BDP.
    assert_eq!(run(SenderBucketCheck::After, 99_000.0), (64, 98_432));
    assert_eq!(run(SenderBucketCheck::Before, 99_000.0), (65, 99_970));
}

#[test]
fn loops_see_control_packets_only_with_the_key() {
    for on in [false, true] {
        let p = SirdParams { loops_see_control: on, ..SirdParams::default() };
        let mut h = Host::new(1, &p);
        h.sird.peer(0).set_buckets(50_000.0, 100_000.0);
        // A CE-marked CREDIT from host 0 (for a message host 1 sends it) is one packet of both
        // loops with the key: the first window is one packet, so netBkt's alpha becomes g = 0.08;
        // csn never marks a control packet; both grow by MSS_wire^2 / 50,000.
        h.recv(0, 0, SirdHeader::Credit { msg: 5, index: 0 }, true);
        let peer = h.sird.peers[0].as_ref().unwrap();
        assert_eq!(peer.net_bkt.alpha, if on { 0.08 } else { 0.0 });
        assert_eq!(peer.sender_bkt.alpha, 0.0);
        let grown = 50_000.0 + FULL * FULL / 50_000.0;
        assert_eq!(peer.sender_bkt.size, if on { grown } else { 50_000.0 });
        // A CREDITREQ counts too: one more packet in the window.
        h.recv(US, 0, SirdHeader::CreditReq { msg: 9, size: 1_000_000, sched_from: 0 }, false);
        let peer = h.sird.peers[0].as_ref().unwrap();
        assert_eq!(peer.sender_bkt.win_pkts, if on { 1 } else { 0 });
        // Control packets are ECN-capable only with the key, as the artifact sends every packet.
        let c = h.poll(US).expect("a credit for message 9");
        assert!(matches!(c.hdr, SirdHeader::Credit { msg: 9, .. }));
        assert_eq!(c.ecn & crate::net::ECN_ECT != 0, on);
    }
}

#[test]
fn credit_pacing_slack_lets_a_credit_go_that_far_ahead() {
    // 1,538 B at 100 Gbps: 123,040 ps a credit; 562.5 B of slack: 45,000 ps.
    for (slack, early) in [(0.0, 123_040), (562.5, 78_040)] {
        let p = SirdParams { credit_pacing_slack_bytes: slack, ..SirdParams::default() };
        let mut h = Host::new(1, &p);
        h.recv(0, 0, SirdHeader::CreditReq { msg: 9, size: 1_000_000, sched_from: 0 }, false);
        assert_eq!(credits_now(&mut h, 0), vec![0]);
        assert_eq!(credits_now(&mut h, early - 1), Vec::<u32>::new());
        assert_eq!(h.timers.last().map(|t| t.0), Some(early), "the pace timer");
        assert_eq!(credits_now(&mut h, early), vec![1]);
        // The pace itself is unchanged: the third credit is due 2 x 123,040 ps after the first.
        assert_eq!(credits_now(&mut h, 2 * 123_040 - (123_040 - early) - 1), Vec::<u32>::new());
        assert_eq!(credits_now(&mut h, 2 * 123_040 - (123_040 - early)), vec![2]);
    }
}

#[test]
fn csn_counts_waiting_messages_only_with_the_key() {
    for on in [false, true] {
        let p = SirdParams { csn_counts_waiting: on, ..SirdParams::default() };
        let mut h = Host::new(0, &p);
        // Two entirely scheduled messages, no credit yet: in progress only with the key.
        h.start(0, 1, 1, 1_000_000);
        h.start(0, 2, 2, 1_000_000);
        assert_eq!(h.sird.active_out, if on { 2 } else { 0 });
        // Credit for message 1 beyond SThr: csn needs the second message counted.
        for index in 0..40 {
            h.recv(US, 1, SirdHeader::Credit { msg: 1, index }, false);
        }
        assert_eq!(h.sird.active_out, if on { 2 } else { 1 });
        assert_eq!(h.next_csn(2 * US), on);
    }
}
