//! Homa (Montazeri, Li, Alizadeh, Ousterhout, "Homa: a receiver-driven
//! low-latency transport protocol using network priorities", SIGCOMM 2018) as
//! the SIRD paper evaluates it (seed sird-paper-2024.txt §5.1, Table 2: "as in
//! the Homa paper at 100 Gbps, 8 priority levels, incl. its priority split"),
//! following the authors' published simulator (PlatformLab/HomaSimulation,
//! `HomaTransport.cc`, `PriorityResolver.cc`, `homaTransportConfig.ini`).
//! Like that simulator, and therefore like SIRD's ns-2 port of it, there is no
//! incast optimisation.
//!
//! - **Unscheduled prefix**: every message sends its first RTTbytes (whole
//!   packets) at once, at line rate; the first DATA packet doubles as the
//!   request, so there is no separate handshake.
//! - **Grants** (receiver-driven SRPT with controlled overcommitment): the
//!   receiver grants to at most `k` messages at a time, those with the fewest
//!   bytes left to grant, at most one per sender (the simulator schedules
//!   senders by their best message). A granted message is kept at RTTbytes of
//!   granted-but-not-received data, so each DATA packet that arrives releases
//!   one GRANT. A fully granted message leaves the schedule and the next one
//!   moves up.
//! - **Priorities** (Homa §3.4): of the `P` classes, the unscheduled ones get a
//!   share proportional to the workload's unscheduled bytes (at least one
//!   class each for unscheduled and scheduled); cutoffs on message size give
//!   each unscheduled class an equal share of unscheduled bytes, shorter
//!   messages higher. Scheduled packets use the lowest classes: among the `n`
//!   messages being granted, the one with rank `r` (0 = fewest bytes left) gets
//!   class `P - min(n, S) + r`, so with few messages only the lowest classes are
//!   used. GRANTs carry that class; control packets travel in class 0.
//! - **Sender**: control packets first, then data in SRPT order (fewest bytes
//!   left to send first; the simulator's `SRBF` scheme).
//! - **Loss** (Homa §3.7): a receiver that sees no progress on a message for
//!   `resend_timeout_us` sends RESENDs for the expected packets it lacks; a
//!   RESEND also authorises its range, so a lost GRANT is recovered too. Under
//!   SRPT a preempted message's granted packets may wait for milliseconds in a
//!   low-priority queue, so while DATA of the message's class or a higher one
//!   keeps arriving the receiver waits `resend_busy_timeout_us` instead. A
//!   sender ignores RESENDs for packets it has not sent yet (it is busy with
//!   shorter messages and will send them; the paper's BUSY reply, without the
//!   packet). Messages are one-way here (no RPC response that would
//!   acknowledge a request), so the receiver ACKs each completed message and a
//!   sender that hears nothing for `sender_timeout_us` probes with NEED_ACK
//!   (as Linux Homa does); a receiver that never saw the message then asks
//!   for its unscheduled packets.
//!
//! Choices and deviations are listed in [`HomaParams::docs`] and
//! docs/protocols/homa.md.

use super::aeolus::{self, FirstRtt};
use super::toolkit::{IdMap, IdSet, Reassembly, SortedSet};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::LoadBalancing;
use crate::net::{Packet, UNSCHEDULED};
use crate::transport::params::{ParamDoc, ProtocolParams};
use crate::workload::SizeDist;
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_BUFFER_BYTES, MAX_MULTIPLE};
use fabriclab_engine::{from_us, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Largest number of priority classes a port may have (`network.priorities`).
const MAX_PRIORITIES: u32 = 8;

/// `[protocol.homa]`. Defaults: the Homa paper and its simulator's
/// configuration, at the SIRD fabric's 100 Gbps (RTTbytes = BDP = 100 KB).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HomaParams {
    /// RTTbytes: the unscheduled prefix of every message, and the granted but
    /// not yet received data kept per granted message.
    pub rtt_bytes_bdp: f64,
    /// k, the degree of overcommitment: messages granted at once. 0 = the
    /// number of scheduled priority classes.
    pub overcommitment: u32,
    /// Classes for unscheduled packets. 0 = from the workload (Homa §3.4).
    pub unsched_prio_levels: u32,
    /// Explicit unscheduled cutoffs (message sizes, bytes, increasing); empty =
    /// derived from the workload's size distribution.
    pub unsched_cutoffs_bytes: Vec<u64>,
    /// Receiver: no progress on a message expecting data, and no arrival in
    /// its priority class or above, for this long -> RESEND.
    pub resend_timeout_us: f64,
    /// Receiver: no progress on a message expecting data for this long, even
    /// while its class keeps arriving -> RESEND.
    pub resend_busy_timeout_us: f64,
    /// Sender: nothing heard from the receiver for this long -> NEED_ACK probe.
    pub sender_timeout_us: f64,
}

impl Default for HomaParams {
    fn default() -> Self {
        HomaParams {
            rtt_bytes_bdp: 1.0,
            overcommitment: 0,
            unsched_prio_levels: 0,
            unsched_cutoffs_bytes: Vec::new(),
            resend_timeout_us: 1000.0,
            resend_busy_timeout_us: 10_000.0,
            sender_timeout_us: 2000.0,
        }
    }
}

impl Validate for HomaParams {
    /// The rules between keys; each key's own range is in [`HomaParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        let c = &self.unsched_cutoffs_bytes;
        let key = "protocol.homa.unsched_cutoffs_bytes";
        if c.len() >= MAX_PRIORITIES as usize {
            return Err(ConfigError::value(key, format!("{c:?}"), "at most 6 cutoffs (7 unscheduled classes)"));
        }
        if c.windows(2).any(|w| w[0] >= w[1]) {
            return Err(ConfigError::value(key, format!("{c:?}"), "strictly increasing positive sizes in bytes"));
        }
        if !c.is_empty() && self.unsched_prio_levels != 0 && self.unsched_prio_levels as usize != c.len() + 1 {
            return Err(ConfigError::value(
                "protocol.homa.unsched_prio_levels",
                self.unsched_prio_levels,
                &format!("0 or {} (one more than the {} unsched_cutoffs_bytes given)", c.len() + 1, c.len()),
            ));
        }
        if self.resend_busy_timeout_us < self.resend_timeout_us {
            return Err(ConfigError::value(
                "protocol.homa.resend_busy_timeout_us",
                self.resend_busy_timeout_us,
                &format!("a number >= resend_timeout_us ({})", self.resend_timeout_us),
            ));
        }
        Ok(())
    }
}

