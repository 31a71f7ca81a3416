//! Delivery under injected loss, reordering, duplication and corruption:
//! on the in-memory network (fake clock) and on real loopback sockets.

mod common;
use common::*;
use fabriclab_engine::{stream, Stream, MS};
use fabriclab_udp::mem::MemNet;
use fabriclab_udp::Event;
use rand::Rng;
use std::collections::HashMap;

/// Messages, keyed by (sender, id), and what each endpoint saw: `n` messages
/// of random sizes from each of `senders` endpoints to one receiver (index 0).
struct Soak {
    expect: HashMap<(u32, u64), Vec<u8>>,
    events: Vec<Vec<Event>>,
    stats: Vec<fabriclab_udp::stats::Stats>,
    in_flight: Vec<usize>,
    receiver_state: (usize, u64),
}

fn soak_run(n: u64, senders: u16, f: fabriclab_udp::faults::Faults, seed: u64) -> Soak {
    let net = MemNet::new(DELAY);
    let mut cfg = quick_cfg();
    cfg.seed = seed;
    // A message fails after `max_retries` silent timeouts, even if it was
    // delivered and only its DONEs were lost: give the retries a budget that
    // makes that chance below 1e-6 per message at this loss rate (each retry
    // needs a datagram out and a DONE back: (1 - loss)^2).
    let round_trip_lost = 1.0 - (1.0 - f.loss) * (1.0 - f.loss);
    if round_trip_lost > 0.0 {
        cfg.max_retries = cfg.max_retries.max((1e-6f64.ln() / round_trip_lost.ln()).ceil() as u32);
    }
    cfg.faults = f;
    let mut rx = mem_endpoint(&net, 0, &cfg);
    let mut txs: Vec<MemEp> = (1..=senders).map(|i| mem_endpoint(&net, i, &cfg)).collect();
    let mut expect = HashMap::new();
    let mut rng = stream(seed, Stream::Workload, 0);
    for (s, tx) in txs.iter_mut().enumerate() {
        let peer = tx.add_peer(addr(0)).unwrap();
        rx.add_peer(addr(s as u16 + 1)).unwrap();
        for k in 0..n {
            let len = if rng.gen_bool(0.3) { rng.gen_range(20_000..200_000) } else { rng.gen_range(1..5_000) };
            let data = payload(seed ^ (s as u64) << 32 ^ k, len);
            let id = tx.send(peer, data.clone()).unwrap();
            expect.insert((s as u32 + 1, id), data);
        }
    }
    let mut eps: Vec<&mut MemEp> = std::iter::once(&mut rx).chain(txs.iter_mut()).collect();
    let events = run(&net, &mut eps, 2_000 * MS);
    Soak {
        expect,
        events,
        stats: eps.iter().map(|e| e.stats().clone()).collect(),
        in_flight: eps.iter().map(|e| e.in_flight()).collect(),
        receiver_state: rx.inbound_state(),
    }
}

/// Checks every message is delivered exactly once, intact, and confirmed.
fn soak_mem(n: u64, senders: u16, f: fabriclab_udp::faults::Faults, seed: u64) {
    let Soak { mut expect, events, stats, in_flight, receiver_state } = soak_run(n, senders, f, seed);
    let mut got = 0;
    for e in &events[0] {
        let Event::Received { peer, id, data } = e else { panic!("receiver saw {e:?}") };
        let want = expect.remove(&(*peer, *id)).unwrap_or_else(|| panic!("duplicate or unknown message {peer}/{id}"));
        assert!(want == *data, "message {peer}/{id} corrupted");
        got += 1;
    }
    assert!(expect.is_empty(), "{} messages never delivered; receiver stats {:?}", expect.len(), stats[0]);
    assert_eq!(got, n * senders as u64);
    for (tx, flying) in stats.iter().zip(&in_flight).skip(1) {
        assert_eq!(tx.messages_confirmed, n, "sender stats {tx:?}");
        assert_eq!(*flying, 0);
    }
    assert_eq!(receiver_state, (0, 0), "receiver keeps no state after delivering everything");
}

#[test]
fn lossless_messages_arrive_intact_and_confirmed() {
    soak_mem(40, 3, faults(0.0, 0.0, 0.0, 0.0), 1);
}

#[test]
fn survives_loss_reordering_duplication_and_corruption() {
    soak_mem(60, 3, faults(0.05, 0.05, 0.05, 0.02), 2);
}

#[test]
fn survives_heavy_loss() {
    soak_mem(20, 2, faults(0.3, 0.0, 0.1, 0.0), 3);
}

/// On the fake clock a seeded run replays exactly: same events, same counters,
/// whatever order the process's hash maps happen to iterate in.
#[test]
fn a_seeded_lossy_run_replays_exactly() {
    let f = || faults(0.3, 0.05, 0.1, 0.02);
    let a = soak_run(12, 3, f(), 11);
    for _ in 0..4 {
        let b = soak_run(12, 3, f(), 11);
        assert_eq!(a.events, b.events);
        assert_eq!(a.stats, b.stats);
    }
}
