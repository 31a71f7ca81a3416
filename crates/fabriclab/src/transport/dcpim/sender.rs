//! The sender's side of dcPIM: granting requests, counting accepted
//! channels, unscheduled bursts of short messages and one data packet per
//! token.

use super::{Cx, Dcpim, DcpimHeader, MsgId, LONG, SHORT, T_GRANT, T_NOTIFY};
use crate::net::wire::{data_wire, payload_of};
use crate::net::Packet;
use fabriclab_engine::Time;

pub(super) struct Request {
    pub(super) dst: u32,
    pub(super) round: u32,
    pub(super) remaining: u32,
    pub(super) channels: u32,
    pub(super) prompt: u32,
    pub(super) msg: MsgId,
}

/// A sender's view of one epoch's matching.
#[derive(Default)]
pub(super) struct TxEpoch {
    pub(super) live: bool,
    pub(super) epoch: u64,
    pub(super) accepted: u32,
    /// Channels busy in the current data phase, plus those accepted as prompt.
    pub(super) prompt_used: u32,
    pub(super) receivers: Vec<u32>,
    pub(super) armed_round: u32,
    pub(super) requests: Vec<Request>,
}

pub(super) struct OutMsg {
    pub(super) dst: u32,
    pub(super) size: u64,
    pub(super) n_pkts: u32,
    pub(super) short: bool,
    pub(super) next_unsched: u32,
    pub(super) last_heard: Time,
}

pub(super) struct TokenIn {
    pub(super) msg: MsgId,
    pub(super) index: u32,
    pub(super) seq: u32,
    pub(super) expires: Time,
}

impl Dcpim {
    pub(super) fn on_request(
        &mut self,
        cx: &mut Cx,
        dst: u32,
        msg: MsgId,
        epoch: u32,
        round: u8,
        (channels, prompt): (u8, u8),
        remaining: u32,
    ) {
        let (e, i) = (epoch as u64, round as u32);
        if i == 0 || i > self.rounds {
            return;
        }
        let grant_at = e * self.t.epoch + (i as Time - 1) * self.t.round + self.t.round / 2;
        if cx.now > grant_at {
            return; // late: this round's grants are decided
        }
        if let Some(m) = self.outbound.get_mut(&msg) {
            m.last_heard = cx.now; // the receiver knows of it: no need to notify again
        }
        let prev = &self.tx[(e as usize + 1) & 1];
        let busy = if prev.live && prev.epoch + 1 == e { prev.accepted } else { 0 };
        let slot = &mut self.tx[(e & 1) as usize];
        if !slot.live || slot.epoch < e {
            slot.live = true;
            slot.epoch = e;
            slot.accepted = 0;
            slot.prompt_used = busy;
            slot.receivers.clear();
            slot.armed_round = 0;
            slot.requests.clear();
        } else if slot.epoch > e {
            return;
        }
        let (channels, prompt) = (channels as u32, prompt as u32);
        slot.requests.push(Request { dst, round: i, remaining, channels, prompt, msg });
        if slot.armed_round != i {
            slot.armed_round = i;
            cx.set_timer(grant_at, T_GRANT | e << 8 | i as u64);
        }
    }

    /// Grants the round's requests, up to the channels not yet accepted
    /// (pimhost.cpp handle_all_req).
    pub(super) fn on_grant_timer(&mut self, cx: &mut Cx, e: u64, round: u32) {
        let slot = &mut self.tx[(e & 1) as usize];
        if !slot.live || slot.epoch != e {
            return;
        }
        let mut reqs = std::mem::take(&mut slot.requests);
        let mut avail = self.k - slot.accepted;
        let mut prompt_avail = self.k.saturating_sub(slot.prompt_used);
        reqs.retain(|r| r.round == round && self.outbound.contains_key(&r.msg));
        self.order(cx, round, &mut reqs, |r| (r.remaining, r.msg));
        for r in reqs.drain(..) {
            if avail == 0 {
                break;
            }
            let c = r.channels.min(avail);
            let p = r.prompt.min(c).min(prompt_avail);
            avail -= c;
            prompt_avail -= p;
            self.stats.grants += 1;
            let hdr = DcpimHeader::Grant {
                msg: r.msg,
                epoch: e as u32,
                round: round as u8,
                channels: c as u8,
                prompt: p as u8,
                remaining: r.remaining,
            };
            self.send_control(r.dst, r.msg, hdr);
        }
        self.tx[(e & 1) as usize].requests = reqs;
    }

