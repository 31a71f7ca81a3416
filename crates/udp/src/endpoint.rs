//! The driver: one UDP socket, one unchanged [`Sird`] state machine.
//!
//! The simulator feeds SIRD packet arrivals, timer expiries and NIC pulls in
//! simulated time; this driver feeds it the same three things in real time:
//! datagrams from the socket, expiries from a min-heap of timers on the
//! endpoint's clock (picoseconds since start), and pulls from a virtual NIC that
//! is free again one serialisation time (at the configured link rate) after each
//! packet. SIRD never sees payload bytes: the driver attaches them to DATA
//! packets by (index x MSS, length) and reassembles them at the receiver.
//!
//! On top of SIRD, the driver adds what a real transport needs and a simulator
//! does not: per-message DONE/ALIVE signals from the receiver, retries as new
//! attempts (fresh SIRD message ids) when a receiver goes silent, a failure
//! after `max_retries`, duplicate filtering, and bounds on all state.

use crate::config::UdpConfig;
use crate::faults::FaultyIo;
use crate::io::{Io, UdpIo};
use crate::peers::{PeerId, Peers, Seen};
use crate::stats::Stats;
use crate::wire::{self, Header, Kind, WireError};
use fabriclab::net::wire::{packets_for, payload_of, CONTROL_WIRE};
use fabriclab::net::{Packet, ECN_CE, ECN_ECT};
use fabriclab::transport::sird::{Sird, SirdHeader};
use fabriclab::transport::toolkit::Reassembly;
use fabriclab::transport::{AppEvent, Cx, HostInfo, Message, Transport};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::{from_us, SimRng, Time};
use fabriclab_engine::{mix64, stream, Stream};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

/// Inbound SIRD ids are `peer << PEER_SHIFT | sender's attempt id`, unique per endpoint.
const PEER_SHIFT: u32 = 44;
const ATTEMPT_MASK: u64 = (1 << PEER_SHIFT) - 1;
/// Datagrams read per step before the endpoint transmits again.
const RX_BATCH: usize = 64;
const RECV_BUFFER: usize = 65_536;

/// What an endpoint tells its application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A whole message arrived from `peer` (`id` is the sender's id for it).
    Received { peer: PeerId, id: u64, data: Vec<u8> },
    /// The receiver confirmed message `id`; `latency_ps` from `send` to confirmation.
    Confirmed { peer: PeerId, id: u64, latency_ps: Time },
    /// Message `id` was given up after `max_retries` retries.
    Failed { peer: PeerId, id: u64 },
}

/// Why `send` refused a message.
#[derive(Debug, PartialEq, Eq)]
pub enum SendError {
    UnknownPeer(PeerId),
    TooLarge {
        size: u64,
        max: u64,
    },
    Empty,
    /// `max_outbound_messages` are in flight already.
    Busy,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::UnknownPeer(p) => write!(f, "no peer with id {p}"),
            SendError::TooLarge { size, max } => write!(f, "message of {size} bytes exceeds max_message_bytes = {max}"),
            SendError::Empty => write!(f, "messages must have at least one byte"),
            SendError::Busy => write!(f, "max_outbound_messages messages are in flight"),
        }
    }
}

impl std::error::Error for SendError {}

/// A message being sent: kept until its receiver confirms it.
struct OutMsg {
    peer: PeerId,
    data: Vec<u8>,
    /// SIRD id of the current attempt.
    attempt: u64,
    retries: u32,
    started: Time,
    /// Last sign of life from the receiver about this message.
    heard: Time,
}

/// A message being received.
struct InMsg {
    peer: PeerId,
    app: u64,
    buf: Vec<u8>,
    got: Reassembly,
    /// Packets 0..sched_from come unscheduled; credited ones are sched_from..granted.
    sched_from: u32,
    granted: u32,
    progress: Time,
    alive_sent: Time,
}

impl InMsg {
    /// Whether a packet the sender may send (unscheduled or credited) is missing.
    fn owed(&self) -> bool {
        let expected = self.granted.max(self.sched_from) as u64;
        self.got.first_missing(0).is_some_and(|i| i < expected)
    }
}

