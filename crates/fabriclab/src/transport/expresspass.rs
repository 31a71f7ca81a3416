//! ExpressPass: credit-scheduled, delay-bounded congestion control (Cho, Jang,
//! Han, SIGCOMM 2017), as the SIRD evaluation ran it: the authors' ns-2 code
//! (github.com/kaist-ina/ns2-xpass, `xpass/xpass.cc`) with SIRD Table 2's
//! alpha = w_init = 1/16 and target loss 1/8.
//!
//! A flow is one message (ns-2 runs one agent pair per flow). Its sender asks
//! with a CREDIT_REQUEST; the receiver then paces 84-byte CREDITs at
//! `cur_rate`, starting at `alpha` x the maximum credit rate (one credit per
//! link time of a credit plus a full data frame, 84/1622 of the link). Every
//! credit that reaches the sender releases one data packet at once, which
//! echoes the credit's sequence number. Switches shape credits per port
//! (`network.credit_shaping`) and drop the excess, so the data that comes back
//! on the same links (symmetric ECMP, one flow label for both directions)
//! never exceeds any link's rate. The receiver measures credit loss from the
//! echoed sequence numbers and, once per RTT, runs the credit feedback
//! control: ns-2's `credit_feedback_control()` by default (what SIRD ran),
//! or the paper's Algorithm 1. When the sender has nothing left, or a RTT's
//! worth of credit covers what it has left, it sends CREDIT_STOP.
//!
//! Host side (ns-2 models every host uplink as a shaped port): all of a
//! host's credits leave through one queue of `host_credit_queue_packets`,
//! at most one per credit spacing (burst of two, ns-2 `max_tokens_`), and
//! ahead of data; credits that overflow it are dropped, which the receiver
//! sees as credit loss exactly like a drop in a switch.
//!
//! Loss recovery (ns-2's NACK, made selective and closed against stalls):
//! packets of a flow follow one path and one FIFO class, so a gap in data
//! indices, or a CREDIT_STOP announcing more packets than arrived, means loss;
//! the receiver NACKs the missing range and the sender resends it first with
//! the next credits, asking for credit again if it had stopped. Timers repeat
//! lost CREDIT_REQUESTs and NACKs (the receiver knows the message size, so once
//! credit has stopped it NACKs whatever is still missing), re-ask for credit
//! when credits dry up with data left, and a credit reaching a closed flow
//! repeats its CREDIT_STOP.

use super::aeolus::FirstRtt;
use super::toolkit::{IdMap, IdSet, Reassembly};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet, UNSCHEDULED};
use crate::transport::params::{ParamDoc, ProtocolParams};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_PACKETS};
use fabriclab_engine::{from_us, serialization_time, Time};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which rate update runs once per RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    /// Paper Algorithm 1: increase `cur_rate <- (1 - w) cur_rate + w max_rate`
    /// with `w <- (w + w_max) / 2` after an increase; on loss above target
    /// `cur_rate <- cur_rate (1 - loss)(1 + target_loss)`, `w <- max(w / 2, w_min)`.
    Paper,
    /// ns-2 `credit_feedback_control()`: target loss scaled by
    /// (1 - cur_rate / max_rate); decrease to the measured arrival rate of
    /// credits x (1 + target); `w <- min(w + 0.05, w_max)` after an increase.
    Ns2,
}

/// `[protocol.expresspass]`. Defaults: SIRD Table 2 and the ns-2 code SIRD ran.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ExpressPassParams {
    /// Initial credit rate, as a fraction of the maximum credit rate.
    pub alpha: f64,
    /// Initial aggressiveness factor w.
    pub w_init: f64,
    /// Credit loss tolerated before the rate decreases.
    pub target_loss: f64,
    pub w_max: f64,
    pub w_min: f64,
    pub feedback: Feedback,
    /// Credit gaps are scaled by a uniform factor in [1 - jitter, 1 + jitter].
    pub jitter: f64,
    /// Flows of fewer packets start at alpha x packets / this (0 = off).
    pub small_flow_packets: u32,
    /// The sender stops credit once a RTT's worth of credit covers what it has left.
    pub early_credit_stop: bool,
    /// Host credit queue, in credits.
    pub host_credit_queue_packets: u32,
    /// Repeats of CREDIT_REQUEST and NACK.
    pub retransmit_timeout_us: f64,
}

impl Default for ExpressPassParams {
    fn default() -> Self {
        ExpressPassParams {
            alpha: 1.0 / 16.0,
            w_init: 1.0 / 16.0,
            target_loss: 1.0 / 8.0,
            w_max: 0.5,
            w_min: 0.01,
            feedback: Feedback::Ns2,
            jitter: 0.1,
            small_flow_packets: 40,
            early_credit_stop: true,
            host_credit_queue_packets: 8,
            retransmit_timeout_us: 100.0,
        }
    }
}

impl Validate for ExpressPassParams {
    /// The rules between keys; each key's own range is in [`ExpressPassParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        let k = |s: &str| format!("protocol.expresspass.{s}");
        if self.w_min > self.w_max {
            return Err(ConfigError::value(&k("w_min"), self.w_min, &format!("at most w_max ({})", self.w_max)));
        }
        if !(self.w_min..=self.w_max).contains(&self.w_init) {
            let allowed = format!("a number in [w_min, w_max] = [{}, {}]", self.w_min, self.w_max);
            return Err(ConfigError::value(&k("w_init"), self.w_init, &allowed));
        }
        Ok(())
    }
}

impl ProtocolParams for ExpressPassParams {
    type Host = ExpressPass;
    const PAPER: &'static str =
        "Credit-Scheduled Delay-Bounded Congestion Control for Datacenters (Cho, Jang, Han, SIGCOMM 2017)";
    /// Data must retrace its credits' path.
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::SymmetricEcmp;

    fn credit_shaping(&self) -> bool {
        true
    }

