//! The batched socket layer on loopback: `sendmmsg`/`recvmmsg` batches, UDP
//! GSO (segments reach a plain socket as separate datagrams), UDP GRO
//! (coalesced receives split back into datagrams), and the plain fallback
//! (`gso = false`, `gro = false`) delivering the same bytes.

mod common;
use common::payload;
use fabriclab_udp::io::{Io, IoOptions, RxBatch, TxBatch, UdpIo};
use fabriclab_udp::{Endpoint, Event, UdpConfig};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

fn bind(gso: bool, gro: bool) -> UdpIo {
    UdpIo::bind_with("127.0.0.1:0".parse().unwrap(), IoOptions { gso, gro, busy_poll: 0 }).unwrap()
}

/// Datagram `i` of a test batch: its index, then a pattern, `len` bytes in all.
fn dgram(i: usize, len: usize) -> Vec<u8> {
    let mut d = payload(i as u64, len);
    d[..4].copy_from_slice(&(i as u32).to_be_bytes());
    d
}

/// Whether this kernel takes the UDP_SEGMENT socket option at all, asked on a
/// socket of the test's own (so a broken probe in `UdpIo` cannot skip the test).
fn kernel_has(opt: libc::c_int) -> bool {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let v: libc::c_int = if opt == libc::UDP_SEGMENT { 1000 } else { 1 };
    // SAFETY: a plain int option on a socket this test owns.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_UDP,
            opt,
            &v as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    r == 0
}

/// Receives with `recv_batch` until `n` datagrams have arrived or 5 s pass.
fn recv_all(io: &mut UdpIo, n: usize) -> Vec<(Vec<u8>, SocketAddr)> {
    let mut rx = RxBatch::new(64);
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < n && Instant::now() < deadline {
        io.recv_batch(&mut rx).unwrap();
        for i in 0..rx.len() {
            let (d, from, _) = rx.get(i);
            got.push((d.to_vec(), from));
        }
        if rx.is_empty() {
            let t = io.now() + 1_000_000_000; // 1 ms
            io.wait_until(t);
        }
    }
    got
}

#[test]
fn a_batch_arrives_intact_and_in_order_in_few_syscalls() {
    let (mut tx, mut rx) = (bind(false, false), bind(false, false));
    let to = rx.local_addr();
    let n = 150;
    let mut batch = TxBatch::default();
    let want: Vec<Vec<u8>> = (0..n).map(|i| dgram(i, 64 + (i * 37) % 1400)).collect();
    for d in &want {
        batch.push(d, to);
    }
    tx.send_batch(&batch).unwrap();
    let got = recv_all(&mut rx, n);
    assert_eq!(got.len(), n, "datagrams received");
    for (i, (d, from)) in got.iter().enumerate() {
        assert_eq!(*from, tx.local_addr());
        assert!(*d == want[i], "datagram {i} differs (length {} vs {})", d.len(), want[i].len());
    }
    let (s, r) = (tx.io_stats(), rx.io_stats());
    assert_eq!((s.datagrams_out, r.datagrams_in), (n as u64, n as u64));
    // 64 messages per sendmmsg/recvmmsg: 3 calls each way, not 150.
    assert!(s.send_calls <= 3, "{s:?}");
    assert!(r.recv_calls <= 8, "{r:?}");
    assert_eq!(s.gso_sends, 0, "GSO was off: {s:?}");
}

#[test]
fn gso_segments_reach_a_plain_socket_as_separate_datagrams() {
    if !kernel_has(libc::UDP_SEGMENT) {
        eprintln!("skipped: this kernel refuses UDP_SEGMENT");
        return;
    }
    let mut tx = bind(true, false);
    let plain = UdpSocket::bind("127.0.0.1:0").unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // 40 datagrams of 1,200 bytes and a shorter last one: one GSO run.
    let want: Vec<Vec<u8>> = (0..41).map(|i| dgram(i, if i == 40 { 500 } else { 1200 })).collect();
    let mut batch = TxBatch::default();
    for d in &want {
        batch.push(d, plain.local_addr().unwrap());
    }
    tx.send_batch(&batch).unwrap();
    let s = tx.io_stats();
    assert!(s.gso, "GSO offered by the kernel but not used: {s:?}");
    assert_eq!((s.send_calls, s.gso_sends, s.datagrams_out), (1, 1, 41), "{s:?}");
    let mut buf = [0u8; 65_536];
    for (i, w) in want.iter().enumerate() {
        let (n, from) = plain.recv_from(&mut buf).unwrap();
        assert_eq!(from, tx.local_addr());
        assert!(buf[..n] == w[..], "datagram {i}: {n} bytes, expected {}", w.len());
    }
}