/// One SIRD endpoint on one socket.
pub struct Endpoint<I: Io = FaultyIo<UdpIo>> {
    io: I,
    cfg: UdpConfig,
    sird: Sird,
    mss: u32,
    incarnation: u32,
    rng: SimRng,
    timers: BinaryHeap<Reverse<(Time, u64, u64)>>,
    timer_seq: u64,
    new_timers: Vec<(Time, u64)>,
    app_events: Vec<AppEvent>,
    /// When the virtual NIC can start the next packet.
    nic_free_at: Time,
    nic_blocked: bool,
    catch_up: Time,
    next_tick: Time,
    tick: Time,
    retry_timeout: Time,
    peers: Peers,
    next_app: u64,
    next_attempt: u64,
    out: HashMap<u64, OutMsg>,
    attempt_app: HashMap<u64, u64>,
    inb: HashMap<u64, InMsg>,
    inbound_bytes: u64,
    /// Driver messages (DONE, ALIVE): sent at once, outside the virtual NIC.
    ctrl: VecDeque<(SocketAddr, Header)>,
    events: VecDeque<Event>,
    stats: Stats,
    rx_buf: Vec<u8>,
    tx_buf: Vec<u8>,
    trace: Option<Vec<Decision>>,
}

/// One protocol decision, recorded when tracing is on (conformance tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub at: Time,
    /// SIRD host ids as the simulator would see them: sender and receiver.
    pub from: PeerId,
    pub to: PeerId,
    pub hdr: TracedHeader,
}

/// SIRD's header with message ids replaced by the sender-side attempt id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracedHeader {
    Data { msg: u64, index: u32, scheduled: bool, csn: bool },
    CreditReq { msg: u64, sched_from: u32 },
    Credit { msg: u64, index: u32 },
    Resend { msg: u64, index: u32 },
}

impl TracedHeader {
    pub fn of(h: &SirdHeader, msg: u64) -> TracedHeader {
        match *h {
            SirdHeader::Data { index, scheduled, csn, .. } => TracedHeader::Data { msg, index, scheduled, csn },
            SirdHeader::CreditReq { sched_from, .. } => TracedHeader::CreditReq { msg, sched_from },
            SirdHeader::Credit { index, .. } => TracedHeader::Credit { msg, index },
            SirdHeader::Resend { index, .. } => TracedHeader::Resend { msg, index },
        }
    }
}

/// The host facts SIRD reads, for an endpoint with `cfg`.
pub fn host_info(cfg: &UdpConfig) -> HostInfo {
    let link_rate_bps = cfg.link_rate_bps();
    HostInfo {
        id: 0,
        n_hosts: cfg.max_peers + 1,
        link_rate_bps,
        mtu: cfg.mtu,
        mss: cfg.mss(),
        bdp_bytes: cfg.bdp(),
        priorities: 2,
        base_rtt: from_us(cfg.base_rtt_us),
        size_dist: None,
    }
}

impl Endpoint<FaultyIo<UdpIo>> {
    /// Opens an endpoint on a UDP socket bound to `addr` (port 0 = any), with
    /// the fault injection of `cfg.faults` (none by default).
    pub fn bind(addr: SocketAddr, cfg: UdpConfig) -> Result<Self, Box<dyn std::error::Error>> {
        let io = FaultyIo::new(UdpIo::bind(addr)?, cfg.faults.clone(), stream(cfg.seed, Stream::Switch, 0));
        // A restarted process must look like a new peer even with the same seed.
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let incarnation = mix64(t as u64 ^ cfg.seed ^ (std::process::id() as u64) << 32) as u32;
        Ok(Endpoint::with_io(io, cfg, incarnation)?)
    }
}

