//! The receive path: datagrams are decoded, checked against what this
//! endpoint knows, and only then handed to SIRD; payload bytes go straight
//! into the reassembly buffer.

use super::*;

impl<I: Io> Endpoint<I> {
    pub(super) fn on_datagram(&mut self, now: Time, d: &[u8], from: SocketAddr, ce: bool) {
        self.stats.datagrams_received += 1;
        match wire::decode(d) {
            Ok((h, payload)) => self.on_header(now, from, ce, h, payload, d.len()),
            Err(WireError::BadChecksum) => self.stats.bad_checksum += 1,
            Err(_) => self.stats.malformed += 1,
        }
    }

    pub(super) fn on_header(&mut self, now: Time, from: SocketAddr, ce: bool, h: Header, payload: &[u8], len: usize) {
        let peer = match self.peers.lookup(&from) {
            Some(p) => p,
            None if self.cfg.accept_unknown_peers => match self.admit(now, from) {
                Some(p) => p,
                None => return self.stats.unknown_peer += 1,
            },
            None => return self.stats.unknown_peer += 1,
        };
        if !self.check_incarnation(peer, h.incarnation) {
            return self.stats.old_incarnation += 1;
        }
        // Echoing our token proves the address receives what we send it (hashed only
        // while the peer is unvalidated: most datagrams come from validated ones).
        let echoed = !self.peer_validated(peer) && h.echo == self.token_for(from);
        let p = self.peers.get_mut(peer).expect("known peer");
        p.their_token = h.token;
        if !p.validated {
            p.validated = echoed;
            p.rx_bytes += len as u64;
        }
        match h.kind {
            Kind::Data | Kind::CreditReq => self.on_inbound(now, peer, ce, h, payload),
            Kind::Credit | Kind::Resend => self.on_sender_control(now, peer, h),
            Kind::Done => match self.out.get(&h.app) {
                Some(m) if m.peer == peer => {
                    let m = self.out.remove(&h.app).expect("present");
                    self.drop_attempt(now, m.attempt);
                    self.stats.messages_confirmed += 1;
                    self.events.push_back(Event::Confirmed { peer, id: h.app, latency_ps: now - m.started });
                }
                _ => self.stats.stale += 1,
            },
            Kind::Alive => match self.out.get_mut(&h.app) {
                Some(m) if m.peer == peer => m.heard = now,
                _ => self.stats.stale += 1,
            },
            Kind::Mtu => self.on_peer_mtu(now, peer, h),
        }
    }

    /// The receiver of message `h.app` refused its DATA, cut for our `mtu`, and
    /// named its own: the message can never be reassembled there, so it fails
    /// now rather than after `max_retries` silent retries.
    fn on_peer_mtu(&mut self, now: Time, peer: PeerId, h: Header) {
        match self.out.get(&h.app) {
            Some(m) if m.peer == peer && h.size != self.cfg.mtu as u64 => {
                self.peers.get_mut(peer).expect("known peer").mtu = Some(u32::try_from(h.size).unwrap_or(u32::MAX));
                let m = self.out.remove(&h.app).expect("present");
                self.drop_attempt(now, m.attempt);
                self.stats.messages_failed += 1;
                self.events.push_back(Event::Failed { peer, id: h.app });
            }
            Some(m) if m.peer == peer => self.stats.invalid += 1,
            _ => self.stats.stale += 1,
        }
    }

