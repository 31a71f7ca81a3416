//! The attacks of issue 26, re-tried as tests: amplification by a forged
//! CREDITREQ, floods of responses, peer-table exhaustion, and replays of an
//! old incarnation. Each prints its numbers (`--nocapture`) and fails on the
//! code before the defences (docs/udp.md, "Defences").

mod common;
use common::*;
use fabriclab_engine::{MS, S};
use fabriclab_udp::io::Io;
use fabriclab_udp::mem::{MemIo, MemNet};
use fabriclab_udp::wire::{encode, Header, Kind};
use fabriclab_udp::{Event, Stats, UdpConfig};

fn datagram(kind: Kind, incarnation: u32, msg: u64, app: u64, size: u64, index: u32, payload: &[u8]) -> Vec<u8> {
    encoded(&Header::new(kind, incarnation.into(), msg, app, size, index), payload)
}

fn encoded(h: &Header, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(h, payload, &mut out);
    out
}

/// Datagrams and bytes waiting at `sock`, and how many of them are RESENDs.
fn drain(sock: &mut MemIo) -> (u64, u64, u64) {
    let (mut n, mut bytes, mut resends) = (0, 0, 0);
    let mut buf = vec![0; 65_536];
    while let Ok(Some((len, _, _))) = sock.recv(&mut buf) {
        n += 1;
        bytes += len as u64;
        resends += (buf[3] == Kind::Resend as u8) as u64;
    }
    (n, bytes, resends)
}

/// A `serve`-style receiver (default settings, accepts unknown peers).
fn server_cfg() -> UdpConfig {
    UdpConfig { accept_unknown_peers: true, ..UdpConfig::default() }
}

/// One datagram from `addr(7)` to a `serve`-style receiver, then 1 s: the
/// receiver's counters and what came back to `addr(7)` ([`drain`]).
fn one_datagram_to_a_server(d: &[u8]) -> (Stats, (u64, u64, u64)) {
    let net = MemNet::new(DELAY);
    let mut rx = mem_endpoint(&net, 0, &server_cfg());
    let mut sender = net.socket(addr(7));
    sender.send(d, addr(0)).unwrap();
    run(&net, &mut [&mut rx], S);
    (rx.stats().clone(), drain(&mut sender))
}

/// One forged CREDITREQ for the largest message, with the victim's address as
/// its source: everything the endpoint sends back lands on the victim.
#[test]
fn a_forged_creditreq_brings_back_at_most_three_times_its_bytes() {
    let forged = datagram(Kind::CreditReq, 77, 0, 0, server_cfg().max_message_bytes, 0, &[]);
    let (_, (n, bytes, resends)) = one_datagram_to_a_server(&forged);
    let factor = bytes as f64 / forged.len() as f64;
    println!(
        "amplification: {} bytes forged, {n} datagrams ({resends} RESENDs) = {bytes} bytes back in 1 s ({factor:.1}x)",
        forged.len()
    );
    assert!(bytes <= 3 * forged.len() as u64, "{bytes} bytes sent to an unvalidated address");
}

/// The same forgery with the address of a peer the receiver was configured
/// with (validated): its RESENDs are held to the response bucket.
#[test]
fn resends_to_a_validated_peer_are_rate_limited() {
    let cfg = UdpConfig::default();
    let net = MemNet::new(DELAY);
    let mut rx = mem_endpoint(&net, 0, &cfg);
    rx.add_peer(addr(1)).unwrap();
    let mut spoofed = net.socket(addr(1));
    let forged = datagram(Kind::CreditReq, 77, 0, 0, cfg.max_message_bytes, 0, &[]);
    spoofed.send(&forged, addr(0)).unwrap();
    run(&net, &mut [&mut rx], S);
    let (n, bytes, resends) = drain(&mut spoofed);
    let bound = cfg.response_burst as f64 + cfg.response_rate_per_s;
    println!("forged CREDITREQ from a configured peer: {n} datagrams, {resends} RESENDs, {bytes} bytes back in 1 s (bound {bound})");
    assert!(resends as f64 <= bound, "{resends} RESENDs in 1 s");
    assert!(rx.stats().rate_limited > 0);
}

/// Replays of a delivered message's DATA: each used to be answered by a
/// DONE; the answers are now held to the same bucket.
#[test]
fn duplicate_floods_get_rate_limited_dones() {
    let cfg = quick_cfg();
    let net = MemNet::new(DELAY);
    let mut rx = mem_endpoint(&net, 0, &cfg);
    let mut tx = mem_endpoint(&net, 1, &cfg);
    rx.add_peer(addr(1)).unwrap();
    tx.add_peer(addr(0)).unwrap();
    tx.send(1, vec![7; 100]).unwrap();
    run(&net, &mut [&mut rx, &mut tx], 5 * MS);
    assert_eq!(rx.stats().messages_delivered, 1);
    let mut tap = net.socket(addr(1));
    drain(&mut tap);
    let copies = 20_000;
    let d = datagram(Kind::Data, 1001, 0, 0, 100, 0, &[7; 100]);
    for _ in 0..copies {
        tap.send(&d, addr(0)).unwrap();
    }
    let t0 = net.now();
    run(&net, &mut [&mut rx], t0 + 10 * MS);
    let (n, _, _) = drain(&mut tap);
    let bound = cfg.response_burst as f64 + cfg.response_rate_per_s * 0.01;
    println!("{copies} replayed DATA of a delivered message: {n} DONEs back (bound {bound})");
    assert!(n as f64 <= bound, "{n} DONEs for {copies} replays");
    assert_eq!(rx.stats().messages_delivered, 1);
}