impl<I: Io> Endpoint<I> {
    /// An endpoint on any [`Io`]; `incarnation` must differ between restarts.
    pub fn with_io(mut io: I, cfg: UdpConfig, incarnation: u32) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if cfg.ecn {
            io.set_ecn(true).map_err(|e| ConfigError::new("ecn", format!("cannot set ECN on the socket: {e}")))?;
        }
        let info = host_info(&cfg);
        let retry_timeout = (cfg.retry_timeout_ms * 1e9).round() as Time;
        let tick = (retry_timeout / 4).max(from_us(cfg.sird.timeout_us)).max(1);
        let now = io.now();
        Ok(Endpoint {
            sird: Sird::new(&cfg.sird, &info).with_credit_catch_up(from_us(cfg.nic_catch_up_us)),
            mss: info.mss,
            incarnation,
            rng: stream(cfg.seed, Stream::Host, 0),
            timers: BinaryHeap::new(),
            timer_seq: 0,
            new_timers: Vec::new(),
            app_events: Vec::new(),
            nic_free_at: 0,
            nic_blocked: false,
            catch_up: from_us(cfg.nic_catch_up_us),
            next_tick: now + tick,
            tick,
            retry_timeout,
            peers: Peers::new(cfg.max_peers),
            next_app: 0,
            next_attempt: 0,
            out: HashMap::new(),
            attempt_app: HashMap::new(),
            inb: HashMap::new(),
            inbound_bytes: 0,
            ctrl: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
            rx_buf: vec![0; RECV_BUFFER],
            tx_buf: Vec::with_capacity(RECV_BUFFER),
            trace: None,
            io,
            cfg,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.io.local_addr()
    }

    pub fn config(&self) -> &UdpConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    pub fn now(&self) -> Time {
        self.io.now()
    }

    /// Registers `addr` as a peer; None when `max_peers` are registered.
    pub fn add_peer(&mut self, addr: SocketAddr) -> Option<PeerId> {
        self.peers.add(addr)
    }

    pub fn peer_addr(&self, peer: PeerId) -> Option<SocketAddr> {
        self.peers.get(peer).map(|p| p.addr)
    }

    /// Messages accepted by `send` and not yet confirmed or failed.
    pub fn in_flight(&self) -> usize {
        self.out.len()
    }

    /// Bytes held in reassembly buffers and messages being received.
    pub fn inbound_state(&self) -> (usize, u64) {
        (self.inb.len(), self.inbound_bytes)
    }

    /// Records every SIRD packet sent and received (for conformance tests).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub fn trace(&self) -> &[Decision] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// Blocks until `at` (endpoint clock) or until a datagram may have arrived.
    pub fn wait_until(&mut self, at: Time) {
        self.io.wait_until(at)
    }

    /// The next event for the application, if any.
    pub fn next_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The id the next accepted `send` will return.
    pub fn next_message_id(&self) -> u64 {
        self.next_app
    }

    /// Queues `data` for `peer`; returns the message id that [`Event::Confirmed`]
    /// or [`Event::Failed`] will name.
    pub fn send(&mut self, peer: PeerId, data: Vec<u8>) -> Result<u64, SendError> {
        if self.peers.get(peer).is_none() || peer == 0 {
            return Err(SendError::UnknownPeer(peer));
        }
        let size = data.len() as u64;
        if size == 0 {
            return Err(SendError::Empty);
        }
        if size > self.cfg.max_message_bytes {
            return Err(SendError::TooLarge { size, max: self.cfg.max_message_bytes });
        }
        if self.out.len() >= self.cfg.max_outbound_messages as usize {
            return Err(SendError::Busy);
        }
        let app = self.next_app;
        self.next_app += 1;
        let now = self.io.now();
        self.out.insert(app, OutMsg { peer, data, attempt: 0, retries: 0, started: now, heard: now });
        self.start_attempt(app, now);
        self.stats.messages_sent += 1;
        Ok(app)
    }

    /// Hands message `app` to SIRD under a fresh attempt id.
    fn start_attempt(&mut self, app: u64, now: Time) {
        let attempt = self.next_attempt;
        self.next_attempt = (self.next_attempt + 1) & ATTEMPT_MASK;
        let m = self.out.get_mut(&app).expect("live message");
        m.attempt = attempt;
        m.heard = now;
        let msg = Message { id: attempt, src: 0, dst: m.peer, size: m.data.len() as u64, start: now };
        self.attempt_app.insert(attempt, app);
        self.with_sird(now, |s, cx| s.start_message(cx, &msg));
    }

    /// Runs one SIRD call with a context at `now`, then files its timers and reports.
    fn with_sird<R>(&mut self, now: Time, f: impl FnOnce(&mut Sird, &mut Cx) -> R) -> R {
        let r = {
            let mut cx = Cx::new(now, &mut self.rng, &mut self.new_timers, &mut self.app_events);
            f(&mut self.sird, &mut cx)
        };
        for (at, token) in self.new_timers.drain(..) {
            self.timer_seq += 1;
            self.timers.push(Reverse((at, self.timer_seq, token)));
        }
        let mut events = std::mem::take(&mut self.app_events);
        for e in events.drain(..) {
            if let AppEvent::Completed { msg } = e {
                self.finish_inbound(msg);
            }
        }
        self.app_events = events;
        r
    }

    /// Does everything due now (receive, timers, retries, transmit) and returns
    /// when the endpoint next needs to run if no datagram arrives before.
    pub fn step(&mut self) -> Time {
        let now = self.io.now();
        for _ in 0..RX_BATCH {
            match self.io.recv(&mut self.rx_buf) {
                Ok(Some((n, from, ce))) => self.on_datagram(now, n, from, ce),
                Ok(None) => break,
                Err(_) => break,
            }
        }
        while let Some(&Reverse((at, _, token))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            self.with_sird(now, |s, cx| s.on_timer(cx, token));
        }
        if now >= self.next_tick {
            self.housekeeping(now);
            self.next_tick = now + self.tick;
        }
        self.transmit(now);
        let mut wake = self.next_tick;
        if let Some(Reverse((at, _, _))) = self.timers.peek() {
            wake = wake.min(*at);
        }
        if self.nic_blocked {
            wake = wake.min(self.nic_free_at);
        }
        wake.max(now)
    }

    /// Runs the endpoint until an event is ready or `timeout` passes (real time).
    pub fn poll(&mut self, timeout: Duration) -> Option<Event> {
        let deadline = self.io.now() + timeout.as_nanos() as Time * 1000;
        loop {
            let wake = self.step();
            if let Some(e) = self.events.pop_front() {
                return Some(e);
            }
            let now = self.io.now();
            if now >= deadline {
                return None;
            }
            self.io.wait_until(wake.min(deadline));
        }
    }

    // ---------------- receive path ----------------

    fn on_datagram(&mut self, now: Time, n: usize, from: SocketAddr, ce: bool) {
        self.stats.datagrams_received += 1;
        let buf = std::mem::take(&mut self.rx_buf);
        match wire::decode(&buf[..n]) {
            Ok((h, payload)) => self.on_header(now, from, ce, h, payload),
            Err(WireError::BadChecksum) => self.stats.bad_checksum += 1,
            Err(_) => self.stats.malformed += 1,
        }
        self.rx_buf = buf;
    }

    fn on_header(&mut self, now: Time, from: SocketAddr, ce: bool, h: Header, payload: &[u8]) {
        let peer = match self.peers.lookup(&from) {
            Some(p) => p,
            None if self.cfg.accept_unknown_peers => match self.peers.add(from) {
                Some(p) => p,
                None => return self.stats.unknown_peer += 1,
            },
            None => return self.stats.unknown_peer += 1,
        };
        self.check_incarnation(peer, h.incarnation);
        match h.kind {
            Kind::Data | Kind::CreditReq => self.on_inbound(now, peer, ce, h, payload),
            Kind::Credit | Kind::Resend => self.on_sender_control(now, peer, h),
            Kind::Done => match self.out.get(&h.app) {
                Some(m) if m.peer == peer => {
                    let m = self.out.remove(&h.app).expect("present");
                    self.drop_attempt(now, m.attempt);
                    self.stats.messages_confirmed += 1;
                    self.events.push_back(Event::Confirmed { peer, id: h.app, latency_ps: now - m.started });
                }
                _ => self.stats.stale += 1,
            },
            Kind::Alive => match self.out.get_mut(&h.app) {
                Some(m) if m.peer == peer => m.heard = now,
                _ => self.stats.stale += 1,
            },
        }
    }

    /// A new incarnation of a peer: what we were receiving from the old one is void.
    fn check_incarnation(&mut self, peer: PeerId, inc: u32) {
        let p = self.peers.get_mut(peer).expect("known peer");
        match p.incarnation {
            Some(old) if old == inc => return,
            None => {
                p.incarnation = Some(inc);
                return;
            }
            Some(_) => {}
        }
        p.incarnation = Some(inc);
        p.delivered = Default::default();
        let ids = std::mem::take(&mut p.inbound);
        for id in ids {
            self.drop_inbound(id);
        }
        self.stats.peer_restarts += 1;
    }

    fn on_inbound(&mut self, now: Time, peer: PeerId, ce: bool, h: Header, payload: &[u8]) {
        if h.msg > ATTEMPT_MASK || h.size == 0 || h.size > self.cfg.max_message_bytes {
            return self.stats.invalid += 1;
        }
        let p = self.peers.get(peer).expect("known peer");
        match p.delivered.check(h.app) {
            Seen::New => {}
            Seen::Delivered => {
                self.stats.duplicates += 1;
                return self.queue_ctrl(peer, Kind::Done, h.app);
            }
            Seen::TooOld => return self.stats.replayed += 1,
        }
        let id = (peer as u64) << PEER_SHIFT | h.msg;
        let n_pkts = packets_for(h.size, self.mss);
        if h.kind == Kind::Data
            && (h.index as u64 >= n_pkts || payload.len() != payload_of(h.size, self.mss, h.index as u64) as usize)
        {
            return self.stats.invalid += 1;
        }
        match self.inb.get(&id) {
            Some(m) if m.app != h.app || m.buf.len() as u64 != h.size => return self.stats.invalid += 1,
            Some(_) => {}
            None => {
                let full = p.inbound.len() >= self.cfg.max_inbound_per_peer as usize
                    || self.inbound_bytes + h.size > self.cfg.max_inbound_bytes;
                if full {
                    return self.stats.overload += 1;
                }
                let sched_from = self.sird.unscheduled_packets(h.size);
                let m = InMsg {
                    peer,
                    app: h.app,
                    buf: vec![0; h.size as usize],
                    got: Reassembly::new(h.size, self.mss),
                    sched_from,
                    granted: sched_from,
                    progress: now,
                    alive_sent: now,
                };
                self.inbound_bytes += h.size;
                self.inb.insert(id, m);
                self.peers.get_mut(peer).expect("known").inbound.push(id);
            }
        }
        let m = self.inb.get_mut(&id).expect("present");
        let hdr = if h.kind == Kind::Data {
            // SIRD returns credit for scheduled packets: accept only what it credited.
            let ok = if h.scheduled { h.index >= m.sched_from && h.index < m.granted } else { h.index < m.sched_from };
            if !ok {
                return self.stats.invalid += 1;
            }
            let off = h.index as usize * self.mss as usize;
            m.buf[off..off + payload.len()].copy_from_slice(payload);
            m.got.insert(h.index as u64, payload.len() as u32);
            m.progress = now;
            if ce {
                self.stats.ce_received += 1;
            }
            SirdHeader::Data { msg: id, size: h.size, index: h.index, scheduled: h.scheduled, csn: h.csn }
        } else {
            SirdHeader::CreditReq { msg: id, size: h.size, sched_from: h.index }
        };
        let mut pkt = Packet::new(peer, 0, CONTROL_WIRE, 0, 0, hdr);
        if ce && h.kind == Kind::Data {
            pkt.ecn = ECN_ECT | ECN_CE;
        }
        self.record(now, peer, 0, &hdr, h.msg);
        self.with_sird(now, |s, cx| s.on_packet(cx, &pkt));
    }

    /// CREDIT or RESEND for one of our attempts.
    fn on_sender_control(&mut self, now: Time, peer: PeerId, h: Header) {
        let Some(&app) = self.attempt_app.get(&h.msg) else {
            return self.stats.stale += 1;
        };
        let m = self.out.get_mut(&app).expect("attempts map to live messages");
        if m.peer != peer || h.index as u64 >= packets_for(m.data.len() as u64, self.mss) {
            return self.stats.invalid += 1;
        }
        m.heard = now;
        let hdr = if h.kind == Kind::Credit {
            SirdHeader::Credit { msg: h.msg, index: h.index }
        } else {
            SirdHeader::Resend { msg: h.msg, index: h.index }
        };
        self.record(now, peer, 0, &hdr, h.msg);
        let pkt = Packet::new(peer, 0, CONTROL_WIRE, 0, 0, hdr);
        self.with_sird(now, |s, cx| s.on_packet(cx, &pkt));
    }

    /// SIRD completed inbound message `id`: deliver it once and confirm it.
    fn finish_inbound(&mut self, id: u64) {
        self.sird.forget_completed(id);
        let Some(m) = self.take_inbound(id) else {
            return;
        };
        let p = self.peers.get_mut(m.peer).expect("known peer");
        p.delivered.insert(m.app, self.cfg.dedup_window as usize);
        // Other attempts of the same message are now duplicates.
        let twins: Vec<u64> =
            p.inbound.iter().copied().filter(|i| self.inb.get(i).is_some_and(|o| o.app == m.app)).collect();
        for t in twins {
            self.drop_inbound(t);
        }
        self.stats.messages_delivered += 1;
        self.stats.bytes_delivered += m.buf.len() as u64;
        self.queue_ctrl(m.peer, Kind::Done, m.app);
        self.events.push_back(Event::Received { peer: m.peer, id: m.app, data: m.buf });
    }

    fn take_inbound(&mut self, id: u64) -> Option<InMsg> {
        let m = self.inb.remove(&id)?;
        self.inbound_bytes -= m.buf.len() as u64;
        if let Some(p) = self.peers.get_mut(m.peer) {
            p.inbound.retain(|&i| i != id);
        }
        Some(m)
    }

    /// Forgets an inbound message in the driver and in SIRD (credit returned).
    fn drop_inbound(&mut self, id: u64) {
        self.take_inbound(id);
        self.sird.abort_inbound(id);
    }

    fn drop_attempt(&mut self, _now: Time, attempt: u64) {
        self.attempt_app.remove(&attempt);
        self.sird.abort_outbound(attempt);
    }

    fn queue_ctrl(&mut self, peer: PeerId, kind: Kind, app: u64) {
        if let Some(p) = self.peers.get(peer) {
            self.ctrl.push_back((p.addr, Header::new(kind, self.incarnation, 0, app, 0, 0)));
        }
    }

    // ---------------- timers of the driver ----------------

    fn housekeeping(&mut self, now: Time) {
        let rt = self.retry_timeout;
        let silent: Vec<u64> = self.out.iter().filter(|(_, m)| now >= m.heard + rt).map(|(&a, _)| a).collect();
        for app in silent {
            let m = self.out.get_mut(&app).expect("listed");
            let (old, peer) = (m.attempt, m.peer);
            if m.retries >= self.cfg.max_retries {
                self.out.remove(&app);
                self.drop_attempt(now, old);
                self.stats.messages_failed += 1;
                self.events.push_back(Event::Failed { peer, id: app });
            } else {
                m.retries += 1;
                self.stats.retries += 1;
                self.drop_attempt(now, old);
                self.start_attempt(app, now);
            }
        }
        // Keep senders patient while we are still receiving; give up on silent ones.
        let abandon_after = rt * (self.cfg.max_retries as Time + 2);
        let mut alive = Vec::new();
        let mut dead = Vec::new();
        for (&id, m) in self.inb.iter_mut() {
            if m.owed() && now >= m.progress + abandon_after {
                dead.push(id);
            } else if now >= m.alive_sent + rt / 2 {
                m.alive_sent = now;
                alive.push((m.peer, m.app));
            }
        }
        for (peer, app) in alive {
            self.queue_ctrl(peer, Kind::Alive, app);
        }
        for id in dead {
            self.drop_inbound(id);
            self.stats.abandoned += 1;
        }
    }

    // ---------------- transmit path ----------------

    fn transmit(&mut self, now: Time) {
        while let Some((to, h)) = self.ctrl.pop_front() {
            self.tx_buf.clear();
            wire::encode(&h, &[], &mut self.tx_buf);
            self.emit(to);
        }
        self.nic_blocked = false;
        loop {
            if self.cfg.nic_pacing && now < self.nic_free_at {
                self.nic_blocked = true;
                return;
            }
            let Some(pkt) = self.with_sird(now, |s, cx| s.poll_transmit(cx)) else {
                return;
            };
            let Some((to, bytes)) = self.encode(now, &pkt) else {
                continue;
            };
            self.emit(to);
            let busy = wire::nic_time(bytes, self.cfg.link_rate_bps());
            self.nic_free_at = self.nic_free_at.max(now.saturating_sub(self.catch_up)) + busy;
        }
    }

    fn emit(&mut self, to: SocketAddr) {
        self.stats.datagrams_sent += 1;
        // A socket error other than a full buffer is a lost datagram too; recovery handles it.
        let _ = self.io.send(&self.tx_buf, to);
    }

    /// The datagram for a SIRD packet, in `tx_buf`; None if its message is gone.
    fn encode(&mut self, now: Time, pkt: &Packet<SirdHeader>) -> Option<(SocketAddr, usize)> {
        let inc = self.incarnation;
        self.tx_buf.clear();
        let (peer, attempt) = match pkt.hdr {
            SirdHeader::Data { msg, size, index, scheduled, csn } => {
                let app = *self.attempt_app.get(&msg)?;
                let m = self.out.get(&app)?;
                let off = index as usize * self.mss as usize;
                let len = payload_of(size, self.mss, index as u64) as usize;
                let h = Header { scheduled, csn, ..Header::new(Kind::Data, inc, msg, app, size, index) };
                wire::encode(&h, &m.data[off..off + len], &mut self.tx_buf);
                self.stats.data_packets_sent += 1;
                self.stats.csn_sent += csn as u64;
                (m.peer, msg)
            }
            SirdHeader::CreditReq { msg, size, sched_from } => {
                let app = *self.attempt_app.get(&msg)?;
                wire::encode(&Header::new(Kind::CreditReq, inc, msg, app, size, sched_from), &[], &mut self.tx_buf);
                (pkt.dst, msg)
            }
            SirdHeader::Credit { msg, index } | SirdHeader::Resend { msg, index } => {
                let m = self.inb.get_mut(&msg)?;
                let kind = if matches!(pkt.hdr, SirdHeader::Credit { .. }) {
                    m.granted = m.granted.max(index + 1);
                    self.stats.credits_sent += 1;
                    Kind::Credit
                } else {
                    Kind::Resend
                };
                let h = Header::new(kind, inc, msg & ATTEMPT_MASK, m.app, m.buf.len() as u64, index);
                wire::encode(&h, &[], &mut self.tx_buf);
                (m.peer, msg & ATTEMPT_MASK)
            }
        };
        self.record(now, 0, peer, &pkt.hdr, attempt);
        let addr = self.peers.get(peer)?.addr;
        Some((addr, self.tx_buf.len()))
    }

    fn record(&mut self, at: Time, from: PeerId, to: PeerId, hdr: &SirdHeader, msg: u64) {
        if let Some(t) = self.trace.as_mut() {
            t.push(Decision { at, from, to, hdr: TracedHeader::of(hdr, msg) });
        }
    }
}
