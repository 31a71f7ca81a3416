//! Transports, written sans-IO: a protocol never touches the engine or the
//! network. The simulator (and later the UDP driver) calls it through
//! [`Transport`] and it acts only through its context [`Cx`]: the clock, its
//! random stream, timers, and reports to the application.
//!
//! The host NIC pulls packets with [`Transport::poll_transmit`] whenever it is
//! idle, so pacing and sender-side scheduling live in the transport.

pub mod aeolus;
pub mod bbr;
pub mod bolt;
pub mod dcpim;
pub mod dcqcn;
pub mod dctcp;
pub mod eqds;
pub mod expresspass;
pub mod expresspass_aeolus;
pub mod homa;
pub mod homa_aeolus;
pub mod homa_tr;
pub mod lb;
pub mod mprdma;
pub mod ndp;
pub mod params;
pub mod paydebt;
pub mod sird;
pub mod smartt;
pub mod swift;
pub mod tap;
pub mod toolkit;
pub mod toolkit_tcp;

use crate::metrics::trace::Tracer;
use crate::net::int::IntStack;
use crate::net::Packet;
use fabriclab_engine::{SimRng, Time};

/// Global message identifier (index in the simulator's message table).
pub type MsgId = u64;

/// Facts about the host and fabric that a transport may use.
#[derive(Clone, Debug)]
pub struct HostInfo {
    pub id: u32,
    pub n_hosts: u32,
    /// The host's NIC rate.
    pub link_rate_bps: u64,
    pub mtu: u32,
    /// Payload bytes per full packet.
    pub mss: u32,
    /// The bandwidth-delay product the protocol's "x BDP" parameters refer to.
    pub bdp_bytes: u64,
    /// Number of strict-priority classes per switch port (class 0 is highest).
    pub priorities: u8,
    /// Largest unloaded RTT of an MSS packet between two hosts of the fabric.
    pub base_rtt: Time,
    /// The workload's message-size distribution, when it has one (Poisson
    /// workloads); protocols that tune themselves to it (Homa's unscheduled
    /// priority cutoffs) read it here.
    pub size_dist: Option<std::sync::Arc<crate::workload::SizeDist>>,
}

impl HostInfo {
    /// Bytes the host's link carries in one base RTT (the BDP at this fabric's
    /// own RTT, which protocols tuned per fabric use instead of `bdp_bytes`).
    pub fn base_rtt_bdp(&self) -> f64 {
        self.link_rate_bps as f64 / 8.0 * self.base_rtt as f64 / fabriclab_engine::S as f64
    }

    /// A host with the SIRD evaluation's link (100 Gbps, MTU 1500, MSS 1460,
    /// BDP 100 KB) and no size distribution: what transport tests drive by hand.
    pub fn at_100gbps(id: u32, n_hosts: u32, priorities: u8, base_rtt: Time) -> HostInfo {
        HostInfo {
            id,
            n_hosts,
            link_rate_bps: 100_000_000_000,
            mtu: 1500,
            mss: 1460,
            bdp_bytes: 100_000,
            priorities,
            base_rtt,
            size_dist: None,
        }
    }
}

/// A message handed to the sender's transport by the application.
#[derive(Clone, Copy, Debug)]
pub struct Message {
    pub id: MsgId,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
}

/// What the transport tells the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppEvent {
    /// `bytes` new (never before delivered) payload bytes of `msg` arrived.
    Delivered { msg: MsgId, bytes: u32 },
    /// The whole of `msg` has arrived at its receiver.
    Completed { msg: MsgId },
}

/// The only door from a transport to the outside world.
pub struct Cx<'a> {
    pub now: Time,
    pub rng: &'a mut SimRng,
    timers: &'a mut Vec<(Time, u64)>,
    app: &'a mut Vec<AppEvent>,
    int: Option<&'a IntStack>,
    trace: Option<&'a mut Tracer>,
    host: u32,
}

impl<'a> Cx<'a> {
    pub fn new(now: Time, rng: &'a mut SimRng, timers: &'a mut Vec<(Time, u64)>, app: &'a mut Vec<AppEvent>) -> Self {
        Cx { now, rng, timers, app, int: None, trace: None, host: 0 }
    }

    /// The same context for host `host`, recording into `trace` when tracing is on.
    #[inline]
    pub fn traced(self, trace: Option<&'a mut Tracer>, host: u32) -> Self {
        Cx { trace, host, ..self }
    }

    /// Whether traces are being recorded (to skip work that only feeds them).
    #[inline]
    pub fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// Reports flow `flow`'s congestion window (bytes). One branch when tracing
    /// is off (the recording itself is out of line, so callers stay small).
    #[inline]
    pub fn trace_cwnd(&mut self, flow: u64, bytes: f64) {
        if self.trace.is_some() {
            self.record_cwnd(flow, bytes);
        }
    }

    /// Reports an RTT sample of flow `flow`. One branch when tracing is off.
    #[inline]
    pub fn trace_rtt(&mut self, flow: u64, rtt: Time) {
        if self.trace.is_some() {
            self.record_rtt(flow, rtt);
        }
    }

    #[cold]
    #[inline(never)]
    fn record_cwnd(&mut self, flow: u64, bytes: f64) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.cwnd(self.now, self.host, flow, bytes);
        }
    }

    #[cold]
    #[inline(never)]
    fn record_rtt(&mut self, flow: u64, rtt: Time) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.rtt(self.now, self.host, flow, rtt);
        }
    }

    /// The same context, carrying the INT records of the packet being delivered.
    pub fn with_int(self, int: &'a IntStack) -> Self {
        Cx { int: Some(int), ..self }
    }

    /// INT records of the packet handed to [`Transport::on_packet`], when it
    /// asked for them (flag [`crate::net::INT`]) and the network stamps them.
    pub fn int(&self) -> Option<&IntStack> {
        self.int
    }

    /// Calls [`Transport::on_timer`] with `token` at time `at` (>= now). Timers
    /// cannot be cancelled: a transport ignores tokens it no longer expects.
    #[inline]
    pub fn set_timer(&mut self, at: Time, token: u64) {
        debug_assert!(at >= self.now);
        self.timers.push((at.max(self.now), token));
    }

    #[inline]
    pub fn deliver(&mut self, msg: MsgId, bytes: u32) {
        self.app.push(AppEvent::Delivered { msg, bytes });
    }

    #[inline]
    pub fn complete(&mut self, msg: MsgId) {
        self.app.push(AppEvent::Completed { msg });
    }
}

/// One host's protocol stack (sender and receiver roles together).
pub trait Transport {
    /// The protocol's header: typically an enum of its packet types.
    type Header: Copy + std::fmt::Debug;

    /// The application asks to send `msg` (this host is `msg.src`).
    fn start_message(&mut self, cx: &mut Cx, msg: &Message);

    /// A packet addressed to this host arrived (fully received).
    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<Self::Header>);

    /// A timer set with [`Cx::set_timer`] fired.
    fn on_timer(&mut self, cx: &mut Cx, token: u64);

    /// The NIC is idle: return the next packet to serialise now, if any. A
    /// transport that wants to send later (pacing) sets a timer and returns None.
    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<Self::Header>>;
}
