//! DCQCN (Zhu, Eran, Firestone, Guo, Lipshteyn, Liron, Padhye, Raindel,
//! Yahia, Zhang, "Congestion Control for Large-Scale RDMA Deployments",
//! SIGCOMM 2015) with the sending window HPCC added to it (Li et al.,
//! SIGCOMM 2019, §5: "DCQCN+win"), as PayDebt evaluates it. Defaults follow
//! the HPCC ns-3 simulator's DCQCN (alibaba-edu/High-Precision-Congestion-
//! Control, `simulation/run.py` and `rdma-hw.cc`, read for behaviour); see
//! docs/protocols/dcqcn.md.
//!
//! - One queue pair per message, starting at line rate; packets are paced at
//!   the QP's current rate and limited by a window of `window_bdp` x BDP
//!   scaled by rate / line rate (HPCC's VAR_WIN).
//! - Switches mark with RED (Kmin, Kmax, Pmax) and run PFC (both brought as
//!   network defaults). The receiver ACKs every packet and echoes a CE mark
//!   as a CNP; the sender's reaction point (rate.rs) cuts and recovers.
//! - Loss (rare under PFC): go-back-N. The receiver keeps only in-order data
//!   and NACKs a gap; a sender without progress for `rto_us` goes back to its
//!   first unacknowledged packet.

mod hpcc;
mod rate;

pub use hpcc::{HpccConsts, HpccParams, HpccState};
pub use rate::{ReactionPoint, RpParams};

use super::toolkit::{IdMap, IdSet};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::int::IntStack;
use crate::net::switch_config::{PfcConfig, RedConfig, SwitchFeatures};
use crate::net::wire::{data_wire, packets_for, payload_of, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet, INT};
use crate::transport::params::{ParamDoc, ProtocolParams, GAIN};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_BUFFER_BYTES};
use fabriclab_engine::{from_us, serialization_time, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[protocol.dcqcn]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DcqcnParams {
    /// EWMA gain of alpha.
    pub g: f64,
    pub alpha_interval_us: f64,
    pub rate_decrease_interval_us: f64,
    /// Rate-increase timer.
    pub rate_increase_interval_us: f64,
    pub fast_recovery_times: u32,
    /// Additive and hyper increase steps, Mb/s.
    pub rai_mbps: f64,
    pub rhai_mbps: f64,
    pub min_rate_mbps: f64,
    /// Sending window, x BDP at line rate (scaled by rate / line rate); 0 = none.
    pub window_bdp: f64,
    /// RED at the switches (network defaults).
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
    /// PFC at the switches (network default).
    pub pfc: bool,
    /// Go back to the first unacknowledged packet after this long without progress.
    pub rto_us: f64,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        // HPCC ns-3 run.py, "dcqcn_vwin" at bw = 10 Gbps: AI 5 x bw/25 Mb/s, HAI 50 x bw/25,
        // Kmin/Kmax 100/400 KB x bw/25, Pmax 0.2.
        DcqcnParams {
            g: 1.0 / 256.0,
            alpha_interval_us: 1.0,
            rate_decrease_interval_us: 4.0,
            rate_increase_interval_us: 300.0,
            fast_recovery_times: 1,
            rai_mbps: 2.0,
            rhai_mbps: 20.0,
            min_rate_mbps: 1000.0,
            window_bdp: 1.0,
            kmin_bytes: 40_000,
            kmax_bytes: 160_000,
            pmax: 0.2,
            pfc: true,
            rto_us: 10_000.0,
        }
    }
}

/// An additive rate step (DCQCN's and HPCC's AI, DCQCN's HAI): up to 10 Tbps.
pub(crate) const RATE_STEP: Bound = Bound::new("a rate in Mbps", 1e-3, 1e7);

impl Validate for DcqcnParams {
    /// The rules between keys; each key's own range is in [`DcqcnParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        if self.kmax_bytes < self.kmin_bytes {
            return Err(ConfigError::value(
                "protocol.dcqcn.kmax_bytes",
                self.kmax_bytes,
                &format!("a number of bytes >= kmin_bytes ({})", self.kmin_bytes),
            ));
        }
        Ok(())
    }
}

