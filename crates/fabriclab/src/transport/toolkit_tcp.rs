//! Machinery shared by the TCP-like message transports of the SIRD baselines
//! (DCTCP and Swift): per-peer dense slots, the pool rule that maps messages onto pre-established connections,
//! a connection's send stream of messages (byte sequence numbers, one segment
//! never spanning two messages), the receiver's reassembly of that stream with a
//! cumulative ACK, NewReno loss recovery, the RFC 6298 retransmission-timeout
//! estimator, a retransmission timer that needs no cancellation, Eifel's undo of
//! a spurious timeout, and their traces and timer tokens.

use super::toolkit::{IdMap, Reassembly};
use super::{Cx, MsgId};
use fabriclab_engine::{Time, S};
use std::collections::VecDeque;

/// A peer slot carried in packets before the sender has learnt it.
pub const NO_SLOT: u32 = u32::MAX;

/// Upper bound of a backed-off RTO (RFC 6298 (2.5): at least 60 s).
pub const MAX_RTO: Time = 60 * S;

/// Per-peer state in dense slots: one hash lookup when a peer is first seen
/// (or when a packet carries no valid slot hint), direct indexing after that.
/// Never iterated, so hashing cannot affect behaviour.
pub struct Peers<T> {
    index: IdMap<u32, u32>,
    slots: Vec<(u32, T)>,
}

impl<T> Default for Peers<T> {
    fn default() -> Self {
        Peers { index: IdMap::default(), slots: Vec::new() }
    }
}

/// Traces connection `conn` to peer slot `slot`: its window (bytes) and the RTT
/// sample of this ACK, if any. Out of line: callers test [`Cx::tracing`] first.
#[cold]
#[inline(never)]
pub fn trace_conn<T>(
    cx: &mut Cx,
    peers: &Peers<T>,
    slot: u32,
    flow_of: impl Fn(u32) -> u32,
    rtt: Option<Time>,
    cwnd: f64,
) {
    let flow = flow_of(peers.host(slot)) as u64;
    if let Some(rtt) = rtt {
        cx.trace_rtt(flow, rtt);
    }
    cx.trace_cwnd(flow, cwnd);
}

impl<T> Peers<T> {
    /// The slot of `host`, created with `make` on first use.
    pub fn slot(&mut self, host: u32, make: impl FnOnce() -> T) -> u32 {
        let next = self.slots.len() as u32;
        let slot = *self.index.entry(host).or_insert(next);
        if slot == next {
            self.slots.push((host, make()));
        }
        slot
    }

    /// `hint` if it is `host`'s slot (peers echo our slot in their packets), else `slot(host)`.
    #[inline]
    pub fn slot_hinted(&mut self, hint: u32, host: u32, make: impl FnOnce() -> T) -> u32 {
        match self.slots.get(hint as usize) {
            Some((h, _)) if *h == host => hint,
            _ => self.slot(host, make),
        }
    }

    #[inline]
    pub fn host(&self, slot: u32) -> u32 {
        self.slots[slot as usize].0
    }

    #[inline]
    pub fn get(&self, slot: u32) -> Option<&T> {
        self.slots.get(slot as usize).map(|s| &s.1)
    }

    #[inline]
    pub fn get_mut(&mut self, slot: u32) -> Option<&mut T> {
        self.slots.get_mut(slot as usize).map(|s| &mut s.1)
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

impl<T> std::ops::Index<u32> for Peers<T> {
    type Output = T;
    #[inline]
    fn index(&self, slot: u32) -> &T {
        &self.slots[slot as usize].1
    }
}

impl<T> std::ops::IndexMut<u32> for Peers<T> {
    #[inline]
    fn index_mut(&mut self, slot: u32) -> &mut T {
        &mut self.slots[slot as usize].1
    }
}

/// One destination's connections at the sender, and the slot the destination
/// gave us ([`NO_SLOT`] until we hear from it; our packets carry it as a hint).
pub struct TxPair<C> {
    pub rx_slot: u32,
    pub conns: Vec<C>,
}

impl<C> TxPair<C> {
    pub fn new() -> Self {
        TxPair { rx_slot: NO_SLOT, conns: Vec::new() }
    }
}

impl<C> Default for TxPair<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C> Peers<TxPair<C>> {
    /// Connection `conn` to tx slot `slot`, if it exists.
    #[inline]
    pub fn conn_mut(&mut self, slot: u32, conn: u16) -> Option<&mut C> {
        self.get_mut(slot).and_then(|p| p.conns.get_mut(conn as usize))
    }

    /// A packet from the receiver of connection `conn` to tx slot `slot`, which
    /// carried the receiver's slot `rx_slot`: learns that slot, returns the connection.
    #[inline]
    pub fn heard_from(&mut self, slot: u32, rx_slot: u32, conn: u16) -> Option<&mut C> {
        let pair = self.get_mut(slot)?;
        pair.rx_slot = rx_slot;
        pair.conns.get_mut(conn as usize)
    }
}

/// One source's connections at the receiver.
#[derive(Default)]
pub struct RxPair {
    pub conns: Vec<RecvStream>,
}

impl Peers<RxPair> {
    /// The receive stream of connection `conn` from `src`, whose packet carried
    /// `hint` as our slot; created on first use. Returns our slot for `src` too.
    #[inline]
    pub fn stream(&mut self, hint: u32, src: u32, conn: u16) -> (u32, &mut RecvStream) {
        let slot = self.slot_hinted(hint, src, RxPair::default);
        (slot, self.stream_in(slot, conn))
    }

    /// The receive stream of connection `conn` in rx slot `slot` (which must
    /// exist), created with any lower-index ones on first use.
    #[inline]
    pub fn stream_in(&mut self, slot: u32, conn: u16) -> &mut RecvStream {
        let conns = &mut self[slot].conns;
        if conns.len() <= conn as usize {
            conns.resize_with(conn as usize + 1, RecvStream::default);
        }
        &mut conns[conn as usize]
    }
}

/// Flow label of connection `conn` to `peer` in pools of `pool`: distinct per
/// connection, so ECMP keeps each connection on one path.
#[inline]
pub fn conn_flow(peer: u32, pool: u32, conn: u16) -> u32 {
    peer.wrapping_mul(pool).wrapping_add(conn as u32)
}

/// The mapping of a new message onto a host pair's connection pool (SIRD §5.1
/// gives the pool, the rule is ours): the lowest-index idle connection (nothing
/// queued or unacknowledged); else a new connection while fewer than `pool` are
/// open; else the one with the fewest outstanding bytes, ties to the lowest
/// index. `outstanding` lists the open connections' queued + unacknowledged
/// bytes in index order; a result equal to their number means "open a new one".
pub fn pick_connection(outstanding: impl IntoIterator<Item = u64>, pool: u32) -> usize {
    let mut open = 0;
    let mut best: Option<(usize, u64)> = None;
    for (i, o) in outstanding.into_iter().enumerate() {
        if o == 0 {
            return i;
        }
        if best.is_none_or(|(_, b)| o < b) {
            best = Some((i, o));
        }
        open += 1;
    }
    match best {
        Some((i, _)) if open >= pool as usize => i,
        _ => open,
    }
}

/// A message queued on a connection: stream bytes `start..start + size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutMsg {
    pub id: MsgId,
    pub start: u64,
    pub size: u64,
}

impl OutMsg {
    #[inline]
    pub fn end(&self) -> u64 {
        self.start + self.size
    }
}

/// One segment to put on the wire: stream bytes `seq..seq + len` of `msg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub msg: OutMsg,
    /// Part of the stream was sent before (go-back-N or fast retransmit).
    pub retransmission: bool,
}

