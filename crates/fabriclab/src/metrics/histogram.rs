//! Time spent at each queue level, as a fixed log-linear histogram: the
//! distribution behind the SIRD paper's Fig. 2 (queuing CDFs across ToR
//! downlinks and across ToRs). Each bucket sums the picoseconds that some
//! queue held a level in its range; from the sums follow time-weighted
//! percentiles, the fraction of (queue x time) at or below a level.
//!
//! Levels below [`SUB`] bytes have a bucket each. Above, each power of two is
//! cut into [`SUB`] equal buckets, so a bucket's width is at most 1/64 of its
//! lower bound. A percentile is reported as its bucket's lower bound: it never
//! overstates the level, and understates it by less than 1.6%.
//!
//! Fixed storage (one array, no allocation after creation) and a branch-free
//! bucket index, because every change of a ToR port's bytes adds to it.

use fabriclab_engine::Time;

/// log2 of the buckets per power of two.
const SUB_BITS: u32 = 6;
/// Buckets per power of two (and the levels below this have one bucket each).
pub const SUB: u64 = 1 << SUB_BITS;
/// Levels up to 2^MAX_BITS - 1 bytes (1 TB) have their own bucket; a higher
/// one counts in the last.
const MAX_BITS: u32 = 40;
const MAX_LEVEL: u64 = (1 << MAX_BITS) - 1;
/// Number of buckets: SUB for levels below SUB, then SUB per power of two.
pub const BUCKETS: usize = ((MAX_BITS - SUB_BITS + 1) as usize) << SUB_BITS;

/// The bucket of a level.
#[inline(always)]
pub fn bucket(level: u64) -> usize {
    let v = level.min(MAX_LEVEL);
    // The power of two at or below v, counted from SUB: 0 for v < 2 SUB.
    let shift = (63 - (v | SUB).leading_zeros()) - SUB_BITS;
    ((shift as u64) << SUB_BITS) as usize + (v >> shift) as usize
}

/// The smallest level of bucket `i`.
pub fn lower_bound(i: usize) -> u64 {
    let (octave, within) = ((i >> SUB_BITS) as u32, i as u64 & (SUB - 1));
    if octave == 0 {
        within
    } else {
        (SUB + within) << (octave - 1)
    }
}

/// Time at each level, summed over every queue recorded into it.
#[derive(Clone, Debug)]
pub struct LevelTime {
    ps: Box<[u64; BUCKETS]>,
}

impl Default for LevelTime {
    fn default() -> Self {
        LevelTime { ps: Box::new([0; BUCKETS]) }
    }
}

impl LevelTime {
    /// A queue held `level` bytes for `dt`.
    #[inline(always)]
    pub fn add(&mut self, level: u64, dt: Time) {
        self.ps[bucket(level)] += dt;
    }

    pub fn clear(&mut self) {
        self.ps.fill(0);
    }

    /// The (queue x time) recorded, in picoseconds.
    pub fn total(&self) -> u64 {
        self.ps.iter().sum()
    }

    /// The smallest level (a bucket's lower bound) with at least a fraction
    /// `q` of the recorded time at or below it; 0 when nothing is recorded.
    pub fn quantile(&self, q: f64) -> u64 {
        let want = q.clamp(0.0, 1.0) * self.total() as f64;
        let mut cum = 0u64;
        for (i, &t) in self.ps.iter().enumerate() {
            cum += t;
            if t > 0 && cum as f64 >= want {
                return lower_bound(i);
            }
        }
        0
    }

    /// The time-weighted percentiles of the Fig. 2 fields: p50, p90, p99, p99.9.
    pub fn percentiles(&self) -> QueuePercentiles {
        QueuePercentiles {
            p50: self.quantile(0.5),
            p90: self.quantile(0.9),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
        }
    }

    /// (bucket lower bound, picoseconds) of every bucket with time in it, in order.
    pub fn nonzero(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.ps.iter().enumerate().filter(|(_, &t)| t > 0).map(|(i, &t)| (i, t))
    }

    /// Picoseconds in bucket `i`.
    pub fn at(&self, i: usize) -> u64 {
        self.ps[i]
    }
}

/// One row of queue_cdf.csv: the fraction of (ToR downlink x time) and of
/// (ToR x time) at or below a level (each bucket's lower bound where either
/// has time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CdfRow {
    pub occupancy_bytes: u64,
    pub downlink_cdf: f64,
    pub tor_cdf: f64,
}

