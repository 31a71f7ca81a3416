//! Hostile and unlucky inputs: malformed datagrams (fuzzed), unknown peers,
//! memory bounds, unreachable receivers, restarted peers.

mod common;
use common::*;
use fabriclab_engine::{Time, MS};
use fabriclab_udp::io::Io;
use fabriclab_udp::mem::MemNet;
use fabriclab_udp::wire::{encode, Header, Kind};
use fabriclab_udp::Event;
use proptest::prelude::*;

/// Receiver 0 and sender 1 on a fresh network; an attacker socket at address 9.
fn pair(cfg: &fabriclab_udp::UdpConfig) -> (MemNet, MemEp, MemEp) {
    let net = MemNet::new(DELAY);
    let mut rx = mem_endpoint(&net, 0, cfg);
    let mut tx = mem_endpoint(&net, 1, cfg);
    rx.add_peer(addr(1)).unwrap();
    tx.add_peer(addr(0)).unwrap();
    (net, rx, tx)
}

/// Sends one message 1 -> 0 and checks it arrives intact.
fn still_works(net: &MemNet, rx: &mut MemEp, tx: &mut MemEp, until: Time) {
    let data = payload(99, 50_000);
    tx.send(1, data.clone()).unwrap();
    let ev = run(net, &mut [rx, tx], until);
    assert!(ev[0].iter().any(|e| matches!(e, Event::Received { data: d, .. } if *d == data)), "{ev:?}");
}

