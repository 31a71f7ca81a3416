//! The receiver, SIRD Algorithm 1: learns of messages, returns credit and runs the
//! AIMD loops on each data packet, sends credit (SRPT within B and the sender's bucket),
//! and asks again for lost packets.

use super::{Sird, SirdHeader, SrptKey, TIMER_PACE, TIMER_RX};
use crate::net::wire::{data_wire, packets_for, payload_of};
use crate::net::Packet;
use crate::transport::toolkit::Reassembly;
use crate::transport::{Cx, MsgId};
use fabriclab_engine::{serialization_time, Time};

/// An inbound message: what has arrived, and how far it is credited.
pub(super) struct InMsg {
    pub(super) id: MsgId,
    pub(super) src: u32,
    pub(super) reasm: Reassembly,
    pub(super) n_pkts: u32,
    pub(super) sched_from: u32,
    /// Next packet index to credit.
    pub(super) next_grant: u32,
    pub(super) progress_at: Time,
}

impl Sird {
    /// Learns of message `msg`; returns its slot in `inbound`, or None if it is
    /// already known or was delivered.
    pub(super) fn inbound_entry(&mut self, cx: &mut Cx, msg: MsgId, src: u32, size: u64) -> Option<u32> {
        if self.inbound.contains(msg) || self.completed.contains(&msg) {
            return None;
        }
        let n_pkts = packets_for(size, self.info.mss) as u32;
        let sched_from = self.unscheduled_packets(size);
        let slot = self.inbound.insert(
            msg,
            InMsg {
                id: msg,
                src,
                reasm: Reassembly::new(size, self.info.mss),
                n_pkts,
                sched_from,
                next_grant: sched_from,
                progress_at: cx.now,
            },
        );
        if sched_from < n_pkts {
            self.grantable.push((slot, msg));
        }
        if self.account_unsched && sched_from > 0 {
            // The unscheduled prefix holds B and sb_i until it arrives, as credit would.
            let u = self.credit_of_range(size, 0..sched_from);
            self.b_used += u;
            self.peer(src).sb += u;
        }
        cx.set_timer(cx.now + self.timeout, TIMER_RX | msg);
        Some(slot)
    }

    /// A CREDITREQ names where the scheduled part of `msg` starts; a sender that cut its
    /// unscheduled prefix (`unsch_capped_by_held_credit`) starts it earlier than the size
    /// alone says. The packets moved to the scheduled part have not been sent yet: they no
    /// longer hold B and sb_i, and will be credited.
    pub(super) fn learn_sched_from(&mut self, msg: MsgId, sched_from: u32) {
        let Some(slot) = self.inbound.slot(msg) else {
            return;
        };
        let m = self.inbound.at_mut(slot);
        let old = m.sched_from;
        if sched_from >= old {
            return;
        }
        let was_grantable = old < m.n_pkts;
        (m.sched_from, m.next_grant) = (sched_from, sched_from);
        let (src, size) = (m.src, m.reasm.size());
        if !was_grantable {
            self.grantable.push((slot, msg));
        }
        if self.account_unsched {
            let u = self.credit_of_range(size, sched_from..old);
            self.b_used -= u;
            self.peer(src).sb -= u;
        }
    }

    pub(super) fn on_data(
        &mut self,
        cx: &mut Cx,
        src: u32,
        msg: MsgId,
        size: u64,
        index: u32,
        scheduled: bool,
        csn: bool,
        ce: bool,
    ) {
        let mss = self.info.mss;
        let payload = payload_of(size, mss, index as u64);
        let Some(slot) = self.inbound.slot(msg).or_else(|| self.inbound_entry(cx, msg, src, size)) else {
            return;
        };
        let m = self.inbound.at_mut(slot);
        if !m.reasm.insert(index as u64, payload) {
            return; // duplicate: its credit was already returned
        }
        m.progress_at = cx.now;
        let complete = m.reasm.is_complete();
        cx.deliver(msg, payload);
        // Algorithm 1, onDataPacket: return the credit, run both AIMD loops.
        let credit = self.credit_of(payload);
        let returns = scheduled || self.account_unsched;
        if returns {
            self.b_used -= credit;
        }
        let rules = self.rules;
        let peer = self.peer(src);
        if returns {
            peer.sb -= credit;
        }
        peer.on_data(&rules, credit, csn, ce);
        if complete {
            self.inbound.remove(msg);
            self.completed.insert(msg);
            cx.complete(msg);
        }
    }

