//! PayDebt (Liu, Tian, Wang, Chen, Tian, Sun, Meng, Yan, Han, Fu, Dou, Chen,
//! "PayDebt: Reduce Buffer Occupancy Under Bursty Traffic on Large Clusters",
//! IEEE TPDS 2022). See docs/protocols/paydebt.md.
//!
//! - **Unscheduled**: a new flow sends its first BDP at once (RR over flows),
//!   bounded per (sender, receiver) pair; everything else is **scheduled**,
//!   one packet per **token** from the receiver.
//! - **Tokens** are data-driven: a data packet flagged `token_request` (the
//!   flow still has more than one BDP after it) makes the receiver owe one
//!   token, so no token is wasted in the last RTT. Tokens are numbered per
//!   flow; a token releases the sender's next new packet, and a later token
//!   makes up for a lost one.
//! - **Debts**: one 84-byte debt per MTU of unscheduled data (`debt_request`).
//!   The sender ignores them; they exist to take a slot of the 5% control
//!   class at every reverse-path port, so the unscheduled data "borrowed"
//!   delays the tokens behind them. A debt is held until congestion shows: an
//!   ECN-marked unscheduled packet (data queue above K_d) pays at once, a
//!   marked scheduled packet releases one held debt, the flow's end all.
//! - **Token CC** (Algorithm 1): switches mark tokens when their control
//!   queue exceeds K_t; the sender echoes the mark in a data header bit; the
//!   receiver adapts the flow's maxInflight.
//! - **Control class**: tokens and debts leave every switch port and every
//!   host at most at `control_rate_fraction` of the link (debts first). ACKs
//!   go in the top class, ahead of data.
//! - **Loss**: PSN gaps (a flow's packets follow one path and class) and
//!   minimum-size probes (after a flow's last packet, and after
//!   `probe_timeout_us` of silence) make the receiver send tokens naming the
//!   missing PSNs.

mod max_inflight;
mod receiver;
mod sender;

pub use max_inflight::{MaxInflight, MaxInflightParams};

use super::toolkit::{IdMap, IdSet, SlotPacer};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::switch_config::{ControlClassConfig, MarkAt, RedConfig, SwitchFeatures};
use crate::net::wire::{data_wire, packets_for, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet, CONTROL};
use crate::transport::params::{ParamDoc, ProtocolParams};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_MULTIPLE};
use fabriclab_engine::{from_us, serialization_time, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// When receivers send debts (PayDebt §5.5's ablation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DebtMode {
    /// ECN-triggered (the paper's design).
    Paydebt,
    /// No debts at all.
    None,
    /// All of a flow's debts once its data has all arrived.
    Late,
    /// A debt as soon as its unscheduled MTU arrives (naive debt, K_d = 0).
    Early,
}

/// `[protocol.paydebt]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PayDebtParams {
    /// Data a new flow sends without tokens, x BDP (at least one packet).
    pub unscheduled_bdp: f64,
    /// Unscheduled data in flight per (sender, receiver) pair, x BDP.
    pub pair_unscheduled_bdp: f64,
    /// Data-queue ECN threshold K_d, x BDP (a hard threshold marked at dequeue).
    pub k_d_bdp: f64,
    /// Token-queue ECN threshold K_t, x BDP counted in tokens (one per MSS of data).
    pub k_t_bdp: f64,
    /// Share of the link tokens, debts and ACKs may use at hosts and switches.
    pub control_rate_fraction: f64,
    pub w_init: f64,
    pub w_min: f64,
    pub w_max: f64,
    pub debt: DebtMode,
    /// Sender: no token or ACK for an unfinished flow for this long -> probe.
    pub probe_timeout_us: f64,
}

impl Default for PayDebtParams {
    fn default() -> Self {
        PayDebtParams {
            unscheduled_bdp: 1.0,
            pair_unscheduled_bdp: 1.0,
            k_d_bdp: 1.0,
            k_t_bdp: 1.0,
            // A token (84 B) per full data frame (1538 B) fills the link: ExpressPass's ~5%.
            control_rate_fraction: CONTROL_WIRE as f64 / (CONTROL_WIRE + data_wire(1460)) as f64,
            w_init: 0.5,
            w_min: 0.1,
            w_max: 0.5,
            debt: DebtMode::Paydebt,
            probe_timeout_us: 4000.0,
        }
    }
}

