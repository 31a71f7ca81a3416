//! SIRD: sender-informed receiver-driven transport (Prasopoulos, Bugnion,
//! Kogias; seed sird-paper-2024.txt §4, research note sird.md).
//!
//! Receivers schedule their downlink with CREDIT packets, capped by a global
//! bucket `B` and per-sender buckets `min(senderBkt_i, netBkt_i)`; the
//! per-sender buckets follow two DCTCP-style AIMD loops fed by the `csn` bit
//! (sender holds more than `SThr` credit) and by ECN (core queue above
//! `NThr`). Messages up to `UnschT` send their first BDP unscheduled.
//! The receiver side follows Algorithm 1, the sender side Algorithm 2.
//!
//! Files: `params.rs` (`[protocol.sird]`), `loops.rs` (the AIMD bucket loops, §4.3),
//! `receiver.rs` (Algorithm 1), `sender.rs` (Algorithm 2); this one holds the host
//! state, its public hooks and the `Transport` dispatch.

mod loops;
mod params;
mod receiver;
mod sender;
#[cfg(test)]
mod tests;

pub use params::{CreditBytes, Cut, Increase, PriorityLane, SenderBucketCheck, SenderPolicy, SirdParams, SrptKey};

use loops::{LoopRules, Peer};
use receiver::InMsg;
use sender::{Candidate, OutMsg};

use super::toolkit::{IdSet, SlotMap};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::Packet;
use fabriclab_engine::{from_us, Time, S};

#[derive(Clone, Copy, Debug)]
pub enum SirdHeader {
    /// Packet `index` of message `msg` (`size` bytes total).
    Data { msg: MsgId, size: u64, index: u32, scheduled: bool, csn: bool },
    /// Asks for credit for packets `sched_from..` of `msg`.
    CreditReq { msg: MsgId, size: u64, sched_from: u32 },
    /// Allows packet `index` of `msg` to be sent.
    Credit { msg: MsgId, index: u32 },
    /// Asks the sender to send packet `index` of `msg` again (loss recovery).
    Resend { msg: MsgId, index: u32 },
}

const HIGH: u8 = 0;
const LOW: u8 = 1;

const TIMER_PACE: u64 = 0;
const TIMER_RX: u64 = 1 << 62;
const TIMER_TX: u64 = 2 << 62;
const TIMER_KIND: u64 = 3 << 62;

pub struct Sird {
    info: HostInfo,
    // parameters in bytes / picoseconds
    b: u64,
    unsch_t: u64,
    unsch_pkts: u32,
    /// UnschT compares the message's wire bytes (`unsch_t_bytes = "wire"`).
    unsch_t_wire: bool,
    sthr: f64,
    fair_share: f64,
    sender_policy: SenderPolicy,
    unsch_capped: bool,
    /// `sender_bucket_check = "before"`: sb_i checked before the credit, as the artifact.
    bucket_check_before: bool,
    /// `loops_see_control`: control packets feed the AIMD loops and are ECN-capable.
    loops_see_control: bool,
    pacing: bool,
    /// `credit_pacing_slack_bytes` as time at the link rate.
    pacing_slack: Time,
    lane: PriorityLane,
    timeout: Time,
    rules: LoopRules,
    sender_floor: f64,
    net_floor: f64,
    csn_min_messages: u32,
    csn_counts_unsched: bool,
    csn_counts_waiting: bool,
    srpt_key: SrptKey,
    credit_wire: bool,
    account_unsched: bool,
    // receiver (Algorithm 1)
    b_used: u64,
    peers: Vec<Option<Box<Peer>>>,
    inbound: SlotMap<InMsg>,
    /// Messages already delivered, so late duplicates do not resurrect them.
    completed: IdSet<MsgId>,
    /// Inbound messages that may still need credit, as (slot in `inbound`, id):
    /// cleaned lazily, by the credit scan, of messages fully credited or gone.
    grantable: Vec<(u32, MsgId)>,
    next_credit_at: Time,
    /// How far credit pacing may fall behind `now` and catch up (0 in the
    /// simulator, whose polls are never late; see [`Sird::with_credit_catch_up`]).
    credit_catch_up: Time,
    pace_timer: bool,
    // sender (Algorithm 2)
    outbound: SlotMap<OutMsg>,
    /// Outbound messages that may have a packet to send, as (slot in `outbound`, id),
    /// cleaned lazily by the data scan.
    ready: Vec<(u32, MsgId)>,
    /// sum_r c_r: credit held for all receivers, credit bytes (with
    /// `csn_counts_unsched`, also the unscheduled prefixes not yet sent).
    accumulated: u64,
    /// Outbound messages in progress (see `OutMsg::active`), for `csn_min_messages`.
    active_out: u32,
    fair_bytes: u64,
    srpt_bytes: u64,
    rr_next: u32,
    /// `sender_policy = "deficit"`: per receiver, its deficit and the last round it
    /// had data to send (allocated on first use).
    drr: Vec<(f64, u64)>,
    drr_round: u64,
    drr_scratch: Vec<Candidate>,
    control: std::collections::VecDeque<Packet<SirdHeader>>,
}

