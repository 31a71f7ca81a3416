//! The sender, SIRD Algorithm 2: takes credit, answers RESENDs, retries an unanswered
//! CREDITREQ, and picks the next data packet (round-robin share and SRPT) with its csn bit.

use super::{PriorityLane, SenderPolicy, Sird, SirdHeader, HIGH, LOW, TIMER_TX};
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

/// A receiver's candidate message for `sender_policy = "deficit"`.
#[derive(Clone, Copy)]
pub(super) struct Candidate {
    dst: u32,
    remaining: u64,
    id: MsgId,
    slot: u32,
    fresh: bool,
    quantum: f64,
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

    /// `unsch_capped_by_held_credit`: the first `prefix` packets of a new message of `size`
    /// bytes to `dst`, cut as the authors' simulator cuts its self-allocated credit
    /// (SIRD-Simulator 116e981f, r2p2-cc-hybrid.cc, `send_data`, lines 806-814): the credit
    /// the sender already holds for `dst` (unsent unscheduled prefixes and unused credit, in
    /// wire bytes) leaves `space` = max(1 BDP - held, one full packet); a prefix larger than
    /// that is cut to the whole full packets that fit in it.
    pub(super) fn capped_prefix(&self, dst: u32, size: u64, prefix: u32) -> u32 {
        let held: u64 = self
            .outbound
            .iter()
            .filter(|m| m.dst == dst)
            .map(|m| {
                self.bytes_of_range(m.size, m.next_unsched..m.unsched_end, true)
                    + self.bytes_of_range(m.size, m.next_sched..m.granted_upto, true)
            })
            .sum();
        let full = data_wire(self.info.mss) as u64;
        let space = self.info.bdp_bytes.saturating_sub(held).max(full);
        if self.bytes_of_range(size, 0..prefix, true) <= space {
            prefix
        } else {
            (space / full) as u32
        }
    }

    /// Algorithm 2, poll: picks the message to send from (`sender_policy`), then its next packet.
    pub(super) fn poll_data(&mut self) -> Option<Packet<SirdHeader>> {
        let (slot, fair_turn) = match self.sender_policy {
            SenderPolicy::Turns => self.pick_by_turns()?,
            SenderPolicy::Deficit => (self.pick_by_deficit()?, false),
        };
        self.send_next_packet(slot, fair_turn)
    }

