//! An in-memory datagram network on a fake clock: every datagram arrives a
//! fixed delay after it is sent. Endpoints on it are stepped by a harness
//! ([`MemNet::run_until`]), so runs are deterministic and instant.

use crate::io::Io;
use fabriclab_engine::Time;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::rc::Rc;

#[derive(Default)]
struct Net {
    now: Time,
    delay: Time,
    /// Per destination: (arrival time, sender, datagram), in arrival order.
    queues: HashMap<SocketAddr, VecDeque<(Time, SocketAddr, Vec<u8>)>>,
    /// Sent datagrams by arrival time, to find the next one quickly.
    arrivals: BTreeMap<Time, u32>,
}

/// Handle to the shared network; clone it freely.
#[derive(Clone)]
pub struct MemNet(Rc<RefCell<Net>>);

impl MemNet {
    pub fn new(one_way_delay: Time) -> MemNet {
        MemNet(Rc::new(RefCell::new(Net { delay: one_way_delay, ..Net::default() })))
    }

    /// A socket at `addr` on this network.
    pub fn socket(&self, addr: SocketAddr) -> MemIo {
        self.0.borrow_mut().queues.entry(addr).or_default();
        MemIo { net: self.clone(), addr }
    }

    pub fn now(&self) -> Time {
        self.0.borrow().now
    }

    pub fn set_now(&self, t: Time) {
        let mut n = self.0.borrow_mut();
        debug_assert!(t >= n.now);
        n.now = t;
        let later = n.arrivals.split_off(&(t + 1));
        n.arrivals = later;
    }

    /// When the next datagram arrives, if one is in flight.
    pub fn next_arrival(&self) -> Option<Time> {
        self.0.borrow().arrivals.keys().next().copied()
    }

    /// Advances the clock event by event: each step moves time to the earliest
    /// of `wakes()` and the next arrival, then calls `step()`. Stops when
    /// `until` passes or nothing is left to happen.
    pub fn run_until(&self, until: Time, mut wakes: impl FnMut() -> Option<Time>, mut step: impl FnMut()) {
        loop {
            let next = [wakes(), self.next_arrival()].into_iter().flatten().min();
            let Some(t) = next.filter(|&t| t <= until) else {
                self.set_now(until.max(self.now()));
                return;
            };
            self.set_now(t.max(self.now()));
            step();
        }
    }
}

/// One socket on a [`MemNet`].
pub struct MemIo {
    net: MemNet,
    addr: SocketAddr,
}

impl Io for MemIo {
    fn now(&self) -> Time {
        self.net.now()
    }

    fn send(&mut self, buf: &[u8], to: SocketAddr) -> std::io::Result<()> {
        let mut n = self.net.0.borrow_mut();
        let at = n.now + n.delay;
        if let Some(q) = n.queues.get_mut(&to) {
            q.push_back((at, self.addr, buf.to_vec()));
            *n.arrivals.entry(at).or_default() += 1;
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> std::io::Result<Option<(usize, SocketAddr, bool)>> {
        let mut n = self.net.0.borrow_mut();
        let now = n.now;
        let q = n.queues.get_mut(&self.addr).expect("registered");
        if q.front().is_some_and(|(at, _, _)| *at <= now) {
            let (_, from, d) = q.pop_front().expect("front");
            buf[..d.len()].copy_from_slice(&d);
            return Ok(Some((d.len(), from, false)));
        }
        Ok(None)
    }

    fn wait_until(&mut self, _at: Time) {}

    fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    fn set_ecn(&mut self, _on: bool) -> std::io::Result<()> {
        Ok(())
    }
}
