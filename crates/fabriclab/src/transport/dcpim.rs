//! dcPIM: datacenter parallel iterative matching (Cai, Arashloo, Agarwal,
//! "dcPIM: Near-Optimal Proactive Datacenter Transport", SIGCOMM 2022), as
//! the SIRD paper runs it (seed sird-paper-2024.txt §5.1: the published
//! simulator, 3 priority levels, packet spraying). Parameters and behaviour
//! follow the authors' simulator (github.com/Terabit-Ethernet/dcPIM,
//! `simulator/ext/pimhost.cpp`, `pimflow.cpp`); docs/protocols/dcpim.md cites
//! each one.
//!
//! - **Short messages** (at most `short_bdp`) skip matching: all their packets
//!   go at once, unscheduled, at line rate, in priority class 1.
//! - **Long messages** send a NOTIFY (the simulator's RTS) and wait to be
//!   matched. Matching runs in **epochs** whose boundaries every host derives
//!   from the common clock (epoch e starts at e·E; semi-synchronous, no
//!   message exchange needed to agree on them). An epoch's matching phase is
//!   `r` rounds of length R = β·RTT; in each round, receivers REQUEST
//!   channels from senders with pending long messages (R/2 later), senders
//!   GRANT, and (at the round's end) receivers ACCEPT. A host has `k`
//!   channels as a receiver and `k` as a sender; a pair matched on c channels
//!   transmits at c/k of the line rate. Rounds up to `srpt_rounds` pick the
//!   smallest remaining message first, later rounds pick at random.
//! - **Data phase**, pipelined with the next epoch's matching: when epoch e's
//!   matching ends, each receiver sends TOKENs to its matched senders, paced
//!   at c/k of the line rate per pair; a sender sends the named data packet
//!   for each token (class 2). Tokens expire shortly after their data phase.
//! - **Loss recovery** (simulator): tokens name packets not yet received,
//!   cycling; after a full cycle the message rests for a token-resend timeout
//!   and missing packets are asked for again; a short message still
//!   incomplete after its burst plus that timeout is matched like a long one,
//!   in a later epoch. A per-sender token window bounds outstanding tokens.
//!   We add: a sender re-sends NOTIFY when it hears nothing for a while, and
//!   the receiver ACKs completion (and re-ACKs on a late NOTIFY), because here
//!   control packets can be dropped; in the simulator they never are.

