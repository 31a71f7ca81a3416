//! PayDebt's receiver (§4.1, §4.4): data-driven tokens under Algorithm 1's
//! window, ECN-triggered debts, ACKs, loss repair. Tokens and debts leave
//! through one control pacer at the control-class rate, debts first.

use super::{DebtMode, InFlow, MaxInflight, PayDebt, PayDebtHeader, CTRL_PRIO, NO_PSN, TIMER_CTRL};
use crate::net::wire::{packets_for, payload_of, CONTROL_WIRE};
use crate::net::Packet;
use crate::transport::toolkit::Reassembly;
use crate::transport::{Cx, MsgId};
use std::collections::VecDeque;

/// The header fields of an arriving data packet.
pub(super) struct DataArrival {
    pub msg: MsgId,
    pub size: u64,
    pub psn: u32,
    pub sched: bool,
    pub token_request: bool,
    pub debt_request: bool,
    pub token_ce: bool,
}

impl InFlow {
    fn wants_token(&self) -> bool {
        !self.repair.is_empty() || self.owed > 0
    }

    /// Whether a token may go now: one is wanted and the window has room.
    fn may_token(&self, mss: f64) -> bool {
        self.wants_token() && (self.inflight as f64) * mss < self.window.bytes
    }

    /// Queues a token asking for `psn` again, unless one already waits.
    fn ask_again(&mut self, psn: u32) {
        if !self.reasm.has(psn as u64) && !self.repair.contains(&psn) {
            self.repair.push_back(psn);
        }
    }
}

impl PayDebt {
    fn inflow(&mut self, src: u32, id: MsgId, size: u64) -> &mut InFlow {
        let (mss, unsched, w_init, bdp) = (self.info.mss, self.unsched_pkts, self.w_init, self.window.bdp);
        self.inbound.entry(id).or_insert_with(|| {
            let n = packets_for(size, mss) as u32;
            InFlow {
                src,
                n,
                u: n.min(unsched),
                reasm: Reassembly::new(size, mss),
                next_expected: 0,
                unsched_received: 0,
                owed: 0,
                granted: 0,
                repair: VecDeque::new(),
                inflight: 0,
                window: MaxInflight::new(w_init, bdp),
                held_debts: 0,
                in_rr: false,
            }
        })
    }

    pub(super) fn on_data(&mut self, cx: &mut Cx, src: u32, d: DataArrival, ce: bool) {
        if self.completed.contains(&d.msg) {
            return;
        }
        let (mss, mode, now, wp) = (self.info.mss, self.mode, cx.now, self.window);
        let f = self.inflow(src, d.msg, d.size);
        // A flow's first transmissions go in PSN order on one path: a gap is a loss.
        for lost in f.next_expected..d.psn {
            f.ask_again(lost);
            if lost >= f.u {
                f.inflight = f.inflight.saturating_sub(1); // its token will not come back
            }
        }
        f.next_expected = f.next_expected.max(d.psn + 1);
        f.repair.retain(|&p| p != d.psn);
        let payload = payload_of(d.size, mss, d.psn as u64);
        let new = f.reasm.insert(d.psn as u64, payload);
        if new {
            cx.deliver(d.msg, payload);
        }
        if d.sched {
            f.inflight = f.inflight.saturating_sub(1);
            f.window.on_scheduled(&wp, now, d.token_ce);
        }
        // Debts: held until congestion shows (§4.1.1), per the ablation mode.
        let mut pay = 0;
        if new && d.debt_request && !d.sched {
            match mode {
                DebtMode::Early => pay += 1,
                DebtMode::Paydebt | DebtMode::Late => f.held_debts += 1,
                DebtMode::None => {}
            }
        }
        if ce && mode == DebtMode::Paydebt && f.held_debts > 0 {
            f.held_debts -= 1;
            pay += 1;
        }
        if new && d.psn < f.u {
            f.unsched_received += 1;
        }
        if new && d.token_request {
            f.owed += 1;
        }
        let (complete, unsched_done) = (f.reasm.is_complete(), new && d.psn < f.u && f.unsched_received == f.u);
        if complete {
            pay += std::mem::take(&mut f.held_debts);
        }
        for _ in 0..pay {
            let debt = self.control(src, d.msg, PayDebtHeader::Debt { msg: d.msg });
            self.urgent.push_back(debt);
        }
        if complete {
            self.ack(src, d.msg, true);
            self.inbound.remove(&d.msg);
            self.completed.insert(d.msg);
            cx.complete(d.msg);
            return;
        }
        if unsched_done {
            self.ack(src, d.msg, false);
        }
        self.make_token_ready(d.msg);
    }