impl Validate for PayDebtParams {
    /// The rules between keys; each key's own range is in [`PayDebtParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        if self.w_max < self.w_min {
            return Err(ConfigError::value(
                "protocol.paydebt.w_max",
                self.w_max,
                &format!("at least w_min ({})", self.w_min),
            ));
        }
        if !(self.w_min..=self.w_max).contains(&self.w_init) {
            let allowed = format!("a number in [w_min, w_max] = [{}, {}]", self.w_min, self.w_max);
            return Err(ConfigError::value("protocol.paydebt.w_init", self.w_init, &allowed));
        }
        Ok(())
    }
}

impl PayDebtParams {
    /// K_t in bytes of 84-byte tokens: one token per MSS of a BDP.
    pub fn k_t_bytes(&self, bdp_bytes: u64, mss: u32) -> u64 {
        let tokens = (self.k_t_bdp * bdp_bytes as f64 / mss as f64).ceil().max(1.0) as u64;
        // An extreme k_t_bdp saturates the cast; the product must not wrap to a small K_t.
        tokens.saturating_mul(CONTROL_WIRE as u64)
    }
}

impl ProtocolParams for PayDebtParams {
    type Host = PayDebt;
    const PAPER: &'static str = "PayDebt: Reduce Buffer Occupancy Under Bursty Traffic on Large Clusters \
                                 (Liu et al., IEEE TPDS 2022)";
    // Symmetric paths: tokens retrace their flow's data path (§4.3).
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::SymmetricEcmp;

