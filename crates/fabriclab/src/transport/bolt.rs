//! Bolt (Arslan et al., NSDI 2023; Arslan's Stanford thesis, 2024, ch. 4):
//! sub-RTT congestion control from precise in-network signals. The switch half
//! (SRC, PRU, SM: Algorithms 7 and 9) runs in [`crate::net::bolt_switch`]
//! through the switch-program hook; this is the host half, Algorithm 8:
//! - every data packet carries the in-band Bolt bits ([`crate::net::Packet::prog`]):
//!   FIRST in the flow's first window (before any ACK), LAST in its last window
//!   (`snd_nxt + cwnd >= size`), INC otherwise;
//! - the receiver ACKs every data packet, reflecting INC (unless a hop marked
//!   DEC) and the data's transmit timestamp;
//! - an SRC from a congested switch carries the queue occupancy q and the link
//!   rate; the sender owns the share `target_q = q / MTU x rate / link_rate` of
//!   it and takes one packet off cwnd at most every `rtt_src / target_q`, so
//!   the whole share drains in one rtt_src (SRC is the only decrease);
//! - an ACK with INC adds one packet (a PRU or SM token granted on every hop),
//!   and once per RTT the window grows by one packet (the fail-safe AI).
//!
//! Each message is a flow with its own window (the authors' ns-3 model,
//! `BoltOutboundMsg`, in bytes), starting at the initial window at line rate;
//! with `aggregate_msgs`, messages to one receiver share flows as that model's
//! `AggregateMsgsIfPossible` has them ([`Bolt::start_message`]).
//! Loss recovery (drop-tail buffers) follows that model too: the receiver
//! NACKs out-of-order data, the sender goes back to the hole and halves cwnd,
//! at most once per RTT; a retransmission timeout does the same.

use super::toolkit::{IdMap, IdSet, Reassembly};
use super::toolkit_tcp::{RetransmitTimer, TIMER_GEN_BITS};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::bolt_switch::BoltSwitchConfig;
use crate::net::program::{stamped_rate_bps, ProgramConfig, P_DATA, P_DEC, P_FIRST, P_INC, P_LAST, P_SRC};
use crate::net::wire::{data_wire, payload_of, CONTROL_WIRE};
use crate::net::{LoadBalancing, Packet};
use crate::transport::params::{ParamDoc, ProtocolParams, POSITIVE_MULTIPLE};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_COUNT, MAX_FACTOR};
use fabriclab_engine::{from_us, Time, S};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};

/// `[protocol.bolt]`. Defaults: the thesis, then the authors' ns-3 artifact (see docs()).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BoltParams {
    /// Initial window (x BDP): a new flow starts at line rate.
    pub init_cwnd_bdp: f64,
    /// Largest window (x BDP).
    pub max_cwnd_bdp: f64,
    /// Smallest window (bytes); below one packet the sender paces.
    pub min_cwnd_bytes: f64,
    /// CC_THRESH (x MTU): egress occupancy at which a switch sends SRCs.
    pub cc_thresh_mtu: f64,
    /// Proactive ramp-up on.
    pub pru: bool,
    /// Supply matching on.
    pub sm: bool,
    /// SM supply-token cap (x MTU).
    pub sm_cap_mtu: f64,
    /// PRU token cap per port.
    pub pru_token_cap: u32,
    /// Additive increase per RTT (packets).
    pub ai: f64,
    /// Multiplicative decrease on loss (and on an SRC below one packet of window).
    pub max_md: f64,
    /// Retransmission timeout.
    pub rto_us: f64,
    /// Messages to the same receiver share flows (the artifact's `AggregateMsgsIfPossible`).
    pub aggregate_msgs: bool,
}

impl Default for BoltParams {
    fn default() -> Self {
        BoltParams {
            init_cwnd_bdp: 1.0,
            max_cwnd_bdp: 1.0,
            min_cwnd_bytes: 15.0,
            cc_thresh_mtu: 1.0,
            pru: true,
            sm: true,
            sm_cap_mtu: 1.0,
            pru_token_cap: 256,
            ai: 1.0,
            max_md: 0.5,
            rto_us: 10_000.0,
            aggregate_msgs: false,
        }
    }
}