/// The sender side of one connection's byte stream. Messages are sent back to
/// back in FIFO order, cut into MSS segments aligned to each message's start, so
/// a lone message is packetised exactly as the ideal-latency model assumes.
#[derive(Clone, Debug, Default)]
pub struct SendStream {
    /// Messages not fully acknowledged, in stream order.
    msgs: VecDeque<OutMsg>,
    /// Index in `msgs` of the message holding `snd_nxt` (`msgs.len()` at the end).
    nxt_msg: usize,
    /// Stream bytes handed over by the application.
    app_end: u64,
    snd_una: u64,
    snd_nxt: u64,
    /// Highest byte ever sent (`snd_nxt` falls back below it on go-back-N).
    snd_max: u64,
}

impl SendStream {
    /// Appends a message of `size` (> 0) bytes; returns its place in the stream.
    pub fn push(&mut self, id: MsgId, size: u64) -> OutMsg {
        debug_assert!(size > 0);
        let m = OutMsg { id, start: self.app_end, size };
        self.msgs.push_back(m);
        self.app_end += size;
        m
    }

    #[inline]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    #[inline]
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    #[inline]
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }

    /// Bytes sent from `snd_una` up to `snd_nxt`.
    #[inline]
    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Queued + unacknowledged bytes.
    #[inline]
    pub fn outstanding(&self) -> u64 {
        self.app_end - self.snd_una
    }

    #[inline]
    pub fn has_unsent(&self) -> bool {
        self.snd_nxt < self.app_end
    }

    /// Some byte ever sent is not acknowledged.
    #[inline]
    pub fn has_unacked(&self) -> bool {
        self.snd_una < self.snd_max
    }

    /// `ack` is a duplicate ACK: it repeats `snd_una` while data is unacknowledged.
    #[inline]
    pub fn is_duplicate(&self, ack: u64) -> bool {
        ack == self.snd_una && self.has_unacked()
    }

    /// Payload of the segment at `snd_nxt` (there must be unsent data).
    #[inline]
    pub fn next_len(&self, mss: u32) -> u64 {
        let m = &self.msgs[self.nxt_msg];
        (m.end() - self.snd_nxt).min(mss as u64)
    }

    /// Takes the segment at `snd_nxt` (there must be unsent data) and advances past it.
    pub fn take_next(&mut self, mss: u32) -> Segment {
        let seq = self.snd_nxt;
        let msg = self.msgs[self.nxt_msg];
        let len = (msg.end() - seq).min(mss as u64);
        debug_assert_eq!((seq - msg.start) % mss as u64, 0, "segments are MSS-aligned within a message");
        self.snd_nxt += len;
        if self.snd_nxt == msg.end() {
            self.nxt_msg += 1;
        }
        let retransmission = seq < self.snd_max;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Segment { seq, len: len as u32, msg, retransmission }
    }

    /// The first unacknowledged segment (fast retransmit); `snd_nxt` does not move.
    pub fn first_unacked(&self, mss: u32) -> Segment {
        debug_assert!(self.has_unacked());
        let msg = self.msgs[0];
        let len = (msg.end() - self.snd_una).min(mss as u64);
        Segment { seq: self.snd_una, len: len as u32, msg, retransmission: true }
    }

    /// The segment starting at `seq`, if it was sent and is not yet acknowledged
    /// (a selective retransmission); `snd_nxt` does not move.
    pub fn segment_at(&self, seq: u64, mss: u32) -> Option<Segment> {
        if seq < self.snd_una || seq >= self.snd_max {
            return None;
        }
        let msg = *self.msgs.iter().find(|m| m.end() > seq)?;
        let len = (msg.end() - seq).min(mss as u64);
        Some(Segment { seq, len: len as u32, msg, retransmission: true })
    }

    /// A cumulative ACK of every byte below `ack`. Returns the newly acknowledged
    /// bytes: 0 for a duplicate or an ACK outside `snd_una..=snd_max`.
    pub fn ack(&mut self, ack: u64) -> u64 {
        if ack <= self.snd_una || ack > self.snd_max {
            return 0;
        }
        let newly = ack - self.snd_una;
        self.snd_una = ack;
        let mut popped = 0;
        while self.msgs.front().is_some_and(|m| m.end() <= ack) {
            self.msgs.pop_front();
            popped += 1;
        }
        if ack > self.snd_nxt {
            // The receiver already had what go-back-N would resend.
            self.snd_nxt = ack;
            self.locate_nxt();
        } else {
            self.nxt_msg -= popped;
        }
        newly
    }

    /// Retransmission timeout: resend from the first unacknowledged byte.
    pub fn go_back_n(&mut self) {
        self.snd_nxt = self.snd_una;
        self.nxt_msg = 0;
    }

    /// Undoes a go-back-N (the timeout was spurious): continue after `snd_max`.
    pub fn resume_at_max(&mut self) {
        if self.snd_nxt < self.snd_max {
            self.snd_nxt = self.snd_max;
            self.locate_nxt();
        }
    }

    /// Points `nxt_msg` at the message holding `snd_nxt` after it jumped.
    fn locate_nxt(&mut self) {
        let nxt = self.snd_nxt;
        self.nxt_msg = self.msgs.iter().position(|m| m.end() > nxt).unwrap_or(self.msgs.len());
    }

    /// Messages not fully acknowledged.
    pub fn messages(&self) -> usize {
        self.msgs.len()
    }
}

