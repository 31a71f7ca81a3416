//! The simulator's events, and how the event queue stores each in 8 bytes.

use fabriclab_engine::Packed;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ev {
    /// Packet `pkt` fully received by `node` (switches: plus forwarding latency).
    Arrive { node: u32, pkt: u32 },
    /// Port finished serialising its packet.
    TxDone { port: u32 },
    /// A transport timer: entry `timer` of the simulator's [`Timers`].
    Timer { timer: u32 },
    /// Inject the workload's next message.
    Inject,
    /// End of warm-up: reset the windowed metrics.
    Warmup,
    /// Middle of the measurement window (for the stability check).
    Midpoint,
    /// A port whose only waiting packets are shaped credits may send one now.
    PortWake { port: u32 },
    /// A PFC frame sent by `port` reached the other end of its link.
    Pfc { port: u32, class: u8, pause: bool },
    /// Failure injection: `[[network.events]]` entry `event` happens.
    Link { event: u32 },
    /// Routes are recomputed around the dead links.
    Reroute,
}

/// The kind of an event, numbered as in its packed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    Arrive,
    TxDone,
    Timer,
    Inject,
    Warmup,
    Midpoint,
    PortWake,
    Pfc,
    Link,
    Reroute,
}

/// Kind by number (the numbers above 9 never occur).
const KINDS: [Kind; 16] = {
    use Kind::*;
    [
        Arrive, TxDone, Timer, Inject, Warmup, Midpoint, PortWake, Pfc, Link, Reroute, Reroute, Reroute, Reroute,
        Reroute, Reroute, Reroute,
    ]
};

/// An event as the loop receives it: its kind and its two fields, unpacked
/// without a branch, so that the loop's `match` on the kind is the only
/// dispatch (unpacking into [`Ev`] took a second one, and each was
/// mispredicted about every other event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Popped {
    pub kind: Kind,
    /// The packet of an arrival; the port of a transmission end, a wake-up
    /// or a PFC frame; the timer; the link event.
    pub id: u32,
    /// The node of an arrival; a PFC frame's pause flag (bit 0) and class
    /// (bits 4-11).
    pub aux: u32,
}

impl Popped {
    /// The node an arrival reaches; `u32::MAX` for every other kind. Without
    /// a branch: the loop calls it to prefetch for the next event.
    #[inline(always)]
    pub(super) fn arrival_node(&self) -> u32 {
        let other = ((self.kind != Kind::Arrive) as u32).wrapping_neg(); // all ones unless an arrival
        self.aux | other
    }

    /// A PFC frame's (class, pause).
    pub(super) fn pfc(&self) -> (u8, bool) {
        ((self.aux >> 4) as u8, self.aux & 1 != 0)
    }
}

/// Bits 0-3: the kind; bits 32-63: `id`; bits 4-31: `aux` (every topology is
/// validated to at most 2^20 hosts and fewer switches, `net::topology::MAX_HOSTS`,
/// so every node number fits in 28 bits).
impl Packed for Ev {
    type Popped = Popped;

    #[inline(always)]
    fn pack(self) -> u64 {
        let (kind, aux, id) = match self {
            Ev::Arrive { node, pkt } => {
                debug_assert!(node < 1 << 28, "node {node} does not fit an event");
                (Kind::Arrive, node, pkt)
            }
            Ev::TxDone { port } => (Kind::TxDone, 0, port),
            Ev::Timer { timer } => (Kind::Timer, 0, timer),
            Ev::Inject => (Kind::Inject, 0, 0),
            Ev::Warmup => (Kind::Warmup, 0, 0),
            Ev::Midpoint => (Kind::Midpoint, 0, 0),
            Ev::PortWake { port } => (Kind::PortWake, 0, port),
            Ev::Pfc { port, class, pause } => (Kind::Pfc, (class as u32) << 4 | pause as u32, port),
            Ev::Link { event } => (Kind::Link, 0, event),
            Ev::Reroute => (Kind::Reroute, 0, 0),
        };
        (id as u64) << 32 | (aux << 4 | kind as u32) as u64
    }