impl ProtocolParams for HomaParams {
    type Host = Homa;
    const PAPER: &'static str = "Homa: a receiver-driven low-latency transport protocol using network priorities \
                                 (Montazeri, Li, Alizadeh, Ousterhout, SIGCOMM 2018)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Spray;

    fn host(&self, info: &HostInfo) -> Homa {
        Homa::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        vec![
            ("rtt_bytes_bdp", Bound::new("a multiple", 1e-6, MAX_MULTIPLE)),
            ("overcommitment", Bound::new("a number of messages (0: one per scheduled class)", 0.0, 64.0)),
            (
                "unsched_prio_levels",
                Bound::new("a number of classes (0: from the workload)", 0.0, (MAX_PRIORITIES - 1) as f64),
            ),
            // Each cutoff; validate() checks that they increase.
            ("unsched_cutoffs_bytes", Bound::new("a message size in bytes", 0.0, MAX_BUFFER_BYTES as f64).above()),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = HomaParams::default();
        vec![
            ParamDoc {
                key: "rtt_bytes_bdp",
                default: d.rtt_bytes_bdp.to_string(),
                meaning: "RTTbytes (x BDP, rounded up to whole packets): unscheduled prefix of every message, and \
                          granted-but-not-received data kept per granted message",
                source: "Homa §3.2/§3.5; simulator rttBytes = maxOutstandingRecvBytes; SIRD Table 2 (BDP = 100 KB)",
            },
            ParamDoc {
                key: "overcommitment",
                default: "0 (auto)".into(),
                meaning: "k, messages granted at once (at most one per sender); 0 = the number of scheduled \
                          priority classes (7 on WKc with 8 classes)",
                source: "Homa §3.5; simulator numSendersToKeepGranted = adaptiveSchedPrioLevels in every \
                         workload config",
            },
            ParamDoc {
                key: "unsched_prio_levels",
                default: "0 (auto)".into(),
                meaning: "classes for unscheduled packets; 0 = round(P x unscheduled share of the workload's wire \
                          bytes), at least 1, leaving at least 1 scheduled; 1 when the workload has no size \
                          distribution (trace, incast)",
                source: "Homa §3.4; simulator prioResolverPrioLevels = prioLevels - adaptiveSchedPrioLevels; \
                         fallback: our choice",
            },
            ParamDoc {
                key: "unsched_cutoffs_bytes",
                default: "[] (auto)".into(),
                meaning: "message-size cutoffs between unscheduled classes; [] = each class carries an equal \
                          share of the workload's unscheduled bytes, shorter messages higher",
                source: "Homa §3.4; simulator STATIC_CBF_UNIFORM / EXPLICIT modes",
            },
            ParamDoc {
                key: "resend_timeout_us",
                default: d.resend_timeout_us.to_string(),
                meaning: "receiver: no progress on a message expecting data, and no DATA arrival in its class or \
                          a higher one, for this long -> RESEND its missing packets",
                source: "Homa §3.7 (value not given; the simulator has no loss recovery); our choice",
            },
            ParamDoc {
                key: "resend_busy_timeout_us",
                default: d.resend_busy_timeout_us.to_string(),
                meaning: "receiver: no progress on a message expecting data for this long, even while its class \
                          keeps arriving (its packets may be queued behind shorter messages) -> RESEND",
                source: "our choice: no spurious RESEND in lossless WKa/WKb/WKc runs up to 0.9 load",
            },
            ParamDoc {
                key: "sender_timeout_us",
                default: d.sender_timeout_us.to_string(),
                meaning: "sender: nothing heard from the receiver for this long while nothing is left to send -> \
                          NEED_ACK probe",
                source: "Homa §3.7, Linux Homa's NEED_ACK; our choice (2 x resend_timeout_us)",
            },
        ]
    }
}

#[derive(Clone, Copy, Debug)]
pub enum HomaHeader {
    /// Packet `index` of message `msg` (`size` bytes in all).
    Data { msg: MsgId, size: u64, index: u32 },
    /// The sender may send packets below `upto`, scheduled ones in class `prio`.
    Grant { msg: MsgId, upto: u32, prio: u8 },
    /// Send packets `from..to` of `msg` again (and consider them granted).
    Resend { msg: MsgId, from: u32, to: u32 },
    /// `msg` was received completely.
    Ack { msg: MsgId },
    /// The sender asks whether `msg` (`size` bytes) arrived.
    NeedAck { msg: MsgId, size: u64 },
    /// Homa(A): unscheduled packet `index` of `msg` arrived.
    UnschedAck { msg: MsgId, index: u32 },
    /// Homa(A): follows the unscheduled packets `0..upto` of `msg` (`size` bytes).
    Probe { msg: MsgId, size: u64, upto: u32 },
    /// Homa(A): the PROBE that followed packets `0..upto` arrived.
    ProbeAck { msg: MsgId, upto: u32 },
}

/// Class of control packets (GRANT, RESEND, ACK, NEED_ACK), as the simulator's grants.
const CONTROL_PRIO: u8 = 0;

const TIMER_RX: u64 = 1 << 62;
const TIMER_TX: u64 = 2 << 62;
const TIMER_KIND: u64 = 3 << 62;

/// Homa's priority split (§3.4) for `priorities` classes.
#[derive(Clone, Debug, PartialEq)]
pub struct PrioSplit {
    /// P, the classes per port.
    pub priorities: u8,
    /// Classes 0..unsched are unscheduled, unsched..P scheduled.
    pub unsched: u8,
    /// A message of size s uses unscheduled class i = the number of cutoffs below s.
    pub cutoffs: Vec<u64>,
}

impl PrioSplit {
    /// The split for `p` classes: explicit levels/cutoffs when given, else from
    /// `dist` (unscheduled prefix of `unsched_pkts` packets of `mss`), else one
    /// unscheduled class.
    pub fn new(p: u8, params: &HomaParams, dist: Option<&SizeDist>, unsched_pkts: u64, mss: u32) -> PrioSplit {
        if p <= 1 {
            return PrioSplit { priorities: 1, unsched: 1, cutoffs: Vec::new() };
        }
        let max_u = p - 1;
        let explicit = &params.unsched_cutoffs_bytes;
        if !explicit.is_empty() {
            let cutoffs: Vec<u64> = explicit.iter().copied().take(max_u as usize - 1).collect();
            return PrioSplit { priorities: p, unsched: cutoffs.len() as u8 + 1, cutoffs };
        }
        let Some(dist) = dist else {
            let u = (params.unsched_prio_levels.max(1) as u8).min(max_u);
            return PrioSplit { priorities: p, unsched: u, cutoffs: Vec::new() };
        };
        // Unscheduled and total wire bytes per message size, weighted by probability.
        let (sizes, cdf) = (dist.sizes(), dist.probs());
        let mut weights = Vec::with_capacity(sizes.len());
        let (mut unsched_sum, mut total_sum, mut prev) = (0.0, 0.0, 0.0);
        for (&s, &c) in sizes.iter().zip(cdf) {
            let pr = c - prev;
            prev = c;
            let (u, w) = unsched_and_total_wire(s, unsched_pkts, mss);
            weights.push(pr * u as f64);
            unsched_sum += pr * u as f64;
            total_sum += pr * w as f64;
        }
        let u = if params.unsched_prio_levels > 0 {
            (params.unsched_prio_levels as u8).min(max_u)
        } else {
            ((p as f64 * unsched_sum / total_sum).round() as u8).clamp(1, max_u)
        };
        // Cutoff i (1..u) is the first size at which the cumulative share of
        // unscheduled bytes reaches i/u (duplicates dropped, as the simulator does).
        let mut cutoffs: Vec<u64> = Vec::new();
        let mut cum = 0.0;
        let mut next = 1;
        for (&s, &w) in sizes.iter().zip(&weights) {
            cum += w / unsched_sum;
            while next < u && cum + 1e-9 >= next as f64 / u as f64 {
                if cutoffs.last() != Some(&s) && s < dist.max() {
                    cutoffs.push(s);
                }
                next += 1;
            }
        }
        PrioSplit { priorities: p, unsched: u, cutoffs }
    }