    /// A DATA packet whose payload does not fit our segmentation: cut for
    /// another `mtu` (counted, its message dropped, and answered with ours
    /// within the response bucket, so that the sender fails at once with both
    /// named), or invalid.
    fn on_misfit(&mut self, now: Time, peer: PeerId, h: &Header, len: usize) {
        let overhead = wire::IP_UDP_HEADER + wire::HEADER_LEN as u32;
        let ours = self.mss as u64;
        let theirs: Vec<PeerMtu> = sender_mss(h.size, h.index, len)
            .into_iter()
            .filter_map(|c| match c {
                Cut::Exactly(m) if m != ours => Some(PeerMtu::Exactly(m as u32 + overhead)),
                Cut::AtLeast(m) if m > ours => Some(PeerMtu::AtLeast(m as u32 + overhead)),
                _ => None,
            })
            .collect();
        if theirs.is_empty() {
            return self.stats.invalid += 1;
        }
        self.stats.mtu_mismatch += 1;
        // No packet of the message will fit: what a CREDITREQ opened for it goes (the sender fails it).
        self.drop_inbound((peer as u64) << PEER_SHIFT | h.msg);
        // An ambiguous packet does not replace what a clear one said about this peer.
        let known = self.mtu_mismatch.is_some_and(|m| m.peer == peer && m.theirs.is_some());
        if theirs.len() == 1 || !known {
            let addr = self.peers.get(peer).expect("known peer").addr;
            let theirs = (theirs.len() == 1).then(|| theirs[0]);
            self.mtu_mismatch = Some(MtuMismatch { peer, addr, theirs, ours: self.cfg.mtu });
        }
        if self.take_response(now, peer) {
            let reply = Header::new(Kind::Mtu, self.incarnation, 0, h.app, self.cfg.mtu as u64, h.index);
            self.ctrl.push_back((peer, reply));
        }
    }

    /// A new peer from an address not yet known: a free slot, or the slot of the
    /// oldest unvalidated peer (validated peers are never evicted); None if all
    /// peers are validated.
    fn admit(&mut self, now: Time, from: SocketAddr) -> Option<PeerId> {
        if let Some(p) = self.peers.add(from, false, now) {
            return Some(p);
        }
        let id = self.peers.eviction_candidate()?;
        let old = self.peers.replace(id, from, now).expect("candidate exists");
        self.stats.peers_evicted += 1;
        // Nothing of the old peer may reach the new address or outlive it in SIRD.
        for inbound in old.inbound {
            self.drop_inbound(inbound);
        }
        self.ctrl.retain(|(p, _)| *p != id);
        let gone: Vec<u64> = self.out.iter().filter(|(_, m)| m.peer == id).map(|(&a, _)| a).collect();
        for app in gone {
            let m = self.out.remove(&app).expect("listed");
            self.drop_attempt(now, m.attempt);
            self.stats.messages_failed += 1;
            self.events.push_back(Event::Failed { peer: id, id: app });
        }
        Some(id)
    }

    /// Checks a datagram's incarnation: false for an older incarnation than the
    /// peer's current one (a replay: refused); a newer one is a restart, which
    /// voids what we were receiving from the old one.
    pub(super) fn check_incarnation(&mut self, peer: PeerId, inc: u64) -> bool {
        let p = self.peers.get_mut(peer).expect("known peer");
        match p.incarnation {
            Some(old) if old == inc => return true,
            Some(old) if inc < old => return false,
            None => {
                p.incarnation = Some(inc);
                return true;
            }
            Some(_) => {}
        }
        p.incarnation = Some(inc);
        p.their_token = 0;
        p.delivered = Default::default();
        let ids = std::mem::take(&mut p.inbound);
        for id in ids {
            self.drop_inbound(id);
        }
        self.stats.peer_restarts += 1;
        true
    }

