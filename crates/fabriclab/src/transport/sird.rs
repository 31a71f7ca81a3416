//! SIRD: sender-informed receiver-driven transport (Prasopoulos, Bugnion,
//! Kogias; seed sird-paper-2024.txt §4, research note sird.md).
//!
//! Receivers schedule their downlink with CREDIT packets, capped by a global
//! bucket `B` and per-sender buckets `min(senderBkt_i, netBkt_i)`; the
//! per-sender buckets follow two DCTCP-style AIMD loops fed by the `csn` bit
//! (sender holds more than `SThr` credit) and by ECN (core queue above
//! `NThr`). Messages up to `UnschT` send their first BDP unscheduled.
//! The receiver side follows Algorithm 1, the sender side Algorithm 2.

use super::toolkit::{DctcpAlpha, IdMap, IdSet, Reassembly};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::config::{ParamDoc, ProtocolParams};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::LoadBalancing;
use crate::net::Packet;
use fabriclab_engine::error::{check_positive, check_range, ConfigError, Validate};
use fabriclab_engine::{from_us, serialization_time, Time};
use serde::{Deserialize, Serialize};

/// Which packets use the optional high-priority lane (seed §4.6, §5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorityLane {
    None,
    Control,
    ControlAndUnscheduled,
}

/// `[protocol.sird]`, in the paper's units (multiples of BDP). Defaults: SIRD Table 2.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SirdParams {
    /// B: global credit bucket (total outstanding credit per receiver).
    pub b_bdp: f64,
    /// UnschT: messages up to this size send their first BDP without credit.
    pub unsch_t_bdp: f64,
    /// SThr: accumulated-credit threshold above which senders set csn. `inf` disables the loop.
    pub sthr_bdp: f64,
    /// NThr: switch ECN marking threshold.
    pub nthr_bdp: f64,
    /// Largest per-sender bucket.
    pub max_sender_bucket_bdp: f64,
    /// EWMA gain of both AIMD loops (DCTCP's g).
    pub g: f64,
    /// Share of the sender uplink scheduled round-robin across receivers; the rest is SRPT.
    pub sender_fair_share: f64,
    /// Pace credits at the downlink rate of the data they allow.
    pub credit_pacing: bool,
    pub priority_lane: PriorityLane,
    /// Loss-recovery timeout (receiver RESEND, sender CREDITREQ retry).
    pub timeout_us: f64,
}

impl Default for SirdParams {
    fn default() -> Self {
        SirdParams {
            b_bdp: 1.5,
            unsch_t_bdp: 1.0,
            sthr_bdp: 0.5,
            nthr_bdp: 1.25,
            max_sender_bucket_bdp: 1.0,
            g: 1.0 / 16.0,
            sender_fair_share: 0.5,
            credit_pacing: true,
            priority_lane: PriorityLane::ControlAndUnscheduled,
            timeout_us: 100.0,
        }
    }
}

impl Validate for SirdParams {
    fn validate(&self) -> Result<(), ConfigError> {
        check_positive("protocol.sird.b_bdp", self.b_bdp)?;
        check_range("protocol.sird.unsch_t_bdp", self.unsch_t_bdp, 0.0, 1e6)?;
        if self.sthr_bdp.is_nan() || self.sthr_bdp < 0.0 {
            return Err(ConfigError::value("protocol.sird.sthr_bdp", self.sthr_bdp, "a number >= 0 or inf"));
        }
        check_positive("protocol.sird.nthr_bdp", self.nthr_bdp)?;
        check_positive("protocol.sird.max_sender_bucket_bdp", self.max_sender_bucket_bdp)?;
        check_range("protocol.sird.g", self.g, 1e-6, 1.0)?;
        check_range("protocol.sird.sender_fair_share", self.sender_fair_share, 0.0, 1.0)?;
        check_positive("protocol.sird.timeout_us", self.timeout_us)
    }
}

impl ProtocolParams for SirdParams {
    type Host = Sird;
    const PAPER: &'static str = "SIRD: sender-informed receiver-driven transport (Prasopoulos, Bugnion, Kogias, 2024)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Spray;

    fn ecn_threshold_bdp(&self) -> Option<f64> {
        Some(self.nthr_bdp)
    }

    fn host(&self, info: &HostInfo) -> Sird {
        Sird::new(self, info)
    }

