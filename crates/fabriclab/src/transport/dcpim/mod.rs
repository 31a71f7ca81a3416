//! dcPIM: datacenter parallel iterative matching (Cai, Arashloo, Agarwal,
//! "dcPIM: Near-Optimal Proactive Datacenter Transport", SIGCOMM 2022), as
//! the SIRD paper runs it (seed sird-paper-2024.txt §5.1: the published
//! simulator, 3 priority levels, packet spraying). Parameters and behaviour
//! follow the authors' simulator (github.com/Terabit-Ethernet/dcPIM,
//! `simulator/ext/pimhost.cpp`, `pimflow.cpp`); docs/protocols/dcpim.md cites
//! each one.
//!
//! - **Short messages** (at most `short_bdp` BDP) skip matching: all their packets
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
//!   Optionally (`prompt_channels`, the simulator since 2023) a pair accepted
//!   on channels idle in the current data phase starts at once on them.
//! - **Loss recovery** (simulator): tokens name packets not yet received,
//!   cycling; after a full cycle the message rests for a token-resend timeout
//!   and missing packets are asked for again; a short message still
//!   incomplete after its burst plus that timeout is matched like a long one,
//!   in a later epoch. A per-message token window bounds outstanding tokens.
//!   We add: a sender re-sends NOTIFY when it hears nothing for a while, and
//!   the receiver ACKs completion (and re-ACKs on a late NOTIFY), because here
//!   control packets can be dropped; in the simulator they never are.

mod receiver;
mod sender;

use super::toolkit::{IdMap, IdSet};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::wire::{data_wire, packets_for, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet};
use crate::transport::params::{ParamDoc, ProtocolParams, POSITIVE_MULTIPLE};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use fabriclab_engine::{serialization_time, Time};
use rand::RngCore;
use receiver::{InMsg, Link, Matching};
use sender::{OutMsg, TokenIn, TxEpoch};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[protocol.dcpim]`. Defaults: the dcPIM simulator's default configuration
/// (`simulator/py/load_100Gbps/load.py`, `conf_str_pim`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
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
    /// Pairs matched on channels idle in the current data phase start at
    /// once, on those channels, instead of waiting for the matching to end.
    pub prompt_channels: bool,
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
            prompt_channels: false,
        }
    }
}

impl Validate for DcpimParams {
    /// The rules between keys; each key's own range is in [`DcpimParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        if self.srpt_rounds > self.rounds {
            let allowed = format!("an integer in [0, rounds = {}]", self.rounds);
            return Err(ConfigError::value("protocol.dcpim.srpt_rounds", self.srpt_rounds, &allowed));
        }
        Ok(())
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

    fn bounds() -> Vec<(&'static str, Bound)> {
        vec![
            ("rounds", Bound::new("a number of rounds", 1.0, 32.0)),
            ("channels", Bound::new("a number of channels", 1.0, 64.0)),
            ("round_rtts", Bound::new("a multiple", 1.0, 100.0)),
            ("alpha", Bound::new("a multiple", 1.0, 100.0)),
            ("token_window_bdp", POSITIVE_MULTIPLE),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = DcpimParams::default();
        // Sources are files of the dcPIM simulator (github.com/Terabit-Ethernet/dcPIM, simulator/);
        // load.py is py/load_100Gbps/load.py, its default configuration (conf_str_pim).
        let rows = [
            (
                "rounds",
                d.rounds.to_string(),
                "r, matching rounds per epoch",
                "dcPIM simulator load.py: pim_iter_limit = 4",
            ),
            (
                "channels",
                d.channels.to_string(),
                "k, channels per host; c channels = c/k of line rate",
                "dcPIM simulator load.py: pim_k = 4",
            ),
            (
                "round_rtts",
                d.round_rtts.to_string(),
                "beta, round length in RTTs",
                "dcPIM simulator load.py: pim_beta = 1.3; round = beta x control RTT (leafSpineTopology.cpp)",
            ),
            (
                "alpha",
                d.alpha.to_string(),
                "epoch period (= data phase) / matching phase; >= 1",
                "dcPIM simulator load.py: pim_alpha = 1; epochs every r x round x alpha (pimhost.cpp)",
            ),
            (
                "short_bdp",
                d.short_bdp.to_string(),
                "largest message sent without matching (x BDP)",
                "dcPIM simulator load.py: token_initial = 1 (x BDP)",
            ),
            (
                "srpt_rounds",
                d.srpt_rounds.to_string(),
                "first rounds choosing the smallest remaining message, not a random one",
                "dcPIM simulator load.py: pim_select_min_iters = 1",
            ),
            (
                "token_window_bdp",
                d.token_window_bdp.to_string(),
                "outstanding tokens per message, x c/k (x BDP)",
                "dcPIM simulator load.py: token_window = 1",
            ),
            (
                "token_window_timeout_bdp",
                d.token_window_timeout_bdp.to_string(),
                "a full token window is presumed lost after this (x BDP transmission time)",
                "dcPIM simulator load.py: token_window_timeout = 1.1",
            ),
            (
                "token_resend_timeout_bdp",
                d.token_resend_timeout_bdp.to_string(),
                "rest before re-asking for missing packets (x BDP transmission time)",
                "dcPIM simulator load.py: token_resend_timeout = 1",
            ),
            (
                "token_hold",
                d.token_hold.to_string(),
                "skip one token slot per packet of a new short message",
                "dcPIM simulator run/params.h: TOKEN_HOLD = true",
            ),
            (
                "notify_timeout_epochs",
                d.notify_timeout_epochs.to_string(),
                "sender re-sends NOTIFY after this long without news (epochs)",
                "our choice: the simulator never drops control packets",
            ),
            (
                "prompt_channels",
                d.prompt_channels.to_string(),
                "matched pairs use channels idle in the current data phase at once",
                "off as in the SIGCOMM'22 artifact (b6426f6); on in the simulator since db204da (2023)",
            ),
        ];
        rows.into_iter().map(|(key, default, meaning, source)| ParamDoc { key, default, meaning, source }).collect()
    }
}

