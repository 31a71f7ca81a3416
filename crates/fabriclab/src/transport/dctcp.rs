//! DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010; RFC 8257) as the
//! SIRD paper's baseline (seed sird-paper-2024.txt Table 2, §5.1): initial
//! window 1 BDP, g = 0.08, switches mark CE above K = 1.25 BDP (applied by the
//! simulator through `network.ecn_threshold_bytes`), ECMP, and a pool of 40
//! pre-established connections per host pair onto which messages are mapped.
//!
//! Each connection is a TCP byte stream (sequence numbers are stream offsets).
//! Messages mapped to it are sent back to back in FIFO order, each cut into
//! MSS segments (a segment never spans two messages, so a lone message is
//! packetised exactly as the ideal-latency model assumes).
//!
//! Choices where the papers are silent (all documented in [`DctcpParams::docs`]):
//! - Connection mapping: the lowest-index idle connection (no queued or
//!   unacknowledged bytes); if all `connections_per_pair` are busy, the one
//!   with the fewest queued + unacknowledged bytes, ties to the lowest index.
//!   Connections are created lazily, with no handshake.
//! - No delayed ACKs: one ACK per data packet, echoing exactly that packet's
//!   CE bit in ECE (DCTCP's per-packet echo; Homa's ns-2 DCTCP runs also use
//!   ackRatio = 1). The receiver keeps out-of-order data, so retransmissions
//!   only refill holes; a message completes when all its bytes arrived.
//! - Sender (RFC 5681/8257, Linux `tcp_dctcp.c`): slow start until the first
//!   congestion signal, then congestion avoidance; cwnd grows only while
//!   cwnd-limited (Linux `tcp_is_cwnd_limited`), so a connection carrying small
//!   messages does not build an unused window. alpha starts at 1 (Linux), is
//!   updated once per window of data; the first ECE of a window cuts
//!   cwnd to cwnd * (1 - alpha/2) and no further cut or growth happens until
//!   that window is acknowledged (RFC 3168 CWR). Slow-start restart after an
//!   idle RTO (RFC 5681 §4.1, Linux default).
//! - Loss (finite buffers): fast retransmit after 3 duplicate ACKs with
//!   NewReno partial-ACK retransmissions (RFC 6582), cwnd halved once per loss
//!   episode (RFC 8257 §3.5); RTO per connection from RFC 6298 estimates with
//!   Karn's rule, exponential backoff, minimum `min_rto_us` (200 us, Homa's ns-2
//!   DCTCP setup on the same 144-host fabric) and go-back-N from the first
//!   unacknowledged byte with cwnd = 1 MSS. The estimator starts from the
//!   unloaded RTT, as the (not simulated) handshake would have measured it.
//!   Data carries a send timestamp that ACKs echo (RFC 7323, on by default in
//!   Linux), so a spurious timeout (the ACK echoes an original transmission:
//!   with infinite buffers every timeout is one, e.g. behind a multi-MB incast
//!   queue) is detected and undone (Eifel, RFC 3522/4015): cwnd/ssthresh are
//!   restored, go-back-N stops, and the RTO adapts to the delay.
//! - No pacing (not part of DCTCP). The host sends pending ACKs first, then
//!   one segment per turn from the connections whose window allows,
//!   round-robin (`nic = "round_robin"`, a NIC that pulls from its
//!   connections). By default (`nic = "fifo"`) the host is the SIRD
//!   artifact's instead: a segment enters one FIFO at the NIC the moment its
//!   window allows it, ACKs join the same FIFO, and the FIFO marks CE at the
//!   switches' threshold K (its host uplink is a RED queue at K,
//!   `simulation.tcl`). The paper is silent; with the FIFO our p50 slowdown
//!   on the artifact's replayed WKb runs moved from 25-27% below the
//!   artifact's to 2-6% below (docs/xval.md).
//!
//! Memory grows with the peers and connections actually used: peers get dense
//! slots on first use (one hash lookup per message or per packet from a peer
//! not yet acknowledged), and packets carry both ends' slots and the
//! connection index, so per-packet work indexes arrays directly.