/// 64 source ports (max_peers) each send one valid datagram; then a real
/// sender, new to the receiver, must still get its message through.
#[test]
fn unvalidated_peers_cannot_lock_out_a_real_sender() {
    let cfg = UdpConfig { accept_unknown_peers: true, max_peers: 64, ..quick_cfg() };
    let net = MemNet::new(DELAY);
    let mut rx = mem_endpoint(&net, 0, &cfg);
    let flood = |net: &MemNet, ports: std::ops::Range<u16>| {
        for i in ports {
            let mut s = net.socket(addr(i));
            s.send(&datagram(Kind::CreditReq, 5, 0, 0, 1000, 0, &[]), addr(0)).unwrap();
        }
    };
    flood(&net, 100..164);
    run(&net, &mut [&mut rx], MS);
    let mut tx = mem_endpoint(&net, 1, &cfg);
    tx.add_peer(addr(0)).unwrap();
    let data = payload(3, 50_000);
    tx.send(1, data.clone()).unwrap();
    let ev = run(&net, &mut [&mut rx, &mut tx], net.now() + 50 * MS);
    let got = ev[0].iter().any(|e| matches!(e, Event::Received { data: d, .. } if *d == data));
    println!(
        "table full of 64 unvalidated peers: real sender delivered = {got}, unknown_peer drops = {}, evicted = {}",
        rx.stats().unknown_peer,
        rx.stats().peers_evicted
    );
    assert!(got, "the real sender was locked out: {:?}", rx.stats());
    // Now validated, it is never evicted by later floods.
    flood(&net, 164..250);
    let data = payload(4, 50_000);
    tx.send(1, data.clone()).unwrap();
    let ev = run(&net, &mut [&mut rx, &mut tx], net.now() + 50 * MS);
    assert!(ev[0].iter().any(|e| matches!(e, Event::Received { data: d, .. } if *d == data)), "{:?}", rx.stats());
    assert!(ev[1].iter().all(|e| !matches!(e, Event::Failed { .. })));
}

/// Deliver a message, restart the sender (new incarnation), replay the first
/// incarnation's DATA: never delivered a second time.
#[test]
fn a_replayed_old_incarnation_is_not_delivered_again() {
    let cfg = quick_cfg();
    let net = MemNet::new(DELAY);
    let mut rx = mem_endpoint(&net, 0, &cfg);
    let mut tx = mem_endpoint(&net, 1, &cfg); // incarnation 1001
    rx.add_peer(addr(1)).unwrap();
    tx.add_peer(addr(0)).unwrap();
    let old = payload(5, 4_000); // fully unscheduled: 3 packets
    tx.send(1, old.clone()).unwrap();
    run(&net, &mut [&mut rx, &mut tx], 5 * MS);
    assert_eq!(rx.stats().messages_delivered, 1);
    drop(tx);
    let mut tx2 = restarted(&net, 1, &cfg, 4242);
    tx2.send(1, vec![1; 10]).unwrap();
    run(&net, &mut [&mut rx, &mut tx2], net.now() + 5 * MS);
    assert_eq!(rx.stats().messages_delivered, 2);
    // The old incarnation's datagrams, replayed verbatim.
    let mut replayer = net.socket(addr(1));
    let mss = cfg.mss() as usize;
    for (i, chunk) in old.chunks(mss).enumerate() {
        replayer.send(&datagram(Kind::Data, 1001, 0, 0, old.len() as u64, i as u32, chunk), addr(0)).unwrap();
    }
    let ev = run(&net, &mut [&mut rx, &mut tx2], net.now() + 5 * MS);
    let again = ev[0].iter().filter(|e| matches!(e, Event::Received { .. })).count();
    println!(
        "old incarnation replayed after a restart: delivered again {again} times, messages_delivered = {}",
        rx.stats().messages_delivered
    );
    assert_eq!(again, 0, "{ev:?}");
    assert_eq!(rx.stats().messages_delivered, 2);
}

/// A credited DATA packet of a message the receiver does not hold (a straggler
/// of an attempt it abandoned) is refused and opens nothing: before, it left an
/// entry SIRD never heard of, whose ALIVEs kept the sender waiting for credit
/// that never came (the loopback test's stalls of up to a minute).
#[test]
fn a_credited_packet_of_an_unknown_message_opens_nothing() {
    let mut h = Header::new(Kind::Data, 77u32.into(), 5, 9, 150_000, 0);
    h.scheduled = true;
    let (stats, (n, _, _)) = one_datagram_to_a_server(&encoded(&h, &vec![7u8; server_cfg().mss() as usize]));
    println!("straggler: {} invalid, {n} datagrams back in 1 s", stats.invalid);
    assert_eq!(stats.invalid, 1);
    assert_eq!(n, 0, "nothing may answer a packet that opens no message");
}
