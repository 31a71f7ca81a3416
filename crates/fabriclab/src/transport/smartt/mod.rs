//! SMaRTT (Bonato et al., "SMaRTT-REPS: Sender-based Marked Rapidly-adapting
//! Trimmed & Timed Transport with Recycled Entropies"): a sender-based window
//! congestion control for lossy Ethernet with trimming, driven by ECN (RED,
//! marked on dequeue) and RTT together, with REPS choosing each packet's
//! entropy. The window logic is in [`cc`], the load balancers in [`super::lb`].
//!
//! - **Sender**: one flow per message, its own window (`cwnd`, wire bytes) and
//!   load balancer; in-flight bytes stay within cwnd (one packet always may go).
//!   Retransmissions go first, then new data; messages with an open window are
//!   served round-robin by the NIC.
//! - **Receiver**: ACKs every data packet and NACKs every trimmed header at once,
//!   in the top class; both echo the data's ECN mark, send time and entropy.
//! - **Loss**: a NACK resends the packet; without trimming (or when a header
//!   or ACK is lost) a packet not acknowledged within the RTO (fixed at
//!   `rto_fixed_brtt` base RTTs as in the authors' htsim, or with `rto =
//!   "adaptive"` RFC 6298 on the flow's RTT samples) is resent and
//!   handled as a loss by the window and the load balancer. Each packet has
//!   its own timeout and there is no exponential backoff: a burst lost at once
//!   times out at once, and a flow whose lone retransmission is lost again
//!   retries one RTO later, not after a doubled one.
//!
//! Data travels in class 1, ACKs, NACKs and trimmed headers in class 0.
//! Constants the paper leaves open are listed in [`SmarttParams::docs`] and
//! docs/protocols/smartt.md.

pub mod cc;
pub mod pull;

use super::bbr::model::{Bbr, Consts as BbrConsts};
use super::lb::{FlowLb, LbParams, LbScope, RepsStamp};
use super::toolkit::{IdMap, IdSet, Reassembly};
use super::toolkit_tcp::RtoEstimator;
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet};
use crate::transport::params::{ParamDoc, ProtocolParams, FRACTION, GAIN, POSITIVE_MULTIPLE, RTO_RTTS};
use cc::{Consts, Signals, SmarttCc};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_BUFFER_BYTES, MAX_COUNT};
use fabriclab_engine::{from_us, Time, S};
use pull::{Credit, Pacer};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How a packet's retransmission timeout is set (`protocol.smartt.rto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtoRule {
    /// `rto_fixed_brtt` base RTTs, then `rto_fixed_brtt_retx` once the flow has resent:
    /// the authors' htsim (spcl/HTSIM 8b15594, `UecSrc`, `UecDropSrc`).
    Fixed,
    /// RFC 6298's srtt + 4 rttvar, at least `rto_min_trtt` target RTTs.
    Adaptive,
}

/// `[protocol.smartt]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SmarttParams {
    /// The base RTT the window law is built on, µs; absent: the fabric's
    /// largest unloaded RTT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt_us: Option<f64>,
    /// trtt, x base RTT.
    pub target_rtt: f64,
    pub fd: f64,
    pub fi: f64,
    pub md: f64,
    /// mi; absent: brtt / (trtt - brtt), "at most one MTU per RTT".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mi: Option<f64>,
    /// gamma = BDP / reference_bdp_bytes scales fi and mi (100 Gbps x 12 us).
    pub reference_bdp_bytes: f64,
    pub quick_adapt: bool,
    pub qa_scaling: f64,
    /// FastIncrease step k (MTU per ACK); 0 turns FastIncrease off.
    pub fast_increase_mtu: f64,
    /// FastIncrease: "RTT close to the base RTT" means below brtt + this.
    pub fast_increase_tolerance_us: f64,
    /// Wait-to-Decrease on or off.
    pub wtd: bool,
    pub wtd_alpha: f64,
    pub wtd_threshold: f64,
    pub init_cwnd_bdp: f64,
    pub max_cwnd_bdp: f64,
    pub min_cwnd_mtu: f64,
    /// React to every N-th ACK with the bytes of all N (Fig. 3b).
    pub react_every: u32,
    pub signals: Signals,
    /// MP-RDMA only: MTUs off the window per trimmed or timed-out packet
    /// (`[protocol.mprdma] loss_decrease_mtu`; not a `[protocol.smartt]` key).
    #[serde(skip)]
    pub mprdma_loss_mtu: f64,
    /// Switches trim (true) or drop (false, md doubled, losses found by timeout).
    pub trimming: bool,
    /// How the retransmission timeout is set: fixed (the authors' htsim) or from RTT samples.
    pub rto: RtoRule,
    /// With `rto = "adaptive"`: the RTO's floor, x target RTT.
    pub rto_min_trtt: f64,
    /// With `rto = "fixed"`: the RTO, x base RTT.
    pub rto_fixed_brtt: f64,
    /// With `rto = "fixed"`: the RTO from the flow's first retransmission on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto_fixed_brtt_retx: Option<f64>,
    pub lb: LbParams,
}

impl Default for SmarttParams {
    fn default() -> Self {
        SmarttParams {
            base_rtt_us: None,
            target_rtt: 1.5,
            fd: 0.8,
            fi: 0.25,
            md: 2.0,
            mi: None,
            reference_bdp_bytes: 150_000.0,
            quick_adapt: true,
            qa_scaling: 0.8,
            fast_increase_mtu: 2.0,
            fast_increase_tolerance_us: 1.0,
            wtd: true,
            wtd_alpha: 0.05,
            wtd_threshold: 0.25,
            init_cwnd_bdp: 1.25,
            max_cwnd_bdp: 1.25,
            min_cwnd_mtu: 1.0,
            react_every: 1,
            signals: Signals::Smartt,
            mprdma_loss_mtu: 1.0,
            trimming: true,
            rto: RtoRule::Fixed,
            rto_min_trtt: 2.0,
            rto_fixed_brtt: 3.0,
            rto_fixed_brtt_retx: None,
            lb: LbParams::default(),
        }
    }
}

impl SmarttParams {
    /// SMaRTT's defaults with another protocol's host settings (EQDS, MP-RDMA and BBR run on
    /// this host, with the adaptive RTO).
    pub fn host(trimming: bool, rto_min_trtt: f64, lb: &LbParams) -> SmarttParams {
        SmarttParams { trimming, rto: RtoRule::Adaptive, rto_min_trtt, lb: lb.clone(), ..Default::default() }
    }
}

