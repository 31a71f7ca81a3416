//! Opt-in time series from the transports (`[output] traces`): congestion
//! windows and RTT samples, reported through [`crate::transport::Cx`].
//!
//! Tracing only observes: it draws no random numbers and schedules nothing,
//! so a traced run has the same events and summary as an untraced one. It
//! stays bounded on large runs: a window is recorded only when it changes and
//! at most once per `trace_interval_us` per flow, RTT rows obey the same
//! interval, and every RTT sample of the traced hosts goes into a histogram
//! (`rtt_us` in summary.json) instead of a row.

use fabriclab_engine::{from_us, Time};
use fnv::FnvHashMap;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// What a transport can trace (`output.traces` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// Congestion window of a flow, bytes.
    Cwnd,
    /// RTT of one acknowledged packet, measured by the sender.
    Rtt,
}

impl TraceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceKind::Cwnd => "cwnd",
            TraceKind::Rtt => "rtt",
        }
    }
}

/// One traces.csv row. `value`: bytes for `cwnd`, picoseconds for `rtt`
/// (written in microseconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRecord {
    pub time: Time,
    pub host: u32,
    /// The transport's flow: the message id for per-message senders (SMaRTT,
    /// EQDS, MP-RDMA), the connection's flow label for TCP-like ones (DCTCP, Swift).
    pub flow: u64,
    pub kind: TraceKind,
    pub value: f64,
}

impl TraceRecord {
    pub const CSV_HEADER: &'static str = "time_us,host,flow,kind,value";

    pub fn csv_row(&self, out: &mut String) {
        use std::fmt::Write;
        let value = match self.kind {
            TraceKind::Cwnd => self.value,
            TraceKind::Rtt => self.value / 1e6,
        };
        let _ =
            writeln!(out, "{:.6},{},{},{},{}", self.time as f64 / 1e6, self.host, self.flow, self.kind.as_str(), value);
    }
}

/// `rtt_us` in summary.json: every RTT sample of the traced hosts, in
/// microseconds. Percentiles come from a histogram with 3 significant digits
/// (nearest rank, reported as the bucket's highest value); count, mean, min
/// and max are exact.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RttStats {
    pub count: u64,
    pub mean: f64,
    pub min: f64,
    pub p1: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// `cwnd` in summary.json, from the recorded window samples: how fast windows
/// shrink and how evenly they are shared.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CwndStats {
    pub flows: u64,
    pub samples: u64,
    /// Mean over flows of their first recorded window.
    pub first_mean_bytes: f64,
    /// Flows whose window fell to half their first window or below.
    pub halved_flows: u64,
    /// Mean over those flows of the time from their first sample to that point.
    pub halving_us: f64,
    /// Jain's fairness index of the windows of the flows alive (between their
    /// first and last sample), averaged over the time at least two are alive
    /// (1 when never two are).
    pub jain: f64,
}

/// Collects traces during a run (present only when `output.traces` is set).
pub struct Tracer {
    cwnd: bool,
    rtt: bool,
    interval: Time,
    /// Traced hosts; empty: all.
    hosts: Vec<bool>,
    /// Last recorded (time, value) per (host, flow, kind).
    last: FnvHashMap<(u32, u64, TraceKind), (Time, f64)>,
    records: Vec<TraceRecord>,
    rtt_hist: Histogram<u64>,
    rtt_sum: f64,
    rtt_min: Time,
    rtt_max: Time,
}

impl Tracer {
    /// A tracer of `kinds` (`output.traces`) on `traced_hosts` (all when
    /// empty) of a fabric of `n_hosts`, at most one row per flow and kind per
    /// `interval_us`; None when nothing is traced.
    pub fn new(kinds: &[TraceKind], interval_us: f64, traced_hosts: &[u32], n_hosts: u32) -> Option<Tracer> {
        if kinds.is_empty() {
            return None;
        }
        let mut hosts = Vec::new();
        if !traced_hosts.is_empty() {
            hosts = vec![false; n_hosts as usize];
            for &h in traced_hosts.iter().filter(|&&h| h < n_hosts) {
                hosts[h as usize] = true;
            }
        }
        Some(Tracer {
            cwnd: kinds.contains(&TraceKind::Cwnd),
            rtt: kinds.contains(&TraceKind::Rtt),
            interval: from_us(interval_us),
            hosts,
            last: FnvHashMap::default(),
            records: Vec::new(),
            // 1 ps to 1 s (longer RTTs count as 1 s in the percentiles).
            rtt_hist: Histogram::new_with_bounds(1, fabriclab_engine::S, 3).expect("valid histogram bounds"),
            rtt_sum: 0.0,
            rtt_min: Time::MAX,
            rtt_max: 0,
        })
    }

