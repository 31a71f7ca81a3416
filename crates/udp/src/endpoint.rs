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
//! after `max_retries`, duplicate filtering, and bounds on all state. Against
//! abuse (issue 26; docs/udp.md "Defences"): an address that has not proved it
//! receives our datagrams gets back at most 3x the bytes it sent (RFC 9000
//! §8.1), RESENDs and repeated DONEs are held to a token bucket per peer, such
//! peers are the first evicted from a full table, and datagrams of an older
//! incarnation of a peer are refused.

use crate::config::UdpConfig;
use crate::faults::FaultyIo;
use crate::io::{Io, IoOptions, IoStats, RxBatch, TxBatch, UdpIo};
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
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

mod receive;
mod trace;
mod transmit;
pub use trace::{Decision, TracedHeader};

/// Inbound SIRD ids are `peer << PEER_SHIFT | sender's attempt id`, unique per endpoint.
const PEER_SHIFT: u32 = 44;
const ATTEMPT_MASK: u64 = (1 << PEER_SHIFT) - 1;
/// Datagrams read per step before the endpoint transmits again (receive
/// slots; with GRO the socket fills fewer slots with several datagrams each).
const RX_BATCH: usize = 64;
/// Datagrams queued before the transmit path hands them to the socket; the
/// rest of a step's datagrams go in the next batch.
const TX_BATCH: usize = 256;
/// An unvalidated address gets back at most this many times the bytes it sent (RFC 9000 §8.1).
pub const AMPLIFICATION_FACTOR: u64 = 3;

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

/// A DATA packet that was cut for another `mtu` than this endpoint's: the
/// sender's MSS differs, so none of its multi-packet messages can be
/// reassembled here (docs/udp.md, "MTU mismatch").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtuMismatch {
    pub peer: PeerId,
    pub addr: SocketAddr,
    /// The sender's `mtu` as far as its packets show it (None: one packet
    /// fits two, e.g. a short last packet that could also be a full one).
    pub theirs: Option<PeerMtu>,
    /// This endpoint's `mtu`.
    pub ours: u32,
}

/// A peer's `mtu` read from one DATA packet: a full packet gives it exactly; a
/// message's only packet, larger than our MSS, gives a lower bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerMtu {
    Exactly(u32),
    AtLeast(u32),
}

impl std::fmt::Display for PeerMtu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerMtu::Exactly(m) => write!(f, "mtu = {m}"),
            PeerMtu::AtLeast(m) => write!(f, "an mtu of at least {m}"),
        }
    }
}

impl std::fmt::Display for MtuMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let theirs = self.theirs.map_or("another mtu".to_string(), |t| t.to_string());
        write!(
            f,
            "{} sends DATA packets cut for {theirs}, but this receiver has mtu = {}: both ends must use the same \
             `mtu` (--set mtu=N on one of them); the sender was told ours",
            self.addr, self.ours
        )
    }
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
    incarnation: u64,
    /// Key of the address tokens (`token_for`): random per process in `bind`.
    secret: u64,
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
    // Ordered maps: housekeeping walks them, and a seeded run on the fake clock
    // must replay exactly (a hash map's order differs between processes).
    out: BTreeMap<u64, OutMsg>,
    attempt_app: HashMap<u64, u64>,
    inb: BTreeMap<u64, InMsg>,
    inbound_bytes: u64,
    /// Driver messages (DONE, ALIVE): sent at once, outside the virtual NIC.
    ctrl: VecDeque<(PeerId, Header)>,
    events: VecDeque<Event>,
    stats: Stats,
    /// Reused receive buffers, filled by one `recv_batch` per step.
    rx: RxBatch,
    /// Datagrams encoded in place and sent by one `send_batch` per step.
    tx: TxBatch,
    trace: Option<Vec<Decision>>,
    /// The last DATA packet refused for being cut for another `mtu`.
    mtu_mismatch: Option<MtuMismatch>,
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
        use std::hash::BuildHasher;
        let opts = IoOptions { gso: cfg.gso, gro: cfg.gro, busy_poll: from_us(cfg.busy_poll_us) };
        let io = FaultyIo::new(UdpIo::bind_with(addr, opts)?, cfg.faults.clone(), stream(cfg.seed, Stream::Switch, 0));
        // The start time orders incarnations: a restarted process has a larger one, so
        // its peers refuse replayed datagrams of the old one (wire.rs).
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let mut ep = Endpoint::with_io(io, cfg, (t as u64).max(1))?;
        // Address tokens must not be guessable: key them with OS randomness
        // (std seeds RandomState from the OS), not with the seed or the clock.
        let r = std::collections::hash_map::RandomState::new();
        ep.secret = r.hash_one(std::process::id()) ^ r.hash_one(t).rotate_left(32);
        Ok(ep)
    }
}