impl Sird {
    pub fn new(p: &SirdParams, info: &HostInfo) -> Sird {
        let bdp = info.bdp_bytes as f64;
        let unsch_pkts = packets_for(info.bdp_bytes, info.mss) as u32;
        let credit_wire = p.credit_bytes == CreditBytes::Wire;
        let full = if credit_wire { data_wire(info.mss) } else { info.mss } as f64;
        let rules = LoopRules {
            increase: p.increase,
            cut: p.cut,
            g: p.g,
            alpha_init: p.alpha_init,
            cut_interval_windows: p.cut_min_interval_windows,
            full,
            max: p.max_sender_bucket_bdp * bdp,
        };
        Sird {
            b: (p.b_bdp * bdp).round() as u64,
            unsch_t: (p.unsch_t_bdp * bdp).round() as u64,
            unsch_pkts,
            unsch_t_wire: p.unsch_t_bytes == CreditBytes::Wire,
            sthr: p.sthr_bdp * bdp,
            fair_share: p.sender_fair_share,
            sender_policy: p.sender_policy,
            unsch_capped: p.unsch_capped_by_held_credit,
            bucket_check_before: p.sender_bucket_check == SenderBucketCheck::Before,
            loops_see_control: p.loops_see_control,
            pacing: p.credit_pacing,
            pacing_slack: (p.credit_pacing_slack_bytes * 8.0 * S as f64 / info.link_rate_bps as f64).round() as Time,
            lane: p.priority_lane,
            timeout: from_us(p.timeout_us).max(1),
            rules,
            sender_floor: p.sender_bucket_floor_bdp * bdp,
            net_floor: p.net_bucket_floor_bdp * bdp,
            csn_min_messages: p.csn_min_messages,
            csn_counts_unsched: p.csn_counts_unsched,
            csn_counts_waiting: p.csn_counts_waiting,
            srpt_key: p.srpt_key,
            credit_wire,
            account_unsched: p.account_unsched,
            b_used: 0,
            peers: (0..info.n_hosts).map(|_| None).collect(),
            inbound: SlotMap::default(),
            completed: IdSet::default(),
            grantable: Vec::new(),
            next_credit_at: 0,
            credit_catch_up: 0,
            pace_timer: false,
            outbound: SlotMap::default(),
            ready: Vec::new(),
            accumulated: 0,
            active_out: 0,
            fair_bytes: 0,
            srpt_bytes: 0,
            rr_next: 0,
            drr: Vec::new(),
            drr_round: 0,
            drr_scratch: Vec::new(),
            control: Default::default(),
            info: info.clone(),
        }
    }