impl Validate for BoltParams {
    /// Each key's range is in [`BoltParams::bounds`]; no rule relates two keys.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

impl ProtocolParams for BoltParams {
    type Host = Bolt;
    const PAPER: &'static str = "Bolt (Arslan et al., NSDI 2023; Arslan, Stanford PhD thesis 2024, ch. 4)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Ecmp;

    fn host(&self, info: &HostInfo) -> Bolt {
        Bolt::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        vec![
            ("init_cwnd_bdp", POSITIVE_MULTIPLE),
            ("max_cwnd_bdp", POSITIVE_MULTIPLE),
            ("min_cwnd_bytes", Bound::new("a number of bytes", 1.0, 1e9)),
            ("pru_token_cap", Bound::new("a number of tokens", 1.0, MAX_COUNT)),
            ("ai", Bound::new("a number of packets", 0.0, MAX_FACTOR)),
            ("max_md", Bound::new("a fraction", 0.0, 0.999)),
        ]
    }

    fn switch_program(&self, info: &HostInfo) -> Option<ProgramConfig> {
        let mtu = data_wire(info.mss) as f64;
        Some(ProgramConfig::Bolt(BoltSwitchConfig {
            cc_thresh_bytes: (self.cc_thresh_mtu * mtu).round() as u64,
            mtu_bytes: mtu as u64,
            sm_cap_bytes: (self.sm_cap_mtu * mtu).round() as u64,
            pru_cap: self.pru_token_cap,
            pru: self.pru,
            sm: self.sm,
        }))
    }

    fn docs() -> Vec<ParamDoc> {
        let d = BoltParams::default();
        let art =
            "the authors' ns-3 artifact (serhatarslan-hub/bolt_cc_ns3, bolt-l4-protocol.cc / pfifo-bolt-queue-disc.cc)";
        vec![
            ParamDoc { key: "init_cwnd_bdp", default: d.init_cwnd_bdp.to_string(), meaning: "initial window (x BDP): a new flow sends its first BDP at line rate", source: "thesis §4.5.1 ('a new flow starting at line rate emits BDP worth of packets'); artifact: BDP" },
            ParamDoc { key: "max_cwnd_bdp", default: d.max_cwnd_bdp.to_string(), meaning: "largest window (x BDP)", source: art },
            ParamDoc { key: "min_cwnd_bytes", default: d.min_cwnd_bytes.to_string(), meaning: "smallest window (bytes); below one MSS the sender paces one packet per RTT x MSS / cwnd", source: art },
            ParamDoc { key: "cc_thresh_mtu", default: d.cc_thresh_mtu.to_string(), meaning: "CC_THRESH: queued bytes (x MTU on the wire, the packet in service excluded) at and above which a switch port sends an SRC per data packet", source: "thesis §4.3.1 ('trivially set to a single MTU'); the artifact's scripts use 2 MTU" },
            ParamDoc { key: "pru", default: d.pru.to_string(), meaning: "proactive ramp-up: LAST packets leave tokens at uncongested ports, INC packets take them", source: "thesis §4.3.2" },
            ParamDoc { key: "sm", default: d.sm.to_string(), meaning: "supply matching: per-port supply token rate x inter-arrival - size, one MTU of it grants an INC", source: "thesis §4.3.3, Algorithm 9" },
            ParamDoc { key: "sm_cap_mtu", default: d.sm_cap_mtu.to_string(), meaning: "cap of the SM supply token (x MTU)", source: "thesis §4.3.3 (the artifact's fat-tree scripts use 2)" },
            ParamDoc { key: "pru_token_cap", default: d.pru_token_cap.to_string(), meaning: "cap of a port's PRU token counter", source: "artifact MaxNumPruTokens (the thesis states none)" },
            ParamDoc { key: "ai", default: d.ai.to_string(), meaning: "fail-safe additive increase, packets per RTT", source: "thesis Algorithm 8 lines 12-14; artifact AiFactor" },
            ParamDoc { key: "max_md", default: d.max_md.to_string(), meaning: "multiplicative decrease on a NACK or timeout (once per RTT), and on an SRC when cwnd is at most one MSS", source: art },
            ParamDoc { key: "rto_us", default: d.rto_us.to_string(), meaning: "retransmission timeout (fixed)", source: "artifact OutbndRtxTimeout" },
            ParamDoc { key: "aggregate_msgs", default: d.aggregate_msgs.to_string(), meaning: "messages to the same receiver share flows: a new message joins the byte stream of the pair's oldest flow, or starts a flow of its own from that flow's window (docs/protocols/bolt.md)", source: "artifact AggregateMsgsIfPossible (default false; true in its star and fat-tree scripts); the thesis is silent" },
        ]
    }
}

/// Bolt's packets. The Bolt bits (FIRST, LAST, INC, DEC, SRC) travel in the
/// network-visible program header; an SRC is a data header mirrored back by a switch.
#[derive(Clone, Copy, Debug)]
pub enum BoltHeader {
    /// Bytes `seq..seq + MSS` (or to the end) of message `msg` of `size` bytes.
    Data { msg: MsgId, seq: u64, size: u64 },
    /// Every byte of `msg` below `ack` arrived; the data packet that triggered
    /// it was sent at `t_data_tx`. `nack`: it arrived out of order (a hole at `ack`).
    Ack { msg: MsgId, ack: u64, t_data_tx: Time, inc: bool, dec: bool, nack: bool },
}

const TIMER_PACE: u64 = 1 << 63;
const GEN_MASK: u64 = (1 << TIMER_GEN_BITS) - 1;

fn token(kind: u64, msg: MsgId, gen: u32) -> u64 {
    kind | (msg & ((1 << (63 - TIMER_GEN_BITS)) - 1)) << TIMER_GEN_BITS | (gen as u64 & GEN_MASK)
}

/// A message in a flow's byte stream, until every byte of it is acknowledged.
#[derive(Clone, Copy, Debug)]
struct Seg {
    msg: MsgId,
    /// Its first byte in the stream.
    start: u64,
    size: u64,
    /// Bytes of it acknowledged (cumulative, from its receiver).
    acked: u64,
}

/// A flow's messages not yet fully acknowledged, in stream order. A flow
/// usually carries one message, so the first is held inline and the lookups
/// try it first; only messages that `aggregate_msgs` appends behind it go to
/// `rest`, a queue that allocates on the first append. Empty (`first` None,
/// `rest` empty) once every byte is acknowledged.
#[derive(Debug)]
struct Segs {
    first: Option<Seg>,
    /// The messages after `first`; empty whenever `first` is None.
    rest: VecDeque<Seg>,
}

impl Segs {
    fn one(g: Seg) -> Segs {
        Segs { first: Some(g), rest: VecDeque::new() }
    }