/// Duplicate ACKs that trigger fast retransmit (RFC 5681).
pub const DUPACK_THRESHOLD: u32 = 3;

/// What an advancing ACK did to loss recovery ([`NewReno::on_advance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Not in recovery.
    Outside,
    /// A partial ACK: recovery goes on.
    Partial,
    /// Everything up to the recovery point is acknowledged: recovery is over.
    Ended,
}

/// NewReno loss recovery (RFC 5681 fast retransmit, RFC 6582 partial ACKs):
/// the sender-side state, without the window reaction, which is each protocol's own.
#[derive(Clone, Debug, Default)]
pub struct NewReno {
    pub in_recovery: bool,
    /// `snd_max` when the recovery (or the last timeout) began.
    pub recover: u64,
    pub dupacks: u32,
    /// The segment at `snd_una` must be retransmitted next.
    pub retx: bool,
}

impl NewReno {
    /// Enters recovery until `snd_max` is acknowledged; `retx`: resend the
    /// first unacknowledged segment next.
    #[inline]
    pub fn enter(&mut self, snd_max: u64, retx: bool) {
        self.in_recovery = true;
        self.recover = snd_max;
        self.retx = retx;
    }

    /// An ACK advanced `snd_una` to `ack`. A partial ACK asks for the next hole
    /// to be resent if `resend_holes` (false when the holes are known otherwise).
    #[inline]
    pub fn on_advance(&mut self, ack: u64, resend_holes: bool) -> Recovery {
        self.dupacks = 0;
        if !self.in_recovery {
            return Recovery::Outside;
        }
        if ack >= self.recover {
            self.in_recovery = false;
            self.retx = false;
            Recovery::Ended
        } else {
            if resend_holes {
                self.retx = true;
            }
            Recovery::Partial
        }
    }

    /// A duplicate ACK of `ack` ([`SendStream::is_duplicate`]). True on the
    /// third one outside recovery, not for duplicates of data sent before the
    /// last recovery point (RFC 6582 §4.1): fast retransmit, recovery entered.
    #[inline]
    pub fn on_dupack(&mut self, ack: u64, snd_max: u64) -> bool {
        self.dupacks += 1;
        if self.dupacks == DUPACK_THRESHOLD && !self.in_recovery && (ack > self.recover || self.recover == 0) {
            self.enter(snd_max, true);
            return true;
        }
        false
    }

    /// The retransmission timer expired (go-back-N from `snd_una`): recovery
    /// ends, and duplicates of data sent before `snd_max` start none.
    #[inline]
    pub fn on_timeout(&mut self, snd_max: u64) {
        self.in_recovery = false;
        self.retx = false;
        self.recover = snd_max;
        self.dupacks = 0;
    }

    /// A retransmission of the first unacknowledged segment is due.
    #[inline]
    pub fn retx_due(&self, stream: &SendStream) -> bool {
        self.retx && stream.has_unacked()
    }

    /// The next segment: the due retransmission ([`Self::retx_due`]), else new
    /// data (or go-back-N data) at `snd_nxt`.
    #[inline]
    pub fn next_segment(&mut self, stream: &mut SendStream, mss: u32) -> Segment {
        if self.retx_due(stream) {
            self.retx = false;
            stream.first_unacked(mss)
        } else {
            stream.take_next(mss)
        }
    }
}

/// Eifel detection (RFC 3522) on the first advancing ACK after a timeout at
/// `timeout_at`: the ACK echoes the send time `echo` of the data that caused
/// it; if that data left before the timeout, the timeout was spurious. The
/// response (RFC 4015): resume after `snd_max` and adapt the RTO to the delay.
/// Returns whether it was spurious (the caller undoes its window reduction).
#[inline]
pub fn undo_spurious_timeout(
    now: Time,
    timeout_at: Time,
    echo: Time,
    stream: &mut SendStream,
    rto: &mut RtoEstimator,
) -> bool {
    if echo >= timeout_at {
        return false;
    }
    rto.adapt_to_spurious(now.saturating_sub(echo));
    stream.resume_at_max();
    true
}

/// A message being received: its stream range and which segments arrived.
#[derive(Clone, Debug)]
struct InMsg {
    id: MsgId,
    start: u64,
    reasm: Reassembly,
}