impl Validate for SmarttParams {
    /// The rules between keys; each key's own range is in [`SmarttParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        let k = |s: &str| format!("protocol.smartt.{s}");
        if self.signals == Signals::Mprdma {
            return Err(ConfigError::value(
                &k("signals"),
                "\"mprdma\"",
                "\"smartt\", \"ecn_only\" or \"rtt_only\" (MP-RDMA is protocol.name = \"mprdma\")",
            ));
        }
        // A key of the other RTO rule would be silently ignored.
        let d = SmarttParams::default();
        match self.rto {
            RtoRule::Fixed if self.rto_min_trtt != d.rto_min_trtt => {
                return Err(ConfigError::value(
                    &k("rto_min_trtt"),
                    self.rto_min_trtt,
                    "left out unless protocol.smartt.rto = \"adaptive\" (the fixed RTO is rto_fixed_brtt)",
                ));
            }
            RtoRule::Adaptive if self.rto_fixed_brtt != d.rto_fixed_brtt || self.rto_fixed_brtt_retx.is_some() => {
                let (key, v) = match self.rto_fixed_brtt_retx {
                    Some(v) => ("rto_fixed_brtt_retx", v),
                    None => ("rto_fixed_brtt", self.rto_fixed_brtt),
                };
                return Err(ConfigError::value(
                    &k(key),
                    v,
                    "left out unless protocol.smartt.rto = \"fixed\" (the adaptive RTO's floor is rto_min_trtt)",
                ));
            }
            _ => {}
        }
        self.lb.validate_as(&k("lb"))
    }
}

impl ProtocolParams for SmarttParams {
    type Host = Smartt;
    const PAPER: &'static str = "SMaRTT-REPS: Sender-based Marked Rapidly-adapting Trimmed & Timed Transport with \
                                 Recycled Entropies (Bonato et al.)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Sender;
    const HANDLES_TRIMS: bool = true;

    fn trimming(&self) -> Option<Option<u32>> {
        self.trimming.then_some(None) // only packets that would be dropped (§3.3)
    }

    fn host(&self, info: &HostInfo) -> Smartt {
        Smartt::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let factor = |hi| Bound::new("a factor", 0.0, hi);
        let rto = Bound::new("a multiple of the base RTT", 0.1, 1e6);
        let own = [
            ("base_rtt_us", Bound::new("a time in microseconds", 0.01, 1e6)),
            ("target_rtt", Bound::new("a multiple of the base RTT", 1.0, 100.0).above()),
            ("fd", factor(100.0)),
            ("fi", factor(1e6)),
            ("md", factor(100.0)),
            ("mi", factor(1e6)),
            ("reference_bdp_bytes", Bound::new("a number of bytes", 0.0, MAX_BUFFER_BYTES as f64).above()),
            ("qa_scaling", Bound::new("a factor", 1e-3, 10.0)),
            ("fast_increase_mtu", Bound::new("a number of packets", 0.0, 1000.0)),
            ("fast_increase_tolerance_us", Bound::new("a time in microseconds", 0.0, 1e6)),
            ("wtd_alpha", GAIN),
            ("wtd_threshold", FRACTION),
            ("init_cwnd_bdp", POSITIVE_MULTIPLE),
            ("max_cwnd_bdp", POSITIVE_MULTIPLE),
            ("min_cwnd_mtu", Bound::new("a number of packets", 1e-3, 1e6)),
            ("react_every", Bound::new("a number of ACKs", 1.0, MAX_COUNT)),
            ("rto_min_trtt", RTO_RTTS),
            ("rto_fixed_brtt", rto),
            ("rto_fixed_brtt_retx", rto),
        ];
        [&own[..], LbParams::BOUNDS].concat()
    }

    fn docs() -> Vec<ParamDoc> {
        let d = SmarttParams::default();
        let row = |key, default: String, meaning, source| ParamDoc { key, default, meaning, source };
        let mut v = vec![
            row("base_rtt_us", "absent".into(), "the base RTT (µs) of the window law: targets, BDP, windows and timeouts; absent: the fabric's largest unloaded RTT", "ours; spcl/HTSIM 8b15594 computes it from the host link rate whatever the fabric links' (main_uec.cpp), shorter than the real one in an oversubscribed fabric"),
            row("target_rtt", d.target_rtt.to_string(), "trtt, x base RTT (the fabric's largest unloaded RTT, or base_rtt_us)", "§3, §3.5"),
            row("fd", d.fd.to_string(), "Fair Decrease: cwnd -= cwnd / bdp x fd x acked (Eq. 1)", "§3.5 (tuned at 100 Gbps, not scaled)"),
            row("fi", d.fi.to_string(), "Fair Increase: cwnd += acked / cwnd x mtu x fi x gamma (Eq. 3)", "§3.5"),
            row("md", d.md.to_string(), "Multiplicative Decrease: cwnd -= min(acked, (rtt - trtt) / rtt x md x acked) (Eq. 2); doubled when trimming = false", "§3.2.2, §3.3"),
            row("mi", "brtt / (trtt - brtt) = 2".into(), "Multiplicative Increase: cwnd += min(acked, (trtt - rtt) / rtt x acked / cwnd x mtu x mi x gamma) (Eq. 4)", "§3.2.4, §3.5"),
            row("reference_bdp_bytes", d.reference_bdp_bytes.to_string(), "gamma = BDP / this scales fi and mi", "§3.5: the BDP of 100 Gbps with a 12 us RTT"),
            row("quick_adapt", d.quick_adapt.to_string(), "QuickAdapt on a trim or timeout (Algorithm 2)", "§3.3"),
            row("qa_scaling", d.qa_scaling.to_string(), "QuickAdapt: cwnd = bytes ACKed in the last trtt x this", "§3.5"),
            row("fast_increase_mtu", d.fast_increase_mtu.to_string(), "FastIncrease: MTU added per ACK once a window of ACKs saw no congestion (0 = off)", "§3.4 (k = 2)"),
            row("fast_increase_tolerance_us", d.fast_increase_tolerance_us.to_string(), "FastIncrease: 'RTT close to the base RTT' means RTT < brtt + this", "paper silent; htsim (spcl/HTSIM) uses a queueing delay under 1 us"),
            row("wtd", d.wtd.to_string(), "Wait-to-Decrease: decrease only when the ECN EWMA reaches wtd_threshold", "§3.6.1"),
            row("wtd_alpha", d.wtd_alpha.to_string(), "WTD: EWMA gain per ACK", "paper silent; htsim (spcl/HTSIM eqds.h exp_avg_alpha)"),
            row("wtd_threshold", d.wtd_threshold.to_string(), "WTD: decreases allowed when EWMA of marks >= this", "§3.6.1 (htsim uses 0.3)"),
            row("init_cwnd_bdp", d.init_cwnd_bdp.to_string(), "initial window, x BDP (the maximum window)", "paper silent; Fig. 2 starts at the maximum window (1.42 MiB)"),
            row("max_cwnd_bdp", d.max_cwnd_bdp.to_string(), "largest window, x BDP", "§3.5 prose (Algorithm 1 clamps at 1 BDP)"),
            row("min_cwnd_mtu", d.min_cwnd_mtu.to_string(), "smallest window, in MTU", "§3.5"),
            row("react_every", d.react_every.to_string(), "apply the window update once every N ACKs with their bytes summed", "§3.2, Fig. 3b (per ACK; 50 compared)"),
            row("signals", "smartt".into(), "smartt, or Fig. 2's straw-men ecn_only / rtt_only (half an MTU off per packet on the signal; no QA, FastIncrease, WTD)", "§3.1"),
            row("trimming", d.trimming.to_string(), "switches trim only packets that would be dropped; false: drop-tail, timeouts, md doubled", "§3.3"),
            row("rto", "fixed".into(), "the retransmission timeout: fixed (rto_fixed_brtt, no RTT sample moves it) or adaptive (max(rto_min_trtt x trtt, srtt + 4 rttvar), RFC 6298)", "paper: 'aggressive', no value; the authors' simulator decides: spcl/HTSIM 8b15594 fixes it (uec.cpp, uec_drop.cpp); adaptive was the default before 2026-12-03"),
            row("rto_fixed_brtt", d.rto_fixed_brtt.to_string(), "with rto = fixed: the RTO, x base RTT", "spcl/HTSIM 8b15594 uec.cpp, SMaRTT's sender: 3 (uec_drop.cpp, the drop-only one: 25, or 1.4 with -use_mixed)"),
            row("rto_fixed_brtt_retx", "absent".into(), "with rto = fixed: the RTO, x base RTT, once the flow has resent a packet", "spcl/HTSIM 8b15594 uec_drop.cpp with -use_mixed: 2.2"),
            row("rto_min_trtt", d.rto_min_trtt.to_string(), "with rto = adaptive: the RTO's floor, x target RTT", "our choice"),
        ];
        v.extend(LbParams::docs());
        v
    }
}

