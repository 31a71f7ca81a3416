//! The bounds every configured time, rate, size and count must respect.
//!
//! Why a module of its own: the simulator keeps time in u64 picoseconds and
//! rates in u64 bits per second, so a value outside these bounds would
//! saturate on conversion and wrap on a later addition (a run with the
//! results of zero latency), divide by a rate rounded to zero, or allocate
//! without limit. Every bound is generous for research and far from the
//! integer limits; docs/limits.md explains each one in a table. The checks
//! run once, in validation, never per event.

use crate::error::ConfigError;
use crate::time::{Time, S, US};

/// Latest absolute simulated time anything may be configured at (run
/// duration, warm-up, a failure event, an incast or trace start): 10^5 s,
/// about 28 hours, i.e. 10^17 ps. u64 picoseconds reach 1.8 * 10^19, so any
/// such time plus any timeout or delay below stays two orders of magnitude
/// away from wrapping.
pub const HORIZON_US: f64 = 1e11;

/// Longest timeout or timer period (retransmission timeouts, DCQCN's
/// intervals): 10 s, far above any datacenter RTO (TCP's classic 200 ms
/// minimum, 60 s backoff cap) and small enough that `now + timeout` cannot
/// wrap within [`HORIZON_US`].
pub const MAX_TIMER_US: f64 = 1e7;

/// Shortest timeout or timer period: 100 ns, below the serialisation of one
/// full frame at 100 Gbps. A shorter timer would fire several times per
/// packet, multiplying events without modelling anything.
pub const MIN_TIMER_US: f64 = 0.1;

/// Longest link propagation delay or switch latency: 1 s (light crosses
/// 200,000 km of fibre), far beyond any datacenter or WAN link.
pub const MAX_DELAY_NS: f64 = 1e9;

/// Slowest link: 1 Mbps. Rates are kept in integer bits per second; a rate
/// that rounds to 0 bps would divide by zero in the serialisation time.
pub const MIN_RATE_GBPS: f64 = 1e-3;

/// Fastest link: 100 Tbps (250 times today's 400 Gbps ports); a 64-byte
/// frame still takes whole picoseconds to serialise.
pub const MAX_RATE_GBPS: f64 = 1e5;

/// Largest message: 2^32 bytes (4 GiB, about 2.9 million full packets, a
/// third of a second at 100 Gbps). Per-message state (reassembly bitmaps,
/// the ideal-latency pipeline) grows with the packet count; bigger
/// transfers are better modelled as several messages.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 32;

/// Largest buffer, threshold or pool: 2^40 bytes (1 TiB), 10^4 times the
/// deepest switch buffers; byte counters add packets far below u64's range.
pub const MAX_BUFFER_BYTES: u64 = 1 << 40;

/// Largest multiple of the BDP or of an RTT a parameter may be (windows,
/// buckets, thresholds, timeouts counted in RTTs): 10^4.
pub const MAX_MULTIPLE: f64 = 1e4;

/// Largest count of packets or MTUs in a parameter (windows, queue
/// capacities): 10^6.
pub const MAX_PACKETS: f64 = 1e6;

/// Largest plain count (rounds, channels, connections per pair, priority
/// levels, entropies): 65,536.
pub const MAX_COUNT: f64 = 65_536.0;

/// Largest magnitude of a dimensionless factor (gains, multipliers) whose
/// own check does not say more.
pub const MAX_FACTOR: f64 = 1e6;

/// Most hosts a topology may have: every node number fits the 28 bits the
/// simulator's events give it, with room for the switches.
pub const MAX_HOSTS: u64 = 1 << 20;

/// A closed range a configured number must lie in, with its unit and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    pub lo: f64,
    pub hi: f64,
    /// Whether `lo` itself is excluded (a rate or duration must be > 0).
    pub lo_open: bool,
    /// Whether `hi` itself is excluded (a loss rate must stay below 1).
    pub hi_open: bool,
    /// Whether `inf` is also allowed (a threshold that can be switched off).
    pub inf_ok: bool,
    /// What the value is, e.g. "a timeout in microseconds".
    pub what: &'static str,
}

impl Bound {
    pub const fn new(what: &'static str, lo: f64, hi: f64) -> Bound {
        Bound { lo, hi, lo_open: false, hi_open: false, inf_ok: false, what }
    }

    /// The same bound, excluding `lo`.
    pub const fn above(self) -> Bound {
        Bound { lo_open: true, ..self }
    }

    /// The same bound, excluding `hi`.
    pub const fn below(self) -> Bound {
        Bound { hi_open: true, ..self }
    }

    /// The same bound, also allowing `inf`.
    pub const fn or_inf(self) -> Bound {
        Bound { inf_ok: true, ..self }
    }

