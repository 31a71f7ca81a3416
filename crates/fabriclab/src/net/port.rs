//! An output-queued port: strict-priority FIFO classes sharing one byte budget,
//! drop-tail at the limit, ECN CE marking above a threshold, and optionally a
//! shaped credit queue (ExpressPass).

use super::control::ControlQueue;
use super::fifo::Fifos;
use super::level::PortLevel;
use fabriclab_engine::{serialization_time, Time};
use std::collections::VecDeque;

/// Laid out so that one cache line holds everything the enqueue, dequeue and
/// transmission of a packet touch (at 1,024 hosts each hop's port is a cache
/// miss); what only some fabrics or some packets need follows in a second line.
#[repr(C, align(64))]
pub struct Port {
    /// Bytes held: queued plus the packet being serialised.
    pub bytes: u64,
    pub limit_bytes: u64,
    pub ecn_threshold: u64,
    /// Propagation delay, plus the peer switch's forwarding latency when the peer is a switch.
    pub delay: Time,
    /// Node that owns this port.
    pub node: u32,
    /// Node at the other end of the link.
    pub peer: u32,
    /// Wire bytes of the packet being serialised.
    pub in_service: u32,
    /// Class c's FIFO is queue `fifo + c` of the fabric's [`Fifos`].
    fifo: u32,
    /// Bit c set: class c has packets (strict priority picks the lowest set bit).
    nonempty: u32,
    /// Picoseconds per byte when the rate divides 8 x 10^12 (every usual
    /// rate: 80 at 100 Gbps), so that a serialisation time is one exact
    /// multiplication; 0 otherwise (then it is a division by `rate_bps`).
    ps_per_byte: u32,
    pub busy: bool,
    /// Busy with no transmission-end event scheduled: the simulator folds
    /// that event away while nothing waits behind the packet (see
    /// `Sim::start_tx`); the packet's end is then kept outside the port.
    pub folded: bool,
    classes: u8,
    /// Classes paused by PFC (bit c = class c): their packets wait.
    pub paused: u8,
    /// A credit shaper or a control class is installed: `pick` takes the slow path.
    shaped: bool,
    // Second cache line.
    pub drops: u64,
    rate_bps: u64,
    /// Occupancy over the measurement window (switch ports).
    pub occupancy: PortLevel,
    /// Credit shaping, when the network has it on (boxed: rarely used).
    shaper: Option<Box<CreditShaper>>,
    /// The rate-limited control class, when the network has one (never with
    /// `shaper`; boxed for the same reason).
    control: Option<Box<ControlQueue>>,
}

/// 8 x 10^12 / `rate_bps` if that is a whole number that fits 32 bits, else 0.
fn ps_per_byte(rate_bps: u64) -> u32 {
    let bits_ps = 8 * fabriclab_engine::S;
    if rate_bps != 0 && bits_ps.is_multiple_of(rate_bps) {
        u32::try_from(bits_ps / rate_bps).unwrap_or(0)
    } else {
        0
    }
}

const _: () = assert!(std::mem::offset_of!(Port, shaped) < 64 && std::mem::size_of::<Port>() == 128);

/// ExpressPass's switch support (Cho et al., SIGCOMM'17 §3.1): credits wait in
/// a small queue of their own and leave at most one per `spacing`, the link
/// time of one credit plus the largest data frame it triggers, so the data
/// coming back on the reverse path can never exceed the link rate. Credits
/// beyond the queue's capacity are dropped; that loss is the protocol's signal.
#[derive(Clone, Debug)]
pub struct CreditShaper {
    queue: VecDeque<u32>,
    capacity: usize,
    spacing: Time,
    next_at: Time,
    /// A wake-up is scheduled for when the next credit becomes eligible.
    pub wake_pending: bool,
    pub drops: u64,
}

impl CreditShaper {
    pub fn new(capacity: usize, spacing: Time) -> Self {
        CreditShaper {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            spacing,
            next_at: 0,
            wake_pending: false,
            drops: 0,
        }
    }
}

/// What a port should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Send(u32),
    /// Only shaped credits are waiting; the first becomes eligible then.
    WaitUntil(Time),
    Idle,
}

