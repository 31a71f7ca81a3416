//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion
//! Control in the Datacenter", SIGCOMM 2020) as the SIRD paper's baseline
//! (seed sird-paper-2024.txt Table 2, §5.1): initial window 1 BDP,
//! base_target 2 x RTT, fs_range 5 x RTT, hop scaling h = 1.25 x BDP,
//! fs_max_cwnd 100, fs_min_cwnd 0.1, ECMP, no ECN, and a pool of 40
//! pre-established connections per host pair onto which messages are mapped.
//! SIRD ran the public Swift of the Vertigo simulator (Abdous, Sharafzadeh,
//! Ghorbani, CoNEXT 2021; github.com/hopnets/vertigo_simulations, INET
//! `tcp/flavours/Swift.cc`); where the paper leaves a constant open we take
//! that simulator's value.
//!
//! Congestion control follows the paper's Algorithm 1 per connection, with a
//! fabric window `fcwnd` and an endpoint window `ecwnd`, `cwnd = min(fcwnd,
//! ecwnd)` in packets:
//! - delays from timestamps: the ACK echoes the NIC transmit time `t1` of the
//!   data packet it acknowledges, the data's arrival time `t2` at the receiver
//!   and its switch count; the ACK's own NIC transmit time is `t3`. RTT =
//!   now - t1, endpoint delay = t3 - t2 (the time the ACK waited in the
//!   receiving host: at most the data packet its NIC was serialising, since
//!   receiver processing is instantaneous here), fabric delay = RTT - endpoint delay;
//! - fabric target = base_target + hops * h + clamp(alpha / sqrt(fcwnd) + beta,
//!   0, fs_range), alpha and beta chosen so the flow-scaling term falls from
//!   fs_range at fs_min_cwnd to 0 at fs_max_cwnd (the paper's topology- and
//!   flow-based scaling); the endpoint
//!   target is a constant;
//! - on an ACK each window grows by ai/cwnd per packet acknowledged (ai per
//!   acknowledged packet below one packet) when its delay is below target, else
//!   shrinks by max(1 - beta_md * (delay - target) / delay, 1 - max_mdf), at
//!   most once per RTT; fast recovery and timeouts cut by 1 - max_mdf (once per
//!   RTT); RETX_RESET_THRESHOLD consecutive timeouts reset to min_cwnd;
//! - below one packet of cwnd the connection paces: one packet per RTT/cwnd
//!   after its previous one;
//! - `notify` (Arslan thesis §4.2.1, Fig. 4.2): the delay sample can come from
//!   a switch instead of the ACK. With `"ingress"` or `"egress"` each data
//!   packet yields one congestion notification ([`crate::net::swift_notify`]:
//!   at the first switch where it queues, else at its last switch) carrying
//!   its queueing delay there; the sender takes base RTT + that delay as "the
//!   RTT the packet will observe with current congestion", one packet
//!   acknowledged, and runs the same AIMD on it (no endpoint delay); ACKs then
//!   give no delay sample. `notify_delay_us` delivers notifications that long
//!   after they are generated instead of through the network.
//!
//! Everything else is the TCP-like message transport of
//! [`super::toolkit_tcp`]: byte-stream connections, messages FIFO per
//! connection, MSS segments that never span two messages, one ACK per data
//! packet, out-of-order data kept at the receiver, NewReno fast retransmit on
//! three duplicate ACKs, an RFC 6298 RTO (go-back-N, one segment until an ACK
//! returns) whose spurious expiries are detected from the echoed timestamps and
//! undone (Eifel, RFC 3522/4015). Choices where neither the paper nor SIRD
//! speak are documented in [`SwiftParams::docs`] and docs/protocols/swift.md.

use super::lb::{FlowLb, LbParams, LbScope};
use super::toolkit_tcp::{
    conn_flow, conn_timer_token, pick_connection, split_conn_timer_token, trace_conn, undo_spurious_timeout, NewReno,
    Peers, RetransmitTimer, RtoEstimator, RxPair, SendStream, TxPair,
};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::program::{NotifyAt, ProgramConfig, SwiftNotifyConfig, P_DATA, P_NOTE};
use crate::net::wire::{data_wire, CONTROL_WIRE};
use crate::net::LoadBalancing;
use crate::net::Packet;
use crate::transport::params::{ParamDoc, ProtocolParams, FRACTION, POSITIVE_MULTIPLE};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_FACTOR, MAX_TIMER_US};
use fabriclab_engine::{from_us, Time, S};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[protocol.swift]`. Defaults: SIRD Table 2, then the sources in [`SwiftParams::docs`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SwiftParams {
    /// Initial congestion window (x BDP).
    pub init_cwnd_bdp: f64,
    /// base_target: fabric target delay of a one-hop path with many packets of window (x base RTT).
    pub base_target_rtt: f64,
    /// fs_range: largest flow-scaling addition to the target (x base RTT).
    pub fs_range_rtt: f64,
    /// h: target addition per switch on the path, as the time to drain this
    /// many BDP at the host link rate.
    pub hop_scaling_bdp: f64,
    /// fs_min_cwnd: window (packets) at and below which flow scaling adds fs_range.
    pub fs_min_cwnd: f64,
    /// fs_max_cwnd: window (packets) at and above which flow scaling adds nothing.
    pub fs_max_cwnd: f64,
    /// ai: additive increase, packets per RTT.
    pub ai: f64,
    /// beta: multiplicative-decrease constant.
    pub beta: f64,
    /// max_mdf: largest multiplicative decrease per RTT.
    pub max_mdf: f64,
    /// Smallest window (packets); below one packet the sender paces.
    pub min_cwnd: f64,
    /// Largest window (x BDP).
    pub max_cwnd_bdp: f64,
    /// Endpoint (host) target delay.
    pub endpoint_target_us: f64,
    /// Pre-established connections per host pair; messages are mapped onto them.
    pub connections_per_pair: u32,
    /// Minimum retransmission timeout.
    pub min_rto_us: f64,
    /// Restart at the initial window after an idle period longer than the RTO.
    pub idle_restart: bool,
    /// Switches trim packets that would be dropped; a trimmed segment is NACKed
    /// and resent, data travels below ACKs, NACKs and trimmed headers.
    pub trimming: bool,
    /// Sender-side load balancer per connection (SMaRTT-REPS runs Swift over
    /// REPS); absent: the network's load balancing picks paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lb: Option<LbParams>,
    /// Where the delay sample comes from: the receiver's ACK (plain Swift) or
    /// a switch's congestion notification (Arslan thesis §4.2.1).
    pub notify: Notify,
    /// Switch notifications reach the sender this long after they are
    /// generated, outside the network; absent: they travel back through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify_delay_us: Option<f64>,
}

/// `protocol.swift.notify`: where Swift's congestion signal is generated (thesis Fig. 4.2 right).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Notify {
    /// "Rcvr": the ACK echoes the data's send time (plain Swift).
    #[default]
    Receiver,
    /// "Egr": the switch, when the packet leaves its congested queue.
    Egress,
    /// "Ing": the switch, as soon as the packet arrives.
    Ingress,
}

impl Default for SwiftParams {
    fn default() -> Self {
        SwiftParams {
            init_cwnd_bdp: 1.0,
            base_target_rtt: 2.0,
            fs_range_rtt: 5.0,
            hop_scaling_bdp: 1.25,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.001,
            max_cwnd_bdp: 10.0,
            endpoint_target_us: 15.0,
            connections_per_pair: 40,
            min_rto_us: 200.0,
            idle_restart: true,
            trimming: false,
            lb: None,
            notify: Notify::Receiver,
            notify_delay_us: None,
        }
    }
}

impl Validate for SwiftParams {
    /// The rules between keys; each key's own range is in [`SwiftParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        if self.fs_max_cwnd <= self.fs_min_cwnd {
            return Err(ConfigError::value(
                "protocol.swift.fs_max_cwnd",
                self.fs_max_cwnd,
                &format!("a number > fs_min_cwnd ({})", self.fs_min_cwnd),
            ));
        }
        if let Some(d) = self.notify_delay_us.filter(|_| self.notify == Notify::Receiver) {
            return Err(ConfigError::value(
                "protocol.swift.notify_delay_us",
                d,
                "absent with notify = \"receiver\" (set notify = \"ingress\" or \"egress\" to delay switch notifications)",
            ));
        }
        let Some(lb) = &self.lb else { return Ok(()) };
        if lb.scope == Some(LbScope::Message) {
            // Swift's balancer lives in its connection (one sequence space per
            // connection), so there is no per-message state to choose.
            return Err(ConfigError::value(
                "protocol.swift.lb.scope",
                "\"message\"",
                "\"connection\" (Swift keeps one balancer per connection)",
            ));
        }
        lb.validate_transmission_only("protocol.swift.lb", "Swift")
    }
}

