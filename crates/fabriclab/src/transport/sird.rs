//! SIRD: sender-informed receiver-driven transport (Prasopoulos, Bugnion,
//! Kogias; seed sird-paper-2024.txt §4, research note sird.md).
//!
//! Receivers schedule their downlink with CREDIT packets, capped by a global
//! bucket `B` and per-sender buckets `min(senderBkt_i, netBkt_i)`; the
//! per-sender buckets follow two DCTCP-style AIMD loops fed by the `csn` bit
//! (sender holds more than `SThr` credit) and by ECN (core queue above
//! `NThr`). Messages up to `UnschT` send their first BDP unscheduled.
//! The receiver side follows Algorithm 1, the sender side Algorithm 2.

use super::toolkit::{IdMap, IdSet, Reassembly};
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

/// When the AIMD loops grow a bucket (docs/protocols/sird.md, "AIMD loops").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Increase {
    /// On every data packet, by one full packet squared over the bucket (the authors' simulator).
    PerPacket,
    /// By one full packet at the end of a window without marks (DCTCP's cwnd rule).
    PerWindow,
}

/// When the AIMD loops cut a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cut {
    /// On a marked packet, at most once per `cut_min_interval_windows` (the authors' simulator).
    OnMark,
    /// At the end of each window that saw a mark (DCTCP's cwnd rule).
    PerWindow,
}

/// The receiver's SRPT order among messages it credits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SrptKey {
    /// Fewest bytes still to arrive (the authors' simulator).
    RemainingToReceive,
    /// Fewest bytes still to credit.
    RemainingToCredit,
}

/// What a byte of credit (B, sb_i, the buckets, SThr) counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CreditBytes {
    /// Wire bytes of the data packet it allows (payload + headers + preamble and gap).
    Wire,
    /// Payload bytes only.
    Payload,
}