    /// Algorithm 1, sendCredit: the grantable message (SRPT: fewest bytes left, see
    /// `srpt_key`) whose sender bucket and the global bucket both have room.
    /// Returns the message, its sender, the packet index, its payload and its credit.
    fn next_credit(&mut self) -> Option<(MsgId, u32, u32, u32, u64)> {
        let mss = self.info.mss;
        let mut best: Option<(u64, MsgId, u32)> = None;
        let mut i = 0;
        while i < self.grantable.len() {
            let (slot, id) = self.grantable[i];
            let Some(m) = self.inbound.try_at(slot).filter(|m| m.id == id && m.next_grant < m.n_pkts) else {
                self.grantable.swap_remove(i);
                continue;
            };
            i += 1;
            let size = m.reasm.size();
            let c = self.credit_of(payload_of(size, mss, m.next_grant as u64));
            if self.b_used + c > self.b {
                continue;
            }
            if let Some(p) = self.peers[m.src as usize].as_deref() {
                let room = if self.bucket_check_before {
                    // The artifact (send_credit_policy_common): the credit outstanding before
                    // this one within the bucket, and with it within the largest bucket.
                    p.sb as f64 <= p.cap() && (p.sb + c) as f64 <= self.rules.max
                } else {
                    (p.sb + c) as f64 <= p.cap()
                };
                if !room {
                    continue;
                }
            }
            let rem = match self.srpt_key {
                SrptKey::RemainingToReceive => size - m.reasm.received_bytes(),
                SrptKey::RemainingToCredit => size - (m.next_grant as u64 * mss as u64).min(size),
            };
            if best.is_none_or(|(r, bid, _)| (rem, id) < (r, bid)) {
                best = Some((rem, id, slot));
            }
        }
        let (_, id, slot) = best?;
        let m = self.inbound.at_mut(slot);
        let index = m.next_grant;
        m.next_grant += 1;
        let payload = payload_of(m.reasm.size(), mss, index as u64);
        let src = m.src;
        Some((id, src, index, payload, self.credit_of(payload)))
    }

    pub(super) fn poll_credit(&mut self, cx: &mut Cx) -> Option<Packet<SirdHeader>> {
        if self.grantable.is_empty() {
            return None;
        }
        if self.pacing && cx.now + self.pacing_slack < self.next_credit_at {
            if !self.pace_timer {
                self.pace_timer = true;
                cx.set_timer(self.next_credit_at - self.pacing_slack, TIMER_PACE);
            }
            return None;
        }
        let (msg, src, index, payload, c) = self.next_credit()?;
        self.b_used += c;
        let peer = self.peer(src);
        peer.sb += c;
        if self.pacing {
            // The data this credit allows occupies the downlink for this long.
            let from = self.next_credit_at.max(cx.now.saturating_sub(self.credit_catch_up));
            self.next_credit_at = from + serialization_time(data_wire(payload) as u64, self.info.link_rate_bps);
        }
        Some(self.control_packet(src, msg, SirdHeader::Credit { msg, index }))
    }

    /// With `loops_see_control`, a control packet from `pkt.src` feeds its AIMD loops as the
    /// artifact's `recv` does for every packet (`update_sender_state`): never csn-marked, CE
    /// as the network left it.
    pub(super) fn control_seen(&mut self, pkt: &Packet<SirdHeader>) {
        if self.loops_see_control {
            let rules = self.rules;
            let credit = self.credit_of(0);
            self.peer(pkt.src).on_data(&rules, credit, false, pkt.ce());
        }
    }

    pub(super) fn on_rx_timeout(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.timeout;
        let Some(m) = self.inbound.get_mut(msg) else {
            return;
        };
        if cx.now < m.progress_at + timeout {
            cx.set_timer(m.progress_at + timeout, TIMER_RX | msg);
            return;
        }
        // No progress for a timeout: ask again for every expected packet not received
        // (the unscheduled prefix and everything credited). Their credit stays counted.
        m.progress_at = cx.now;
        let (src, id) = (m.src, m.id);
        let upto = m.next_grant.max(m.sched_from);
        let missing: Vec<u32> = (0..upto).filter(|&i| !m.reasm.has(i as u64)).take(256).collect();
        cx.set_timer(cx.now + timeout, TIMER_RX | msg);
        for index in missing {
            let p = self.control_packet(src, id, SirdHeader::Resend { msg: id, index });
            self.control.push_back(p);
        }
    }
}