/// The receiver side of one connection's byte stream. Out-of-order segments
/// are kept, so retransmissions only fill holes; a message completes when all
/// its bytes arrived, whatever the state of the stream before it.
#[derive(Clone, Debug, Default)]
pub struct RecvStream {
    /// Cumulative ACK: every stream byte below it arrived.
    rcv_nxt: u64,
    /// Messages overlapping `rcv_nxt..` that have data, by stream start.
    msgs: VecDeque<InMsg>,
}

impl RecvStream {
    /// Records the segment at stream byte `seq` of message `msg` (stream bytes
    /// `msg_start..msg_start + msg_size`), reports new bytes and completion to the
    /// application, and returns the cumulative ACK.
    pub fn receive(&mut self, cx: &mut Cx, seq: u64, msg: MsgId, msg_start: u64, msg_size: u64, mss: u32) -> u64 {
        let mss = mss as u64;
        let len = (msg_start + msg_size - seq).min(mss);
        if seq + len <= self.rcv_nxt {
            return self.rcv_nxt; // a duplicate of acknowledged data
        }
        // Find the message (usually the last one) or insert it in stream order.
        let i = match self.msgs.iter().rposition(|m| m.start <= msg_start) {
            Some(i) if self.msgs[i].start == msg_start => i,
            pos => {
                let i = pos.map_or(0, |p| p + 1);
                let reasm = Reassembly::new(msg_size, mss as u32);
                self.msgs.insert(i, InMsg { id: msg, start: msg_start, reasm });
                i
            }
        };
        let m = &mut self.msgs[i];
        if m.reasm.insert((seq - msg_start) / mss, len as u32) {
            cx.deliver(msg, len as u32);
            if m.reasm.is_complete() {
                cx.complete(m.id);
            }
        }
        // Advance the cumulative ACK over everything now contiguous.
        while let Some(m) = self.msgs.front() {
            if m.start > self.rcv_nxt {
                break; // a message we have seen nothing of yet
            }
            match m.reasm.first_missing((self.rcv_nxt - m.start) / mss) {
                Some(k) => {
                    self.rcv_nxt = m.start + k * mss;
                    break;
                }
                None => {
                    self.rcv_nxt = m.start + m.reasm.size();
                    self.msgs.pop_front();
                }
            }
        }
        self.rcv_nxt
    }

    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Messages with data at or beyond `rcv_nxt`, kept until the stream before them arrives.
    pub fn messages(&self) -> usize {
        self.msgs.len()
    }
}

/// RFC 6298 retransmission-timeout estimator (alpha = 1/8, beta = 1/4), with
/// exponential backoff and a floor.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    pub srtt: Time,
    pub rttvar: Time,
    pub rto: Time,
    min_rto: Time,
    max_rto: Time,
}

impl RtoEstimator {
    /// Seeded with a first sample `r` (RFC 6298 (2.2)): the handshake we do not
    /// simulate would have measured the unloaded RTT.
    pub fn new(r: Time, min_rto: Time) -> Self {
        let mut e = RtoEstimator { srtt: r, rttvar: r / 2, rto: 0, min_rto, max_rto: MAX_RTO };
        e.update();
        e
    }

    /// A timeout that no sample moves: `rto` always (SMaRTT's authors' htsim
    /// fixes it at a multiple of the base RTT).
    pub fn fixed(rto: Time) -> Self {
        RtoEstimator { srtt: rto, rttvar: 0, rto, min_rto: rto, max_rto: rto }
    }

    fn update(&mut self) {
        self.rto = (self.srtt + 4 * self.rttvar).clamp(self.min_rto, self.max_rto);
    }

    /// RFC 6298 (2.3).
    pub fn sample(&mut self, r: Time) {
        let err = self.srtt.abs_diff(r);
        self.rttvar = (3 * self.rttvar + err) / 4;
        self.srtt = (7 * self.srtt + r) / 8;
        self.update();
    }

    /// RFC 6298 (5.5): the timer expired.
    pub fn backoff(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto);
    }

    /// After a spurious timeout (RFC 4015 §3): the RTO no shorter than the delay `r` that caused it.
    pub fn adapt_to_spurious(&mut self, r: Time) {
        self.srtt = self.srtt.max(r);
        self.rttvar = self.rttvar.max(r / 2);
        self.update();
    }
}

/// Generation bits in a retransmission timer's token.
pub const TIMER_GEN_BITS: u32 = 30;
const GEN_MASK: u32 = (1 << TIMER_GEN_BITS) - 1;
/// Tx slot bits in a connection's timer token.
const TOKEN_SLOT_MASK: u64 = (1 << 23) - 1;
/// Connection bits in a connection's timer token (pools of at most 1024).
const TOKEN_CONN_MASK: u64 = (1 << 10) - 1;

/// Timer token of connection `conn` to tx slot `slot`, generation `gen`: slot
/// in bits 40..63, connection in 30..40, generation in 0..30. Bit 63 is free
/// for the transport to tell a second kind of timer.
#[inline]
pub fn conn_timer_token(slot: u32, conn: u16, gen: u32) -> u64 {
    debug_assert!(conn as u64 <= TOKEN_CONN_MASK, "pools are validated to at most 1024 connections");
    (slot as u64 & TOKEN_SLOT_MASK) << 40 | (conn as u64) << TIMER_GEN_BITS | (gen & GEN_MASK) as u64
}

/// The (slot, connection, generation) of a [`conn_timer_token`] (bit 63 ignored).
#[inline]
pub fn split_conn_timer_token(token: u64) -> (u32, u16, u32) {
    let slot = ((token >> 40) & TOKEN_SLOT_MASK) as u32;
    let conn = ((token >> TIMER_GEN_BITS) & TOKEN_CONN_MASK) as u16;
    (slot, conn, (token as u32) & GEN_MASK)
}