    pub(super) fn on_inbound(&mut self, now: Time, peer: PeerId, ce: bool, h: Header, payload: &[u8]) {
        if h.msg > ATTEMPT_MASK || h.size == 0 || h.size > self.cfg.max_message_bytes {
            return self.stats.invalid += 1;
        }
        let p = self.peers.get(peer).expect("known peer");
        match p.delivered.check(h.app) {
            Seen::New => {}
            Seen::Delivered => {
                self.stats.duplicates += 1;
                if self.take_response(now, peer) {
                    self.queue_ctrl(peer, Kind::Done, h.app);
                }
                return;
            }
            Seen::TooOld => return self.stats.replayed += 1,
        }
        let id = (peer as u64) << PEER_SHIFT | h.msg;
        let n_pkts = packets_for(h.size, self.mss);
        if h.kind == Kind::Data
            && (h.index as u64 >= n_pkts || payload.len() != payload_of(h.size, self.mss, h.index as u64) as usize)
        {
            return self.on_misfit(now, peer, &h, payload.len());
        }
        match self.inb.get(&id) {
            Some(m) if m.app != h.app || m.buf.len() as u64 != h.size => return self.stats.invalid += 1,
            Some(_) => {}
            // Only a CREDITREQ or an unscheduled packet may open a message: a credited
            // one for a message we do not hold (a straggler of an attempt we abandoned)
            // would leave an entry SIRD never hears of, whose ALIVEs keep the sender
            // waiting for credit that never comes.
            None if h.kind == Kind::Data && (h.scheduled || h.index >= self.sird.unscheduled_packets(h.size)) => {
                return self.stats.invalid += 1
            }
            None => {
                let full = p.inbound.len() >= self.cfg.max_inbound_per_peer as usize
                    || self.inbound_bytes + h.size > self.cfg.max_inbound_bytes;
                if full {
                    return self.stats.overload += 1;
                }
                let sched_from = self.sird.unscheduled_packets(h.size);
                let m = InMsg {
                    peer,
                    app: h.app,
                    buf: vec![0; h.size as usize],
                    got: Reassembly::new(h.size, self.mss),
                    sched_from,
                    granted: sched_from,
                    progress: now,
                    alive_sent: now,
                };
                self.inbound_bytes += h.size;
                self.inb.insert(id, m);
                self.peers.get_mut(peer).expect("known").inbound.push(id);
            }
        }
        let m = self.inb.get_mut(&id).expect("present");
        let hdr = if h.kind == Kind::Data {
            // SIRD returns credit for scheduled packets: accept only what it credited.
            let ok = if h.scheduled { h.index >= m.sched_from && h.index < m.granted } else { h.index < m.sched_from };
            if !ok {
                return self.stats.invalid += 1;
            }
            let off = h.index as usize * self.mss as usize;
            m.buf[off..off + payload.len()].copy_from_slice(payload);
            m.got.insert(h.index as u64, payload.len() as u32);
            m.progress = now;
            // Data that arrives earns the peer responses (a lossy peer needs RESENDs in
            // proportion); a forged CREDITREQ, followed by no DATA, earns none.
            let burst = self.cfg.response_burst;
            if let Some(p) = self.peers.get_mut(peer) {
                p.responses.earn(burst);
            }
            if ce {
                self.stats.ce_received += 1;
            }
            SirdHeader::Data { msg: id, size: h.size, index: h.index, scheduled: h.scheduled, csn: h.csn }
        } else {
            SirdHeader::CreditReq { msg: id, size: h.size, sched_from: h.index }
        };
        let mut pkt = Packet::new(peer, 0, CONTROL_WIRE, 0, 0, hdr);
        if ce && h.kind == Kind::Data {
            pkt.ecn = ECN_ECT | ECN_CE;
        }
        self.record(now, peer, 0, &hdr, h.msg);
        self.with_sird(now, |s, cx| s.on_packet(cx, &pkt));
    }

    /// CREDIT or RESEND for one of our attempts.
    pub(super) fn on_sender_control(&mut self, now: Time, peer: PeerId, h: Header) {
        let Some(&app) = self.attempt_app.get(&h.msg) else {
            return self.stats.stale += 1;
        };
        let m = self.out.get_mut(&app).expect("attempts map to live messages");
        if m.peer != peer || h.index as u64 >= packets_for(m.data.len() as u64, self.mss) {
            return self.stats.invalid += 1;
        }
        m.heard = now;
        let hdr = if h.kind == Kind::Credit {
            SirdHeader::Credit { msg: h.msg, index: h.index }
        } else {
            SirdHeader::Resend { msg: h.msg, index: h.index }
        };
        self.record(now, peer, 0, &hdr, h.msg);
        let pkt = Packet::new(peer, 0, CONTROL_WIRE, 0, 0, hdr);
        self.with_sird(now, |s, cx| s.on_packet(cx, &pkt));
    }

    /// SIRD completed inbound message `id`: deliver it once and confirm it.
    pub(super) fn finish_inbound(&mut self, id: u64) {
        self.sird.forget_completed(id);
        let Some(m) = self.take_inbound(id) else {
            return;
        };
        let p = self.peers.get_mut(m.peer).expect("known peer");
        p.delivered.insert(m.app, self.cfg.dedup_window as usize);
        // Other attempts of the same message are now duplicates.
        let twins: Vec<u64> =
            p.inbound.iter().copied().filter(|i| self.inb.get(i).is_some_and(|o| o.app == m.app)).collect();
        for t in twins {
            self.drop_inbound(t);
        }
        self.stats.messages_delivered += 1;
        self.stats.bytes_delivered += m.buf.len() as u64;
        self.queue_ctrl(m.peer, Kind::Done, m.app);
        self.events.push_back(Event::Received { peer: m.peer, id: m.app, data: m.buf });
    }