    /// Scheduled classes, S = P - unsched (0 when P = 1).
    pub fn scheduled(&self) -> u8 {
        self.priorities - self.unsched.min(self.priorities)
    }

    /// Class of the unscheduled packets of a message of `size` bytes.
    pub fn unsched_prio(&self, size: u64) -> u8 {
        self.cutoffs.partition_point(|&c| c < size) as u8
    }

    /// Class for the scheduled packets of the message of rank `rank` (0 = fewest
    /// bytes left to grant) among `n` messages being granted: the lowest classes.
    pub fn sched_prio(&self, rank: usize, n: usize) -> u8 {
        let s = self.scheduled() as usize;
        if s == 0 {
            return 0;
        }
        let p = self.priorities as usize;
        (p - n.min(s) + rank).min(p - 1) as u8
    }
}

/// (unscheduled, total) wire bytes of a message of `size` bytes.
fn unsched_and_total_wire(size: u64, unsched_pkts: u64, mss: u32) -> (u64, u64) {
    let n = packets_for(size, mss);
    let full = data_wire(mss) as u64;
    let last = data_wire(payload_of(size, mss, n - 1)) as u64;
    let total = (n - 1) * full + last;
    let unsched = if n <= unsched_pkts { total } else { unsched_pkts * full };
    (unsched, total)
}

/// Receiver-side state of an inbound message.
struct InMsg {
    src: u32,
    size: u64,
    n_pkts: u32,
    /// Packets below this are expected: the unscheduled prefix and every grant.
    granted: u32,
    reasm: Reassembly,
    /// Lowest-priority class its expected packets were sent in.
    class: u8,
    /// Last new packet, grant or RESEND: the RESEND timers count from here.
    last_activity: Time,
    /// Homa(A): unscheduled packets lost (counted when the PROBE arrived); the
    /// sender resends each with a grant, so that many more are granted.
    extra: u32,
    probed: bool,
}

impl InMsg {
    /// Bytes to grant in all: the message, plus a packet per lost unscheduled one.
    fn total_bytes(&self, mss: u32) -> u64 {
        self.size + self.extra as u64 * mss as u64
    }

    fn granted_bytes(&self, mss: u32) -> u64 {
        (self.granted as u64 * mss as u64).min(self.total_bytes(mss))
    }