impl ProtocolParams for SwiftParams {
    type Host = Swift;
    const PAPER: &'static str = "Swift (Kumar et al., SIGCOMM 2020), as configured in the SIRD evaluation";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Ecmp;
    const HANDLES_TRIMS: bool = true;

    fn sender_entropy(&self) -> bool {
        self.lb.is_some()
    }

    /// Only with `trimming` on: otherwise data would share class 0 with the
    /// trimmed headers and ACKs that must overtake it.
    fn handles_trims(&self) -> bool {
        self.trimming
    }

    fn trimming(&self) -> Option<Option<u32>> {
        self.trimming.then_some(None) // only packets that would be dropped, as SMaRTT-REPS §3.3
    }

    fn host(&self, info: &HostInfo) -> Swift {
        Swift::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let window = Bound::new("a window in packets", 0.0, MAX_FACTOR).above();
        let own = [
            ("init_cwnd_bdp", POSITIVE_MULTIPLE),
            ("base_target_rtt", POSITIVE_MULTIPLE),
            ("fs_min_cwnd", window),
            ("fs_max_cwnd", window),
            ("ai", Bound::new("a number of packets per RTT", 0.0, MAX_FACTOR).above()),
            ("beta", FRACTION),
            ("max_mdf", Bound::new("a fraction", 0.0, 0.999)),
            ("min_cwnd", Bound::new("a window in packets", 1e-6, 1.0)),
            ("max_cwnd_bdp", POSITIVE_MULTIPLE),
            ("endpoint_target_us", Bound::new("a time in microseconds", 0.0, MAX_TIMER_US).above()),
            ("connections_per_pair", Bound::new("a number of connections", 1.0, 1024.0)),
            ("notify_delay_us", Bound::new("a time in microseconds", 0.0, 1e6)),
        ];
        [&own[..], LbParams::BOUNDS].concat()
    }

    /// Only with switch notifications: plain Swift runs no switch program.
    fn switch_program(&self, _info: &HostInfo) -> Option<ProgramConfig> {
        let at = match self.notify {
            Notify::Receiver => return None,
            Notify::Ingress => NotifyAt::Ingress,
            Notify::Egress => NotifyAt::Egress,
        };
        Some(ProgramConfig::SwiftNotify(SwiftNotifyConfig { at, delay: self.notify_delay_us.map(from_us) }))
    }

    fn docs() -> Vec<ParamDoc> {
        let d = SwiftParams::default();
        let t2 = "SIRD Table 2";
        let vertigo = "Swift's Algorithm 1 leaves the value open; the Swift of the Vertigo simulator SIRD used \
                       (hopnets/vertigo_simulations, Vertigo_Sims/omnetpp_*.ini [Config Swift_ECMP])";
        vec![
            ParamDoc { key: "init_cwnd_bdp", default: d.init_cwnd_bdp.to_string(), meaning: "initial fcwnd and ecwnd (x BDP)", source: t2 },
            ParamDoc { key: "base_target_rtt", default: d.base_target_rtt.to_string(), meaning: "base_target, the fabric target before hop and flow scaling (x base RTT: the fabric's largest unloaded MSS RTT)", source: t2 },
            ParamDoc { key: "fs_range_rtt", default: d.fs_range_rtt.to_string(), meaning: "fs_range, the largest flow-scaling addition to the target (x base RTT)", source: t2 },
            ParamDoc { key: "hop_scaling_bdp", default: d.hop_scaling_bdp.to_string(), meaning: "h, target addition per switch traversed, as the time to drain this many BDP at the host link rate (1.25 BDP = 10 us at 100 Gbps)", source: "SIRD Table 2 gives 'h: 1.25 x BDP'; reading it as a drain time is ours" },
            ParamDoc { key: "fs_min_cwnd", default: d.fs_min_cwnd.to_string(), meaning: "fs_min_cwnd (packets): flow scaling adds fs_range at and below it", source: t2 },
            ParamDoc { key: "fs_max_cwnd", default: d.fs_max_cwnd.to_string(), meaning: "fs_max_cwnd (packets): flow scaling adds nothing at and above it", source: t2 },
            ParamDoc { key: "ai", default: d.ai.to_string(), meaning: "additive increment, packets per RTT", source: vertigo },
            ParamDoc { key: "beta", default: d.beta.to_string(), meaning: "multiplicative-decrease constant: cut by beta x (delay - target) / delay", source: vertigo },
            ParamDoc { key: "max_mdf", default: d.max_mdf.to_string(), meaning: "largest multiplicative decrease per RTT; also the cut on fast recovery and timeout", source: vertigo },
            ParamDoc { key: "min_cwnd", default: d.min_cwnd.to_string(), meaning: "smallest window (packets); below 1 the sender paces one packet per RTT/cwnd", source: "Vertigo MIN_CWND_PACKET_NUMBER (the Swift paper lets cwnd fall far below one packet under large incast)" },
            ParamDoc { key: "max_cwnd_bdp", default: d.max_cwnd_bdp.to_string(), meaning: "largest window (x BDP); bounds the window a lone, NIC-limited flow grows to", source: "Swift Algorithm 1 clamps to max_cwnd without a value; our choice: about the window at which one flow on a 3-switch path sits at its largest target (15 + 30 + 37.5 us at 100 Gbps). Vertigo's 43 packets is below the 1-BDP initial window" },
            ParamDoc { key: "endpoint_target_us", default: d.endpoint_target_us.to_string(), meaning: "endpoint target delay of ecwnd (the simulated endpoint delay is about one packet's serialisation at most, so ecwnd never binds)", source: "our choice (Vertigo disables the endpoint loop)" },
            ParamDoc { key: "connections_per_pair", default: d.connections_per_pair.to_string(), meaning: "pre-established connections per host pair; a message goes to the lowest-index idle one, else a new one, else the least loaded", source: "SIRD §5.1 (mapping rule: ours, as DCTCP's)" },
            ParamDoc { key: "min_rto_us", default: d.min_rto_us.to_string(), meaning: "minimum RTO; RTO = max(min_rto, srtt + 4 rttvar) (RFC 6298), doubled per timeout", source: "our choice, as the DCTCP baseline (Vertigo: 10 ms)" },
            ParamDoc { key: "trimming", default: d.trimming.to_string(), meaning: "switches trim packets that would be dropped; the receiver NACKs a trimmed segment, the sender resends it at once and cuts by max_mdf (at most once per RTT); data moves to class 1 below ACKs, NACKs and trimmed headers", source: "SMaRTT-REPS §4 runs every baseline with trimming; the reaction is Swift's own to a loss (fast recovery)" },
            ParamDoc { key: "idle_restart", default: d.idle_restart.to_string(), meaning: "after idling longer than the RTO, fcwnd = ecwnd = initial window", source: "Vertigo Swift::sendData" },
            ParamDoc { key: "notify", default: "\"receiver\"".into(), meaning: "where the delay sample comes from: \"receiver\" (the ACK, plain Swift), \"ingress\" (a switch, when the data packet arrives: base RTT + the bytes queued ahead of it / link rate) or \"egress\" (a switch, when it leaves the queue: base RTT + the time it waited); one notification per data packet, from the first switch where it queues, else its last switch; ACKs then give no delay sample", source: "Arslan thesis §4.2.1, Fig. 4.2 ('Rcvr', 'Ing', 'Egr'); one notification per packet and where: our choice" },
            ParamDoc { key: "notify_delay_us", default: "absent".into(), meaning: "with notify = ingress/egress: each notification reaches the sender exactly this long after it is generated, outside the network; absent: it travels back through the network as a 64-B control packet in the top class", source: "Arslan thesis §4.2.1, Fig. 4.2 left (a 'constant, configured (i.e., artificial) delay')" },
        ]
    }
}