    fn docs() -> Vec<ParamDoc> {
        let d = SirdParams::default();
        let t2 = "SIRD Table 2";
        vec![
            ParamDoc {
                key: "b_bdp",
                default: d.b_bdp.to_string(),
                meaning: "B, global credit bucket (x BDP)",
                source: t2,
            },
            ParamDoc {
                key: "unsch_t_bdp",
                default: d.unsch_t_bdp.to_string(),
                meaning: "UnschT, largest message with an unscheduled BDP prefix (x BDP)",
                source: t2,
            },
            ParamDoc {
                key: "sthr_bdp",
                default: d.sthr_bdp.to_string(),
                meaning: "SThr, sender accumulated-credit threshold for csn (x BDP; inf = off)",
                source: t2,
            },
            ParamDoc {
                key: "nthr_bdp",
                default: d.nthr_bdp.to_string(),
                meaning: "NThr, switch ECN threshold (x BDP)",
                source: t2,
            },
            ParamDoc {
                key: "max_sender_bucket_bdp",
                default: d.max_sender_bucket_bdp.to_string(),
                meaning: "largest per-sender bucket (x BDP)",
                source: "SIRD §4.2",
            },
            ParamDoc {
                key: "g",
                default: d.g.to_string(),
                meaning: "EWMA gain of the AIMD loops",
                source: "DCTCP's g = 1/16 (SIRD §4.3 uses DCTCP's AIMD; value not stated)",
            },
            ParamDoc {
                key: "sender_fair_share",
                default: d.sender_fair_share.to_string(),
                meaning: "uplink share scheduled round-robin across receivers",
                source: "SIRD §5.4",
            },
            ParamDoc {
                key: "credit_pacing",
                default: d.credit_pacing.to_string(),
                meaning: "pace credits at the downlink data rate",
                source: "SIRD §4.5",
            },
            ParamDoc {
                key: "priority_lane",
                default: "\"control_and_unscheduled\"".into(),
                meaning: "none | control | control_and_unscheduled",
                source: t2,
            },
            ParamDoc {
                key: "timeout_us",
                default: d.timeout_us.to_string(),
                meaning: "loss-recovery timeout",
                source: "not stated in SIRD (Homa-style timeouts, §4.6); our choice",
            },
        ]
    }
}

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

/// One DCTCP-style AIMD loop on a bucket size (SIRD §4.3).
#[derive(Clone, Debug)]
struct BucketLoop {
    size: f64,
    est: DctcpAlpha,
}

impl BucketLoop {
    /// Observes a data packet; once per bucket-worth of data, cuts the bucket by
    /// alpha/2 if anything was marked, else grows it by one MSS.
    fn on_data(&mut self, bytes: u32, marked: bool, mss: f64, max: f64) {
        self.est.observe(bytes as u64, marked);
        if self.est.window_bytes() as f64 >= self.size {
            self.size = if self.est.end_window() {
                (self.size * (1.0 - self.est.alpha / 2.0)).max(mss)
            } else {
                (self.size + mss).min(max)
            };
        }
    }
}

/// Receiver-side state per sender i.
#[derive(Clone, Debug)]
struct Peer {
    /// sb_i: outstanding credit given to this sender.
    sb: u64,
    sender_bkt: BucketLoop,
    net_bkt: BucketLoop,
}

struct InMsg {
    id: MsgId,
    src: u32,
    reasm: Reassembly,
    n_pkts: u32,
    sched_from: u32,
    /// Next packet index to credit.
    next_grant: u32,
    progress_at: Time,
}

struct OutMsg {
    id: MsgId,
    dst: u32,
    size: u64,
    n_pkts: u32,
    /// Packets 0..unsched_end go without credit.
    unsched_end: u32,
    next_unsched: u32,
    /// Credited packets are sched_from..granted_upto; sent up to next_sched.
    granted_upto: u32,
    next_sched: u32,
    resend: Vec<u32>,
    sent_bytes: u64,
    ready: bool,
    last_credit: Time,
}

impl OutMsg {
    fn sendable(&self) -> bool {
        self.next_unsched < self.unsched_end || self.next_sched < self.granted_upto || !self.resend.is_empty()
    }
    fn remaining(&self) -> u64 {
        self.size - self.sent_bytes
    }
    fn all_sent(&self) -> bool {
        self.next_unsched == self.unsched_end && self.next_sched == self.n_pkts && self.resend.is_empty()
    }
}