#[derive(Clone, Copy, Debug)]
pub enum SmarttHeader {
    /// Packet `index` of message `msg` (`size` bytes in all); under EQDS,
    /// the cumulative bytes the sender wants pulled.
    Data { msg: MsgId, size: u64, index: u32, pull_target: u64 },
    /// Packet `index` arrived (`marked`: with CE); echoes the data's send time and entropy.
    Ack { msg: MsgId, index: u32, marked: bool, sent: Time, entropy: u32 },
    /// Packet `index` arrived trimmed: send it again.
    Nack { msg: MsgId, index: u32, sent: Time, entropy: u32 },
    /// EQDS: the receiver has granted `pull_no` bytes of `msg` so far.
    Pull { msg: MsgId, pull_no: u64 },
    /// EQDS: a sender out of credit with nothing in flight asks to be pulled up to `pull_target`.
    Rts { msg: MsgId, pull_target: u64 },
}

const CONTROL_PRIO: u8 = 0;
const DATA_PRIO: u8 = 1;
const TIMER_PACE: u64 = 0;
const TIMER_RTO: u64 = 1 << 62;
const TIMER_PULL: u64 = 2 << 62;
const TIMER_RTS: u64 = 3 << 62;
const TIMER_KIND: u64 = 3 << 62;

/// One bit per packet of a message.
#[derive(Clone, Debug)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: u32) -> Bits {
        Bits(vec![0; (n as usize).div_ceil(64)])
    }
    fn get(&self, i: u32) -> bool {
        self.0[i as usize / 64] >> (i % 64) & 1 != 0
    }
    /// Sets bit `i` to `v`; returns its old value.
    fn set(&mut self, i: u32, v: bool) -> bool {
        let (w, b) = (i as usize / 64, i % 64);
        let old = self.0[w] >> b & 1 != 0;
        self.0[w] = self.0[w] & !(1 << b) | (v as u64) << b;
        old
    }
}

/// Sender side of one message (= one flow).
struct OutMsg {
    dst: u32,
    size: u64,
    n_pkts: u32,
    /// Packets below `next` were sent at least once.
    next: u32,
    acked: Bits,
    /// Packets counted in `inflight` (sent, not yet ACKed, NACKed or timed out).
    out: Bits,
    inflight: u64,
    /// Packets to send again, oldest first.
    rtx: VecDeque<u32>,
    /// Last transmission of each packet, and transmissions oldest first (RTO scan).
    sent_at: Vec<Time>,
    order: VecDeque<(u32, Time)>,
    acked_pkts: u32,
    cc: SmarttCc,
    /// Key of this message's load balancer in `Smartt::lbs` (its destination or its id).
    lb: u64,
    rto: RtoEstimator,
    /// Earliest pending RTO timer event.
    rto_timer: Option<Time>,
    in_ready: bool,
    /// Wire bytes still to send: new packets and queued retransmissions.
    backlog: u64,
    /// EQDS credit (None: SMaRTT alone).
    credit: Option<Credit>,
    rts_timer: bool,
    /// BBR's model, when BBR drives the window and pacing (then `cc.cwnd` mirrors its cwnd).
    bbr: Option<Box<Bbr>>,
    /// Pacing (BBR): the next packet not before `pace_at`; the pending pacing timer event.
    pace_at: Time,
    pace_timer: Option<Time>,
    /// `lb.stamp = "admission"`: the entropies of packets the window has
    /// admitted but the NIC has not yet taken, oldest first.
    bound: VecDeque<u32>,
}

impl OutMsg {
    fn wire(&self, mss: u32, i: u32) -> u64 {
        data_wire(payload_of(self.size, mss, i as u64)) as u64
    }

    fn next_index(&self) -> Option<u32> {
        self.rtx.front().copied().or((self.next < self.n_pkts).then_some(self.next))
    }

    /// Whether credit (EQDS) and the window let the next packet go (one
    /// always may when nothing is in flight).
    fn can_send(&self, mss: u32) -> bool {
        self.credit.as_ref().is_none_or(Credit::allows)
            && self
                .next_index()
                .is_some_and(|i| self.inflight == 0 || (self.inflight + self.wire(mss, i)) as f64 <= self.cc.cwnd)
    }