/// A retransmission timer over [`Cx::set_timer`], whose events cannot be
/// cancelled: restarting it later than a pending event leaves that event, which
/// re-arms itself when it fires early; restarting it earlier supersedes it (a
/// new generation), so at most one event per deadline change that moves it
/// earlier is scheduled.
#[derive(Clone, Debug, Default)]
pub struct RetransmitTimer {
    /// When the timer expires (None: stopped).
    deadline: Option<Time>,
    /// The pending event that is still valid.
    pending: Option<Time>,
    gen: u32,
}

impl RetransmitTimer {
    #[inline]
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    #[inline]
    pub fn is_running(&self) -> bool {
        self.deadline.is_some()
    }

    /// (Re)starts the timer to expire at `deadline`; `token(gen)` builds the
    /// timer token for generation `gen` (< 2^[`TIMER_GEN_BITS`]).
    pub fn start(&mut self, cx: &mut Cx, deadline: Time, token: impl FnOnce(u32) -> u64) {
        self.deadline = Some(deadline);
        if self.pending.is_none_or(|t| t > deadline) {
            self.gen = (self.gen + 1) & GEN_MASK;
            self.pending = Some(deadline);
            cx.set_timer(deadline, token(self.gen));
        }
    }

    pub fn stop(&mut self) {
        self.deadline = None;
    }

    /// Data is being sent: starts the timer to expire `rto` from now unless it
    /// is running (RFC 6298 (5.1)).
    #[inline]
    pub fn start_if_stopped(&mut self, cx: &mut Cx, rto: Time, token: impl FnOnce(u32) -> u64) {
        if !self.is_running() {
            self.start(cx, cx.now + rto, token);
        }
    }

    /// An ACK acknowledged new data: restarts the timer for `rto` while data is
    /// `unacked`, else stops it (RFC 6298 (5.2)/(5.3)).
    #[inline]
    pub fn on_advance(&mut self, cx: &mut Cx, unacked: bool, rto: Time, token: impl FnOnce(u32) -> u64) {
        if unacked {
            self.start(cx, cx.now + rto, token);
        } else {
            self.stop();
        }
    }

    /// The event of generation `gen` fired: true if the timer expired (the
    /// caller reacts and restarts it); false if the event was stale or early
    /// (then it is re-armed for the deadline).
    pub fn fire(&mut self, cx: &mut Cx, gen: u32, token: impl FnOnce(u32) -> u64) -> bool {
        if gen != self.gen || self.pending.is_none() {
            return false; // superseded
        }
        self.pending = None;
        let Some(deadline) = self.deadline else {
            return false;
        };
        if cx.now < deadline {
            self.start(cx, deadline, token);
            return false;
        }
        true
    }
}

/// Test harnesses for the transports built on this module, and the checks that
/// DCTCP and Swift share: both run this module's byte streams, NewReno and RTO,
/// so a loss must be repaired the same way in each (STYLE §8, §12).
#[cfg(test)]
pub(crate) mod testing {
    use crate::net::wire::data_wire;
    use crate::net::Packet;
    use crate::transport::{AppEvent, Cx, Message, MsgId, Transport};
    use fabriclab_engine::{serialization_time, stream, EventQueue, SimRng, Stream, Time, US};

    /// One transport (host 0) driven by hand: the test sets `now`, calls in
    /// through `with`, and reads the timers and application events it left.
    pub struct Direct<T> {
        pub t: T,
        pub rng: SimRng,
        pub timers: Vec<(Time, u64)>,
        pub app: Vec<AppEvent>,
        pub now: Time,
    }

    impl<T: Transport> Direct<T> {
        pub fn driving(t: T) -> Self {
            Direct { t, rng: stream(1, Stream::Host, 0), timers: Vec::new(), app: Vec::new(), now: 0 }
        }
        pub fn with<R>(&mut self, f: impl FnOnce(&mut T, &mut Cx) -> R) -> R {
            let mut cx = Cx::new(self.now, &mut self.rng, &mut self.timers, &mut self.app);
            f(&mut self.t, &mut cx)
        }
        /// The application of host 0 sends `size` bytes to `dst` now.
        pub fn start(&mut self, id: MsgId, dst: u32, size: u64) {
            let m = Message { id, src: 0, dst, size, start: self.now };
            self.with(|t, cx| t.start_message(cx, &m));
        }
        /// The next packet, stamped with its send time as the NIC would (Swift reads it).
        pub fn poll(&mut self) -> Option<Packet<T::Header>> {
            let now = self.now;
            self.with(|t, cx| t.poll_transmit(cx)).map(|mut p| {
                p.tx_time = now;
                p
            })
        }
        pub fn drain(&mut self) -> Vec<Packet<T::Header>> {
            std::iter::from_fn(|| self.poll()).collect()
        }
        pub fn fire(&mut self, at: Time, token: u64) {
            self.now = at;
            self.with(|t, cx| t.on_timer(cx, token));
        }
    }

    /// The shared pipe's link: 100 Gbps, 2 us each way, 1460-byte segments.
    pub const RATE: u64 = 100_000_000_000;
    pub const DELAY: Time = 2 * US;
    pub const MSS: u64 = 1460;

    /// `n` hosts on the pipe; `host(id, n, base_rtt)` builds one with the pipe's
    /// base RTT (a full data frame and an ACK serialised, plus the delay both ways).
    pub fn tcp_pipe<T: Transport>(n: u32, host: impl Fn(u32, u32, Time) -> T) -> Pipe<T> {
        let rtt = 2 * DELAY + serialization_time(1538, RATE) + serialization_time(84, RATE);
        Pipe::new((0..n).map(|h| host(h, n, rtt)).collect(), RATE, DELAY)
    }

