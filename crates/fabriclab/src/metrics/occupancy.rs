//! Exact buffer occupancy accounting: for each port and each switch, the
//! maximum and the time integral of bytes held, from which the time-weighted
//! mean follows; and, for the ToRs, the time spent at each level
//! ([`LevelTime`]: Fig. 2's distributions). Reset at the end of warm-up.

use super::histogram::{LevelTime, QueuePercentiles};
pub use crate::net::level::PortLevel;
use crate::net::Port;
use fabriclab_engine::Time;

/// A switch's record: its total bytes and a [`PortLevel`] over them.
#[derive(Clone, Debug, Default)]
pub struct Level {
    pub bytes: u64,
    level: PortLevel,
    /// A ToR (hosts hang off it): its ports and total feed the level histograms.
    tor: bool,
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

/// The switches' records (the ports' are in the ports, [`PortLevel`]).
pub struct Occupancy {
    pub switches: Vec<Level>,
    /// Nodes below this are hosts, whose NICs are not tracked.
    n_hosts: u32,
    pub since: Time,
    /// Keep the level histograms (`output.queue_percentiles`): one predictable
    /// branch per change of a switch port's bytes when off.
    levels: bool,
    /// Time at each level: [`DOWNLINKS`] of every ToR downlink (a ToR port
    /// whose peer is a host), [`TORS`] of every ToR's total bytes (all its
    /// ports), and at 0 of what is neither, which no one reads: a change adds
    /// to one histogram of each kind without a branch (which switch a packet
    /// is at does not follow a pattern a predictor learns).
    level_time: [LevelTime; 3],
    /// `levels`, or a queue time series is kept: the one branch a change pays
    /// for both when both are off.
    extra: bool,
    /// The ports whose levels go to queue_series.csv (`output.queue_ports`).
    series: Option<Box<QueueSeries>>,
    /// Each ToR's bytes averaged over fixed intervals (`output.tor_queue_average_us`).
    averages: Option<Box<TorAverages>>,
}

const DOWNLINKS: usize = 1;
const TORS: usize = 2;

/// Fig. 2's distributions at the end of a run (see [`Occupancy::level_percentiles`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelPercentiles {
    pub downlink: QueuePercentiles,
    pub tor: QueuePercentiles,
}

impl Occupancy {
    /// Records for `tor.len()` switches; `tor[i]` says whether switch i is a ToR.
    pub fn new(n_hosts: u32, tor: &[bool]) -> Self {
        Occupancy {
            switches: tor.iter().map(|&tor| Level { tor, ..Level::default() }).collect(),
            n_hosts,
            since: 0,
            levels: false,
            level_time: Default::default(),
            extra: false,
            series: None,
            averages: None,
        }
    }

    /// Averages each ToR's bytes over intervals of `interval` from now on.
    pub fn keep_averages(&mut self, interval: Time) {
        self.averages = Some(Box::new(TorAverages::new(interval, self.switches.len())));
        self.extra = true;
    }

    /// (largest, mean) of the ToRs' interval averages over the whole intervals
    /// of the measurement window up to `end`; None unless
    /// [`Occupancy::keep_averages`] was called or no interval completed.
    pub fn finish_averages(&mut self, end: Time) -> Option<(f64, f64)> {
        let mut a = self.averages.take()?;
        for (sw, s) in self.switches.iter().enumerate().filter(|(_, s)| s.tor) {
            a.add(sw, s.bytes, s.level.last(), end);
        }
        a.result()
    }

    /// Keeps the level histograms from now on (off by default: they cost
    /// about 8% of a run's time, measured on balanced WKc, docs/model.md).
    pub fn keep_levels(&mut self) {
        self.levels = true;
        self.extra = true;
    }

    /// Samples the levels of `series`'s ports from now on.
    pub fn keep_series(&mut self, series: QueueSeries) {
        self.series = Some(Box::new(series));
        self.extra = true;
    }

    /// The queue time series up to `end` (queue_series.csv), in time order,
    /// and each watched port's time-weighted level percentiles over the
    /// measurement window; empty unless [`Occupancy::keep_series`] was called.
    pub fn finish_series(&mut self, end: Time, ports: &[Port]) -> FinishedSeries {
        match self.series.take() {
            Some(s) => s.finish(end, ports),
            None => FinishedSeries::default(),
        }
    }

