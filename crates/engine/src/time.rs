//! Simulated time: integer picoseconds. Never floating point inside the engine.

/// A point in (or span of) simulated time, in picoseconds.
pub type Time = u64;

pub const PS: Time = 1;
pub const NS: Time = 1_000;
pub const US: Time = 1_000_000;
pub const MS: Time = 1_000_000_000;
pub const S: Time = 1_000_000_000_000;

/// Time to serialise `bytes` onto a link of `rate_bps`, rounded up to the next picosecond.
/// Exact for the usual rates (100 Gbps = 80 ps per byte).
#[inline]
pub fn serialization_time(bytes: u64, rate_bps: u64) -> Time {
    let bits_ps = bytes * 8 * S; // fits in u64 for any frame below 2 MB
    bits_ps.div_ceil(rate_bps)
}

/// Seconds, for reporting only.
pub fn to_secs(t: Time) -> f64 {
    t as f64 / S as f64
}

/// Converts microseconds given as a float (config input) to picoseconds, rounding to nearest.
/// Validation keeps every configured time within [`crate::limits::HORIZON_US`], so this cast
/// never saturates and later additions cannot wrap; input that was not validated goes through
/// [`crate::limits::checked_us`] instead.
pub fn from_us(us: f64) -> Time {
    (us * US as f64).round() as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_at_common_rates() {
        assert_eq!(serialization_time(1, 100_000_000_000), 80);
        assert_eq!(serialization_time(1538, 100_000_000_000), 123_040);
        assert_eq!(serialization_time(1538, 400_000_000_000), 30_760);
        assert_eq!(serialization_time(84, 10_000_000_000), 67_200);
    }

    #[test]
    fn serialization_rounds_up() {
        // 1 byte at 3 bps = 8/3 s, must round up
        assert_eq!(serialization_time(1, 3), (8 * S).div_ceil(3));
    }
}