impl ProtocolParams for DcqcnParams {
    type Host = Dcqcn;
    const PAPER: &'static str = "Congestion Control for Large-Scale RDMA Deployments (Zhu et al., SIGCOMM 2015), \
                                 with HPCC's sending window (Li et al., SIGCOMM 2019)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Ecmp;

    fn switch_features(&self, _bdp_bytes: u64, _mss: u32) -> SwitchFeatures {
        SwitchFeatures {
            red: Some(RedConfig {
                kmin_bytes: self.kmin_bytes,
                kmax_bytes: self.kmax_bytes,
                pmax: self.pmax,
                ..Default::default()
            }),
            pfc: self.pfc.then(PfcConfig::default),
            ..Default::default()
        }
    }

    fn host(&self, info: &HostInfo) -> Dcqcn {
        Dcqcn::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        vec![
            ("g", GAIN),
            ("fast_recovery_times", Bound::new("a number of steps", 0.0, 1000.0)),
            ("rai_mbps", RATE_STEP),
            ("rhai_mbps", RATE_STEP),
            ("kmin_bytes", Bound::new("a number of bytes", 0.0, MAX_BUFFER_BYTES as f64).above()),
            ("pmax", Bound::new("a probability", 0.0, 1.0).above()),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = DcqcnParams::default();
        let doc = |key, default: String, meaning, source| ParamDoc { key, default, meaning, source };
        let hpcc = "HPCC ns-3 run.py (dcqcn_vwin)";
        vec![
            doc("g", d.g.to_string(), "alpha EWMA gain", "DCQCN §3.1 (1/256); HPCC run.py"),
            doc("alpha_interval_us", d.alpha_interval_us.to_string(), "alpha update period", hpcc),
            doc("rate_decrease_interval_us", d.rate_decrease_interval_us.to_string(), "rate cut period", hpcc),
            doc("rate_increase_interval_us", d.rate_increase_interval_us.to_string(), "rate increase timer", hpcc),
            doc("fast_recovery_times", d.fast_recovery_times.to_string(), "fast-recovery steps", hpcc),
            doc("rai_mbps", d.rai_mbps.to_string(), "additive increase (Mb/s)", "HPCC run.py: 5 x bw/25 at 10 Gbps"),
            doc("rhai_mbps", d.rhai_mbps.to_string(), "hyper increase (Mb/s)", "HPCC run.py: 50 x bw/25 at 10 Gbps"),
            doc("min_rate_mbps", d.min_rate_mbps.to_string(), "rate floor (Mb/s)", hpcc),
            doc(
                "window_bdp",
                d.window_bdp.to_string(),
                "window at line rate (x BDP), scaled by rate",
                "HPCC §5 DCQCN+win (VAR_WIN); PayDebt §5",
            ),
            doc(
                "kmin_bytes",
                d.kmin_bytes.to_string(),
                "RED Kmin at switches",
                "HPCC run.py: 100 KB x bw/25 at 10 Gbps",
            ),
            doc(
                "kmax_bytes",
                d.kmax_bytes.to_string(),
                "RED Kmax at switches",
                "HPCC run.py: 400 KB x bw/25 at 10 Gbps",
            ),
            doc("pmax", d.pmax.to_string(), "RED Pmax at switches", "HPCC run.py"),
            doc("pfc", d.pfc.to_string(), "PFC at switches (network.pfc defaults)", "PayDebt §5 (PFC enabled)"),
            doc(
                "rto_us",
                d.rto_us.to_string(),
                "no progress this long -> go back N",
                "our choice: above an 8 MB buffer's drain time at 10 Gbps (6.4 ms)",
            ),
        ]
    }
}

#[derive(Clone, Copy, Debug)]
pub enum DcqcnHeader {
    Data {
        msg: MsgId,
        size: u64,
        psn: u32,
    },
    /// Cumulative: every packet below `next` arrived. `cnp`: the packet that
    /// triggered it was CE-marked. `nack`: it arrived out of order.
    /// `int`: the data packet's INT records, echoed (HPCC).
    Ack {
        msg: MsgId,
        next: u32,
        cnp: bool,
        nack: bool,
        int: IntStack,
    },
}

/// A QP's congestion control: DCQCN's reaction point or HPCC's window.
enum Cc {
    Dcqcn(ReactionPoint),
    Hpcc(HpccState),
}

impl Cc {
    fn rate(&self) -> f64 {
        match self {
            Cc::Dcqcn(rp) => rp.rate,
            Cc::Hpcc(h) => h.rate,
        }
    }
}

const ACK_PRIO: u8 = 0;
const DATA_PRIO: u8 = 1;
const TIMER_PACE: u64 = 0;
const TIMER_DEC: u64 = 1 << 61;
const TIMER_INC: u64 = 2 << 61;
const TIMER_RTO: u64 = 3 << 61;
const TIMER_KIND: u64 = 3 << 61;

struct OutFlow {
    dst: u32,
    size: u64,
    n: u32,
    una: u32,
    nxt: u32,
    cc: Cc,
    next_avail: Time,
    last_progress: Time,
}

struct InFlow {
    expected: u32,
    last_nack: Option<(u32, Time)>,
}

pub struct Dcqcn {
    info: HostInfo,
    rp: RpParams,
    /// Set when the hosts run HPCC instead of DCQCN.
    hpcc: Option<HpccConsts>,
    window_bytes: f64,
    rto: Time,
    nack_interval: Time,
    outbound: IdMap<MsgId, OutFlow>,
    /// Flows with data to send, served round-robin.
    active: VecDeque<MsgId>,
    pace_timer_at: Option<Time>,
    inbound: IdMap<MsgId, InFlow>,
    completed: IdSet<MsgId>,
    control: VecDeque<Packet<DcqcnHeader>>,
}

impl Dcqcn {
    pub fn new(p: &DcqcnParams, info: &HostInfo) -> Dcqcn {
        let line = info.link_rate_bps as f64;
        Dcqcn {
            rp: RpParams {
                g: p.g,
                t_alpha: from_us(p.alpha_interval_us).max(1),
                t_dec: from_us(p.rate_decrease_interval_us).max(1),
                t_inc: from_us(p.rate_increase_interval_us).max(1),
                fast_recovery_times: p.fast_recovery_times,
                rai_bps: p.rai_mbps * 1e6,
                rhai_bps: p.rhai_mbps * 1e6,
                min_rate_bps: (p.min_rate_mbps * 1e6).min(line),
                line_rate_bps: line,
            },
            hpcc: None,
            window_bytes: p.window_bdp * info.bdp_bytes as f64,
            rto: from_us(p.rto_us).max(1),
            // HPCC ns-3 NACKGenerationInterval: 500 us.
            nack_interval: from_us(500.0),
            outbound: IdMap::default(),
            active: VecDeque::new(),
            pace_timer_at: None,
            inbound: IdMap::default(),
            completed: IdSet::default(),
            control: VecDeque::new(),
            info: info.clone(),
        }
    }

