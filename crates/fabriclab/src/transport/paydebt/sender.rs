//! PayDebt's sender (§4.2, §4.4): a flow's unscheduled range goes out
//! unprompted, round-robin over flows, once its (sender, receiver) pair has
//! room; each token releases one more packet (a named PSN for a repair, else
//! the next new one); debts are ignored; probes find tail losses.

use super::{OutFlow, PayDebt, PayDebtHeader, NO_PSN, PRIO, TIMER_PROBE};
use crate::net::wire::{data_wire, packets_for, payload_of};
use crate::net::{Packet, UNSCHEDULED};
use crate::transport::{Cx, Message, MsgId};
use std::collections::VecDeque;

impl OutFlow {
    /// Payload bytes of the unscheduled range, counted against the pair bound.
    fn unsched_bytes(&self, mss: u32) -> u64 {
        self.size.min(self.u as u64 * mss as u64)
    }

    fn has_sched_work(&self) -> bool {
        !self.rtx.is_empty() || (self.credit > 0 && self.next < self.n)
    }
}

impl PayDebt {
    pub(super) fn start_flow(&mut self, cx: &mut Cx, msg: &Message) {
        let n = packets_for(msg.size, self.info.mss) as u32;
        let f = OutFlow {
            dst: msg.dst,
            size: msg.size,
            n,
            u: n.min(self.unsched_pkts),
            next: 0,
            admitted: false,
            token_seq: 0,
            credit: 0,
            rtx: VecDeque::new(),
            token_ce: false,
            in_sched: false,
            in_unsched: false,
            unsched_acked: false,
            last_heard: cx.now,
        };
        let (dst, ub) = (f.dst as usize, f.unsched_bytes(self.info.mss));
        self.outbound.insert(msg.id, f);
        let waiting = self.pair_waiting.get(&msg.dst).is_some_and(|w| !w.is_empty());
        if !waiting && self.pair_fits(dst, ub) {
            self.admit(msg.id);
        } else {
            self.pair_waiting.entry(msg.dst).or_default().push_back(msg.id);
        }
        cx.set_timer(cx.now + self.probe_timeout, TIMER_PROBE | msg.id);
    }

    fn pair_fits(&self, dst: usize, bytes: u64) -> bool {
        self.pair_inflight[dst] == 0 || self.pair_inflight[dst] + bytes <= self.pair_bound
    }

    fn admit(&mut self, id: MsgId) {
        let mss = self.info.mss;
        let f = self.outbound.get_mut(&id).expect("admitted flow exists");
        f.admitted = true;
        self.pair_inflight[f.dst as usize] += f.unsched_bytes(mss);
        if f.next < f.u && !f.in_unsched {
            f.in_unsched = true;
            self.unsched_rr.push_back(id);
        }
    }

    /// Admits the flows waiting for `dst` that now fit, in arrival order.
    fn admit_waiting(&mut self, dst: u32) {
        let mss = self.info.mss;
        while let Some(&id) = self.pair_waiting.get(&dst).and_then(|w| w.front()) {
            let ub = self.outbound.get(&id).map(|f| f.unsched_bytes(mss));
            match ub {
                Some(ub) if !self.pair_fits(dst as usize, ub) => return,
                Some(_) => self.admit(id),
                None => {}
            }
            self.pair_waiting.get_mut(&dst).map(|w| w.pop_front());
        }
    }

    fn make_sched_ready(&mut self, id: MsgId) {
        if let Some(f) = self.outbound.get_mut(&id) {
            if !f.in_sched && f.has_sched_work() {
                f.in_sched = true;
                self.sched_rr.push_back(id);
            }
        }
    }

    pub(super) fn on_token(&mut self, cx: &mut Cx, id: MsgId, seq: u32, rtx: u32, ce: bool) {
        let Some(f) = self.outbound.get_mut(&id) else {
            return;
        };
        f.last_heard = cx.now;
        f.token_ce |= ce;
        if rtx != NO_PSN && rtx < f.n && !f.rtx.contains(&rtx) {
            f.rtx.push_back(rtx);
        }
        // Tokens are numbered: a later one makes up for a lost one.
        if seq > f.token_seq {
            f.credit += seq - f.token_seq;
            f.token_seq = seq;
        }
        self.make_sched_ready(id);
    }

    pub(super) fn on_ack(&mut self, cx: &mut Cx, id: MsgId, whole: bool) {
        let mss = self.info.mss;
        let Some(f) = self.outbound.get_mut(&id) else {
            return;
        };
        f.last_heard = cx.now;
        let dst = f.dst;
        if !f.unsched_acked {
            f.unsched_acked = true;
            self.pair_inflight[dst as usize] -= f.unsched_bytes(mss);
        }
        if whole {
            self.outbound.remove(&id); // stale entries in the RR lists are skipped
        }
        self.admit_waiting(dst);
    }