    fn traced(&self, host: u32) -> bool {
        self.hosts.is_empty() || self.hosts.get(host as usize).copied().unwrap_or(false)
    }

    /// Records the sample if its series had none within the interval (and,
    /// with `only_changes`, if its value differs from the last one recorded).
    fn sample(&mut self, now: Time, host: u32, flow: u64, kind: TraceKind, value: f64, only_changes: bool) {
        let key = (host, flow, kind);
        if let Some(&(t, v)) = self.last.get(&key) {
            if (only_changes && v == value) || now < t.saturating_add(self.interval) {
                return;
            }
        }
        self.last.insert(key, (now, value));
        self.records.push(TraceRecord { time: now, host, flow, kind, value });
    }

    #[inline(never)]
    pub fn cwnd(&mut self, now: Time, host: u32, flow: u64, bytes: f64) {
        if self.cwnd && self.traced(host) {
            self.sample(now, host, flow, TraceKind::Cwnd, bytes, true);
        }
    }

    #[inline(never)]
    pub fn rtt(&mut self, now: Time, host: u32, flow: u64, rtt: Time) {
        if !(self.rtt && self.traced(host)) {
            return;
        }
        self.rtt_hist.saturating_record(rtt.max(1));
        self.rtt_sum += rtt as f64;
        self.rtt_min = self.rtt_min.min(rtt);
        self.rtt_max = self.rtt_max.max(rtt);
        self.sample(now, host, flow, TraceKind::Rtt, rtt as f64, false);
    }

    /// The rows in time order, and the summaries of what was asked for.
    pub fn finish(self) -> (Vec<TraceRecord>, Option<RttStats>, Option<CwndStats>) {
        let rtt = self.rtt.then(|| self.rtt_stats());
        let cwnd = self.cwnd.then(|| cwnd_stats(&self.records));
        (self.records, rtt, cwnd)
    }

    fn rtt_stats(&self) -> RttStats {
        let h = &self.rtt_hist;
        let n = h.len();
        if n == 0 {
            return RttStats::default();
        }
        let us = |ps: u64| ps as f64 / 1e6;
        let q = |p: f64| us(h.value_at_quantile(p).clamp(self.rtt_min, self.rtt_max));
        RttStats {
            count: n,
            mean: self.rtt_sum / n as f64 / 1e6,
            min: us(self.rtt_min),
            p1: q(0.01),
            p10: q(0.10),
            p25: q(0.25),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p99: q(0.99),
            max: us(self.rtt_max),
        }
    }
}

/// Per-flow state while summarising the window samples.
struct Series {
    first_time: Time,
    first: f64,
    last_index: usize,
    current: f64,
    live: bool,
    halved_at: Option<Time>,
}