    /// EQDS: data waits for credit with nothing in flight that could bring a PULL.
    fn starved(&self) -> bool {
        self.inflight == 0 && self.next_index().is_some() && self.credit.as_ref().is_some_and(|c| !c.allows())
    }

    /// `lb.stamp = "admission"`: the packets the window lets go now keep the
    /// entropies bound when they were admitted, and those admitted since take
    /// `entropy` (REPS's cached one), as spcl/HTSIM's sender builds each packet
    /// an ACK releases with that ACK's entropy. Counts full-size packets.
    /// The window rule is `can_send`'s: one packet whenever nothing is in flight.
    fn bind_admitted(&mut self, mss: u32, entropy: Option<u32>) {
        let room = ((self.cc.cwnd - self.inflight as f64) / data_wire(mss) as f64).max(0.0) as usize;
        let left = self.rtx.len() + (self.n_pkts - self.next) as usize;
        let n = if self.inflight == 0 { room.max(1) } else { room }.min(left);
        self.bound.truncate(n);
        if let Some(e) = entropy {
            self.bound.resize(n, e);
        }
    }

    /// Packet `i` goes back on the retransmission queue.
    fn requeue(&mut self, mss: u32, i: u32) {
        self.rtx.push_back(i);
        self.backlog += self.wire(mss, i);
    }

    /// Feedback from the receiver ends EQDS speculation.
    fn heard(&mut self) {
        if let Some(c) = &mut self.credit {
            c.speculating = false;
        }
    }

    /// BBR's reaction to a loss of `size` bytes (a trim or a timeout); its new window is traced.
    fn bbr_loss(&mut self, cx: &mut Cx, id: MsgId, k: &Option<BbrConsts>, size: u64, timeout: bool) {
        if let (Some(b), Some(k)) = (self.bbr.as_deref_mut(), k) {
            b.on_loss(k, size, self.inflight, timeout);
            self.cc.cwnd = b.cwnd;
            cx.trace_cwnd(id, b.cwnd);
        }
    }

    /// Packet `i` left the flight (ACKed, NACKed or timed out); its wire bytes if it was in it.
    fn leave_flight(&mut self, mss: u32, i: u32) -> Option<u64> {
        self.out.set(i, false).then(|| {
            let w = self.wire(mss, i);
            self.inflight -= w;
            w
        })
    }
}

/// What turns a SMaRTT host into an EQDS one.
#[derive(Clone, Debug)]
pub struct EqdsMode {
    /// Speculative credit of a new flow and the largest pull request outstanding (bytes).
    pub window: u64,
    /// Pull pacing as a multiple of the link rate.
    pub pull_rate_modifier: f64,
    /// A window law caps the sender (EQDS+SMaRTT, EQDS+MPRDMA); false: credit alone.
    pub cwnd_cap: bool,
    /// Bytes an idle pacer may pull a flow beyond its met target (0: none).
    pub idle_credit: u64,
}

pub struct Smartt {
    info: HostInfo,
    k: Consts,
    p: SmarttParams,
    init_cwnd: f64,
    bdp: u64,
    /// SMaRTT moves the window (false under EQDS without a cap: no window).
    cc_on: bool,
    eqds: Option<EqdsMode>,
    pacer: Option<Pacer>,
    /// BBR drives each flow instead of SMaRTT's window law.
    bbr: Option<BbrConsts>,
    /// `rto_fixed_brtt` and `rto_fixed_brtt_retx` in time.
    rto_fixed: Option<Time>,
    rto_fixed_retx: Option<Time>,
    // receiver
    inbound: IdMap<MsgId, Reassembly>,
    completed: IdSet<MsgId>,
    control: VecDeque<Packet<SmarttHeader>>,
    // sender
    outbound: IdMap<MsgId, OutMsg>,
    ready: VecDeque<MsgId>,
    /// Load balancers, per destination or per message (`lb.scope`).
    lbs: IdMap<u64, Balancer>,
}

/// A load balancer and the new data sent under it: REPS explores while that is
/// below one BDP (Algorithm 4's `p.seqnum < bdp`, in the balancer's own
/// sequence space: the message's or the connection's).
struct Balancer {
    lb: FlowLb,
    new_bytes: u64,
}

impl Smartt {
    pub fn new(p: &SmarttParams, info: &HostInfo) -> Smartt {
        let brtt = p.base_rtt_us.map_or(info.base_rtt, from_us).max(1);
        let trtt = (brtt as f64 * p.target_rtt).round() as Time;
        let bdp = info.link_rate_bps as f64 / 8.0 * brtt as f64 / S as f64;
        let gamma = bdp / p.reference_bdp_bytes;
        let mtu = data_wire(info.mss) as f64;
        let mi = p.mi.unwrap_or(brtt as f64 / (trtt - brtt).max(1) as f64);
        let k = Consts {
            brtt,
            trtt,
            bdp,
            mtu,
            min_cwnd: p.min_cwnd_mtu * mtu,
            max_cwnd: (p.max_cwnd_bdp * bdp).max(p.min_cwnd_mtu * mtu),
            fd: p.fd,
            fi: p.fi * gamma,
            mi: mi * gamma,
            md: if p.trimming { p.md } else { 2.0 * p.md },
            qa_scaling: p.qa_scaling,
            quick_adapt: p.quick_adapt,
            fast_increase_mtu: p.fast_increase_mtu,
            fast_increase_tolerance: from_us(p.fast_increase_tolerance_us),
            wtd_alpha: p.wtd_alpha,
            wtd_threshold: if p.wtd { p.wtd_threshold } else { 0.0 },
            react_every: p.react_every,
            signals: p.signals,
            mprdma_loss: p.mprdma_loss_mtu,
        };
        let times_brtt = |x: f64| (x * brtt as f64).round() as Time;
        Smartt {
            rto_fixed: (p.rto == RtoRule::Fixed).then(|| times_brtt(p.rto_fixed_brtt)),
            rto_fixed_retx: p.rto_fixed_brtt_retx.map(times_brtt),
            init_cwnd: p.init_cwnd_bdp * bdp,
            bdp: bdp.round() as u64,
            cc_on: true,
            eqds: None,
            pacer: None,
            bbr: None,
            k,
            p: p.clone(),
            info: info.clone(),
            inbound: IdMap::default(),
            completed: IdSet::default(),
            control: VecDeque::new(),
            outbound: IdMap::default(),
            ready: VecDeque::new(),
            lbs: IdMap::default(),
        }
    }