    /// The sequence number of a data segment; `None` for anything else.
    pub type DataSeq<H> = fn(&H) -> Option<u64>;

    /// How many times the data segment at `seq` was sent.
    pub fn data_sent<T: Transport>(net: &Pipe<T>, data_seq: DataSeq<T::Header>, seq: u64) -> usize {
        net.sent.iter().filter(|p| data_seq(&p.hdr) == Some(seq)).count()
    }

    #[derive(Clone, Copy)]
    pub enum Ev<H> {
        Arrive(Packet<H>),
        TxDone(u32),
        Timer(u32, u64),
    }

    /// Sees every packet leaving a NIC (stamped); false drops it. May edit it.
    pub type Filter<H> = Box<dyn FnMut(&mut Packet<H>) -> bool>;

    /// Hosts joined by one lossy pipe: NIC serialisation at `rate`, then `delay`.
    pub struct Pipe<T: Transport> {
        /// Indices into `events` (the queue stores 8-byte events).
        pub q: EventQueue<u64>,
        events: Vec<Ev<T::Header>>,
        pub hosts: Vec<T>,
        rng: Vec<SimRng>,
        busy: Vec<bool>,
        timers: Vec<(Time, u64)>,
        app: Vec<AppEvent>,
        pub rate: u64,
        pub delay: Time,
        pub filter: Filter<T::Header>,
        /// Every packet the NICs sent, as sent.
        pub sent: Vec<Packet<T::Header>>,
        pub delivered: u64,
        pub completed: Vec<(MsgId, Time)>,
        next_id: MsgId,
    }

    impl<T: Transport> Pipe<T> {
        pub fn new(hosts: Vec<T>, rate: u64, delay: Time) -> Self {
            let n = hosts.len();
            Pipe {
                q: EventQueue::new(),
                events: Vec::new(),
                hosts,
                rng: (0..n).map(|h| stream(3, Stream::Host, h as u64)).collect(),
                busy: vec![false; n],
                timers: Vec::new(),
                app: Vec::new(),
                rate,
                delay,
                filter: Box::new(|_| true),
                sent: Vec::new(),
                delivered: 0,
                completed: Vec::new(),
                next_id: 0,
            }
        }

        fn schedule(&mut self, at: Time, ev: Ev<T::Header>) {
            self.q.schedule(at, self.events.len() as u64);
            self.events.push(ev);
        }

        fn call(&mut self, h: u32, f: impl FnOnce(&mut T, &mut Cx)) {
            let now = self.q.now();
            let mut cx = Cx::new(now, &mut self.rng[h as usize], &mut self.timers, &mut self.app);
            f(&mut self.hosts[h as usize], &mut cx);
            for (at, token) in std::mem::take(&mut self.timers) {
                self.schedule(at, Ev::Timer(h, token));
            }
            for e in self.app.drain(..) {
                match e {
                    AppEvent::Delivered { bytes, .. } => self.delivered += bytes as u64,
                    AppEvent::Completed { msg } => self.completed.push((msg, now)),
                }
            }
            self.pull(h);
        }

        fn pull(&mut self, h: u32) {
            if self.busy[h as usize] {
                return;
            }
            let now = self.q.now();
            let mut cx = Cx::new(now, &mut self.rng[h as usize], &mut self.timers, &mut self.app);
            let pkt = self.hosts[h as usize].poll_transmit(&mut cx);
            for (at, token) in std::mem::take(&mut self.timers) {
                self.schedule(at, Ev::Timer(h, token));
            }
            let Some(mut p) = pkt else { return };
            p.tx_time = now;
            self.busy[h as usize] = true;
            let done = now + serialization_time(p.wire_bytes as u64, self.rate);
            self.schedule(done, Ev::TxDone(h));
            self.sent.push(p);
            if (self.filter)(&mut p) {
                self.schedule(done + self.delay, Ev::Arrive(p));
            }
        }

        /// The application of `src` sends `size` bytes to `dst` now.
        pub fn start(&mut self, src: u32, dst: u32, size: u64) -> MsgId {
            let id = self.next_id;
            self.next_id += 1;
            let m = Message { id, src, dst, size, start: self.q.now() };
            self.call(src, |t, cx| t.start_message(cx, &m));
            id
        }

        /// Runs until nothing is left to do or the clock passes `until`.
        pub fn run_until(&mut self, until: Time) {
            while self.q.peek_time().is_some_and(|t| t <= until) {
                let (_, i) = self.q.pop().unwrap();
                match self.events[i as usize] {
                    Ev::Arrive(p) => self.call(p.dst, |t, cx| t.on_packet(cx, &p)),
                    Ev::TxDone(h) => {
                        self.busy[h as usize] = false;
                        self.pull(h);
                    }
                    Ev::Timer(h, token) => self.call(h, |t, cx| t.on_timer(cx, token)),
                }
            }
        }

        pub fn run(&mut self) {
            self.run_until(Time::MAX);
        }
    }

    /// The loss checks a TCP-like transport on this module must pass, given its
    /// hosts on the pipe (`pipe(n)`, from `tcp_pipe`) and how to read a data
    /// segment's sequence number.
    pub struct LossChecks<T: Transport> {
        pub pipe: fn(u32) -> Pipe<T>,
        pub data_seq: DataSeq<T::Header>,
    }