    /// A probe (§4.4): ask again for what is missing up to the last PSN sent,
    /// and re-grant if tokens were lost.
    pub(super) fn on_probe(&mut self, src: u32, id: MsgId, size: u64, last_psn: u32, token_seq: u32) {
        if self.completed.contains(&id) {
            self.ack(src, id, true);
            return;
        }
        let f = self.inflow(src, id, size);
        if last_psn != NO_PSN {
            let last = last_psn.min(f.n - 1);
            let mut from = 0;
            while let Some(p) = f.reasm.first_missing(from).filter(|&p| p <= last as u64) {
                f.ask_again(p as u32);
                from = p + 1;
            }
            f.next_expected = f.next_expected.max(last + 1);
        }
        let regrant = token_seq < f.granted;
        let granted = f.granted;
        if regrant {
            let t = self.control(src, id, PayDebtHeader::Token { msg: id, seq: granted, rtx: NO_PSN });
            self.urgent.push_back(t);
        }
        self.make_token_ready(id);
    }

    /// ACKs go in the top class, ahead of data but outside the rate-limited
    /// control class (they are not part of the debt/token budget).
    fn ack(&mut self, src: u32, id: MsgId, whole: bool) {
        let hdr = PayDebtHeader::Ack { msg: id, whole };
        self.acks.push_back(Packet::new(self.info.id, src, CONTROL_WIRE, CTRL_PRIO, id as u32, hdr));
    }

    fn make_token_ready(&mut self, id: MsgId) {
        let mss = self.info.mss as f64;
        if let Some(f) = self.inbound.get_mut(&id) {
            if !f.in_rr && f.may_token(mss) {
                f.in_rr = true;
                self.token_rr.push_back(id);
            }
        }
    }

    /// The receiver's next control packet, if the host's control pacer allows one now.
    pub(super) fn poll_control(&mut self, cx: &mut Cx) -> Option<Packet<PayDebtHeader>> {
        if self.urgent.is_empty() && self.token_rr.is_empty() {
            return None;
        }
        if !self.ctrl_pacer.ready(cx.now, |at| cx.set_timer(at, TIMER_CTRL)) {
            return None;
        }
        let p = self.urgent.pop_front().or_else(|| self.next_token())?;
        self.ctrl_pacer.sent(cx.now);
        Some(p)
    }

    /// A token for the next flow in round-robin order whose window has room.
    fn next_token(&mut self) -> Option<Packet<PayDebtHeader>> {
        let mss = self.info.mss as f64;
        while let Some(id) = self.token_rr.pop_front() {
            let Some(f) = self.inbound.get_mut(&id) else {
                continue;
            };
            f.in_rr = false;
            if !f.may_token(mss) {
                continue;
            }
            let rtx = match f.repair.pop_front() {
                Some(psn) => psn,
                None => {
                    f.owed -= 1;
                    f.granted += 1;
                    NO_PSN
                }
            };
            f.inflight += 1;
            let (src, seq) = (f.src, f.granted);
            if f.may_token(mss) {
                f.in_rr = true;
                self.token_rr.push_back(id);
            }
            return Some(self.control(src, id, PayDebtHeader::Token { msg: id, seq, rtx }));
        }
        None
    }
}