impl<I: Io> Endpoint<I> {
    /// An endpoint on any [`Io`]; `incarnation` must grow from one restart to the
    /// next (its peers refuse datagrams of a smaller one). The address-token key
    /// is derived from `incarnation` and the seed here (deterministic for tests);
    /// `bind` replaces it with OS randomness.
    pub fn with_io(mut io: I, cfg: UdpConfig, incarnation: u64) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if cfg.ecn {
            io.set_ecn(true).map_err(|e| ConfigError::new("ecn", format!("cannot set ECN on the socket: {e}")))?;
        }
        let info = host_info(&cfg);
        let retry_timeout = (cfg.retry_timeout_ms * 1e9).round() as Time;
        // ALIVE goes out every half retry timeout, so the driver checks twice as often.
        let tick = (retry_timeout / 4).max(1);
        let now = io.now();
        Ok(Endpoint {
            sird: Sird::new(&cfg.sird, &info).with_credit_catch_up(from_us(cfg.nic_catch_up_us)),
            mss: info.mss,
            incarnation,
            secret: mix64(incarnation ^ mix64(cfg.seed)),
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
            peers: Peers::new(cfg.max_peers, cfg.response_burst),
            next_app: 0,
            next_attempt: 0,
            out: BTreeMap::new(),
            attempt_app: HashMap::new(),
            inb: BTreeMap::new(),
            inbound_bytes: 0,
            ctrl: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
            rx: RxBatch::new(RX_BATCH),
            tx: TxBatch::default(),
            trace: None,
            mtu_mismatch: None,
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

    /// Counters of the socket layer: syscalls, datagrams, GSO/GRO use.
    pub fn io_stats(&self) -> IoStats {
        self.io.io_stats()
    }

    pub fn now(&self) -> Time {
        self.io.now()
    }

    /// Registers `addr` as a peer; None when `max_peers` are registered. The
    /// application chose the address, so it counts as validated (docs/udp.md).
    pub fn add_peer(&mut self, addr: SocketAddr) -> Option<PeerId> {
        let now = self.io.now();
        self.peers.add(addr, true, now)
    }

    /// Whether `peer` has proved that it receives our datagrams (or was added by `add_peer`).
    pub fn peer_validated(&self, peer: PeerId) -> bool {
        self.peers.get(peer).is_some_and(|p| p.validated)
    }

    pub fn peer_addr(&self, peer: PeerId) -> Option<SocketAddr> {
        self.peers.get(peer).map(|p| p.addr)
    }

    /// The `mtu` that `peer` announced when our DATA did not fit its own (it
    /// then refused the message, reported [`Event::Failed`]); None while it has not.
    pub fn peer_mtu(&self, peer: PeerId) -> Option<u32> {
        self.peers.get(peer).and_then(|p| p.mtu)
    }

    /// The last DATA packet this endpoint refused for being cut for another `mtu`.
    pub fn mtu_mismatch(&self) -> Option<&MtuMismatch> {
        self.mtu_mismatch.as_ref()
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
        let mut rx = std::mem::take(&mut self.rx);
        // A socket error leaves the batch empty: the next step tries again.
        if self.io.recv_batch(&mut rx).is_ok() {
            for i in 0..rx.len() {
                let (d, from, ce) = rx.get(i);
                self.on_datagram(now, d, from, ce);
            }
        }
        self.rx = rx;
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
}