    /// HPCC's hosts: the same QPs, paced by HPCC's rate.
    pub fn with_hpcc(c: HpccConsts, rto: Time, info: &HostInfo) -> Dcqcn {
        let dcqcn = DcqcnParams { window_bdp: c.win_bytes / info.bdp_bytes as f64, ..Default::default() };
        Dcqcn { hpcc: Some(c), rto: rto.max(1), ..Dcqcn::new(&dcqcn, info) }
    }

    fn ack(&mut self, cx: &Cx, dst: u32, msg: MsgId, next: u32, cnp: bool, nack: bool) {
        // HPCC echoes the INT records (8 bytes a hop, HPCC's packing) in the ACK.
        let int = cx.int().copied().filter(|_| self.hpcc.is_some()).unwrap_or_default();
        let wire = CONTROL_WIRE + 8 * int.hops().len() as u32;
        let hdr = DcqcnHeader::Ack { msg, next, cnp, nack, int };
        self.control.push_back(Packet::new(self.info.id, dst, wire, ACK_PRIO, msg as u32, hdr));
    }

    // ---------------------------------------------------------------- receiver

    fn on_data(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, psn: u32, ce: bool) {
        let mss = self.info.mss;
        if self.completed.contains(&msg) {
            let n = packets_for(size, mss) as u32;
            self.ack(cx, src, msg, n, ce, false);
            return;
        }
        let f = self.inbound.entry(msg).or_insert(InFlow { expected: 0, last_nack: None });
        if psn == f.expected {
            f.expected += 1;
            let next = f.expected;
            cx.deliver(msg, payload_of(size, mss, psn as u64));
            if next as u64 == packets_for(size, mss) {
                self.inbound.remove(&msg);
                self.completed.insert(msg);
                cx.complete(msg);
            }
            self.ack(cx, src, msg, next, ce, false);
        } else if psn > f.expected {
            // Go-back-N: drop it; NACK once per expected PSN and interval.
            let (expected, now) = (f.expected, cx.now);
            let fresh = f.last_nack.is_none_or(|(e, t)| e != expected || now >= t + self.nack_interval);
            if fresh {
                f.last_nack = Some((expected, now));
                self.ack(cx, src, msg, expected, ce, true);
            }
        } else {
            let next = f.expected;
            self.ack(cx, src, msg, next, ce, false);
        }
    }

