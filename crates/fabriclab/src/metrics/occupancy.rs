//! Exact buffer occupancy accounting: for each port and each switch, the
//! maximum and the time integral of bytes held, from which the time-weighted
//! mean follows. Reset at the end of warm-up.

use fabriclab_engine::Time;

#[derive(Clone, Debug, Default)]
pub struct Level {
    pub bytes: u64,
    pub max: u64,
    area: u128,
    last: Time,
}

impl Level {
    #[inline]
    fn set(&mut self, now: Time, bytes: u64) {
        self.area += self.bytes as u128 * (now - self.last) as u128;
        self.last = now;
        self.bytes = bytes;
        self.max = self.max.max(bytes);
    }

    fn reset(&mut self, now: Time) {
        self.area = 0;
        self.last = now;
        self.max = self.bytes;
    }

    /// Time-weighted mean between `since` and `now`.
    pub fn mean(&self, since: Time, now: Time) -> f64 {
        if now <= since {
            return self.bytes as f64;
        }
        let area = self.area + self.bytes as u128 * (now - self.last) as u128;
        area as f64 / (now - since) as f64
    }
}

pub struct Occupancy {
    pub ports: Vec<Level>,
    pub switches: Vec<Level>,
    /// Switch index of each port's owner (u32::MAX for host NICs, not tracked).
    port_switch: Vec<u32>,
    pub since: Time,
}

impl Occupancy {
    pub fn new(port_switch: Vec<u32>, n_switches: usize) -> Self {
        Occupancy {
            ports: vec![Level::default(); port_switch.len()],
            switches: vec![Level::default(); n_switches],
            port_switch,
            since: 0,
        }
    }

    /// Port `port` now holds `bytes` (was `old`).
    #[inline]
    pub fn update(&mut self, now: Time, port: u32, old: u64, bytes: u64) {
        let sw = self.port_switch[port as usize];
        if sw == u32::MAX {
            return;
        }
        self.ports[port as usize].set(now, bytes);
        let s = &mut self.switches[sw as usize];
        let total = s.bytes - old + bytes;
        s.set(now, total);
    }

    pub fn reset(&mut self, now: Time) {
        self.since = now;
        self.ports.iter_mut().for_each(|l| l.reset(now));
        self.switches.iter_mut().for_each(|l| l.reset(now));
    }
}
