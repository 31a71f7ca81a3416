//! The sender, SIRD Algorithm 2: takes credit, answers RESENDs, retries an unanswered
//! CREDITREQ, and picks the next data packet (round-robin share and SRPT) with its csn bit.

use super::{PriorityLane, Sird, SirdHeader, HIGH, LOW, TIMER_TX};
use crate::net::wire::{data_wire, payload_of};
use crate::net::Packet;
use crate::transport::{Cx, MsgId};
use fabriclab_engine::Time;

/// An outbound message: what is sent, unscheduled or credited, and what to resend.
pub(super) struct OutMsg {
    pub(super) id: MsgId,
    pub(super) dst: u32,
    pub(super) size: u64,
    pub(super) n_pkts: u32,
    /// Packets 0..unsched_end go without credit.
    pub(super) unsched_end: u32,
    pub(super) next_unsched: u32,
    /// Credited packets are sched_from..granted_upto; sent up to next_sched.
    pub(super) granted_upto: u32,
    pub(super) next_sched: u32,
    pub(super) resend: Vec<u32>,
    pub(super) sent_bytes: u64,
    pub(super) ready: bool,
    /// Counted in `active_out`: has an unscheduled prefix or credit, and unsent data.
    pub(super) active: bool,
    pub(super) last_credit: Time,
}

impl OutMsg {
    pub(super) fn sendable(&self) -> bool {
        self.next_unsched < self.unsched_end || self.next_sched < self.granted_upto || !self.resend.is_empty()
    }
    fn remaining(&self) -> u64 {
        self.size - self.sent_bytes
    }
    fn all_sent(&self) -> bool {
        self.next_unsched == self.unsched_end && self.next_sched == self.n_pkts && self.resend.is_empty()
    }
}

impl Sird {
    pub(super) fn on_credit(&mut self, cx: &mut Cx, msg: MsgId, index: u32) {
        let Some(slot) = self.outbound.slot(msg) else {
            return;
        };
        let m = self.outbound.at_mut(slot);
        m.last_credit = cx.now;
        if index >= m.granted_upto {
            let from = m.granted_upto.max(m.next_sched);
            let (wire, mss) = (self.credit_wire, self.info.mss);
            for i in from..=index {
                let p = payload_of(m.size, mss, i as u64);
                self.accumulated += if wire { data_wire(p) as u64 } else { p as u64 };
            }
            m.granted_upto = index + 1;
        }
        if !m.active && m.next_sched < m.n_pkts {
            m.active = true;
            self.active_out += 1;
        }
        if !m.ready && m.sendable() {
            m.ready = true;
            self.ready.push((slot, msg));
        }
    }

    pub(super) fn on_resend(&mut self, cx: &mut Cx, msg: MsgId, index: u32) {
        let Some(slot) = self.outbound.slot(msg) else {
            return;
        };
        let m = self.outbound.at_mut(slot);
        m.last_credit = cx.now;
        let sent = if index < m.unsched_end { index < m.next_unsched } else { index < m.next_sched };
        if sent && !m.resend.contains(&index) {
            m.resend.push(index);
        }
        if !m.ready && m.sendable() {
            m.ready = true;
            self.ready.push((slot, msg));
        }
    }

    pub(super) fn on_tx_timeout(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.timeout;
        let Some(m) = self.outbound.get_mut(msg) else {
            return;
        };
        if m.all_sent() {
            // Linger for late RESENDs, then forget the message.
            if cx.now >= m.last_credit + 4 * timeout {
                self.outbound.remove(msg);
            } else {
                cx.set_timer(m.last_credit + 4 * timeout, TIMER_TX | msg);
            }
            return;
        }
        let sched_from = m.unsched_end;
        let never_credited = m.granted_upto == sched_from && sched_from < m.n_pkts;
        if never_credited && cx.now >= m.last_credit + timeout {
            // Never heard from the receiver: the CREDITREQ may be lost.
            m.last_credit = cx.now;
            let (dst, size) = (m.dst, m.size);
            let p = self.control_packet(dst, msg, SirdHeader::CreditReq { msg, size, sched_from });
            self.control.push_back(p);
        }
        // Once credit flows, the receiver's RESEND timer owns recovery; we only
        // check back to free the message after it is fully sent.
        let next = if never_credited {
            self.outbound.get(msg).expect("known").last_credit + timeout
        } else {
            cx.now + timeout
        };
        cx.set_timer(next.max(cx.now + 1), TIMER_TX | msg);
    }

    /// Algorithm 2, poll: picks the message to send from, alternating between a
    /// round-robin turn across receivers and an SRPT turn so that the fair
    /// share of the uplink is `sender_fair_share`.
    pub(super) fn poll_data(&mut self) -> Option<Packet<SirdHeader>> {
        let f = self.fair_share;
        let fair_turn = f > 0.0 && (f >= 1.0 || self.fair_bytes as f64 * (1.0 - f) <= self.srpt_bytes as f64 * f);
        let n = self.info.n_hosts;
        // One pass: drop entries that can no longer send, and pick the best.
        let mut best: Option<((u64, u64, MsgId), u32)> = None;
        let mut i = 0;
        while i < self.ready.len() {
            let (slot, id) = self.ready[i];
            let Some(m) = self.outbound.try_at_mut(slot).filter(|m| m.id == id) else {
                self.ready.swap_remove(i);
                continue;
            };
            if !m.sendable() {
                m.ready = false;
                self.ready.swap_remove(i);
                continue;
            }
            i += 1;
            // Round-robin distance from the receiver whose turn it is.
            // (dst + n - rr_next) mod n, both below n: one subtraction, not a division per entry.
            let rr = if fair_turn {
                let d = m.dst + n - self.rr_next;
                (if d >= n { d - n } else { d }) as u64
            } else {
                0
            };
            let key = (rr, m.remaining(), id);
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, slot));
            }
        }
        let ((_, _, id), slot) = best?;
        // csn (Algorithm 2), suppressed while fewer than `csn_min_messages` are in progress.
        let csn = self.active_out >= self.csn_min_messages && self.accumulated as f64 >= self.sthr;
        let mss = self.info.mss;
        let lane = self.lane;
        let m = self.outbound.at_mut(slot);
        // Retransmissions first, then the unscheduled prefix, then credited packets.
        let (index, scheduled, uses_credit) = if let Some(i) = m.resend.pop() {
            (i, i >= m.unsched_end, false)
        } else if m.next_unsched < m.unsched_end {
            m.next_unsched += 1;
            (m.next_unsched - 1, false, self.csn_counts_unsched)
        } else {
            m.next_sched += 1;
            (m.next_sched - 1, true, true)
        };
        let payload = payload_of(m.size, mss, index as u64);
        if uses_credit {
            self.accumulated -= if self.credit_wire { data_wire(payload) as u64 } else { payload as u64 };
        }
        if m.active && m.next_unsched == m.unsched_end && m.next_sched == m.n_pkts {
            m.active = false;
            self.active_out -= 1;
        }
        m.sent_bytes = (m.sent_bytes + payload as u64).min(m.size);
        let (dst, size) = (m.dst, m.size);
        if fair_turn {
            self.fair_bytes += payload as u64;
            self.rr_next = (dst + 1) % n;
        } else {
            self.srpt_bytes += payload as u64;
        }
        let prio = if !scheduled && lane == PriorityLane::ControlAndUnscheduled { HIGH } else { LOW };
        let hdr = SirdHeader::Data { msg: id, size, index, scheduled, csn };
        Some(Packet::new(self.info.id, dst, data_wire(payload), prio, id as u32, hdr).with_ect())
    }
}
