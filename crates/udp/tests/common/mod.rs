//! Shared helpers: endpoints on the in-memory network, random messages.
#![allow(dead_code)]

use fabriclab_engine::{stream, Stream, Time, US};
use fabriclab_udp::faults::{Faults, FaultyIo};
use fabriclab_udp::mem::{MemIo, MemNet};
use fabriclab_udp::{Endpoint, Event, UdpConfig};
use rand::Rng;
use std::net::SocketAddr;

pub type MemEp = Endpoint<FaultyIo<MemIo>>;

pub fn addr(i: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, i as u8], 9000 + i))
}

/// Endpoint `i` on `net` with fault injection `faults`.
pub fn mem_endpoint(net: &MemNet, i: u16, cfg: &UdpConfig) -> MemEp {
    let io = FaultyIo::new(net.socket(addr(i)), cfg.faults.clone(), stream(cfg.seed, Stream::Switch, i as u64));
    Endpoint::with_io(io, cfg.clone(), 1000 + i as u64).expect("valid config")
}

/// Endpoint `i` restarted: the same address, a new (larger) `incarnation`, a
/// fresh fault stream, peer 0 configured.
pub fn restarted(net: &MemNet, i: u16, cfg: &UdpConfig, incarnation: u64) -> MemEp {
    let io = FaultyIo::new(net.socket(addr(i)), Default::default(), stream(5, Stream::Switch, 5));
    let mut ep = Endpoint::with_io(io, cfg.clone(), incarnation).expect("valid config");
    ep.add_peer(addr(0)).expect("room for peer 0");
    ep
}

/// Steps every endpoint until `until` (fake time), collecting their events.
pub fn run(net: &MemNet, eps: &mut [&mut MemEp], until: Time) -> Vec<Vec<Event>> {
    let mut events = vec![Vec::new(); eps.len()];
    let wakes: std::cell::RefCell<Vec<Time>> = std::cell::RefCell::new(vec![0; eps.len()]);
    let eps_cell = std::cell::RefCell::new(eps);
    net.run_until(
        until,
        || wakes.borrow().iter().copied().min(),
        || {
            let mut eps = eps_cell.borrow_mut();
            let mut w = wakes.borrow_mut();
            for (i, ep) in eps.iter_mut().enumerate() {
                w[i] = ep.step();
                if w[i] <= net.now() {
                    w[i] = net.now() + 1;
                }
                while let Some(e) = ep.next_event() {
                    events[i].push(e);
                }
            }
        },
    );
    events
}

/// Deterministic pseudo-random payload for message `k` of `len` bytes.
pub fn payload(k: u64, len: usize) -> Vec<u8> {
    let mut rng = stream(k, Stream::Workload, 7);
    (0..len).map(|_| rng.gen()).collect()
}

pub fn quick_cfg() -> UdpConfig {
    let mut c = UdpConfig { link_rate_gbps: 10.0, base_rtt_us: 10.0, retry_timeout_ms: 1.0, ..UdpConfig::default() };
    c.sird.timeout_us = 100.0; // the simulator's: no OS on a fake clock
    c
}

pub fn faults(loss: f64, duplicate: f64, reorder: f64, corrupt: f64) -> Faults {
    Faults { loss, duplicate, reorder, corrupt, ce: 0.0 }
}

pub const DELAY: Time = 5 * US;

/// Polls a real-socket sender until `n` messages are confirmed or `secs` pass;
/// a failed message panics with the sender's stats.
pub fn wait_confirmed<I: fabriclab_udp::io::Io>(tx: &mut Endpoint<I>, n: usize, secs: u64) {
    let (mut ok, deadline) = (0, std::time::Instant::now() + std::time::Duration::from_secs(secs));
    while ok < n && std::time::Instant::now() < deadline {
        match tx.poll(std::time::Duration::from_millis(100)) {
            Some(Event::Confirmed { .. }) => ok += 1,
            Some(e @ Event::Failed { .. }) => panic!("{e:?}; stats {:?}", tx.stats()),
            _ => {}
        }
    }
    assert_eq!(ok, n, "confirmed; sender stats {:?}", tx.stats());
}