    #[inline]
    fn front(&self) -> Option<&Seg> {
        self.first.as_ref()
    }

    #[inline]
    fn pop_front(&mut self) {
        self.first = self.rest.pop_front();
    }

    fn push_back(&mut self, g: Seg) {
        if self.first.is_none() {
            self.first = Some(g);
        } else {
            self.rest.push_back(g);
        }
    }

    /// The message holding stream byte `seq`, which lies at or after the
    /// first unacknowledged byte and before the stream's end (as `snd_nxt`
    /// does while there is something to send). The messages are contiguous,
    /// so the last one holds every byte from its start to the end.
    #[inline]
    fn at(&self, seq: u64) -> Option<&Seg> {
        debug_assert!(self.first.is_none_or(|g| seq >= g.start), "Bolt: byte {seq} is already acknowledged");
        match &self.first {
            Some(g) if self.rest.is_empty() || seq < g.start + g.size => Some(g),
            Some(_) => self.rest.iter().find(|g| seq < g.start + g.size),
            None => None,
        }
    }

    /// Message `msg`, if it is not fully acknowledged yet.
    #[inline]
    fn find_mut(&mut self, msg: MsgId) -> Option<&mut Seg> {
        match &mut self.first {
            Some(g) if g.msg == msg => Some(g),
            Some(_) => self.rest.iter_mut().find(|g| g.msg == msg),
            None => None,
        }
    }
}

/// Sender state of one flow: one message, or with `aggregate_msgs` several
/// to the same receiver, sent back to back in one byte stream.
#[derive(Debug)]
struct Flow {
    dst: u32,
    /// Bytes given to the flow so far (the stream's end).
    size: u64,
    segs: Segs,
    /// Stays, idle, for future messages once everything is acknowledged (the artifact's `m_keepWhenIdle`).
    keep: bool,
    snd_una: u64,
    snd_nxt: u64,
    /// Window, bytes.
    cwnd: f64,
    /// Latest ACK round trip (the unloaded RTT before the first).
    rtt: Time,
    acked: bool,
    last_dec: Option<Time>,
    seq_at_last_ai: u64,
    last_md: Option<Time>,
    /// A pacing gap is running until then: nothing leaves before it ends.
    pace_at: Option<Time>,
    /// The gap has ended with less than a packet of window: one packet may leave.
    pace_due: bool,
    timer: RetransmitTimer,
    queued: bool,
}

/// What the window allows the flow's next packet.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Window {
    /// No window free (or nothing to send): wait for an ACK.
    Closed,
    /// The whole packet fits: it leaves now.
    Open,
    /// Some window is free but less than the packet (or the window is below it): the packet
    /// leaves after a pacing gap.
    Fractional,
}