use super::toolkit::DctcpAlpha;
use super::toolkit_tcp::{
    conn_flow, conn_timer_token, pick_connection, split_conn_timer_token, trace_conn, undo_spurious_timeout, NewReno,
    Peers, Recovery, RetransmitTimer, RtoEstimator, RxPair, SendStream, TxPair,
};
use super::{Cx, HostInfo, Message, MsgId, Transport};
use crate::net::wire::{data_wire, CONTROL_WIRE};
use crate::net::LoadBalancing;
use crate::net::{Packet, ECN_CE};
use crate::transport::params::{ParamDoc, ProtocolParams, FRACTION, GAIN, POSITIVE_MULTIPLE};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use fabriclab_engine::{from_us, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[protocol.dctcp]`. Defaults: SIRD Table 2, then the sources in [`DctcpParams::docs`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpParams {
    /// Initial congestion window (x BDP).
    pub init_cwnd_bdp: f64,
    /// EWMA gain g.
    pub g: f64,
    /// Switch marking threshold K (x BDP). Applied by the simulator as the
    /// default of `network.ecn_threshold_bytes`; an explicit threshold wins.
    pub k_bdp: f64,
    /// Pre-established connections per host pair; messages are mapped onto them.
    pub connections_per_pair: u32,
    /// Minimum retransmission timeout.
    pub min_rto_us: f64,
    /// alpha of a new connection.
    pub initial_alpha: f64,
    /// Restart from the initial window after an idle period longer than the RTO.
    pub slow_start_restart: bool,
    /// How the host's segments reach its link: pulled round-robin from the
    /// connections, or pushed into one marking FIFO as ns-2's agents do.
    pub nic: Nic,
}

/// `protocol.dctcp.nic`: the order in which a host's segments leave it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Nic {
    /// Pending ACKs first, then one segment per turn from each connection
    /// whose window allows: no queue builds at the host.
    RoundRobin,
    /// ns-2's host: every segment the window allows enters one FIFO at once
    /// (a message waits behind the windows already queued), ACKs in the same
    /// FIFO, and a segment is marked CE when the bytes queued ahead of it
    /// plus its own exceed K (`k_bdp`), as at the switches.
    Fifo,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            init_cwnd_bdp: 1.0,
            g: 0.08,
            k_bdp: 1.25,
            connections_per_pair: 40,
            min_rto_us: 200.0,
            initial_alpha: 1.0,
            slow_start_restart: true,
            nic: Nic::Fifo,
        }
    }
}

impl Validate for DctcpParams {
    /// Each key's range is in [`DctcpParams::bounds`]; no rule relates two keys.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

impl ProtocolParams for DctcpParams {
    type Host = Dctcp;
    const PAPER: &'static str = "DCTCP (Alizadeh et al., SIGCOMM 2010), as configured in the SIRD evaluation";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Ecmp;

    fn ecn_threshold_bdp(&self) -> Option<f64> {
        Some(self.k_bdp)
    }

    fn host(&self, info: &HostInfo) -> Dctcp {
        Dctcp::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        vec![
            ("init_cwnd_bdp", POSITIVE_MULTIPLE),
            ("g", GAIN),
            ("k_bdp", POSITIVE_MULTIPLE),
            ("connections_per_pair", Bound::new("a number of connections", 1.0, 1024.0)),
            ("initial_alpha", FRACTION),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = DctcpParams::default();
        let t2 = "SIRD Table 2";
        vec![
            ParamDoc { key: "init_cwnd_bdp", default: d.init_cwnd_bdp.to_string(), meaning: "initial congestion window (x BDP)", source: t2 },
            ParamDoc { key: "g", default: d.g.to_string(), meaning: "EWMA gain of alpha, updated once per window of data", source: t2 },
            ParamDoc { key: "k_bdp", default: d.k_bdp.to_string(), meaning: "switch ECN marking threshold K (x BDP); default of network.ecn_threshold_bytes", source: t2 },
            ParamDoc { key: "connections_per_pair", default: d.connections_per_pair.to_string(), meaning: "pre-established connections per host pair; a message goes to the lowest-index idle one, else the least loaded", source: "SIRD §5.1 (mapping rule: our choice)" },
            ParamDoc { key: "min_rto_us", default: d.min_rto_us.to_string(), meaning: "minimum RTO; RTO = max(min_rto, srtt + 4 rttvar) (RFC 6298), doubled per timeout", source: "Homa's ns-2 DCTCP runs on the same 144-host fabric (PlatformLab/HomaSimulation ns2_Simulations/scripts/pias*Params.py: min_rto = 200 us)" },
            ParamDoc { key: "initial_alpha", default: d.initial_alpha.to_string(), meaning: "alpha of a new connection (1 = first marked window halves cwnd)", source: "Linux tcp_dctcp.c dctcp_alpha_on_init = 1024/1024; RFC 8257 §3.3" },
            ParamDoc { key: "slow_start_restart", default: d.slow_start_restart.to_string(), meaning: "after idling longer than the RTO, cwnd = min(cwnd, initial window)", source: "RFC 5681 §4.1; Linux tcp_slow_start_after_idle = 1; Homa's ns-2 runs slowstartrestart = true" },
            ParamDoc { key: "nic", default: "\"fifo\"".into(), meaning: "\"round_robin\": the NIC pulls one segment per turn from the connections whose window allows, ACKs first; \"fifo\": each segment enters one host FIFO when its window allows it, ACKs too, marked CE above K (ns-2's agents and host queue)", source: "fifo: the SIRD authors' simulator, the paper being silent (SIRD-Simulator 116e981f, scripts/r2p2/sim-scripts/r2p2cc/simulation.tcl: DCTCP's host uplink is a RED queue at dctcp_K, filled by ns-2's FullTcp agents); round_robin: ours, the default before 2026-12-03" },
        ]
    }
}

/// DCTCP's packets. `tx_slot`/`rx_slot` are the pair's slots at the sender
/// and the receiver (`rx_slot` = [`NO_SLOT`](super::toolkit_tcp::NO_SLOT)
/// until the sender has heard from the receiver); `conn` is the connection's
/// index within the pair.
#[derive(Clone, Copy, Debug)]
pub enum DctcpHeader {
    /// Stream bytes `seq..seq+len` of connection `conn`, belonging to message
    /// `msg` that occupies stream bytes `msg_start..msg_start+msg_size`;
    /// `len = min(MSS, msg_start + msg_size - seq)`.
    /// `ts` is the send time (the TCP timestamp option, RFC 7323).
    Data { tx_slot: u32, rx_slot: u32, conn: u16, seq: u64, msg: MsgId, msg_start: u64, msg_size: u64, ts: Time },
    /// Cumulative acknowledgement of all stream bytes below `ack`; `ece` and
    /// `ts_echo` echo the CE bit and `ts` of the data packet that triggered it.
    Ack { tx_slot: u32, rx_slot: u32, conn: u16, ack: u64, ece: bool, ts_echo: Time },
}

/// DCTCP data and ACKs share class 0 (DCTCP uses no priorities).
const PRIO: u8 = 0;

/// Sender side of one connection: its byte stream plus DCTCP's window state.
#[derive(Debug)]
struct TxConn {
    stream: SendStream,
    cwnd: f64,
    ssthresh: f64,
    /// DCTCP's alpha and the window over which F is measured.
    est: DctcpAlpha,
    /// The current alpha window ends when `snd_una` reaches this (0: no window yet).
    window_end: u64,
    /// No ECN cut until `snd_una` reaches this (once per window, RFC 3168).
    cwr_end: u64,
    /// Congestion window reduced: no growth until `snd_una` reaches `cwr_end`.
    cwr: bool,
    /// NewReno loss recovery (RFC 6582).
    rec: NewReno,
    /// Window validation: blocked by cwnd in this / the previous alpha window,
    /// and the largest flight in this / the previous window.
    limited: bool,
    was_limited: bool,
    max_flight: u64,
    prev_max_flight: u64,
    rtt: RtoEstimator,
    /// Timed segment (end sequence, send time); one sample per RTT, none from retransmissions.
    timing: Option<(u64, Time)>,
    /// After a timeout, until the next ACK advances: the time of the (first)
    /// timeout and the (cwnd, ssthresh) it replaced, to undo a spurious one.
    undo: Option<(Time, f64, f64)>,
    timer: RetransmitTimer,
    last_send: Time,
    /// In the host's ready queue.
    queued: bool,
}

impl TxConn {
    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// May send a segment now: a pending retransmission, or new data within cwnd
    /// (always one segment when nothing is in flight).
    fn can_send(&self, mss: u32) -> bool {
        if self.rec.retx_due(&self.stream) {
            return true;
        }
        if !self.stream.has_unsent() {
            return false;
        }
        let flight = self.stream.flight();
        flight == 0 || (flight + self.stream.next_len(mss)) as f64 <= self.cwnd
    }

    /// Linux `tcp_is_cwnd_limited`: grow only if the window is what limits sending.
    fn cwnd_limited(&self) -> bool {
        if self.in_slow_start() {
            self.cwnd < 2.0 * self.max_flight.max(self.prev_max_flight) as f64
        } else {
            self.limited || self.was_limited
        }
    }
}

pub struct Dctcp {
    info: HostInfo,
    mss: u32,
    init_cwnd: f64,
    g: f64,
    initial_alpha: f64,
    conns_per_pair: u32,
    min_rto: Time,
    slow_start_restart: bool,
    tx: Peers<TxPair<TxConn>>,
    rx: Peers<RxPair>,
    acks: VecDeque<Packet<DctcpHeader>>,
    /// Connections (tx slot, index) that may be able to send; round-robin.
    ready: VecDeque<(u32, u16)>,
    /// `nic = "fifo"`: the host's FIFO (segments and ACKs, in the order their
    /// windows allowed them), the bytes in it, and its marking threshold.
    fifo: Option<VecDeque<Packet<DctcpHeader>>>,
    fifo_bytes: u64,
    fifo_k: u64,
}

impl Dctcp {
    pub fn new(p: &DctcpParams, info: &HostInfo) -> Dctcp {
        let mss = info.mss;
        Dctcp {
            mss,
            init_cwnd: (p.init_cwnd_bdp * info.bdp_bytes as f64).max(mss as f64),
            g: p.g,
            initial_alpha: p.initial_alpha,
            conns_per_pair: p.connections_per_pair.clamp(1, 1024),
            min_rto: from_us(p.min_rto_us).max(1),
            slow_start_restart: p.slow_start_restart,
            tx: Peers::default(),
            rx: Peers::default(),
            acks: VecDeque::new(),
            ready: VecDeque::new(),
            fifo: (p.nic == Nic::Fifo).then(VecDeque::new),
            fifo_bytes: 0,
            fifo_k: (p.k_bdp * info.bdp_bytes as f64) as u64,
            info: info.clone(),
        }
    }

    fn new_conn(&self) -> TxConn {
        TxConn {
            stream: SendStream::default(),
            cwnd: self.init_cwnd,
            ssthresh: f64::INFINITY,
            est: DctcpAlpha::new(self.g, self.initial_alpha),
            window_end: 0,
            cwr_end: 0,
            cwr: false,
            rec: NewReno::default(),
            limited: false,
            was_limited: false,
            max_flight: 0,
            prev_max_flight: 0,
            // RFC 6298 (2.2) with the handshake's sample R = the unloaded RTT.
            rtt: RtoEstimator::new(self.info.base_rtt, self.min_rto),
            timing: None,
            undo: None,
            timer: RetransmitTimer::default(),
            last_send: 0,
            queued: false,
        }
    }

    /// Flow label: keeps a connection on one ECMP path.
    fn flow(&self, peer: u32, conn: u16) -> u32 {
        conn_flow(peer, self.conns_per_pair, conn)
    }

    /// The connection a new message to tx slot `slot` goes on ([`pick_connection`]).
    fn pick_conn(&mut self, slot: u32) -> u16 {
        let pair = &self.tx[slot];
        let i = pick_connection(pair.conns.iter().map(|c| c.stream.outstanding()), self.conns_per_pair);
        if i == pair.conns.len() {
            let c = self.new_conn();
            self.tx[slot].conns.push(c);
        }
        i as u16
    }

    /// Puts the connection in the ready queue if it can send; records that it
    /// was held back by its window otherwise. With the FIFO NIC, sends at once
    /// every segment its window allows into the FIFO instead.
    fn wake(&mut self, cx: &mut Cx, slot: u32, conn: u16) {
        let mss = self.mss;
        if self.fifo.is_some() {
            while self.tx[slot].conns[conn as usize].can_send(mss) {
                let pkt = self.send_segment(cx, slot, conn);
                self.push_fifo(pkt);
            }
        }
        let c = &mut self.tx[slot].conns[conn as usize];
        if c.can_send(mss) {
            if !c.queued {
                c.queued = true;
                self.ready.push_back((slot, conn));
            }
        } else if c.stream.has_unsent() {
            c.limited = true;
        }
    }

    /// Queues a packet in the FIFO NIC, marking a data segment CE when the
    /// bytes ahead of it plus its own exceed K (the switches' rule; the packet
    /// being sent is not in the FIFO, as under `until_first_bit`).
    fn push_fifo(&mut self, mut pkt: Packet<DctcpHeader>) {
        self.fifo_bytes += pkt.wire_bytes as u64;
        if matches!(pkt.hdr, DctcpHeader::Data { .. }) && self.fifo_bytes > self.fifo_k {
            pkt.ecn |= ECN_CE;
        }
        self.fifo.as_mut().expect("FIFO NIC").push_back(pkt);
    }

    // ---------------- sender ----------------

    /// Builds the next segment of a connection that can send.
    fn send_segment(&mut self, cx: &mut Cx, slot: u32, conn: u16) -> Packet<DctcpHeader> {
        let mss = self.mss;
        let (dst, rx_slot) = (self.tx.host(slot), self.tx[slot].rx_slot);
        let flow = self.flow(dst, conn);
        let c = &mut self.tx[slot].conns[conn as usize];
        // Fast retransmit / NewReno partial ACK first: the first unacknowledged segment.
        let seg = c.rec.next_segment(&mut c.stream, mss);
        if seg.retransmission {
            c.timing = None; // Karn
        } else if c.timing.is_none() {
            c.timing = Some((seg.seq + seg.len as u64, cx.now));
        }
        c.max_flight = c.max_flight.max(c.stream.flight());
        c.last_send = cx.now;
        c.timer.start_if_stopped(cx, c.rtt.rto, |g| conn_timer_token(slot, conn, g));
        let m = seg.msg;
        let hdr = DctcpHeader::Data {
            tx_slot: slot,
            rx_slot,
            conn,
            seq: seg.seq,
            msg: m.id,
            msg_start: m.start,
            msg_size: m.size,
            ts: cx.now,
        };
        Packet::new(self.info.id, dst, data_wire(seg.len), PRIO, flow, hdr).with_ect()
    }

    #[allow(clippy::too_many_arguments)]
    fn on_ack(&mut self, cx: &mut Cx, slot: u32, rx_slot: u32, conn: u16, ack: u64, ece: bool, ts_echo: Time) {
        let mss = self.mss as f64;
        let Some(c) = self.tx.heard_from(slot, rx_slot, conn) else {
            return;
        };
        let newly = c.stream.ack(ack);
        let mut rtt = None;
        if newly > 0 {
            if let Some((_, t0)) = c.timing.filter(|&(end, _)| ack >= end) {
                c.rtt.sample(cx.now - t0);
                rtt = Some(cx.now - t0);
                c.timing = None;
            }
            if let Some((rto_at, cwnd, ssthresh)) = c.undo.take() {
                if undo_spurious_timeout(cx.now, rto_at, ts_echo, &mut c.stream, &mut c.rtt) {
                    // RFC 4015: undo the reduction too.
                    c.cwnd = c.cwnd.max(cwnd);
                    c.ssthresh = c.ssthresh.max(ssthresh);
                }
            }
            let recovery = c.rec.on_advance(ack, true);

            // DCTCP: F over one window of data, then alpha.
            c.est.observe(newly, ece);
            if c.window_end == 0 {
                c.window_end = c.stream.snd_nxt();
            }
            if ack >= c.window_end {
                c.est.end_window();
                c.window_end = c.stream.snd_nxt();
                c.was_limited = c.limited;
                c.limited = false;
                c.prev_max_flight = c.max_flight;
                c.max_flight = c.stream.flight();
            }

            // No growth in recovery; its end deflates the window to ssthresh.
            let mut grow = recovery == Recovery::Outside;
            if recovery == Recovery::Ended {
                c.cwnd = c.ssthresh;
            }
            if c.cwr && ack >= c.cwr_end {
                c.cwr = false;
            }
            if ece && Self::ecn_cut(c, mss) {
                grow = false;
            }
            if grow && !c.cwr && c.cwnd_limited() {
                if c.in_slow_start() {
                    // Byte counting with L = 2 MSS (RFC 3465).
                    c.cwnd = (c.cwnd + (newly as f64).min(2.0 * mss)).min(c.ssthresh);
                } else {
                    c.cwnd += mss * newly as f64 / c.cwnd;
                }
            }
            c.timer.on_advance(cx, c.stream.has_unacked(), c.rtt.rto, |g| conn_timer_token(slot, conn, g));
        } else if c.stream.is_duplicate(ack) {
            if ece {
                Self::ecn_cut(c, mss);
            }
            if c.rec.on_dupack(ack, c.stream.snd_max()) {
                // Fast retransmit; halve once per loss episode (RFC 8257 §3.5).
                c.ssthresh = (c.cwnd / 2.0).max(2.0 * mss);
                c.cwnd = c.ssthresh;
                c.cwr_end = c.cwr_end.max(c.stream.snd_max());
                c.timing = None;
            }
        }
        self.trace(cx, slot, conn, rtt);
        self.wake(cx, slot, conn);
    }

    /// Traces the connection's window, and the RTT sample if this ACK gave one.
    #[inline]
    fn trace(&self, cx: &mut Cx, slot: u32, conn: u16, rtt: Option<Time>) {
        if cx.tracing() {
            let cwnd = self.tx[slot].conns[conn as usize].cwnd;
            trace_conn(cx, &self.tx, slot, |peer| self.flow(peer, conn), rtt, cwnd);
        }
    }

    /// DCTCP's reaction to ECE, at most once per window of data and not during
    /// loss recovery. Returns whether cwnd was cut.
    fn ecn_cut(c: &mut TxConn, mss: f64) -> bool {
        if c.rec.in_recovery || c.stream.snd_una() < c.cwr_end {
            return false;
        }
        c.cwnd = (c.cwnd * (1.0 - c.est.alpha / 2.0)).max(mss);
        c.ssthresh = c.cwnd;
        c.cwr_end = c.stream.snd_max();
        c.cwr = true;
        true
    }

    fn on_rto_timer(&mut self, cx: &mut Cx, slot: u32, conn: u16, gen: u32) {
        let mss = self.mss as f64;
        let Some(c) = self.tx.conn_mut(slot, conn) else {
            return;
        };
        if !c.timer.fire(cx, gen, |g| conn_timer_token(slot, conn, g)) {
            return;
        }
        // Timeout: go-back-N from the first unacknowledged byte with cwnd = 1 MSS.
        if c.undo.is_none() {
            c.undo = Some((cx.now, c.cwnd, c.ssthresh));
        }
        c.ssthresh = (c.stream.flight() as f64 / 2.0).max(2.0 * mss);
        c.cwnd = mss;
        c.stream.go_back_n();
        c.rec.on_timeout(c.stream.snd_max());
        // Slow start from 1 MSS; marks on data sent before the timeout cause no cut.
        c.cwr = false;
        c.cwr_end = c.cwr_end.max(c.stream.snd_max());
        c.timing = None;
        c.rtt.backoff();
        let at = cx.now + c.rtt.rto;
        c.timer.start(cx, at, |g| conn_timer_token(slot, conn, g));
        self.trace(cx, slot, conn, None);
        self.wake(cx, slot, conn);
    }

    // ---------------- receiver ----------------

    #[allow(clippy::too_many_arguments)]
    fn on_data(
        &mut self,
        cx: &mut Cx,
        src: u32,
        tx_slot: u32,
        rx_slot: u32,
        conn: u16,
        seq: u64,
        msg: MsgId,
        msg_start: u64,
        msg_size: u64,
        ts: Time,
        ce: bool,
    ) {
        let (slot, stream) = self.rx.stream(rx_slot, src, conn);
        let ack = stream.receive(cx, seq, msg, msg_start, msg_size, self.mss);
        let hdr = DctcpHeader::Ack { tx_slot, rx_slot: slot, conn, ack, ece: ce, ts_echo: ts };
        let flow = self.flow(src, conn);
        let ack = Packet::new(self.info.id, src, CONTROL_WIRE, PRIO, flow, hdr);
        if self.fifo.is_some() {
            self.push_fifo(ack);
        } else {
            self.acks.push_back(ack);
        }
    }
}

impl Transport for Dctcp {
    type Header = DctcpHeader;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        debug_assert!(msg.size > 0, "DCTCP carries messages of at least one byte");
        if msg.size == 0 {
            return;
        }
        let slot = self.tx.slot(msg.dst, TxPair::new);
        let conn = self.pick_conn(slot);
        let (init, ssr) = (self.init_cwnd, self.slow_start_restart);
        let c = &mut self.tx[slot].conns[conn as usize];
        if ssr && c.stream.outstanding() == 0 && c.stream.snd_max() > 0 && cx.now - c.last_send >= c.rtt.rto {
            c.cwnd = c.cwnd.min(init);
        }
        c.stream.push(msg.id, msg.size);
        self.trace(cx, slot, conn, None);
        self.wake(cx, slot, conn);
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<DctcpHeader>) {
        match pkt.hdr {
            DctcpHeader::Data { tx_slot, rx_slot, conn, seq, msg, msg_start, msg_size, ts } => {
                self.on_data(cx, pkt.src, tx_slot, rx_slot, conn, seq, msg, msg_start, msg_size, ts, pkt.ce())
            }
            DctcpHeader::Ack { tx_slot, rx_slot, conn, ack, ece, ts_echo } => {
                self.on_ack(cx, tx_slot, rx_slot, conn, ack, ece, ts_echo)
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        let (slot, conn, gen) = split_conn_timer_token(token);
        self.on_rto_timer(cx, slot, conn, gen);
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<DctcpHeader>> {
        if let Some(fifo) = &mut self.fifo {
            let p = fifo.pop_front()?;
            self.fifo_bytes -= p.wire_bytes as u64;
            return Some(p);
        }
        if let Some(p) = self.acks.pop_front() {
            return Some(p);
        }
        let mss = self.mss;
        while let Some((slot, conn)) = self.ready.pop_front() {
            let c = &mut self.tx[slot].conns[conn as usize];
            c.queued = false;
            if !c.can_send(mss) {
                if c.stream.has_unsent() {
                    c.limited = true;
                }
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
    use super::*;
    use crate::transport::toolkit_tcp::testing::{self, tcp_pipe, Direct, Pipe, MSS};
    use crate::transport::toolkit_tcp::NO_SLOT;
    use crate::transport::AppEvent;
    use fabriclab_engine::US;

    fn info(id: u32, n_hosts: u32, base_rtt: Time) -> HostInfo {
        HostInfo::at_100gbps(id, n_hosts, 1, base_rtt)
    }

    // ---------- direct driving of one transport ----------

    impl Direct<Dctcp> {
        fn new(p: &DctcpParams) -> Self {
            Direct::driving(Dctcp::new(p, &info(0, 4, 8 * US)))
        }
        fn ack(&mut self, conn: u16, ack: u64, ece: bool) {
            self.ack_ts(conn, ack, ece, self.now);
        }
        fn ack_ts(&mut self, conn: u16, ack: u64, ece: bool, ts_echo: Time) {
            let hdr = DctcpHeader::Ack { tx_slot: 0, rx_slot: 0, conn, ack, ece, ts_echo };
            let p = Packet::new(1, 0, CONTROL_WIRE, 0, 0, hdr);
            self.with(|t, cx| t.on_packet(cx, &p));
        }
        fn conn(&self, i: usize) -> &TxConn {
            &self.t.tx[0].conns[i]
        }
    }

    fn seq_of(p: &Packet<DctcpHeader>) -> (u16, u64) {
        match p.hdr {
            DctcpHeader::Data { conn, seq, .. } => (conn, seq),
            h => panic!("not data: {h:?}"),
        }
    }

    #[test]
    fn docs_cover_every_parameter() {
        let v = serde_json::to_value(DctcpParams::default()).unwrap();
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        let mut documented: Vec<String> = DctcpParams::docs().iter().map(|d| d.key.to_string()).collect();
        keys.sort();
        documented.sort();
        assert_eq!(keys, documented);
        assert!(DctcpParams::docs().iter().all(|d| !d.source.is_empty() && !d.meaning.is_empty()));
        assert!(DctcpParams::default().validate().is_ok());
        let bad = DctcpParams { initial_alpha: 1.5, ..Default::default() };
        assert!(crate::transport::params::bound_refuses(&bad, "initial_alpha"));
    }

    #[test]
    fn initial_window_is_one_bdp_of_ect_segments() {
        let mut d = Direct::new(&DctcpParams::default());
        d.start(7, 3, 300_000);
        let pkts = d.drain();
        // 68 full segments = 99_280 bytes; a 69th would exceed 100_000.
        assert_eq!(pkts.len(), 68);
        for (i, p) in pkts.iter().enumerate() {
            assert_eq!(seq_of(p), (0, i as u64 * MSS));
            assert_eq!(p.wire_bytes, data_wire(1460));
            assert_eq!((p.prio, p.ecn & crate::net::ECN_ECT, p.dst), (0, crate::net::ECN_ECT, 3));
            assert_eq!(p.flow, 3 * 40);
        }
        // Slow start: each ACKed MSS opens two segments.
        d.ack(0, MSS, false);
        assert_eq!(d.conn(0).cwnd, 100_000.0 + 1460.0);
        assert_eq!(d.drain().len(), 2);
    }

    #[test]
    fn segments_never_span_messages() {
        let p = DctcpParams { connections_per_pair: 1, ..Default::default() };
        let mut d = Direct::new(&p);
        d.start(1, 1, 1461);
        d.start(2, 1, 100);
        let pkts = d.drain();
        let segs: Vec<(u64, u32, MsgId)> = pkts
            .iter()
            .map(|p| match p.hdr {
                DctcpHeader::Data { seq, msg, .. } => (seq, p.wire_bytes, msg),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(segs, vec![(0, data_wire(1460), 1), (1460, data_wire(1), 1), (1461, data_wire(100), 2)]);
    }

    #[test]
    fn mapping_prefers_lowest_idle_then_least_loaded() {
        let p = DctcpParams { connections_per_pair: 3, ..Default::default() };
        let mut d = Direct::new(&p);
        d.start(1, 1, 5000);
        d.start(2, 1, 3000);
        d.start(3, 1, 9000);
        assert_eq!(d.t.tx[0].conns.len(), 3);
        // All busy: the least loaded (conn 1, 3000 bytes) gets the next one.
        d.start(4, 1, 10);
        assert_eq!(d.conn(1).stream.messages(), 2);
        // Ties go to the lowest index: conns 0 and 1 both hold 5000... make them equal.
        d.start(5, 1, 1990); // conn 1: 3000 + 10 + 1990 = 5000 = conn 0
        assert_eq!(d.conn(1).stream.messages(), 3);
        d.start(6, 1, 1);
        assert_eq!(d.conn(0).stream.messages(), 2, "tie between conns 0 and 1 goes to 0");
        // Once conn 1 is fully acknowledged it is the lowest idle one.
        d.drain();
        d.ack(1, 5000, false);
        assert_eq!(d.conn(1).stream.outstanding(), 0);
        d.start(7, 1, 10);
        assert_eq!(d.conn(1).stream.outstanding(), 10, "message 7 went to the idle conn 1");
        // Another destination gets its own lazily created pool.
        d.start(8, 2, 10);
        assert_eq!((d.t.tx.len(), d.t.tx[1].conns.len()), (2, 1));
    }

    #[test]
    fn round_robin_across_connections() {
        let mut d = Direct::new(&DctcpParams { nic: Nic::RoundRobin, ..Default::default() });
        d.start(1, 1, 10 * MSS);
        d.start(2, 2, 10 * MSS);
        d.start(3, 1, 10 * MSS);
        let order: Vec<u32> = d.drain().iter().take(9).map(|p| p.dst * 10 + seq_of(p).0 as u32).collect();
        assert_eq!(order, vec![10, 20, 11, 10, 20, 11, 10, 20, 11]);
    }

    #[test]
    fn the_fifo_nic_sends_windows_in_the_order_they_opened_and_marks_above_k() {
        // K = 1.25 BDP = 125,000 B: the 82nd full segment queued is the first above it.
        let mut d = Direct::new(&DctcpParams::default());
        d.start(1, 1, 10 * MSS);
        d.start(2, 2, 100 * MSS);
        d.start(3, 1, 10 * MSS);
        let pkts = d.drain();
        // 10 segments of message 1, then message 2's whole first window (68), then message 3
        // on its own connection: no interleaving, unlike round-robin.
        let order: Vec<(u32, u16)> = pkts.iter().map(|p| (p.dst, seq_of(p).0)).collect();
        let mut want = vec![(1, 0); 10];
        want.extend(vec![(2, 0); 68]);
        want.extend(vec![(1, 1); 10]);
        assert_eq!(order, want);
        let wire = data_wire(1460) as u64;
        let k = (1.25 * 100_000.0) as u64;
        for (i, p) in pkts.iter().enumerate() {
            let queued = (i as u64 + 1) * wire; // all were queued before the first left
            assert_eq!(p.ce(), queued > k, "segment {i}: {queued} B queued against K = {k}");
        }
        assert_eq!(pkts.iter().filter(|p| p.ce()).count(), 88 - (k / wire) as usize);
        assert_eq!(d.t.fifo_bytes, 0, "the FIFO's byte count follows what left it");
    }

    #[test]
    fn the_fifo_nic_queues_acks_behind_data() {
        let mut d = Direct::new(&DctcpParams::default());
        d.start(1, 1, 3 * MSS);
        // Data from host 2 arrives while our three segments wait: its ACK goes behind them.
        let hdr = DctcpHeader::Data {
            tx_slot: 0,
            rx_slot: NO_SLOT,
            conn: 0,
            seq: 0,
            msg: 9,
            msg_start: 0,
            msg_size: 100,
            ts: 0,
        };
        let data = Packet::new(2, 0, data_wire(100), 0, 0, hdr);
        d.with(|t, cx| t.on_packet(cx, &data));
        let kinds: Vec<bool> = d.drain().iter().map(|p| matches!(p.hdr, DctcpHeader::Ack { .. })).collect();
        assert_eq!(kinds, vec![false, false, false, true]);
    }

    #[test]
    fn alpha_updates_once_per_window_and_ece_cuts_once() {
        let mut d = Direct::new(&DctcpParams::default());
        d.start(1, 1, 10_000_000);
        let first = d.drain();
        assert_eq!(first.len(), 68);
        let end = 68 * MSS;
        // ACKs inside the first window leave alpha alone.
        for k in 1..68 {
            d.ack(0, k * MSS, false);
            d.drain();
        }
        assert_eq!(d.conn(0).est.alpha, 1.0);
        d.ack(0, end, false);
        d.drain();
        assert!((d.conn(0).est.alpha - 0.92).abs() < 1e-12, "one unmarked window: alpha = 1 - g");
        assert!(d.conn(0).window_end > end + 60 * MSS, "the next window is the data now in flight");
        // The next ECE cuts cwnd by alpha/2, once for the window.
        let before = d.conn(0).cwnd;
        d.ack(0, end + MSS, true);
        let cut = before * (1.0 - 0.92 / 2.0);
        assert_eq!(d.conn(0).cwnd, cut);
        assert_eq!(d.conn(0).ssthresh, cut);
        d.ack(0, end + 2 * MSS, true);
        d.ack(0, end + 3 * MSS, false);
        assert_eq!(d.conn(0).cwnd, cut, "no second cut and no growth in the same window");
    }

    #[test]
    fn three_dupacks_retransmit_and_halve() {
        let mut d = Direct::new(&DctcpParams::default());
        d.start(1, 1, 1_000_000);
        d.drain();
        d.ack(0, MSS, false);
        d.drain();
        let cwnd = d.conn(0).cwnd;
        for _ in 0..3 {
            d.ack(0, MSS, false);
        }
        assert_eq!(d.conn(0).cwnd, cwnd / 2.0);
        let p = d.poll().expect("fast retransmit");
        assert_eq!(seq_of(&p), (0, MSS));
        assert!(d.poll().is_none(), "window full during recovery");
        // Partial ACK: retransmit the next hole at once.
        d.ack(0, 5 * MSS, false);
        assert_eq!(seq_of(&d.poll().unwrap()), (0, 5 * MSS));
        // Full ACK ends recovery with cwnd = ssthresh.
        let snd_max = d.conn(0).stream.snd_max();
        d.ack(0, snd_max, false);
        assert!(!d.conn(0).rec.in_recovery);
        assert_eq!(d.conn(0).cwnd, cwnd / 2.0);
    }

    #[test]
    fn rto_goes_back_n_with_one_segment_and_stale_timers_are_ignored() {
        let mut d = Direct::new(&DctcpParams::default());
        d.start(1, 1, 20 * MSS);
        assert_eq!(d.drain().len(), 20);
        assert_eq!(d.timers.len(), 1, "one timer for the whole flight");
        let (at, token) = d.timers[0];
        assert_eq!(at, 200 * US, "RTO = max(min_rto, 3 x unloaded RTT)");
        // An ACK restarts the RTO without a new timer event: the old one re-arms.
        d.now = 10 * US;
        d.ack(0, 2 * MSS, false);
        assert_eq!(d.timers.len(), 1);
        d.now = at;
        d.with(|t, cx| t.on_timer(cx, token));
        assert_eq!(d.timers.len(), 2);
        let (at2, token2) = d.timers[1];
        assert!(at2 > at);
        // Expiry: cwnd = 1 MSS, resend from the first unacknowledged byte.
        d.now = at2;
        d.with(|t, cx| t.on_timer(cx, token2));
        assert_eq!(d.conn(0).cwnd, MSS as f64);
        let p = d.poll().unwrap();
        assert_eq!(seq_of(&p), (0, 2 * MSS));
        assert!(d.poll().is_none());
        assert_eq!(d.conn(0).rtt.rto, 400 * US, "backed off");
        // The superseded token does nothing.
        d.with(|t, cx| t.on_timer(cx, token));
        assert!(d.poll().is_none());
        // The receiver had the rest: the ACK jumps past snd_nxt.
        d.ack(0, 20 * MSS, false);
        assert_eq!(d.conn(0).stream.outstanding(), 0);
        assert_eq!(d.conn(0).timer.deadline(), None);
    }

    #[test]
    fn spurious_timeout_is_undone() {
        // The round-robin NIC builds a segment only when polled, so snd_nxt shows the undo alone.
        let mut d = Direct::new(&DctcpParams { nic: Nic::RoundRobin, ..Default::default() });
        d.start(1, 1, 100 * MSS);
        assert_eq!(d.drain().len(), 68);
        let (at, token) = d.timers[0];
        d.now = at;
        d.with(|t, cx| t.on_timer(cx, token));
        assert_eq!(seq_of(&d.poll().unwrap()), (0, 0), "go-back-N");
        // The ACK of the original first segment (sent at 0) arrives: the timeout was spurious.
        d.now = at + US;
        d.ack_ts(0, MSS, false, 0);
        let c = d.conn(0);
        assert_eq!((c.stream.snd_nxt(), c.cwnd), (68 * MSS, 100_000.0 + 1460.0));
        assert!(c.rtt.rto >= at + US, "RTO adapted to the delay that caused it");
        assert_eq!(seq_of(&d.poll().unwrap()), (0, 68 * MSS), "resumes with new data");
    }

    #[test]
    fn receiver_acks_every_packet_echoes_ce_and_reassembles() {
        let mut d = Direct::new(&DctcpParams::default());
        let data = |seq: u64, ce: bool| {
            let hdr = DctcpHeader::Data {
                tx_slot: 5,
                rx_slot: NO_SLOT,
                conn: 2,
                seq,
                msg: 9,
                msg_start: 1000,
                msg_size: 3 * MSS,
                ts: 77,
            };
            let mut p = Packet::new(3, 0, data_wire(1460), 0, 0, hdr).with_ect();
            if ce {
                p.ecn |= crate::net::ECN_CE;
            }
            p
        };
        let mut acks = Vec::new();
        for (seq, ce) in [(1000 + 2 * MSS, true), (1000 + 2 * MSS, false), (1000 + MSS, false), (1000, true)] {
            let p = data(seq, ce);
            d.with(|t, cx| t.on_packet(cx, &p));
            let a = d.poll().unwrap();
            assert_eq!((a.wire_bytes, a.dst, a.ecn), (CONTROL_WIRE, 3, 0));
            acks.push(a.hdr);
        }
        let got: Vec<(u64, bool)> = acks
            .iter()
            .map(|h| match *h {
                DctcpHeader::Ack { tx_slot: 5, rx_slot: 0, conn: 2, ack, ece, ts_echo: 77 } => (ack, ece),
                h => panic!("{h:?}"),
            })
            .collect();
        // Bytes 0..1000 of this connection (an earlier message) never arrived.
        assert_eq!(got, vec![(0, true), (0, false), (0, false), (0, true)]);
        let delivered: u32 =
            d.app.iter().map(|e| if let AppEvent::Delivered { bytes, .. } = e { *bytes } else { 0 }).sum();
        assert_eq!(delivered as u64, 3 * MSS, "the duplicate is not delivered twice");
        assert_eq!(d.app.last(), Some(&AppEvent::Completed { msg: 9 }));
        assert_eq!(d.t.rx[0].conns[2].messages(), 1, "kept until the stream before it arrives");
    }

    #[test]
    fn slow_start_restart_after_idle() {
        let mut d = Direct::new(&DctcpParams::default());
        d.start(1, 1, 300_000);
        d.drain();
        for k in 1..=68 {
            d.ack(0, k * MSS, false);
            d.drain();
        }
        assert!(d.conn(0).cwnd > 150_000.0);
        let snd_max = d.conn(0).stream.snd_max();
        d.now = 50 * US;
        d.ack(0, snd_max, false);
        while d.conn(0).stream.outstanding() > 0 {
            d.drain();
            let m = d.conn(0).stream.snd_max();
            d.ack(0, m, false);
        }
        d.now += 100 * US; // shorter than the RTO: keep the window
        let grown = d.conn(0).cwnd;
        d.start(2, 1, 10);
        assert_eq!(d.conn(0).cwnd, grown);
        d.drain();
        d.ack(0, d.conn(0).stream.snd_max(), false);
        d.now += 300 * US;
        d.start(3, 1, 10);
        assert_eq!(d.conn(0).cwnd, 100_000.0);
    }

    // ---------- two hosts over a pipe ----------

    /// `n` DCTCP hosts on the shared lossy test pipe (100 Gbps, 2 us).
    fn pipe(n: u32, p: &DctcpParams) -> Pipe<Dctcp> {
        tcp_pipe(n, |h, n, rtt| Dctcp::new(p, &info(h, n, rtt)))
    }

    fn data_seq(h: &DctcpHeader) -> Option<u64> {
        match *h {
            DctcpHeader::Data { seq, .. } => Some(seq),
            _ => None,
        }
    }

    // The loss checks shared with Swift (toolkit_tcp::testing): the same NewReno and RTO.
    testing::loss_tests!(Dctcp, |n| pipe(n, &DctcpParams::default()), data_seq);

    /// The same checks with the round-robin NIC (the FIFO one is the default).
    mod round_robin_nic {
        use super::*;
        testing::loss_tests!(Dctcp, |n| pipe(n, &DctcpParams { nic: Nic::RoundRobin, ..Default::default() }), data_seq);
    }

    #[test]
    fn marks_on_every_packet_shrink_the_window_to_one_segment() {
        let mut net = pipe(2, &DctcpParams::default());
        net.filter = Box::new(|p| {
            if matches!(p.hdr, DctcpHeader::Data { .. }) {
                p.ecn |= crate::net::ECN_CE;
            }
            true
        });
        net.start(0, 1, 2_000_000);
        net.run();
        assert_eq!(net.delivered, 2_000_000);
        let c = &net.hosts[0].tx[0].conns[0];
        assert!(c.est.alpha > 0.99, "alpha -> 1 when everything is marked: {}", c.est.alpha);
        assert!(c.cwnd < 2.0 * MSS as f64, "cwnd {}", c.cwnd);
    }
}
