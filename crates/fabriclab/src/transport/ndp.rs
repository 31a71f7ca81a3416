//! NDP (Handley, Raiciu, Agache, Voinescu, Moore, Antichi, Wójcik,
//! "Re-architecting datacenter networks and stacks for low latency and high
//! performance", SIGCOMM 2017), with htsim's NDP as the reference for the
//! details the paper leaves open.
//!
//! - **First window**: a new message sends its first `initial_window_bdp` x BDP
//!   (whole packets) at once, at line rate, sprayed per packet.
//! - **Trimming**: switches keep a shallow data queue (`network.trim_threshold_bytes`,
//!   8 packets by default) and cut the payload of a packet that does not fit;
//!   the header goes on in the top class (net::features).
//! - **Receiver**: every DATA packet is ACKed and every trimmed header NACKed at
//!   once. Each arrival also queues one PULL for its message while the sender
//!   still needs permission: the receiver knows how many transmissions a
//!   message needs (its packets plus one per trim) and how many it has asked for
//!   (first window plus PULLs). A per-host pull pacer sends the queued PULLs
//!   round-robin over messages, one per link time of a full data packet, so the
//!   data they release arrives at the receiver's link rate.
//! - **Sender**: a PULL carries the message's cumulative pull number, so a lost
//!   PULL is made up by the next; each new pull number releases one packet:
//!   a NACKed packet first, else the next new one. A PULL with nothing to
//!   release is ignored, as in htsim.
//! - **Loss of whole packets** (a full header queue, a lost control packet):
//!   a sender that hears nothing about a message with unacknowledged packets
//!   for `rto_us` resends all of them, unpulled.
//!
//! ACK, NACK, PULL and trimmed headers travel in class 0, data in class 1.