/// Swift's packets. `tx_slot`/`rx_slot` are the pair's slots at the sender and
/// the receiver (`rx_slot` = [`NO_SLOT`](super::toolkit_tcp::NO_SLOT) until
/// the sender has heard from the receiver); `conn` is the connection's index
/// within the pair.
#[derive(Clone, Copy, Debug)]
pub enum SwiftHeader {
    /// Stream bytes `seq..seq + min(MSS, msg_start + msg_size - seq)` of
    /// connection `conn`, belonging to message `msg` (stream bytes
    /// `msg_start..msg_start + msg_size`). The send time is the NIC's `tx_time`.
    Data { tx_slot: u32, rx_slot: u32, conn: u16, seq: u64, msg: MsgId, msg_start: u64, msg_size: u64 },
    /// Cumulative acknowledgement of all stream bytes below `ack`, triggered by
    /// a data packet sent by the NIC at `t1`, received at `t2` after crossing
    /// `hops` switches.
    /// `ce` and `entropy` echo the data packet's mark and entropy (for a sender load balancer).
    Ack { tx_slot: u32, rx_slot: u32, conn: u16, ack: u64, t1: Time, t2: Time, hops: u8, ce: bool, entropy: u32 },
    /// The data segment at `seq` arrived trimmed (network.trimming): resend it.
    /// `entropy` echoes the trimmed packet's.
    Nack { tx_slot: u32, rx_slot: u32, conn: u16, seq: u64, entropy: u32 },
}

/// Consecutive timeouts after which the window drops to min_cwnd (Swift
/// Algorithm 1's RETX_RESET_THRESHOLD; the value is Vertigo's).
const RETX_RESET_THRESHOLD: u32 = 12;
/// ACKs and NACKs, and data unless trimming moves it one class down.
const PRIO: u8 = 0;

// Timer tokens: [`conn_timer_token`], with bit 63 set for the pacing timer.
const TIMER_PACE: u64 = 1 << 63;

fn token(kind: u64, slot: u32, conn: u16, gen: u32) -> u64 {
    kind | conn_timer_token(slot, conn, gen)
}

/// Algorithm 1's constants, in packets and picoseconds.
#[derive(Clone, Debug)]
struct SwiftConsts {
    ai: f64,
    beta: f64,
    max_mdf: f64,
    min_cwnd: f64,
    max_cwnd: f64,
    base_target: f64,
    hop_scaling: f64,
    fs_range: f64,
    /// Flow scaling fs(cwnd) = fs_alpha / sqrt(cwnd) + fs_beta, clamped to [0, fs_range].
    fs_alpha: f64,
    fs_beta: f64,
    endpoint_target: f64,
}

impl SwiftConsts {
    fn new(p: &SwiftParams, info: &HostInfo) -> Self {
        let rtt = info.base_rtt as f64;
        let fs_range = p.fs_range_rtt * rtt;
        let fs_alpha = fs_range / (1.0 / p.fs_min_cwnd.sqrt() - 1.0 / p.fs_max_cwnd.sqrt());
        let pkts_per_bdp = info.bdp_bytes as f64 / info.mss as f64;
        let bdp_time = info.bdp_bytes as f64 * 8.0 * S as f64 / info.link_rate_bps as f64;
        SwiftConsts {
            ai: p.ai,
            beta: p.beta,
            max_mdf: p.max_mdf,
            min_cwnd: p.min_cwnd,
            max_cwnd: (p.max_cwnd_bdp * pkts_per_bdp).max(p.min_cwnd),
            base_target: p.base_target_rtt * rtt,
            hop_scaling: p.hop_scaling_bdp * bdp_time,
            fs_range,
            fs_alpha,
            fs_beta: -fs_alpha / p.fs_max_cwnd.sqrt(),
            endpoint_target: from_us(p.endpoint_target_us) as f64,
        }
    }

    /// The paper's scaled target: the fabric target delay (ps) of a path of `hops` switches at window `fcwnd`.
    fn fabric_target(&self, hops: u8, fcwnd: f64) -> f64 {
        let fs = (self.fs_alpha / fcwnd.sqrt() + self.fs_beta).clamp(0.0, self.fs_range);
        self.base_target + hops as f64 * self.hop_scaling + fs
    }

    /// One AIMD step of Algorithm 1 for a window and its delay signal.
    fn aimd(&self, cwnd: f64, delay: f64, target: f64, num_acked: f64, can_decrease: bool) -> f64 {
        if delay < target {
            if cwnd >= 1.0 {
                cwnd + self.ai / cwnd * num_acked
            } else {
                cwnd + self.ai * num_acked
            }
        } else if can_decrease {
            cwnd * (1.0 - self.beta * (delay - target) / delay).max(1.0 - self.max_mdf)
        } else {
            cwnd
        }
    }
}

/// One connection's congestion state (Swift Algorithm 1). Windows in packets.
#[derive(Clone, Debug)]
struct SwiftCc {
    fcwnd: f64,
    ecwnd: f64,
    /// min(fcwnd, ecwnd): what the sender obeys.
    cwnd: f64,
    t_last_decrease: Option<Time>,
    /// Latest RTT sample (before the first: the unloaded RTT).
    rtt: Time,
    retransmit_cnt: u32,
    /// Gap between packets while cwnd < 1 (0 otherwise).
    pacing_delay: Time,
}

impl SwiftCc {
    fn new(k: &SwiftConsts, init: f64, rtt: Time) -> Self {
        let mut cc = SwiftCc {
            fcwnd: init,
            ecwnd: init,
            cwnd: init,
            t_last_decrease: None,
            rtt,
            retransmit_cnt: 0,
            pacing_delay: 0,
        };
        cc.finish(k, 0, f64::INFINITY, false);
        cc
    }

    fn can_decrease(&self, now: Time) -> bool {
        self.t_last_decrease.is_none_or(|t| now - t >= self.rtt)
    }

    /// An ACK that advanced the stream: `num_acked` packets, the RTT sample
    /// and its endpoint part (ps), the switches the data crossed.
    fn on_ack(&mut self, k: &SwiftConsts, now: Time, rtt: Time, endpoint_delay: Time, hops: u8, num_acked: f64) {
        let prev = self.cwnd;
        self.rtt = rtt.max(1);
        self.retransmit_cnt = 0;
        let can_decrease = self.can_decrease(now);
        let endpoint = endpoint_delay as f64;
        let fabric = rtt.saturating_sub(endpoint_delay) as f64;
        self.ecwnd = k.aimd(self.ecwnd, endpoint, k.endpoint_target, num_acked, can_decrease);
        let target = k.fabric_target(hops, self.fcwnd);
        self.fcwnd = k.aimd(self.fcwnd, fabric, target, num_acked, can_decrease);
        self.finish(k, now, prev, true);
    }

