//! The occupancy record of one byte count (a port's bytes, a switch's total): its maximum and
//! time integral. A value type of the network layer, since every port carries one; the
//! accounting over switches and the level histograms are in `metrics::occupancy`.

use fabriclab_engine::Time;

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

    /// When the level last changed (or the record was reset).
    #[inline(always)]
    pub fn last(&self) -> Time {
        self.last
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