/// `[protocol.sird]`, in the paper's units (multiples of BDP). Defaults: SIRD Table 2,
/// else the authors' ns-2 simulator (docs/protocols/sird.md gives each source).
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
    /// Initial alpha of both AIMD loops.
    pub alpha_init: f64,
    /// Smallest senderBkt.
    pub sender_bucket_floor_bdp: f64,
    /// Smallest netBkt.
    pub net_bucket_floor_bdp: f64,
    /// Additive-increase rule of both loops.
    pub increase: Increase,
    /// Multiplicative-decrease rule of both loops.
    pub cut: Cut,
    /// With `cut = "on_mark"`: windows of packets between two cuts of one bucket.
    pub cut_min_interval_windows: f64,
    /// Senders set csn only while they have at least this many outbound messages in progress.
    pub csn_min_messages: u32,
    /// With `csn_counts_unsched`, the unscheduled prefix not yet sent counts as held credit for csn.
    pub csn_counts_unsched: bool,
    /// Receiver SRPT order.
    pub srpt_key: SrptKey,
    /// Unit of credit.
    pub credit_bytes: CreditBytes,
    /// Charge the unscheduled prefix to B and sb_i when the receiver learns of the message.
    pub account_unsched: bool,
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
            g: 0.08,
            alpha_init: 0.0,
            sender_bucket_floor_bdp: 0.1,
            net_bucket_floor_bdp: 0.03,
            increase: Increase::PerPacket,
            cut: Cut::OnMark,
            cut_min_interval_windows: 1.5,
            csn_min_messages: 2,
            csn_counts_unsched: true,
            srpt_key: SrptKey::RemainingToReceive,
            credit_bytes: CreditBytes::Wire,
            account_unsched: true,
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
        check_range("protocol.sird.alpha_init", self.alpha_init, 0.0, 1.0)?;
        let max = self.max_sender_bucket_bdp;
        check_range("protocol.sird.sender_bucket_floor_bdp", self.sender_bucket_floor_bdp, 1e-4, max)?;
        check_range("protocol.sird.net_bucket_floor_bdp", self.net_bucket_floor_bdp, 1e-4, max)?;
        check_range("protocol.sird.cut_min_interval_windows", self.cut_min_interval_windows, 0.0, 1e3)?;
        check_range("protocol.sird.csn_min_messages", self.csn_min_messages as f64, 0.0, 1e6)?;
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
                source: "SIRD Table 2 (DCTCP g) and the authors' simulator (r2p2_ce_new_weight)",
            },
            ParamDoc {
                key: "alpha_init",
                default: d.alpha_init.to_string(),
                meaning: "initial alpha of the AIMD loops",
                source: "authors' simulator (SenderState marked ratios start at 0)",
            },
            ParamDoc {
                key: "sender_bucket_floor_bdp",
                default: d.sender_bucket_floor_bdp.to_string(),
                meaning: "smallest senderBkt (x BDP)",
                source: "authors' simulator (r2p2_ecn_min_mul)",
            },
            ParamDoc {
                key: "net_bucket_floor_bdp",
                default: d.net_bucket_floor_bdp.to_string(),
                meaning: "smallest netBkt (x BDP)",
                source: "authors' simulator (r2p2_ecn_min_mul_nw)",
            },
            ParamDoc {
                key: "increase",
                default: "\"per_packet\"".into(),
                meaning: "per_packet (MSS^2/bucket each packet) | per_window (1 MSS per unmarked window)",
                source: "authors' simulator (update_nw_state, update_sn_state)",
            },
            ParamDoc {
                key: "cut",
                default: "\"on_mark\"".into(),
                meaning: "on_mark (marked packet, rate-limited) | per_window (end of a marked window)",
                source: "authors' simulator (update_nw_state, update_sn_state)",
            },
            ParamDoc {
                key: "cut_min_interval_windows",
                default: d.cut_min_interval_windows.to_string(),
                meaning: "with cut = on_mark: windows between two cuts of a bucket",
                source: "authors' simulator (update_nw_state, update_sn_state)",
            },
            ParamDoc {
                key: "csn_min_messages",
                default: d.csn_min_messages.to_string(),
                meaning: "senders set csn only with at least this many outbound messages",
                source: "authors' simulator (get_granted_bytes_queue_len)",
            },
            ParamDoc {
                key: "csn_counts_unsched",
                default: d.csn_counts_unsched.to_string(),
                meaning: "unsent unscheduled prefixes count as held credit for csn",
                source: "authors' simulator (send_data self-allocates credit)",
            },
            ParamDoc {
                key: "srpt_key",
                default: "\"remaining_to_receive\"".into(),
                meaning: "receiver SRPT order: remaining_to_receive | remaining_to_credit",
                source: "authors' simulator (send_grants_srpt_msg)",
            },
            ParamDoc {
                key: "credit_bytes",
                default: "\"wire\"".into(),
                meaning: "unit of B, buckets, SThr: wire | payload",
                source: "authors' simulator (send_credit_policy_common)",
            },
            ParamDoc {
                key: "account_unsched",
                default: d.account_unsched.to_string(),
                meaning: "charge unscheduled prefixes to B and sb_i",
                source: "authors' simulator (r2p2_elet_account_unsched = 1)",
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

/// The rules both AIMD loops follow (SIRD §4.3; docs/protocols/sird.md, "AIMD loops").
#[derive(Clone, Copy, Debug)]
struct LoopRules {
    increase: Increase,
    cut: Cut,
    g: f64,
    alpha_init: f64,
    cut_interval_windows: f64,
    /// Credit of one full-sized data packet.
    full: f64,
    /// Largest bucket.
    max: f64,
}

/// One DCTCP-style AIMD loop on a bucket size (SIRD §4.3), in credit bytes.
#[derive(Clone, Debug)]
struct BucketLoop {
    size: f64,
    floor: f64,
    /// DCTCP's alpha: EWMA of the marked fraction.
    alpha: f64,
    /// The current window: bytes and packets seen, and how many were marked.
    win_bytes: u64,
    win_marked_bytes: u64,
    win_pkts: u32,
    win_marked_pkts: u32,
    /// With `cut = on_mark`: packets that close the current window.
    win_target_pkts: u32,
    /// With `cut = on_mark`: packets since the last cut, and how many must pass before the next.
    since_cut_pkts: u32,
    next_cut_pkts: u32,
}

impl BucketLoop {
    fn new(r: &LoopRules, floor: f64) -> BucketLoop {
        BucketLoop {
            size: r.max,
            floor: floor.min(r.max),
            alpha: r.alpha_init,
            win_bytes: 0,
            win_marked_bytes: 0,
            win_pkts: 0,
            win_marked_pkts: 0,
            // The authors' simulator updates alpha after the first packet, then once per
            // window; the first cut may come after one bucket's worth of packets.
            win_target_pkts: 1,
            since_cut_pkts: 0,
            next_cut_pkts: (r.max / r.full) as u32,
        }
    }

    /// Observes a data packet of `credit` bytes; `combined` is min(senderBkt, netBkt)
    /// before it. Returns whether a window closed (then the caller sets the next
    /// window's length from the updated buckets, [`BucketLoop::set_window`]).
    fn on_data(&mut self, r: &LoopRules, credit: u64, marked: bool, combined: f64) -> bool {
        let mut closed = false;
        match r.cut {
            Cut::PerWindow => {
                // A window is this bucket's worth of bytes; alpha from the marked bytes.
                self.win_bytes += credit;
                self.win_marked_bytes += if marked { credit } else { 0 };
                if self.win_bytes as f64 >= self.size {
                    let f = self.win_marked_bytes as f64 / self.win_bytes as f64;
                    self.alpha = (1.0 - r.g) * self.alpha + r.g * f;
                    if self.win_marked_bytes > 0 {
                        self.size *= 1.0 - self.alpha / 2.0;
                    } else if r.increase == Increase::PerWindow {
                        self.size += r.full;
                    }
                    (self.win_bytes, self.win_marked_bytes) = (0, 0);
                    closed = true;
                }
            }
            Cut::OnMark => {
                // A window is the combined bucket's worth of full packets; alpha from
                // the marked packets. A marked packet cuts, at most once per interval.
                self.win_pkts += 1;
                self.win_marked_pkts += marked as u32;
                self.since_cut_pkts += 1;
                if self.win_pkts >= self.win_target_pkts {
                    let f = self.win_marked_pkts as f64 / self.win_pkts as f64;
                    self.alpha = (1.0 - r.g) * self.alpha + r.g * f;
                    if self.win_marked_pkts == 0 && r.increase == Increase::PerWindow {
                        self.size += r.full;
                    }
                    (self.win_pkts, self.win_marked_pkts) = (0, 0);
                    closed = true;
                }
                if marked && self.since_cut_pkts >= self.next_cut_pkts {
                    self.size -= self.size * self.alpha / 2.0;
                    self.since_cut_pkts = 0;
                    self.next_cut_pkts = (r.cut_interval_windows * combined / r.full) as u32;
                }
            }
        }
        if r.increase == Increase::PerPacket {
            // Additive increase spread over packets: one full packet per bucket's worth,
            // marked or not (the artifact's AI condition holds for every packet).
            self.size += r.full * r.full / combined;
        }
        self.size = self.size.clamp(self.floor, r.max);
        closed
    }

    /// The next window (with `cut = on_mark`): the combined bucket's worth of full packets.
    fn set_window(&mut self, r: &LoopRules, combined: f64) {
        self.win_target_pkts = ((combined / r.full) as u32).max(1);
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

impl Peer {
    /// min(senderBkt_i, netBkt_i): the cap on sb_i.
    fn cap(&self) -> f64 {
        self.sender_bkt.size.min(self.net_bkt.size)
    }

    /// Algorithm 1, onDataPacket: both loops see the packet (csn, CE).
    fn on_data(&mut self, r: &LoopRules, credit: u64, csn: bool, ce: bool) {
        let combined = self.cap();
        let s = self.sender_bkt.on_data(r, credit, csn, combined);
        let n = self.net_bkt.on_data(r, credit, ce, combined);
        let combined = self.cap();
        if s {
            self.sender_bkt.set_window(r, combined);
        }
        if n {
            self.net_bkt.set_window(r, combined);
        }
    }
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
    /// Counted in `active_out`: has an unscheduled prefix or credit, and unsent data.
    active: bool,
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
    fair_share: f64,
    pacing: bool,
    lane: PriorityLane,
    timeout: Time,
    rules: LoopRules,
    sender_floor: f64,
    net_floor: f64,
    csn_min_messages: u32,
    csn_counts_unsched: bool,
    srpt_key: SrptKey,
    credit_wire: bool,
    account_unsched: bool,
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
    /// sum_r c_r: credit held for all receivers, credit bytes (with
    /// `csn_counts_unsched`, also the unscheduled prefixes not yet sent).
    accumulated: u64,
    /// Outbound messages in progress (see `OutMsg::active`), for `csn_min_messages`.
    active_out: u32,
    fair_bytes: u64,
    srpt_bytes: u64,
    rr_next: u32,
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
            sthr: p.sthr_bdp * bdp,
            fair_share: p.sender_fair_share,
            pacing: p.credit_pacing,
            lane: p.priority_lane,
            timeout: from_us(p.timeout_us).max(1),
            rules,
            sender_floor: p.sender_bucket_floor_bdp * bdp,
            net_floor: p.net_bucket_floor_bdp * bdp,
            csn_min_messages: p.csn_min_messages,
            csn_counts_unsched: p.csn_counts_unsched,
            srpt_key: p.srpt_key,
            credit_wire,
            account_unsched: p.account_unsched,
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
            active_out: 0,
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
        let (r, sf, nf) = (&self.rules, self.sender_floor, self.net_floor);
        self.peers[i as usize].get_or_insert_with(|| {
            // Buckets start at their maximum and alpha at `alpha_init`. A peer's state
            // lives as long as the host: idle periods neither reset nor age it.
            Box::new(Peer { sb: 0, sender_bkt: BucketLoop::new(r, sf), net_bkt: BucketLoop::new(r, nf) })
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
        range.map(|i| self.credit_of(payload_of(size, self.info.mss, i as u64))).sum()
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
        let Some(m) = self.outbound.remove(&msg) else {
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
        if self.account_unsched && sched_from > 0 {
            // The unscheduled prefix holds B and sb_i until it arrives, as credit would.
            let u = self.credit_of_range(size, 0..sched_from);
            self.b_used += u;
            self.peer(src).sb += u;
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
        let credit = self.credit_of(payload);
        let returns = scheduled || self.account_unsched;
        if returns {
            self.b_used -= credit;
        }
        let rules = self.rules;
        let peer = self.peer(src);
        if returns {
            peer.sb -= credit;
        }
        peer.on_data(&rules, credit, csn, ce);
        if complete {
            self.inbound.remove(&msg);
            self.completed.insert(msg);
            cx.complete(msg);
        }
    }

    /// Algorithm 1, sendCredit: the grantable message (SRPT: fewest bytes left, see
    /// `srpt_key`) whose sender bucket and the global bucket both have room.
    /// Returns the message, its sender, the packet index, its payload and its credit.
    fn next_credit(&mut self) -> Option<(MsgId, u32, u32, u32, u64)> {
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
            let c = self.credit_of(payload_of(size, mss, m.next_grant as u64));
            if self.b_used + c > self.b {
                continue;
            }
            if let Some(p) = self.peers[m.src as usize].as_deref() {
                if (p.sb + c) as f64 > p.cap() {
                    continue;
                }
            }
            let rem = match self.srpt_key {
                SrptKey::RemainingToReceive => size - m.reasm.received_bytes(),
                SrptKey::RemainingToCredit => size - (m.next_grant as u64 * mss as u64).min(size),
            };
            if best.is_none_or(|(r, bid)| (rem, id) < (r, bid)) {
                best = Some((rem, id));
            }
        }
        let (_, id) = best?;
        let m = self.inbound.get_mut(&id).expect("chosen");
        let index = m.next_grant;
        m.next_grant += 1;
        let payload = payload_of(m.reasm.size(), mss, index as u64);
        let src = m.src;
        Some((id, src, index, payload, self.credit_of(payload)))
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
        let (msg, src, index, payload, c) = self.next_credit()?;
        self.b_used += c;
        let peer = self.peer(src);
        peer.sb += c;
        if self.pacing {
            // The data this credit allows occupies the downlink for this long.
            let from = self.next_credit_at.max(cx.now.saturating_sub(self.credit_catch_up));
            self.next_credit_at = from + serialization_time(data_wire(payload) as u64, self.info.link_rate_bps);
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
        // csn (Algorithm 2), suppressed while fewer than `csn_min_messages` are in progress.
        let csn = self.active_out >= self.csn_min_messages && self.accumulated as f64 >= self.sthr;
        let mss = self.info.mss;
        let lane = self.lane;
        let m = self.outbound.get_mut(&id).expect("ready");
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
            active: unsched_end > 0,
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

#[cfg(test)]
mod tests {
    //! The loop rules one at a time (docs/protocols/sird.md, "AIMD loops"), with the
    //! defaults of the authors' simulator: credit in wire bytes, a full packet = 1538.
    use super::*;
    use crate::transport::AppEvent;
    use fabriclab_engine::{stream, Stream, US};

    const FULL: f64 = 1538.0;

    fn rules() -> LoopRules {
        let info = HostInfo::at_100gbps(0, 4, 2, 8 * US);
        Sird::new(&SirdParams::default(), &info).rules
    }

    /// A loop at `size` whose alpha is `alpha` and stays so (no window closes).
    fn steady(r: &LoopRules, size: f64, alpha: f64, floor: f64) -> BucketLoop {
        let mut l = BucketLoop::new(r, floor);
        (l.size, l.alpha, l.win_target_pkts) = (size, alpha, u32::MAX);
        l
    }

    #[test]
    fn defaults_are_the_artifacts_loop() {
        let r = rules();
        assert_eq!((r.increase, r.cut, r.g, r.alpha_init), (Increase::PerPacket, Cut::OnMark, 0.08, 0.0));
        assert_eq!((r.full, r.max, r.cut_interval_windows), (FULL, 100_000.0, 1.5));
        let l = BucketLoop::new(&r, 10_000.0);
        // Bucket at its maximum; alpha updated after the first packet; first cut after
        // one bucket of full packets (100,000 / 1538 = 65).
        assert_eq!((l.size, l.win_target_pkts, l.next_cut_pkts), (100_000.0, 1, 65));
    }

    #[test]
    fn per_packet_increase_is_one_packet_per_bucket_of_packets() {
        let r = rules();
        let mut l = steady(&r, 50_000.0, 0.0, 10_000.0);
        l.on_data(&r, 1538, false, 50_000.0);
        assert_eq!(l.size, 50_000.0 + FULL * FULL / 50_000.0);
        // The step follows the combined bucket, not this loop's own.
        let mut l = steady(&r, 50_000.0, 0.0, 10_000.0);
        l.on_data(&r, 1538, false, 20_000.0);
        assert_eq!(l.size, 50_000.0 + FULL * FULL / 20_000.0);
        // A marked packet that may not cut still grows the bucket (as in the artifact).
        let mut l = steady(&r, 50_000.0, 0.5, 10_000.0);
        l.next_cut_pkts = 10;
        l.on_data(&r, 1538, true, 50_000.0);
        assert_eq!(l.size, 50_000.0 + FULL * FULL / 50_000.0);
        // A bucket's worth of unmarked packets adds one full packet, to within rounding.
        let mut l = steady(&r, 50_000.0, 0.0, 10_000.0);
        for _ in 0..(50_000.0 / FULL) as u32 {
            let c = l.size.min(100_000.0);
            l.on_data(&r, 1538, false, c);
        }
        assert!((l.size - 50_000.0 - FULL).abs() < 0.05 * FULL, "grew to {}", l.size);
    }

    #[test]
    fn cut_on_a_marked_packet_at_most_once_per_interval() {
        let r = rules();
        let mut l = steady(&r, 80_000.0, 0.5, 10_000.0);
        l.next_cut_pkts = 10;
        let ai = |s: f64| s + FULL * FULL / 80_000.0;
        // Unmarked packets never cut.
        for _ in 0..9 {
            let s = l.size;
            l.on_data(&r, 1538, false, 80_000.0);
            assert_eq!(l.size, ai(s));
        }
        // The tenth packet since the last cut is marked: cut by alpha/2, then the increase.
        let s = l.size;
        l.on_data(&r, 1538, true, 80_000.0);
        assert_eq!(l.size, ai(s * 0.75));
        // The next cut waits 1.5 windows of the combined bucket: 1.5 * 80,000 / 1538 = 78 packets.
        assert_eq!(l.next_cut_pkts, 78);
        for i in 1..78 {
            let s = l.size;
            l.on_data(&r, 1538, true, 80_000.0);
            assert_eq!(l.size, ai(s), "packet {i} after the cut");
        }
        let s = l.size;
        l.on_data(&r, 1538, true, 80_000.0);
        assert_eq!(l.size, ai(s * 0.75));
    }

    #[test]
    fn alpha_follows_marked_packets_once_per_window() {
        let r = rules();
        let mut l = BucketLoop::new(&r, 10_000.0);
        // First window: one packet, marked: alpha = 0.08.
        assert!(l.on_data(&r, 1538, true, 100_000.0));
        assert_eq!(l.alpha, 0.08);
        // Later windows: the combined bucket in full packets (here 30,000 / 1538 = 19).
        l.set_window(&r, 30_000.0);
        assert_eq!(l.win_target_pkts, 19);
        for i in 0..19 {
            let closed = l.on_data(&r, 1538, i % 2 == 0, 30_000.0);
            assert_eq!(closed, i == 18);
        }
        assert_eq!(l.alpha, 0.92 * 0.08 + 0.08 * (10.0 / 19.0));
    }

    #[test]
    fn floors_hold_each_bucket() {
        let r = rules();
        let (sf, nf) = (0.1 * 100_000.0, 0.03 * 100_000.0);
        for floor in [sf, nf] {
            let mut l = steady(&r, 100_000.0, 1.0, floor);
            for _ in 0..200 {
                l.next_cut_pkts = 0;
                l.on_data(&r, 1538, true, l.size);
            }
            // Each cut halves, each packet adds FULL^2/bucket: it settles just above the floor.
            assert!(l.size >= floor && l.size < floor + FULL * FULL / floor + 1.0, "floor {floor}: {}", l.size);
        }
    }

    #[test]
    fn old_per_window_rules_remain_reachable() {
        let p = SirdParams {
            increase: Increase::PerWindow,
            cut: Cut::PerWindow,
            credit_bytes: CreditBytes::Payload,
            alpha_init: 1.0,
            g: 1.0 / 16.0,
            ..SirdParams::default()
        };
        let r = Sird::new(&p, &HostInfo::at_100gbps(0, 4, 2, 8 * US)).rules;
        let mut l = BucketLoop::new(&r, 1460.0);
        // No change until a bucket's worth of bytes, then one MSS (capped at the max)
        // or a cut by alpha/2 if anything in the window was marked.
        l.size = 14_600.0;
        for _ in 0..9 {
            assert!(!l.on_data(&r, 1460, false, l.size));
        }
        assert!(l.on_data(&r, 1460, false, l.size));
        assert_eq!(l.size, 16_060.0);
        for i in 0..11 {
            l.on_data(&r, 1460, i == 0, l.size);
        }
        // alpha: 1 -> 15/16 after the unmarked window -> (15/16)^2 + (1/16)(1/11).
        let alpha = 15.0 / 16.0 * (15.0 / 16.0) + 1.0 / 16.0 / 11.0;
        assert_eq!(l.size, 16_060.0 * (1.0 - alpha / 2.0));
    }

    /// Drives one host by hand.
    struct Host {
        sird: Sird,
        rng: SimRng,
        timers: Vec<(Time, u64)>,
        app: Vec<AppEvent>,
    }

    use fabriclab_engine::SimRng;

    impl Host {
        fn new(id: u32, p: &SirdParams) -> Host {
            let info = HostInfo::at_100gbps(id, 4, 2, 8 * US);
            Host { sird: Sird::new(p, &info), rng: stream(1, Stream::Host, id as u64), timers: vec![], app: vec![] }
        }
        fn with<R>(&mut self, now: Time, f: impl FnOnce(&mut Sird, &mut Cx) -> R) -> R {
            let mut cx = Cx::new(now, &mut self.rng, &mut self.timers, &mut self.app);
            f(&mut self.sird, &mut cx)
        }
        fn start(&mut self, now: Time, id: MsgId, dst: u32, size: u64) {
            let m = Message { id, src: self.sird.info.id, dst, size, start: now };
            self.with(now, |s, cx| s.start_message(cx, &m));
        }
        fn recv(&mut self, now: Time, src: u32, hdr: SirdHeader, ce: bool) {
            let mut p = Packet::new(src, self.sird.info.id, 1538, LOW, 0, hdr).with_ect();
            if ce {
                p.ecn |= crate::net::ECN_CE;
            }
            self.with(now, |s, cx| s.on_packet(cx, &p));
        }
        fn poll(&mut self, now: Time) -> Option<Packet<SirdHeader>> {
            self.with(now, |s, cx| s.poll_transmit(cx))
        }
        /// The csn bit of the next DATA packet.
        fn next_csn(&mut self, now: Time) -> bool {
            loop {
                match self.poll(now).expect("something to send").hdr {
                    SirdHeader::Data { csn, .. } => return csn,
                    _ => continue,
                }
            }
        }
    }

    #[test]
    fn csn_is_suppressed_below_csn_min_messages() {
        let p = SirdParams::default();
        let mut h = Host::new(0, &p);
        // One fully scheduled message (above UnschT) to host 1, credited far beyond SThr.
        h.start(0, 1, 1, 1_000_000);
        for index in 0..60 {
            h.recv(US, 1, SirdHeader::Credit { msg: 1, index }, false);
        }
        assert!(h.sird.accumulated as f64 >= h.sird.sthr);
        assert_eq!(h.sird.active_out, 1);
        assert!(!h.next_csn(2 * US), "one message in progress: no csn");
        // A second message (with an unscheduled prefix) makes two: csn again.
        h.start(3 * US, 2, 2, 50_000);
        assert_eq!(h.sird.active_out, 2);
        assert!(h.next_csn(3 * US));
        // Today's rule: csn_min_messages = 0 marks with one message too.
        let mut h = Host::new(0, &SirdParams { csn_min_messages: 0, ..p });
        h.start(0, 1, 1, 1_000_000);
        for index in 0..60 {
            h.recv(US, 1, SirdHeader::Credit { msg: 1, index }, false);
        }
        assert!(h.next_csn(2 * US));
    }

    #[test]
    fn unscheduled_prefix_holds_b_and_the_sender_bucket_until_it_arrives() {
        let mut h = Host::new(1, &SirdParams::default());
        // A 50,000 B message is entirely unscheduled: 35 packets, 34 x 1538 + data_wire(360).
        let charge = 34 * 1538 + data_wire(50_000 - 34 * 1460) as u64;
        let data = |index| SirdHeader::Data { msg: 7, size: 50_000, index, scheduled: false, csn: false };
        h.recv(0, 0, data(0), false);
        assert_eq!(h.sird.b_used, charge - 1538);
        assert_eq!(h.sird.peers[0].as_ref().unwrap().sb, charge - 1538);
        for i in 1..35 {
            h.recv(i as Time * US, 0, data(i), false);
        }
        assert_eq!((h.sird.b_used, h.sird.peers[0].as_ref().unwrap().sb), (0, 0));
    }

    #[test]
    fn bucket_state_survives_idle_periods() {
        // The artifact keeps a sender's buckets and alpha for the host's lifetime (its
        // reset-after-idle rule is disabled): an idle gap changes nothing.
        let mut h = Host::new(1, &SirdParams::default());
        let data = |msg, index| SirdHeader::Data { msg, size: 1_000_000, index, scheduled: false, csn: true };
        for i in 0..600 {
            h.recv(i as Time * US / 10, 0, data(1, i), i % 3 == 0);
        }
        let before = h.sird.peers[0].clone().unwrap();
        assert!(before.sender_bkt.size < 90_000.0 && before.net_bkt.size < 100_000.0, "{before:?}");
        // 10 ms later a new message from the same sender: one more packet's worth of
        // loop arithmetic on the old state, not a fresh bucket.
        h.recv(10_000 * US, 0, SirdHeader::Data { msg: 2, size: 1460, index: 0, scheduled: false, csn: false }, false);
        let after = h.sird.peers[0].as_ref().unwrap();
        let combined = before.cap();
        let r = h.sird.rules;
        let mut expect = before.clone();
        expect.on_data(&r, 1538, false, false);
        assert_eq!(after.sender_bkt.size, expect.sender_bkt.size);
        assert_eq!(after.net_bkt.size, expect.net_bkt.size);
        assert!(after.sender_bkt.size < before.sender_bkt.size + FULL * FULL / combined + 1e-9);
    }
}