    /// Fast recovery entered (three duplicate ACKs).
    fn on_fast_recovery(&mut self, k: &SwiftConsts, now: Time) {
        let prev = self.cwnd;
        self.retransmit_cnt = 0;
        if self.can_decrease(now) {
            self.fcwnd *= 1.0 - k.max_mdf;
            self.ecwnd *= 1.0 - k.max_mdf;
        }
        self.finish(k, now, prev, true);
    }

    /// The retransmission timer expired.
    fn on_timeout(&mut self, k: &SwiftConsts, now: Time) {
        let prev = self.cwnd;
        self.retransmit_cnt += 1;
        if self.retransmit_cnt >= RETX_RESET_THRESHOLD {
            self.fcwnd = k.min_cwnd;
            self.ecwnd = k.min_cwnd;
        } else if self.can_decrease(now) {
            self.fcwnd *= 1.0 - k.max_mdf;
            self.ecwnd *= 1.0 - k.max_mdf;
        }
        self.finish(k, now, prev, true);
    }

    /// Idle restart at the initial window.
    fn restart(&mut self, k: &SwiftConsts, init: f64) {
        self.fcwnd = init;
        self.ecwnd = init;
        self.finish(k, 0, f64::INFINITY, false);
    }

    /// Algorithm 1's epilogue: clamp, note a decrease, set the pacing gap.
    /// Algorithm 1 notes a decrease when cwnd <= cwnd_prev; we require a strict
    /// decrease, or a window held at max_cwnd by the clamp would refresh
    /// t_last_decrease on every ACK and never be allowed to decrease.
    fn finish(&mut self, k: &SwiftConsts, now: Time, prev: f64, note: bool) {
        self.fcwnd = self.fcwnd.clamp(k.min_cwnd, k.max_cwnd);
        self.ecwnd = self.ecwnd.clamp(k.min_cwnd, k.max_cwnd);
        self.cwnd = self.fcwnd.min(self.ecwnd);
        if note && self.cwnd < prev {
            self.t_last_decrease = Some(now);
        }
        self.pacing_delay = if self.cwnd < 1.0 { (self.rtt as f64 / self.cwnd).round() as Time } else { 0 };
    }
}

/// Sender side of one connection.
#[derive(Debug)]
struct TxConn {
    stream: SendStream,
    cc: SwiftCc,
    rto: RtoEstimator,
    timer: RetransmitTimer,
    /// NewReno loss recovery (RFC 6582).
    rec: NewReno,
    /// From a timeout until an ACK advances: at most one segment in flight.
    after_timeout: bool,
    /// Time of the first timeout not yet followed by an advancing ACK (spurious-timeout detection).
    timeout_at: Option<Time>,
    last_send: Option<Time>,
    /// The pacing timer event pending, if any.
    pace_at: Option<Time>,
    /// In the host's ready queue.
    queued: bool,
    /// The connection's own load balancer, when Swift chooses entropies.
    lb: Option<FlowLb>,
    /// Trimmed segments (by NACK) to resend, oldest first.
    nacked: VecDeque<u64>,
    /// Switches on the path, from the latest ACK (0 before it): the hop
    /// scaling of a notification's target.
    hops: u8,
    /// The current recovery was entered on a NACK: the trims name every hole,
    /// so partial ACKs resend nothing.
    nack_recovery: bool,
}

impl TxConn {
    /// The window allows a segment now (pacing aside): a pending fast
    /// retransmission, or new data within cwnd (always one segment when nothing is in flight).
    fn window_open(&self, mss: u32) -> bool {
        if !self.nacked.is_empty() || self.rec.retx_due(&self.stream) {
            return true;
        }
        if !self.stream.has_unsent() {
            return false;
        }
        let flight = self.stream.flight();
        if flight == 0 {
            return true;
        }
        !self.after_timeout && (flight + self.stream.next_len(mss)) as f64 <= self.cc.cwnd * mss as f64
    }

    /// While cwnd < 1 packet: the earliest time of the next packet, one RTT/cwnd after the previous one.
    fn paced_until(&self) -> Option<Time> {
        if self.cc.cwnd < 1.0 {
            self.last_send.map(|t| t + self.cc.pacing_delay)
        } else {
            None
        }
    }
}

pub struct Swift {
    id: u32,
    mss: u32,
    k: SwiftConsts,
    /// Initial window, packets.
    init_cwnd: f64,
    conns_per_pair: u32,
    base_rtt: Time,
    min_rto: Time,
    idle_restart: bool,
    lb: Option<LbParams>,
    /// BDP at the base RTT (bytes): REPS explores over it.
    bdp: u64,
    /// Data's class: 0, or 1 under trimming so trimmed headers and ACKs overtake it.
    data_prio: u8,
    /// Delay samples come from switch notifications (`notify` is not "receiver").
    notified: bool,
    tx: Peers<TxPair<TxConn>>,
    rx: Peers<RxPair>,
    acks: VecDeque<Packet<SwiftHeader>>,
    /// Connections (tx slot, index) that may be able to send; round-robin.
    ready: VecDeque<(u32, u16)>,
}

impl Swift {
    pub fn new(p: &SwiftParams, info: &HostInfo) -> Swift {
        let k = SwiftConsts::new(p, info);
        let init_cwnd = (p.init_cwnd_bdp * info.bdp_bytes as f64 / info.mss as f64).clamp(k.min_cwnd, k.max_cwnd);
        Swift {
            id: info.id,
            mss: info.mss,
            k,
            init_cwnd,
            conns_per_pair: p.connections_per_pair.clamp(1, 1024),
            base_rtt: info.base_rtt.max(1),
            min_rto: from_us(p.min_rto_us).max(1),
            idle_restart: p.idle_restart,
            lb: p.lb.clone(),
            bdp: info.base_rtt_bdp() as u64,
            data_prio: (p.trimming as u8).min(info.priorities.saturating_sub(1)),
            notified: p.notify != Notify::Receiver,
            tx: Peers::default(),
            rx: Peers::default(),
            acks: VecDeque::new(),
            ready: VecDeque::new(),
        }
    }

    fn new_conn(&self, key: u64, rng: &mut fabriclab_engine::SimRng) -> TxConn {
        TxConn {
            stream: SendStream::default(),
            cc: SwiftCc::new(&self.k, self.init_cwnd, self.base_rtt),
            rto: RtoEstimator::new(self.base_rtt, self.min_rto),
            timer: RetransmitTimer::default(),
            rec: NewReno::default(),
            after_timeout: false,
            timeout_at: None,
            last_send: None,
            pace_at: None,
            queued: false,
            lb: self.lb.as_ref().map(|p| FlowLb::new(p, key, self.bdp, rng)),
            nacked: VecDeque::new(),
            hops: 0,
            nack_recovery: false,
        }
    }

    /// Flow label: keeps a connection on one ECMP path.
    fn flow(&self, peer: u32, conn: u16) -> u32 {
        conn_flow(peer, self.conns_per_pair, conn)
    }

    /// Queues the connection if it may send now; if only pacing holds it back,
    /// arranges to be woken when the gap has passed.
    fn wake(&mut self, cx: &mut Cx, slot: u32, conn: u16) {
        let mss = self.mss;
        let c = &mut self.tx[slot].conns[conn as usize];
        if c.queued || !c.window_open(mss) {
            return;
        }
        if let Some(at) = c.paced_until().filter(|&at| at > cx.now) {
            if c.pace_at.is_none_or(|t| t > at) {
                c.pace_at = Some(at);
                cx.set_timer(at, token(TIMER_PACE, slot, conn, 0));
            }
            return;
        }
        c.queued = true;
        self.ready.push_back((slot, conn));
    }

    // ---------------- sender ----------------