    pub fn keeps_levels(&self) -> bool {
        self.levels
    }

    /// Time at each level of every ToR downlink.
    pub fn downlinks(&self) -> &LevelTime {
        &self.level_time[DOWNLINKS]
    }

    /// Time at each level of every ToR's total bytes.
    pub fn tors(&self) -> &LevelTime {
        &self.level_time[TORS]
    }

    /// Port `port` now holds `port.bytes` (was `old`). Every change of a
    /// switch port's bytes comes through here, so the record's last level is
    /// always `old`.
    #[inline(always)]
    pub fn update(&mut self, now: Time, port: &mut Port, old: u64) {
        let Some(sw) = port.node.checked_sub(self.n_hosts) else {
            return;
        };
        let bytes = port.bytes;
        if self.extra {
            self.add_extra(now, port, old, sw as usize);
        }
        port.occupancy.set(now, old, bytes);
        let s = &mut self.switches[sw as usize];
        let total = s.bytes - old + bytes;
        s.set(now, total);
    }

    /// A control-class packet left the queue of `port` for the wire at `now`:
    /// the port's bytes are unchanged (the packet in service is counted) but
    /// its control class is lower, which the queue series records.
    pub fn control_dequeued(&mut self, now: Time, port: &Port) {
        if let Some(series) = self.series.as_deref_mut() {
            series.change(now, port, port.bytes);
        }
    }

    /// The time since the port's and its switch's last change, at their old
    /// levels. Out of line, so that [`Occupancy::update`] stays small: with this
    /// body in it, `update` was no longer inlined into the simulator's loop,
    /// even with the histograms off (3.9% more instructions on balanced WKc).
    #[inline(never)]
    fn add_extra(&mut self, now: Time, port: &Port, old: u64, sw: usize) {
        if let Some(series) = self.series.as_deref_mut() {
            series.change(now, port, old);
        }
        if let Some(a) = self.averages.as_deref_mut() {
            let s = &self.switches[sw];
            if s.tor {
                a.add(sw, s.bytes, s.level.last(), now);
            }
        }
        if !self.levels {
            return;
        }
        let s = &self.switches[sw];
        let tor = s.tor as usize;
        let downlink = tor & (port.peer < self.n_hosts) as usize;
        self.level_time[downlink * DOWNLINKS].add(old, now - port.occupancy.last());
        self.level_time[tor * TORS].add(s.bytes, now - s.level.last());
    }

    /// Closes the level histograms at `now` (the time since each record's last
    /// change, at its current level) and gives their percentiles. Once, at the
    /// end of a run: after it the histograms hold time up to `now`.
    pub fn level_percentiles(&mut self, now: Time, ports: &[Port]) -> LevelPercentiles {
        for p in ports.iter().filter(|p| p.peer < self.n_hosts) {
            if let Some(s) = p.node.checked_sub(self.n_hosts).map(|sw| &self.switches[sw as usize]) {
                if s.tor {
                    self.level_time[DOWNLINKS].add(p.bytes, now.saturating_sub(p.occupancy.last()));
                }
            }
        }
        for s in self.switches.iter().filter(|s| s.tor) {
            self.level_time[TORS].add(s.bytes, now.saturating_sub(s.level.last()));
        }
        LevelPercentiles { downlink: self.downlinks().percentiles(), tor: self.tors().percentiles() }
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
        if let Some(series) = self.series.as_deref_mut() {
            series.reset_levels(now);
        }
        if let Some(a) = self.averages.as_deref_mut() {
            a.reset(now);
        }
        ports.iter_mut().for_each(|p| p.occupancy.reset(now, p.bytes));
        self.switches.iter_mut().for_each(|l| l.reset(now));
        self.level_time.iter_mut().for_each(LevelTime::clear);
    }
}

/// Each ToR's total bytes averaged over consecutive intervals from the start
/// of the measurement window, as the SIRD authors' ns-2 queue monitors give
/// them (`ns-link.tcl`, `queue-sample-timeout`: the integral over each
/// `state_polling_ival_s` divided by it) and their post-processing sums them
/// per ToR (`produce_aggr.py`, `process_grouped_data`). Exact: the integral
/// of each interval is built from the changes [`Occupancy::update`] sees.
struct TorAverages {
    interval: Time,
    /// Start of interval 0 (the end of warm-up).
    start: Time,
    /// Per switch (only ToRs are ever added to).
    switches: Vec<IntervalAverages>,
}