pub struct Sird {
    info: HostInfo,
    // parameters in bytes / picoseconds
    b: u64,
    unsch_t: u64,
    unsch_pkts: u32,
    sthr: f64,
    max_bkt: f64,
    fair_share: f64,
    pacing: bool,
    lane: PriorityLane,
    timeout: Time,
    g: f64,
    // receiver (Algorithm 1)
    b_used: u64,
    peers: Vec<Option<Box<Peer>>>,
    inbound: IdMap<MsgId, InMsg>,
    /// Messages already delivered, so late duplicates do not resurrect them.
    completed: IdSet<MsgId>,
    /// Inbound messages that may still need credit (lazily cleaned).
    grantable: Vec<MsgId>,
    next_credit_at: Time,
    /// How far credit pacing may fall behind `now` and catch up (0 in the
    /// simulator, whose polls are never late; see [`Sird::with_credit_catch_up`]).
    credit_catch_up: Time,
    pace_timer: bool,
    // sender (Algorithm 2)
    outbound: IdMap<MsgId, OutMsg>,
    ready: Vec<MsgId>,
    /// sum_r c_r: credit held for all receivers, bytes.
    accumulated: u64,
    fair_bytes: u64,
    srpt_bytes: u64,
    rr_next: u32,
    control: std::collections::VecDeque<Packet<SirdHeader>>,
}

impl Sird {
    pub fn new(p: &SirdParams, info: &HostInfo) -> Sird {
        let bdp = info.bdp_bytes as f64;
        let unsch_pkts = packets_for(info.bdp_bytes, info.mss) as u32;
        Sird {
            b: (p.b_bdp * bdp).round() as u64,
            unsch_t: (p.unsch_t_bdp * bdp).round() as u64,
            unsch_pkts,
            sthr: p.sthr_bdp * bdp,
            max_bkt: p.max_sender_bucket_bdp * bdp,
            fair_share: p.sender_fair_share,
            pacing: p.credit_pacing,
            lane: p.priority_lane,
            timeout: from_us(p.timeout_us).max(1),
            g: p.g,
            b_used: 0,
            peers: (0..info.n_hosts).map(|_| None).collect(),
            inbound: IdMap::default(),
            completed: IdSet::default(),
            grantable: Vec::new(),
            next_credit_at: 0,
            credit_catch_up: 0,
            pace_timer: false,
            outbound: IdMap::default(),
            ready: Vec::new(),
            accumulated: 0,
            fair_bytes: 0,
            srpt_bytes: 0,
            rr_next: 0,
            control: Default::default(),
            info: info.clone(),
        }
    }

    /// Packets of a message of `size` sent unscheduled: the BDP prefix, rounded up to
    /// whole packets, for messages up to UnschT; none above.
    pub fn unscheduled_packets(&self, size: u64) -> u32 {
        if size <= self.unsch_t {
            (packets_for(size, self.info.mss) as u32).min(self.unsch_pkts)
        } else {
            0
        }
    }

    fn ctrl_prio(&self) -> u8 {
        if self.lane == PriorityLane::None {
            LOW
        } else {
            HIGH
        }
    }

    fn control_packet(&self, dst: u32, msg: MsgId, hdr: SirdHeader) -> Packet<SirdHeader> {
        Packet::new(self.info.id, dst, CONTROL_WIRE, self.ctrl_prio(), msg as u32, hdr)
    }

    fn peer(&mut self, i: u32) -> &mut Peer {
        let (max, g) = (self.max_bkt, self.g);
        self.peers[i as usize].get_or_insert_with(|| {
            // Buckets start at their maximum; alpha starts at 1 as in Linux DCTCP.
            let lp = || BucketLoop { size: max, est: DctcpAlpha::new(g, 1.0) };
            Box::new(Peer { sb: 0, sender_bkt: lp(), net_bkt: lp() })
        })
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
        let Some(m) = self.inbound.remove(&msg) else {
            return false;
        };
        let mss = self.info.mss;
        let owed: u64 = (m.sched_from..m.next_grant)
            .filter(|&i| !m.reasm.has(i as u64))
            .map(|i| payload_of(m.reasm.size(), mss, i as u64) as u64)
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
        let Some(m) = self.outbound.remove(&msg) else {
            return false;
        };
        let mss = self.info.mss;
        let unused: u64 = (m.next_sched..m.granted_upto).map(|i| payload_of(m.size, mss, i as u64) as u64).sum();
        self.accumulated -= unused;
        true
    }

