//! Real UDP sockets on loopback: many messages under injected faults, and the
//! ECN path (CE read from the IP header through IP_RECVTOS).

mod common;
use common::{faults, payload};
use fabriclab_udp::wire::{encode, Header, Kind};
use fabriclab_udp::{Endpoint, Event, UdpConfig};
use std::collections::HashMap;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

fn cfg() -> UdpConfig {
    UdpConfig {
        link_rate_gbps: 2.0,
        base_rtt_us: 200.0,
        retry_timeout_ms: 50.0, // >= 4 x the 2 ms SIRD timeout
        ..UdpConfig::default()
    }
}

#[test]
fn messages_survive_faults_on_loopback() {
    let mut c = cfg();
    c.faults = faults(0.02, 0.02, 0.05, 0.01);
    let rx_cfg = UdpConfig { accept_unknown_peers: true, ..c.clone() };
    let mut rx = Endpoint::bind("127.0.0.1:0".parse().unwrap(), rx_cfg).unwrap();
    let rx_addr = rx.local_addr();
    let n = 150u64;
    let sender = std::thread::spawn(move || {
        let mut tx = Endpoint::bind("127.0.0.1:0".parse().unwrap(), c).unwrap();
        let peer = tx.add_peer(rx_addr).unwrap();
        let mut want = HashMap::new();
        for k in 0..n {
            let len = [10, 1_000, 3_000, 40_000, 150_000][k as usize % 5] + k as usize;
            let data = payload(k, len);
            want.insert(tx.send(peer, data.clone()).unwrap(), data);
        }
        common::wait_confirmed(&mut tx, n as usize, 60);
        want
    });
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while (got.len() as u64) < n && Instant::now() < deadline {
        if let Some(Event::Received { id, data, .. }) = rx.poll(Duration::from_millis(100)) {
            got.push((id, data));
        }
    }
    // Keep answering retransmissions until the sender has all its confirmations.
    while !sender.is_finished() {
        rx.poll(Duration::from_millis(10));
    }
    let want = sender.join().unwrap();
    assert_eq!(got.len() as u64, n, "receiver stats {:?}", rx.stats());
    for (id, data) in got {
        assert!(want[&id] == data, "message {id} differs");
    }
}

#[test]
fn ce_marks_on_the_wire_reach_sird() {
    let mut rx = Endpoint::bind("127.0.0.1:0".parse().unwrap(), cfg()).unwrap();
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.add_peer(raw.local_addr().unwrap()).unwrap();
    // A sender that marks its datagrams CE (0b11) itself, as a congested switch would.
    let tos: libc::c_int = 0b11;
    // SAFETY: a plain int socket option on a socket this test owns.
    let r = unsafe {
        libc::setsockopt(
            raw.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_TOS,
            &tos as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
    let mut d = Vec::new();
    encode(&Header::new(Kind::Data, 9, 0, 0, 100, 0), &[1; 100], &mut d);
    raw.send_to(&d, rx.local_addr()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut delivered = false;
    while Instant::now() < deadline && !delivered {
        delivered = matches!(rx.poll(Duration::from_millis(50)), Some(Event::Received { .. }));
    }
    assert!(delivered);
    assert_eq!(rx.stats().ce_received, 1, "{:?}", rx.stats());
}