use super::toolkit::{IdMap, IdSet, Reassembly, SlotPacer};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet};
use crate::transport::params::{ParamDoc, ProtocolParams};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use fabriclab_engine::{from_us, serialization_time, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[protocol.ndp]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NdpParams {
    /// Packets a message sends before any PULL, x BDP (rounded up to whole packets).
    pub initial_window_bdp: f64,
    /// Switch data queue before trimming, in full data packets (sets
    /// `network.trim_threshold_bytes` unless given).
    pub trim_queue_packets: u32,
    /// PULL rate as a multiple of the receiver's link rate.
    pub pull_rate_modifier: f64,
    /// Sender: no ACK, NACK or PULL for a message with unacknowledged packets for this long -> resend them.
    pub rto_us: f64,
}

impl Default for NdpParams {
    fn default() -> Self {
        NdpParams { initial_window_bdp: 1.0, trim_queue_packets: 8, pull_rate_modifier: 1.0, rto_us: 1000.0 }
    }
}

impl Validate for NdpParams {
    /// Each key's range is in [`NdpParams::bounds`]; no rule relates two keys.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

impl ProtocolParams for NdpParams {
    type Host = Ndp;
    const PAPER: &'static str = "Re-architecting datacenter networks and stacks for low latency and high performance \
                                 (Handley et al., SIGCOMM 2017)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Spray;
    const HANDLES_TRIMS: bool = true;

    fn trimming(&self) -> Option<Option<u32>> {
        Some(Some(self.trim_queue_packets))
    }

    fn host(&self, info: &HostInfo) -> Ndp {
        Ndp::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        vec![
            ("initial_window_bdp", Bound::new("a multiple", 1e-6, 1e3)),
            ("trim_queue_packets", Bound::new("a number of packets", 1.0, 1e4)),
            ("pull_rate_modifier", Bound::new("a multiple", 0.01, 100.0)),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = NdpParams::default();
        vec![
            ParamDoc {
                key: "initial_window_bdp",
                default: d.initial_window_bdp.to_string(),
                meaning: "packets a new message sends at line rate before any PULL (x BDP, whole packets)",
                source: "NDP §3 (senders start at line rate with a full window); htsim sets it per experiment \
                         (-cwnd, 15 x 9 KB by default); 1 BDP = our choice",
            },
            ParamDoc {
                key: "trim_queue_packets",
                default: d.trim_queue_packets.to_string(),
                meaning: "switch data queue, in full data packets, above which data packets are trimmed",
                source: "NDP §3.1 (8-packet data queues)",
            },
            ParamDoc {
                key: "pull_rate_modifier",
                default: d.pull_rate_modifier.to_string(),
                meaning: "PULL pacing rate as a multiple of the receiver's link rate",
                source: "htsim NdpPullPacer pull_rate_modifier (1 for fat trees)",
            },
            ParamDoc {
                key: "rto_us",
                default: d.rto_us.to_string(),
                meaning: "sender: silence on a message with unacknowledged packets for this long -> resend them",
                source: "htsim DEFAULT_RTO_MIN is 5 ms at its 10 Gbps/9 KB settings; our choice for 100 Gbps: \
                         1 ms, far above any pull-queue wait in our scenarios",
            },
        ]
    }
}

#[derive(Clone, Copy, Debug)]
pub enum NdpHeader {
    /// Packet `index` of message `msg` (`size` bytes in all).
    Data {
        msg: MsgId,
        size: u64,
        index: u32,
    },
    Ack {
        msg: MsgId,
        index: u32,
    },
    /// Packet `index` arrived trimmed: send it again.
    Nack {
        msg: MsgId,
        index: u32,
    },
    /// The receiver has pulled `pull_no` packets of `msg` so far.
    Pull {
        msg: MsgId,
        pull_no: u32,
    },
}

const CONTROL_PRIO: u8 = 0;
const DATA_PRIO: u8 = 1;
const TIMER_PULL: u64 = 1 << 62;
const TIMER_RTO: u64 = 2 << 62;
const TIMER_KIND: u64 = 3 << 62;

/// A control packet (ACK, NACK, PULL): a minimum frame in the top class.
fn control(src: u32, dst: u32, msg: MsgId, hdr: NdpHeader) -> Packet<NdpHeader> {
    Packet::new(src, dst, CONTROL_WIRE, CONTROL_PRIO, msg as u32, hdr)
}

/// Receiver-side state of an inbound message.
struct InMsg {
    src: u32,
    reasm: Reassembly,
    /// Transmissions the sender is permitted: first window plus PULLs.
    asked: u32,
    /// Transmissions the message needs: its packets plus one per trimmed header.
    needed: u32,
    /// PULLs queued at the pacer, and the cumulative pull number sent.
    pending_pulls: u32,
    pull_no: u32,
}

/// Sender-side state of an outbound message.
struct OutMsg {
    dst: u32,
    size: u64,
    n_pkts: u32,
    /// Packets below `next` have been sent once.
    next: u32,
    acked: Reassembly,
    /// NACKed (or timed-out) packets to send again, oldest first.
    rtx: VecDeque<u32>,
    /// Packets the sender may send now.
    credit: u32,
    last_pull: u32,
    in_ready: bool,
    /// Last ACK, NACK or PULL: the RTO counts from here.
    last_feedback: Time,
}

impl OutMsg {
    fn has_data(&self) -> bool {
        self.next < self.n_pkts || !self.rtx.is_empty()
    }
}

pub struct Ndp {
    info: HostInfo,
    iw_pkts: u32,
    rto: Time,
    /// PULL pacing: a slot is the link time of a full data packet / pull_rate_modifier.
    pull_pacer: SlotPacer,
    // receiver
    inbound: IdMap<MsgId, InMsg>,
    completed: IdSet<MsgId>,
    /// Messages with queued PULLs, served round-robin.
    pull_queue: VecDeque<MsgId>,
    // sender
    outbound: IdMap<MsgId, OutMsg>,
    /// Messages with credit and data, served round-robin.
    ready: VecDeque<MsgId>,
    control: VecDeque<Packet<NdpHeader>>,
}

impl Ndp {
    pub fn new(p: &NdpParams, info: &HostInfo) -> Ndp {
        let iw_bytes = (p.initial_window_bdp * info.bdp_bytes as f64).ceil().max(1.0) as u64;
        let full = serialization_time(data_wire(info.mss) as u64, info.link_rate_bps);
        Ndp {
            iw_pkts: packets_for(iw_bytes, info.mss) as u32,
            rto: from_us(p.rto_us).max(1),
            pull_pacer: SlotPacer::new((full as f64 / p.pull_rate_modifier).round() as Time),
            inbound: IdMap::default(),
            completed: IdSet::default(),
            pull_queue: VecDeque::new(),
            outbound: IdMap::default(),
            ready: VecDeque::new(),
            control: VecDeque::new(),
            info: info.clone(),
        }
    }

    fn control_packet(&mut self, dst: u32, msg: MsgId, hdr: NdpHeader) {
        self.control.push_back(control(self.info.id, dst, msg, hdr));
    }

    // ---------------------------------------------------------------- receiver

    fn on_data(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, index: u32, trimmed: bool) {
        let mss = self.info.mss;
        if self.completed.contains(&msg) {
            if !trimmed {
                self.control_packet(src, msg, NdpHeader::Ack { msg, index });
            }
            return;
        }
        let iw = self.iw_pkts;
        let m = self.inbound.entry(msg).or_insert_with(|| {
            let n = packets_for(size, mss) as u32;
            InMsg { src, reasm: Reassembly::new(size, mss), asked: n.min(iw), needed: n, pending_pulls: 0, pull_no: 0 }
        });
        if trimmed {
            m.needed += 1;
            self.control.push_back(control(self.info.id, src, msg, NdpHeader::Nack { msg, index }));
        } else {
            let payload = payload_of(size, mss, index as u64);
            if m.reasm.insert(index as u64, payload) {
                cx.deliver(msg, payload);
            }
            self.control.push_back(control(self.info.id, src, msg, NdpHeader::Ack { msg, index }));
            if m.reasm.is_complete() {
                self.inbound.remove(&msg);
                self.completed.insert(msg);
                cx.complete(msg);
                return;
            }
        }
        // One PULL per arrival while the sender still needs permission.
        if m.asked < m.needed {
            m.asked += 1;
            m.pending_pulls += 1;
            if m.pending_pulls == 1 {
                self.pull_queue.push_back(msg);
            }
        }
    }

    /// The pacer's next PULL, if one is due; otherwise arms its timer.
    fn poll_pull(&mut self, cx: &mut Cx) -> Option<Packet<NdpHeader>> {
        if self.pull_queue.is_empty() {
            return None;
        }
        if !self.pull_pacer.ready(cx.now, |at| cx.set_timer(at, TIMER_PULL)) {
            return None;
        }
        while let Some(msg) = self.pull_queue.pop_front() {
            let Some(m) = self.inbound.get_mut(&msg) else {
                continue; // completed meanwhile
            };
            m.pending_pulls -= 1;
            m.pull_no += 1;
            let (src, pull_no) = (m.src, m.pull_no);
            if m.pending_pulls > 0 {
                self.pull_queue.push_back(msg);
            }
            self.pull_pacer.sent(cx.now);
            return Some(control(self.info.id, src, msg, NdpHeader::Pull { msg, pull_no }));
        }
        None
    }

    // ------------------------------------------------------------------ sender

    fn make_ready(&mut self, msg: MsgId) {
        if let Some(m) = self.outbound.get_mut(&msg) {
            if !m.in_ready && m.credit > 0 && m.has_data() {
                m.in_ready = true;
                self.ready.push_back(msg);
            }
        }
    }

    fn on_ack(&mut self, cx: &mut Cx, msg: MsgId, index: u32) {
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        m.last_feedback = cx.now;
        m.acked.insert(index as u64, 0);
        if m.acked.is_complete() {
            self.outbound.remove(&msg); // a stale entry in `ready` is skipped
        }
    }

    fn on_nack(&mut self, cx: &mut Cx, msg: MsgId, index: u32) {
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        m.last_feedback = cx.now;
        if !m.acked.has(index as u64) && !m.rtx.contains(&index) {
            m.rtx.push_back(index);
        }
        self.make_ready(msg);
    }

    fn on_pull(&mut self, cx: &mut Cx, msg: MsgId, pull_no: u32) {
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        m.last_feedback = cx.now;
        if pull_no > m.last_pull {
            m.credit += pull_no - m.last_pull;
            m.last_pull = pull_no;
        }
        self.make_ready(msg);
    }

    fn on_rto(&mut self, cx: &mut Cx, msg: MsgId) {
        let rto = self.rto;
        let Some(m) = self.outbound.get_mut(&msg) else {
            return; // fully acknowledged
        };
        let due = m.last_feedback + rto;
        if cx.now < due || m.in_ready {
            // Heard from recently, or still sending: look again later.
            cx.set_timer(due.max(cx.now + rto * (m.in_ready as u64)), TIMER_RTO | msg);
            return;
        }
        m.last_feedback = cx.now;
        let before = m.credit;
        for i in 0..m.next {
            if !m.acked.has(i as u64) && !m.rtx.contains(&i) {
                m.rtx.push_back(i);
                m.credit += 1;
            }
        }
        if m.credit == before && m.has_data() && m.credit == 0 {
            m.credit = 1; // everything sent was acknowledged: the last PULL was lost
        }
        cx.set_timer(cx.now + rto, TIMER_RTO | msg);
        self.make_ready(msg);
    }

    /// The next DATA packet, round-robin over messages with credit.
    fn poll_data(&mut self) -> Option<Packet<NdpHeader>> {
        let mss = self.info.mss;
        while let Some(id) = self.ready.pop_front() {
            let Some(m) = self.outbound.get_mut(&id) else {
                continue;
            };
            m.in_ready = false;
            // Retransmissions first (skipping any acknowledged meanwhile), then new data.
            let index = loop {
                match m.rtx.pop_front() {
                    Some(i) if m.acked.has(i as u64) => continue,
                    Some(i) => break Some(i),
                    None if m.next < m.n_pkts => {
                        m.next += 1;
                        break Some(m.next - 1);
                    }
                    None => break None,
                }
            };
            let Some(index) = index else {
                m.credit = 0; // a PULL with nothing to send is ignored
                continue;
            };
            m.credit -= 1;
            let (dst, size) = (m.dst, m.size);
            if m.credit > 0 && m.has_data() {
                m.in_ready = true;
                self.ready.push_back(id);
            }
            let payload = payload_of(size, mss, index as u64);
            let hdr = NdpHeader::Data { msg: id, size, index };
            return Some(Packet::new(self.info.id, dst, data_wire(payload), DATA_PRIO, id as u32, hdr));
        }
        None
    }
}

impl Transport for Ndp {
    type Header = NdpHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let n_pkts = packets_for(msg.size, self.info.mss) as u32;
        let m = OutMsg {
            dst: msg.dst,
            size: msg.size,
            n_pkts,
            next: 0,
            acked: Reassembly::new(msg.size, self.info.mss),
            rtx: VecDeque::new(),
            credit: n_pkts.min(self.iw_pkts),
            last_pull: 0,
            in_ready: false,
            last_feedback: cx.now,
        };
        self.outbound.insert(msg.id, m);
        self.make_ready(msg.id);
        cx.set_timer(cx.now + self.rto, TIMER_RTO | msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<NdpHeader>) {
        match pkt.hdr {
            NdpHeader::Data { msg, size, index } => self.on_data(cx, pkt.src, msg, size, index, pkt.trimmed()),
            NdpHeader::Ack { msg, index } => self.on_ack(cx, msg, index),
            NdpHeader::Nack { msg, index } => self.on_nack(cx, msg, index),
            NdpHeader::Pull { msg, pull_no } => self.on_pull(cx, msg, pull_no),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        match token & TIMER_KIND {
            TIMER_PULL => self.pull_pacer.timer_fired(cx.now),
            TIMER_RTO => self.on_rto(cx, token & !TIMER_KIND),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<NdpHeader>> {
        if let Some(p) = self.control.pop_front() {
            return Some(p);
        }
        if let Some(p) = self.poll_pull(cx) {
            return Some(p);
        }
        self.poll_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::params::assert_bad_keys_named;

    #[test]
    fn bad_parameters_name_their_key() {
        assert_bad_keys_named(
            "ndp",
            [
                (NdpParams { initial_window_bdp: 0.0, ..Default::default() }, "initial_window_bdp"),
                (NdpParams { trim_queue_packets: 0, ..Default::default() }, "trim_queue_packets"),
                (NdpParams { pull_rate_modifier: f64::NAN, ..Default::default() }, "pull_rate_modifier"),
            ],
        );
    }
}