fn cwnd_stats(records: &[TraceRecord]) -> CwndStats {
    let mut series: FnvHashMap<(u32, u64), Series> = FnvHashMap::default();
    let cwnd = || records.iter().enumerate().filter(|(_, r)| r.kind == TraceKind::Cwnd);
    for (i, r) in cwnd() {
        let s = series.entry((r.host, r.flow)).or_insert(Series {
            first_time: r.time,
            first: r.value,
            last_index: i,
            current: 0.0,
            live: false,
            halved_at: None,
        });
        s.last_index = i;
        if s.halved_at.is_none() && r.value <= s.first / 2.0 {
            s.halved_at = Some(r.time - s.first_time);
        }
    }
    // Jain's index (sum x)^2 / (n sum x^2) over the live flows, integrated over time.
    let (mut n, mut sum, mut sum_sq) = (0u64, 0.0f64, 0.0f64);
    let (mut weighted, mut span, mut prev) = (0.0, 0.0, 0);
    for (i, r) in cwnd() {
        if n >= 2 && r.time > prev {
            let dt = (r.time - prev) as f64;
            weighted += sum * sum / (n as f64 * sum_sq) * dt;
            span += dt;
        }
        prev = r.time;
        let s = series.get_mut(&(r.host, r.flow)).expect("every flow was seen in the first pass");
        if s.live {
            sum -= s.current;
            sum_sq -= s.current * s.current;
            n -= 1;
        }
        s.live = i != s.last_index;
        if !s.live {
            continue;
        }
        n += 1;
        s.current = r.value;
        sum += r.value;
        sum_sq += r.value * r.value;
    }
    let flows = series.len() as u64;
    let halved: Vec<Time> = series.values().filter_map(|s| s.halved_at).collect();
    CwndStats {
        flows,
        samples: cwnd().count() as u64,
        first_mean_bytes: series.values().map(|s| s.first).sum::<f64>() / flows.max(1) as f64,
        halved_flows: halved.len() as u64,
        halving_us: halved.iter().map(|&t| t as f64 / 1e6).sum::<f64>() / halved.len().max(1) as f64,
        jain: if span > 0.0 { weighted / span } else { 1.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabriclab_engine::US;

    fn tracer(kinds: &[TraceKind], interval_us: f64, hosts: &[u32]) -> Tracer {
        Tracer::new(kinds, interval_us, hosts, 4).expect("traces asked for")
    }

    #[test]
    fn windows_are_recorded_on_change_and_at_most_once_per_interval() {
        let mut t = tracer(&[TraceKind::Cwnd], 2.0, &[]);
        for (us, v) in [(0, 10.0), (1, 9.0), (2, 9.0), (3, 8.0), (4, 8.0), (5, 7.0)] {
            t.cwnd(us * US, 0, 7, v);
        }
        t.rtt(US, 0, 7, 5 * US); // not asked for
        let (rows, rtt, cwnd) = t.finish();
        let got: Vec<(Time, f64)> = rows.iter().map(|r| (r.time / US, r.value)).collect();
        assert_eq!(got, vec![(0, 10.0), (2, 9.0), (4, 8.0)]);
        assert!(rtt.is_none());
        let c = cwnd.unwrap();
        assert_eq!((c.flows, c.samples, c.halved_flows, c.jain), (1, 3, 0, 1.0));
    }

    #[test]
    fn host_filter_and_rtt_histogram() {
        let mut t = tracer(&[TraceKind::Rtt], 0.0, &[1]);
        t.rtt(0, 0, 1, 99 * US); // host 0 is not traced
        for i in 1..=100 {
            t.rtt(i * US, 1, 1, i * US);
        }
        let (rows, rtt, cwnd) = t.finish();
        assert_eq!(rows.len(), 100);
        assert!(rows.iter().all(|r| r.host == 1 && r.kind == TraceKind::Rtt));
        let s = rtt.unwrap();
        assert_eq!((s.count, s.min, s.max, s.mean), (100, 1.0, 100.0, 50.5));
        // Nearest rank, to the histogram's 3 significant digits.
        for (got, want) in [(s.p1, 1.0), (s.p50, 50.0), (s.p99, 99.0)] {
            assert!((got - want).abs() <= want * 1e-3, "{got} vs {want}");
        }
        assert!(cwnd.is_none());
    }

    #[test]
    fn halving_time_and_fairness_of_two_flows() {
        let mut t = tracer(&[TraceKind::Cwnd], 0.0, &[]);
        // Flow 1 halves after 4 us; flow 2 never does. Windows 8:4 then 4:4.
        t.cwnd(0, 0, 1, 8.0);
        t.cwnd(0, 1, 2, 4.0);
        t.cwnd(4 * US, 0, 1, 4.0);
        t.cwnd(8 * US, 0, 1, 4.5);
        t.cwnd(8 * US, 1, 2, 4.5);
        let c = t.finish().2.unwrap();
        assert_eq!((c.flows, c.halved_flows, c.halving_us, c.first_mean_bytes), (2, 1, 4.0, 6.0));
        // J(8, 4) = 144 / 160 = 0.9 for 4 us, J(4, 4) = 1 for 4 us.
        assert!((c.jain - 0.95).abs() < 1e-12, "{}", c.jain);
    }
}