    /// An EQDS host, with `p`'s window law as its cap if `mode.cwnd_cap`.
    pub fn with_eqds(p: &SmarttParams, info: &HostInfo, mode: EqdsMode) -> Smartt {
        let mut s = Smartt::new(p, info);
        let frame = data_wire(info.mss) as u64;
        let spacing = fabriclab_engine::serialization_time(frame, info.link_rate_bps) as f64 / mode.pull_rate_modifier;
        s.pacer = Some(Pacer::new(spacing.round() as Time, frame, mode.idle_credit));
        s.cc_on = mode.cwnd_cap;
        s.eqds = Some(mode);
        s
    }

    /// A BBR host: `p`'s loss, RTO and load-balancing settings, BBR's window and pacing.
    pub fn with_bbr(p: &SmarttParams, info: &HostInfo, k: BbrConsts) -> Smartt {
        let mut s = Smartt::new(p, info);
        s.cc_on = false;
        s.bbr = Some(k);
        s
    }

    fn control_packet(&mut self, dst: u32, msg: MsgId, hdr: SmarttHeader, entropy: u32) {
        // (ACKs and NACKs echo their data packet's entropy; PULLs and RTSs take flow_entropy.)
        let mut p = Packet::new(self.info.id, dst, CONTROL_WIRE, CONTROL_PRIO, msg as u32, hdr);
        p.entropy = entropy;
        self.control.push_back(p);
    }

    // ---------------------------------------------------------------- receiver

    fn on_data(&mut self, cx: &mut Cx, pkt: &Packet<SmarttHeader>, msg: MsgId, size: u64, index: u32, target: u64) {
        let (src, sent, entropy) = (pkt.src, pkt.tx_time, pkt.entropy);
        if let Some(pacer) = self.pacer.as_mut().filter(|_| !self.completed.contains(&msg)) {
            // A trimmed packet will be sent again: pull for it too.
            let extra = if pkt.trimmed() { data_wire(payload_of(size, self.info.mss, index as u64)) as u64 } else { 0 };
            pacer.want(msg, src, target, extra, false);
        }
        if pkt.trimmed() {
            return self.control_packet(src, msg, SmarttHeader::Nack { msg, index, sent, entropy }, entropy);
        }
        self.control_packet(src, msg, SmarttHeader::Ack { msg, index, marked: pkt.ce(), sent, entropy }, entropy);
        if self.completed.contains(&msg) {
            return;
        }
        let mss = self.info.mss;
        let r = self.inbound.entry(msg).or_insert_with(|| Reassembly::new(size, mss));
        let payload = payload_of(size, mss, index as u64);
        if r.insert(index as u64, payload) {
            cx.deliver(msg, payload);
        }
        if r.is_complete() {
            self.inbound.remove(&msg);
            self.completed.insert(msg);
            if let Some(p) = &mut self.pacer {
                p.done(msg);
            }
            cx.complete(msg);
        }
    }

    fn on_rts(&mut self, src: u32, msg: MsgId, target: u64) {
        let Some(pacer) = self.pacer.as_mut().filter(|_| !self.completed.contains(&msg)) else {
            return;
        };
        if let Some((src, pull_no)) = pacer.want(msg, src, target, 0, true) {
            let entropy = flow_entropy(self.info.id, src, msg);
            self.control_packet(src, msg, SmarttHeader::Pull { msg, pull_no }, entropy);
        }
    }

    /// The pull pacer's next PULL, if one is due; otherwise arms its timer.
    fn poll_pull(&mut self, cx: &mut Cx) -> Option<Packet<SmarttHeader>> {
        match self.pacer.as_mut()?.poll(cx.now) {
            Ok((msg, src, pull_no)) => {
                let hdr = SmarttHeader::Pull { msg, pull_no };
                let mut p = Packet::new(self.info.id, src, CONTROL_WIRE, CONTROL_PRIO, msg as u32, hdr);
                p.entropy = flow_entropy(self.info.id, src, msg);
                Some(p)
            }
            Err(Some(at)) => {
                cx.set_timer(at, TIMER_PULL);
                None
            }
            Err(None) => None,
        }
    }

    // ------------------------------------------------------------------ sender

    /// REPS binds entropies when the window admits packets (`lb.stamp`): the
    /// default where the window alone lets packets go, never where credit
    /// (EQDS) or the pacer (BBR) does.
    fn stamps_at_admission(&self) -> bool {
        self.eqds.is_none() && self.bbr.is_none() && self.p.lb.stamp != Some(RepsStamp::Transmission)
    }

    fn make_ready(&mut self, cx: &mut Cx, id: MsgId) {
        let mss = self.info.mss;
        let stamp = self.stamps_at_admission();
        if let Some(m) = self.outbound.get_mut(&id) {
            if stamp {
                if let Some(b) = self.lbs.get(&m.lb) {
                    m.bind_admitted(mss, b.lb.admission_entropy());
                }
            }
            if !m.in_ready && m.can_send(mss) {
                m.in_ready = true;
                self.ready.push_back(id);
            } else if m.starved() && !m.rts_timer {
                m.rts_timer = true;
                cx.set_timer(cx.now + m.rto.rto, TIMER_RTS | id);
            }
        }
    }

    fn on_pull(&mut self, cx: &mut Cx, id: MsgId, pull_no: u64) {
        if let Some(m) = self.outbound.get_mut(&id) {
            m.heard();
            if let Some(c) = &mut m.credit {
                c.on_pull(pull_no);
            }
            self.make_ready(cx, id);
        }
    }

    /// EQDS: still starved an RTO after the flow ran out of credit: ask for pulls.
    fn on_rts_timer(&mut self, cx: &mut Cx, id: MsgId) {
        let Some(m) = self.outbound.get_mut(&id) else {
            return;
        };
        m.rts_timer = false;
        if m.starved() {
            let target =
                m.credit.as_ref().map_or(0, |c| c.target(m.backlog, self.eqds.as_ref().map_or(0, |e| e.window)));
            let dst = m.dst;
            let entropy = flow_entropy(self.info.id, dst, id);
            self.control_packet(dst, id, SmarttHeader::Rts { msg: id, pull_target: target }, entropy);
        }
        self.make_ready(cx, id);
    }

