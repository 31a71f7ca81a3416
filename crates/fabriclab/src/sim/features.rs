//! The simulator's path through the optional switch features (buffer pools,
//! RED, trimming, selective drop, PFC, INT, control class). Taken only when
//! `[network]` turns one on, so the ordinary path stays as lean as before.

use super::{Ev, Sim};
use crate::net::buffer::NOT_POOLED;
use crate::net::pfc::FRAME_WIRE;
use crate::net::switch_config::QueueAccounting;
use crate::net::wire::CONTROL_WIRE;
use crate::net::{Enqueue, CONTROL, ECN_CE, ECN_ECT, INT, TRIMMED, UNSCHEDULED};
use crate::transport::Transport;

impl<T: Transport> Sim<T> {
    /// A switch offers packet `idx` to its egress `port`, features on.
    pub(super) fn forward_featured(&mut self, node: u32, idx: u32, port: u32) {
        let now = self.q.now();
        if self.lost_on_dead_link(port) {
            self.slab.remove(idx);
            return;
        }
        let f = self.feat.as_deref_mut().expect("features on");
        let pkt = *self.slab.hot(idx); // a copy: changes go to the slab
        let (flags, credit) = (pkt.flags(), pkt.credit());
        let p = &mut self.fabric.ports[port as usize];
        let old = p.bytes;
        let ect = pkt.ecn & ECN_ECT != 0;
        let idle = !p.busy;
        let shaped = credit && p.shaper().is_some();
        if shaped || (flags & CONTROL != 0 && p.has_control()) {
            let verdict =
                if shaped { p.enqueue_credit(idx, pkt.wire_bytes) } else { p.enqueue_control(idx, pkt.wire_bytes) };
            match verdict {
                Enqueue::Dropped if shaped => {
                    self.slab.remove(idx);
                    self.counters.credit_drops += 1;
                }
                Enqueue::Dropped => {
                    p.drops += 1;
                    self.slab.remove(idx);
                    self.counters.drops += 1;
                }
                Enqueue::Queued { mark_ce } => {
                    if mark_ce && ect {
                        self.slab.hot_mut(idx).ecn |= ECN_CE;
                    }
                    self.occupancy.update(now, p, old);
                    if idle {
                        self.service(port);
                    }
                }
            }
            return;
        }
        let last_class = p.classes() - 1;
        if flags & UNSCHEDULED != 0 && f.selective_drop.is_some_and(|t| p.bytes + pkt.wire_bytes as u64 > t) {
            p.drops += 1;
            self.slab.remove(idx);
            self.counters.drops += 1;
            f.selective_drops += 1;
            return;
        }
        let link = f.pfc.as_ref().map_or(u32::MAX, |pfc| pfc.link_of(idx));
        let int_room = flags & INT != 0 && f.int.as_ref().is_some_and(|s| s.has_room(idx));
        let mut wire = pkt.wire_bytes + if int_room { f.int.as_ref().map_or(0, |s| s.hop_bytes) } else { 0 };
        let mut class = pkt.prio.min(last_class);
        let admit = |f: &crate::net::features::Features, class: u8, wire: u32| match &f.pfc {
            Some(pfc) if pfc.is_lossless(class) => pfc.fits(link, class, wire),
            _ => {
                p.bytes + wire as u64 <= p.limit_bytes
                    && f.buffers.as_ref().is_none_or(|b| b.admit(node, port, class, p.bytes, wire))
            }
        };
        let trimmable = f.trim_threshold.is_some() && pkt.wire_bytes > CONTROL_WIRE && !credit;
        let over_trim = trimmable && f.trim_threshold.is_some_and(|t| p.bytes + wire as u64 > t);
        if over_trim || !admit(f, class, wire) {
            // Trimming (NDP): the payload goes, the header is forwarded in the top class.
            if !trimmable || !admit(f, 0, CONTROL_WIRE) {
                p.drops += 1;
                self.slab.remove(idx);
                self.counters.drops += 1;
                return;
            }
            let trimmed = self.slab.hot_mut(idx);
            trimmed.set_flags((flags | TRIMMED) & !INT);
            trimmed.prio = 0;
            (class, wire) = (0, CONTROL_WIRE);
            f.trims += 1;
        }
        self.slab.hot_mut(idx).wire_bytes = wire;
        p.push(&mut self.fabric.fifos, idx, wire, class);
        if let Some(b) = f.buffers.as_mut() {
            b.add(node, port, class, wire);
        }
        let mut pause_port = None;
        if let Some(pfc) = f.pfc.as_mut().filter(|pfc| pfc.is_lossless(class)) {
            pause_port = pfc.add(link, class, wire);
        }
        let mark = match f.red.as_mut() {
            Some(red) if !red.at_dequeue => red.mark((node - f.n_hosts) as usize, p.bytes, p.peer >= f.n_hosts),
            Some(_) => false,
            None => p.bytes > p.ecn_threshold,
        };
        if mark && ect {
            self.slab.hot_mut(idx).ecn |= ECN_CE;
        }
        self.occupancy.update(now, p, old);
        if idle {
            self.service(port);
        }
        if let Some(pp) = pause_port {
            self.kick(pp);
        }
    }

