//! Exact buffer occupancy accounting: for each port and each switch, the
//! maximum and the time integral of bytes held, from which the time-weighted
//! mean follows. Reset at the end of warm-up.

use crate::net::Port;
use fabriclab_engine::Time;

/// A switch's record: its total bytes and a [`PortLevel`] over them.
#[derive(Clone, Debug, Default)]
pub struct Level {
    pub bytes: u64,
    level: PortLevel,
}

impl Level {
    #[inline]
    fn set(&mut self, now: Time, bytes: u64) {
        self.level.set(now, self.bytes, bytes);
        self.bytes = bytes;
    }

    fn reset(&mut self, now: Time) {
        self.level.reset(now, self.bytes);
    }

    pub fn max(&self) -> u64 {
        self.level.max()
    }

    /// Time-weighted mean between `since` and `now`.
    pub fn mean(&self, since: Time, now: Time) -> f64 {
        self.level.mean(self.bytes, since, now)
    }
}

/// The maximum and time integral of a byte count kept elsewhere (a port's
/// bytes, a switch's total). A switch port's record lives in the port itself,
/// in its second cache line, next to the first that every hop touches (a
/// separate table of records was one more cache miss per hop at 1,024 hosts).
#[derive(Clone, Copy, Debug, Default)]
pub struct PortLevel {
    max: u64,
    /// The time integral of bytes held, as a u128 in two words (so that the
    /// record packs into 32 bytes).
    area: [u64; 2],
    last: Time,
}

impl PortLevel {
    /// The port went from `old` to `bytes` at `now`.
    #[inline(always)]
    pub fn set(&mut self, now: Time, old: u64, bytes: u64) {
        let area = self.area() + old as u128 * (now - self.last) as u128;
        self.area = [area as u64, (area >> 64) as u64];
        self.last = now;
        self.max = self.max.max(bytes);
    }

    fn area(&self) -> u128 {
        (self.area[1] as u128) << 64 | self.area[0] as u128
    }

    pub fn reset(&mut self, now: Time, bytes: u64) {
        self.area = [0, 0];
        self.last = now;
        self.max = bytes;
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// Time-weighted mean between `since` and `now` of a port now holding `bytes`.
    pub fn mean(&self, bytes: u64, since: Time, now: Time) -> f64 {
        if now <= since {
            return bytes as f64;
        }
        let area = self.area() + bytes as u128 * (now - self.last) as u128;
        area as f64 / (now - since) as f64
    }
}

/// The switches' records (the ports' are in the ports, [`PortLevel`]).
pub struct Occupancy {
    pub switches: Vec<Level>,
    /// Nodes below this are hosts, whose NICs are not tracked.
    n_hosts: u32,
    pub since: Time,
}

impl Occupancy {
    pub fn new(n_hosts: u32, n_switches: usize) -> Self {
        Occupancy { switches: vec![Level::default(); n_switches], n_hosts, since: 0 }
    }

    /// Port `port` now holds `port.bytes` (was `old`). Every change of a
    /// switch port's bytes comes through here, so the record's last level is
    /// always `old`.
    #[inline]
    pub fn update(&mut self, now: Time, port: &mut Port, old: u64) {
        let Some(sw) = port.node.checked_sub(self.n_hosts) else {
            return;
        };
        let bytes = port.bytes;
        port.occupancy.set(now, old, bytes);
        let s = &mut self.switches[sw as usize];
        let total = s.bytes - old + bytes;
        s.set(now, total);
    }

    /// The first switch whose record disagrees with the bytes its ports hold
    /// (a change of a port's bytes that bypassed [`Occupancy::update`]), as
    /// (switch index, recorded, held).
    pub fn mismatch(&self, ports: &[Port]) -> Option<(usize, u64, u64)> {
        let mut held = vec![0u64; self.switches.len()];
        for p in ports.iter().filter(|p| p.node >= self.n_hosts) {
            held[(p.node - self.n_hosts) as usize] += p.bytes;
        }
        self.switches.iter().zip(held).enumerate().find(|(_, (l, h))| l.bytes != *h).map(|(i, (l, h))| (i, l.bytes, h))
    }

    pub fn reset(&mut self, now: Time, ports: &mut [Port]) {
        self.since = now;
        ports.iter_mut().for_each(|p| p.occupancy.reset(now, p.bytes));
        self.switches.iter_mut().for_each(|l| l.reset(now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::fifo::Fifos;

    #[test]
    fn records_follow_the_ports_and_a_bypass_is_caught() {
        let mut fifos = Fifos::new();
        // Host 0 and switch 1 (one switch, two ports).
        let mut ports = vec![
            Port::new(&mut fifos, 1, 0, 100_000_000_000, 1000, 1, 1 << 20, 1 << 20),
            Port::new(&mut fifos, 1, 0, 100_000_000_000, 1000, 1, 1 << 20, 1 << 20),
        ];
        let mut occ = Occupancy::new(1, 1);
        for (i, t) in [(0usize, 10u64), (1, 20), (1, 30)] {
            let old = ports[i].bytes;
            ports[i].offer(&mut fifos, t as u32, 1000, 0);
            occ.update(t, &mut ports[i], old);
        }
        assert_eq!(occ.mismatch(&ports), None);
        assert_eq!((occ.switches[0].max(), ports[1].occupancy.max()), (3000, 2000));
        // Switch time integral: 1000 B over [10, 20), 2000 B over [20, 30), 3000 B to 40.
        assert_eq!(occ.switches[0].mean(10, 40), (10_000.0 + 20_000.0 + 30_000.0) / 30.0);
        ports[0].bytes -= 1000; // a change that bypasses `update`
        assert_eq!(occ.mismatch(&ports), Some((0, 3000, 2000)));
    }
}