    /// Packets of a message of `size` sent unscheduled: the BDP prefix, rounded up to
    /// whole packets, for messages up to UnschT; none above. With `unsch_t_bytes = "wire"`
    /// the message's data packets on the wire are compared with UnschT, as the authors'
    /// simulator does (SIRD-Simulator 116e981f, r2p2-cc-hybrid.cc, `send_data`, lines
    /// 782-783, the message's wire size, `add_header_overhead` in r2p2-hybrid-support.cc lines
    /// 11-20, against `unsolicited_thresh_bytes_`): a message of 65 full packets or more is then
    /// entirely scheduled at UnschT = 100,000 B.
    pub fn unscheduled_packets(&self, size: u64) -> u32 {
        if size > self.unsch_t {
            return 0;
        }
        let n = packets_for(size, self.info.mss) as u32;
        if self.unsch_t_wire && self.bytes_of_range(size, 0..n, true) > self.unsch_t {
            return 0;
        }
        n.min(self.unsch_pkts)
    }

    fn ctrl_prio(&self) -> u8 {
        if self.lane == PriorityLane::None {
            LOW
        } else {
            HIGH
        }
    }

    fn control_packet(&self, dst: u32, msg: MsgId, hdr: SirdHeader) -> Packet<SirdHeader> {
        let p = Packet::new(self.info.id, dst, CONTROL_WIRE, self.ctrl_prio(), msg as u32, hdr);
        // The artifact sends every packet ECN-capable (r2p2-udp.cc, `sendmsg`); its loops read them all.
        if self.loops_see_control {
            p.with_ect()
        } else {
            p
        }
    }

    fn peer(&mut self, i: u32) -> &mut Peer {
        let (r, sf, nf) = (&self.rules, self.sender_floor, self.net_floor);
        self.peers[i as usize].get_or_insert_with(|| {
            // Buckets start at their maximum and alpha at `alpha_init`. A peer's state
            // lives as long as the host: idle periods neither reset nor age it.
            Box::new(Peer::new(r, sf, nf))
        })
    }

    /// Credit for a data packet of `payload` bytes, in the unit `credit_bytes` chooses.
    #[inline]
    fn credit_of(&self, payload: u32) -> u64 {
        if self.credit_wire {
            data_wire(payload) as u64
        } else {
            payload as u64
        }
    }

    /// Credit of packets `range` of a message of `size` bytes.
    fn credit_of_range(&self, size: u64, range: std::ops::Range<u32>) -> u64 {
        self.bytes_of_range(size, range, self.credit_wire)
    }

    /// Bytes of packets `range` of a message of `size` bytes: on the wire, or payload.
    fn bytes_of_range(&self, size: u64, range: std::ops::Range<u32>, wire: bool) -> u64 {
        let mss = self.info.mss;
        range.map(|i| payload_of(size, mss, i as u64)).map(|p| if wire { data_wire(p) } else { p } as u64).sum()
    }

    /// Lets credit pacing catch up after a late poll, by up to `t`: a driver
    /// woken late by its OS then sends the credits it owes in a short burst
    /// instead of losing that time for good. The simulator leaves it at 0.
    pub fn with_credit_catch_up(mut self, t: Time) -> Sird {
        self.credit_catch_up = t;
        self
    }

    // ------- driver hooks (unused by the simulator; the UDP driver bounds its state with them) -------

    /// Drops the receive state of `msg` (its sender gave up, or a newer copy of it
    /// was already delivered), returning the credit still outstanding for it to B
    /// and to the sender's bucket. Returns whether the message was known.
    pub fn abort_inbound(&mut self, msg: MsgId) -> bool {
        let Some((_, m)) = self.inbound.remove(msg) else {
            return false;
        };
        let mss = self.info.mss;
        let from = if self.account_unsched { 0 } else { m.sched_from };
        let owed: u64 = (from..m.next_grant.max(m.sched_from))
            .filter(|&i| !m.reasm.has(i as u64))
            .map(|i| self.credit_of(payload_of(m.reasm.size(), mss, i as u64)))
            .sum();
        self.b_used -= owed;
        self.peer(m.src).sb -= owed;
        true
    }