    fn left_to_grant(&self, mss: u32) -> u64 {
        self.total_bytes(mss) - self.granted_bytes(mss)
    }
}

/// Grant-schedule key: SRPT on bytes left to grant, then size, then id (=
/// creation order), as the simulator's `CompareBytesToGrant`. Carries the
/// sender so that one message per sender can be picked without a lookup.
type GrantKey = (u64, u64, MsgId, u32);

/// Sender-side state of an outbound message.
struct OutMsg {
    dst: u32,
    size: u64,
    n_pkts: u32,
    unsched_end: u32,
    unsched_prio: u8,
    /// Class the receiver asked for in its latest GRANT.
    sched_prio: u8,
    /// Packets below `next` have been sent once; below `granted` may be sent.
    next: u32,
    granted: u32,
    /// Ranges to send again (RESEND), as [from, to).
    resend: Vec<(u32, u32)>,
    /// Payload not yet sent once: the SRPT key.
    bytes_left: u64,
    in_ready: bool,
    /// Last packet sent or GRANT/RESEND heard: the NEED_ACK timer counts from here.
    last_activity: Time,
    /// Homa(A): the unscheduled packets' fates; lost ones go again on grants.
    first_rtt: Option<FirstRtt>,
    /// Homa(A): grants spent on lost unscheduled packets.
    rtx_used: u32,
    /// Largest grant accepted: the message, plus its unscheduled packets under Aeolus.
    grant_cap: u32,
}

impl OutMsg {
    /// A RESEND range, or a grant not yet used and something to use it on
    /// (each grant lets one packet go: a lost unscheduled one first, else the next).
    fn sendable(&self) -> bool {
        let free = self.next + self.rtx_used < self.granted;
        (free && (self.next < self.n_pkts || self.first_rtt.as_ref().is_some_and(FirstRtt::has_lost)))
            || !self.resend.is_empty()
    }
}

pub struct Homa {
    info: HostInfo,
    split: PrioSplit,
    /// k.
    overcommit: usize,
    /// RTTbytes in whole packets, and in bytes.
    rtt_pkts: u32,
    rtt_bytes: u64,
    resend_timeout: Time,
    resend_busy_timeout: Time,
    sender_timeout: Time,
    /// Homa(A): unscheduled packets are flagged for selective dropping,
    /// acknowledged, probed and recovered on grants.
    aeolus: bool,
    // receiver
    /// Last arrival of a DATA packet in each class.
    class_arrival: [Time; MAX_PRIORITIES as usize],
    inbound: IdMap<MsgId, InMsg>,
    /// Messages already delivered, so that late duplicates do not reopen them.
    completed: IdSet<MsgId>,
    /// Inbound messages with bytes left to grant, in SRPT order.
    grantable: SortedSet<GrantKey>,
    /// Scratch for the grant pass (no allocation once warm).
    picked: Vec<GrantKey>,
    // sender
    outbound: IdMap<MsgId, OutMsg>,
    /// Outbound messages with a packet to send, in SRPT order (bytes left, id).
    ready: SortedSet<(u64, MsgId)>,
    control: VecDeque<Packet<HomaHeader>>,
}

impl Homa {
    pub fn new(p: &HomaParams, info: &HostInfo) -> Homa {
        let rtt_pkts = packets_for((p.rtt_bytes_bdp * info.bdp_bytes as f64).ceil().max(1.0) as u64, info.mss);
        let split = PrioSplit::new(info.priorities, p, info.size_dist.as_deref(), rtt_pkts, info.mss);
        let overcommit = if p.overcommitment > 0 { p.overcommitment } else { split.scheduled().max(1) as u32 };
        Homa {
            split,
            overcommit: overcommit as usize,
            rtt_pkts: rtt_pkts as u32,
            rtt_bytes: rtt_pkts * info.mss as u64,
            resend_timeout: from_us(p.resend_timeout_us).max(1),
            resend_busy_timeout: from_us(p.resend_busy_timeout_us).max(1),
            class_arrival: [0; MAX_PRIORITIES as usize],
            sender_timeout: from_us(p.sender_timeout_us).max(1),
            aeolus: false,
            inbound: IdMap::default(),
            completed: IdSet::default(),
            grantable: SortedSet::default(),
            picked: Vec::with_capacity(overcommit as usize),
            outbound: IdMap::default(),
            ready: SortedSet::default(),
            control: VecDeque::new(),
            info: info.clone(),
        }
    }

    /// Homa(A): Homa with Aeolus's first RTT ([`super::aeolus`]).
    pub fn with_aeolus(p: &HomaParams, info: &HostInfo) -> Homa {
        Homa { aeolus: true, ..Homa::new(p, info) }
    }

    /// The priority split this host uses.
    pub fn split(&self) -> &PrioSplit {
        &self.split
    }

    /// k, the degree of overcommitment.
    pub fn overcommitment(&self) -> usize {
        self.overcommit
    }

    fn control_packet(&mut self, dst: u32, msg: MsgId, hdr: HomaHeader) {
        let p = Packet::new(self.info.id, dst, CONTROL_WIRE, CONTROL_PRIO, msg as u32, hdr);
        self.control.push_back(p);
    }

    // ---------------------------------------------------------------- receiver

    /// Creates the receiver's state for `msg`; returns false if it is already
    /// known or was completed.
    fn inbound_entry(&mut self, cx: &mut Cx, msg: MsgId, src: u32, size: u64) -> bool {
        if self.inbound.contains_key(&msg) || self.completed.contains(&msg) {
            return false;
        }
        let n_pkts = packets_for(size, self.info.mss) as u32;
        let granted = n_pkts.min(self.rtt_pkts);
        let m = InMsg {
            src,
            size,
            n_pkts,
            granted,
            reasm: Reassembly::new(size, self.info.mss),
            class: self.split.unsched_prio(size),
            last_activity: cx.now,
            extra: 0,
            probed: false,
        };
        let left = m.left_to_grant(self.info.mss);
        if left > 0 {
            self.grantable.insert((left, size, msg, src));
        }
        self.inbound.insert(msg, m);
        cx.set_timer(cx.now + self.resend_timeout, TIMER_RX | msg);
        true
    }

    fn on_data(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, index: u32, prio: u8, flags: u8) {
        let mss = self.info.mss;
        if self.aeolus && flags & UNSCHEDULED != 0 {
            self.control_packet(src, msg, HomaHeader::UnschedAck { msg, index });
        }
        self.class_arrival[(prio as usize).min(MAX_PRIORITIES as usize - 1)] = cx.now;
        if !self.inbound.contains_key(&msg) && !self.inbound_entry(cx, msg, src, size) {
            return; // a late duplicate of a completed message
        }
        let m = self.inbound.get_mut(&msg).expect("just ensured");
        let payload = payload_of(size, mss, index as u64);
        if !m.reasm.insert(index as u64, payload) {
            return;
        }
        m.last_activity = cx.now;
        cx.deliver(msg, payload);
        if m.reasm.is_complete() {
            // Homa(A): packets the PROBE counted as lost may turn up late (the
            // PROBE overtook them), so a complete message can still have extra
            // grants to give; it leaves the grant schedule here.
            let left = m.left_to_grant(mss);
            if left > 0 {
                self.grantable.remove(&(left, size, msg, m.src));
            }
            self.inbound.remove(&msg);
            self.completed.insert(msg);
            cx.complete(msg);
            self.control_packet(src, msg, HomaHeader::Ack { msg });
        }
        self.grant(cx);
    }