    impl<T: Transport> LossChecks<T>
    where
        T::Header: 'static,
    {
        /// Alone on the pipe, a message of any size completes in its ideal time:
        /// serialisation of every frame plus one delay, one ACK per segment.
        pub fn lone_message_runs_at_line_rate(&self) {
            for size in [1u64, 1459, 1460, 1461, 100_000, 300_000, 1_000_000] {
                let mut net = (self.pipe)(2);
                net.start(0, 1, size);
                net.run();
                let n = size.div_ceil(MSS);
                let last = size - (n - 1) * MSS;
                let ideal = (n - 1) * serialization_time(1538, RATE)
                    + serialization_time(data_wire(last as u32) as u64, RATE)
                    + DELAY;
                assert_eq!(net.completed, vec![(0, ideal)], "size {size}");
                assert_eq!(net.delivered, size);
                assert_eq!(net.sent.len() as u64, 2 * n, "one ACK per data packet, no retransmission");
            }
        }

        /// Sends `segments` full segments from host 0 to host 1 and drops the first
        /// send of segment `lost`, once; checks that all arrives and that the lost
        /// segment went out twice. Returns the pipe for the caller's checks.
        fn lose_one(&self, lost: u64, segments: u64) -> Pipe<T> {
            let (mut net, data_seq) = ((self.pipe)(2), self.data_seq);
            let mut dropped = false;
            net.filter = Box::new(move |p| {
                let hit = !dropped && data_seq(&p.hdr) == Some(lost * MSS);
                dropped |= hit;
                !hit
            });
            net.start(0, 1, segments * MSS);
            net.run();
            assert_eq!(net.delivered, segments * MSS);
            assert_eq!(net.completed.len(), 1);
            assert_eq!(data_sent(&net, data_seq, lost * MSS), 2);
            net
        }

        /// One lost segment mid-flow: three duplicate ACKs resend it, well before the RTO.
        pub fn single_loss_is_repaired_by_fast_retransmit(&self) {
            let net = self.lose_one(10, 200);
            assert!(net.completed[0].1 < 100 * US, "repaired without waiting for the RTO");
            assert_eq!(data_sent(&net, self.data_seq, 11 * MSS), 1, "out-of-order data was kept");
        }

        /// The last segment lost: no duplicate ACKs follow, so the 200 us RTO repairs it.
        pub fn tail_loss_is_repaired_by_the_rto(&self) {
            let net = self.lose_one(19, 20);
            let t = net.completed[0].1;
            assert!(t > 200 * US && t < 210 * US, "completed at {t} ps");
            assert_eq!(data_sent(&net, self.data_seq, 0), 1);
        }

        /// 10% of all packets (data and ACKs) lost at random: every message still completes.
        pub fn heavy_random_loss_still_delivers_everything(&self) {
            use rand::Rng;
            let mut net = (self.pipe)(3);
            let mut rng = stream(9, Stream::Host, 99);
            net.filter = Box::new(move |_| rng.gen::<f64>() > 0.1);
            let mut total = 0;
            for (src, dst, size) in [(0, 1, 500_000), (2, 1, 3), (0, 2, 70_000), (1, 0, 1_000_000), (0, 1, 1460)] {
                net.start(src, dst, size);
                total += size;
            }
            net.run();
            assert_eq!(net.delivered, total);
            let mut ids: Vec<MsgId> = net.completed.iter().map(|c| c.0).collect();
            ids.sort();
            assert_eq!(ids, vec![0, 1, 2, 3, 4]);
        }
    }

    /// The `LossChecks` as `#[test]`s in the calling module, one per check,
    /// under the names each transport had for them; `$pipe` is a
    /// `fn(u32) -> Pipe<$t>` and `$data_seq` a `DataSeq`.
    macro_rules! loss_tests {
        ($t:ty, $pipe:expr, $data_seq:expr) => {
            $crate::transport::toolkit_tcp::testing::loss_tests!(@each $t, $pipe, $data_seq;
                lone_message_runs_at_line_rate,
                single_loss_is_repaired_by_fast_retransmit,
                tail_loss_is_repaired_by_the_rto,
                heavy_random_loss_still_delivers_everything);
        };
        (@each $t:ty, $pipe:expr, $data_seq:expr; $($check:ident),*) => {
            $(
                #[test]
                fn $check() {
                    let checks: $crate::transport::toolkit_tcp::testing::LossChecks<$t> =
                        $crate::transport::toolkit_tcp::testing::LossChecks { pipe: $pipe, data_seq: $data_seq };
                    checks.$check();
                }
            )*
        };
    }
    pub(crate) use loss_tests;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::AppEvent;
    use fabriclab_engine::{stream, Stream, US};

    #[test]
    fn pool_rule() {
        assert_eq!(pick_connection([], 3), 0);
        assert_eq!(pick_connection([5, 0, 0], 3), 1, "lowest idle");
        assert_eq!(pick_connection([5, 7], 3), 2, "open a new one while the pool is not full");
        assert_eq!(pick_connection([5, 3, 3], 3), 1, "fewest outstanding, ties to the lowest index");
        assert_eq!(pick_connection([9], 1), 0);
    }

    #[test]
    fn peers_use_hints_and_dense_slots() {
        let mut p: Peers<u32> = Peers::default();
        assert_eq!(p.slot(40, || 1), 0);
        assert_eq!(p.slot(7, || 2), 1);
        assert_eq!(p.slot(40, || 3), 0);
        assert_eq!(p.slot_hinted(1, 7, || 4), 1);
        assert_eq!(p.slot_hinted(1, 40, || 4), 0, "a wrong hint falls back to the lookup");
        assert_eq!(p.slot_hinted(NO_SLOT, 9, || 5), 2);
        assert_eq!((p[0], p[1], p[2], p.host(2), p.len()), (1, 2, 5, 9, 3));
    }