    #[inline(always)]
    fn unpack(bits: u64) -> Popped {
        Popped { kind: KINDS[(bits & 0xF) as usize], id: (bits >> 32) as u32, aux: (bits as u32) >> 4 }
    }
}

/// The (host, token) of each pending timer event, in reused slots: a token is
/// 8 bytes by itself, too big to travel in the event.
#[derive(Default)]
pub(super) struct Timers {
    slots: Vec<(u32, u64)>,
    free: Vec<u32>,
}

impl Timers {
    pub(super) fn add(&mut self, host: u32, token: u64) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = (host, token);
                i
            }
            None => {
                self.slots.push((host, token));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The timer's (host, token); its slot is free again.
    pub(super) fn take(&mut self, timer: u32) -> (u32, u64) {
        self.free.push(timer);
        self.slots[timer as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the loop should receive for `e`.
    fn popped(e: Ev) -> Popped {
        let (kind, id, aux) = match e {
            Ev::Arrive { node, pkt } => (Kind::Arrive, pkt, node),
            Ev::TxDone { port } => (Kind::TxDone, port, 0),
            Ev::Timer { timer } => (Kind::Timer, timer, 0),
            Ev::Inject => (Kind::Inject, 0, 0),
            Ev::Warmup => (Kind::Warmup, 0, 0),
            Ev::Midpoint => (Kind::Midpoint, 0, 0),
            Ev::PortWake { port } => (Kind::PortWake, port, 0),
            Ev::Pfc { port, .. } => (Kind::Pfc, port, Ev::unpack(e.pack()).aux),
            Ev::Link { event } => (Kind::Link, event, 0),
            Ev::Reroute => (Kind::Reroute, 0, 0),
        };
        Popped { kind, id, aux }
    }

    #[test]
    fn every_event_survives_packing() {
        let events = [
            Ev::Arrive { node: (1 << 28) - 1, pkt: u32::MAX },
            Ev::Arrive { node: 0, pkt: 7 },
            Ev::TxDone { port: u32::MAX },
            Ev::Timer { timer: 12 },
            Ev::Inject,
            Ev::Warmup,
            Ev::Midpoint,
            Ev::PortWake { port: 3 },
            Ev::Pfc { port: 9, class: 7, pause: true },
            Ev::Pfc { port: u32::MAX, class: 255, pause: false },
            Ev::Link { event: 2 },
            Ev::Reroute,
        ];
        for e in events {
            assert_eq!(Ev::unpack(e.pack()), popped(e), "{e:?}");
        }
        assert_eq!(Ev::unpack(Ev::Pfc { port: 9, class: 7, pause: true }.pack()).pfc(), (7, true));
        assert_eq!(Ev::unpack(Ev::Pfc { port: 9, class: 255, pause: false }.pack()).pfc(), (255, false));
    }

    #[test]
    fn only_an_arrival_names_a_node() {
        assert_eq!(Ev::unpack(Ev::Arrive { node: 5, pkt: 9 }.pack()).arrival_node(), 5);
        assert_eq!(Ev::unpack(Ev::TxDone { port: 4 }.pack()).arrival_node(), u32::MAX);
        assert_eq!(Ev::unpack(Ev::Pfc { port: 4, class: 3, pause: true }.pack()).arrival_node(), u32::MAX);
    }

    #[test]
    fn timer_slots_are_reused() {
        let mut t = Timers::default();
        let a = t.add(1, u64::MAX);
        let b = t.add(2, 5);
        assert_eq!(t.take(a), (1, u64::MAX));
        assert_eq!(t.add(3, 6), a);
        assert_eq!((t.take(b), t.take(a)), ((2, 5), (3, 6)));
    }
}