    // ------------------------------------------------------------------ sender

    fn on_ack(&mut self, cx: &mut Cx, msg: MsgId, next: u32, cnp: bool, nack: bool, int: &IntStack) {
        let (rp, hpcc, now, window) = (self.rp, self.hpcc, cx.now, self.window_bytes);
        let Some(f) = self.outbound.get_mut(&msg) else {
            return;
        };
        if next > f.una {
            f.una = next;
            f.last_progress = now;
        }
        if nack {
            f.nxt = f.una;
        }
        f.nxt = f.nxt.max(f.una);
        match &mut f.cc {
            Cc::Dcqcn(r) if cnp => {
                if let Some(at) = r.on_cnp(&rp, now) {
                    cx.set_timer(at, TIMER_DEC | msg);
                }
            }
            Cc::Hpcc(h) => h.on_ack(hpcc.as_ref().expect("HPCC hosts"), next, f.nxt, int),
            Cc::Dcqcn(_) => {}
        }
        if window > 0.0 {
            cx.trace_cwnd(msg, window * f.cc.rate() / rp.line_rate_bps); // the rate-scaled window
        }
        if f.una == f.n {
            self.outbound.remove(&msg); // a stale entry in `active` is skipped
        } else if nack && !self.active.contains(&msg) {
            self.active.push_back(msg);
        }
    }

    fn on_rto(&mut self, cx: &mut Cx, msg: MsgId) {
        let rto = self.rto;
        let Some(f) = self.outbound.get_mut(&msg) else {
            return;
        };
        let due = f.last_progress + rto;
        if cx.now >= due && f.una < f.nxt {
            f.nxt = f.una;
            f.last_progress = cx.now;
            if !self.active.contains(&msg) {
                self.active.push_back(msg);
            }
        }
        let f = &self.outbound[&msg];
        cx.set_timer((f.last_progress + rto).max(cx.now + 1), TIMER_RTO | msg);
    }

    fn window_allows(&self, f: &OutFlow) -> bool {
        if self.window_bytes <= 0.0 {
            return true;
        }
        let mss = self.info.mss as u64;
        let inflight = (f.nxt as u64 * mss).min(f.size) - f.una as u64 * mss;
        (inflight as f64) < self.window_bytes * f.cc.rate() / self.rp.line_rate_bps
    }