    pub(super) fn on_probe_timer(&mut self, cx: &mut Cx, id: MsgId) {
        let timeout = self.probe_timeout;
        let Some(f) = self.outbound.get_mut(&id) else {
            return; // acknowledged
        };
        let due = f.last_heard + timeout;
        if cx.now < due || !f.admitted || f.in_sched || f.in_unsched {
            // Heard from recently, or still waiting or sending: look again later.
            cx.set_timer(due.max(cx.now + timeout), TIMER_PROBE | id);
            return;
        }
        f.last_heard = cx.now;
        let probe = self.probe(id);
        self.probes.push_back(probe);
        cx.set_timer(cx.now + timeout, TIMER_PROBE | id);
    }

    /// A minimum-size probe in the data class, so it cannot pass the flow's data.
    fn probe(&self, id: MsgId) -> Packet<PayDebtHeader> {
        let f = &self.outbound[&id];
        let last_psn = f.next.checked_sub(1).unwrap_or(NO_PSN);
        let hdr = PayDebtHeader::Probe { msg: id, size: f.size, last_psn, token_seq: f.token_seq };
        Packet::new(self.info.id, f.dst, crate::net::wire::CONTROL_WIRE, PRIO, id as u32, hdr)
    }

    /// The next data packet: token-released packets first (round-robin), then
    /// unscheduled ones (round-robin).
    pub(super) fn poll_data(&mut self, _cx: &mut Cx) -> Option<Packet<PayDebtHeader>> {
        while let Some(id) = self.sched_rr.pop_front() {
            let Some(f) = self.outbound.get_mut(&id) else {
                continue;
            };
            f.in_sched = false;
            let (psn, first, sched) = match f.rtx.pop_front() {
                Some(psn) => (psn, false, true),
                None if f.credit > 0 && f.next < f.n => {
                    // A token that overtakes the unscheduled range sends it on
                    // (in PSN order) and keeps its credit for a scheduled packet.
                    let sched = f.next >= f.u;
                    f.credit -= sched as u32;
                    f.next += 1;
                    (f.next - 1, true, sched)
                }
                _ => continue,
            };
            if f.has_sched_work() {
                f.in_sched = true;
                self.sched_rr.push_back(id);
            }
            return Some(self.data(id, psn, sched, first));
        }
        while let Some(id) = self.unsched_rr.pop_front() {
            let Some(f) = self.outbound.get_mut(&id) else {
                continue;
            };
            f.in_unsched = false;
            if f.next >= f.u {
                continue; // tokens took the rest
            }
            f.next += 1;
            let psn = f.next - 1;
            if f.next < f.u {
                f.in_unsched = true;
                self.unsched_rr.push_back(id);
            }
            return Some(self.data(id, psn, false, true));
        }
        None
    }

    /// Builds data packet `psn` of flow `id`; a first send of its last packet
    /// of a scheduled flow queues the end-of-flow probe behind it.
    fn data(&mut self, id: MsgId, psn: u32, sched: bool, first: bool) -> Packet<PayDebtHeader> {
        let mss = self.info.mss;
        let f = self.outbound.get_mut(&id).expect("flow exists");
        let payload = payload_of(f.size, mss, psn as u64);
        let token_request = psn + f.u < f.n;
        let token_ce = std::mem::take(&mut f.token_ce);
        // The end-of-flow probe follows flows that needed tokens; a flow within
        // its unscheduled BDP relies on the probe timer (docs: a probe per
        // Memcached message would add a third to its bytes on the wire).
        let end_probe = first && psn + 1 == f.n && f.u < f.n;
        let (dst, size) = (f.dst, f.size);
        let mut debt_request = false;
        if !sched {
            // §4.4: one debt per MTU of unscheduled payload, accumulated per destination.
            let acc = &mut self.debt_to_receive[dst as usize];
            *acc += payload;
            if *acc >= mss {
                *acc -= mss;
                debt_request = true;
            }
        }
        let hdr = PayDebtHeader::Data { msg: id, size, psn, sched, token_request, debt_request, token_ce };
        let mut p = Packet::new(self.info.id, dst, data_wire(payload), PRIO, id as u32, hdr).with_ect();
        if !sched {
            p = p.with_flags(UNSCHEDULED);
        }
        if end_probe {
            let probe = self.probe(id);
            self.probes.push_back(probe);
        }
        p
    }
}
