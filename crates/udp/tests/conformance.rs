//! One implementation, two drivers: the same message schedule run (a) through
//! the UDP driver on the in-memory network and fake clock and (b) through a
//! simulator-style host loop that calls the simulator's `Sird` directly (NIC
//! pull at link rate, timer heap, fixed one-way delay; no driver, no codec)
//! must make the same decisions: every packet SIRD emits, at the same time,
//! with the same credit grants per sender and the same csn marks.
//!
//! Scenario (SIRD's congested sender, cf. Fig. 10): host 0 sends to hosts 1
//! and 2, which also receive from hosts 3 and 4. Message sizes differ by
//! non-multiples of the MSS so no SRPT tie is ever broken by message id (the
//! two drivers number messages differently).

mod common;
use common::*;
use fabriclab::net::Packet;
use fabriclab::transport::sird::{Sird, SirdHeader};
use fabriclab::transport::{Cx, Message, Transport};
use fabriclab_engine::{stream, SimRng, Stream, Time, MS};
use fabriclab_udp::endpoint::{host_info, Decision, TracedHeader};
use fabriclab_udp::mem::MemNet;
use fabriclab_udp::wire::{nic_time, HEADER_LEN};
use fabriclab_udp::UdpConfig;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

const N: usize = 5;
/// (sender, receiver, size, start time)
const SCHEDULE: [(usize, usize, usize, Time); 6] = [
    (0, 1, 300_000, 0),
    (0, 2, 310_001, 0),
    (3, 1, 290_003, 10_000_000),
    (4, 2, 280_007, 20_000_000),
    (3, 1, 5_000, 400_000_000),
    (0, 2, 20_011, 500_000_000),
];
const UNTIL: Time = 20 * MS;

fn cfg(sthr_bdp: f64) -> UdpConfig {
    let mut c = quick_cfg();
    c.max_peers = (N - 1) as u32;
    c.nic_catch_up_us = 0.0;
    c.retry_timeout_ms = 1_000.0;
    c.sird.sthr_bdp = sthr_bdp;
    c
}

/// A packet as a globally named decision: (time, from, to, header).
type Global = (Time, usize, usize, TracedHeader);

/// (a) The UDP driver. Host i's peers are added in global order, so its
/// peer ids map back to global ids.
fn via_driver(c: &UdpConfig) -> Vec<Global> {
    let net = MemNet::new(DELAY);
    let mut eps: Vec<MemEp> = (0..N).map(|i| mem_endpoint(&net, i as u16, c)).collect();
    let mut slot_to_global = vec![vec![usize::MAX; N]; N];
    for (i, ep) in eps.iter_mut().enumerate() {
        ep.enable_trace();
        for g in (0..N).filter(|&g| g != i) {
            let slot = ep.add_peer(addr(g as u16)).unwrap();
            slot_to_global[i][slot as usize] = g;
        }
        slot_to_global[i][0] = i;
    }
    let global_to_slot = |i: usize, g: usize| slot_to_global[i].iter().position(|&x| x == g).unwrap() as u32;
    // Starts each message at its time: run the network up to it, then send.
    let mut t = 0;
    for &(s, r, size, at) in &SCHEDULE {
        let mut refs: Vec<&mut MemEp> = eps.iter_mut().collect();
        if at > t {
            run(&net, &mut refs, at - 1);
            net.set_now(at);
            t = at;
        }
        let peer = global_to_slot(s, r);
        eps[s].send(peer, vec![7; size]).unwrap();
    }
    let mut refs: Vec<&mut MemEp> = eps.iter_mut().collect();
    run(&net, &mut refs, UNTIL);
    let mut out = Vec::new();
    for (i, ep) in eps.iter().enumerate() {
        assert_eq!(ep.stats().messages_failed, 0);
        for d in ep.trace().iter().filter(|d: &&Decision| d.from == 0) {
            out.push((d.at, i, slot_to_global[i][d.to as usize], d.hdr));
        }
    }
    out.sort_by_key(|g| (g.0, g.1, g.2));
    out
}

/// (b) Simulator-style hosts: `Sird` instances exchanging `Packet`s directly.
struct Host {
    sird: Sird,
    rng: SimRng,
    timers: BinaryHeap<Reverse<(Time, u64, u64)>>,
    nic_free_at: Time,
    blocked: bool,
    /// Arrivals in send order: (arrival time, packet).
    inbox: VecDeque<(Time, Packet<SirdHeader>)>,
}

fn call<R>(h: &mut Host, now: Time, seq: &mut u64, f: impl FnOnce(&mut Sird, &mut Cx) -> R) -> R {
    let (mut timers, mut app) = (Vec::new(), Vec::new());
    let r = f(&mut h.sird, &mut Cx::new(now, &mut h.rng, &mut timers, &mut app));
    for (at, tok) in timers {
        *seq += 1;
        h.timers.push(Reverse((at, *seq, tok)));
    }
    r
}