    /// The next data packet: round-robin over QPs whose pacing and window allow.
    fn poll_data(&mut self, cx: &mut Cx) -> Option<Packet<DcqcnHeader>> {
        let mss = self.info.mss;
        let mut wake: Option<Time> = None;
        for _ in 0..self.active.len() {
            let id = self.active.pop_front()?;
            let Some(f) = self.outbound.get(&id) else {
                continue;
            };
            if f.nxt >= f.n {
                continue; // all sent; a NACK or RTO puts it back
            }
            self.active.push_back(id);
            if !self.window_allows(f) {
                continue; // an ACK reopens it
            }
            if f.next_avail > cx.now {
                wake = Some(wake.map_or(f.next_avail, |w| w.min(f.next_avail)));
                continue;
            }
            let f = self.outbound.get_mut(&id).expect("present");
            let psn = f.nxt;
            f.nxt += 1;
            let payload = payload_of(f.size, mss, psn as u64);
            let wire = data_wire(payload);
            f.next_avail = cx.now + serialization_time(wire as u64, f.cc.rate().max(1.0) as u64);
            let hdr = DcqcnHeader::Data { msg: id, size: f.size, psn };
            let p = Packet::new(self.info.id, f.dst, wire, DATA_PRIO, id as u32, hdr).with_ect();
            return Some(if self.hpcc.is_some() { p.with_flags(INT) } else { p });
        }
        if let Some(w) = wake.filter(|&w| self.pace_timer_at.is_none_or(|t| t > w || t < cx.now)) {
            self.pace_timer_at = Some(w);
            cx.set_timer(w, TIMER_PACE);
        }
        None
    }
}

impl Transport for Dcqcn {
    type Header = DcqcnHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let f = OutFlow {
            dst: msg.dst,
            size: msg.size,
            n: packets_for(msg.size, self.info.mss) as u32,
            una: 0,
            nxt: 0,
            cc: match self.hpcc {
                Some(_) => Cc::Hpcc(HpccState::new(self.rp.line_rate_bps)),
                None => Cc::Dcqcn(ReactionPoint::new(self.rp.line_rate_bps)),
            },
            next_avail: cx.now,
            last_progress: cx.now,
        };
        self.outbound.insert(msg.id, f);
        self.active.push_back(msg.id);
        cx.set_timer(cx.now + self.rto, TIMER_RTO | msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<DcqcnHeader>) {
        match pkt.hdr {
            DcqcnHeader::Data { msg, size, psn } => self.on_data(cx, pkt.src, msg, size, psn, pkt.ce()),
            DcqcnHeader::Ack { msg, next, cnp, nack, int } => self.on_ack(cx, msg, next, cnp, nack, &int),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let (rp, now, msg) = (self.rp, cx.now, token & !TIMER_KIND);
        match token & TIMER_KIND {
            TIMER_PACE => {
                if self.pace_timer_at == Some(now) {
                    self.pace_timer_at = None;
                }
            }
            TIMER_DEC => {
                if let Some(Cc::Dcqcn(r)) = self.outbound.get_mut(&msg).map(|f| &mut f.cc) {
                    let inc = r.decrease_tick(&rp, now);
                    cx.set_timer(inc, TIMER_INC | msg);
                }
            }
            TIMER_INC => {
                let f = self.outbound.get_mut(&msg).map(|f| &mut f.cc);
                if let Some(Cc::Dcqcn(r)) = f.filter(|c| matches!(c, Cc::Dcqcn(r) if r.inc_due == Some(now))) {
                    let next = r.increase_tick(&rp, now);
                    // At line rate with the target there, further ticks change nothing.
                    if r.rate < rp.line_rate_bps * (1.0 - 1e-9) {
                        cx.set_timer(next, TIMER_INC | msg);
                    } else {
                        r.rate = rp.line_rate_bps;
                        r.inc_due = None;
                    }
                }
            }
            _ => self.on_rto(cx, msg),
        }
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<DcqcnHeader>> {
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

    #[test]
    fn bad_parameters_name_their_key() {
        assert_bad_keys_named(
            "dcqcn",
            [
                (DcqcnParams { g: 0.0, ..Default::default() }, "g"),
                (DcqcnParams { kmax_bytes: 1, ..Default::default() }, "kmax_bytes"),
                (DcqcnParams { pmax: 2.0, ..Default::default() }, "pmax"),
                (DcqcnParams { kmin_bytes: 0, kmax_bytes: 0, ..Default::default() }, "kmin_bytes"),
                (DcqcnParams { rai_mbps: 2e7, ..Default::default() }, "rai_mbps"),
            ],
        );
    }
}