    // ---------------- receiver ----------------

    fn inbound_entry(&mut self, cx: &mut Cx, msg: MsgId, src: u32, size: u64) -> bool {
        if self.inbound.contains_key(&msg) || self.completed.contains(&msg) {
            return false;
        }
        let n_pkts = packets_for(size, self.info.mss) as u32;
        let sched_from = self.unscheduled_packets(size);
        self.inbound.insert(
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
            self.grantable.push(msg);
        }
        cx.set_timer(cx.now + self.timeout, TIMER_RX | msg);
        true
    }

    fn on_data(
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
        let known = self.inbound.contains_key(&msg);
        if !known && !self.inbound_entry(cx, msg, src, size) {
            return;
        }
        let Some(m) = self.inbound.get_mut(&msg) else {
            return;
        };
        if !m.reasm.insert(index as u64, payload) {
            return; // duplicate: its credit was already returned
        }
        m.progress_at = cx.now;
        let complete = m.reasm.is_complete();
        cx.deliver(msg, payload);
        // Algorithm 1, onDataPacket: return the credit, run both AIMD loops.
        if scheduled {
            self.b_used -= payload as u64;
        }
        let (mssf, max) = (mss as f64, self.max_bkt);
        let peer = self.peer(src);
        if scheduled {
            peer.sb -= payload as u64;
        }
        peer.sender_bkt.on_data(payload, csn, mssf, max);
        peer.net_bkt.on_data(payload, ce, mssf, max);
        if complete {
            self.inbound.remove(&msg);
            self.completed.insert(msg);
            cx.complete(msg);
        }
    }

    /// Algorithm 1, sendCredit: the grantable message (SRPT: fewest bytes left to
    /// credit) whose sender bucket and the global bucket both have room.
    fn next_credit(&mut self) -> Option<(MsgId, u32, u32, u32)> {
        let mss = self.info.mss;
        let mut best: Option<(u64, MsgId)> = None;
        let mut i = 0;
        while i < self.grantable.len() {
            let id = self.grantable[i];
            let Some(m) = self.inbound.get(&id).filter(|m| m.next_grant < m.n_pkts) else {
                self.grantable.swap_remove(i);
                continue;
            };
            i += 1;
            let size = m.reasm.size();
            let c = payload_of(size, mss, m.next_grant as u64) as u64;
            if self.b_used + c > self.b {
                continue;
            }
            if let Some(p) = self.peers[m.src as usize].as_deref() {
                let cap = p.sender_bkt.size.min(p.net_bkt.size);
                if (p.sb + c) as f64 > cap {
                    continue;
                }
            }
            let rem = size - (m.next_grant as u64 * mss as u64).min(size);
            if best.is_none_or(|(r, bid)| (rem, id) < (r, bid)) {
                best = Some((rem, id));
            }
        }
        let (_, id) = best?;
        let m = self.inbound.get_mut(&id).expect("chosen");
        let index = m.next_grant;
        m.next_grant += 1;
        let c = payload_of(m.reasm.size(), mss, index as u64);
        Some((id, m.src, index, c))
    }

    fn poll_credit(&mut self, cx: &mut Cx) -> Option<Packet<SirdHeader>> {
        if self.grantable.is_empty() {
            return None;
        }
        if self.pacing && cx.now < self.next_credit_at {
            if !self.pace_timer {
                self.pace_timer = true;
                cx.set_timer(self.next_credit_at, TIMER_PACE);
            }
            return None;
        }
        let (msg, src, index, c) = self.next_credit()?;
        self.b_used += c as u64;
        let peer = self.peer(src);
        peer.sb += c as u64;
        if self.pacing {
            // The data this credit allows occupies the downlink for this long.
            let from = self.next_credit_at.max(cx.now.saturating_sub(self.credit_catch_up));
            self.next_credit_at = from + serialization_time(data_wire(c) as u64, self.info.link_rate_bps);
        }
        Some(self.control_packet(src, msg, SirdHeader::Credit { msg, index }))
    }