    pub(super) fn take_inbound(&mut self, id: u64) -> Option<InMsg> {
        let m = self.inb.remove(&id)?;
        self.inbound_bytes -= m.buf.len() as u64;
        if let Some(p) = self.peers.get_mut(m.peer) {
            p.inbound.retain(|&i| i != id);
        }
        Some(m)
    }

    /// Forgets an inbound message in the driver and in SIRD (credit returned).
    pub(super) fn drop_inbound(&mut self, id: u64) {
        self.take_inbound(id);
        self.sird.abort_inbound(id);
    }

    pub(super) fn drop_attempt(&mut self, _now: Time, attempt: u64) {
        self.attempt_app.remove(&attempt);
        self.sird.abort_outbound(attempt);
    }

    pub(super) fn queue_ctrl(&mut self, peer: PeerId, kind: Kind, app: u64) {
        self.ctrl.push_back((peer, Header::new(kind, self.incarnation, 0, app, 0, 0)));
    }

    /// A token from `peer`'s response bucket (RESENDs, repeated DONEs); counts a refusal.
    pub(super) fn take_response(&mut self, now: Time, peer: PeerId) -> bool {
        let (rate, burst) = (self.cfg.response_rate_per_s, self.cfg.response_burst);
        let ok = self.peers.get_mut(peer).is_some_and(|p| p.responses.take(now, rate, burst));
        self.stats.rate_limited += !ok as u64;
        ok
    }

    /// Our token for `addr`: a keyed hash (SipHash) that a peer can only learn by
    /// receiving our datagrams at that address, and so proves it by echoing it.
    pub(super) fn token_for(&self, addr: SocketAddr) -> u64 {
        use std::hash::{Hash, Hasher};
        #[allow(deprecated)] // SipHasher: a fixed, keyed algorithm (DefaultHasher's may change)
        let mut h = std::hash::SipHasher::new_with_keys(self.secret, mix64(self.secret));
        addr.hash(&mut h);
        h.finish().max(1)
    }
}

/// The MSSs a sender may have cut packet `index` of a `size`-byte message
/// with, given its `len` payload bytes: as a full packet (MSS = len), or as the
/// last one (index i > 0: i x MSS + len = size with len <= MSS; index 0: the
/// only packet, MSS >= size). One packet cannot always tell the two apart.
fn sender_mss(size: u64, index: u32, len: usize) -> Vec<Cut> {
    let (i, len) = (index as u64, len as u64);
    let mut cuts = Vec::new();
    if len == 0 || len > size {
        return cuts;
    }
    if i == 0 && len == size {
        return vec![Cut::AtLeast(size)];
    }
    if (i + 1) * len <= size {
        cuts.push(Cut::Exactly(len));
    }
    if i > 0 && (size - len).is_multiple_of(i) && (size - len) / i > len {
        cuts.push(Cut::Exactly((size - len) / i));
    }
    cuts
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    Exactly(u64),
    AtLeast(u64),
}

#[cfg(test)]
mod tests {
    use super::{sender_mss, Cut};

    #[test]
    fn the_senders_mss_is_read_from_one_packet() {
        use Cut::*;
        // 20,000 bytes cut at 8,908 (mtu 9000): packet 0 is full; the last, 2,184 bytes at
        // index 2, could also be a full packet of an MSS of 2,184.
        assert_eq!(sender_mss(20_000, 0, 8_908), [Exactly(8_908)]);
        assert_eq!(sender_mss(20_000, 2, 2_184), [Exactly(2_184), Exactly(8_908)]);
        // 5,000 bytes in one packet: only a bound.
        assert_eq!(sender_mss(5_000, 0, 5_000), [AtLeast(5_000)]);
        // A last packet that is exactly full: index 2 of 3 x 1,408.
        assert_eq!(sender_mss(3 * 1_408, 2, 1_408), [Exactly(1_408)]);
        // No MSS cuts these: beyond the message, empty, or a last packet that does not divide.
        for (size, index, len) in [(1_000, 3, 600), (1_000, 0, 0), (1_000, 0, 1_001), (1_000, 3, 400)] {
            assert_eq!(sender_mss(size, index, len), [], "{size} {index} {len}");
        }
    }
}