    pub fn contains(&self, v: f64) -> bool {
        if v == f64::INFINITY && self.inf_ok {
            return true;
        }
        let low_ok = if self.lo_open { v > self.lo } else { v >= self.lo };
        let high_ok = if self.hi_open { v < self.hi } else { v <= self.hi };
        v.is_finite() && low_ok && high_ok
    }

    /// The range as the docs and errors state it, e.g. "[0.1, 1e7]".
    pub fn range(&self) -> String {
        let open = if self.lo_open { "(" } else { "[" };
        let close = if self.hi_open { ")" } else { "]" };
        let inf = if self.inf_ok { " or inf" } else { "" };
        format!("{open}{}, {}{close}{inf}", number(self.lo), number(self.hi))
    }

    /// `key` = `v` within this bound, or an error naming the key, the value
    /// and the range.
    pub fn check(&self, key: &str, v: f64) -> Result<(), ConfigError> {
        if self.contains(v) {
            return Ok(());
        }
        Err(ConfigError::new(
            key,
            format!("got {}, expected {} in {} (bounds: docs/limits.md)", number(v), self.what, self.range()),
        ))
    }
}

/// A number as a person reads it: plain for ordinary magnitudes, with an
/// exponent for the very large and very small (`1e30`, not 31 digits).
pub fn number(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-4..1e7).contains(&a) || (a.fract() == 0.0 && a < 1e16 && is_power_of_two(a)) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn is_power_of_two(a: f64) -> bool {
    a >= 1.0 && (a as u64).is_power_of_two()
}

/// `us` microseconds as picoseconds, or None when it is not a finite time in
/// [0, u64::MAX ps] (the float-to-int cast would saturate or take NaN as 0).
pub fn checked_us(us: f64) -> Option<Time> {
    let ps = (us * US as f64).round();
    (ps.is_finite() && ps >= 0.0 && ps < u64::MAX as f64).then_some(ps as Time)
}

/// `gbps` as whole bits per second, or None when it rounds to 0 bps or
/// does not fit u64.
pub fn checked_gbps(gbps: f64) -> Option<u64> {
    let bps = (gbps * 1e9).round();
    (bps.is_finite() && bps >= 1.0 && bps < u64::MAX as f64).then_some(bps as u64)
}

/// The latest picosecond [`HORIZON_US`] allows.
pub const HORIZON: Time = 100_000 * S;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_include_their_ends_and_reject_nan_and_inf() {
        let b = Bound::new("a timeout in microseconds", MIN_TIMER_US, MAX_TIMER_US);
        assert!(b.contains(0.1) && b.contains(1e7) && b.contains(100.0));
        for bad in [0.0, 0.09, 1.0000001e7, f64::NAN, f64::INFINITY, -f64::INFINITY, -0.0, 1e308] {
            assert!(!b.contains(bad), "{bad}");
        }
        assert!(b.or_inf().contains(f64::INFINITY));
        assert!(!Bound::new("x", 0.0, 1.0).above().contains(0.0));
        let below = Bound::new("x", 0.0, 1.0).below();
        assert!(!below.contains(1.0) && below.contains(0.999) && below.contains(0.0));
        assert_eq!(below.range(), "[0, 1)");
        assert!(Bound::new("x", 0.0, 1.0).contains(-0.0));
    }

    #[test]
    fn errors_name_key_value_and_range() {
        let b = Bound::new("a timeout in microseconds", MIN_TIMER_US, MAX_TIMER_US);
        let e = b.check("protocol.sird.timeout_us", 1e30).unwrap_err().to_string();
        assert_eq!(
            e,
            "config error at `protocol.sird.timeout_us`: got 1e30, expected a timeout in microseconds in \
             [0.1, 1e7] (bounds: docs/limits.md)"
        );
        assert_eq!(number(65536.0), "65536");
        assert_eq!(number(4294967296.0), "4294967296");
        assert_eq!(number(1e-10), "1e-10");
        assert_eq!(number(f64::NAN), "NaN");
    }

    #[test]
    fn conversions_refuse_what_would_saturate_or_round_to_zero() {
        assert_eq!(checked_us(1.5), Some(1_500_000));
        assert_eq!(checked_us(1e30), None);
        assert_eq!(checked_us(-1.0), None);
        assert_eq!(checked_us(f64::NAN), None);
        assert_eq!(checked_gbps(100.0), Some(100_000_000_000));
        assert_eq!(checked_gbps(1e-10), None);
        assert_eq!(checked_gbps(1e12), None);
        assert_eq!(checked_us(HORIZON_US), Some(HORIZON));
    }
}