/// One switch's open interval and the averages of its closed ones.
#[derive(Clone, Copy, Default)]
struct IntervalAverages {
    /// The open interval's index and integral (byte-ps).
    open: u64,
    area: u128,
    /// The largest closed interval's average, their sum and their number.
    max: f64,
    sum: f64,
    closed: u64,
}

impl TorAverages {
    fn new(interval: Time, switches: usize) -> Self {
        TorAverages { interval, start: 0, switches: vec![IntervalAverages::default(); switches] }
    }

    fn reset(&mut self, now: Time) {
        self.start = now;
        self.switches.fill(IntervalAverages::default());
    }

    /// Switch `sw` held `bytes` from `from` (not before the window) to `to`.
    fn add(&mut self, sw: usize, bytes: u64, from: Time, to: Time) {
        let s = &mut self.switches[sw];
        let mut t = from.max(self.start);
        while t < to {
            // Calls cover each switch's time without a gap, so `t` is in the open interval.
            debug_assert_eq!((t - self.start) / self.interval, s.open);
            let boundary = self.start + (s.open + 1) * self.interval;
            let end = boundary.min(to);
            s.area += bytes as u128 * (end - t) as u128;
            t = end;
            if end == boundary {
                let avg = s.area as f64 / self.interval as f64;
                (s.max, s.sum, s.closed) = (s.max.max(avg), s.sum + avg, s.closed + 1);
                (s.open, s.area) = (s.open + 1, 0);
            }
        }
    }

    /// (largest, mean) over the switches with a closed interval: the largest
    /// average of any, and the mean of each one's mean average.
    fn result(&self) -> Option<(f64, f64)> {
        let done: Vec<&IntervalAverages> = self.switches.iter().filter(|s| s.closed > 0).collect();
        if done.is_empty() {
            return None;
        }
        let max = done.iter().map(|s| s.max).fold(0.0, f64::max);
        let mean = done.iter().map(|s| s.sum / s.closed as f64).sum::<f64>() / done.len() as f64;
        Some((max, mean))
    }
}

/// The levels of chosen switch ports on a time grid (`output.queue_ports`,
/// `output.queue_interval_us`; queue_series.csv). Sampled from the changes
/// [`Occupancy::update`] sees, so recording schedules no event and changes
/// nothing else in the run.
pub struct QueueSeries {
    interval: Time,
    watched: Vec<Watch>,
    rows: Vec<QueueSample>,
}

struct Watch {
    /// Index of the port in the fabric's ports, and its two ends.
    port: u32,
    node: u32,
    peer: u32,
    name: String,
    /// The next grid time not yet written.
    next: Time,
    /// The highest level since the previous grid time.
    max: u64,
    /// The control class's bytes since the last change.
    ctrl: u64,
    /// Time at each level since the end of warm-up, and the last change.
    levels: LevelTime,
    last: Time,
}

/// What [`Occupancy::finish_series`] gives: the watched ports' names, the
/// series' rows, and each port's level percentiles (in the order given).
#[derive(Default)]
pub struct FinishedSeries {
    pub names: Vec<String>,
    pub rows: Vec<QueueSample>,
    pub percentiles: Vec<QueuePercentiles>,
}

/// One row of queue_series.csv: at grid time `time`, port `port` (an index
/// into the names) held `bytes`, and at most `max_bytes` since the previous row;
/// `control_bytes` of them waited in its rate-limited control class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSample {
    pub time: Time,
    pub port: u32,
    pub bytes: u64,
    pub max_bytes: u64,
    pub control_bytes: u64,
}

impl QueueSample {
    pub const CSV_HEADER: &'static str = "time_us,port,bytes,max_bytes,control_bytes";

    pub fn csv_row(&self, names: &[String], out: &mut String) {
        use std::fmt::Write;
        let _ = writeln!(
            out,
            "{:.6},{},{},{},{}",
            self.time as f64 / 1e6,
            names[self.port as usize],
            self.bytes,
            self.max_bytes,
            self.control_bytes
        );
    }
}