fn datagram(kind: u8, flags: u8, msg: u64, app: u64, size: u64, index: u32, payload: &[u8]) -> Vec<u8> {
    let kind = [Kind::Data, Kind::CreditReq, Kind::Credit, Kind::Resend, Kind::Done, Kind::Alive][kind as usize % 6];
    let payload = if kind == Kind::Data { payload } else { &[] };
    let h = Header { scheduled: flags & 1 != 0, csn: flags & 2 != 0, ..Header::new(kind, 1001, msg, app, size, index) };
    let mut out = Vec::new();
    encode(&h, payload, &mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Checksummed datagrams with arbitrary fields from a known peer, and raw
    /// garbage: nothing panics, memory stays bounded, and the endpoint still works.
    #[test]
    fn fuzzed_datagrams_are_counted_and_dropped(
        pkts in proptest::collection::vec(
            (0u8..6, 0u8..4, prop_oneof![0u64..4, any::<u64>()], 0u64..4,
             prop_oneof![1u64..5000, any::<u64>()], prop_oneof![0u32..4, any::<u32>()],
             proptest::collection::vec(any::<u8>(), 0..1500), any::<bool>()),
            1..40)
    ) {
        let mut cfg = quick_cfg();
        cfg.max_inbound_bytes = 1 << 20;
        cfg.max_message_bytes = 1 << 20;
        let (net, mut rx, mut tx) = pair(&cfg);
        // The fuzzer speaks from the sender's address, so its packets pass the peer check.
        let mut attacker = net.socket(addr(1));
        for (kind, flags, msg, app, size, index, payload, raw) in &pkts {
            let d = if *raw { payload.clone() } else { datagram(*kind, *flags, *msg, *app, *size, *index, payload) };
            attacker.send(&d, addr(0)).unwrap();
        }
        run(&net, &mut [&mut rx], net.now() + MS);
        prop_assert!(rx.inbound_state().1 <= cfg.max_inbound_bytes);
        let s = rx.stats().clone();
        prop_assert_eq!(s.datagrams_received, pkts.len() as u64);
        still_works(&net, &mut rx, &mut tx, net.now() + 200 * MS);
    }
}

#[test]
fn unknown_peers_and_overload_are_counted_and_bounded() {
    let mut cfg = quick_cfg();
    cfg.max_inbound_per_peer = 4;
    cfg.max_message_bytes = 1 << 30;
    cfg.max_inbound_bytes = 10 << 20;
    let (net, mut rx, mut tx) = pair(&cfg);
    let mut stranger = net.socket(addr(7));
    stranger.send(&datagram(1, 0, 1, 0, 1000, 0, &[]), addr(0)).unwrap();
    let mut peer = net.socket(addr(1));
    // Many CREDITREQs for huge messages: only 4 (and at most 10 MB) are accepted.
    for m in 0..100 {
        peer.send(&datagram(1, 0, m, m, 4 << 20, 0, &[]), addr(0)).unwrap();
    }
    run(&net, &mut [&mut rx], MS);
    let s = rx.stats();
    assert_eq!(s.unknown_peer, 1);
    assert!(s.overload >= 96, "{s:?}");
    let (n, bytes) = rx.inbound_state();
    assert!(n <= 4 && bytes <= 10 << 20, "{n} messages, {bytes} bytes");
    // The fake messages never progress: their state is abandoned, and real traffic still flows.
    run(&net, &mut [&mut rx], 100 * MS);
    assert_eq!(rx.inbound_state(), (0, 0));
    assert!(rx.stats().abandoned >= 1);
    still_works(&net, &mut rx, &mut tx, 300 * MS);
}

#[test]
fn unreachable_receiver_fails_after_max_retries_and_frees_state() {
    let cfg = quick_cfg();
    let net = MemNet::new(DELAY);
    let mut tx = mem_endpoint(&net, 1, &cfg);
    let p = tx.add_peer(addr(5)).unwrap(); // nobody there
    let small = tx.send(p, vec![1; 100]).unwrap();
    let big = tx.send(p, vec![2; 500_000]).unwrap();
    let ev = run(&net, &mut [&mut tx], 100 * MS);
    let failed: Vec<u64> =
        ev[0].iter().filter_map(|e| if let Event::Failed { id, .. } = e { Some(*id) } else { None }).collect();
    assert_eq!(failed.len(), 2, "{ev:?}");
    assert!(failed.contains(&small) && failed.contains(&big));
    assert_eq!(tx.stats().retries, 2 * cfg.max_retries as u64);
    assert_eq!(tx.in_flight(), 0);
}

#[test]
fn replayed_and_duplicate_messages_are_not_delivered_twice() {
    let cfg = quick_cfg();
    let (net, mut rx, mut tx) = pair(&cfg);
    let mut tap = net.socket(addr(1));
    still_works(&net, &mut rx, &mut tx, 50 * MS);
    // Replay the message's DATA packets (same incarnation, same ids) verbatim.
    let mss = cfg.mss() as usize;
    let data = payload(99, 50_000);
    for (i, chunk) in data.chunks(mss).enumerate() {
        let sched = i as u64 >= rx.config().bdp().div_ceil(mss as u64);
        tap.send(&datagram(0, sched as u8, 0, 0, 50_000, i as u32, chunk), addr(0)).unwrap();
    }
    let ev = run(&net, &mut [&mut rx], net.now() + 10 * MS);
    assert!(ev[0].is_empty(), "a replay was delivered: {ev:?}");
    assert!(rx.stats().duplicates > 0);
    assert_eq!(rx.stats().messages_delivered, 1);
}

#[test]
fn a_restarted_peer_is_a_new_peer() {
    let cfg = quick_cfg();
    let (net, mut rx, mut tx) = pair(&cfg);
    still_works(&net, &mut rx, &mut tx, 50 * MS);
    // Same address, new incarnation: its message 0 is new, not a duplicate.
    let mut tx2 = restarted(&net, 1, &cfg, 4242);
    still_works(&net, &mut rx, &mut tx2, net.now() + 50 * MS);
    assert_eq!(rx.stats().peer_restarts, 1);
    assert_eq!(rx.stats().messages_delivered, 2);
}

/// Sender 1 with `tx_mtu` to receiver 0 with `rx_mtu`: a message longer than
/// either MSS fails within one retry timeout, naming the receiver's mtu, and
/// the receiver names the sender's; a one-packet message still arrives.
fn mtu_mismatch(tx_mtu: u32, rx_mtu: u32, big: usize) {
    let cfg = quick_cfg();
    let net = MemNet::new(DELAY);
    let mut rx = mem_endpoint(&net, 0, &fabriclab_udp::UdpConfig { mtu: rx_mtu, ..cfg.clone() });
    let mut tx = mem_endpoint(&net, 1, &fabriclab_udp::UdpConfig { mtu: tx_mtu, ..cfg.clone() });
    let p = tx.add_peer(addr(0)).unwrap();
    rx.add_peer(addr(1)).unwrap();
    let small = payload(1, 1000);
    let big_id = tx.send(p, payload(2, big)).unwrap();
    let small_id = tx.send(p, small.clone()).unwrap();
    // Half a retry timeout: a failure by silence would take max_retries of them.
    let retry = (cfg.retry_timeout_ms * MS as f64) as Time;
    let ev = run(&net, &mut [&mut rx, &mut tx], retry / 2);
    assert!(ev[1].contains(&Event::Failed { peer: p, id: big_id }), "sender saw {:?}", ev[1]);
    assert!(ev[1].iter().any(|e| matches!(e, Event::Confirmed { id, .. } if *id == small_id)), "{:?}", ev[1]);
    assert!(ev[0].iter().any(|e| matches!(e, Event::Received { data, .. } if *data == small)), "{:?}", ev[0]);
    assert_eq!(tx.stats().retries, 0);
    assert_eq!(tx.peer_mtu(p), Some(rx_mtu));
    assert!(rx.stats().mtu_mismatch >= 1, "{:?}", rx.stats());
    let m = rx.mtu_mismatch().expect("the receiver names the mismatch");
    assert_eq!((m.addr, m.theirs, m.ours), (addr(1), Some(fabriclab_udp::PeerMtu::Exactly(tx_mtu)), rx_mtu));
    let text = m.to_string();
    assert!(text.contains(&format!("mtu = {tx_mtu}")) && text.contains(&format!("mtu = {rx_mtu}")), "{text}");
    assert_eq!((tx.in_flight(), rx.inbound_state()), (0, (0, 0)));
}

#[test]
fn an_mtu_mismatch_fails_fast_with_both_mtus_named() {
    mtu_mismatch(9000, 1500, 20_000); // sender's packets too large for the receiver
    mtu_mismatch(1500, 9000, 20_000); // too small: the receiver expects fewer, larger ones
    mtu_mismatch(1500, 2000, 1_000_000); // scheduled: above UnschT, every packet waits for credit
                                         // The same mtu: nothing is refused.
    let (net, mut rx, mut tx) = pair(&quick_cfg());
    still_works(&net, &mut rx, &mut tx, 20 * MS);
    assert_eq!((rx.stats().mtu_mismatch, tx.peer_mtu(1)), (0, None));
}