/// What happened to a packet offered to a port by [`Port::offer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    Queued {
        mark_ce: bool,
    },
    /// The port is idle with nothing queued: it sends the packet now.
    SendNow {
        mark_ce: bool,
    },
    Dropped,
}

impl From<Enqueue> for Offer {
    fn from(e: Enqueue) -> Offer {
        match e {
            Enqueue::Queued { mark_ce } => Offer::Queued { mark_ce },
            Enqueue::Dropped => Offer::Dropped,
        }
    }
}

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    Queued { mark_ce: bool },
    Dropped,
}

impl Port {
    /// A port with `classes` priority classes (1 to 32), whose queues are
    /// added to `fifos`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        fifos: &mut Fifos,
        node: u32,
        peer: u32,
        rate_bps: u64,
        delay: Time,
        classes: u8,
        limit: u64,
        ecn: u64,
    ) -> Self {
        let classes = classes.clamp(1, 32);
        Port {
            bytes: 0,
            limit_bytes: limit,
            ecn_threshold: ecn,
            ps_per_byte: ps_per_byte(rate_bps),
            delay,
            node,
            peer,
            in_service: 0,
            fifo: fifos.add(classes as usize),
            nonempty: 0,
            busy: false,
            folded: false,
            classes,
            paused: 0,
            shaped: false,
            drops: 0,
            rate_bps,
            occupancy: PortLevel::default(),
            shaper: None,
            control: None,
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Changes the link rate (failure injection: a degraded link).
    pub fn set_rate_bps(&mut self, rate_bps: u64) {
        self.rate_bps = rate_bps;
        self.ps_per_byte = ps_per_byte(rate_bps);
    }

    /// Time to serialise `wire` bytes: the same value as
    /// [`serialization_time`], without its division at the usual rates.
    #[inline(always)]
    pub fn serialization_time(&self, wire: u32) -> Time {
        if self.ps_per_byte != 0 {
            wire as u64 * self.ps_per_byte as u64
        } else {
            serialization_time(wire as u64, self.rate_bps)
        }
    }

    /// Installs credit shaping (ExpressPass's switch support).
    pub fn set_shaper(&mut self, shaper: CreditShaper) {
        self.shaper = Some(Box::new(shaper));
        self.shaped = true;
    }

    /// Installs the rate-limited control class.
    pub fn set_control(&mut self, control: ControlQueue) {
        self.control = Some(Box::new(control));
        self.shaped = true;
    }

    pub fn shaper(&self) -> Option<&CreditShaper> {
        self.shaper.as_deref()
    }

    pub fn has_control(&self) -> bool {
        self.control.is_some()
    }

    /// Bytes waiting in the control class (0 without one): the level its ECN
    /// threshold is compared with, the packet being sent excluded.
    pub fn control_bytes(&self) -> u64 {
        self.control.as_ref().map_or(0, |c| c.queued_bytes())
    }

    /// The wake-up flag of the port's shaped queue (credits or control class).
    pub fn wake_flag(&mut self) -> Option<&mut bool> {
        match (&mut self.shaper, &mut self.control) {
            (Some(sh), _) => Some(&mut sh.wake_pending),
            (None, Some(c)) => Some(&mut c.wake_pending),
            _ => None,
        }
    }

    /// Admits a packet into the control class (the port must have one).
    pub fn enqueue_control(&mut self, pkt: u32, wire: u32) -> Enqueue {
        let v = self.control.as_mut().expect("control packet on a port without a control class").enqueue(pkt, wire);
        if v != Enqueue::Dropped {
            self.bytes += wire as u64;
        }
        v
    }

    /// Admits a credit into the shaped credit queue (the port must have a shaper).
    #[inline]
    pub fn enqueue_credit(&mut self, pkt: u32, wire: u32) -> Enqueue {
        let sh = self.shaper.as_mut().expect("credit queue on a port without shaping");
        if sh.queue.len() >= sh.capacity {
            sh.drops += 1;
            return Enqueue::Dropped;
        }
        sh.queue.push_back(pkt);
        self.bytes += wire as u64;
        Enqueue::Queued { mark_ce: false }
    }

    /// The next packet to serialise at `now`: an eligible credit first, then
    /// the head of the highest non-empty data class.
    #[inline(always)]
    pub fn pick(&mut self, fifos: &mut Fifos, now: Time) -> Pick {
        if !self.shaped {
            return self.dequeue(fifos).map_or(Pick::Idle, Pick::Send);
        }
        self.pick_shaped(fifos, now)
    }

    /// [`Port::pick`] for a port with a shaped credit queue or a control class.
    #[inline(never)]
    fn pick_shaped(&mut self, fifos: &mut Fifos, now: Time) -> Pick {
        if let Some(sh) = self.shaper.as_mut() {
            if !sh.queue.is_empty() && now >= sh.next_at {
                sh.next_at = now + sh.spacing;
                return Pick::Send(sh.queue.pop_front().expect("non-empty"));
            }
        }
        if let Some(p) = self.control.as_mut().and_then(|c| c.pop_eligible(now)) {
            return Pick::Send(p);
        }
        if let Some(p) = self.dequeue(fifos) {
            return Pick::Send(p);
        }
        match (&self.shaper, &self.control) {
            (Some(sh), _) if !sh.queue.is_empty() => Pick::WaitUntil(sh.next_at),
            (_, Some(c)) => c.next_eligible().map_or(Pick::Idle, Pick::WaitUntil),
            _ => Pick::Idle,
        }
    }

    /// Admits packet `pkt` of `wire` bytes into class `prio` (clamped to the
    /// lowest class), or drops it if the buffer would overflow.
    #[inline(always)]
    pub fn enqueue(&mut self, fifos: &mut Fifos, pkt: u32, wire: u32, prio: u8) -> Enqueue {
        let Some(mark_ce) = self.admit(wire) else {
            return Enqueue::Dropped;
        };
        self.push(fifos, pkt, wire, prio);
        Enqueue::Queued { mark_ce }
    }

    /// Drop-tail admission of `wire` more bytes: None (counted as a drop)
    /// or whether the packet is to be marked CE.
    #[inline(always)]
    fn admit(&mut self, wire: u32) -> Option<bool> {
        let after = self.bytes + wire as u64;
        if after > self.limit_bytes {
            self.drops += 1;
            return None;
        }
        Some(after > self.ecn_threshold)
    }

    /// [`Port::enqueue`] for a switch's ordinary path: a packet admitted by
    /// an idle port with nothing queued (and no shaping or pause) is not
    /// queued at all but sent at once, which is what queuing it and
    /// dequeuing it would do, without touching the class queues (at 1,024
    /// hosts their table entry was a cache miss on most hops).
    #[inline(always)]
    pub fn offer(&mut self, fifos: &mut Fifos, pkt: u32, wire: u32, prio: u8) -> Offer {
        if self.busy || self.nonempty != 0 || self.shaped || self.paused != 0 {
            return self.enqueue(fifos, pkt, wire, prio).into();
        }
        let Some(mark_ce) = self.admit(wire) else {
            return Offer::Dropped;
        };
        self.bytes += wire as u64;
        Offer::SendNow { mark_ce }
    }

    /// Queues a packet whose admission the caller has decided (switch features).
    #[inline(always)]
    pub fn push(&mut self, fifos: &mut Fifos, pkt: u32, wire: u32, prio: u8) {
        self.bytes += wire as u64;
        let c = prio.min(self.classes - 1);
        fifos.push(self.fifo + c as u32, pkt);
        self.nonempty |= 1 << c;
    }

    /// Next packet to serialise: head of the highest non-empty class not paused.
    #[inline(always)]
    pub fn dequeue(&mut self, fifos: &mut Fifos) -> Option<u32> {
        let ready = self.nonempty & !(self.paused as u32);
        if ready == 0 {
            return None;
        }
        let c = ready.trailing_zeros();
        let q = self.fifo + c;
        let p = fifos.pop(q);
        if fifos.is_empty(q) {
            self.nonempty &= !(1 << c);
        }
        p
    }

    /// Whether any class holds a packet (paused or not).
    #[inline(always)]
    pub fn has_queued(&self) -> bool {
        self.nonempty != 0
    }

    /// Whether the port shapes credits or has a control class.
    #[inline(always)]
    pub fn is_shaped(&self) -> bool {
        self.shaped
    }

    /// Number of priority classes.
    pub fn classes(&self) -> u8 {
        self.classes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_then_fifo() {
        let f = &mut Fifos::new();
        let mut other = Port::new(f, 1, 0, 1, 0, 3, u64::MAX, u64::MAX);
        let mut p = Port::new(f, 0, 1, 1, 0, 3, u64::MAX, u64::MAX);
        p.enqueue(f, 10, 100, 2);
        p.enqueue(f, 11, 100, 0);
        other.enqueue(f, 20, 100, 2);
        p.enqueue(f, 12, 100, 2);
        p.enqueue(f, 13, 100, 9); // clamped to class 2
        assert_eq!(p.bytes, 400);
        let order: Vec<_> = std::iter::from_fn(|| p.dequeue(f)).collect();
        assert_eq!(order, vec![11, 10, 12, 13]);
        assert_eq!(other.dequeue(f), Some(20));
    }

    #[test]
    fn shaped_credits_go_first_but_no_faster_than_their_spacing() {
        let f = &mut Fifos::new();
        let mut p = Port::new(f, 0, 1, 1, 0, 1, u64::MAX, u64::MAX);
        p.set_shaper(CreditShaper::new(2, 100));
        p.enqueue(f, 1, 1538, 0);
        assert_eq!(p.enqueue_credit(2, 84), Enqueue::Queued { mark_ce: false });
        assert_eq!(p.enqueue_credit(3, 84), Enqueue::Queued { mark_ce: false });
        assert_eq!(p.enqueue_credit(4, 84), Enqueue::Dropped);
        assert_eq!(p.pick(f, 0), Pick::Send(2));
        assert_eq!(p.pick(f, 10), Pick::Send(1)); // credit 3 not yet eligible: data goes
        assert_eq!(p.pick(f, 20), Pick::WaitUntil(100));
        assert_eq!(p.pick(f, 100), Pick::Send(3));
        assert_eq!(p.pick(f, 100), Pick::Idle);
        assert_eq!(p.shaper().unwrap().drops, 1);
    }

    #[test]
    fn an_idle_empty_port_sends_at_once_and_a_busy_one_queues() {
        let f = &mut Fifos::new();
        let mut p = Port::new(f, 0, 1, 1, 0, 2, 250, 150);
        assert_eq!(p.offer(f, 1, 100, 1), Offer::SendNow { mark_ce: false });
        assert_eq!((p.bytes, p.dequeue(f)), (100, None), "sent at once: never queued");
        p.busy = true;
        assert_eq!(p.offer(f, 2, 100, 1), Offer::Queued { mark_ce: true });
        p.busy = false;
        assert_eq!(p.offer(f, 3, 100, 0), Offer::Dropped, "over the limit");
        assert_eq!(p.offer(f, 4, 10, 0), Offer::Queued { mark_ce: true }, "packet 2 is still queued");
        assert_eq!((p.dequeue(f), p.dequeue(f), p.drops), (Some(4), Some(2), 1));
    }

    #[test]
    fn drop_tail_and_ecn() {
        let f = &mut Fifos::new();
        let mut p = Port::new(f, 0, 1, 1, 0, 1, 250, 150);
        assert_eq!(p.enqueue(f, 1, 100, 0), Enqueue::Queued { mark_ce: false });
        assert_eq!(p.enqueue(f, 2, 100, 0), Enqueue::Queued { mark_ce: true });
        assert_eq!(p.enqueue(f, 3, 100, 0), Enqueue::Dropped);
        assert_eq!((p.bytes, p.drops), (200, 1));
    }

    #[test]
    fn serialization_time_matches_the_division_at_every_rate() {
        let f = &mut Fifos::new();
        for rate in [1, 3, 10_000_000_000, 25_000_000_000, 100_000_000_000, 300_000_000_000, 800_000_000_000] {
            let mut p = Port::new(f, 0, 1, rate, 0, 1, u64::MAX, u64::MAX);
            for wire in [0, 1, 64, 84, 1538, 4096, 9000] {
                assert_eq!(p.serialization_time(wire), serialization_time(wire as u64, rate), "{rate} bps, {wire} B");
            }
            p.set_rate_bps(rate * 2);
            assert_eq!(p.serialization_time(1538), serialization_time(1538, rate * 2));
        }
        assert_eq!(ps_per_byte(100_000_000_000), 80);
        assert_eq!(ps_per_byte(300_000_000_000), 0);
    }
}