#[test]
fn gro_receives_split_back_into_the_datagrams_sent() {
    if !kernel_has(libc::UDP_SEGMENT) || !kernel_has(libc::UDP_GRO) {
        eprintln!("skipped: this kernel refuses UDP_SEGMENT or UDP_GRO");
        return;
    }
    let (mut tx, mut rx) = (bind(true, false), bind(false, true));
    let to = rx.local_addr();
    // Two GSO runs to the same socket (1,472 and 64 bytes: DATA and credits), then odd sizes.
    let sizes: Vec<usize> = (0..30).map(|_| 1472).chain((0..30).map(|_| 64)).chain([700, 90, 1472]).collect();
    let want: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &l)| dgram(i, l)).collect();
    let mut batch = TxBatch::default();
    for d in &want {
        batch.push(d, to);
    }
    tx.send_batch(&batch).unwrap();
    let got = recv_all(&mut rx, want.len());
    let r = rx.io_stats();
    assert!(r.gro, "{r:?}");
    assert!(r.gro_receives >= 2, "the GSO runs arrive coalesced: {r:?}");
    assert_eq!(got.len(), want.len(), "{r:?}");
    for (i, (d, _)) in got.iter().enumerate() {
        assert!(*d == want[i], "datagram {i}: {} bytes, expected {}", d.len(), want[i].len());
    }
}

/// Messages from one endpoint to another on loopback; returns what the
/// receiver delivered and both endpoints' socket counters.
fn transfer(offload: bool, msgs: &[Vec<u8>]) -> (Vec<Vec<u8>>, fabriclab_udp::io::IoStats, fabriclab_udp::io::IoStats) {
    let cfg = UdpConfig {
        link_rate_gbps: 10.0,
        base_rtt_us: 200.0,
        // Without pacing each step sends what SIRD allows at once: batches of many datagrams.
        nic_pacing: false,
        retry_timeout_ms: 50.0,
        gso: offload,
        gro: offload,
        ..UdpConfig::default()
    };
    let rx_cfg = UdpConfig { accept_unknown_peers: true, ..cfg.clone() };
    let mut rx = Endpoint::bind("127.0.0.1:0".parse().unwrap(), rx_cfg).unwrap();
    let rx_addr = rx.local_addr();
    let send = msgs.to_vec();
    let sender = std::thread::spawn(move || {
        let mut tx = Endpoint::bind("127.0.0.1:0".parse().unwrap(), cfg).unwrap();
        let peer = tx.add_peer(rx_addr).unwrap();
        let n = send.len();
        for m in send {
            tx.send(peer, m).unwrap();
        }
        common::wait_confirmed(&mut tx, n as usize, 30);
        tx.io_stats()
    });
    let mut got = Vec::new();
    while !sender.is_finished() {
        if let Some(Event::Received { id, data, .. }) = rx.poll(Duration::from_millis(10)) {
            got.push((id, data));
        }
    }
    let tx_io = sender.join().unwrap();
    got.sort_by_key(|(id, _)| *id);
    (got.into_iter().map(|(_, d)| d).collect(), tx_io, rx.io_stats())
}

#[test]
fn the_plain_fallback_delivers_the_same_bytes() {
    let msgs: Vec<Vec<u8>> = (0..6).map(|k| payload(k, 100_000 + 77_777 * k as usize)).collect();
    let (plain, tx_io, rx_io) = transfer(false, &msgs);
    assert!(plain == msgs, "plain batches: delivered messages differ");
    for s in [tx_io, rx_io] {
        // The keys are honoured: no offload was asked for, none was used.
        assert!(!s.gso && !s.gro && s.gso_sends == 0 && s.gro_receives == 0, "{s:?}");
        assert!(s.send_calls < s.datagrams_out, "batches of several datagrams per sendmmsg: {s:?}");
    }
    let (offloaded, tx_io, rx_io) = transfer(true, &msgs);
    assert!(offloaded == plain, "with GSO/GRO: delivered messages differ from the plain path");
    if kernel_has(libc::UDP_SEGMENT) {
        assert!(tx_io.gso && tx_io.gso_sends > 0, "sender: {tx_io:?}");
        assert!(rx_io.gso_sends > 0, "receiver (credits): {rx_io:?}");
    }
    if kernel_has(libc::UDP_GRO) {
        assert!(rx_io.gro && rx_io.gro_receives > 0, "receiver: {rx_io:?}");
    }
}

#[test]
fn busy_polling_spins_and_returns_on_a_datagram() {
    let ms = 1_000_000_000; // ps
                            // Off: a wait sleeps at once.
    let mut idle = bind(false, false);
    let t = idle.now() + ms;
    idle.wait_until(t);
    assert_eq!(idle.io_stats().busy_polls, 0);
    // On, nothing arrives: it spins, then sleeps until the deadline.
    let opts = IoOptions { gso: false, gro: false, busy_poll: 2 * ms };
    let mut io = UdpIo::bind_with("127.0.0.1:0".parse().unwrap(), opts).unwrap();
    let t = io.now() + 5 * ms;
    io.wait_until(t);
    assert!(io.now() >= t, "returned before its deadline with nothing to read");
    assert_eq!((io.io_stats().busy_polls, io.io_stats().busy_poll_hits), (1, 0));
    // On, a datagram is waiting: the spin sees it and returns long before the deadline.
    let to = io.local_addr();
    UdpSocket::bind("127.0.0.1:0").unwrap().send_to(b"x", to).unwrap();
    let start = Instant::now();
    let t = io.now() + 5_000 * ms;
    io.wait_until(t);
    assert!(start.elapsed() < Duration::from_secs(2), "waited {:?}", start.elapsed());
    assert_eq!((io.io_stats().busy_polls, io.io_stats().busy_poll_hits), (2, 1));
}