/// Constants shared by a host's flows.
#[derive(Clone, Debug)]
struct Consts {
    mss: u32,
    init_cwnd: f64,
    min_cwnd: f64,
    max_cwnd: f64,
    ai: f64,
    max_md: f64,
    rto: Time,
    base_rtt: Time,
    /// One MTU on the wire: the unit the stamped queue is counted in.
    mtu_wire: f64,
    /// NIC rate, bytes per ps.
    line_rate: f64,
    data_prio: u8,
    aggregate: bool,
    bdp: u64,
}

pub struct Bolt {
    id: u32,
    k: Consts,
    /// Flows by id: the id of their first message.
    flows: IdMap<MsgId, Flow>,
    /// With `aggregate_msgs`: the flow each unacknowledged message is in.
    owner: IdMap<MsgId, MsgId>,
    /// With `aggregate_msgs`: each receiver's flows by id, so the pair's
    /// oldest is the first. Kept idle flows are never removed, so a scan of
    /// `flows` would grow with every message sent.
    pairs: IdMap<u32, BTreeSet<MsgId>>,
    ready: VecDeque<MsgId>,
    rx: IdMap<MsgId, Reassembly>,
    done: IdSet<MsgId>,
    acks: VecDeque<Packet<BoltHeader>>,
}

impl Flow {
    fn new(dst: u32, msg: MsgId, size: u64, cwnd: f64, keep: bool, k: &Consts) -> Flow {
        Flow {
            dst,
            size,
            segs: Segs::one(Seg { msg, start: 0, size, acked: 0 }),
            keep,
            snd_una: 0,
            snd_nxt: 0,
            cwnd,
            rtt: k.base_rtt,
            acked: false,
            last_dec: None,
            seq_at_last_ai: 0,
            last_md: None,
            pace_at: None,
            pace_due: false,
            timer: RetransmitTimer::default(),
            queued: false,
        }
    }

    /// The authors' ns-3 sender (`BoltOutboundMsg::SendDown`, bolt_cc_ns3 0cf98ccf): a packet
    /// that fits the free window leaves at once; with some window free but less than the
    /// packet, or a window below it, the packet still leaves whole, one per pacing gap.
    fn window(&self, mss: u32) -> Window {
        if self.snd_nxt >= self.size {
            return Window::Closed;
        }
        // Packets do not span messages: the next one ends at its message's end at the latest.
        let next = self.segs.at(self.snd_nxt).map_or(0, |g| (g.start + g.size - self.snd_nxt).min(mss as u64)) as f64;
        let free = self.snd_una as f64 + self.cwnd - self.snd_nxt as f64;
        if free <= 0.0 {
            Window::Closed
        } else if free < next || self.cwnd < next {
            Window::Fractional
        } else {
            Window::Open
        }
    }

    /// The gap between paced packets: one MSS at the window's rate, rtt x MSS / cwnd.
    fn pacing_gap(&self, k: &Consts) -> Time {
        ((self.rtt as f64 * k.mss as f64 / self.cwnd).round() as Time).max(1)
    }

    /// Starts a pacing gap; the flow sends nothing until it ends.
    fn start_gap(&mut self, cx: &mut Cx, k: &Consts, msg: MsgId) {
        let at = cx.now + self.pacing_gap(k);
        self.pace_at = Some(at);
        cx.set_timer(at, token(TIMER_PACE, msg, 0));
    }

    fn clamp(&mut self, k: &Consts) {
        self.cwnd = self.cwnd.clamp(k.min_cwnd, k.max_cwnd);
    }