    /// Switch port `port` starts sending packet `idx`: buffer, PFC, dequeue
    /// marking and INT bookkeeping. (Shaped credits are outside all of them.)
    pub(super) fn dequeue_featured(&mut self, port: u32, idx: u32) {
        let now = self.q.now();
        let f = self.feat.as_deref_mut().expect("features on");
        let pkt = *self.slab.hot(idx); // a copy: changes go to the slab
        let p = &self.fabric.ports[port as usize];
        let wire = pkt.wire_bytes;
        let control = (pkt.flags() & CONTROL != 0 && p.has_control()) || (pkt.credit() && p.shaper().is_some());
        let class = pkt.prio.min(p.classes() - 1);
        let first_bit = self.accounting == QueueAccounting::UntilFirstBit;
        if pkt.flags() & CONTROL != 0 && p.has_control() && !first_bit {
            self.occupancy.control_dequeued(now, p);
        }
        if let Some(b) = f.buffers.as_mut() {
            b.start_serving(port, if control { NOT_POOLED } else { class });
            if first_bit {
                b.release(p.node, port, wire);
            }
        }
        let mut resume_port = None;
        if let Some(pfc) = f.pfc.as_mut().filter(|pfc| !control && pfc.is_lossless(class)) {
            let link = pfc.link_of(idx);
            if first_bit {
                resume_port = pfc.release(link, class, wire);
            } else {
                pfc.start_serving(port, link, class, wire);
            }
        }
        if let Some(red) = f.red.as_mut().filter(|r| r.at_dequeue && !control) {
            if red.mark((p.node - f.n_hosts) as usize, p.bytes, p.peer >= f.n_hosts) && pkt.ecn & ECN_ECT != 0 {
                self.slab.hot_mut(idx).ecn |= ECN_CE;
            }
        }
        if let Some(int) = f.int.as_mut() {
            int.count_tx(port, wire);
            if pkt.flags() & INT != 0 {
                // The queue behind the packet (it has left `p.bytes` already under UntilFirstBit).
                let behind = if first_bit { p.bytes } else { p.bytes - wire as u64 };
                int.stamp(idx, port, behind, now, p.rate_bps());
            }
        }
        if f.program_at_dequeue {
            let node = self.fabric.ports[port as usize].node;
            self.program_dequeue(node, idx);
        }
        // The RESUME leaves on another port of this switch (routes never turn back).
        if let Some(rp) = resume_port.filter(|&rp| rp != port) {
            self.kick(rp);
        }
    }

    /// An idle port sends its waiting PFC frame, if any; returns whether it did.
    pub(super) fn send_pfc_frame(&mut self, port: u32) -> bool {
        let Some((class, pause)) = self.feat.as_deref_mut().and_then(|f| f.pfc.as_mut()?.next_frame(port)) else {
            return false;
        };
        let now = self.q.now();
        let p = &mut self.fabric.ports[port as usize];
        p.busy = true;
        p.in_service = 0; // a MAC control frame holds no buffer
        let ser = p.serialization_time(FRAME_WIRE);
        self.q.schedule(now + ser, Ev::TxDone { port });
        self.q.schedule(now + ser + p.delay, Ev::Pfc { port, class, pause });
        true
    }