impl CdfRow {
    pub const CSV_HEADER: &'static str = "occupancy_bytes,downlink_cdf,tor_cdf";

    pub fn csv_row(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = writeln!(out, "{},{:.9},{:.9}", self.occupancy_bytes, self.downlink_cdf, self.tor_cdf);
    }

    /// The rows of two histograms side by side, over the levels where either has time.
    pub fn of(downlinks: &LevelTime, tors: &LevelTime) -> Vec<CdfRow> {
        let (td, tt) = (downlinks.total().max(1) as f64, tors.total().max(1) as f64);
        let (mut cd, mut ct) = (0u64, 0u64);
        let mut rows = Vec::new();
        for i in 0..BUCKETS {
            let (d, t) = (downlinks.at(i), tors.at(i));
            if d + t == 0 {
                continue;
            }
            (cd, ct) = (cd + d, ct + t);
            rows.push(CdfRow {
                occupancy_bytes: lower_bound(i),
                downlink_cdf: cd as f64 / td,
                tor_cdf: ct as f64 / tt,
            });
        }
        rows
    }
}

/// Time-weighted percentiles of a queue level, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueuePercentiles {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_bounded_relative_width() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(SUB - 1), SUB as usize - 1);
        assert_eq!(bucket(SUB), SUB as usize);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        for i in 0..BUCKETS {
            let lo = lower_bound(i);
            assert_eq!(bucket(lo), i, "bucket {i} starts at {lo}");
            if i + 1 < BUCKETS {
                let next = lower_bound(i + 1);
                assert!(next > lo);
                assert_eq!(bucket(next - 1), i);
                // Width at most 1/SUB of the lower bound (exact below 2 SUB).
                assert!((next - lo) * SUB <= lo.max(SUB), "bucket {i}: [{lo}, {next})");
            }
        }
        assert_eq!(lower_bound(BUCKETS - 1), 127 << 33);
    }

    /// One queue: 0 B for 50 ps, 1,000 B for 40 ps, 4,096 B for 9 ps, 100,000 B for 1 ps.
    #[test]
    fn one_queue_with_known_levels_gives_exact_percentiles() {
        let mut h = LevelTime::default();
        for (level, dt) in [(0, 20), (1000, 40), (0, 30), (4096, 9), (100_000, 1)] {
            h.add(level, dt);
        }
        assert_eq!(h.total(), 100);
        // 1,000 and 4,096 are bucket lower bounds; 100,000 falls in [99,328, 100,352).
        assert_eq!(h.percentiles(), QueuePercentiles { p50: 0, p90: 1000, p99: 4096, p999: 99_328 });
        assert_eq!(h.quantile(0.51), 1000);
        assert_eq!(h.quantile(1.0), 99_328);
        assert_eq!(LevelTime::default().percentiles(), QueuePercentiles::default());
    }

    #[test]
    fn cdf_rows_follow_both_histograms() {
        let (mut d, mut t) = (LevelTime::default(), LevelTime::default());
        d.add(0, 3);
        d.add(1000, 1);
        t.add(500, 2);
        t.add(1000, 2);
        let rows = CdfRow::of(&d, &t);
        let got: Vec<(u64, f64, f64)> = rows.iter().map(|r| (r.occupancy_bytes, r.downlink_cdf, r.tor_cdf)).collect();
        assert_eq!(got, [(0, 0.75, 0.0), (500, 0.75, 0.5), (1000, 1.0, 1.0)]);
    }

    /// Any mix of levels: percentiles never decrease, and the top one is at
    /// most the largest level and within a bucket of it.
    #[test]
    fn percentiles_are_ordered_and_bounded_by_the_maximum() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let mut h = LevelTime::default();
            let mut max = 0;
            for _ in 0..50 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let level = ((x >> 20) % 20_000_000) >> (x % 23);
                max = u64::max(max, level);
                h.add(level, 1 + x % 1000);
            }
            let p = h.percentiles();
            let top = h.quantile(1.0);
            assert!(p.p50 <= p.p90 && p.p90 <= p.p99 && p.p99 <= p.p999 && p.p999 <= top, "{p:?} {top}");
            assert!(top <= max && (max - top) * SUB <= max, "top {top}, max {max}");
        }
    }
}