#[derive(Clone, Copy, Debug)]
pub enum DcpimHeader {
    /// Packet `index` of `msg` (`size` bytes); `seq` echoes the token that
    /// triggered it (the packet index for unscheduled packets).
    Data { msg: MsgId, size: u64, index: u32, seq: u32 },
    /// A new long message (the simulator's RTS); repeated on sender timeouts.
    Notify { msg: MsgId, size: u64 },
    /// Receiver → sender: `channels` wanted for `msg`, with `remaining`
    /// packets to receive; `prompt` of them could start at once.
    Request { msg: MsgId, epoch: u32, round: u8, channels: u8, prompt: u8, remaining: u32 },
    /// Sender → receiver.
    Grant { msg: MsgId, epoch: u32, round: u8, channels: u8, prompt: u8, remaining: u32 },
    /// Receiver → sender: the pair is matched on `channels` for `epoch`'s
    /// data phase, `prompt` of which start now.
    Accept { msg: MsgId, epoch: u32, channels: u8, prompt: u8 },
    /// Sender → receiver: `channels` (`prompt` of them prompt) accepted beyond
    /// the sender's k are void (the simulator's GrantsR).
    Revoke { epoch: u32, channels: u8, prompt: u8 },
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
    /// Most channels this host tokened at once (data phase and prompt pairs together).
    pub max_live_channels: u32,
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
    prompt: bool,
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
            prompt: p.prompt_channels,
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
            DcpimHeader::Request { msg, epoch, round, channels, prompt, remaining } => {
                self.on_request(cx, src, msg, epoch, round, (channels, prompt), remaining)
            }
            DcpimHeader::Grant { msg, epoch, round, channels, prompt, remaining } => {
                self.on_grant(src, msg, epoch, round, (channels, prompt), remaining)
            }
            DcpimHeader::Accept { epoch, channels, prompt, .. } => self.on_accept(src, epoch, channels, prompt),
            DcpimHeader::Revoke { epoch, channels, prompt } => self.on_revoke(cx, src, epoch, channels, prompt),
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
        let info = HostInfo::at_100gbps(0, 144, 8, 7_500_000);
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
        crate::transport::params::assert_bad_keys_named(
            "dcpim",
            [
                (DcpimParams { rounds: 0, ..Default::default() }, "rounds"),
                (DcpimParams { channels: 65, ..Default::default() }, "channels"),
                (DcpimParams { round_rtts: 0.5, ..Default::default() }, "round_rtts"),
                (DcpimParams { alpha: 0.5, ..Default::default() }, "alpha"),
                (DcpimParams { srpt_rounds: 5, ..Default::default() }, "srpt_rounds"),
                (DcpimParams { token_window_bdp: 0.0, ..Default::default() }, "token_window_bdp"),
            ],
        );
    }
}