    /// Loss: go back to `to` and cut the window, at most once per RTT.
    fn go_back(&mut self, k: &Consts, now: Time, to: u64) {
        if self.last_md.is_some_and(|t| now - t < self.rtt) {
            return;
        }
        self.last_md = Some(now);
        self.snd_nxt = to.max(self.snd_una);
        self.cwnd *= 1.0 - k.max_md;
        self.clamp(k);
    }
}

impl Bolt {
    pub fn new(p: &BoltParams, info: &HostInfo) -> Bolt {
        let bdp = info.bdp_bytes as f64;
        let min_cwnd = p.min_cwnd_bytes;
        let max_cwnd = (p.max_cwnd_bdp * bdp).max(min_cwnd);
        let k = Consts {
            mss: info.mss,
            init_cwnd: (p.init_cwnd_bdp * bdp).clamp(min_cwnd, max_cwnd),
            min_cwnd,
            max_cwnd,
            ai: p.ai,
            max_md: p.max_md,
            rto: from_us(p.rto_us).max(1),
            base_rtt: info.base_rtt.max(1),
            mtu_wire: data_wire(info.mss) as f64,
            line_rate: info.link_rate_bps as f64 / (8.0 * S as f64),
            data_prio: 1.min(info.priorities.saturating_sub(1)),
            aggregate: p.aggregate_msgs,
            bdp: info.bdp_bytes,
        };
        Bolt {
            id: info.id,
            k,
            flows: IdMap::default(),
            owner: IdMap::default(),
            pairs: IdMap::default(),
            ready: VecDeque::new(),
            rx: IdMap::default(),
            done: IdSet::default(),
            acks: VecDeque::new(),
        }
    }

    /// Queues flow `msg` if it may send now, or starts its pacing gap. While a gap runs
    /// nothing is sent, whatever ACKs arrive (the artifact's pending `m_sndEvent`).
    fn wake(&mut self, cx: &mut Cx, msg: MsgId) {
        let k = &self.k;
        let Some(f) = self.flows.get_mut(&msg) else { return };
        if f.queued || f.pace_at.is_some() {
            return;
        }
        match f.window(k.mss) {
            Window::Closed => {
                f.pace_due = false;
                return;
            }
            Window::Fractional if !f.pace_due => return f.start_gap(cx, k, msg),
            Window::Open | Window::Fractional => {}
        }
        f.queued = true;
        self.ready.push_back(msg);
    }

    fn on_data(&mut self, cx: &mut Cx, pkt: &Packet<BoltHeader>, msg: MsgId, seq: u64, size: u64) {
        let mss = self.k.mss;
        let ack = if self.done.contains(&msg) {
            size
        } else {
            let r = self.rx.entry(msg).or_insert_with(|| Reassembly::new(size, mss));
            let i = seq / mss as u64;
            if r.insert(i, payload_of(size, mss, i)) {
                cx.deliver(msg, payload_of(size, mss, i));
            }
            if r.is_complete() {
                self.rx.remove(&msg);
                self.done.insert(msg);
                cx.complete(msg);
                size
            } else {
                r.first_missing(0).map_or(size, |m| m * mss as u64)
            }
        };
        let dec = pkt.prog & P_DEC != 0;
        let hdr = BoltHeader::Ack {
            msg,
            ack,
            t_data_tx: pkt.tx_time,
            inc: pkt.prog & P_INC != 0 && !dec,
            dec,
            nack: seq > ack,
        };
        self.acks.push_back(Packet::new(self.id, pkt.src, CONTROL_WIRE, 0, pkt.flow, hdr));
    }

    /// The flow message `msg` is sent in.
    #[inline]
    fn flow_of(&self, msg: MsgId) -> Option<MsgId> {
        if self.k.aggregate {
            self.owner.get(&msg).copied()
        } else {
            Some(msg)
        }
    }

