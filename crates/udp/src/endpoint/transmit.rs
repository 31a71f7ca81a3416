//! The transmit path: the virtual NIC pulls SIRD packets at the link rate,
//! attaches payload bytes and sends them as datagrams.

use super::*;

impl<I: Io> Endpoint<I> {
    /// Encodes what is due now into one batch and hands it to the socket (one
    /// `sendmmsg`, GSO runs inside it) rather than one `sendto` per datagram.
    pub(super) fn transmit(&mut self, now: Time) {
        self.fill_tx(now);
        self.flush_tx();
    }

    fn flush_tx(&mut self) {
        if !self.tx.is_empty() {
            // A socket error other than a full buffer is a lost datagram too; recovery handles it.
            let _ = self.io.send_batch(&self.tx);
            self.tx.clear();
        }
    }

    fn fill_tx(&mut self, now: Time) {
        while let Some((peer, h)) = self.ctrl.pop_front() {
            let Some(h) = self.stamp(peer, h) else { continue };
            self.tx.discard();
            wire::encode(&h, &[], self.tx.staging());
            self.emit(peer);
            if self.tx.len() >= TX_BATCH {
                self.flush_tx();
            }
        }
        self.nic_blocked = false;
        loop {
            if self.cfg.nic_pacing && now < self.nic_free_at {
                self.nic_blocked = true;
                return;
            }
            let Some(pkt) = self.with_sird(now, |s, cx| s.poll_transmit(cx)) else {
                return;
            };
            let Some((to, bytes)) = self.encode(now, &pkt) else {
                continue;
            };
            if !self.emit(to) {
                continue; // not sent: it does not occupy the NIC
            }
            let busy = wire::nic_time(bytes, self.cfg.link_rate_bps());
            self.nic_free_at = self.nic_free_at.max(now.saturating_sub(self.catch_up)) + busy;
            if self.tx.len() >= TX_BATCH {
                self.flush_tx();
            }
        }
    }

    /// Queues the staged datagram for `peer` unless that would take an
    /// unvalidated address past its amplification limit; whether it was queued.
    pub(super) fn emit(&mut self, peer: PeerId) -> bool {
        let len = self.tx.staged().len() as u64;
        let Some(p) = self.peers.get_mut(peer) else {
            self.tx.discard();
            return false;
        };
        if !p.validated {
            if p.tx_bytes + len > AMPLIFICATION_FACTOR * p.rx_bytes {
                self.stats.amplification_limited += 1;
                self.tx.discard();
                return false;
            }
            p.tx_bytes += len;
        }
        self.stats.datagrams_sent += 1;
        self.tx.commit(p.addr);
        true
    }

    /// `h` with the address token for `peer` and the echo of its token for us.
    pub(super) fn stamp(&self, peer: PeerId, h: Header) -> Option<Header> {
        let p = self.peers.get(peer)?;
        Some(Header { token: self.token_for(p.addr), echo: p.their_token, ..h })
    }

    /// The datagram for a SIRD packet, staged in `tx`; None if its message is gone
    /// (or, for a RESEND, if the peer's response bucket is empty).
    pub(super) fn encode(&mut self, now: Time, pkt: &Packet<SirdHeader>) -> Option<(PeerId, usize)> {
        let inc = self.incarnation;
        self.tx.discard();
        let (peer, attempt) = match pkt.hdr {
            SirdHeader::Data { msg, size, index, scheduled, csn } => {
                let app = *self.attempt_app.get(&msg)?;
                let m = self.out.get(&app)?;
                let off = index as usize * self.mss as usize;
                let len = payload_of(size, self.mss, index as u64) as usize;
                let h = Header { scheduled, csn, ..Header::new(Kind::Data, inc, msg, app, size, index) };
                let h = self.stamp(m.peer, h)?;
                wire::encode(&h, &m.data[off..off + len], self.tx.staging());
                self.stats.data_packets_sent += 1;
                self.stats.csn_sent += csn as u64;
                (m.peer, msg)
            }
            SirdHeader::CreditReq { msg, size, sched_from } => {
                let app = *self.attempt_app.get(&msg)?;
                let h = self.stamp(pkt.dst, Header::new(Kind::CreditReq, inc, msg, app, size, sched_from))?;
                wire::encode(&h, &[], self.tx.staging());
                (pkt.dst, msg)
            }
            SirdHeader::Credit { msg, index } | SirdHeader::Resend { msg, index } => {
                let resend = matches!(pkt.hdr, SirdHeader::Resend { .. });
                if resend && !self.take_response(now, self.inb.get(&msg)?.peer) {
                    return None;
                }
                let m = self.inb.get(&msg)?;
                let h = self.stamp(m.peer, Header::new(Kind::Credit, inc, 0, 0, 0, 0))?;
                let m = self.inb.get_mut(&msg)?;
                let kind = if matches!(pkt.hdr, SirdHeader::Credit { .. }) {
                    m.granted = m.granted.max(index + 1);
                    self.stats.credits_sent += 1;
                    Kind::Credit
                } else {
                    Kind::Resend
                };
                let h = Header { kind, msg: msg & ATTEMPT_MASK, app: m.app, size: m.buf.len() as u64, index, ..h };
                wire::encode(&h, &[], self.tx.staging());
                (m.peer, msg & ATTEMPT_MASK)
            }
        };
        self.record(now, 0, peer, &pkt.hdr, attempt);
        Some((peer, self.tx.staged().len()))
    }

    pub(super) fn record(&mut self, at: Time, from: PeerId, to: PeerId, hdr: &SirdHeader, msg: u64) {
        if let Some(t) = self.trace.as_mut() {
            t.push(Decision { at, from, to, hdr: TracedHeader::of(hdr, msg) });
        }
    }
}