    /// A PFC frame sent by `port` arrived at the other end: pause or resume
    /// `class` on the reverse port.
    pub(super) fn pfc_frame_arrived(&mut self, port: u32, class: u8, pause: bool) {
        let up = port ^ 1;
        let p = &mut self.fabric.ports[up as usize];
        if pause {
            p.paused |= 1 << class;
        } else {
            p.paused &= !(1 << class);
            self.kick(up);
        }
    }

    /// Lets an idle port send: a host NIC pulls, a switch port serves.
    fn kick(&mut self, port: u32) {
        let p = &self.fabric.ports[port as usize];
        if p.busy {
            return;
        }
        if self.fabric.is_host(p.node) {
            self.host_pull(p.node);
        } else {
            self.service(port);
        }
    }

    /// PFC at a host NIC: a pulled packet of a paused class waits at the head
    /// of the NIC. Returns true when the NIC must not pull from the transport
    /// (its held packet still waits, or was just sent).
    pub(super) fn release_held(&mut self, host: u32, port: u32) -> bool {
        let Some(pfc) = self.feat.as_deref_mut().and_then(|f| f.pfc.as_mut()) else {
            return false;
        };
        let idx = pfc.held[host as usize];
        if idx == u32::MAX {
            return false;
        }
        let p = &self.fabric.ports[port as usize];
        let class = self.slab.hot(idx).prio.min(p.classes() - 1);
        if p.paused >> class & 1 == 0 {
            pfc.held[host as usize] = u32::MAX;
            self.slab.get_mut(idx).tx_time = self.q.now();
            self.start_tx(port, idx);
        }
        true
    }

    /// Holds packet `idx` at `host`'s NIC if its class is paused; returns whether it did.
    pub(super) fn hold_if_paused(&mut self, host: u32, port: u32, idx: u32) -> bool {
        let p = &self.fabric.ports[port as usize];
        if p.paused >> self.slab.hot(idx).prio.min(p.classes() - 1) & 1 == 0 {
            return false;
        }
        if let Some(pfc) = self.feat.as_deref_mut().and_then(|f| f.pfc.as_mut()) {
            pfc.held[host as usize] = idx;
        }
        true
    }

    /// Bookkeeping when a port starts sending `idx` (PFC needs every packet's
    /// last link). Returns whether the packet is lost: its link is down.
    #[inline]
    pub(super) fn on_start_tx(&mut self, port: u32, idx: u32) -> bool {
        let f = self.feat.as_deref_mut().expect("features on");
        if let Some(pfc) = f.pfc.as_mut() {
            pfc.tag(idx, port);
        }
        self.lost_on_dead_link(port)
    }

    /// A host sends `idx`: fresh INT records if it asks for them.
    #[inline]
    pub(super) fn on_host_send(&mut self, idx: u32) {
        if let Some(int) = self.feat.as_deref_mut().and_then(|f| f.int.as_mut()) {
            if self.slab.hot(idx).flags() & INT != 0 {
                int.reset(idx);
            }
        }
    }

    /// Switch port `port` finished sending `wire` bytes, which it held until
    /// now (`queue_accounting = "until_last_bit"`).
    #[inline]
    pub(super) fn on_tx_done(&mut self, node: u32, port: u32, wire: u32) {
        let f = self.feat.as_deref_mut().expect("features on");
        if let Some(b) = f.buffers.as_mut() {
            b.release(node, port, wire);
        }
        // The RESUME leaves on another port of this switch (routes never turn back).
        if let Some(rp) = f.pfc.as_mut().and_then(|pfc| pfc.finish_serving(port)).filter(|&rp| rp != port) {
            self.kick(rp);
        }
    }
}