    /// Drops the `ready` entries that can no longer send, and calls `f` with each
    /// remaining message and its slot.
    fn scan_ready(&mut self, mut f: impl FnMut(&OutMsg, u32)) {
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
            f(m, slot);
        }
    }

    /// `sender_policy = "turns"`: alternates a round-robin turn across receivers and an
    /// SRPT turn so that the fair share of the uplink is `sender_fair_share`. Returns
    /// the message's slot and whether this is a round-robin turn.
    fn pick_by_turns(&mut self) -> Option<(u32, bool)> {
        let f = self.fair_share;
        let fair_turn = f > 0.0 && (f >= 1.0 || self.fair_bytes as f64 * (1.0 - f) <= self.srpt_bytes as f64 * f);
        let (n, rr_next) = (self.info.n_hosts, self.rr_next);
        // One pass: drop entries that can no longer send, and pick the best.
        let mut best: Option<((u64, u64, MsgId), u32)> = None;
        self.scan_ready(|m, slot| {
            // Round-robin distance from the receiver whose turn it is.
            // (dst + n - rr_next) mod n, both below n: one subtraction, not a division per entry.
            let rr = if fair_turn {
                let d = m.dst + n - rr_next;
                (if d >= n { d - n } else { d }) as u64
            } else {
                0
            };
            let key = (rr, m.remaining(), m.id);
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, slot));
            }
        });
        best.map(|(_, slot)| (slot, fair_turn))
    }

    /// `sender_policy = "deficit"`: the authors' deficit round-robin across receivers, run
    /// once per packet (SIRD-Simulator 116e981f, ns2.34/ns-2.34/apps/r2p2-cc/r2p2/cc/micro-rpcs/:
    /// r2p2-hybrid-support.cc, `ReceiverState::want_to_send` lines 407-480, the message per
    /// receiver; `Receivers::update_policy_state` lines 130-285, the quanta; and
    /// `Receivers::select_msg_to_send` lines 292-365, the choice; r2p2-cc-hybrid.cc line 102
    /// sets the weights from `r2p2_sender_policy_ratio_l = 0.5`, config/nsdi25/
    /// large-scale-common.default lines 80-81). Ties go to the lowest receiver id, as the
    /// artifact's ordered map of receivers gives.
    fn pick_by_deficit(&mut self) -> Option<u32> {
        self.drr_round += 1;
        let round = self.drr_round;
        let mut c = std::mem::take(&mut self.drr_scratch);
        c.clear();
        self.scan_ready(|m, slot| {
            // Not yet announced: an unscheduled message none of whose packets has left (a
            // message with a scheduled part announced itself with its CREDITREQ).
            let fresh = m.unsched_end > 0 && m.next_unsched == 0 && m.sent_bytes == 0;
            c.push(Candidate { dst: m.dst, remaining: m.remaining(), id: m.id, slot, fresh, quantum: 0.0 });
        });
        if c.is_empty() {
            // Every receiver has nothing to send: the artifact zeroes all deficits.
            self.drr_scratch = c;
            return None;
        }
        // Per receiver, SRPT among its messages, except that the last message not yet
        // announced after the first goes first (want_to_send). Compacted in place: one
        // candidate per receiver, by receiver id.
        c.sort_unstable_by_key(|x| (x.dst, x.remaining, x.id));
        let mut groups = 0;
        let mut i = 0;
        while i < c.len() {
            let mut pick = i;
            let mut j = i + 1;
            while j < c.len() && c[j].dst == c[i].dst {
                if c[j].fresh {
                    pick = j;
                }
                j += 1;
            }
            c[groups] = c[pick];
            groups += 1;
            i = j;
        }
        c.truncate(groups);
        // Quanta: fair / n each, and 1 - fair more for the receiver whose message has the
        // fewest unsent bytes (the first such).
        let fair = self.fair_share;
        let low = fair / groups as f64;
        let srpt = (0..groups).fold(0, |b, k| if c[k].remaining < c[b].remaining { k } else { b });
        if self.drr.is_empty() {
            self.drr = vec![(0.0, 0); self.info.n_hosts as usize];
        }
        for (k, x) in c.iter_mut().enumerate() {
            x.quantum = if k == srpt { low + (1.0 - fair) } else { low };
            let d = &mut self.drr[x.dst as usize];
            if d.1 + 1 != round {
                // It had nothing to send at the last round: its deficit was reset.
                d.0 = 0.0;
            }
            d.0 += x.quantum;
            d.1 = round;
        }
        // The largest deficit sends once it reaches one packet; until then every
        // receiver earns its quantum again.
        let best =
            loop {
                let best = (0..groups).fold(0, |b, k| {
                    if self.drr[c[k].dst as usize].0 > self.drr[c[b].dst as usize].0 {
                        k
                    } else {
                        b
                    }
                });
                if self.drr[c[best].dst as usize].0 >= 1.0 {
                    break best;
                }
                for x in &c {
                    self.drr[x.dst as usize].0 += x.quantum;
                }
            };
        self.drr[c[best].dst as usize].0 -= 1.0;
        let slot = c[best].slot;
        self.drr_scratch = c;
        Some(slot)
    }

    /// Sends the next packet of the message in `slot`: a retransmission, else its
    /// unscheduled prefix, else credited data, with its csn bit.
    fn send_next_packet(&mut self, slot: u32, fair_turn: bool) -> Option<Packet<SirdHeader>> {
        let n = self.info.n_hosts;
        let id = self.outbound.at_mut(slot).id;
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
        if self.sender_policy == SenderPolicy::Turns {
            if fair_turn {
                self.fair_bytes += payload as u64;
                self.rr_next = (dst + 1) % n;
            } else {
                self.srpt_bytes += payload as u64;
            }
        }
        let prio = if !scheduled && lane == PriorityLane::ControlAndUnscheduled { HIGH } else { LOW };
        let hdr = SirdHeader::Data { msg: id, size, index, scheduled, csn };
        Some(Packet::new(self.info.id, dst, data_wire(payload), prio, id as u32, hdr).with_ect())
    }
}