fn via_simulator_loop(c: &UdpConfig) -> Vec<Global> {
    let mut hosts: Vec<Host> = (0..N)
        .map(|i| {
            let mut info = host_info(c);
            info.id = i as u32;
            Host {
                sird: Sird::new(&c.sird, &info),
                rng: stream(c.seed, Stream::Host, 0),
                timers: BinaryHeap::new(),
                nic_free_at: 0,
                blocked: false,
                inbox: VecDeque::new(),
            }
        })
        .collect();
    let rate = c.link_rate_bps();
    let mss = c.mss();
    let mut seq = 0;
    let mut counters = [0u64; N];
    let mut starts: BTreeMap<Time, Vec<Message>> = BTreeMap::new();
    for &(s, r, size, at) in &SCHEDULE {
        // Ids as the driver's receiver sees them: sender << 44 | sender's counter.
        let id = (s as u64) << 44 | counters[s];
        counters[s] += 1;
        starts.entry(at).or_default().push(Message { id, src: s as u32, dst: r as u32, size: size as u64, start: at });
    }
    let mut out = Vec::new();
    let mut now = 0;
    loop {
        for m in starts.remove(&now).unwrap_or_default() {
            call(&mut hosts[m.src as usize], now, &mut seq, |s, cx| s.start_message(cx, &m));
        }
        let mut sent = Vec::new();
        for (i, h) in hosts.iter_mut().enumerate() {
            while h.inbox.front().is_some_and(|(at, _)| *at <= now) {
                let (_, p) = h.inbox.pop_front().unwrap();
                call(h, now, &mut seq, |s, cx| s.on_packet(cx, &p));
            }
            while h.timers.peek().is_some_and(|Reverse((at, _, _))| *at <= now) {
                let Reverse((_, _, tok)) = h.timers.pop().unwrap();
                call(h, now, &mut seq, |s, cx| s.on_timer(cx, tok));
            }
            h.blocked = false;
            loop {
                if now < h.nic_free_at {
                    h.blocked = true;
                    break;
                }
                let Some(p) = call(h, now, &mut seq, |s, cx| s.poll_transmit(cx)) else { break };
                let payload = match p.hdr {
                    SirdHeader::Data { size, index, .. } => fabriclab::net::wire::payload_of(size, mss, index as u64),
                    _ => 0,
                };
                h.nic_free_at = h.nic_free_at.max(now) + nic_time(HEADER_LEN + payload as usize, rate);
                let msg = match p.hdr {
                    SirdHeader::Data { msg, .. }
                    | SirdHeader::CreditReq { msg, .. }
                    | SirdHeader::Credit { msg, .. }
                    | SirdHeader::Resend { msg, .. } => msg & ((1 << 44) - 1),
                };
                out.push((now, i, p.dst as usize, TracedHeader::of(&p.hdr, msg)));
                sent.push(p);
            }
        }
        for p in sent {
            hosts[p.dst as usize].inbox.push_back((now + DELAY, p));
        }
        let next = hosts
            .iter()
            .flat_map(|h| {
                let t = h.timers.peek().map(|Reverse((at, _, _))| *at);
                let nic = h.blocked.then_some(h.nic_free_at);
                let arr = h.inbox.front().map(|(at, _)| *at);
                [t, nic, arr]
            })
            .chain(std::iter::once(starts.keys().next().copied()))
            .flatten()
            .min();
        match next {
            Some(t) if t <= UNTIL => now = t.max(now + 1),
            _ => break,
        }
    }
    out.sort_by_key(|g| (g.0, g.1, g.2));
    out
}

fn summary(d: &[Global]) -> (Vec<u64>, Vec<u64>) {
    let mut credits = vec![0; N];
    let mut csn = vec![0; N];
    for (_, from, to, h) in d {
        match h {
            TracedHeader::Credit { .. } => credits[*to] += 1,
            TracedHeader::Data { csn: true, .. } => csn[*from] += 1,
            _ => {}
        }
    }
    (credits, csn)
}

fn check(sthr_bdp: f64) -> (Vec<u64>, Vec<u64>) {
    let c = cfg(sthr_bdp);
    let a = via_driver(&c);
    let b = via_simulator_loop(&c);
    let (sa, sb) = (summary(&a), summary(&b));
    println!("SThr = {sthr_bdp} BDP: credits granted per sender {:?}, csn-marked DATA per sender {:?}", sa.0, sa.1);
    assert_eq!(sa, sb, "credit grants / csn marks differ between the drivers");
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(
        first.is_none() && a.len() == b.len(),
        "decision streams diverge at #{first:?}: driver {:?} vs simulator loop {:?} ({} vs {} packets)",
        first.map(|i| a[i]),
        first.map(|i| b[i]),
        a.len(),
        b.len()
    );
    sa
}

#[test]
fn driver_and_simulator_loop_make_identical_decisions_with_csn() {
    let (credits, csn) = check(0.5);
    assert!(csn[0] > 0, "the congested sender marks csn");
    assert!(credits[0] > 0 && credits[3] > 0 && credits[4] > 0, "every sender of scheduled data gets credit");
}

#[test]
fn driver_and_simulator_loop_make_identical_decisions_without_csn() {
    let (_, csn) = check(f64::INFINITY);
    assert_eq!(csn.iter().sum::<u64>(), 0, "SThr = inf never marks csn");
}
