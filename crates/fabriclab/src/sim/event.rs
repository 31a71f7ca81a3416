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

/// Bits 0-3: the kind; bits 32-63: the packet, port, timer or link event;
/// bits 4-31: an arrival's node (topologies are validated to at most 2^20
/// hosts, so every node number fits in 28 bits), or a PFC frame's class
/// (bits 8-15) and pause flag (bit 4).
impl Packed for Ev {
    #[inline(always)]
    fn pack(self) -> u64 {
        let (kind, low, high) = match self {
            Ev::Arrive { node, pkt } => {
                debug_assert!(node < 1 << 28, "node {node} does not fit an event");
                (0, node << 4, pkt)
            }
            Ev::TxDone { port } => (1, 0, port),
            Ev::Timer { timer } => (2, 0, timer),
            Ev::Inject => (3, 0, 0),
            Ev::Warmup => (4, 0, 0),
            Ev::Midpoint => (5, 0, 0),
            Ev::PortWake { port } => (6, 0, port),
            Ev::Pfc { port, class, pause } => (7, (class as u32) << 8 | (pause as u32) << 4, port),
            Ev::Link { event } => (8, 0, event),
            Ev::Reroute => (9, 0, 0),
        };
        (high as u64) << 32 | (low | kind) as u64
    }

    #[inline(always)]
    fn unpack(bits: u64) -> Self {
        let (low, high) = (bits as u32, (bits >> 32) as u32);
        match low & 0xF {
            0 => Ev::Arrive { node: low >> 4, pkt: high },
            1 => Ev::TxDone { port: high },
            2 => Ev::Timer { timer: high },
            3 => Ev::Inject,
            4 => Ev::Warmup,
            5 => Ev::Midpoint,
            6 => Ev::PortWake { port: high },
            7 => Ev::Pfc { port: high, class: (low >> 8) as u8, pause: low & 0x10 != 0 },
            8 => Ev::Link { event: high },
            _ => Ev::Reroute,
        }
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
            assert_eq!(Ev::unpack(e.pack()), e);
        }
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