    fn on_ack(&mut self, cx: &mut Cx, msg: MsgId, ack: u64, t_data_tx: Time, inc: bool, nack: bool) {
        let k = &self.k;
        let Some(fid) = self.flow_of(msg) else { return };
        let Some(f) = self.flows.get_mut(&fid) else { return };
        let now = cx.now;
        f.rtt = (now - t_data_tx.min(now)).max(1);
        cx.trace_rtt(msg, f.rtt);
        f.acked = true;
        // The ACK in stream bytes; the stream is acknowledged up to its first
        // message not fully acknowledged (each message's receiver acks its own bytes).
        let Some(g) = f.segs.find_mut(msg) else { return };
        g.acked = g.acked.max(ack.min(g.size));
        let ack = g.start + ack;
        while let Some(g) = f.segs.front().filter(|g| g.acked >= g.size) {
            if k.aggregate {
                self.owner.remove(&g.msg);
            }
            f.segs.pop_front();
        }
        let una = f.segs.front().map_or(f.size, |g| g.start + g.acked);
        if una > f.snd_una {
            f.snd_una = una;
            f.snd_nxt = f.snd_nxt.max(f.snd_una);
            if f.snd_una >= f.size {
                if f.keep {
                    // KeepFlowForFutureMsg: the window stays; the next message
                    // starts a new first window (FIRST until its first ACK) and
                    // its first acknowledged packet gets the fail-safe increase.
                    f.acked = false;
                    f.rtt = k.base_rtt;
                    f.seq_at_last_ai = f.snd_nxt;
                    f.timer.stop();
                } else {
                    let dst = f.dst;
                    self.flows.remove(&fid);
                    if let Some(p) = self.pairs.get_mut(&dst) {
                        p.remove(&fid);
                    }
                }
                return;
            }
            f.timer.start(cx, now + k.rto, |g| token(0, fid, g));
        }
        if nack {
            f.go_back(k, now, ack);
        }
        if inc {
            f.cwnd += k.mss as f64;
        }
        // The fail-safe AI: once the packet that started at `seq_at_last_ai`
        // (the first one sent after the last increase) is acknowledged, so one
        // increase per round trip of a packet. The artifact carries this as an
        // AI flag on that packet (`m_setAiNext`); `ack >= seq_at_last_ai` would
        // already fire on the ACK of the packet sent before it, early whenever
        // the window had closed.
        if ack > f.seq_at_last_ai {
            f.cwnd += k.ai * k.mss as f64;
            f.seq_at_last_ai = f.snd_nxt;
        }
        f.clamp(k);
        cx.trace_cwnd(msg, f.cwnd);
        self.wake(cx, fid);
    }

    /// Algorithm 8, HandleSrc: take this flow's share of the queue off cwnd,
    /// one packet at a time, spread over one rtt_src.
    fn on_src(&mut self, cx: &mut Cx, pkt: &Packet<BoltHeader>, msg: MsgId) {
        let k = &self.k;
        let Some(f) = self.flow_of(msg).and_then(|fid| self.flows.get_mut(&fid)) else { return };
        let now = cx.now;
        let rtt_src = (now - pkt.tx_time.min(now)).max(1) as f64;
        let link_rate = stamped_rate_bps(pkt.prog_rate) as f64 / (8.0 * S as f64);
        let rate = if f.acked { f.cwnd / f.rtt as f64 } else { k.line_rate };
        let target_q = pkt.prog_qlen as f64 / k.mtu_wire * rate / link_rate.max(f64::MIN_POSITIVE);
        if target_q <= 0.0 {
            return;
        }
        if f.last_dec.is_none_or(|t| (now - t) as f64 >= rtt_src / target_q) {
            f.last_dec = Some(now);
            if f.cwnd > k.mss as f64 {
                f.cwnd -= k.mss as f64;
            } else {
                f.cwnd *= 1.0 - k.max_md;
            }
            f.clamp(k);
            cx.trace_cwnd(msg, f.cwnd);
        }
    }

    fn data_packet(&mut self, cx: &mut Cx, fid: MsgId) -> Packet<BoltHeader> {
        let k = &self.k;
        let f = self.flows.get_mut(&fid).expect("ready flow exists");
        let seq = f.snd_nxt;
        let g = *f.segs.at(seq).expect("an open window has a byte to send");
        let i = (seq - g.start) / k.mss as u64;
        let len = payload_of(g.size, k.mss, i);
        f.snd_nxt += len as u64;
        let first = !f.acked;
        let last = seq as f64 + f.cwnd >= f.size as f64;
        let bits = P_DATA
            | if first { P_FIRST } else { 0 }
            | if last { P_LAST } else { 0 }
            | if !first && !last { P_INC } else { 0 };
        f.timer.start_if_stopped(cx, k.rto, |t| token(0, fid, t));
        let hdr = BoltHeader::Data { msg: g.msg, seq: seq - g.start, size: g.size };
        Packet::new(self.id, f.dst, data_wire(len), k.data_prio, fid as u32, hdr).with_prog(bits)
    }
}