    /// Homa-Tr (nanoTransport, Arslan thesis §3.3.4): a switch trimmed packet
    /// `index` to its header; ask for it again at once, as NDP's NACK, instead
    /// of waiting for the RESEND timeout. (Plain Homa never sees trimmed packets.)
    fn on_trimmed(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, index: u32) {
        if self.completed.contains(&msg) {
            return;
        }
        self.inbound_entry(cx, msg, src, size);
        if let Some(m) = self.inbound.get_mut(&msg) {
            m.last_activity = cx.now;
        }
        self.control_packet(src, msg, HomaHeader::Resend { msg, from: index, to: index + 1 });
    }

    /// The grant pass: picks the k most preferred grantable messages (one per
    /// sender) and tops each up to RTTbytes granted but not received, telling
    /// the sender the class its rank earns. Repeats if a message became fully
    /// granted, since the next one then moves into the k.
    fn grant(&mut self, cx: &mut Cx) {
        let mss = self.info.mss;
        loop {
            self.picked.clear();
            for &key in &self.grantable {
                if self.picked.len() == self.overcommit {
                    break;
                }
                if self.picked.iter().all(|p| p.3 != key.3) {
                    self.picked.push(key);
                }
            }
            let n = self.picked.len();
            let mut left_schedule = false;
            for rank in 0..n {
                let key = self.picked[rank];
                let m = self.inbound.get_mut(&key.2).expect("grantable messages are inbound");
                // Smallest grant that restores RTTbytes in flight (Homa(A): a
                // dropped unscheduled packet no longer is, though its grant was spent).
                let target = m.reasm.received_bytes() + m.extra as u64 * mss as u64 + self.rtt_bytes;
                let cap = m.n_pkts + m.extra;
                let upto = (target.div_ceil(mss as u64).min(cap as u64) as u32).max(m.granted);
                if upto == m.granted {
                    continue;
                }
                m.granted = upto;
                m.last_activity = cx.now;
                let left = m.left_to_grant(mss);
                if left > 0 {
                    self.grantable.replace(&key, (left, key.1, key.2, key.3));
                } else {
                    self.grantable.remove(&key);
                    left_schedule = true;
                }
                let prio = self.split.sched_prio(rank, n);
                m.class = m.class.max(prio);
                self.control_packet(key.3, key.2, HomaHeader::Grant { msg: key.2, upto, prio });
            }
            if !left_schedule {
                return;
            }
        }
    }

    fn on_rx_timeout(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.resend_timeout;
        let Some(m) = self.inbound.get_mut(&msg) else {
            return;
        };
        // Packets still queued behind others at our downlink are not lost: while
        // packets of the message's class or above keep arriving, wait for the
        // longer timeout. (Under SRPT a preempted message's granted packets can
        // wait for milliseconds in a low-priority queue.)
        let busy_until = self.class_arrival[..=m.class as usize].iter().copied().max().unwrap_or(0);
        let due = (m.last_activity.max(busy_until) + timeout).min(m.last_activity + self.resend_busy_timeout);
        if cx.now < due {
            cx.set_timer(due, TIMER_RX | msg);
            return;
        }
        // No progress: ask for every expected packet not received.
        m.last_activity = cx.now;
        cx.set_timer(cx.now + timeout, TIMER_RX | msg);
        // (Homa(A) may grant past the last packet: the extra grants pay for resends.)
        let (src, granted) = (m.src, m.granted.min(m.n_pkts));
        let mut ranges = [(0u32, 0u32); 16];
        let mut n = 0;
        let mut i = 0;
        while i < granted && n < ranges.len() {
            if m.reasm.has(i as u64) {
                i += 1;
                continue;
            }
            let from = i;
            while i < granted && !m.reasm.has(i as u64) {
                i += 1;
            }
            ranges[n] = (from, i);
            n += 1;
        }
        for &(from, to) in &ranges[..n] {
            self.control_packet(src, msg, HomaHeader::Resend { msg, from, to });
        }
    }

    fn on_need_ack(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64) {
        if self.completed.contains(&msg) {
            self.control_packet(src, msg, HomaHeader::Ack { msg });
        } else if self.inbound_entry(cx, msg, src, size) {
            // Never heard of it: its unscheduled packets were all lost.
            let to = self.inbound[&msg].granted;
            self.control_packet(src, msg, HomaHeader::Resend { msg, from: 0, to });
        }
        // Known and incomplete: the receiver's own RESEND timer takes care of it.
    }

    // ------------------------------------------------------------------ sender

    fn make_ready(&mut self, msg: MsgId) {
        if let Some(m) = self.outbound.get_mut(&msg) {
            if !m.in_ready && m.sendable() {
                m.in_ready = true;
                self.ready.insert((m.bytes_left, msg));
            }
        }
    }

    fn on_grant(&mut self, cx: &mut Cx, msg: MsgId, upto: u32, prio: u8) {
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        m.last_activity = cx.now;
        m.sched_prio = prio;
        m.granted = m.granted.max(upto.min(m.grant_cap));
        self.make_ready(msg);
    }

    /// Homa(A) receiver: the PROBE follows the message's unscheduled packets,
    /// so the ones still missing were dropped; grant one more packet for each.
    fn on_probe(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, upto: u32) {
        self.control_packet(src, msg, HomaHeader::ProbeAck { msg, upto });
        if self.completed.contains(&msg) {
            return;
        }
        self.inbound_entry(cx, msg, src, size);
        let mss = self.info.mss;
        let m = self.inbound.get_mut(&msg).expect("just ensured");
        if m.probed {
            return;
        }
        m.probed = true;
        let lost = aeolus::missing_before(&m.reasm, upto);
        if lost == 0 {
            return;
        }
        let old = m.left_to_grant(mss);
        m.extra = lost;
        let new = m.left_to_grant(mss);
        // (A message fully granted before the probe is not in the set.)
        self.grantable.remove(&(old, size, msg, src));
        if new > 0 {
            self.grantable.insert((new, size, msg, src));
        }
        self.grant(cx);
    }