    fn on_ack(&mut self, cx: &mut Cx, id: MsgId, index: u32, marked: bool, sent: Time, entropy: u32) {
        let (k, mss) = (&self.k, self.info.mss);
        let Some(m) = self.outbound.get_mut(&id) else {
            return;
        };
        let rtt = cx.now - sent;
        m.rto.sample(rtt);
        m.heard();
        let size = m.wire(mss, index);
        m.leave_flight(mss, index);
        cx.trace_rtt(id, rtt);
        if self.cc_on {
            m.cc.on_ack(k, cx.now, size, marked, rtt, m.inflight);
            cx.trace_cwnd(id, m.cc.cwnd);
        }
        if let (Some(b), Some(bk)) = (m.bbr.as_deref_mut(), &self.bbr) {
            if !m.acked.get(index) {
                b.on_ack(bk, &mut *cx.rng, index, size, cx.now, rtt, m.inflight);
                m.cc.cwnd = b.cwnd;
                cx.trace_cwnd(id, b.cwnd);
            }
        }
        if let Some(b) = self.lbs.get_mut(&m.lb) {
            b.lb.on_ack(entropy, marked, size, cx.now, rtt);
        }
        if !m.acked.set(index, true) {
            m.acked_pkts += 1;
            if m.acked_pkts == m.n_pkts {
                if self.p.lb.scope.unwrap_or_default() == LbScope::Message {
                    self.lbs.remove(&m.lb);
                }
                self.outbound.remove(&id); // stale entries in `ready` are skipped
                return;
            }
        }
        self.make_ready(cx, id);
    }

    fn on_nack(&mut self, cx: &mut Cx, id: MsgId, index: u32, entropy: u32) {
        let (k, mss) = (&self.k, self.info.mss);
        let Some(m) = self.outbound.get_mut(&id) else {
            return;
        };
        m.heard();
        if let Some(size) = m.leave_flight(mss, index) {
            if self.cc_on {
                m.cc.on_loss(k, cx.now, size, m.inflight);
                cx.trace_cwnd(id, m.cc.cwnd);
            }
            m.bbr_loss(cx, id, &self.bbr, size, false);
            if let Some(b) = self.lbs.get_mut(&m.lb) {
                b.lb.on_nack(entropy);
            }
            if !m.acked.get(index) {
                m.requeue(mss, index);
            }
        }
        self.make_ready(cx, id);
    }

    fn arm_rto(cx: &mut Cx, id: MsgId, m: &mut OutMsg) {
        let Some(&(_, t)) = m.order.front() else {
            return;
        };
        let at = (t + m.rto.rto).max(cx.now);
        if m.rto_timer.is_none_or(|p| at < p) {
            m.rto_timer = Some(at);
            cx.set_timer(at, TIMER_RTO | id);
        }
    }

    /// The RTO of message `id` may have expired: every packet sent more than
    /// one RTO ago and still unanswered is lost.
    fn on_rto(&mut self, cx: &mut Cx, id: MsgId) {
        let (k, mss) = (&self.k, self.info.mss);
        let Some(m) = self.outbound.get_mut(&id) else {
            return;
        };
        if m.rto_timer == Some(cx.now) {
            m.rto_timer = None;
        }
        let mut lost = false;
        while let Some(&(i, t)) = m.order.front() {
            if !m.out.get(i) || m.sent_at[i as usize] != t {
                m.order.pop_front(); // answered, or sent again since
                continue;
            }
            if t + m.rto.rto > cx.now {
                break;
            }
            m.order.pop_front();
            let size = m.leave_flight(mss, i).unwrap_or(0);
            if self.cc_on {
                m.cc.on_loss(k, cx.now, size, m.inflight);
                cx.trace_cwnd(id, m.cc.cwnd);
            }
            m.bbr_loss(cx, id, &self.bbr, size, true);
            m.requeue(mss, i);
            lost = true;
        }
        if let Some(b) = self.lbs.get_mut(&m.lb).filter(|_| lost) {
            b.lb.on_timeout();
        }
        Self::arm_rto(cx, id, m);
        self.make_ready(cx, id);
    }

    /// The next data packet, round-robin over messages whose window is open.
    fn poll_data(&mut self, cx: &mut Cx) -> Option<Packet<SmarttHeader>> {
        let mss = self.info.mss;
        while let Some(id) = self.ready.pop_front() {
            let Some(m) = self.outbound.get_mut(&id) else {
                continue;
            };
            m.in_ready = false;
            while let Some(i) = m.rtx.front().copied().filter(|&i| m.acked.get(i) || m.out.get(i)) {
                m.rtx.pop_front(); // answered, or already resent, meanwhile
                m.backlog -= m.wire(mss, i);
            }
            if !m.can_send(mss) {
                if m.starved() && !m.rts_timer {
                    m.rts_timer = true;
                    cx.set_timer(cx.now + m.rto.rto, TIMER_RTS | id);
                }
                continue;
            }
            if m.pace_at > cx.now {
                if m.pace_timer.is_none_or(|t| t > m.pace_at) {
                    m.pace_timer = Some(m.pace_at);
                    cx.set_timer(m.pace_at, TIMER_PACE | id);
                }
                continue;
            }
            let (index, new) = match m.rtx.pop_front() {
                Some(i) => {
                    if let Some(r) = self.rto_fixed_retx {
                        m.rto = RtoEstimator::fixed(r);
                    }
                    (i, false)
                }
                None => {
                    m.next += 1;
                    (m.next - 1, true)
                }
            };
            let wire = m.wire(mss, index);
            if let Some(b) = m.bbr.as_deref_mut() {
                let last_new = m.next == m.n_pkts && m.rtx.is_empty();
                b.on_send(index, cx.now, m.inflight, last_new);
                m.pace_at = cx.now + b.pace_gap(wire);
            }
            m.out.set(index, true);
            m.inflight += wire;
            m.backlog -= wire;
            let cap = self.eqds.as_ref().map_or(0, |e| (m.cc.cwnd + self.k.mtu).min(e.window as f64) as u64);
            let pull_target = m.credit.as_mut().map_or(0, |c| {
                c.spend(wire);
                c.target(m.backlog, cap)
            });
            m.sent_at[index as usize] = cx.now;
            m.order.push_back((index, cx.now));
            let b = self.lbs.get_mut(&m.lb).expect("a sending message has a balancer");
            let bound = m.bound.pop_front();
            let entropy = b.lb.next_entropy(if new { b.new_bytes } else { u64::MAX }, &mut *cx.rng, bound);
            b.new_bytes += new as u64 * mss as u64;
            let (dst, size) = (m.dst, m.size);
            Self::arm_rto(cx, id, m);
            if m.can_send(mss) {
                m.in_ready = true;
                self.ready.push_back(id);
            }
            let hdr = SmarttHeader::Data { msg: id, size, index, pull_target };
            let mut p = Packet::new(self.info.id, dst, wire as u32, DATA_PRIO, id as u32, hdr).with_ect();
            p.entropy = entropy;
            return Some(p);
        }
        None
    }
}