    fn on_rx_timeout(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.timeout;
        let Some(m) = self.inbound.get_mut(&msg) else {
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

    // ---------------- sender ----------------

    fn on_credit(&mut self, cx: &mut Cx, msg: MsgId, index: u32) {
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        m.last_credit = cx.now;
        if index >= m.granted_upto {
            let from = m.granted_upto.max(m.next_sched);
            for i in from..=index {
                self.accumulated += payload_of(m.size, self.info.mss, i as u64) as u64;
            }
            m.granted_upto = index + 1;
        }
        if !m.ready && m.sendable() {
            m.ready = true;
            self.ready.push(msg);
        }
    }

    fn on_resend(&mut self, cx: &mut Cx, msg: MsgId, index: u32) {
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        m.last_credit = cx.now;
        let sent = if index < m.unsched_end { index < m.next_unsched } else { index < m.next_sched };
        if sent && !m.resend.contains(&index) {
            m.resend.push(index);
        }
        if !m.ready && m.sendable() {
            m.ready = true;
            self.ready.push(msg);
        }
    }

    fn on_tx_timeout(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.timeout;
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        if m.all_sent() {
            // Linger for late RESENDs, then forget the message.
            if cx.now >= m.last_credit + 4 * timeout {
                self.outbound.remove(&msg);
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
        let next = if never_credited { self.outbound[&msg].last_credit + timeout } else { cx.now + timeout };
        cx.set_timer(next.max(cx.now + 1), TIMER_TX | msg);
    }

    /// Algorithm 2, poll: picks the message to send from, alternating between a
    /// round-robin turn across receivers and an SRPT turn so that the fair
    /// share of the uplink is `sender_fair_share`.
    fn poll_data(&mut self) -> Option<Packet<SirdHeader>> {
        let f = self.fair_share;
        let fair_turn = f > 0.0 && (f >= 1.0 || self.fair_bytes as f64 * (1.0 - f) <= self.srpt_bytes as f64 * f);
        let n = self.info.n_hosts;
        // One pass: drop entries that can no longer send, and pick the best.
        let mut best: Option<((u64, u64, MsgId), MsgId)> = None;
        let mut i = 0;
        while i < self.ready.len() {
            let id = self.ready[i];
            let Some(m) = self.outbound.get_mut(&id) else {
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
                best = Some((key, id));
            }
        }
        let (_, id) = best?;
        let csn = self.accumulated as f64 >= self.sthr;
        let mss = self.info.mss;
        let lane = self.lane;
        let m = self.outbound.get_mut(&id).expect("ready");
        // Retransmissions first, then the unscheduled prefix, then credited packets.
        let (index, scheduled, uses_credit) = if let Some(i) = m.resend.pop() {
            (i, i >= m.unsched_end, false)
        } else if m.next_unsched < m.unsched_end {
            m.next_unsched += 1;
            (m.next_unsched - 1, false, false)
        } else {
            m.next_sched += 1;
            (m.next_sched - 1, true, true)
        };
        let payload = payload_of(m.size, mss, index as u64);
        if uses_credit {
            self.accumulated -= payload as u64;
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

impl Transport for Sird {
    type Header = SirdHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let n_pkts = packets_for(msg.size, self.info.mss) as u32;
        let unsched_end = self.unscheduled_packets(msg.size);
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
            last_credit: cx.now,
        };
        if unsched_end < n_pkts {
            let req = SirdHeader::CreditReq { msg: msg.id, size: msg.size, sched_from: unsched_end };
            let p = self.control_packet(msg.dst, msg.id, req);
            self.control.push_back(p);
        }
        if m.sendable() {
            m.ready = true;
            self.ready.push(m.id);
        }
        self.outbound.insert(m.id, m);
        cx.set_timer(cx.now + self.timeout, TIMER_TX | msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<SirdHeader>) {
        match pkt.hdr {
            SirdHeader::Data { msg, size, index, scheduled, csn } => {
                self.on_data(cx, pkt.src, msg, size, index, scheduled, csn, pkt.ce())
            }
            SirdHeader::CreditReq { msg, size, .. } => {
                self.inbound_entry(cx, msg, pkt.src, size);
            }
            SirdHeader::Credit { msg, index } => self.on_credit(cx, msg, index),
            SirdHeader::Resend { msg, index } => self.on_resend(cx, msg, index),
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