    /// Homa(A) sender: an unscheduled packet's ACK or the PROBE's ACK.
    fn on_first_rtt_news(&mut self, msg: MsgId, ack: Option<u32>, probe_upto: Option<u32>) {
        let Some(f) = self.outbound.get_mut(&msg).and_then(|m| m.first_rtt.as_mut()) else {
            return;
        };
        if let Some(i) = ack {
            f.on_ack(i);
        }
        if let Some(upto) = probe_upto {
            f.on_probe_ack(upto);
        }
        self.make_ready(msg);
    }

    fn on_resend(&mut self, cx: &mut Cx, msg: MsgId, from: u32, to: u32) {
        let Some(m) = self.outbound.get_mut(&msg) else {
            return;
        };
        m.last_activity = cx.now;
        let to = to.min(m.n_pkts);
        // (Homa(A): past the grants already spent on lost unscheduled packets.)
        m.granted = m.granted.max(to + m.rtx_used);
        // Packets not sent yet will go in SRPT order anyway.
        let sent_to = to.min(m.next);
        if from < sent_to {
            m.resend.push((from, sent_to));
        }
        self.make_ready(msg);
    }

    fn on_tx_timeout(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.sender_timeout;
        let Some(m) = self.outbound.get_mut(&msg) else {
            return; // acknowledged
        };
        if m.in_ready {
            // Waiting behind shorter messages on our own uplink, not for the receiver.
            cx.set_timer(cx.now + timeout, TIMER_TX | msg);
        } else if cx.now < m.last_activity + timeout {
            cx.set_timer(m.last_activity + timeout, TIMER_TX | msg);
        } else {
            m.last_activity = cx.now;
            let (dst, size) = (m.dst, m.size);
            cx.set_timer(cx.now + timeout, TIMER_TX | msg);
            self.control_packet(dst, msg, HomaHeader::NeedAck { msg, size });
        }
    }