impl QueueSeries {
    /// Samples every `interval` ps from time 0 the ports given as (index in
    /// the fabric's ports, its node, its peer, its name).
    pub fn new(interval: Time, ports: Vec<(u32, u32, u32, String)>) -> Self {
        let watched = ports
            .into_iter()
            .map(|(port, node, peer, name)| Watch {
                port,
                node,
                peer,
                name,
                next: 0,
                max: 0,
                ctrl: 0,
                levels: LevelTime::default(),
                last: 0,
            })
            .collect();
        QueueSeries { interval: interval.max(1), watched, rows: Vec::new() }
    }

    /// Port `port` went from `old` to `port.bytes` at `now` (its control class
    /// to `port.control_bytes()`): the grid times before `now` saw the old levels.
    fn change(&mut self, now: Time, port: &Port, old: u64) {
        let Some(i) = self.watched.iter().position(|w| w.node == port.node && w.peer == port.peer) else {
            return;
        };
        let interval = self.interval;
        let w = &mut self.watched[i];
        w.levels.add(old, now - w.last);
        w.last = now;
        while w.next < now {
            let max_bytes = w.max.max(old);
            self.rows.push(QueueSample { time: w.next, port: i as u32, bytes: old, max_bytes, control_bytes: w.ctrl });
            w.max = old;
            w.next += interval;
        }
        w.max = w.max.max(port.bytes);
        w.ctrl = port.control_bytes();
    }

    /// The end of warm-up: the level percentiles start again (the series does not).
    fn reset_levels(&mut self, now: Time) {
        for w in &mut self.watched {
            w.levels.clear();
            w.last = now;
        }
    }