    /// Builds the next segment of a connection that may send.
    fn send_segment(&mut self, cx: &mut Cx, slot: u32, conn: u16) -> Packet<SwiftHeader> {
        let mss = self.mss;
        let (dst, rx_slot) = (self.tx.host(slot), self.tx[slot].rx_slot);
        let flow = self.flow(dst, conn);
        let c = &mut self.tx[slot].conns[conn as usize];
        let nacked = std::iter::from_fn(|| c.nacked.pop_front()).find_map(|seq| c.stream.segment_at(seq, mss));
        let seg = match nacked {
            Some(seg) => seg,
            None => c.rec.next_segment(&mut c.stream, mss),
        };
        c.last_send = Some(cx.now);
        c.timer.start_if_stopped(cx, c.rto.rto, |g| token(0, slot, conn, g));
        let m = seg.msg;
        let hdr = SwiftHeader::Data {
            tx_slot: slot,
            rx_slot,
            conn,
            seq: seg.seq,
            msg: m.id,
            msg_start: m.start,
            msg_size: m.size,
        };
        let mut p = Packet::new(self.id, dst, data_wire(seg.len), self.data_prio, flow, hdr);
        if self.notified {
            p = p.with_prog(P_DATA);
        }
        if let Some(lb) = &mut c.lb {
            // REPS reads ECN marks even though Swift's window does not.
            p = p.with_ect();
            p.entropy = lb.next_entropy(seg.seq, &mut *cx.rng, None);
        }
        p
    }

    #[allow(clippy::too_many_arguments)]
    fn on_ack(
        &mut self,
        cx: &mut Cx,
        ack_tx_time: Time,
        slot: u32,
        rx_slot: u32,
        conn: u16,
        ack: u64,
        t1: Time,
        t2: Time,
        hops: u8,
        echo: (bool, u32),
    ) {
        let (mss, k, notified) = (self.mss, &self.k, self.notified);
        let Some(c) = self.tx.heard_from(slot, rx_slot, conn) else {
            return;
        };
        let newly = c.stream.ack(ack);
        let mut sample = None;
        if let Some(lb) = &mut c.lb {
            lb.on_ack(echo.1, echo.0, newly.max(1), cx.now, cx.now.saturating_sub(t1));
        }
        if newly > 0 {
            let rtt = cx.now.saturating_sub(t1);
            // Remote queuing: the ACK left the receiver's NIC at t3 = its tx_time.
            let endpoint_delay = ack_tx_time.saturating_sub(t2).min(rtt);
            c.rto.sample(rtt);
            c.after_timeout = false;
            if let Some(at) = c.timeout_at.take() {
                undo_spurious_timeout(cx.now, at, t1, &mut c.stream, &mut c.rto);
            }
            // A recovery entered on a NACK knows its holes: partial ACKs resend nothing.
            c.rec.on_advance(ack, !c.nack_recovery);
            let num_acked = newly.div_ceil(mss as u64) as f64;
            c.hops = hops;
            if notified {
                c.cc.retransmit_cnt = 0; // the window moves on notifications only
            } else {
                c.cc.on_ack(k, cx.now, rtt, endpoint_delay, hops, num_acked);
                sample = Some(rtt);
            }
            c.timer.on_advance(cx, c.stream.has_unacked(), c.rto.rto, |g| token(0, slot, conn, g));
        } else if c.stream.is_duplicate(ack) && c.rec.on_dupack(ack, c.stream.snd_max()) {
            // Fast retransmit.
            c.cc.on_fast_recovery(k, cx.now);
            c.nack_recovery = false;
        }
        self.trace(cx, slot, conn, sample);
        self.wake(cx, slot, conn);
    }

    /// A switch's congestion notification for one data packet of the
    /// connection, which queued `wait` at the switch: Algorithm 1 on the RTT
    /// that packet will observe, base RTT + `wait`, for one packet.
    fn on_notification(&mut self, cx: &mut Cx, slot: u32, conn: u16, wait: Time) {
        let (k, rtt) = (&self.k, self.base_rtt + wait);
        let Some(c) = self.tx.conn_mut(slot, conn) else {
            return;
        };
        c.cc.on_ack(k, cx.now, rtt, 0, c.hops, 1.0);
        self.trace(cx, slot, conn, Some(rtt));
        self.wake(cx, slot, conn);
    }

    /// A trimmed segment: a loss signal that names its packet. Resend it at
    /// once and cut the window as on fast recovery (at most once per RTT);
    /// the recovery it opens ignores duplicate ACKs up to `snd_max`.
    fn on_nack(&mut self, cx: &mut Cx, slot: u32, rx_slot: u32, conn: u16, seq: u64, entropy: u32) {
        let k = &self.k;
        let Some(c) = self.tx.heard_from(slot, rx_slot, conn) else {
            return;
        };
        if seq < c.stream.snd_una() || c.nacked.contains(&seq) {
            return;
        }
        if let Some(lb) = &mut c.lb {
            lb.on_nack(entropy);
        }
        c.cc.on_fast_recovery(k, cx.now);
        if !c.rec.in_recovery {
            c.rec.enter(c.stream.snd_max(), false);
            c.nack_recovery = true;
        }
        c.nacked.push_back(seq);
        self.wake(cx, slot, conn);
    }

    /// Traces the connection's window (packets, as bytes) and the RTT sample if there is one.
    #[inline]
    fn trace(&self, cx: &mut Cx, slot: u32, conn: u16, rtt: Option<Time>) {
        if cx.tracing() {
            let cwnd = self.tx[slot].conns[conn as usize].cc.cwnd * self.mss as f64;
            trace_conn(cx, &self.tx, slot, |peer| self.flow(peer, conn), rtt, cwnd);
        }
    }

    fn on_timeout(&mut self, cx: &mut Cx, slot: u32, conn: u16, gen: u32) {
        let k = &self.k;
        let Some(c) = self.tx.conn_mut(slot, conn) else {
            return;
        };
        if !c.timer.fire(cx, gen, |g| token(0, slot, conn, g)) {
            return;
        }
        c.timeout_at.get_or_insert(cx.now);
        c.cc.on_timeout(k, cx.now);
        if let Some(lb) = &mut c.lb {
            lb.on_timeout();
        }
        c.stream.go_back_n();
        c.nacked.clear();
        c.after_timeout = true;
        c.rec.on_timeout(c.stream.snd_max());
        c.rto.backoff();
        let at = cx.now + c.rto.rto;
        c.timer.start(cx, at, |g| token(0, slot, conn, g));
        self.trace(cx, slot, conn, None);
        self.wake(cx, slot, conn);
    }

    fn on_pace_timer(&mut self, cx: &mut Cx, slot: u32, conn: u16) {
        let Some(c) = self.tx.conn_mut(slot, conn) else {
            return;
        };
        match c.pace_at {
            Some(t) if t <= cx.now => c.pace_at = None,
            _ => return, // superseded by an earlier event that already fired
        }
        self.wake(cx, slot, conn);
    }

    // ---------------- receiver ----------------

    #[allow(clippy::too_many_arguments)]
    fn on_data(
        &mut self,
        cx: &mut Cx,
        pkt: &Packet<SwiftHeader>,
        tx_slot: u32,
        rx_slot: u32,
        conn: u16,
        seq: u64,
        msg: MsgId,
        msg_start: u64,
        msg_size: u64,
    ) {
        let src = pkt.src;
        let slot = self.rx.slot_hinted(rx_slot, src, RxPair::default);
        if pkt.trimmed() {
            let hdr = SwiftHeader::Nack { tx_slot, rx_slot: slot, conn, seq, entropy: pkt.entropy };
            let flow = self.flow(src, conn);
            self.acks.push_back(Packet::new(self.id, src, CONTROL_WIRE, PRIO, flow, hdr));
            return;
        }
        let ack = self.rx.stream_in(slot, conn).receive(cx, seq, msg, msg_start, msg_size, self.mss);
        let (ce, entropy) = (pkt.ce(), pkt.entropy);
        let hdr = SwiftHeader::Ack {
            tx_slot,
            rx_slot: slot,
            conn,
            ack,
            t1: pkt.tx_time,
            t2: cx.now,
            hops: pkt.hops,
            ce,
            entropy,
        };
        let flow = self.flow(src, conn);
        self.acks.push_back(Packet::new(self.id, src, CONTROL_WIRE, PRIO, flow, hdr));
    }
}