impl Transport for Bolt {
    type Header = BoltHeader;

    /// Without `aggregate_msgs`, a message is a flow of its own. With it, as
    /// the artifact's `BoltSendScheduler::ScheduleNewMsg`: the pair's oldest
    /// flow decides. If its last byte has been sent (or it is idle), the message
    /// gets a new flow starting from its window, and it is no longer kept; if
    /// it is busy and the message is at most a BDP (no head-of-line blocking
    /// for short messages), a new flow from its window that is not kept either;
    /// otherwise the message joins its byte stream. An idle flow that is no
    /// longer kept is never removed (nothing reaches it), as in the artifact.
    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        let size = msg.size.max(1);
        let k = &self.k;
        if !k.aggregate {
            self.flows.insert(msg.id, Flow::new(msg.dst, msg.id, size, k.init_cwnd, false, k));
            return self.wake(cx, msg.id);
        }
        let oldest = self.pairs.get(&msg.dst).and_then(|p| p.first().copied());
        let (cwnd, keep) = match oldest.and_then(|id| self.flows.get_mut(&id).map(|f| (id, f))) {
            None => (k.init_cwnd, true),
            Some((_, f)) if f.snd_nxt >= f.size => {
                f.keep = false;
                (f.cwnd, true)
            }
            Some((_, f)) if size <= k.bdp => (f.cwnd, false),
            Some((id, f)) => {
                f.segs.push_back(Seg { msg: msg.id, start: f.size, size, acked: 0 });
                f.size += size;
                self.owner.insert(msg.id, id);
                return self.wake(cx, id);
            }
        };
        self.flows.insert(msg.id, Flow::new(msg.dst, msg.id, size, cwnd, keep, k));
        self.pairs.entry(msg.dst).or_default().insert(msg.id);
        self.owner.insert(msg.id, msg.id);
        self.wake(cx, msg.id);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<BoltHeader>) {
        match pkt.hdr {
            BoltHeader::Data { msg, .. } if pkt.prog & P_SRC != 0 => self.on_src(cx, pkt, msg),
            BoltHeader::Data { msg, seq, size } => self.on_data(cx, pkt, msg, seq, size),
            BoltHeader::Ack { msg, ack, t_data_tx, inc, nack, .. } => self.on_ack(cx, msg, ack, t_data_tx, inc, nack),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, tok: u64) {
        let msg = (tok & !TIMER_PACE) >> TIMER_GEN_BITS;
        let k = &self.k;
        let Some(f) = self.flows.get_mut(&msg) else { return };
        if tok & TIMER_PACE != 0 {
            if f.pace_at != Some(cx.now) {
                return; // a gap the flow no longer runs
            }
            f.pace_at = None;
            f.pace_due = true;
        } else if f.timer.fire(cx, (tok & GEN_MASK) as u32, |g| token(0, msg, g)) {
            if f.snd_nxt == f.snd_una {
                f.timer.stop(); // nothing in flight (paced): nothing to recover
                return self.wake(cx, msg);
            }
            f.last_md = None;
            let una = f.snd_una;
            f.go_back(k, cx.now, una);
            f.timer.start(cx, cx.now + k.rto, |g| token(0, msg, g));
        }
        self.wake(cx, msg);
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<BoltHeader>> {
        if let Some(a) = self.acks.pop_front() {
            return Some(a);
        }
        while let Some(msg) = self.ready.pop_front() {
            let Some(f) = self.flows.get_mut(&msg) else { continue };
            f.queued = false;
            let paced = match f.window(self.k.mss) {
                Window::Closed => {
                    f.pace_due = false;
                    continue;
                }
                Window::Open => false,
                Window::Fractional if f.pace_due => true,
                Window::Fractional => {
                    self.wake(cx, msg);
                    continue;
                }
            };
            f.pace_due = false;
            let p = self.data_packet(cx, msg);
            if paced {
                // The artifact starts the next gap right after a paced packet.
                if let Some(f) = self.flows.get_mut(&msg) {
                    f.start_gap(cx, &self.k, msg);
                }
            }
            self.wake(cx, msg);
            return Some(p);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::toolkit_tcp::testing::Direct;
    use fabriclab_engine::US;

    /// Each receiver's index holds exactly the flows to it.
    fn index_matches(b: &Bolt) -> bool {
        let mut by_dst: IdMap<u32, BTreeSet<MsgId>> = IdMap::default();
        for (&id, f) in b.flows.iter() {
            by_dst.entry(f.dst).or_default().insert(id);
        }
        let indexed: IdMap<u32, BTreeSet<MsgId>> =
            b.pairs.iter().filter(|(_, s)| !s.is_empty()).map(|(&d, s)| (d, s.clone())).collect();
        by_dst == indexed
    }

    /// The receiver's full ACK of message `msg` (`size` bytes).
    fn acked(msg: MsgId, size: u64) -> Packet<BoltHeader> {
        let hdr = BoltHeader::Ack { msg, ack: size, t_data_tx: 0, inc: false, dec: false, nack: false };
        Packet::new(1, 0, CONTROL_WIRE, 0, msg as u32, hdr)
    }

    /// With `aggregate_msgs`, a new message asks for the pair's oldest flow.
    /// When that flow completes and is removed, the next message must see the
    /// next oldest, not a stale id (which would make it start from the initial
    /// window as a kept flow).
    #[test]
    fn the_pairs_oldest_flow_leaves_the_index_when_it_is_removed() {
        let p = BoltParams { aggregate_msgs: true, ..BoltParams::default() };
        let mut d = Direct::driving(Bolt::new(&p, &HostInfo::at_100gbps(0, 2, 1, 8 * US)));
        let mss = d.t.k.mss as u64;
        d.start(0, 1, 2 * mss); // A: the pair's first flow, kept
        d.start(1, 1, mss); // B (at most a BDP) while A is busy: a flow of its own, not kept
        assert!(d.t.flows[&0].keep && !d.t.flows[&1].keep);
        assert_eq!(d.drain().len(), 3, "A's two packets and B's one");
        d.start(2, 1, mss); // C: A has sent its last byte, so C starts a kept flow and A is no longer kept
        assert!(!d.t.flows[&0].keep && d.t.flows[&2].keep);
        assert!(index_matches(&d.t));

        d.now = 10 * US;
        d.with(|t, cx| t.on_packet(cx, &acked(0, 2 * mss)));
        d.with(|t, cx| t.on_packet(cx, &acked(1, mss)));
        assert!(!d.t.flows.contains_key(&0) && !d.t.flows.contains_key(&1), "A and B removed when acknowledged");
        assert!(index_matches(&d.t), "the index dropped them too");

        // D (at most a BDP) while C, now the oldest, is busy: a flow of its own
        // from C's window, not kept.
        let c_cwnd = d.t.flows[&2].cwnd;
        d.start(3, 1, mss);
        let f = &d.t.flows[&3];
        assert!(!f.keep, "D must see C as the oldest flow");
        assert_eq!(f.cwnd, c_cwnd);
        assert!(index_matches(&d.t));
    }

    /// The authors' ns-3 sender: with 2.5 packets of window, the third packet does not wait for
    /// an ACK; it leaves whole one pacing gap (rtt x MSS / cwnd) later, and the next gap then
    /// finds no window free.
    #[test]
    fn a_fractional_window_sends_a_whole_packet_after_a_pacing_gap() {
        let p = BoltParams { init_cwnd_bdp: 0.0365, ..BoltParams::default() }; // 3,650 B = 2.5 MSS
        let mut d = Direct::driving(Bolt::new(&p, &HostInfo::at_100gbps(0, 2, 1, 8 * US)));
        d.start(0, 1, 10 * 1460);
        assert_eq!(d.drain().len(), 2, "two whole packets fit the window");
        let gap = (8.0 * US as f64 * 1460.0 / 3650.0).round() as Time;
        let &(at, tok) = d.timers.last().expect("a pacing gap");
        assert_eq!(at, gap);
        d.fire(at, tok);
        let third = d.drain();
        assert_eq!(third.len(), 1, "half a packet of window free: the third leaves whole");
        assert!(matches!(third[0].hdr, BoltHeader::Data { seq, .. } if seq == 2 * 1460));
        let &(next, tok) = d.timers.last().unwrap();
        assert_eq!(next, 2 * gap, "the next gap starts with the paced packet");
        d.fire(next, tok);
        assert!(d.drain().is_empty(), "no window free: wait for an ACK");
    }
}