    fn switch_features(&self, bdp_bytes: u64, mss: u32) -> SwitchFeatures {
        // K_d: a hard threshold at dequeue (Fig. 4: a packet is marked when it leaves a long queue).
        let k_d = ((self.k_d_bdp * bdp_bytes as f64).round() as u64).max(1);
        SwitchFeatures {
            red: Some(RedConfig {
                kmin_bytes: k_d,
                kmax_bytes: k_d,
                pmax: 1.0,
                mark_at: MarkAt::Dequeue,
                ..RedConfig::default()
            }),
            control_class: Some(ControlClassConfig {
                rate_fraction: self.control_rate_fraction,
                ecn_threshold_bytes: Some(self.k_t_bytes(bdp_bytes, mss)),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn host(&self, info: &HostInfo) -> PayDebt {
        PayDebt::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let w = Bound::new("a fraction", 1e-3, 0.5);
        vec![
            ("unscheduled_bdp", Bound::new("a multiple", 1e-6, 1e3)),
            ("pair_unscheduled_bdp", Bound::new("a multiple", 1e-6, MAX_MULTIPLE)),
            ("k_t_bdp", Bound::new("a multiple", 1e-3, MAX_MULTIPLE)),
            ("control_rate_fraction", Bound::new("a fraction of the link", 1e-3, 0.5)),
            ("w_init", w),
            ("w_min", w),
            ("w_max", w),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = PayDebtParams::default();
        let doc = |key, default: String, meaning, source| ParamDoc { key, default, meaning, source };
        vec![
            doc(
                "unscheduled_bdp",
                d.unscheduled_bdp.to_string(),
                "data a new flow sends before any token (x BDP)",
                "PayDebt §4.2 (one BDP of unscheduled packets)",
            ),
            doc(
                "pair_unscheduled_bdp",
                d.pair_unscheduled_bdp.to_string(),
                "unscheduled data in flight per (sender, receiver) pair (x BDP); a flow waits if it would exceed it",
                "§4.4 bounds it without a value; 1 BDP = our choice",
            ),
            doc(
                "k_d_bdp",
                d.k_d_bdp.to_string(),
                "data-queue ECN threshold K_d (x BDP), hard, at dequeue",
                "§5 Parameters, §5.6 (1 x BDP)",
            ),
            doc(
                "k_t_bdp",
                d.k_t_bdp.to_string(),
                "token-queue ECN threshold K_t (x BDP, counted as one 84 B token per MSS)",
                "§5 Parameters, §5.6 (1 x BDP); unit = our reading",
            ),
            doc(
                "control_rate_fraction",
                format!("{:.4}", d.control_rate_fraction),
                "link share of the token/debt class at switches and hosts",
                "§4.1.1 (5%); 84/(84+1538) as ExpressPass, so a token clock fills the link",
            ),
            doc("w_init", d.w_init.to_string(), "Algorithm 1 initial weight", "Algorithm 1"),
            doc("w_min", d.w_min.to_string(), "Algorithm 1 floor of w", "Algorithm 1"),
            doc("w_max", d.w_max.to_string(), "Algorithm 1 ceiling of w", "Algorithm 1"),
            doc(
                "debt",
                "\"paydebt\"".into(),
                "when debts are sent: paydebt (ECN-triggered), none, late (at flow end), early (at once)",
                "§4.1.1; ablation variants of §5.5",
            ),
            doc(
                "probe_timeout_us",
                d.probe_timeout_us.to_string(),
                "sender: no token/ACK for an unfinished flow this long -> probe",
                "§5.4 (4 ms)",
            ),
        ]
    }
}

/// PayDebt's packets. PSNs are per flow (= message), from 0.
#[derive(Clone, Copy, Debug)]
pub enum PayDebtHeader {
    Data {
        msg: MsgId,
        size: u64,
        psn: u32,
        /// Sent in reply to a token.
        sched: bool,
        token_request: bool,
        debt_request: bool,
        /// Echo of a token ECN mark (the dedicated header bit, §4.1.3).
        token_ce: bool,
    },
    /// `seq` > 0: the receiver has granted `seq` new packets so far. `rtx`:
    /// send this PSN again (loss repair), or `NO_PSN`.
    Token {
        msg: MsgId,
        seq: u32,
        rtx: u32,
    },
    Debt {
        msg: MsgId,
    },
    /// All of the flow's unscheduled range arrived (`whole`: all of the flow).
    Ack {
        msg: MsgId,
        whole: bool,
    },
    /// The last PSN sent and the last token number received (§4.4).
    Probe {
        msg: MsgId,
        size: u64,
        last_psn: u32,
        token_seq: u32,
    },
}

pub const NO_PSN: u32 = u32::MAX;
/// ACKs (and tokens/debts where there is no control class) in the top class; data and probes below.
const CTRL_PRIO: u8 = 0;
const PRIO: u8 = 1;
const TIMER_CTRL: u64 = 1 << 62;
const TIMER_PROBE: u64 = 2 << 62;
const TIMER_KIND: u64 = 3 << 62;

/// Receiver-side state of an inbound flow.
struct InFlow {
    src: u32,
    n: u32,
    /// Packets in the unscheduled range [0, u).
    u: u32,
    reasm: super::toolkit::Reassembly,
    /// Highest PSN seen + 1 (first transmissions go in PSN order on one path).
    next_expected: u32,
    unsched_received: u32,
    /// New-packet tokens owed, and granted so far.
    owed: u32,
    granted: u32,
    /// PSNs to ask again.
    repair: VecDeque<u32>,
    /// Tokens sent whose scheduled packet has not arrived.
    inflight: u32,
    window: MaxInflight,
    held_debts: u32,
    in_rr: bool,
}

/// Sender-side state of an outbound flow.
struct OutFlow {
    dst: u32,
    size: u64,
    n: u32,
    u: u32,
    /// Packets below `next` have been sent once.
    next: u32,
    admitted: bool,
    /// Tokens received (cumulative number) and new packets they still release.
    token_seq: u32,
    credit: u32,
    rtx: VecDeque<u32>,
    token_ce: bool,
    in_sched: bool,
    in_unsched: bool,
    unsched_acked: bool,
    last_heard: Time,
}

pub struct PayDebt {
    info: HostInfo,
    mode: DebtMode,
    unsched_pkts: u32,
    pair_bound: u64,
    probe_timeout: Time,
    /// Control-class pacing: an 84 B packet holds the host's class one slot.
    ctrl_pacer: SlotPacer,
    window: MaxInflightParams,
    w_init: f64,
    // receiver
    inbound: IdMap<MsgId, InFlow>,
    completed: IdSet<MsgId>,
    /// Debts (and re-grants), sent before tokens.
    urgent: VecDeque<Packet<PayDebtHeader>>,
    acks: VecDeque<Packet<PayDebtHeader>>,
    token_rr: VecDeque<MsgId>,
    // sender
    outbound: IdMap<MsgId, OutFlow>,
    sched_rr: VecDeque<MsgId>,
    unsched_rr: VecDeque<MsgId>,
    /// Per destination: unscheduled bytes in flight and flows waiting for room.
    pair_inflight: Vec<u64>,
    pair_waiting: IdMap<u32, VecDeque<MsgId>>,
    /// Per destination: unscheduled payload not yet covered by a debt_request.
    debt_to_receive: Vec<u32>,
    probes: VecDeque<Packet<PayDebtHeader>>,
}

impl PayDebt {
    pub fn new(p: &PayDebtParams, info: &HostInfo) -> PayDebt {
        let bdp = info.bdp_bytes as f64;
        let unsched_bytes = (p.unscheduled_bdp * bdp).ceil() as u64;
        let ctrl = serialization_time(CONTROL_WIRE as u64, info.link_rate_bps) as f64;
        let n = info.n_hosts as usize;
        PayDebt {
            mode: p.debt,
            unsched_pkts: packets_for(unsched_bytes, info.mss) as u32,
            pair_bound: (p.pair_unscheduled_bdp * bdp).ceil() as u64,
            probe_timeout: from_us(p.probe_timeout_us).max(1),
            ctrl_pacer: SlotPacer::new((ctrl / p.control_rate_fraction).round() as Time),
            window: MaxInflightParams { w_min: p.w_min, w_max: p.w_max, bdp, period: info.base_rtt.max(1) },
            w_init: p.w_init,
            inbound: IdMap::default(),
            completed: IdSet::default(),
            urgent: VecDeque::new(),
            acks: VecDeque::new(),
            token_rr: VecDeque::new(),
            outbound: IdMap::default(),
            sched_rr: VecDeque::new(),
            unsched_rr: VecDeque::new(),
            pair_inflight: vec![0; n],
            pair_waiting: IdMap::default(),
            debt_to_receive: vec![0; n],
            probes: VecDeque::new(),
            info: info.clone(),
        }
    }

    /// A control packet: minimum frame, control class, ECN-capable (tokens get K_t marks).
    fn control(&self, dst: u32, msg: MsgId, hdr: PayDebtHeader) -> Packet<PayDebtHeader> {
        Packet::new(self.info.id, dst, CONTROL_WIRE, CTRL_PRIO, msg as u32, hdr).with_ect().with_flags(CONTROL)
    }
}

impl Transport for PayDebt {
    type Header = PayDebtHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        self.start_flow(cx, msg);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<PayDebtHeader>) {
        match pkt.hdr {
            PayDebtHeader::Data { msg, size, psn, sched, token_request, debt_request, token_ce } => {
                let d = receiver::DataArrival { msg, size, psn, sched, token_request, debt_request, token_ce };
                self.on_data(cx, pkt.src, d, pkt.ce())
            }
            PayDebtHeader::Probe { msg, size, last_psn, token_seq } => {
                self.on_probe(pkt.src, msg, size, last_psn, token_seq)
            }
            PayDebtHeader::Token { msg, seq, rtx } => self.on_token(cx, msg, seq, rtx, pkt.ce()),
            PayDebtHeader::Ack { msg, whole } => self.on_ack(cx, msg, whole),
            PayDebtHeader::Debt { .. } => {} // §4.2: "When a sender receives a debt packet, do nothing."
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        match token & TIMER_KIND {
            TIMER_CTRL => self.ctrl_pacer.timer_fired(cx.now),
            TIMER_PROBE => self.on_probe_timer(cx, token & !TIMER_KIND),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<PayDebtHeader>> {
        if let Some(p) = self.poll_control(cx) {
            return Some(p);
        }
        if let Some(p) = self.acks.pop_front() {
            return Some(p);
        }
        if let Some(p) = self.probes.pop_front() {
            return Some(p);
        }
        self.poll_data(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::params::assert_bad_keys_named;

    #[test]
    fn bad_parameters_name_their_key() {
        assert_bad_keys_named(
            "paydebt",
            [
                (PayDebtParams { unscheduled_bdp: -1.0, ..Default::default() }, "unscheduled_bdp"),
                (PayDebtParams { pair_unscheduled_bdp: 0.0, ..Default::default() }, "pair_unscheduled_bdp"),
                (PayDebtParams { k_t_bdp: 0.0, ..Default::default() }, "k_t_bdp"),
                (PayDebtParams { control_rate_fraction: 0.9, ..Default::default() }, "control_rate_fraction"),
                (PayDebtParams { w_min: 0.0, ..Default::default() }, "w_min"),
                (PayDebtParams { w_max: 0.6, ..Default::default() }, "w_max"),
                (PayDebtParams { w_init: 0.05, ..Default::default() }, "w_init"),
            ],
        );
    }

    #[test]
    fn k_t_counts_one_token_per_mss_of_a_bdp() {
        // 12.5 KB / 1460 B -> 9 tokens of 84 B.
        assert_eq!(PayDebtParams::default().k_t_bytes(12_500, 1460), 9 * 84);
        let half = PayDebtParams { k_t_bdp: 0.5, ..Default::default() };
        assert_eq!(half.k_t_bytes(12_500, 1460), 5 * 84);
    }
}