impl Transport for Swift {
    type Header = SwiftHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        debug_assert!(msg.size > 0, "Swift carries messages of at least one byte");
        if msg.size == 0 {
            return;
        }
        let slot = self.tx.slot(msg.dst, TxPair::new);
        let conn = pick_connection(self.tx[slot].conns.iter().map(|c| c.stream.outstanding()), self.conns_per_pair);
        if conn == self.tx[slot].conns.len() {
            let key = (self.id as u64) << 40 ^ (msg.dst as u64) << 20 ^ conn as u64;
            let c = self.new_conn(key, &mut *cx.rng);
            self.tx[slot].conns.push(c);
        }
        let (k, init, restart) = (&self.k, self.init_cwnd, self.idle_restart);
        let c = &mut self.tx[slot].conns[conn];
        if restart && c.stream.outstanding() == 0 && c.last_send.is_some_and(|t| cx.now - t >= c.rto.rto) {
            c.cc.restart(k, init);
        }
        c.stream.push(msg.id, msg.size);
        self.trace(cx, slot, conn as u16, None);
        self.wake(cx, slot, conn as u16);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<SwiftHeader>) {
        match pkt.hdr {
            SwiftHeader::Data { tx_slot, conn, .. } if pkt.prog & P_NOTE != 0 => {
                self.on_notification(cx, tx_slot, conn, pkt.prog_qlen as Time)
            }
            SwiftHeader::Data { tx_slot, rx_slot, conn, seq, msg, msg_start, msg_size } => {
                self.on_data(cx, pkt, tx_slot, rx_slot, conn, seq, msg, msg_start, msg_size)
            }
            SwiftHeader::Ack { tx_slot, rx_slot, conn, ack, t1, t2, hops, ce, entropy } => {
                self.on_ack(cx, pkt.tx_time, tx_slot, rx_slot, conn, ack, t1, t2, hops, (ce, entropy))
            }
            SwiftHeader::Nack { tx_slot, rx_slot, conn, seq, entropy } => {
                self.on_nack(cx, tx_slot, rx_slot, conn, seq, entropy)
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let (slot, conn, gen) = split_conn_timer_token(token);
        if token & TIMER_PACE != 0 {
            self.on_pace_timer(cx, slot, conn);
        } else {
            self.on_timeout(cx, slot, conn, gen);
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<SwiftHeader>> {
        if let Some(p) = self.acks.pop_front() {
            return Some(p);
        }
        while let Some((slot, conn)) = self.ready.pop_front() {
            self.tx[slot].conns[conn as usize].queued = false;
            let c = &self.tx[slot].conns[conn as usize];
            if !c.window_open(self.mss) || c.paced_until().is_some_and(|at| at > cx.now) {
                self.wake(cx, slot, conn); // sets the pacing timer if that is what holds it
                continue;
            }
            let pkt = self.send_segment(cx, slot, conn);
            self.wake(cx, slot, conn); // back of the round-robin queue if it can send more
            return Some(pkt);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::toolkit_tcp::testing::{self, tcp_pipe, Direct, Pipe, MSS};
    use super::super::toolkit_tcp::NO_SLOT;
    use super::*;
    use fabriclab_engine::US;

    const RTT: Time = 7_500_000; // 7.5 us
    /// A start time late enough for hand-made RTT samples.
    const T0: Time = 1_000 * US;

    fn info(id: u32, base_rtt: Time) -> HostInfo {
        HostInfo::at_100gbps(id, 4, 1, base_rtt)
    }

    /// One transport (host 0) driven by hand; it sends to host 1.
    impl Direct<Swift> {
        fn new(p: &SwiftParams) -> Self {
            Direct::driving(Swift::new(p, &info(0, RTT)))
        }
        /// An ACK of `ack` for data sent at `t1`, received at `t2`; the ACK left the receiver at `t3`.
        fn ack(&mut self, ack: u64, t1: Time, t2: Time, t3: Time, hops: u8) {
            let hdr = SwiftHeader::Ack { tx_slot: 0, rx_slot: 0, conn: 0, ack, t1, t2, hops, ce: false, entropy: 0 };
            let mut p = Packet::new(1, 0, CONTROL_WIRE, 0, 0, hdr);
            p.tx_time = t3;
            self.with(|t, cx| t.on_packet(cx, &p));
        }
        /// An ACK now with fabric delay `rtt` and no endpoint delay.
        fn ack_rtt(&mut self, ack: u64, rtt: Time) {
            let t2 = self.now - rtt / 2;
            self.ack(ack, self.now - rtt, t2, t2, 1);
        }
        fn nack(&mut self, seq: u64) {
            let hdr = SwiftHeader::Nack { tx_slot: 0, rx_slot: 0, conn: 0, seq, entropy: 0 };
            let p = Packet::new(1, 0, CONTROL_WIRE, 0, 0, hdr);
            self.with(|t, cx| t.on_packet(cx, &p));
        }
        fn conn(&self) -> &TxConn {
            &self.t.tx[0].conns[0]
        }
    }

    fn seq_of(p: &Packet<SwiftHeader>) -> u64 {
        match p.hdr {
            SwiftHeader::Data { seq, .. } => seq,
            h => panic!("not data: {h:?}"),
        }
    }

    #[test]
    fn docs_cover_every_parameter_and_errors_name_keys() {
        let v = serde_json::to_value(SwiftParams::default()).unwrap();
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        let mut documented: Vec<String> = SwiftParams::docs().iter().map(|d| d.key.to_string()).collect();
        keys.push("notify_delay_us".into()); // absent by default
        keys.sort();
        documented.sort();
        assert_eq!(keys, documented);
        assert!(SwiftParams::docs().iter().all(|d| !d.source.is_empty() && !d.meaning.is_empty()));
        assert!(SwiftParams::default().validate().is_ok());
        let bad = SwiftParams { fs_max_cwnd: 0.05, ..Default::default() };
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("protocol.swift.fs_max_cwnd") && e.contains("0.05"), "{e}");
        let bad = SwiftParams { max_mdf: 1.0, ..Default::default() };
        assert!(crate::transport::params::bound_refuses(&bad, "max_mdf"));
    }

    #[test]
    fn switch_notifications_replace_the_acks_delay_sample() {
        use crate::net::program::notify_back;
        let p = SwiftParams { notify: Notify::Ingress, ..Default::default() };
        let mut d = Direct::new(&p);
        d.now = T0;
        d.start(1, 1, 100 * MSS);
        let sent = d.drain();
        assert!(sent.iter().all(|s| s.prog == P_DATA));
        let w0 = d.conn().cc.cwnd;
        // An ACK 10 RTTs late advances the stream but gives no delay sample.
        d.now += RTT;
        d.ack_rtt(MSS, 10 * RTT);
        assert_eq!((d.conn().cc.cwnd, d.conn().stream.snd_una(), d.conn().hops), (w0, MSS, 1));
        // A notification with no queueing: base RTT, below target, one packet's AI.
        let note = |wait: Time| {
            let mut n = notify_back(&sent[1], wait);
            (n.src, n.dst) = (1, 0);
            n
        };
        d.with(|t, cx| t.on_packet(cx, &note(0)));
        assert_eq!(d.conn().cc.rtt, RTT);
        assert!((d.conn().cc.cwnd - (w0 + 1.0 / w0)).abs() < 1e-9);
        // 50 us of queueing: the RTT sample is base + 50 us, above target: one cut.
        let w1 = d.conn().cc.cwnd;
        let rtt = RTT + 50 * US;
        let target = d.t.k.fabric_target(1, w1);
        d.with(|t, cx| t.on_packet(cx, &note(50 * US)));
        let cut = (1.0 - p.beta * (rtt as f64 - target) / rtt as f64).max(1.0 - p.max_mdf);
        assert_eq!(d.conn().cc.rtt, rtt);
        assert!((d.conn().cc.cwnd - w1 * cut).abs() < 1e-9, "{} vs {}", d.conn().cc.cwnd, w1 * cut);
        // Within that RTT, no second cut.
        let w2 = d.conn().cc.cwnd;
        d.with(|t, cx| t.on_packet(cx, &note(50 * US)));
        assert_eq!(d.conn().cc.cwnd, w2);
    }

    #[test]
    fn notify_delay_needs_a_switch_notification_and_a_sane_value() {
        let e = SwiftParams { notify_delay_us: Some(2.0), ..Default::default() }.validate().unwrap_err().to_string();
        assert!(e.contains("protocol.swift.notify_delay_us") && e.contains("receiver"), "{e}");
        let bad = SwiftParams { notify: Notify::Egress, notify_delay_us: Some(-1.0), ..Default::default() };
        assert!(crate::transport::params::bound_refuses(&bad, "notify_delay_us"));
        let ok = SwiftParams { notify: Notify::Egress, notify_delay_us: Some(0.0), ..Default::default() };
        assert!(ok.validate().is_ok());
        // Plain Swift asks switches for nothing.
        assert!(SwiftParams::default().switch_program(&info(0, RTT)).is_none());
    }

    #[test]
    fn target_delay_scales_with_hops_and_flows() {
        let k = SwiftConsts::new(&SwiftParams::default(), &info(0, RTT));
        let (base, h, range) = (15.0 * US as f64, 10.0 * US as f64, 37.5 * US as f64);
        assert!(
            (k.base_target - base).abs() < 1.0 && (k.hop_scaling - h).abs() < 1.0 && (k.fs_range - range).abs() < 1.0
        );
        let close = |a: f64, b: f64| (a - b).abs() < 1.0; // within 1 ps
                                                          // Flow scaling: fs_range at fs_min_cwnd and below, 0 at fs_max_cwnd and above.
        assert!(close(k.fabric_target(0, 0.1), base + range));
        assert!(close(k.fabric_target(0, 0.001), base + range));
        assert!(close(k.fabric_target(3, 100.0), base + 3.0 * h));
        assert!(close(k.fabric_target(1, 5000.0), base + h));
        // In between: alpha / sqrt(cwnd) + beta, alpha = fs_range / (1/sqrt(0.1) - 1/sqrt(100)).
        let alpha = range / (1.0 / 0.1f64.sqrt() - 0.1);
        assert!(close(k.fabric_target(1, 25.0), base + h + alpha / 5.0 - alpha / 10.0));
    }

    #[test]
    fn initial_window_is_one_bdp_without_ecn_or_priority() {
        let mut d = Direct::new(&SwiftParams::default());
        d.start(7, 1, 300_000);
        let pkts = d.drain();
        // 68 full segments = 99,280 bytes; a 69th would exceed 100,000.
        assert_eq!(pkts.len(), 68);
        for (i, p) in pkts.iter().enumerate() {
            assert_eq!(seq_of(p), i as u64 * MSS);
            assert_eq!((p.wire_bytes, p.prio, p.ecn, p.dst, p.flow), (data_wire(1460), 0, 0, 1, 40));
        }
        assert_eq!(d.timers.len(), 1, "one retransmission timer");
    }

    #[test]
    fn additive_increase_below_target_and_one_decrease_per_rtt_above() {
        let mut d = Direct::new(&SwiftParams::default());
        d.now = T0;
        d.start(1, 1, 10_000_000);
        d.drain();
        let w0 = d.conn().cc.fcwnd;
        assert!((w0 - 100_000.0 / 1460.0).abs() < 1e-9);
        // Delay below the target (15 + 10 us + flow scaling): + ai / cwnd per packet.
        d.now += 10 * US;
        d.ack_rtt(MSS, 10 * US);
        assert!((d.conn().cc.fcwnd - (w0 + 1.0 / w0)).abs() < 1e-9);
        let w1 = d.conn().cc.fcwnd;
        let target = d.t.k.fabric_target(1, w1);
        // Delay 2 x target: cut by max(1 - 0.8 x 1/2, 1 - 0.5) = 0.6.
        d.now += 10 * US;
        let t_cut = d.now;
        d.ack_rtt(2 * MSS, (2.0 * target) as Time);
        assert!((d.conn().cc.fcwnd - 0.6 * w1).abs() < 1e-6, "{}", d.conn().cc.fcwnd);
        assert_eq!(d.conn().cc.t_last_decrease, Some(t_cut));
        // A much larger delay is capped at max_mdf, but not within the same RTT.
        let w2 = d.conn().cc.fcwnd;
        d.now += US;
        d.ack_rtt(3 * MSS, 20 * target as Time);
        assert_eq!(d.conn().cc.fcwnd, w2, "at most one decrease per RTT");
        d.now = t_cut + d.conn().cc.rtt;
        d.ack_rtt(4 * MSS, 20 * target as Time);
        assert!((d.conn().cc.fcwnd - 0.5 * w2).abs() < 1e-9, "capped at max_mdf");
        assert_eq!(d.conn().cc.cwnd, d.conn().cc.fcwnd.min(d.conn().cc.ecwnd));
    }

    #[test]
    fn endpoint_delay_drives_the_endpoint_window_only() {
        let mut d = Direct::new(&SwiftParams::default());
        d.start(1, 1, 10_000_000);
        d.drain();
        let w0 = d.conn().cc.fcwnd;
        // RTT 40 us, of which 30 us the ACK waited in the receiver (t3 - t2):
        // fabric delay 10 us is below target, endpoint delay 30 us is 2 x its 15 us target.
        d.now = 40 * US;
        d.ack(MSS, 0, 5 * US, 35 * US, 1);
        let cc = &d.conn().cc;
        assert!((cc.fcwnd - (w0 + 1.0 / w0)).abs() < 1e-9, "fabric window grows");
        assert!((cc.ecwnd - 0.6 * w0).abs() < 1e-9, "endpoint window cut by 1 - 0.8 x (30 - 15) / 30");
        assert_eq!(cc.cwnd, cc.ecwnd);
        assert_eq!(cc.rtt, 40 * US);
    }

    #[test]
    fn below_one_packet_the_sender_paces_one_packet_per_rtt_over_cwnd() {
        // 0.005 BDP = 0.34 packets of initial window.
        let p = SwiftParams { init_cwnd_bdp: 0.005, ..Default::default() };
        let mut d = Direct::new(&p);
        d.start(1, 1, 100 * MSS);
        assert_eq!(d.drain().len(), 1, "one packet when nothing is in flight");
        let w0 = 0.005 * 100_000.0 / 1460.0;
        assert!((d.conn().cc.cwnd - w0).abs() < 1e-9);
        // Its ACK reports a delay far above target: cwnd halves (max_mdf) to 0.17 packets.
        d.now = 400 * US;
        d.ack_rtt(MSS, 400 * US);
        let cc = d.conn().cc.clone();
        assert!((cc.cwnd - 0.5 * w0).abs() < 1e-9, "{}", cc.cwnd);
        assert_eq!(cc.pacing_delay, (400.0 * US as f64 / cc.cwnd).round() as Time);
        // Nothing in flight, but the next packet waits until RTT/cwnd after the previous one (sent at 0).
        assert!(d.poll().is_none());
        let (at, token) = *d.timers.last().unwrap();
        assert_eq!(at, cc.pacing_delay);
        assert!(token & TIMER_PACE != 0);
        d.fire(at - 1, token); // an event before its time changes nothing
        assert!(d.poll().is_none());
        d.fire(at, token);
        assert_eq!(seq_of(&d.poll().unwrap()), MSS);
        assert!(d.poll().is_none());
        // Its ACK (delay below target) adds ai per packet acknowledged: above one packet, no more pacing.
        d.now = at + 20 * US;
        d.ack_rtt(2 * MSS, 20 * US);
        assert!((d.conn().cc.cwnd - (0.5 * w0 + 1.0)).abs() < 1e-9);
        assert_eq!(d.conn().cc.pacing_delay, 0);
        assert_eq!(seq_of(&d.poll().unwrap()), 2 * MSS);
    }

    #[test]
    fn fast_retransmit_cuts_by_max_mdf_and_resends_the_hole() {
        let mut d = Direct::new(&SwiftParams::default());
        d.start(1, 1, 1_000_000);
        d.drain();
        d.now = 10 * US;
        d.ack_rtt(MSS, 10 * US);
        d.drain();
        let w = d.conn().cc.cwnd;
        for _ in 0..3 {
            d.ack_rtt(MSS, 10 * US);
        }
        assert!((d.conn().cc.cwnd - 0.5 * w).abs() < 1e-9);
        assert_eq!(seq_of(&d.poll().unwrap()), MSS, "fast retransmit");
        // A partial ACK retransmits the next hole at once.
        d.now = 20 * US;
        d.ack_rtt(5 * MSS, 10 * US);
        assert_eq!(seq_of(&d.poll().unwrap()), 5 * MSS);
    }

    #[test]
    fn a_nack_resends_its_segment_at_once_and_cuts_at_most_once_per_rtt() {
        let p = SwiftParams { trimming: true, ..Default::default() };
        let mut d = Direct::new(&p);
        d.t = Swift::new(&p, &HostInfo { priorities: 8, ..info(0, RTT) });
        d.start(1, 1, 1_000_000);
        let pkts = d.drain();
        assert!(pkts.iter().all(|p| p.prio == 1), "data in class 1, below ACKs, NACKs and trimmed headers");
        let w = d.conn().cc.cwnd;
        d.now = 10 * US;
        d.nack(5 * MSS);
        assert!((d.conn().cc.cwnd - 0.5 * w).abs() < 1e-9, "cut by max_mdf");
        assert_eq!(seq_of(&d.poll().unwrap()), 5 * MSS, "the trimmed segment, at once");
        d.nack(7 * MSS);
        d.nack(7 * MSS); // a duplicate NACK resends nothing more
        assert!((d.conn().cc.cwnd - 0.5 * w).abs() < 1e-9, "at most one cut per RTT");
        assert_eq!(seq_of(&d.poll().unwrap()), 7 * MSS);
        // The duplicate ACKs the holes cause start no fast retransmission: the NACKs named them.
        for _ in 0..4 {
            d.ack_rtt(0, 10 * US);
        }
        assert!(d.poll().is_none());
        // A partial ACK resends nothing either, and a NACK below snd_una is stale.
        d.ack_rtt(5 * MSS, 10 * US);
        d.nack(2 * MSS);
        assert!(d.poll().is_none());
    }

    #[test]
    fn a_trimmed_segment_is_answered_by_a_nack() {
        let mut d = Direct::new(&SwiftParams { trimming: true, ..Default::default() });
        let hdr =
            SwiftHeader::Data { tx_slot: 3, rx_slot: NO_SLOT, conn: 2, seq: 0, msg: 9, msg_start: 0, msg_size: 5000 };
        let mut p = Packet::new(1, 0, CONTROL_WIRE, 0, 0, hdr);
        p.flags |= crate::net::TRIMMED;
        p.entropy = 77;
        d.with(|t, cx| t.on_packet(cx, &p));
        let nack = d.poll().unwrap();
        assert!(
            matches!(nack.hdr, SwiftHeader::Nack { tx_slot: 3, conn: 2, seq: 0, entropy: 77, .. }),
            "{:?}",
            nack.hdr
        );
        assert_eq!((nack.prio, nack.wire_bytes, nack.dst), (0, CONTROL_WIRE, 1));
        assert!(d.app.is_empty(), "nothing delivered");
    }

    #[test]
    fn timeout_goes_back_one_segment_and_a_spurious_one_is_undone() {
        let mut d = Direct::new(&SwiftParams::default());
        d.start(1, 1, 100 * MSS);
        assert_eq!(d.drain().len(), 68);
        let (at, token) = d.timers[0];
        assert_eq!(at, 200 * US, "RTO = max(min_rto, 3 x unloaded RTT)");
        let w = d.conn().cc.cwnd;
        d.fire(at, token);
        assert!((d.conn().cc.cwnd - 0.5 * w).abs() < 1e-9, "cut by max_mdf");
        assert_eq!(seq_of(&d.poll().unwrap()), 0, "go-back-N");
        assert!(d.poll().is_none(), "one segment until an ACK returns");
        assert_eq!(d.conn().rto.rto, 400 * US, "backed off");
        // The ACK of the original first segment (sent at 0) arrives: the timeout was spurious.
        d.now = at + US;
        d.ack(MSS, 0, at - 3 * US, at - 3 * US, 1);
        assert_eq!(d.conn().stream.snd_nxt(), 68 * MSS, "go-back-N stopped");
        assert!(d.conn().rto.rto >= at + US, "RTO adapted to the delay that caused it");
        assert!(d.poll().is_none(), "the halved window is full");
        d.ack(68 * MSS, 0, at - 3 * US, at - 3 * US, 1);
        assert_eq!(seq_of(&d.poll().unwrap()), 68 * MSS, "resumes with new data");
    }

    #[test]
    fn idle_connection_restarts_at_the_initial_window() {
        let mut d = Direct::new(&SwiftParams::default());
        d.now = T0;
        d.start(1, 1, 10 * MSS);
        d.drain();
        d.now += 300 * US;
        d.ack_rtt(10 * MSS, 300 * US); // huge delay: cut
        assert!(d.conn().cc.cwnd < 40.0);
        d.now += 10 * US;
        d.start(2, 1, 10);
        assert!(d.conn().cc.cwnd < 40.0, "idle for less than the RTO");
        d.drain();
        d.now += 10 * US;
        d.ack_rtt(10 * MSS + 10, 10 * US);
        d.now += 2 * d.conn().rto.rto;
        d.start(3, 1, 10);
        assert!((d.conn().cc.cwnd - 100_000.0 / 1460.0).abs() < 1e-9);
    }

    // ---------- two hosts over a pipe ----------

    /// `n` Swift hosts on the shared lossy test pipe (100 Gbps, 2 us).
    fn pipe(n: u32, p: &SwiftParams) -> Pipe<Swift> {
        tcp_pipe(n, |h, _, rtt| Swift::new(p, &info(h, rtt)))
    }

    fn data_seq(h: &SwiftHeader) -> Option<u64> {
        match *h {
            SwiftHeader::Data { seq, .. } => Some(seq),
            _ => None,
        }
    }

    // The loss checks shared with DCTCP (toolkit_tcp::testing): the same NewReno and RTO.
    testing::loss_tests!(Swift, |n| pipe(n, &SwiftParams::default()), data_seq);

    #[test]
    fn hop_count_raises_the_target() {
        // A queue-free pipe whose packets claim `hops` switches: the RTT (9 us)
        // is below the 15 us base target, so the window only grows; with a delay
        // of 20 us it is cut on a 0-hop path but still grows with one hop (+10 us).
        for (hops, grows) in [(0u8, false), (1, true)] {
            let mut d = Direct::new(&SwiftParams { fs_range_rtt: 0.0, ..Default::default() });
            d.start(1, 1, 10 * MSS);
            d.drain();
            let w = d.conn().cc.fcwnd;
            d.now = 20 * US;
            d.ack(MSS, 0, 10 * US, 10 * US, hops);
            assert_eq!(d.conn().cc.fcwnd > w, grows, "hops {hops}");
        }
    }
}