    /// The rows up to and including `end`, in time order (ports in the
    /// order given at each time), the ports' names and level percentiles.
    fn finish(mut self, end: Time, ports: &[Port]) -> FinishedSeries {
        for (i, w) in self.watched.iter_mut().enumerate() {
            let (bytes, control_bytes) = (ports[w.port as usize].bytes, ports[w.port as usize].control_bytes());
            w.levels.add(bytes, end.saturating_sub(w.last));
            while w.next <= end {
                let max_bytes = w.max.max(bytes);
                self.rows.push(QueueSample { time: w.next, port: i as u32, bytes, max_bytes, control_bytes });
                w.max = bytes;
                w.next += self.interval;
            }
        }
        self.rows.sort_by_key(|r| (r.time, r.port));
        let percentiles = self.watched.iter().map(|w| w.levels.percentiles()).collect();
        FinishedSeries { names: self.watched.into_iter().map(|w| w.name).collect(), rows: self.rows, percentiles }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::net::fifo::Fifos;

    /// Interval averages of a ToR's bytes: exact integrals per interval, an
    /// unfinished last interval left out, the window starting at the reset.
    #[test]
    fn tor_averages_integrate_each_interval() {
        let mut a = TorAverages::new(10, 2);
        a.reset(100);
        a.add(0, 999, 50, 100); // before the window: nothing
        a.add(0, 100, 100, 115); // interval 0 at 100; 5 ps of interval 1
        a.add(0, 300, 115, 120); // closes interval 1: (100 x 5 + 300 x 5) / 10 = 200
        a.add(0, 40, 120, 145); // intervals 2, 3 at 40; 5 ps of 4, never closed
        assert_eq!(a.switches[0].closed, 4);
        assert_eq!(a.result(), Some((200.0, (100.0 + 200.0 + 40.0 + 40.0) / 4.0)), "switch 1 has no interval");
        a.reset(200);
        assert_eq!(a.result(), None, "no closed interval, no figure");
    }

    /// Ports of switch 1 towards `peers` (host 0 is the only host), recorded
    /// from `since`, offered one 1,000 B packet at each (port, time) of `offers`.
    fn switch_ports(peers: &[u32], occ: &mut Occupancy, since: Time, offers: &[(usize, u64)]) -> (Fifos, Vec<Port>) {
        let mut fifos = Fifos::new();
        let mut ports: Vec<Port> =
            peers.iter().map(|&p| Port::new(&mut fifos, 1, p, 100_000_000_000, 1000, 1, 1 << 20, 1 << 20)).collect();
        occ.reset(since, &mut ports);
        for &(i, t) in offers {
            let old = ports[i].bytes;
            ports[i].offer(&mut fifos, t as u32, 1000, 0);
            occ.update(t, &mut ports[i], old);
        }
        (fifos, ports)
    }

    #[test]
    fn records_follow_the_ports_and_a_bypass_is_caught() {
        // Host 0 and switch 1 (one switch, two ports).
        let mut occ = Occupancy::new(1, &[false]);
        let (_, mut ports) = switch_ports(&[0, 0], &mut occ, 0, &[(0, 10), (1, 20), (1, 30)]);
        assert_eq!(occ.mismatch(&ports), None);
        assert_eq!((occ.switches[0].max(), ports[1].occupancy.max()), (3000, 2000));
        // Switch time integral: 1000 B over [10, 20), 2000 B over [20, 30), 3000 B to 40.
        assert_eq!(occ.switches[0].mean(10, 40), (10_000.0 + 20_000.0 + 30_000.0) / 30.0);
        ports[0].bytes -= 1000; // a change that bypasses `update`
        assert_eq!(occ.mismatch(&ports), Some((0, 3000, 2000)));
    }

    /// Port 0 of switch 1 (towards host 0), sampled every 10 ps: 1,000 B
    /// arrive at 10 (on a sample time: the sample sees them) and at 25, and
    /// the series runs to 30; port 1 is not watched.
    #[test]
    fn queue_series_samples_the_level_after_each_grid_time_and_the_max_between() {
        let mut occ = Occupancy::new(1, &[false]);
        occ.keep_series(QueueSeries::new(10, vec![(0, 1, 0, "switch0->host0".into())]));
        let (_, ports) = switch_ports(&[0, 2], &mut occ, 0, &[(0, 10), (1, 12), (0, 25)]);
        let f = occ.finish_series(30, &ports);
        assert_eq!(f.names, ["switch0->host0"]);
        let got: Vec<(Time, u64, u64)> = f.rows.iter().map(|r| (r.time, r.bytes, r.max_bytes)).collect();
        assert_eq!(got, [(0, 0, 0), (10, 1000, 1000), (20, 1000, 1000), (30, 2000, 2000)]);
        // Time at each level of the watched port: 0 B for 10 ps, 1,000 B for 15, 2,000 B for 5.
        let p = f.percentiles[0];
        assert_eq!((p.p50, p.p90, p.p99), (1000, 2000, 2000));
    }

    /// A watched port's level percentiles count only the measurement window.
    #[test]
    fn watched_port_percentiles_start_at_the_end_of_warm_up() {
        let mut occ = Occupancy::new(1, &[false]);
        occ.keep_series(QueueSeries::new(10, vec![(0, 1, 0, "switch0->host0".into())]));
        // 0 B until 10, then 1,000 B; warm-up ends at 12.
        let (_, mut ports) = switch_ports(&[0, 2], &mut occ, 0, &[(0, 10)]);
        occ.reset(12, &mut ports);
        let f = occ.finish_series(14, &ports);
        assert_eq!(f.percentiles[0].p50, 1000, "the 10 ps at 0 B were before the window");
    }

    /// A ToR (switch 1) with a downlink to host 0 and an uplink to switch 2:
    /// each downlink level and each total is held for a known time.
    #[test]
    fn tor_level_histograms_follow_downlinks_and_totals() {
        let mut occ = Occupancy::new(1, &[true, false]);
        occ.keep_levels();
        // Reset at 100; downlink 1,000 B from 110, uplink 1,000 B from 130, downlink 2,000 B from 160.
        let (_, mut ports) = switch_ports(&[0, 2], &mut occ, 100, &[(0, 110), (1, 130), (0, 160)]);
        let p = occ.level_percentiles(200, &ports);
        // Downlink: 0 B for 10 ps, 1,000 B for 50, 2,000 B for 40.
        assert_eq!((occ.downlinks().total(), occ.downlinks().at(0)), (100, 10));
        assert_eq!((p.downlink.p50, p.downlink.p90, p.downlink.p999), (1000, 2000, 2000));
        // ToR total: 0 B for 10, 1,000 B for 20, 2,000 B for 30, 3,000 B (bucket [2,976, 3,008)) for 40.
        assert_eq!(occ.tors().total(), 100);
        assert_eq!((p.tor.p50, p.tor.p90), (2000, 2976));
        // The end of warm-up forgets them.
        occ.reset(300, &mut ports);
        assert_eq!((occ.downlinks().total(), occ.tors().total()), (0, 0));
    }
}