    fn host(&self, info: &HostInfo) -> ExpressPass {
        ExpressPass::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let share = Bound::new("a fraction", 0.0, 1.0).above();
        vec![
            // Credits are paced at t_c / rate: below 1e-6 of the maximum rate the
            // gap overflows picoseconds and the pacing timer wraps into a loop.
            ("alpha", Bound::new("a fraction of the maximum credit rate", 1e-6, 1.0)),
            ("w_init", share),
            ("target_loss", Bound::new("a fraction", 0.0, 1.0).below()),
            ("w_max", share),
            ("w_min", share),
            ("jitter", Bound::new("a fraction", 0.0, 1.0).below()),
            ("host_credit_queue_packets", Bound::new("a number of credits", 1.0, MAX_PACKETS)),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = ExpressPassParams::default();
        vec![
            ParamDoc {
                key: "alpha",
                default: d.alpha.to_string(),
                meaning: "initial credit rate (x max credit rate)",
                source: "SIRD Table 2 (ns-2 alpha_)",
            },
            ParamDoc {
                key: "w_init",
                default: d.w_init.to_string(),
                meaning: "initial aggressiveness factor w",
                source: "SIRD Table 2; ns-2 large-scale script",
            },
            ParamDoc {
                key: "target_loss",
                default: d.target_loss.to_string(),
                meaning: "credit loss tolerated before decreasing (ns2 feedback: scaled by 1 - cur/max)",
                source: "SIRD Table 2 (ns-2 target_loss_scaling_)",
            },
            ParamDoc {
                key: "w_max",
                default: d.w_max.to_string(),
                meaning: "largest aggressiveness factor",
                source: "ExpressPass Alg. 1; ns-2 cap 0.5",
            },
            ParamDoc {
                key: "w_min",
                default: d.w_min.to_string(),
                meaning: "smallest aggressiveness factor",
                source: "ns-2 min_w_",
            },
            ParamDoc {
                key: "feedback",
                default: "\"ns2\"".into(),
                meaning: "rate update: paper (Algorithm 1) | ns2 (the code SIRD ran)",
                source: "ExpressPass Alg. 1; ns-2 credit_feedback_control()",
            },
            ParamDoc {
                key: "jitter",
                default: d.jitter.to_string(),
                meaning: "credit gaps scaled by uniform [1 - jitter, 1 + jitter]",
                source: "ns-2 min/max_jitter_ = -/+0.1",
            },
            ParamDoc {
                key: "small_flow_packets",
                default: d.small_flow_packets.to_string(),
                meaning: "flows of n < this packets start at alpha x n / this (0 = off)",
                source: "ns-2 recv_credit_request()",
            },
            ParamDoc {
                key: "early_credit_stop",
                default: d.early_credit_stop.to_string(),
                meaning: "stop credit once a RTT's credits cover the packets left",
                source: "ns-2 recv_credit()",
            },
            ParamDoc {
                key: "host_credit_queue_packets",
                default: d.host_credit_queue_packets.to_string(),
                meaning: "credits the host uplink holds before dropping",
                source: "ns-2 large-scale script: credit buffer 8 x 84 B",
            },
            ParamDoc {
                key: "retransmit_timeout_us",
                default: d.retransmit_timeout_us.to_string(),
                meaning: "repeat of CREDIT_REQUEST and NACK",
                source: "ns-2 large-scale script: 100 us",
            },
        ]
    }
}

/// Packet types (ns-2 PT_XPASS_*).
#[derive(Clone, Copy, Debug)]
pub enum ExpressPassHeader {
    /// Sender -> receiver: credit `msg`; `remaining` packets are left to send.
    CreditRequest { msg: MsgId, size: u64, remaining: u32 },
    /// Receiver -> sender: allows one data packet.
    Credit { msg: MsgId, seq: u32, sent_at: Time },
    /// Packet `index`, sent on credit `credit_seq` (echoed with its send time).
    Data { msg: MsgId, index: u32, credit_seq: u32, credit_sent_at: Time },
    /// Sender -> receiver: stop crediting; packets `0..sent` have been sent.
    CreditStop { msg: MsgId, sent: u32 },
    /// Receiver -> sender: packets `from..to` were lost.
    Nack { msg: MsgId, from: u32, to: u32 },
    /// EP(A): pre-credit packet `index` of `msg` (`size` bytes), sent before any credit.
    Unscheduled { msg: MsgId, size: u64, index: u32 },
    /// EP(A): pre-credit packet `index` arrived.
    UnschedAck { msg: MsgId, index: u32 },
    /// EP(A): follows the pre-credit packets `0..upto` of `msg`.
    Probe { msg: MsgId, upto: u32 },
    /// EP(A): the PROBE that followed packets `0..upto` arrived.
    ProbeAck { msg: MsgId, upto: u32 },
}

type H = ExpressPassHeader;

/// Everything uses one class (ns-2: one data queue besides the credit queue),
/// so a flow's packets stay in order and a gap means loss.
const PRIO: u8 = 0;
/// Host credit burst, in credits (ns-2 `max_tokens_` = 2 x 84 B).
const HOST_CREDIT_BURST: u64 = 2;
/// ns-2 RTT estimator gain and additive w step (ns2 feedback).
const RTT_GAIN: f64 = 0.2;
const NS2_W_STEP: f64 = 0.05;
/// NACK ranges repeated per timeout.
const MAX_NACK_RANGES: usize = 16;
/// A closed sender flow is kept this many timeouts for late NACKs.
const LINGER_TIMEOUTS: u64 = 10;

// Timer tokens: kind (4 bits) | generation (20 bits) | message id (40 bits).
const KIND_SHIFT: u32 = 60;
const GEN_SHIFT: u32 = 40;
const GEN_MASK: u64 = (1 << 20) - 1;
const MSG_MASK: u64 = (1 << GEN_SHIFT) - 1;
const T_PACE: u64 = 1;
const T_RX: u64 = 2;
const T_TX: u64 = 3;
const T_WAKE: u64 = 4;

fn token(kind: u64, gen: u32, msg: MsgId) -> u64 {
    debug_assert!(msg <= MSG_MASK);
    kind << KIND_SHIFT | (gen as u64 & GEN_MASK) << GEN_SHIFT | msg
}

/// Receiver-side state of one flow (ns-2 "credit send" side).
struct InFlow {
    /// Highest index of the pre-credit packets (EP(A)) plus one; 0 for plain ExpressPass.
    unsched: u32,
    src: u32,
    reasm: Reassembly,
    /// Crediting: between CREDIT_REQUEST and CREDIT_STOP.
    active: bool,
    /// Every packet arrived; the flow lives on, crediting, until CREDIT_STOP.
    done: bool,
    // Algorithm 1.
    /// cur_rate, as a fraction of the maximum credit rate.
    cur_rate: f64,
    w: f64,
    /// The last update was an increase.
    increasing: bool,
    last_update: Time,
    /// Smoothed credit-to-data RTT; 0 until the first data packet.
    rtt: Time,
    // Credit loss: sequence numbers sent and echoed.
    next_seq: u32,
    expect_seq: u32,
    credits_total: u32,
    credits_dropped: u32,
    pace_gen: u32,
    // Loss recovery.
    /// One past the highest data index seen (or announced by CREDIT_STOP).
    high: u32,
    progress_at: Time,
    rx_gen: u32,
}

impl InFlow {
    /// A flow not yet credited (`done`: already delivered, so nothing to receive).
    fn new(src: u32, size: u64, done: bool, mss: u32, now: Time) -> InFlow {
        InFlow {
            unsched: 0,
            src,
            reasm: Reassembly::new(if done { 0 } else { size }, mss),
            active: false,
            done,
            cur_rate: 0.0,
            w: 0.0,
            increasing: false,
            last_update: now,
            rtt: 0,
            next_seq: 0,
            expect_seq: 0,
            credits_total: 0,
            credits_dropped: 0,
            pace_gen: 0,
            high: 0,
            progress_at: now,
            rx_gen: 0,
        }
    }