    /// Counts accepted channels; any beyond k are revoked (pimhost.cpp receive_accept_pkt).
    pub(super) fn on_accept(&mut self, dst: u32, epoch: u32, channels: u8, prompt: u8) {
        let e = epoch as u64;
        let k = self.k;
        let slot = &mut self.tx[(e & 1) as usize];
        let (mut c, p) = (channels as u32, prompt as u32);
        let (mut excess, mut prompt_excess) = (c, p);
        if slot.live && slot.epoch == e {
            excess = (slot.accepted + c).saturating_sub(k);
            c -= excess;
            slot.accepted += c;
            let kept = p.min(c).min(k.saturating_sub(slot.prompt_used));
            slot.prompt_used += kept;
            prompt_excess = p - kept;
            if c > 0 && !slot.receivers.contains(&dst) {
                slot.receivers.push(dst);
            }
            self.stats.max_tx_channels = self.stats.max_tx_channels.max(slot.accepted);
            self.stats.max_tx_receivers = self.stats.max_tx_receivers.max(slot.receivers.len() as u32);
        }
        if excess > 0 || prompt_excess > 0 {
            self.stats.revokes += 1;
            let hdr = DcpimHeader::Revoke { epoch, channels: excess as u8, prompt: prompt_excess as u8 };
            self.send_control(dst, 0, hdr);
        }
    }

    pub(super) fn on_token(&mut self, cx: &mut Cx, msg: MsgId, index: u32, seq: u32, expires: Time) {
        if let Some(m) = self.outbound.get_mut(&msg) {
            m.last_heard = cx.now;
            self.tokens.push_back(TokenIn { msg, index, seq, expires });
        }
    }

    pub(super) fn on_notify_timer(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.notify_timeout;
        let Some(m) = self.outbound.get_mut(&msg) else {
            return; // acknowledged
        };
        let bursting = m.next_unsched < m.n_pkts;
        if !bursting && cx.now >= m.last_heard + timeout {
            m.last_heard = cx.now;
            let (dst, size) = (m.dst, m.size);
            self.stats.notify_retries += 1;
            self.send_control(dst, msg, DcpimHeader::Notify { msg, size });
        }
        let m = &self.outbound[&msg];
        let next = if bursting { cx.now + timeout } else { m.last_heard + timeout };
        cx.set_timer(next, T_NOTIFY | msg);
    }

    pub(super) fn data_packet(&self, msg: MsgId, m: &OutMsg, index: u32, seq: u32) -> Packet<DcpimHeader> {
        let payload = payload_of(m.size, self.info.mss, index as u64);
        let prio = if m.short { SHORT } else { LONG };
        let hdr = DcpimHeader::Data { msg, size: m.size, index, seq };
        Packet::new(self.info.id, m.dst, data_wire(payload), prio, msg as u32, hdr)
    }

    /// Unscheduled packets of short messages, fewest bytes left first.
    pub(super) fn poll_short(&mut self, cx: &mut Cx) -> Option<Packet<DcpimHeader>> {
        let mss = self.info.mss as u64;
        let mut best: Option<((u64, MsgId), usize)> = None;
        let mut i = 0;
        while i < self.short_ready.len() {
            let id = self.short_ready[i];
            match self.outbound.get(&id).filter(|m| m.next_unsched < m.n_pkts) {
                None => {
                    self.short_ready.swap_remove(i);
                }
                Some(m) => {
                    let key = (m.size - (m.next_unsched as u64 * mss).min(m.size), id);
                    if best.is_none_or(|(k, _)| key < k) {
                        best = Some((key, i));
                    }
                    i += 1;
                }
            }
        }
        let ((_, id), _) = best?;
        let m = self.outbound.get_mut(&id).expect("ready");
        let index = m.next_unsched;
        m.next_unsched += 1;
        if m.next_unsched == m.n_pkts {
            m.last_heard = cx.now;
        }
        let m = &self.outbound[&id];
        Some(self.data_packet(id, m, index, index))
    }

    /// One data packet per token, in arrival order; expired tokens are dropped.
    pub(super) fn poll_token(&mut self, cx: &mut Cx) -> Option<Packet<DcpimHeader>> {
        while let Some(t) = self.tokens.pop_front() {
            if t.expires < cx.now {
                self.stats.tokens_expired += 1;
                continue;
            }
            if let Some(m) = self.outbound.get(&t.msg) {
                return Some(self.data_packet(t.msg, m, t.index, t.seq));
            }
        }
        None
    }
}