    /// Forgets that `msg` was delivered (the driver keeps its own bounded
    /// duplicate filter), so the completed set does not grow without end.
    pub fn forget_completed(&mut self, msg: MsgId) {
        self.completed.remove(&msg);
    }

    /// Drops the send state of `msg` (delivered, or given up), releasing the
    /// credit granted for packets it will now never send.
    pub fn abort_outbound(&mut self, msg: MsgId) -> bool {
        let Some((_, m)) = self.outbound.remove(msg) else {
            return false;
        };
        let mut unused = self.credit_of_range(m.size, m.next_sched..m.granted_upto);
        if self.csn_counts_unsched {
            unused += self.credit_of_range(m.size, m.next_unsched..m.unsched_end);
        }
        self.accumulated -= unused;
        self.active_out -= m.active as u32;
        true
    }
}

impl Transport for Sird {
    type Header = SirdHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let n_pkts = packets_for(msg.size, self.info.mss) as u32;
        let mut unsched_end = self.unscheduled_packets(msg.size);
        if self.unsch_capped && unsched_end > 0 {
            unsched_end = self.capped_prefix(msg.dst, msg.size, unsched_end);
        }
        let mut m = OutMsg {
            id: msg.id,
            dst: msg.dst,
            size: msg.size,
            n_pkts,
            unsched_end,
            next_unsched: 0,
            granted_upto: unsched_end,
            next_sched: unsched_end,
            resend: Vec::new(),
            sent_bytes: 0,
            ready: false,
            // With `csn_counts_waiting`, also a message whose scheduled part waits for credit.
            active: unsched_end > 0 || (self.csn_counts_waiting && n_pkts > 0),
            last_credit: cx.now,
        };
        self.active_out += m.active as u32;
        if self.csn_counts_unsched {
            // The prefix is credit the sender gives itself (the artifact's send_data).
            self.accumulated += self.credit_of_range(msg.size, 0..unsched_end);
        }
        if unsched_end < n_pkts {
            let req = SirdHeader::CreditReq { msg: msg.id, size: msg.size, sched_from: unsched_end };
            let p = self.control_packet(msg.dst, msg.id, req);
            self.control.push_back(p);
        }
        m.ready = m.sendable();
        let (id, ready) = (m.id, m.ready);
        let slot = self.outbound.insert(id, m);
        if ready {
            self.ready.push((slot, id));
        }
        cx.set_timer(cx.now + self.timeout, TIMER_TX | msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<SirdHeader>) {
        match pkt.hdr {
            SirdHeader::Data { msg, size, index, scheduled, csn } => {
                self.on_data(cx, pkt.src, msg, size, index, scheduled, csn, pkt.ce())
            }
            SirdHeader::CreditReq { msg, size, sched_from } => {
                self.control_seen(pkt);
                self.inbound_entry(cx, msg, pkt.src, size);
                self.learn_sched_from(msg, sched_from);
            }
            SirdHeader::Credit { msg, index } => {
                self.control_seen(pkt);
                self.on_credit(cx, msg, index)
            }
            SirdHeader::Resend { msg, index } => {
                self.control_seen(pkt);
                self.on_resend(cx, msg, index)
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let msg = token & !TIMER_KIND;
        match token & TIMER_KIND {
            TIMER_PACE => self.pace_timer = false,
            TIMER_RX => self.on_rx_timeout(cx, msg),
            TIMER_TX => self.on_tx_timeout(cx, msg),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<SirdHeader>> {
        if let Some(p) = self.control.pop_front() {
            return Some(p);
        }
        if let Some(p) = self.poll_credit(cx) {
            return Some(p);
        }
        self.poll_data()
    }
}