    /// NACK range for packets `from..to` found missing: pre-credit packets are
    /// Aeolus's to recover (ACKs and PROBE), not the NACK's.
    fn nack_range(&self, from: u32, to: u32) -> Option<(u32, u32)> {
        let from = from.max(self.unsched.min(to));
        (from < to).then_some((from, to))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TxState {
    /// CREDIT_REQUEST sent, no credit yet.
    Requesting,
    Receiving,
    StopSent,
    /// Waiting one RTT to see whether credits still come (CREDIT_STOP lost).
    CloseWait,
    /// Done; kept a while for late NACKs.
    Closed,
}

/// Sender-side state of one flow (ns-2 "credit receive" side).
struct OutFlow {
    dst: u32,
    size: u64,
    n_pkts: u32,
    next_new: u32,
    /// Packet ranges to resend, served first.
    rtx: VecDeque<(u32, u32)>,
    state: TxState,
    req_at: Time,
    /// CREDIT_REQUEST to first credit.
    rtt: Time,
    last_credit: Time,
    credits_in_period: u32,
    period_start: Time,
    /// Credits received since CREDIT_STOP (ns-2 credit_recved_).
    credits_after_stop: u32,
    gen: u32,
    /// EP(A): the pre-credit packets' fates, and whether their burst is over (ended by the
    /// last of them or by the first credit; its PROBE, if any, has left).
    first_rtt: Option<FirstRtt>,
    burst_over: bool,
}

impl OutFlow {
    fn remaining(&self) -> u32 {
        let first_rtt = self.first_rtt.as_ref().map_or(0, FirstRtt::pending);
        (self.n_pkts - self.next_new) + self.rtx.iter().map(|r| r.1 - r.0).sum::<u32>() + first_rtt
    }
    fn has_data(&self) -> bool {
        self.next_new < self.n_pkts || !self.rtx.is_empty() || self.first_rtt.as_ref().is_some_and(FirstRtt::has_lost)
    }
    /// Nothing to send and no pre-credit packet of unknown fate: credit may stop.
    fn settled(&self) -> bool {
        !self.has_data() && self.first_rtt.as_ref().is_none_or(|f| f.in_flight() == 0)
    }
    fn next_index(&mut self) -> u32 {
        if let Some(r) = self.rtx.front_mut() {
            let i = r.0;
            r.0 += 1;
            if r.0 >= r.1 {
                self.rtx.pop_front();
            }
            i
        } else if let Some(i) = self.first_rtt.as_mut().and_then(FirstRtt::pop_lost) {
            // Aeolus: a lost pre-credit packet goes again on this credit, before new data.
            i
        } else {
            self.next_new += 1;
            self.next_new - 1
        }
    }
}

/// Parameters in picoseconds and fractions.
#[derive(Clone, Copy)]
struct Cfg {
    id: u32,
    mss: u32,
    /// Credit spacing at the maximum credit rate: link time of a credit plus a full frame.
    t_c: Time,
    alpha: f64,
    w_init: f64,
    target_loss: f64,
    w_max: f64,
    w_min: f64,
    feedback: Feedback,
    jitter: f64,
    small_flow_packets: u32,
    early_stop: bool,
    timeout: Time,
    /// EP(A): pre-credit packets per message (one BDP); 0 = plain ExpressPass.
    unsched_pkts: u32,
}

/// The host NIC's queues: credits (shaped, bounded) ahead of one FIFO for the rest.
struct Nic {
    credits: VecDeque<Packet<H>>,
    capacity: usize,
    /// Theoretical arrival time of the credit shaper (GCRA).
    tat: Time,
    wake_pending: bool,
    fifo: VecDeque<Packet<H>>,
    credit_drops: u64,
    /// EP(A): messages still sending pre-credit packets, served in turn at line rate.
    unsched: VecDeque<MsgId>,
}

pub struct ExpressPass {
    cfg: Cfg,
    nic: Nic,
    inbound: IdMap<MsgId, InFlow>,
    /// Messages fully received and forgotten, so late packets do not reopen them.
    completed: IdSet<MsgId>,
    outbound: IdMap<MsgId, OutFlow>,
}

impl ExpressPass {
    pub fn new(p: &ExpressPassParams, info: &HostInfo) -> ExpressPass {
        let t_c = serialization_time((CONTROL_WIRE + data_wire(info.mss)) as u64, info.link_rate_bps);
        ExpressPass {
            cfg: Cfg {
                id: info.id,
                mss: info.mss,
                t_c,
                alpha: p.alpha,
                w_init: p.w_init,
                target_loss: p.target_loss,
                w_max: p.w_max,
                w_min: p.w_min,
                feedback: p.feedback,
                jitter: p.jitter,
                small_flow_packets: p.small_flow_packets,
                early_stop: p.early_credit_stop,
                timeout: from_us(p.retransmit_timeout_us).max(1),
                unsched_pkts: 0,
            },
            nic: Nic {
                credits: VecDeque::with_capacity(p.host_credit_queue_packets as usize),
                capacity: p.host_credit_queue_packets as usize,
                tat: 0,
                wake_pending: false,
                fifo: VecDeque::new(),
                credit_drops: 0,
                unsched: VecDeque::new(),
            },
            inbound: IdMap::default(),
            completed: IdSet::default(),
            outbound: IdMap::default(),
        }
    }

    /// ExpressPass(A): ExpressPass with Aeolus's first RTT ([`super::aeolus`]):
    /// one BDP of pre-credit packets at line rate, until the first credit.
    pub fn with_aeolus(p: &ExpressPassParams, info: &HostInfo) -> ExpressPass {
        let mut ep = ExpressPass::new(p, info);
        ep.cfg.unsched_pkts = packets_for(info.bdp_bytes.max(1), info.mss) as u32;
        ep
    }

    /// Pre-credit packets of a message of `size` bytes (none for plain ExpressPass).
    fn unsched_of(&self, size: u64) -> u32 {
        (packets_for(size, self.cfg.mss) as u32).min(self.cfg.unsched_pkts)
    }

    /// Credits this host generated but dropped because its credit queue was full.
    pub fn host_credit_drops(&self) -> u64 {
        self.nic.credit_drops
    }

    fn control(&self, dst: u32, msg: MsgId, hdr: H) -> Packet<H> {
        Packet::new(self.cfg.id, dst, CONTROL_WIRE, PRIO, msg as u32, hdr)
    }

    // ---------------------------------------------------------------- receiver

    /// CREDIT_REQUEST: start (or restart) crediting at the initial rate.
    fn on_credit_request(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, remaining: u32) {
        let cfg = self.cfg;
        let f = match self.inbound.get_mut(&msg) {
            Some(f) if f.active => return,
            Some(f) => f,
            None => {
                // A request for a message already delivered (the sender re-asks after
                // a stale NACK): credit it like ns-2 would, until its CREDIT_STOP.
                let done = self.completed.contains(&msg);
                self.inbound.entry(msg).or_insert(InFlow::new(src, size, done, cfg.mss, cx.now))
            }
        };
        // ns-2 init(): fresh w and rate; small flows start slower.
        let scale = match cfg.small_flow_packets {
            0 => 1.0,
            n => (remaining as f64 / n as f64).min(1.0),
        };
        f.cur_rate = (cfg.alpha * scale).max(f64::MIN_POSITIVE);
        f.w = cfg.w_init;
        if !f.done {
            f.unsched = (packets_for(size, cfg.mss) as u32).min(cfg.unsched_pkts);
        }
        f.increasing = false;
        f.last_update = cx.now;
        f.active = true;
        send_credit(&cfg, &mut self.nic, cx, msg, f);
    }

    fn on_pace(&mut self, cx: &mut Cx, msg: MsgId, gen: u64) {
        let cfg = self.cfg;
        if let Some(f) = self.inbound.get_mut(&msg) {
            if f.active && gen == f.pace_gen as u64 & GEN_MASK {
                send_credit(&cfg, &mut self.nic, cx, msg, f);
            }
        }
    }

    fn on_data(&mut self, cx: &mut Cx, msg: MsgId, index: u32, credit_seq: u32, credit_sent_at: Time) {
        let cfg = self.cfg;
        let Some(f) = self.inbound.get_mut(&msg) else {
            return;
        };
        // Credit loss from the echoed sequence numbers (ns-2 recv_data()).
        if credit_seq >= f.expect_seq {
            f.credits_total += credit_seq - f.expect_seq + 1;
            f.credits_dropped += credit_seq - f.expect_seq;
            f.expect_seq = credit_seq + 1;
        }
        let sample = cx.now.saturating_sub(credit_sent_at).max(1);
        f.rtt = if f.rtt == 0 { sample } else { ((1.0 - RTT_GAIN) * f.rtt as f64 + RTT_GAIN * sample as f64) as Time };
        if f.done {
            return;
        }
        let src = f.src;
        if index >= f.high {
            // In-order delivery per flow: packets skipped over are lost.
            if let Some((from, to)) = f.nack_range(f.high, index) {
                let nack = H::Nack { msg, from, to };
                self.nic.fifo.push_back(Packet::new(cfg.id, src, CONTROL_WIRE, PRIO, msg as u32, nack));
                arm_rx(&cfg, cx, msg, f);
            }
            f.high = index + 1;
        }
        self.accept(cx, msg, index);
    }

    /// Data packet `index` of an open, incomplete flow arrived.
    fn accept(&mut self, cx: &mut Cx, msg: MsgId, index: u32) {
        let mss = self.cfg.mss;
        let f = self.inbound.get_mut(&msg).expect("open flow");
        let payload = payload_of(f.reasm.size(), mss, index as u64);
        if !f.reasm.insert(index as u64, payload) {
            return;
        }
        f.progress_at = cx.now;
        cx.deliver(msg, payload);
        if f.reasm.is_complete() {
            f.done = true;
            cx.complete(msg);
            self.completed.insert(msg);
            if !f.active {
                self.inbound.remove(&msg);
            }
        }
    }

    /// EP(A): a pre-credit packet. ACK it; it may come before the CREDIT_REQUEST
    /// was heard (a lost request), so it opens the flow if need be.
    fn on_unscheduled(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, index: u32) {
        let cfg = self.cfg;
        let ack = H::UnschedAck { msg, index };
        self.nic.fifo.push_back(Packet::new(cfg.id, src, CONTROL_WIRE, PRIO, msg as u32, ack));
        if self.completed.contains(&msg) && !self.inbound.contains_key(&msg) {
            return;
        }
        let unsched = self.unsched_of(size);
        let f = self.inbound.entry(msg).or_insert_with(|| InFlow::new(src, size, false, cfg.mss, cx.now));
        f.unsched = unsched;
        if f.done {
            return;
        }
        f.high = f.high.max(index + 1);
        self.accept(cx, msg, index);
    }

    fn on_credit_stop(&mut self, cx: &mut Cx, msg: MsgId, sent: u32) {
        let cfg = self.cfg;
        let Some(f) = self.inbound.get_mut(&msg) else {
            return;
        };
        f.active = false;
        f.pace_gen = f.pace_gen.wrapping_add(1);
        if f.done {
            self.inbound.remove(&msg);
            return;
        }
        // Everything sent before the CREDIT_STOP has arrived or is lost.
        if sent > f.high {
            if let Some((from, to)) = f.nack_range(f.high, sent) {
                let nack = H::Nack { msg, from, to };
                self.nic.fifo.push_back(Packet::new(cfg.id, f.src, CONTROL_WIRE, PRIO, msg as u32, nack));
            }
            f.high = sent;
        }
        // Packets sent after it (early stop) are covered by the timer.
        arm_rx(&cfg, cx, msg, f);
    }

    /// An incomplete flow made no progress for a timeout: NACK what is known
    /// missing (below the highest index seen while credit flows; anything
    /// missing once the sender has stopped, since the receiver knows the size).
    fn on_rx_timer(&mut self, cx: &mut Cx, msg: MsgId, gen: u64) {
        let cfg = self.cfg;
        let Some(f) = self.inbound.get_mut(&msg) else {
            return;
        };
        if f.done || gen != f.rx_gen as u64 & GEN_MASK {
            return;
        }
        let limit = if f.active { f.high as u64 } else { f.reasm.n_packets() };
        let Some(first) = f.reasm.first_missing(0).filter(|&i| i < limit) else {
            return;
        };
        if cx.now < f.progress_at + cfg.timeout {
            f.rx_gen = f.rx_gen.wrapping_add(1);
            cx.set_timer(f.progress_at + cfg.timeout, token(T_RX, f.rx_gen, msg));
            return;
        }
        let mut from = first;
        for _ in 0..MAX_NACK_RANGES {
            let to = (from..limit).find(|&i| f.reasm.has(i)).unwrap_or(limit);
            let nack = H::Nack { msg, from: from as u32, to: to as u32 };
            self.nic.fifo.push_back(Packet::new(cfg.id, f.src, CONTROL_WIRE, PRIO, msg as u32, nack));
            match f.reasm.first_missing(to).filter(|&i| i < limit) {
                Some(i) => from = i,
                None => break,
            }
        }
        arm_rx(&cfg, cx, msg, f);
    }

    // ---------------------------------------------------------------- sender

    fn request_credit(&mut self, cx: &mut Cx, msg: MsgId) {
        let timeout = self.cfg.timeout;
        let f = self.outbound.get_mut(&msg).expect("flow");
        f.state = TxState::Requesting;
        f.req_at = cx.now;
        let (dst, size, remaining) = (f.dst, f.size, f.remaining());
        arm_tx(cx, msg, f, timeout);
        let p = self.control(dst, msg, H::CreditRequest { msg, size, remaining });
        self.nic.fifo.push_back(p);
    }

    fn send_stop(&mut self, cx: &mut Cx, msg: MsgId) {
        let f = self.outbound.get_mut(&msg).expect("flow");
        f.state = TxState::StopSent;
        let (dst, sent, rtt) = (f.dst, f.next_new, f.rtt);
        arm_tx(cx, msg, f, 2 * rtt);
        let p = self.control(dst, msg, H::CreditStop { msg, sent });
        self.nic.fifo.push_back(p);
    }

    /// A credit arrived: one data packet leaves at once (ns-2 recv_credit()).
    fn on_credit(&mut self, cx: &mut Cx, msg: MsgId, seq: u32, sent_at: Time) {
        let cfg = self.cfg;
        let Some(f) = self.outbound.get_mut(&msg) else {
            return; // wasted
        };
        f.credits_in_period += 1;
        f.last_credit = cx.now;
        if f.state == TxState::Requesting {
            f.state = TxState::Receiving;
            f.rtt = (cx.now - f.req_at).max(1);
            f.period_start = cx.now;
            // No more CREDIT_REQUEST repeats; watch for credits drying up instead.
            arm_tx(cx, msg, f, cfg.timeout);
            // Aeolus: the first credit ends the pre-credit burst, whether or not any of it
            // has left (a flow that asks for credit again later, after a loss, must not
            // resume it); a PROBE closes it if some did.
            if f.first_rtt.is_some() && !f.burst_over {
                f.burst_over = true;
                let upto = f.first_rtt.as_ref().map_or(0, FirstRtt::sent);
                if upto > 0 {
                    let probe = Packet::new(cfg.id, f.dst, CONTROL_WIRE, PRIO, msg as u32, H::Probe { msg, upto });
                    self.nic.fifo.push_back(probe);
                }
            }
        }
        match f.state {
            TxState::Receiving | TxState::StopSent => {
                if f.state == TxState::StopSent {
                    f.credits_after_stop += 1;
                }
                if f.has_data() {
                    let index = f.next_index();
                    let payload = payload_of(f.size, cfg.mss, index as u64);
                    let hdr = H::Data { msg, index, credit_seq: seq, credit_sent_at: sent_at };
                    let p = Packet::new(cfg.id, f.dst, data_wire(payload), PRIO, msg as u32, hdr);
                    self.nic.fifo.push_back(p);
                }
            }
            TxState::CloseWait => f.credits_after_stop += 1,
            TxState::Closed => {
                // Credit after closing: the receiver never got the CREDIT_STOP
                // (ns-2 ignores it and leaves the receiver crediting forever).
                self.send_stop(cx, msg);
                return;
            }
            TxState::Requesting => {}
        }
        if f.state != TxState::Receiving {
            return;
        }
        if f.settled() {
            self.send_stop(cx, msg);
        } else if cfg.early_stop && cx.now - f.period_start >= f.rtt {
            // The credits of the last RTT are about to cover what is left.
            let stop = f.credits_in_period >= f.remaining();
            f.credits_in_period = 0;
            f.period_start = cx.now;
            if stop {
                self.send_stop(cx, msg);
            }
        }
    }

    fn on_nack(&mut self, cx: &mut Cx, msg: MsgId, from: u32, to: u32) {
        let Some(f) = self.outbound.get_mut(&msg) else {
            return;
        };
        // Packets not sent yet go out anyway.
        let to = to.min(f.next_new);
        if from < to && !f.rtx.iter().any(|&(a, b)| a <= from && to <= b) {
            f.rtx.push_back((from, to));
        }
        if matches!(f.state, TxState::StopSent | TxState::CloseWait | TxState::Closed) && f.has_data() {
            self.request_credit(cx, msg);
        }
    }

    /// EP(A): an ACK of a pre-credit packet, or of the PROBE after them.
    fn on_first_rtt_news(&mut self, cx: &mut Cx, msg: MsgId, ack: Option<u32>, probe_upto: Option<u32>) {
        let Some(f) = self.outbound.get_mut(&msg) else {
            return;
        };
        let Some(first) = f.first_rtt.as_mut() else {
            return;
        };
        if let Some(i) = ack {
            first.on_ack(i);
        }
        if let Some(upto) = probe_upto {
            first.on_probe_ack(upto);
        }
        // Losses found after credit stopped (early stop): ask again.
        if matches!(f.state, TxState::StopSent | TxState::CloseWait | TxState::Closed) && f.has_data() {
            self.request_credit(cx, msg);
        }
    }

    /// EP(A): the next pre-credit packet, while the head message has had no
    /// credit and has some left; the PROBE follows the last one.
    fn poll_unscheduled(&mut self) -> Option<Packet<H>> {
        let cfg = self.cfg;
        while let Some(&msg) = self.nic.unsched.front() {
            let f = match self.outbound.get_mut(&msg) {
                Some(f) if f.state == TxState::Requesting && !f.burst_over => f,
                _ => {
                    self.nic.unsched.pop_front();
                    continue;
                }
            };
            let first = f.first_rtt.as_mut().expect("EP(A) flow");
            let index = f.next_new;
            f.next_new += 1;
            first.on_sent(index);
            if first.all_sent() {
                f.burst_over = true;
                let probe = H::Probe { msg, upto: first.sent() };
                self.nic.fifo.push_back(Packet::new(cfg.id, f.dst, CONTROL_WIRE, PRIO, msg as u32, probe));
                self.nic.unsched.pop_front();
            }
            let payload = payload_of(f.size, cfg.mss, index as u64);
            let hdr = H::Unscheduled { msg, size: f.size, index };
            return Some(Packet::new(cfg.id, f.dst, data_wire(payload), PRIO, msg as u32, hdr).with_flags(UNSCHEDULED));
        }
        None
    }

    /// ns-2 handle_sender_retransmit().
    fn on_tx_timer(&mut self, cx: &mut Cx, msg: MsgId, gen: u64) {
        let timeout = self.cfg.timeout;
        let Some(f) = self.outbound.get_mut(&msg) else {
            return;
        };
        if gen != f.gen as u64 & GEN_MASK {
            return;
        }
        match f.state {
            TxState::Requesting => self.request_credit(cx, msg),
            TxState::StopSent if f.has_data() => self.request_credit(cx, msg),
            TxState::StopSent => {
                f.state = TxState::CloseWait;
                f.credits_after_stop = 0;
                let rtt = f.rtt;
                arm_tx(cx, msg, f, rtt);
            }
            TxState::CloseWait if f.credits_after_stop > 0 => {
                f.credits_after_stop = 0;
                self.send_stop(cx, msg);
            }
            TxState::CloseWait => {
                f.state = TxState::Closed;
                arm_tx(cx, msg, f, LINGER_TIMEOUTS * timeout);
            }
            TxState::Closed => {
                self.outbound.remove(&msg);
            }
            // Credits stopped coming with data left (the CREDIT_REQUEST that
            // answered a NACK was lost, the credits seen were stale): ask again.
            // ns-2 has no timer in this state and would wait forever.
            TxState::Receiving if cx.now >= f.last_credit + timeout => self.request_credit(cx, msg),
            TxState::Receiving => {
                let at = f.last_credit + timeout - cx.now;
                arm_tx(cx, msg, f, at);
            }
        }
    }
}

/// Sets the sender flow's timer, replacing any pending one.
fn arm_tx(cx: &mut Cx, msg: MsgId, f: &mut OutFlow, after: Time) {
    f.gen = f.gen.wrapping_add(1);
    cx.set_timer(cx.now + after.max(1), token(T_TX, f.gen, msg));
}

/// Sets the receiver flow's NACK timer, replacing any pending one.
fn arm_rx(cfg: &Cfg, cx: &mut Cx, msg: MsgId, f: &mut InFlow) {
    f.rx_gen = f.rx_gen.wrapping_add(1);
    cx.set_timer(cx.now + cfg.timeout, token(T_RX, f.rx_gen, msg));
}

/// ns-2 send_credit(): feedback control, one credit into the host's credit
/// queue (dropped if full), and the next credit after 1 / cur_rate, jittered.
fn send_credit(cfg: &Cfg, nic: &mut Nic, cx: &mut Cx, msg: MsgId, f: &mut InFlow) {
    credit_feedback(cfg, f, cx.now);
    let seq = f.next_seq;
    f.next_seq = f.next_seq.wrapping_add(1);
    if nic.credits.len() < nic.capacity {
        let mut p = Packet::new(cfg.id, f.src, CONTROL_WIRE, PRIO, msg as u32, H::Credit { msg, seq, sent_at: cx.now });
        p.credit = true;
        nic.credits.push_back(p);
    } else {
        nic.credit_drops += 1;
    }
    let mut gap = cfg.t_c as f64 / f.cur_rate;
    if cfg.jitter > 0.0 {
        gap *= 1.0 + cfg.jitter * (2.0 * cx.rng.gen::<f64>() - 1.0);
    }
    f.pace_gen = f.pace_gen.wrapping_add(1);
    cx.set_timer(cx.now + (gap.round() as Time).max(1), token(T_PACE, f.pace_gen, msg));
}

/// Credit feedback control, once per RTT (paper Algorithm 1 / ns-2).
fn credit_feedback(cfg: &Cfg, f: &mut InFlow, now: Time) {
    if f.rtt == 0 || now - f.last_update < f.rtt || f.credits_total == 0 {
        return;
    }
    let loss = f.credits_dropped as f64 / f.credits_total as f64;
    let min_rate = cfg.t_c as f64 / f.rtt as f64; // one credit per RTT
    let old = f.cur_rate;
    match cfg.feedback {
        Feedback::Paper => {
            if loss <= cfg.target_loss {
                if f.increasing {
                    f.w = (f.w + cfg.w_max) / 2.0;
                }
                f.cur_rate = (1.0 - f.w) * f.cur_rate + f.w;
                f.increasing = true;
            } else {
                f.cur_rate *= (1.0 - loss) * (1.0 + cfg.target_loss);
                f.w = (f.w / 2.0).max(cfg.w_min);
                f.increasing = false;
            }
        }
        Feedback::Ns2 => {
            let target = (1.0 - f.cur_rate) * cfg.target_loss;
            if loss > target {
                f.cur_rate = if loss >= 1.0 {
                    min_rate
                } else {
                    // The rate at which credits got through, plus the target.
                    let received = (f.credits_total - f.credits_dropped) as f64;
                    received * cfg.t_c as f64 / (now - f.last_update) as f64 * (1.0 + target)
                }
                .min(old);
                f.w = (f.w / 2.0).max(cfg.w_min);
                f.increasing = false;
            } else {
                if f.increasing {
                    f.w = (f.w + NS2_W_STEP).min(cfg.w_max);
                }
                f.increasing = true;
                if f.cur_rate < 1.0 {
                    f.cur_rate = f.w + (1.0 - f.w) * f.cur_rate;
                }
            }
        }
    }
    f.cur_rate = f.cur_rate.min(1.0).max(min_rate);
    f.credits_total = 0;
    f.credits_dropped = 0;
    f.last_update = now;
}

impl Transport for ExpressPass {
    type Header = ExpressPassHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let n_pkts = packets_for(msg.size, self.cfg.mss) as u32;
        let f = OutFlow {
            dst: msg.dst,
            size: msg.size,
            n_pkts,
            next_new: 0,
            rtx: VecDeque::new(),
            state: TxState::Requesting,
            req_at: cx.now,
            rtt: 0,
            last_credit: cx.now,
            credits_in_period: 0,
            period_start: cx.now,
            credits_after_stop: 0,
            gen: 0,
            first_rtt: None,
            burst_over: false,
        };
        let unsched = self.unsched_of(msg.size);
        self.outbound.insert(msg.id, f);
        self.request_credit(cx, msg.id);
        if unsched > 0 {
            self.outbound.get_mut(&msg.id).expect("just inserted").first_rtt = Some(FirstRtt::new(unsched));
            self.nic.unsched.push_back(msg.id);
        }
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<H>) {
        match pkt.hdr {
            H::CreditRequest { msg, size, remaining } => self.on_credit_request(cx, pkt.src, msg, size, remaining),
            H::Credit { msg, seq, sent_at } => self.on_credit(cx, msg, seq, sent_at),
            H::Data { msg, index, credit_seq, credit_sent_at } => {
                self.on_data(cx, msg, index, credit_seq, credit_sent_at)
            }
            H::CreditStop { msg, sent } => self.on_credit_stop(cx, msg, sent),
            H::Nack { msg, from, to } => self.on_nack(cx, msg, from, to),
            H::Unscheduled { msg, size, index } => self.on_unscheduled(cx, pkt.src, msg, size, index),
            H::UnschedAck { msg, index } => self.on_first_rtt_news(cx, msg, Some(index), None),
            H::Probe { msg, upto } => {
                let ack = Packet::new(self.cfg.id, pkt.src, CONTROL_WIRE, PRIO, msg as u32, H::ProbeAck { msg, upto });
                self.nic.fifo.push_back(ack);
            }
            H::ProbeAck { msg, upto } => self.on_first_rtt_news(cx, msg, None, Some(upto)),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let msg = token & MSG_MASK;
        let gen = (token >> GEN_SHIFT) & GEN_MASK;
        match token >> KIND_SHIFT {
            T_PACE => self.on_pace(cx, msg, gen),
            T_RX => self.on_rx_timer(cx, msg, gen),
            T_TX => self.on_tx_timer(cx, msg, gen),
            T_WAKE => self.nic.wake_pending = false,
            _ => {}
        }
    }

    /// Credits first when the host shaper allows one, then the FIFO of data
    /// and control packets.
    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<H>> {
        let nic = &mut self.nic;
        let t_c = self.cfg.t_c;
        let eligible_at = nic.tat.saturating_sub((HOST_CREDIT_BURST - 1) * t_c);
        if !nic.credits.is_empty() && cx.now >= eligible_at {
            nic.tat = nic.tat.max(cx.now) + t_c;
            return nic.credits.pop_front();
        }
        if let Some(p) = nic.fifo.pop_front() {
            return Some(p);
        }
        if !nic.credits.is_empty() && !nic.wake_pending {
            nic.wake_pending = true;
            cx.set_timer(eligible_at, token(T_WAKE, 0, 0));
        }
        if self.nic.unsched.is_empty() {
            return None;
        }
        self.poll_unscheduled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabriclab_engine::{stream, SimRng, Stream};

    fn info(id: u32) -> HostInfo {
        HostInfo::at_100gbps(id, 2, 8, 7_500_000)
    }

    /// Two hosts joined by a perfect wire; returns what each poll produced.
    struct Pair {
        hosts: [ExpressPass; 2],
        rng: SimRng,
        timers: [Vec<(Time, u64)>; 2],
        app: Vec<super::super::AppEvent>,
    }

    impl Pair {
        fn new(p: &ExpressPassParams) -> Pair {
            Pair {
                hosts: [ExpressPass::new(p, &info(0)), ExpressPass::new(p, &info(1))],
                rng: stream(1, Stream::Host, 0),
                timers: Default::default(),
                app: Vec::new(),
            }
        }
        fn cx<'a>(
            rng: &'a mut SimRng,
            timers: &'a mut Vec<(Time, u64)>,
            app: &'a mut Vec<super::super::AppEvent>,
            now: Time,
        ) -> Cx<'a> {
            Cx::new(now, rng, timers, app)
        }
        fn poll(&mut self, h: usize, now: Time) -> Option<Packet<H>> {
            let mut cx = Self::cx(&mut self.rng, &mut self.timers[h], &mut self.app, now);
            self.hosts[h].poll_transmit(&mut cx)
        }
        fn deliver(&mut self, h: usize, now: Time, p: &Packet<H>) {
            let mut cx = Self::cx(&mut self.rng, &mut self.timers[h], &mut self.app, now);
            self.hosts[h].on_packet(&mut cx, p);
        }
        fn fire(&mut self, h: usize, now: Time, tok: u64) {
            let mut cx = Self::cx(&mut self.rng, &mut self.timers[h], &mut self.app, now);
            self.hosts[h].on_timer(&mut cx, tok);
        }
    }

    fn quiet() -> ExpressPassParams {
        ExpressPassParams { jitter: 0.0, ..Default::default() }
    }

    #[test]
    fn request_credit_data_stop() {
        let mut net = Pair::new(&quiet());
        let m = Message { id: 7, src: 0, dst: 1, size: 1000, start: 0 };
        {
            let mut cx = Pair::cx(&mut net.rng, &mut net.timers[0], &mut net.app, 0);
            net.hosts[0].start_message(&mut cx, &m);
        }
        let req = net.poll(0, 0).expect("credit request");
        assert!(matches!(req.hdr, H::CreditRequest { msg: 7, size: 1000, remaining: 1 }));
        assert_eq!((req.wire_bytes, req.flow, req.credit), (CONTROL_WIRE, 7, false));
        net.deliver(1, 10, &req);
        // The first credit leaves at once; the next is paced.
        let c = net.poll(1, 10).expect("first credit");
        assert!(c.credit && c.wire_bytes == CONTROL_WIRE && c.flow == 7);
        assert!(matches!(c.hdr, H::Credit { msg: 7, seq: 0, .. }));
        assert!(net.poll(1, 10).is_none());
        net.deliver(0, 20, &c);
        let d = net.poll(0, 20).expect("data");
        assert!(matches!(d.hdr, H::Data { msg: 7, index: 0, credit_seq: 0, credit_sent_at: 10 }));
        assert_eq!(d.wire_bytes, data_wire(1000));
        let stop = net.poll(0, 20).expect("credit stop");
        assert!(matches!(stop.hdr, H::CreditStop { msg: 7, sent: 1 }));
        net.deliver(1, 30, &d);
        assert!(net.app.contains(&super::super::AppEvent::Completed { msg: 7 }));
        net.deliver(1, 31, &stop);
        assert!(net.hosts[1].inbound.is_empty());
    }

    #[test]
    fn host_credits_are_shaped_and_bounded() {
        let p = ExpressPassParams { alpha: 1.0, jitter: 0.0, small_flow_packets: 0, ..Default::default() };
        let mut net = Pair::new(&p);
        let t_c = net.hosts[1].cfg.t_c;
        assert_eq!(t_c, 1622 * 80);
        // Twenty flows, each at the full credit rate: far more than the host may send.
        for msg in 0..20 {
            let req = H::CreditRequest { msg, size: 10_000_000, remaining: 6850 };
            net.deliver(1, 0, &Packet::new(0, 1, CONTROL_WIRE, 0, msg as u32, req));
        }
        assert_eq!(net.hosts[1].nic.credits.len(), 8);
        assert_eq!(net.hosts[1].host_credit_drops(), 12);
        // Burst of two, then one per t_c.
        let mut sent = Vec::new();
        let mut now = 0;
        while sent.len() < 5 {
            while net.poll(1, now).is_some() {
                sent.push(now);
            }
            now += 1000;
        }
        assert_eq!(sent[..2], [0, 0]);
        assert!(sent.windows(2).skip(1).all(|w| w[1] - w[0] >= t_c - 1000 && w[1] - w[0] <= t_c + 1000));
    }

    fn flow(rate: f64, w: f64, rtt: Time) -> InFlow {
        InFlow { active: true, cur_rate: rate, w, rtt, ..InFlow::new(0, 1, false, 1460, 0) }
    }

    /// One update period ending at `now` in which `total` credits' fates were
    /// learnt and `dropped` of them were lost.
    fn period(cfg: &Cfg, f: &mut InFlow, now: Time, total: u32, dropped: u32) {
        f.credits_total = total;
        f.credits_dropped = dropped;
        credit_feedback(cfg, f, now);
    }

    #[test]
    fn paper_feedback_follows_algorithm_1() {
        let p = ExpressPassParams { feedback: Feedback::Paper, ..quiet() };
        let cfg = ExpressPass::new(&p, &info(0)).cfg;
        let rtt = 10_000_000;
        let mut f = flow(1.0 / 16.0, 1.0 / 16.0, rtt);
        period(&cfg, &mut f, rtt / 2, 10, 0);
        assert_eq!(f.cur_rate, 1.0 / 16.0, "not before one RTT");
        period(&cfg, &mut f, rtt, 10, 0);
        // First increase: w unchanged, rate moves w of the way to the maximum.
        let r1 = 1.0 / 16.0 + (1.0 - 1.0 / 16.0) / 16.0;
        assert!((f.cur_rate - r1).abs() < 1e-12 && f.increasing && f.w == 1.0 / 16.0);
        // Second increase in a row: w <- (w + w_max) / 2.
        period(&cfg, &mut f, 2 * rtt, 10, 1); // 10% loss is within the 12.5% target
        let w2 = (1.0 / 16.0 + 0.5) / 2.0;
        assert!((f.w - w2).abs() < 1e-12);
        assert!((f.cur_rate - ((1.0 - w2) * r1 + w2)).abs() < 1e-12);
        // 50% loss: rate x (1 - 0.5)(1 + 1/8), w halves.
        let before = f.cur_rate;
        period(&cfg, &mut f, 3 * rtt, 10, 5);
        assert!((f.cur_rate - before * 0.5 * 1.125).abs() < 1e-12);
        assert!((f.w - w2 / 2.0).abs() < 1e-12 && !f.increasing);
        // Total loss: one credit per RTT.
        period(&cfg, &mut f, 4 * rtt, 10, 10);
        assert!((f.cur_rate - cfg.t_c as f64 / rtt as f64).abs() < 1e-12);
    }

    #[test]
    fn ns2_feedback_follows_credit_feedback_control() {
        let cfg = ExpressPass::new(&quiet(), &info(0)).cfg;
        assert_eq!(cfg.feedback, Feedback::Ns2);
        let rtt = 10_000_000;
        let mut f = flow(1.0 / 16.0, 1.0 / 16.0, rtt);
        period(&cfg, &mut f, rtt, 10, 0);
        let r1 = 1.0 / 16.0 + (1.0 - 1.0 / 16.0) / 16.0;
        assert!((f.cur_rate - r1).abs() < 1e-12 && f.w == 1.0 / 16.0);
        // Second increase: w + 0.05.
        period(&cfg, &mut f, 2 * rtt, 10, 0);
        let w2 = 1.0 / 16.0 + 0.05;
        assert!((f.w - w2).abs() < 1e-12);
        assert!((f.cur_rate - (w2 + (1.0 - w2) * r1)).abs() < 1e-12);
        // The target shrinks as the rate grows: at rate 0.5 it is 1/16, so 10% loss
        // cuts the rate to what got through (9 credits in one RTT) x (1 + 1/16).
        f.cur_rate = 0.5;
        period(&cfg, &mut f, 3 * rtt, 10, 1);
        let through = 9.0 * cfg.t_c as f64 / rtt as f64;
        assert!((f.cur_rate - through * (1.0 + 0.0625)).abs() < 1e-12);
        assert!((f.w - w2 / 2.0).abs() < 1e-12 && !f.increasing);
        // Never above the old rate, never below one credit per RTT.
        f.cur_rate = 0.01;
        period(&cfg, &mut f, 4 * rtt, 100, 20);
        assert!((f.cur_rate - cfg.t_c as f64 / rtt as f64).abs() < 1e-12);
        period(&cfg, &mut f, 5 * rtt, 10, 10);
        assert!((f.cur_rate - cfg.t_c as f64 / rtt as f64).abs() < 1e-12);
    }

    #[test]
    fn gaps_and_stop_trigger_selective_nacks() {
        let mut net = Pair::new(&quiet());
        let req = H::CreditRequest { msg: 3, size: 10 * 1460, remaining: 10 };
        net.deliver(1, 0, &Packet::new(0, 1, CONTROL_WIRE, 0, 3, req));
        let data =
            |index, seq| Packet::new(0, 1, 1538, 0, 3, H::Data { msg: 3, index, credit_seq: seq, credit_sent_at: 0 });
        net.deliver(1, 100, &data(0, 0));
        net.deliver(1, 200, &data(3, 1)); // 1 and 2 lost
        net.deliver(1, 300, &data(4, 2));
        net.deliver(1, 400, &Packet::new(0, 1, CONTROL_WIRE, 0, 3, H::CreditStop { msg: 3, sent: 7 }));
        let mut nacks = Vec::new();
        while let Some(p) = net.poll(1, 500) {
            if let H::Nack { from, to, .. } = p.hdr {
                nacks.push((from, to));
            }
        }
        assert_eq!(nacks, vec![(1, 3), (5, 7)]);
        // The sender resends NACKed packets first, asking for credit again.
        let mut s = Pair::new(&quiet());
        let m = Message { id: 3, src: 0, dst: 1, size: 10 * 1460, start: 0 };
        {
            let mut cx = Pair::cx(&mut s.rng, &mut s.timers[0], &mut s.app, 0);
            s.hosts[0].start_message(&mut cx, &m);
        }
        s.poll(0, 0);
        let credit = |seq| Packet::new(1, 0, CONTROL_WIRE, 0, 3, H::Credit { msg: 3, seq, sent_at: 0 });
        s.deliver(0, 10, &credit(0));
        s.deliver(0, 11, &credit(1));
        s.deliver(0, 12, &Packet::new(1, 0, CONTROL_WIRE, 0, 3, H::Nack { msg: 3, from: 0, to: 1 }));
        s.deliver(0, 13, &credit(2));
        let idx: Vec<u32> = std::iter::from_fn(|| s.poll(0, 20))
            .filter_map(|p| if let H::Data { index, .. } = p.hdr { Some(index) } else { None })
            .collect();
        assert_eq!(idx, vec![0, 1, 0]);
    }

    #[test]
    fn stale_timers_are_ignored() {
        let mut net = Pair::new(&quiet());
        let req = H::CreditRequest { msg: 1, size: 1_000_000, remaining: 685 };
        net.deliver(1, 0, &Packet::new(0, 1, CONTROL_WIRE, 0, 1, req));
        let first = net.timers[1].iter().copied().find(|t| t.1 >> KIND_SHIFT == T_PACE).unwrap();
        net.deliver(1, 5, &Packet::new(0, 1, CONTROL_WIRE, 0, 1, H::CreditStop { msg: 1, sent: 0 }));
        net.deliver(1, 6, &Packet::new(0, 1, CONTROL_WIRE, 0, 1, req));
        let queued = net.hosts[1].nic.credits.len();
        net.fire(1, first.0, first.1); // the chain of the stopped period
        assert_eq!(net.hosts[1].nic.credits.len(), queued);
    }

    #[test]
    fn bad_values_name_their_key() {
        crate::transport::params::assert_bad_keys_named(
            "expresspass",
            [
                (ExpressPassParams { alpha: 0.0, ..Default::default() }, "alpha"),
                (ExpressPassParams { w_min: 0.6, ..Default::default() }, "w_min"),
                (ExpressPassParams { w_init: 0.9, ..Default::default() }, "w_init"),
                (ExpressPassParams { target_loss: 1.0, ..Default::default() }, "target_loss"),
                (ExpressPassParams { jitter: -0.1, ..Default::default() }, "jitter"),
                (ExpressPassParams { host_credit_queue_packets: 0, ..Default::default() }, "host_credit_queue_packets"),
            ],
        );
    }
}