    #[test]
    fn send_stream_segments_acks_and_goes_back() {
        let mut s = SendStream::default();
        s.push(1, 1461);
        s.push(2, 100);
        let segs: Vec<(u64, u32, MsgId)> = std::iter::from_fn(|| s.has_unsent().then(|| s.take_next(1460)))
            .map(|g| (g.seq, g.len, g.msg.id))
            .collect();
        assert_eq!(segs, vec![(0, 1460, 1), (1460, 1, 1), (1461, 100, 2)]);
        assert_eq!((s.flight(), s.outstanding()), (1561, 1561));
        assert_eq!(s.ack(1460), 1460);
        assert_eq!(s.ack(1460), 0);
        assert_eq!(s.first_unacked(1460).seq, 1460);
        s.go_back_n();
        let g = s.take_next(1460);
        assert!(g.retransmission);
        assert_eq!((g.seq, g.len), (1460, 1));
        // The receiver had the rest: the ACK jumps past snd_nxt.
        assert_eq!(s.ack(1561), 101);
        assert_eq!((s.outstanding(), s.messages(), s.has_unsent()), (0, 0, false));
        s.push(3, 10);
        assert_eq!(s.take_next(1460).seq, 1561);
        s.go_back_n();
        s.resume_at_max();
        assert!(!s.has_unsent());
    }

    #[test]
    fn new_reno_recovery() {
        let mut r = NewReno::default();
        assert!(!r.on_dupack(0, 5000) && !r.on_dupack(0, 5000));
        assert!(r.on_dupack(0, 5000), "third duplicate: fast retransmit");
        assert!(r.in_recovery && r.retx && r.recover == 5000);
        assert!(!r.on_dupack(0, 5000), "no second fast retransmit in recovery");
        let mut s = SendStream::default();
        s.push(1, 3000);
        s.take_next(1460);
        assert_eq!(r.next_segment(&mut s, 1460).seq, 0, "the retransmission first");
        assert_eq!(r.next_segment(&mut s, 1460).seq, 1460);
        assert_eq!(r.on_advance(1460, true), Recovery::Partial);
        assert!(r.retx && r.dupacks == 0);
        r.retx = false;
        assert_eq!(r.on_advance(2000, false), Recovery::Partial);
        assert!(!r.retx, "holes known otherwise: nothing resent");
        assert_eq!(r.on_advance(5000, true), Recovery::Ended);
        assert_eq!(r.on_advance(6000, true), Recovery::Outside);
        r.on_timeout(9000);
        for _ in 0..3 {
            assert!(!r.on_dupack(9000, 9000), "duplicates of data sent before the timeout");
        }
    }

    #[test]
    fn conn_timer_tokens_round_trip() {
        let t = conn_timer_token(5_000_000, 1023, (1 << TIMER_GEN_BITS) - 1);
        assert_eq!(split_conn_timer_token(t), (5_000_000, 1023, (1 << TIMER_GEN_BITS) - 1));
        assert_eq!(split_conn_timer_token(t | 1 << 63), split_conn_timer_token(t), "bit 63 is the caller's");
        assert_eq!((conn_flow(3, 40, 2), conn_flow(0, 40, 7)), (122, 7));
    }

    #[test]
    fn recv_stream_reassembles_out_of_order() {
        let mut rng = stream(1, Stream::Host, 0);
        let (mut timers, mut app) = (Vec::new(), Vec::new());
        let mut cx = Cx::new(0, &mut rng, &mut timers, &mut app);
        let mut r = RecvStream::default();
        // Message 9 = stream bytes 1000..3920; bytes 0..1000 (message 8) never arrive first.
        assert_eq!(r.receive(&mut cx, 1000 + 1460, 9, 1000, 2920, 1460), 0);
        assert_eq!(r.receive(&mut cx, 1000 + 1460, 9, 1000, 2920, 1460), 0);
        assert_eq!(r.receive(&mut cx, 1000, 9, 1000, 2920, 1460), 0);
        assert_eq!(r.receive(&mut cx, 0, 8, 0, 1000, 1460), 3920);
        assert_eq!(r.receive(&mut cx, 0, 8, 0, 1000, 1460), 3920);
        let delivered: u32 =
            app.iter().map(|e| if let AppEvent::Delivered { bytes, .. } = e { *bytes } else { 0 }).sum();
        assert_eq!(delivered, 3920);
        let done: Vec<_> =
            app.iter().filter_map(|e| if let AppEvent::Completed { msg } = e { Some(*msg) } else { None }).collect();
        assert_eq!(done, vec![9, 8]);
    }

    #[test]
    fn rto_estimator_and_timer() {
        let mut e = RtoEstimator::new(8 * US, 200 * US);
        assert_eq!(e.rto, 200 * US);
        e.backoff();
        assert_eq!(e.rto, 400 * US);
        e.adapt_to_spurious(1000 * US);
        assert_eq!(e.rto, 1000 * US + 4 * 500 * US);
        // A fixed RTO: no sample, backoff or spurious timeout moves it.
        let mut f = RtoEstimator::fixed(30 * US);
        f.sample(100 * US);
        f.sample(US);
        f.backoff();
        f.adapt_to_spurious(1000 * US);
        assert_eq!(f.rto, 30 * US);

        let mut rng = stream(1, Stream::Host, 0);
        let (mut timers, mut app) = (Vec::new(), Vec::new());
        let mut t = RetransmitTimer::default();
        let tok = |g: u32| g as u64;
        {
            let mut cx = Cx::new(0, &mut rng, &mut timers, &mut app);
            t.start(&mut cx, 10, tok);
            t.start(&mut cx, 20, tok); // later: no new event
        }
        assert_eq!(timers, vec![(10, 1)]);
        {
            let mut cx = Cx::new(10, &mut rng, &mut timers, &mut app);
            assert!(!t.fire(&mut cx, 1, tok), "early: re-armed");
        }
        assert_eq!(timers[1], (20, 2));
        {
            let mut cx = Cx::new(20, &mut rng, &mut timers, &mut app);
            assert!(!t.fire(&mut cx, 1, tok), "stale generation");
            assert!(t.fire(&mut cx, 2, tok));
        }
    }
}