    /// The next DATA packet: from the message with the fewest bytes left to send.
    fn poll_data(&mut self, cx: &mut Cx) -> Option<Packet<HomaHeader>> {
        let &(left, id) = self.ready.first()?;
        let mss = self.info.mss;
        let m = self.outbound.get_mut(&id).expect("ready messages are outbound");
        // Aeolus resends on grants only, once the unscheduled burst is out.
        let lost = if m.resend.is_empty() && m.next >= m.unsched_end {
            m.first_rtt.as_mut().and_then(FirstRtt::pop_lost)
        } else {
            None
        };
        let (index, first_time) = if let Some(r) = m.resend.last_mut() {
            let i = r.0;
            r.0 += 1;
            if r.0 == r.1 {
                m.resend.pop();
            }
            (i, false)
        } else if let Some(i) = lost {
            // Aeolus: a lost unscheduled packet goes again on this grant, as scheduled data.
            m.rtx_used += 1;
            (i, false)
        } else {
            m.next += 1;
            (m.next - 1, true)
        };
        let payload = payload_of(m.size, mss, index as u64);
        if first_time {
            m.bytes_left -= payload as u64;
        }
        m.last_activity = cx.now;
        let prio = if index < m.unsched_end && lost.is_none() { m.unsched_prio } else { m.sched_prio };
        let (dst, size) = (m.dst, m.size);
        let mut flags = 0;
        if let Some(f) = m.first_rtt.as_mut().filter(|_| first_time && index < m.unsched_end) {
            // Aeolus: droppable, and followed by a PROBE in its class once the last is out.
            f.on_sent(index);
            flags = UNSCHEDULED;
            if f.all_sent() {
                let probe = HomaHeader::Probe { msg: id, size, upto: m.unsched_end };
                self.control.push_back(Packet::new(self.info.id, dst, CONTROL_WIRE, prio, id as u32, probe));
            }
        }
        if m.bytes_left != left || !m.sendable() {
            if m.sendable() {
                self.ready.replace(&(left, id), (m.bytes_left, id));
            } else {
                self.ready.remove(&(left, id));
                m.in_ready = false;
            }
        }
        let hdr = HomaHeader::Data { msg: id, size, index };
        Some(Packet::new(self.info.id, dst, data_wire(payload), prio, id as u32, hdr).with_flags(flags))
    }
}

impl Transport for Homa {
    type Header = HomaHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let n_pkts = packets_for(msg.size, self.info.mss) as u32;
        let unsched_end = n_pkts.min(self.rtt_pkts);
        let m = OutMsg {
            dst: msg.dst,
            size: msg.size,
            n_pkts,
            unsched_end,
            unsched_prio: self.split.unsched_prio(msg.size),
            sched_prio: self.split.priorities - 1,
            next: 0,
            granted: unsched_end,
            resend: Vec::new(),
            bytes_left: msg.size,
            in_ready: false,
            last_activity: cx.now,
            first_rtt: self.aeolus.then(|| FirstRtt::new(unsched_end)),
            rtx_used: 0,
            grant_cap: if self.aeolus { n_pkts + unsched_end } else { n_pkts },
        };
        self.outbound.insert(msg.id, m);
        self.make_ready(msg.id);
        cx.set_timer(cx.now + self.sender_timeout, TIMER_TX | msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<HomaHeader>) {
        match pkt.hdr {
            HomaHeader::Data { msg, size, index } if pkt.trimmed() => self.on_trimmed(cx, pkt.src, msg, size, index),
            HomaHeader::Data { msg, size, index } => self.on_data(cx, pkt.src, msg, size, index, pkt.prio, pkt.flags),
            HomaHeader::Grant { msg, upto, prio } => self.on_grant(cx, msg, upto, prio),
            HomaHeader::Resend { msg, from, to } => self.on_resend(cx, msg, from, to),
            HomaHeader::Ack { msg } => {
                if let Some(m) = self.outbound.remove(&msg) {
                    if m.in_ready {
                        self.ready.remove(&(m.bytes_left, msg));
                    }
                }
            }
            HomaHeader::NeedAck { msg, size } => self.on_need_ack(cx, pkt.src, msg, size),
            HomaHeader::UnschedAck { msg, index } => self.on_first_rtt_news(msg, Some(index), None),
            HomaHeader::Probe { msg, size, upto } => self.on_probe(cx, pkt.src, msg, size, upto),
            HomaHeader::ProbeAck { msg, upto } => self.on_first_rtt_news(msg, None, Some(upto)),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let msg = token & !TIMER_KIND;
        match token & TIMER_KIND {
            TIMER_RX => self.on_rx_timeout(cx, msg),
            TIMER_TX => self.on_tx_timeout(cx, msg),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<HomaHeader>> {
        if let Some(p) = self.control.pop_front() {
            return Some(p);
        }
        self.poll_data(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::params::assert_bad_keys_named;
    use crate::workload::BuiltinDist;

    fn split_for(dist: Option<&SizeDist>, p: u8) -> PrioSplit {
        PrioSplit::new(p, &HomaParams::default(), dist, 69, 1460)
    }

    #[test]
    fn heavy_tailed_workload_gets_one_unscheduled_class() {
        // WKc (Homa W5): the simulator's config gives 7 scheduled classes, k = 7.
        let wkc = SizeDist::builtin(BuiltinDist::Wkc);
        let s = split_for(Some(&wkc), 8);
        assert_eq!((s.unsched, s.scheduled()), (1, 7));
        assert!(s.cutoffs.is_empty());
        assert_eq!(s.unsched_prio(1), 0);
        assert_eq!(s.unsched_prio(u64::MAX), 0);
    }

    #[test]
    fn cutoffs_split_unscheduled_bytes_equally() {
        for which in [BuiltinDist::Wka, BuiltinDist::Wkb] {
            let d = SizeDist::builtin(which);
            let s = split_for(Some(&d), 8);
            assert!(s.unsched >= 1 && s.scheduled() >= 1, "{which:?}: {s:?}");
            // Classes 0..=i carry at least (i + 1)/U of the unscheduled bytes
            // (the CDF is a step function, so the split is not exact).
            let mut per_class = vec![0.0; s.unsched as usize];
            let mut prev = 0.0;
            for (&size, &c) in d.sizes().iter().zip(d.probs()) {
                per_class[s.unsched_prio(size) as usize] +=
                    (c - prev) * unsched_and_total_wire(size, 69, 1460).0 as f64;
                prev = c;
            }
            let total: f64 = per_class.iter().sum();
            eprintln!("{which:?}: U = {}, cutoffs {:?}, shares {:?}", s.unsched, s.cutoffs, per_class);
            assert!(s.cutoffs.windows(2).all(|w| w[0] < w[1]));
            let mut cum = 0.0;
            for (i, w) in per_class.iter().enumerate() {
                cum += w / total;
                assert!(cum >= (i + 1) as f64 / s.unsched as f64 - 1e-6, "{which:?}: classes 0..={i} carry {cum}");
                assert!((w / total - 1.0 / s.unsched as f64).abs() < 0.1, "{which:?}: class {i} carries {}", w / total);
            }
        }
    }

    #[test]
    fn smaller_messages_get_higher_unscheduled_classes() {
        let p = HomaParams { unsched_cutoffs_bytes: vec![1000, 10_000], ..Default::default() };
        let s = PrioSplit::new(8, &p, None, 69, 1460);
        assert_eq!((s.unsched, s.scheduled()), (3, 5));
        assert_eq!([1, 1000, 1001, 10_000, 10_001].map(|x| s.unsched_prio(x)), [0, 0, 1, 1, 2]);
    }

    #[test]
    fn scheduled_messages_use_the_lowest_classes() {
        let s = split_for(None, 8);
        assert_eq!((s.unsched, s.scheduled()), (1, 7));
        assert_eq!(s.sched_prio(0, 1), 7);
        assert_eq!([0, 1, 2].map(|r| s.sched_prio(r, 3)), [5, 6, 7]);
        assert_eq!((0..7).map(|r| s.sched_prio(r, 7)).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5, 6, 7]);
        // More messages than classes: the extra ones share the lowest.
        assert_eq!(s.sched_prio(9, 10), 7);
        let one = split_for(None, 1);
        assert_eq!((one.unsched_prio(5), one.sched_prio(0, 3)), (0, 0));
    }

    /// Homa(A), exactly: a 5-packet message, all unscheduled; packets 2 and 4
    /// are dropped. The PROBE makes the receiver grant two more packets, and
    /// the sender, told by the ACKs and the PROBE's ACK, spends them on 2 and
    /// 4, scheduled and not droppable.
    #[test]
    fn aeolus_resends_exactly_the_dropped_unscheduled_packets_on_grants() {
        use crate::transport::AppEvent;
        use fabriclab_engine::{stream, Stream};
        let p = HomaParams { rtt_bytes_bdp: 0.073, ..Default::default() }; // 7300 B = 5 packets
        let (mut tx, mut rx) = (
            Homa::with_aeolus(&p, &HostInfo::at_100gbps(0, 2, 8, 7_500_000)),
            Homa::with_aeolus(&p, &HostInfo::at_100gbps(1, 2, 8, 7_500_000)),
        );
        let (mut rng, mut timers, mut app) = (stream(1, Stream::Host, 0), Vec::new(), Vec::<AppEvent>::new());
        let mut cx = Cx::new(0, &mut rng, &mut timers, &mut app);
        tx.start_message(&mut cx, &Message { id: 9, src: 0, dst: 1, size: 5 * 1460, start: 0 });
        let sent: Vec<_> = std::iter::from_fn(|| tx.poll_transmit(&mut cx)).collect();
        assert_eq!(sent.len(), 6, "{sent:?}");
        assert!(sent[..5].iter().all(|p| p.flags == UNSCHEDULED && p.prio == 0));
        assert!(matches!(sent[5].hdr, HomaHeader::Probe { msg: 9, upto: 5, .. }) && sent[5].flags == 0);
        for i in [0, 1, 3, 5] {
            rx.on_packet(&mut cx, &sent[i]);
        }
        let back: Vec<_> = std::iter::from_fn(|| rx.poll_transmit(&mut cx)).collect();
        let kinds: Vec<String> = back.iter().map(|p| format!("{:?}", p.hdr)).collect();
        assert_eq!(
            kinds,
            [
                "UnschedAck { msg: 9, index: 0 }",
                "UnschedAck { msg: 9, index: 1 }",
                "UnschedAck { msg: 9, index: 3 }",
                "ProbeAck { msg: 9, upto: 5 }",
                "Grant { msg: 9, upto: 7, prio: 7 }",
            ]
        );
        // Nothing goes before the news: the sender has no grant to spend.
        tx.on_packet(&mut cx, &back[4]);
        assert!(tx.poll_transmit(&mut cx).is_none());
        for p in &back[..4] {
            tx.on_packet(&mut cx, p);
        }
        let again: Vec<_> = std::iter::from_fn(|| tx.poll_transmit(&mut cx)).collect();
        let idx: Vec<(u32, u8, u8)> = again
            .iter()
            .map(|p| match p.hdr {
                HomaHeader::Data { index, .. } => (index, p.prio, p.flags),
                h => panic!("{h:?}"),
            })
            .collect();
        assert_eq!(idx, [(2, 7, 0), (4, 7, 0)]);
        for p in &again {
            rx.on_packet(&mut cx, p);
        }
        assert!(app.contains(&AppEvent::Completed { msg: 9 }));
    }

    /// Homa(A): the PROBE overtakes two unscheduled packets, so the receiver
    /// counts them as lost and owes two extra grants; with overcommitment 1 a
    /// shorter message from another sender holds the only slot, so the extras
    /// stay ungiven. The two packets arrive after all and the message completes;
    /// it must leave the grant schedule, or the next pass finds it without state
    /// (once a panic in a 40 ms WKb run with an 800 KB buffer).
    #[test]
    fn aeolus_message_completed_with_extra_grants_unspent_leaves_the_schedule() {
        use crate::transport::AppEvent;
        use fabriclab_engine::{stream, Stream};
        let p = HomaParams { rtt_bytes_bdp: 0.073, overcommitment: 1, ..Default::default() }; // 5 packets
        let info = |id| HostInfo::at_100gbps(id, 3, 8, 7_500_000);
        let (mut a, mut b, mut rx) =
            (Homa::with_aeolus(&p, &info(0)), Homa::with_aeolus(&p, &info(2)), Homa::with_aeolus(&p, &info(1)));
        let (mut rng, mut timers, mut app) = (stream(1, Stream::Host, 0), Vec::new(), Vec::<AppEvent>::new());
        let mut cx = Cx::new(0, &mut rng, &mut timers, &mut app);
        a.start_message(&mut cx, &Message { id: 9, src: 0, dst: 1, size: 10 * 1460, start: 0 });
        b.start_message(&mut cx, &Message { id: 11, src: 2, dst: 1, size: 7 * 1460, start: 0 });
        let from_a: Vec<_> = std::iter::from_fn(|| a.poll_transmit(&mut cx)).collect();
        let from_b: Vec<_> = std::iter::from_fn(|| b.poll_transmit(&mut cx)).collect();
        for i in [0, 1, 3, 5] {
            rx.on_packet(&mut cx, &from_a[i]); // 5 is the PROBE: 2 and 4 "lost"
        }
        rx.on_packet(&mut cx, &from_b[0]); // message 11: one packet left to grant, takes the slot
        for i in [2, 4] {
            rx.on_packet(&mut cx, &from_a[i]);
        }
        // Message 9 holds grants up to 10 of its 12 (10 packets + 2 extra).
        while let Some(p) = rx.poll_transmit(&mut cx) {
            if p.dst == 0 {
                a.on_packet(&mut cx, &p);
            }
        }
        let sched: Vec<_> = std::iter::from_fn(|| a.poll_transmit(&mut cx)).collect();
        assert_eq!(sched.len(), 5, "all five unscheduled packets were acknowledged: {sched:?}");
        for p in &sched {
            rx.on_packet(&mut cx, p);
        }
        assert!(rx.completed.contains(&9));
        assert!(rx.grantable.iter().all(|k| k.2 != 9), "{:?}", rx.grantable.iter().collect::<Vec<_>>());
        // Message 11's next packet frees the slot: the pass must not look for 9.
        rx.on_packet(&mut cx, &from_b[1]);
        assert!(rx.grantable.iter().all(|k| k.2 != 11));
    }

    #[test]
    fn bad_parameters_name_their_key() {
        assert_bad_keys_named(
            "homa",
            [
                (HomaParams { rtt_bytes_bdp: 0.0, ..Default::default() }, "rtt_bytes_bdp"),
                (HomaParams { overcommitment: 65, ..Default::default() }, "overcommitment"),
                (HomaParams { unsched_prio_levels: 8, ..Default::default() }, "unsched_prio_levels"),
                (HomaParams { unsched_cutoffs_bytes: vec![10, 5], ..Default::default() }, "unsched_cutoffs_bytes"),
                (HomaParams { unsched_cutoffs_bytes: vec![0, 5], ..Default::default() }, "unsched_cutoffs_bytes"),
                (
                    HomaParams { unsched_cutoffs_bytes: vec![10], unsched_prio_levels: 3, ..Default::default() },
                    "unsched_prio_levels",
                ),
                (HomaParams { resend_busy_timeout_us: 10.0, ..Default::default() }, "resend_busy_timeout_us"),
            ],
        );
    }
}