use super::toolkit::{IdMap, IdSet, Reassembly};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::config::{ParamDoc, ProtocolParams};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet};
use fabriclab_engine::error::{check_positive, check_range, ConfigError, Validate};
use fabriclab_engine::{serialization_time, Time};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[protocol.dcpim]`. Defaults: the dcPIM simulator's default configuration
/// (`simulator/py/load_100Gbps/load.py`, `conf_str_pim`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct DcpimParams {
    /// r: matching rounds per epoch.
    pub rounds: u32,
    /// k: channels per host and direction; c matched channels carry c/k of the line rate.
    pub channels: u32,
    /// β: one round lasts β RTTs.
    pub round_rtts: f64,
    /// α: the epoch period (= data phase) is α times the matching phase.
    pub alpha: f64,
    /// Messages up to this size are sent unscheduled, without matching.
    pub short_bdp: f64,
    /// Rounds (from the first) in which grants and accepts go to the smallest
    /// remaining message; later rounds choose at random.
    pub srpt_rounds: u32,
    /// Outstanding tokens per message, scaled by c/k of its pair.
    pub token_window_bdp: f64,
    /// After this long without a token, a full window is presumed lost (x BDP transmission time).
    pub token_window_timeout_bdp: f64,
    /// A message whose missing packets all have tokens out rests this long
    /// before they are asked for again (x BDP transmission time).
    pub token_resend_timeout_bdp: f64,
    /// A receiver skips one token slot per packet of a newly seen short message.
    pub token_hold: bool,
    /// A sender re-sends NOTIFY after this long without news (epochs).
    pub notify_timeout_epochs: f64,
}

impl Default for DcpimParams {
    fn default() -> Self {
        DcpimParams {
            rounds: 4,
            channels: 4,
            round_rtts: 1.3,
            alpha: 1.0,
            short_bdp: 1.0,
            srpt_rounds: 1,
            token_window_bdp: 1.0,
            token_window_timeout_bdp: 1.1,
            token_resend_timeout_bdp: 1.0,
            token_hold: true,
            notify_timeout_epochs: 2.0,
        }
    }
}

impl Validate for DcpimParams {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=32).contains(&self.rounds) {
            return Err(ConfigError::value("protocol.dcpim.rounds", self.rounds, "an integer in [1, 32]"));
        }
        if !(1..=64).contains(&self.channels) {
            return Err(ConfigError::value("protocol.dcpim.channels", self.channels, "an integer in [1, 64]"));
        }
        check_range("protocol.dcpim.round_rtts", self.round_rtts, 1.0, 100.0)?;
        check_range("protocol.dcpim.alpha", self.alpha, 1.0, 100.0)?;
        check_range("protocol.dcpim.short_bdp", self.short_bdp, 0.0, 1e6)?;
        if self.srpt_rounds > self.rounds {
            let allowed = format!("an integer in [0, rounds = {}]", self.rounds);
            return Err(ConfigError::value("protocol.dcpim.srpt_rounds", self.srpt_rounds, &allowed));
        }
        check_positive("protocol.dcpim.token_window_bdp", self.token_window_bdp)?;
        check_positive("protocol.dcpim.token_window_timeout_bdp", self.token_window_timeout_bdp)?;
        check_positive("protocol.dcpim.token_resend_timeout_bdp", self.token_resend_timeout_bdp)?;
        check_positive("protocol.dcpim.notify_timeout_epochs", self.notify_timeout_epochs)
    }
}

/// Epoch arithmetic of one host, in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochTiming {
    /// R = β × RTT.
    pub round: Time,
    /// M = r × R.
    pub matching: Time,
    /// E = α × M: epochs start every E; a data phase lasts E.
    pub epoch: Time,
    /// Serialisation of a full data packet at the host's line rate.
    pub packet: Time,
}

impl DcpimParams {
    pub fn timing(&self, info: &HostInfo) -> EpochTiming {
        let round = ((self.round_rtts * info.base_rtt as f64).round() as Time).max(2);
        let matching = round * self.rounds as Time;
        let epoch = ((self.alpha * matching as f64).round() as Time).max(matching);
        let packet = serialization_time(data_wire(info.mss) as u64, info.link_rate_bps);
        EpochTiming { round, matching, epoch, packet }
    }
}

impl ProtocolParams for DcpimParams {
    type Host = Dcpim;
    const PAPER: &'static str =
        "dcPIM: Near-Optimal Proactive Datacenter Transport (Cai, Arashloo, Agarwal, SIGCOMM 2022)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Spray;

    fn host(&self, info: &HostInfo) -> Dcpim {
        Dcpim::new(self, info)
    }

    fn docs() -> Vec<ParamDoc> {
        let d = DcpimParams::default();
        let doc = |key, default: String, meaning, source| ParamDoc { key, default, meaning, source };
        vec![
            doc("rounds", d.rounds.to_string(), "r, matching rounds per epoch", "dcPIM simulator py/load_100Gbps/load.py: pim_iter_limit = 4"),
            doc("channels", d.channels.to_string(), "k, channels per host; c channels = c/k of line rate", "dcPIM simulator py/load_100Gbps/load.py: pim_k = 4"),
            doc(
                "round_rtts",
                d.round_rtts.to_string(),
                "beta, round length in RTTs",
                "dcPIM simulator load.py: pim_beta = 1.3; round = beta x control RTT (coresim/leafSpineTopology.cpp)",
            ),
            doc(
                "alpha",
                d.alpha.to_string(),
                "epoch period (= data phase) / matching phase",
                "dcPIM simulator load.py: pim_alpha = 1; epochs every r x round x alpha (ext/pimhost.cpp); we require >= 1",
            ),
            doc("short_bdp", d.short_bdp.to_string(), "largest message sent without matching (x BDP)", "dcPIM simulator load.py: token_initial = 1 (x BDP)"),
            doc(
                "srpt_rounds",
                d.srpt_rounds.to_string(),
                "first rounds choosing the smallest remaining message, not a random one",
                "dcPIM simulator load.py: pim_select_min_iters = 1",
            ),
            doc("token_window_bdp", d.token_window_bdp.to_string(), "outstanding tokens per message, x c/k (x BDP)", "dcPIM simulator load.py: token_window = 1"),
            doc(
                "token_window_timeout_bdp",
                d.token_window_timeout_bdp.to_string(),
                "a full token window is presumed lost after this (x BDP transmission time)",
                "dcPIM simulator load.py: token_window_timeout = 1.1",
            ),
            doc(
                "token_resend_timeout_bdp",
                d.token_resend_timeout_bdp.to_string(),
                "rest before re-asking for missing packets (x BDP transmission time)",
                "dcPIM simulator load.py: token_resend_timeout = 1",
            ),
            doc("token_hold", d.token_hold.to_string(), "skip one token slot per packet of a new short message", "dcPIM simulator run/params.h: TOKEN_HOLD = true"),
            doc(
                "notify_timeout_epochs",
                d.notify_timeout_epochs.to_string(),
                "sender re-sends NOTIFY after this long without news (epochs)",
                "our choice: the simulator never drops control packets",
            ),
        ]
    }
}

#[derive(Clone, Copy, Debug)]
pub enum DcpimHeader {
    /// Packet `index` of `msg` (`size` bytes); `seq` echoes the token that
    /// triggered it (the packet index for unscheduled packets).
    Data { msg: MsgId, size: u64, index: u32, seq: u32 },
    /// A new long message (the simulator's RTS); repeated on sender timeouts.
    Notify { msg: MsgId, size: u64 },
    /// Receiver → sender: `channels` wanted for `msg`, with `remaining` packets to receive.
    Request { msg: MsgId, epoch: u32, round: u8, channels: u8, remaining: u32 },
    /// Sender → receiver.
    Grant { msg: MsgId, epoch: u32, round: u8, channels: u8, remaining: u32 },
    /// Receiver → sender: the pair is matched on `channels` for `epoch`'s data phase.
    Accept { msg: MsgId, epoch: u32, channels: u8 },
    /// Sender → receiver: `channels` accepted beyond the sender's k are void (the simulator's GrantsR).
    Revoke { epoch: u32, channels: u8 },
    /// Receiver → sender: send packet `index` of `msg`, before `expires`.
    Token { msg: MsgId, index: u32, seq: u32, expires: Time },
    /// Receiver → sender: `msg` is complete.
    Ack { msg: MsgId },
}

/// Strict-priority classes (SIRD §5.1: dcPIM uses 3).
const CTRL: u8 = 0;
const SHORT: u8 = 1;
const LONG: u8 = 2;

const T_TICK: u64 = 0;
const T_PACER: u64 = 1 << 61;
const T_GRANT: u64 = 2 << 61;
const T_PROMOTE: u64 = 3 << 61;
const T_NOTIFY: u64 = 4 << 61;
const T_KIND: u64 = 7 << 61;

/// What one host saw of the matching (for tests and diagnostics).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DcpimStats {
    /// Matching phases this host finished as a receiver with at least one match.
    pub matchings: u64,
    /// Most channels a matching gave this host as a receiver (never above k).
    pub max_rx_channels: u32,
    /// Most distinct senders one matching gave this host.
    pub max_rx_senders: u32,
    /// Most channels accepted from this host as a sender in one epoch (never above k).
    pub max_tx_channels: u32,
    /// Most distinct receivers this host was matched to as a sender in one epoch.
    pub max_tx_receivers: u32,
    pub requests: u64,
    pub grants: u64,
    pub accepts: u64,
    pub revokes: u64,
    pub tokens: u64,
    pub tokens_expired: u64,
    pub notify_retries: u64,
}

/// Receiver-side state of an inbound message.
struct InMsg {
    src: u32,
    reasm: Reassembly,
    n_pkts: u32,
    received: u32,
    /// First packet index not yet received.
    until: u32,
    /// Long, or short with packets missing after its burst: matched and tokened.
    scheduled: bool,
    /// Tokens issued (the next token's sequence number), and one past the largest sequence echoed.
    token_count: u32,
    seen: u32,
    last_index: Option<u32>,
    last_token_at: Time,
    /// Redundancy control: no tokens or requests for this message before then.
    quiet_until: Time,
}

impl InMsg {
    fn remaining(&self) -> u32 {
        self.n_pkts - self.received
    }
    /// Next packet to ask for after `after`, cycling over the missing ones.
    fn missing_after(&self, after: Option<u32>) -> u32 {
        let from = after.map_or(0, |i| i as u64 + 1);
        let first = self.reasm.first_missing(from).or_else(|| self.reasm.first_missing(self.until as u64));
        first.expect("incomplete message has a missing packet") as u32
    }
}

/// A matched sender during a data phase.
struct Link {
    src: u32,
    channels: u32,
    interval: Time,
    next_at: Time,
    last_at: Option<Time>,
    /// No token slot is scheduled: nothing to token until kicked.
    idle: bool,
    /// `next_at` waits for the token window's timeout; arriving data may reopen it sooner.
    blocked: bool,
}

struct Grant {
    src: u32,
    remaining: u32,
    channels: u32,
    msg: MsgId,
}

/// A receiver's matching in progress.
struct Matching {
    epoch: u64,
    start: Time,
    /// The round whose requests are out and whose grants are awaited.
    round: u32,
    accepted: u32,
    matched: Vec<(u32, u32)>,
    grants: Vec<Grant>,
}

struct Request {
    dst: u32,
    round: u32,
    remaining: u32,
    channels: u32,
    msg: MsgId,
}

/// A sender's view of one epoch's matching.
#[derive(Default)]
struct TxEpoch {
    live: bool,
    epoch: u64,
    accepted: u32,
    receivers: Vec<u32>,
    armed_round: u32,
    requests: Vec<Request>,
}

struct OutMsg {
    dst: u32,
    size: u64,
    n_pkts: u32,
    short: bool,
    next_unsched: u32,
    last_heard: Time,
}

struct TokenIn {
    msg: MsgId,
    index: u32,
    seq: u32,
    expires: Time,
}

pub struct Dcpim {
    info: HostInfo,
    k: u32,
    rounds: u32,
    srpt_rounds: u32,
    t: EpochTiming,
    short_max: u64,
    /// Packets one channel carries in a data phase (the simulator's pim_link_pkts).
    link_pkts: u32,
    window_pkts: f64,
    window_timeout: Time,
    resend_timeout: Time,
    token_hold: bool,
    notify_timeout: Time,
    expiry_margin: Time,
    // receiver
    inbound: IdMap<MsgId, InMsg>,
    completed: IdSet<MsgId>,
    by_src: IdMap<u32, Vec<MsgId>>,
    /// Senders with inbound messages, in order of arrival (iteration order matters).
    srcs: Vec<u32>,
    /// Scheduled inbound messages not complete: while any, the host joins every epoch.
    work: u32,
    next_tick: Time,
    matching: Option<Matching>,
    links: Vec<Link>,
    links_epoch: u64,
    links_end: Time,
    pacer_at: Time,
    hold: u32,
    // sender
    outbound: IdMap<MsgId, OutMsg>,
    short_ready: Vec<MsgId>,
    tokens: VecDeque<TokenIn>,
    tx: [TxEpoch; 2],
    control: VecDeque<Packet<DcpimHeader>>,
    stats: DcpimStats,
}

impl Dcpim {
    pub fn new(p: &DcpimParams, info: &HostInfo) -> Dcpim {
        let t = p.timing(info);
        let bdp_pkts = packets_for(info.bdp_bytes, info.mss);
        let bdp_time = bdp_pkts * t.packet;
        Dcpim {
            k: p.channels,
            rounds: p.rounds,
            srpt_rounds: p.srpt_rounds,
            t,
            short_max: (p.short_bdp * info.bdp_bytes as f64).round() as u64,
            link_pkts: ((t.epoch / t.packet) as u32 / p.channels).max(1),
            window_pkts: p.token_window_bdp * bdp_pkts as f64,
            window_timeout: (p.token_window_timeout_bdp * bdp_time as f64).round() as Time,
            resend_timeout: (p.token_resend_timeout_bdp * bdp_time as f64).round() as Time,
            token_hold: p.token_hold,
            notify_timeout: ((p.notify_timeout_epochs * t.epoch as f64).round() as Time).max(1),
            expiry_margin: info.base_rtt / 2 + p.channels as Time * t.packet,
            inbound: IdMap::default(),
            completed: IdSet::default(),
            by_src: IdMap::default(),
            srcs: Vec::new(),
            work: 0,
            next_tick: Time::MAX,
            matching: None,
            links: Vec::new(),
            links_epoch: 0,
            links_end: 0,
            pacer_at: Time::MAX,
            hold: 0,
            outbound: IdMap::default(),
            short_ready: Vec::new(),
            tokens: VecDeque::new(),
            tx: Default::default(),
            control: VecDeque::new(),
            stats: DcpimStats::default(),
            info: info.clone(),
        }
    }

    pub fn stats(&self) -> &DcpimStats {
        &self.stats
    }

    pub fn timing(&self) -> EpochTiming {
        self.t
    }

    fn send_control(&mut self, dst: u32, msg: MsgId, hdr: DcpimHeader) {
        self.control.push_back(Packet::new(self.info.id, dst, CONTROL_WIRE, CTRL, msg as u32, hdr));
    }

    /// Random order for later rounds, smallest remaining first (ties by id) for the first ones.
    fn order<T>(&self, cx: &mut Cx, round: u32, v: &mut [T], key: impl Fn(&T) -> (u32, MsgId)) {
        if round <= self.srpt_rounds {
            v.sort_unstable_by_key(key);
        } else {
            for i in (1..v.len()).rev() {
                let j = (cx.rng.next_u64() % (i as u64 + 1)) as usize;
                v.swap(i, j);
            }
        }
    }

    // ---------------------------------------------------------------- receiver

    /// Creates the entry for an inbound message; false if it already completed.
    fn inbound_entry(&mut self, cx: &mut Cx, msg: MsgId, src: u32, size: u64) -> bool {
        if self.completed.contains(&msg) {
            return false;
        }
        if self.inbound.contains_key(&msg) {
            return true;
        }
        let n = packets_for(size, self.info.mss) as u32;
        let short = size <= self.short_max;
        // A short message's packets all had "initial tokens": it is left alone
        // for its burst plus a resend timeout (pimflow.cpp receive_short_flow).
        let quiet = if short { cx.now + n as Time * self.t.packet + self.resend_timeout } else { 0 };
        self.inbound.insert(
            msg,
            InMsg {
                src,
                reasm: Reassembly::new(size, self.info.mss),
                n_pkts: n,
                received: 0,
                until: 0,
                scheduled: !short,
                token_count: if short { n } else { 0 },
                seen: 0,
                last_index: if short { Some(n - 1) } else { None },
                last_token_at: cx.now,
                quiet_until: quiet,
            },
        );
        let list = self.by_src.entry(src).or_default();
        if list.is_empty() {
            self.srcs.push(src);
        }
        list.push(msg);
        if short {
            cx.set_timer(quiet, T_PROMOTE | msg);
            if self.token_hold {
                self.hold = n;
            }
        } else {
            self.work += 1;
            self.join_epochs(cx);
            self.kick(cx, src);
        }
        true
    }

    fn on_data(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, index: u32, seq: u32) {
        if !self.inbound_entry(cx, msg, src, size) {
            return;
        }
        let payload = payload_of(size, self.info.mss, index as u64);
        let m = self.inbound.get_mut(&msg).expect("entry");
        if !m.reasm.insert(index as u64, payload) {
            return;
        }
        m.received += 1;
        m.seen = m.seen.max(seq + 1);
        while m.until < m.n_pkts && m.reasm.has(m.until as u64) {
            m.until += 1;
        }
        cx.deliver(msg, payload);
        if m.reasm.is_complete() {
            let scheduled = m.scheduled;
            self.inbound.remove(&msg);
            let list = self.by_src.get_mut(&src).expect("listed");
            list.retain(|&id| id != msg);
            if list.is_empty() {
                self.by_src.remove(&src);
                self.srcs.retain(|&s| s != src);
            }
            self.work -= scheduled as u32;
            self.completed.insert(msg);
            cx.complete(msg);
            self.send_control(src, msg, DcpimHeader::Ack { msg });
        } else if (m.token_count - m.seen) as f64 <= self.window_pkts {
            // The window may have reopened (pimflow.cpp receive).
            self.kick(cx, src);
        }
    }

    /// A short message still incomplete after its burst is matched like a long one.
    fn on_promote(&mut self, cx: &mut Cx, msg: MsgId) {
        let Some(m) = self.inbound.get_mut(&msg) else {
            return;
        };
        if m.scheduled {
            return;
        }
        m.scheduled = true;
        let src = m.src;
        self.work += 1;
        self.join_epochs(cx);
        self.kick(cx, src);
    }

    /// Joins the next epoch boundary if this host is not already taking part.
    fn join_epochs(&mut self, cx: &mut Cx) {
        if self.next_tick == Time::MAX {
            let at = cx.now.div_ceil(self.t.epoch) * self.t.epoch;
            self.next_tick = at;
            cx.set_timer(at, T_TICK);
        }
    }

    /// Round boundaries: accept the round's grants, send the next requests,
    /// end the matching (start its data phase), and start epochs.
    fn on_tick(&mut self, cx: &mut Cx) {
        if cx.now != self.next_tick {
            return;
        }
        let now = cx.now;
        let t = self.t;
        if let Some(m) = &self.matching {
            if now == m.start + m.round as Time * t.round {
                self.accept_grants(cx);
                let m = self.matching.as_mut().expect("matching");
                if m.round == self.rounds {
                    self.end_matching(cx);
                } else {
                    m.round += 1;
                    self.send_requests(cx);
                }
            }
        }
        if self.matching.is_none() && now % t.epoch == 0 && self.work > 0 {
            let epoch = now / t.epoch;
            self.matching =
                Some(Matching { epoch, start: now, round: 1, accepted: 0, matched: Vec::new(), grants: Vec::new() });
            self.send_requests(cx);
        }
        let next = match &self.matching {
            Some(m) => m.start + m.round as Time * t.round,
            None if self.work > 0 => (now / t.epoch + 1) * t.epoch,
            None => Time::MAX,
        };
        self.next_tick = next;
        if next != Time::MAX {
            cx.set_timer(next, T_TICK);
        }
    }

    /// Channels to `src` already set: this data phase's link and this matching's.
    fn channels_to(&self, now: Time, src: u32) -> u32 {
        let live =
            if now < self.links_end { self.links.iter().find(|l| l.src == src).map_or(0, |l| l.channels) } else { 0 };
        let m = self.matching.as_ref().expect("matching");
        live + m.matched.iter().find(|&&(s, _)| s == src).map_or(0, |&(_, c)| c)
    }

    /// One request per sender, for its message with the fewest packets left
    /// (pimhost.cpp send_all_req), asking for as many channels as that message
    /// needs to finish in one data phase, beyond those it already has.
    fn send_requests(&mut self, cx: &mut Cx) {
        let m = self.matching.as_ref().expect("matching");
        let avail = self.k - m.accepted;
        if avail == 0 {
            return;
        }
        let (epoch, round) = (m.epoch as u32, m.round as u8);
        for si in 0..self.srcs.len() {
            let src = self.srcs[si];
            let Some((remaining, msg)) = self.best_from(cx.now, src) else {
                continue;
            };
            let have = self.channels_to(cx.now, src);
            if have * self.link_pkts >= remaining {
                continue;
            }
            let need = (remaining.div_ceil(self.link_pkts) - have).min(avail);
            self.stats.requests += 1;
            let channels = need as u8;
            self.send_control(src, msg, DcpimHeader::Request { msg, epoch, round, channels, remaining });
        }
    }

    /// The scheduled message from `src` with the fewest packets left, not resting.
    fn best_from(&self, now: Time, src: u32) -> Option<(u32, MsgId)> {
        let list = self.by_src.get(&src)?;
        list.iter()
            .filter_map(|id| {
                let m = &self.inbound[id];
                (m.scheduled && m.quiet_until <= now).then(|| (m.remaining(), *id))
            })
            .min()
    }

    fn on_grant(&mut self, src: u32, msg: MsgId, epoch: u32, round: u8, channels: u8, remaining: u32) {
        if let Some(m) = self.matching.as_mut().filter(|m| m.epoch as u32 == epoch && m.round == round as u32) {
            m.grants.push(Grant { src, remaining, channels: channels as u32, msg });
        }
    }

    fn accept_grants(&mut self, cx: &mut Cx) {
        let m = self.matching.as_mut().expect("matching");
        let mut grants = std::mem::take(&mut m.grants);
        let (round, epoch) = (m.round, m.epoch as u32);
        self.order(cx, round, &mut grants, |g| (g.remaining, g.msg));
        let m = self.matching.as_mut().expect("matching");
        let mut out = Vec::new();
        for g in grants.drain(..) {
            let avail = self.k - m.accepted;
            if avail == 0 {
                break;
            }
            let c = g.channels.min(avail);
            m.accepted += c;
            match m.matched.iter_mut().find(|(s, _)| *s == g.src) {
                Some(e) => e.1 += c,
                None => m.matched.push((g.src, c)),
            }
            out.push((g.src, g.msg, c));
        }
        debug_assert!(m.accepted <= self.k);
        m.grants = grants;
        for (src, msg, c) in out {
            self.stats.accepts += 1;
            self.send_control(src, msg, DcpimHeader::Accept { msg, epoch, channels: c as u8 });
        }
    }

    /// The matching's pairs replace the previous data phase's.
    fn end_matching(&mut self, cx: &mut Cx) {
        let m = self.matching.take().expect("matching");
        let now = cx.now;
        if !m.matched.is_empty() {
            self.stats.matchings += 1;
            self.stats.max_rx_channels = self.stats.max_rx_channels.max(m.accepted);
            self.stats.max_rx_senders = self.stats.max_rx_senders.max(m.matched.len() as u32);
        }
        let pacing = self.k as Time * self.t.packet;
        self.links.clear();
        for &(src, channels) in &m.matched {
            let interval = pacing.div_ceil(channels as Time);
            self.links.push(Link { src, channels, interval, next_at: now, last_at: None, idle: false, blocked: false });
        }
        self.links_epoch = m.epoch;
        self.links_end = now + self.t.epoch;
        self.arm_pacer(cx);
    }

    fn on_revoke(&mut self, cx: &mut Cx, src: u32, epoch: u32, channels: u8) {
        let c = channels as u32;
        if let Some(m) = self.matching.as_mut().filter(|m| m.epoch as u32 == epoch) {
            if let Some(i) = m.matched.iter().position(|&(s, _)| s == src) {
                let cut = m.matched[i].1.min(c);
                m.matched[i].1 -= cut;
                m.accepted -= cut;
                if m.matched[i].1 == 0 {
                    m.matched.remove(i);
                }
            }
        } else if self.links_epoch as u32 == epoch && cx.now < self.links_end {
            if let Some(i) = self.links.iter().position(|l| l.src == src) {
                let l = &mut self.links[i];
                l.channels -= l.channels.min(c);
                if l.channels == 0 {
                    self.links.remove(i);
                } else {
                    l.interval = (self.k as Time * self.t.packet).div_ceil(l.channels as Time);
                }
            }
        }
    }

    /// Wakes the link to `src` if it sleeps or waits for its window's timeout.
    fn kick(&mut self, cx: &mut Cx, src: u32) {
        let now = cx.now;
        if let Some(l) = self.links.iter_mut().find(|l| l.src == src && (l.idle || l.blocked)) {
            l.idle = false;
            l.blocked = false;
            l.next_at = l.last_at.map_or(now, |t| (t + l.interval).max(now));
            self.arm_pacer(cx);
        }
    }

    fn arm_pacer(&mut self, cx: &mut Cx) {
        let next = self.links.iter().filter(|l| !l.idle).map(|l| l.next_at).min().unwrap_or(Time::MAX);
        if next < self.links_end && next < self.pacer_at {
            self.pacer_at = next.max(cx.now);
            cx.set_timer(self.pacer_at, T_PACER);
        }
    }

    fn on_pacer(&mut self, cx: &mut Cx) {
        if cx.now >= self.pacer_at {
            self.pacer_at = Time::MAX;
        }
        for i in 0..self.links.len() {
            if !self.links[i].idle && self.links[i].next_at <= cx.now {
                self.token_slot(cx, i);
            }
        }
        self.arm_pacer(cx);
    }

    /// One token slot of link `li` (pimhost.cpp PIM_Vlink::send_token).
    fn token_slot(&mut self, cx: &mut Cx, li: usize) {
        let now = cx.now;
        if now >= self.links_end {
            self.links[li].idle = true;
            return;
        }
        self.links[li].blocked = false;
        let (src, channels, interval) = (self.links[li].src, self.links[li].channels, self.links[li].interval);
        if self.token_hold && self.hold > 0 {
            // Leave this slot of the downlink to a short message's burst.
            self.hold -= 1;
            self.links[li].next_at = now + interval;
            return;
        }
        let Some((_, id)) = self.best_from(now, src) else {
            // Wait for a resting message, or sleep until kicked.
            let wake = self.by_src.get(&src).and_then(|l| {
                l.iter().map(|id| &self.inbound[id]).filter(|m| m.scheduled).map(|m| m.quiet_until).min()
            });
            let l = &mut self.links[li];
            match wake {
                Some(t) => l.next_at = t.max(now + 1),
                None => l.idle = true,
            }
            return;
        };
        let window = self.window_pkts * channels as f64 / self.k as f64;
        let (window_timeout, resend_timeout) = (self.window_timeout, self.resend_timeout);
        let m = self.inbound.get_mut(&id).expect("listed");
        if (m.token_count - m.seen) as f64 > window {
            if now < m.last_token_at + window_timeout {
                self.links[li].next_at = m.last_token_at + window_timeout;
                self.links[li].blocked = true;
                return;
            }
            // The window's tokens or data are presumed lost.
            m.seen = m.token_count - (window as u32).min(m.token_count);
        }
        let index = m.missing_after(m.last_index);
        let seq = m.token_count;
        m.token_count += 1;
        m.last_index = Some(index);
        m.last_token_at = now;
        if m.missing_after(Some(index)) <= index {
            // Every missing packet has a token out: rest before asking again.
            m.quiet_until = now + resend_timeout;
        }
        let expires = self.links_end + self.expiry_margin;
        self.stats.tokens += 1;
        self.send_control(src, id, DcpimHeader::Token { msg: id, index, seq, expires });
        let l = &mut self.links[li];
        l.last_at = Some(now);
        l.next_at = now + interval;
        l.blocked = false;
    }

    // ---------------------------------------------------------------- sender

    fn on_request(&mut self, cx: &mut Cx, dst: u32, msg: MsgId, epoch: u32, round: u8, channels: u8, remaining: u32) {
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
        let slot = &mut self.tx[(e & 1) as usize];
        if !slot.live || slot.epoch < e {
            slot.live = true;
            slot.epoch = e;
            slot.accepted = 0;
            slot.receivers.clear();
            slot.armed_round = 0;
            slot.requests.clear();
        } else if slot.epoch > e {
            return;
        }
        slot.requests.push(Request { dst, round: i, remaining, channels: channels as u32, msg });
        if slot.armed_round != i {
            slot.armed_round = i;
            cx.set_timer(grant_at, T_GRANT | e << 8 | i as u64);
        }
    }

    /// Grants the round's requests, up to the channels not yet accepted
    /// (pimhost.cpp handle_all_req).
    fn on_grant_timer(&mut self, cx: &mut Cx, e: u64, round: u32) {
        let slot = &mut self.tx[(e & 1) as usize];
        if !slot.live || slot.epoch != e {
            return;
        }
        let mut reqs = std::mem::take(&mut slot.requests);
        let mut avail = self.k - slot.accepted;
        reqs.retain(|r| r.round == round && self.outbound.contains_key(&r.msg));
        self.order(cx, round, &mut reqs, |r| (r.remaining, r.msg));
        for r in reqs.drain(..) {
            if avail == 0 {
                break;
            }
            let c = r.channels.min(avail);
            avail -= c;
            self.stats.grants += 1;
            let hdr = DcpimHeader::Grant {
                msg: r.msg,
                epoch: e as u32,
                round: round as u8,
                channels: c as u8,
                remaining: r.remaining,
            };
            self.send_control(r.dst, r.msg, hdr);
        }
        self.tx[(e & 1) as usize].requests = reqs;
    }

    /// Counts accepted channels; any beyond k are revoked (pimhost.cpp receive_accept_pkt).
    fn on_accept(&mut self, dst: u32, epoch: u32, channels: u8) {
        let e = epoch as u64;
        let k = self.k;
        let slot = &mut self.tx[(e & 1) as usize];
        let mut c = channels as u32;
        let mut excess = c;
        if slot.live && slot.epoch == e {
            excess = (slot.accepted + c).saturating_sub(k);
            c -= excess;
            slot.accepted += c;
            if c > 0 && !slot.receivers.contains(&dst) {
                slot.receivers.push(dst);
            }
            self.stats.max_tx_channels = self.stats.max_tx_channels.max(slot.accepted);
            self.stats.max_tx_receivers = self.stats.max_tx_receivers.max(slot.receivers.len() as u32);
        }
        if excess > 0 {
            self.stats.revokes += 1;
            self.send_control(dst, 0, DcpimHeader::Revoke { epoch, channels: excess as u8 });
        }
    }

    fn on_token(&mut self, cx: &mut Cx, msg: MsgId, index: u32, seq: u32, expires: Time) {
        if let Some(m) = self.outbound.get_mut(&msg) {
            m.last_heard = cx.now;
            self.tokens.push_back(TokenIn { msg, index, seq, expires });
        }
    }

    fn on_notify_timer(&mut self, cx: &mut Cx, msg: MsgId) {
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

    fn data_packet(&self, msg: MsgId, m: &OutMsg, index: u32, seq: u32) -> Packet<DcpimHeader> {
        let payload = payload_of(m.size, self.info.mss, index as u64);
        let prio = if m.short { SHORT } else { LONG };
        let hdr = DcpimHeader::Data { msg, size: m.size, index, seq };
        Packet::new(self.info.id, m.dst, data_wire(payload), prio, msg as u32, hdr)
    }

    /// Unscheduled packets of short messages, fewest bytes left first.
    fn poll_short(&mut self, cx: &mut Cx) -> Option<Packet<DcpimHeader>> {
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
                    if best.map_or(true, |(k, _)| key < k) {
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
    fn poll_token(&mut self, cx: &mut Cx) -> Option<Packet<DcpimHeader>> {
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

impl Transport for Dcpim {
    type Header = DcpimHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let n_pkts = packets_for(msg.size, self.info.mss) as u32;
        let short = msg.size <= self.short_max;
        let m = OutMsg {
            dst: msg.dst,
            size: msg.size,
            n_pkts,
            short,
            next_unsched: if short { 0 } else { n_pkts },
            last_heard: cx.now,
        };
        self.outbound.insert(msg.id, m);
        if short {
            self.short_ready.push(msg.id);
        } else {
            self.send_control(msg.dst, msg.id, DcpimHeader::Notify { msg: msg.id, size: msg.size });
        }
        cx.set_timer(cx.now + self.notify_timeout, T_NOTIFY | msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<DcpimHeader>) {
        let src = pkt.src;
        match pkt.hdr {
            DcpimHeader::Data { msg, size, index, seq } => self.on_data(cx, src, msg, size, index, seq),
            DcpimHeader::Notify { msg, size } => {
                if !self.inbound_entry(cx, msg, src, size) {
                    self.send_control(src, msg, DcpimHeader::Ack { msg }); // the ACK was lost
                }
            }
            DcpimHeader::Request { msg, epoch, round, channels, remaining } => {
                self.on_request(cx, src, msg, epoch, round, channels, remaining)
            }
            DcpimHeader::Grant { msg, epoch, round, channels, remaining } => {
                self.on_grant(src, msg, epoch, round, channels, remaining)
            }
            DcpimHeader::Accept { epoch, channels, .. } => self.on_accept(src, epoch, channels),
            DcpimHeader::Revoke { epoch, channels } => self.on_revoke(cx, src, epoch, channels),
            DcpimHeader::Token { msg, index, seq, expires } => self.on_token(cx, msg, index, seq, expires),
            DcpimHeader::Ack { msg } => {
                self.outbound.remove(&msg);
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let arg = token & !T_KIND;
        match token & T_KIND {
            T_TICK => self.on_tick(cx),
            T_PACER => self.on_pacer(cx),
            T_GRANT => self.on_grant_timer(cx, arg >> 8, (arg & 0xFF) as u32),
            T_PROMOTE => self.on_promote(cx, arg),
            T_NOTIFY => self.on_notify_timer(cx, arg),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<DcpimHeader>> {
        if let Some(p) = self.control.pop_front() {
            return Some(p);
        }
        if let Some(p) = self.poll_short(cx) {
            return Some(p);
        }
        self.poll_token(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_timing_on_the_sird_fabric() {
        let info = HostInfo {
            id: 0,
            n_hosts: 144,
            link_rate_bps: 100_000_000_000,
            mtu: 1500,
            mss: 1460,
            bdp_bytes: 100_000,
            priorities: 8,
            base_rtt: 7_500_000,
            size_dist: None,
        };
        let t = DcpimParams::default().timing(&info);
        assert_eq!(t.round, 9_750_000);
        assert_eq!(t.matching, 39_000_000);
        assert_eq!(t.epoch, 39_000_000);
        assert_eq!(t.packet, 123_040);
        let h = Dcpim::new(&DcpimParams::default(), &info);
        assert_eq!(h.link_pkts, 316 / 4);
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad = [
            DcpimParams { rounds: 0, ..Default::default() },
            DcpimParams { channels: 65, ..Default::default() },
            DcpimParams { round_rtts: 0.5, ..Default::default() },
            DcpimParams { alpha: 0.5, ..Default::default() },
            DcpimParams { srpt_rounds: 5, ..Default::default() },
            DcpimParams { token_window_bdp: 0.0, ..Default::default() },
        ];
        let keys = ["rounds", "channels", "round_rtts", "alpha", "srpt_rounds", "token_window_bdp"];
        for (p, key) in bad.iter().zip(keys) {
            let e = p.validate().unwrap_err();
            assert_eq!(e.key, format!("protocol.dcpim.{key}"));
        }
        assert!(DcpimParams::default().validate().is_ok());
    }
}