impl Transport for Smartt {
    type Header = SmarttHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let n_pkts = packets_for(msg.size, self.info.mss) as u32;
        let rto_min = (self.p.rto_min_trtt * self.k.trtt as f64).round() as Time;
        // The balancer's key in `lbs`, and the key its wire entropies derive from.
        let pair = (self.info.id as u64) << 40 ^ (msg.dst as u64) << 20;
        let (lb, key) = match self.p.lb.scope.unwrap_or_default() {
            LbScope::Connection => (msg.dst as u64, pair),
            LbScope::Message => (msg.id, msg.id ^ pair),
        };
        let (p, bdp, rng) = (&self.p.lb, self.bdp, &mut *cx.rng);
        self.lbs.entry(lb).or_insert_with(|| Balancer { lb: FlowLb::new(p, key, bdp, rng), new_bytes: 0 });
        let mut cc = SmarttCc::new(self.init_cwnd, &self.k);
        if !self.cc_on {
            cc.cwnd = f64::INFINITY; // EQDS alone: credit is the only limit
        } else {
            cx.trace_cwnd(msg.id, cc.cwnd);
        }
        let mut m = OutMsg {
            dst: msg.dst,
            size: msg.size,
            n_pkts,
            next: 0,
            acked: Bits::new(n_pkts),
            out: Bits::new(n_pkts),
            inflight: 0,
            rtx: VecDeque::new(),
            sent_at: vec![0; n_pkts as usize],
            order: VecDeque::new(),
            acked_pkts: 0,
            cc,
            lb,
            rto: self.rto_fixed.map_or_else(|| RtoEstimator::new(self.k.brtt, rto_min), RtoEstimator::fixed),
            rto_timer: None,
            in_ready: false,
            backlog: (0..n_pkts as u64).map(|i| data_wire(payload_of(msg.size, self.info.mss, i)) as u64).sum(),
            credit: self.eqds.as_ref().map(|e| Credit::new(e.window)),
            rts_timer: false,
            bbr: self.bbr.as_ref().map(|k| Box::new(Bbr::new(k, n_pkts, cx.now))),
            pace_at: 0,
            bound: VecDeque::new(),
            pace_timer: None,
        };
        if let Some(b) = &m.bbr {
            m.cc.cwnd = b.cwnd;
            cx.trace_cwnd(msg.id, b.cwnd);
        }
        self.outbound.insert(msg.id, m);
        self.make_ready(cx, msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<SmarttHeader>) {
        match pkt.hdr {
            SmarttHeader::Data { msg, size, index, pull_target } => {
                self.on_data(cx, pkt, msg, size, index, pull_target)
            }
            SmarttHeader::Ack { msg, index, marked, sent, entropy } => {
                self.on_ack(cx, msg, index, marked, sent, entropy)
            }
            SmarttHeader::Nack { msg, index, entropy, .. } => self.on_nack(cx, msg, index, entropy),
            SmarttHeader::Pull { msg, pull_no } => self.on_pull(cx, msg, pull_no),
            SmarttHeader::Rts { msg, pull_target } => self.on_rts(pkt.src, msg, pull_target),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let id = token & !TIMER_KIND;
        match token & TIMER_KIND {
            TIMER_RTO => self.on_rto(cx, id),
            TIMER_PACE => {
                if let Some(m) = self.outbound.get_mut(&id).filter(|m| m.pace_timer == Some(cx.now)) {
                    m.pace_timer = None;
                    self.make_ready(cx, id);
                }
            }
            TIMER_RTS => self.on_rts_timer(cx, id),
            TIMER_PULL => {
                if let Some(p) = &mut self.pacer {
                    p.timer_fired(cx.now);
                }
            }
            _ => {}
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<SmarttHeader>> {
        if let Some(p) = self.control.pop_front() {
            return Some(p);
        }
        if let Some(p) = self.poll_pull(cx) {
            return Some(p);
        }
        self.poll_data(cx)
    }
}

/// The entropy of a flow's PULLs and RTSs: one path per flow, different flows on
/// different paths, as a switch hashing the 5-tuple would place them (htsim's
/// switches hash the flow id with the entropy, and its EQDS sink sends every PULL
/// with one entropy). A single entropy for all of them, as before, put every
/// receiver's PULLs through the same port of each switch, where the pull stream of
/// a whole pod starved the data behind it (docs/xval.md).
fn flow_entropy(from: u32, to: u32, msg: MsgId) -> u32 {
    fabriclab_engine::mix64(((from as u64) << 40) ^ ((to as u64) << 20) ^ msg.rotate_left(7)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::params::assert_bad_keys_named;

    /// `base_rtt_us` replaces the fabric's base RTT in everything the window
    /// law derives from it: the target RTT, the BDP and the windows.
    #[test]
    fn the_base_rtt_override_sets_target_bdp_and_windows() {
        use fabriclab_engine::US;
        let info = HostInfo::at_100gbps(0, 8, 2, 12 * US);
        let own = Smartt::new(&SmarttParams::default(), &info);
        let p = SmarttParams { base_rtt_us: Some(6.0), ..SmarttParams::default() };
        let half = Smartt::new(&p, &info);
        assert_eq!((own.k.brtt, half.k.brtt), (12 * US, 6 * US));
        assert_eq!((own.k.trtt, half.k.trtt), (18 * US, 9 * US));
        assert_eq!((own.bdp, half.bdp), (150_000, 75_000));
        assert_eq!(half.init_cwnd, own.init_cwnd / 2.0);
    }

    /// The PULLs an EQDS receiver sends to two senders, each pulling its own
    /// message: (sender, entropy) in the order they leave.
    fn pulls_to_two_senders() -> Vec<(u32, u32)> {
        use fabriclab_engine::{stream, Stream, US};
        let info = HostInfo::at_100gbps(0, 8, 2, 8 * US);
        let mode = EqdsMode { window: 100_000, pull_rate_modifier: 1.0, cwnd_cap: false, idle_credit: 0 };
        let mut rx = Smartt::with_eqds(&SmarttParams::default(), &info, mode);
        let (mut rng, mut timers, mut app) = (stream(1, Stream::Host, 0), Vec::new(), Vec::new());
        let mut out = Vec::new();
        for now in 0..40u64 {
            let now = now * 200_000; // 200 ns: past the pacer's spacing each time
            let mut cx = Cx::new(now, &mut rng, &mut timers, &mut app);
            if now == 0 {
                for (src, msg) in [(3u32, 7u64), (5, 9)] {
                    let hdr = SmarttHeader::Data { msg, size: 10_000_000, index: 0, pull_target: 1_000_000 };
                    rx.on_packet(&mut cx, &Packet::new(src, 0, data_wire(1460), DATA_PRIO, msg as u32, hdr));
                }
            }
            while let Some(p) = rx.poll_transmit(&mut cx) {
                if matches!(p.hdr, SmarttHeader::Pull { .. }) {
                    out.push((p.dst, p.entropy));
                }
            }
        }
        out
    }

    /// A flow's PULLs keep one path and different flows' PULLs take different
    /// paths: with one entropy for every PULL, each switch sent the PULLs of all
    /// its receivers through one port (docs/xval.md, k = 16 permutation).
    #[test]
    fn pulls_take_one_path_per_flow_and_flows_differ() {
        let pulls = pulls_to_two_senders();
        let of = |src: u32| pulls.iter().filter(|p| p.0 == src).map(|p| p.1).collect::<Vec<_>>();
        let (a, b) = (of(3), of(5));
        assert!(a.len() >= 5 && b.len() >= 5, "{pulls:?}");
        assert!(a.iter().all(|&e| e == a[0]) && b.iter().all(|&e| e == b[0]), "{pulls:?}");
        assert_ne!(a[0], b[0], "two flows' PULLs on one entropy");
    }

    /// The entropies of the two packets a sender sends after two unmarked
    /// ACKs (for its packets 0 and 1) arrive while its link is busy, and the
    /// entropies those ACKs echoed.
    fn two_acks_then_two_packets(stamp: RepsStamp) -> ([u32; 2], [u32; 2]) {
        use fabriclab_engine::{stream, Stream, US};
        let info = HostInfo::at_100gbps(0, 8, 2, 8 * US);
        let p = SmarttParams { lb: LbParams { stamp: Some(stamp), ..Default::default() }, ..Default::default() };
        let mut tx = Smartt::new(&p, &info);
        let (mut rng, mut timers, mut app) = (stream(1, Stream::Host, 0), Vec::new(), Vec::new());
        let mut cx = Cx::new(0, &mut rng, &mut timers, &mut app);
        tx.start_message(&mut cx, &Message { id: 4, src: 0, dst: 1, size: 1 << 20, start: 0 });
        let mut sent = Vec::new(); // the first window: (index, entropy)
        while let Some(p) = tx.poll_transmit(&mut cx) {
            if let SmarttHeader::Data { index, .. } = p.hdr {
                sent.push((index, p.entropy));
            }
        }
        assert!(sent.len() > 2 && sent[0].0 == 0 && sent[1].0 == 1, "{sent:?}");
        let mut cx = Cx::new(10 * US, &mut rng, &mut timers, &mut app);
        for &(index, entropy) in &sent[..2] {
            let hdr = SmarttHeader::Ack { msg: 4, index, marked: false, sent: 0, entropy };
            tx.on_packet(&mut cx, &Packet::new(1, 0, CONTROL_WIRE, CONTROL_PRIO, 4, hdr));
        }
        let mut next = Vec::new();
        while let Some(p) = tx.poll_transmit(&mut cx).filter(|_| next.len() < 2) {
            next.push(p.entropy);
        }
        ([sent[0].1, sent[1].1], [next[0], next[1]])
    }

    /// spcl/HTSIM builds the packet an ACK releases when the ACK arrives, with
    /// that ACK's entropy; taking the entropy only as the packet leaves lets
    /// the second ACK overwrite the first's, and the flow loses a path.
    #[test]
    fn each_ack_passes_its_entropy_to_the_packet_it_admits() {
        let (echoed, admitted) = two_acks_then_two_packets(RepsStamp::Admission);
        assert_ne!(echoed[0], echoed[1]);
        assert_eq!(admitted, echoed);
        let (echoed, transmitted) = two_acks_then_two_packets(RepsStamp::Transmission);
        assert_eq!(transmitted, [echoed[1]; 2]);
        // Admission is the default of the window-clocked host only.
        let info = HostInfo::at_100gbps(0, 8, 2, 8_000_000);
        let p = SmarttParams::default();
        assert!(Smartt::new(&p, &info).stamps_at_admission());
        let mode = EqdsMode { window: 100_000, pull_rate_modifier: 1.0, cwnd_cap: true, idle_credit: 0 };
        assert!(!Smartt::with_eqds(&p, &info, mode).stamps_at_admission());
    }

    #[test]
    fn bad_parameters_name_their_key() {
        assert_bad_keys_named(
            "smartt",
            [
                (SmarttParams { target_rtt: 1.0, ..Default::default() }, "target_rtt"),
                (SmarttParams { fd: f64::NAN, ..Default::default() }, "fd"),
                (SmarttParams { qa_scaling: 0.0, ..Default::default() }, "qa_scaling"),
                (SmarttParams { react_every: 0, ..Default::default() }, "react_every"),
                (SmarttParams { wtd_threshold: 2.0, ..Default::default() }, "wtd_threshold"),
                (SmarttParams { min_cwnd_mtu: -1.0, ..Default::default() }, "min_cwnd_mtu"),
                (SmarttParams { signals: Signals::Mprdma, ..Default::default() }, "signals"),
                (
                    SmarttParams { lb: LbParams { entropies: 0, ..Default::default() }, ..Default::default() },
                    "lb.entropies",
                ),
                (
                    SmarttParams {
                        lb: LbParams {
                            kind: crate::transport::lb::LbKind::Spray,
                            stamp: Some(RepsStamp::Admission),
                            ..Default::default()
                        },
                        ..Default::default()
                    },
                    "lb.stamp",
                ),
            ],
        );
    }

    #[test]
    fn constants_scale_with_the_bdp() {
        // 800 Gbps and an 8.6 us base RTT: bdp 860 KB, gamma 5.73, mi = 2 gamma, max window 1.25 BDP.
        let info = HostInfo {
            link_rate_bps: 800_000_000_000,
            mtu: 4096,
            mss: 4056,
            ..HostInfo::at_100gbps(0, 2, 8, 8_600_000)
        };
        let s = Smartt::new(&SmarttParams::default(), &info);
        assert!((s.k.bdp - 860_000.0).abs() < 1.0);
        assert!((s.k.fi - 0.25 * 860_000.0 / 150_000.0).abs() < 1e-9);
        assert!((s.k.mi - 2.0 * 860_000.0 / 150_000.0).abs() < 1e-6);
        assert_eq!(s.k.trtt, 12_900_000);
        assert!((s.k.max_cwnd - 1.25 * 860_000.0).abs() < 1.0);
        let no_trim = Smartt::new(&SmarttParams { trimming: false, ..Default::default() }, &info);
        assert_eq!(no_trim.k.md, 4.0, "md doubles when timeouts replace trimming");
    }
}
