//! The simulator's side of failure injection ([`crate::net::link_events`]):
//! scheduling the events, applying them, rerouting, and losing the packets
//! sent onto a dead link. Runs only when `[[network.events]]` is configured.

use super::{Ev, Sim};
use crate::transport::Transport;

impl<T: Transport> Sim<T> {
    /// Puts every configured link event on the event queue.
    #[cold]
    pub(super) fn schedule_link_events(&mut self) {
        let Some(links) = self.feat.as_deref().and_then(|f| f.links.as_ref()) else { return };
        for (i, e) in links.events.iter().enumerate() {
            self.q.schedule(e.at, Ev::Link { event: i as u32 });
        }
    }

    #[cold]
    pub(super) fn link_event(&mut self, i: u32) {
        let now = self.q.now();
        let links = self.feat.as_deref_mut().and_then(|f| f.links.as_mut()).expect("scheduled from the link state");
        links.apply(i as usize, &mut self.fabric);
        if let Some(d) = links.events[i as usize].reroute_after {
            self.q.schedule(now + d, Ev::Reroute);
        }
    }

    #[cold]
    pub(super) fn reroute(&mut self) {
        if let Some(links) = self.feat.as_deref().and_then(|f| f.links.as_ref()) {
            links.reroute(&mut self.fabric);
        }
    }

    /// Port `port` "sends" packet `idx` onto its dead link: the port is busy
    /// for the packet's serialisation, and the packet is gone.
    #[cold]
    pub(super) fn start_lost(&mut self, port: u32, idx: u32) {
        let now = self.q.now();
        let wire = self.slab.hot(idx).wire_bytes;
        self.slab.remove(idx);
        let held = self.held_in_service(wire);
        let p = &mut self.fabric.ports[port as usize];
        p.busy = true;
        p.in_service = held;
        let ser = p.serialization_time(wire);
        self.q.schedule(now + ser, Ev::TxDone { port });
        self.counters.packet_hops += 1;
    }

    /// Whether a packet going out of `port` is lost because its link is down
    /// (counting it when it is).
    #[inline]
    pub(super) fn lost_on_dead_link(&mut self, port: u32) -> bool {
        let Some(links) = self.feat.as_deref_mut().and_then(|f| f.links.as_mut()) else { return false };
        if !links.is_dead(port) {
            return false;
        }
        links.drops += 1;
        self.counters.drops += 1;
        true
    }
}
