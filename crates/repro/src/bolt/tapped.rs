//! Measurements that need per-packet arrivals (Table 4.1's utilization between
//! completions, Fig. 4.11's capture time): each point of the sweep is run again
//! with its hosts tapped ([`fabriclab::transport::tap`]); these runs take milliseconds.
//!
//! [`derive_tapped`] re-runs each point once (the sweep file's own seeds, as
//! PayDebt uses it); [`derive_tapped_per_seed`] re-runs each point once per seed
//! of the sweep that ran, so the claims can read the tapped values seed by seed.

use crate::{root, write, Tables};
use fabriclab::config::Config;
use fabriclab::net::program::P_DATA;
use fabriclab::net::wire::CONTROL_WIRE;
use fabriclab::sim::run_tapped;
use fabriclab::sweep::{expand, Cell, SweepSpec, Table};
use fabriclab::transport::tap::{utilization, Arrival};

type Time = u64;
const US: Time = 1_000_000;
use std::path::Path;

type Row = Vec<(String, Cell)>;

/// The seeds axis of a sweep table.
const SEED_KEY: &str = "run.seed";

/// Extra columns from a tapped run.
pub type Measure = fn(&Config, &fabriclab::sim::RunOutput, &[Arrival]) -> Row;

/// For each `(sweep, measure)` of `runs` whose table `t` holds: re-runs the points
/// of experiments/repro/`paper`/`sweep`.toml tapped, writes `out`/`sweep`.csv and
/// keeps the table in [`derived`] for the claims.
pub fn derive_tapped(t: &Tables, out: &Path, paper: &str, runs: &[(&'static str, Measure)]) -> Result<(), String> {
    for &(name, measure) in runs {
        if t.contains_key(name) {
            let file = root().join("experiments/repro").join(paper).join(format!("{name}.toml"));
            let table = rerun(&file, measure)?;
            write(&out.join(format!("{name}.csv")), &table.to_csv())?;
            derived().insert(name, table);
        }
    }
    Ok(())
}

/// As [`derive_tapped`], once per seed of the sweep's table (its `run.seed`
/// column; the sweep file's seeds if it has none). The table kept in
/// [`derived`] has every seed's rows, each with its `run.seed` and the tapped
/// run's own `stable` flag; `out`/`sweep`.csv, which the figures draw, holds
/// the first seed's rows only (one row per point, as the figures expect).
pub fn derive_tapped_per_seed(
    t: &Tables,
    out: &Path,
    paper: &str,
    runs: &[(&'static str, Measure)],
) -> Result<(), String> {
    for &(name, measure) in runs {
        let Some(ran) = t.get(name) else { continue };
        let file = root().join("experiments/repro").join(paper).join(format!("{name}.toml"));
        let mut spec = SweepSpec::load(&file).map_err(|e| e.to_string())?;
        let mut seeds: Vec<u64> =
            (0..ran.rows.len()).filter_map(|r| ran.get(r, SEED_KEY).as_f64()).map(|s| s as u64).collect();
        seeds.sort_unstable();
        seeds.dedup();
        if !seeds.is_empty() {
            spec.seeds = seeds;
        }
        let table = rerun_spec(&spec, measure, true)?;
        write(&out.join(format!("{name}.csv")), &first_seed(&table).to_csv())?;
        derived().insert(name, table);
    }
    Ok(())
}

/// The rows of the lowest seed in `t` (all rows if it has no seed column).
fn first_seed(t: &Table) -> Table {
    let seed = |r: usize| t.get(r, SEED_KEY).as_f64();
    let Some(first) = (0..t.rows.len()).filter_map(seed).reduce(f64::min) else { return t.clone() };
    let rows = (0..t.rows.len()).filter(|&r| seed(r) == Some(first)).map(|r| t.rows[r].clone()).collect();
    Table { columns: t.columns.clone(), rows }
}

/// The tables [`derive_tapped`] computed in this process, by sweep name.
pub fn derived() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<&'static str, Table>> {
    static D: std::sync::Mutex<std::collections::BTreeMap<&'static str, Table>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    D.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs every point of the sweep file `file` tapped; `measure` turns a run into extra columns.
pub fn rerun(file: &Path, measure: Measure) -> Result<Table, String> {
    let spec = SweepSpec::load(file).map_err(|e| e.to_string())?;
    rerun_spec(&spec, measure, false)
}

/// Runs every point of `spec` tapped; with `stable`, each row also gets the run's `stable` flag.
fn rerun_spec(spec: &SweepSpec, measure: Measure, stable: bool) -> Result<Table, String> {
    let mut rows = Vec::new();
    for p in expand(spec).map_err(|e| e.to_string())? {
        let cfg = Config::load(&p.base, &p.overrides).map_err(|e| e.to_string())?;
        let (out, log) = run_tapped(&cfg).map_err(|e| e.to_string())?;
        let mut row: Row = p.swept.iter().map(|(k, v)| (k.clone(), Cell::from_toml(v))).collect();
        row.extend(measure(&cfg, &out, &log));
        if stable {
            row.push(("stable".into(), Cell::Bool(out.summary.stable)));
        }
        rows.push(row);
    }
    Ok(Table::from_records(&rows))
}

/// Table 4.1: utilization of the receiver's (host 0's) link between the first and the last completion.
pub fn utilization_between_completions(cfg: &Config, out: &fabriclab::sim::RunOutput, log: &[Arrival]) -> Row {
    let ends: Vec<Time> = out.messages.iter().filter_map(|m| m.end_ps).collect();
    let (first, last) = (ends.iter().min().copied().unwrap_or(0), ends.iter().max().copied().unwrap_or(0));
    let rate = cfg.topology.build().host_rate_bps(0);
    let u =
        utilization(log, rate, first, last, |a| a.host == 0 && (a.prog & P_DATA != 0 || a.wire_bytes > CONTROL_WIRE));
    vec![
        ("utilization".into(), Cell::Float(u)),
        ("first_completion_us".into(), Cell::Float(first as f64 / US as f64)),
        ("last_completion_us".into(), Cell::Float(last as f64 / US as f64)),
        ("completed".into(), Cell::Float(ends.len() as f64)),
    ]
}

/// Fig. 4.11: after message 1 completes, how long until message 0's window
/// reaches the one that fills the link on its own ([`window_capture`], the
/// thesis's measure: "captures the available bandwidth", "reach the stable
/// value"); `rate_capture_us` keeps the arrival-rate measure of [`capture_after`],
/// and the `series` columns its throughput per microsecond around the completion.
pub fn capture_after_completion(cfg: &Config, out: &fabriclab::sim::RunOutput, log: &[Arrival]) -> Row {
    let t_c = out.messages.get(1).and_then(|m| m.end_ps).unwrap_or(0);
    let mut row = vec![("completion_us".into(), Cell::Float(t_c as f64 / US as f64))];
    let mut rate = capture_after(cfg, out, log, t_c);
    for (k, _) in rate.iter_mut() {
        if k == "capture_us" {
            *k = "rate_capture_us".into();
        }
    }
    row.push(("capture_us".into(), window_capture(cfg, out, t_c).map_or(Cell::Null, Cell::Float)));
    row.extend(rate);
    row
}

/// Fraction of the BDP at which a window counts as filling the link alone:
/// HPCC aims at eta = 95% of the line rate, so its full window is 0.95 BDP;
/// 0.9 leaves it the same margin as the others.
const FULL_WINDOW_OF_BDP: f64 = 0.9;

/// Microseconds from `t_c` until the sender of message 0 has a window of at
/// least [`FULL_WINDOW_OF_BDP`] x BDP (`network.bdp_bytes`), read from its `cwnd`
/// trace (the sweep file sets `output.traces`); 0 if it already had one at `t_c`
/// (PRU ramps up one RTT ahead), None if it never does before the message ends
/// or the run has no trace. A standing queue draining at line rate keeps the
/// link busy after a completion without the window growing (Swift), so the
/// arrival rate alone would call that a capture; the window is what the thesis
/// plots (Figs. 4.4 and 4.11: "cwnd of the remaining flow").
fn window_capture(cfg: &Config, out: &fabriclab::sim::RunOutput, t_c: Time) -> Option<f64> {
    use fabriclab::metrics::trace::TraceKind;
    let m = out.messages.first()?;
    let end = m.end_ps.unwrap_or(Time::MAX);
    let full = FULL_WINDOW_OF_BDP * cfg.network.bdp_bytes as f64;
    let cwnd: Vec<(Time, f64)> = out
        .traces
        .iter()
        .filter(|r| r.host == m.src && r.kind == TraceKind::Cwnd && r.time <= end)
        .map(|r| (r.time, r.value))
        .collect();
    let before = cwnd.iter().take_while(|(t, _)| *t <= t_c).last();
    if before.is_some_and(|(_, w)| *w >= full) {
        return Some(0.0);
    }
    cwnd.iter().find(|(t, w)| *t > t_c && *w >= full).map(|(t, _)| (t - t_c) as f64 / US as f64)
}

/// Fig. 4.12: as [`capture_after_completion`], from the last link event (the
/// reroute that takes message 1 off the bottleneck).
pub fn capture_after_reroute(cfg: &Config, out: &fabriclab::sim::RunOutput, log: &[Arrival]) -> Row {
    let at_us = cfg.network.events.iter().map(|e| e.at_us).fold(0.0, f64::max);
    let mut row = vec![("reroute_us".into(), Cell::Float(at_us))];
    row.extend(capture_after(cfg, out, log, (at_us * US as f64).round() as Time));
    row
}

/// How long after `t_c` message 0 runs at >= 95% of the bottleneck (the slowest link),
/// sustained over 10 us, and its throughput in 1 us bins from 50 us before `t_c`.
fn capture_after(cfg: &Config, out: &fabriclab::sim::RunOutput, log: &[Arrival], t_c: Time) -> Row {
    let src = out.messages.first().map_or(0, |m| m.src);
    let dst = out.messages.first().map_or(0, |m| m.dst);
    let rate = cfg.topology.build().links.iter().map(|l| l.rate_bps).min().unwrap_or(0) as f64;
    let gbps_in = |from: Time| {
        let bytes: u64 = log
            .iter()
            .filter(|a| {
                a.host == dst && a.src == src && a.wire_bytes > CONTROL_WIRE && a.time > from && a.time <= from + US
            })
            .map(|a| a.wire_bytes as u64)
            .sum();
        bytes as f64 * 8.0 / 1e-6 / 1e9
    };
    let end = out.messages.first().and_then(|m| m.end_ps).unwrap_or(t_c);
    // Sustained: the mean over the next 10 us, so one bursty bin does not count.
    let sustained = |k: Time| (0..10).map(|j| gbps_in(t_c + (k + j) * US)).sum::<f64>() / 10.0;
    let capture = (0..(end.saturating_sub(t_c) / US).saturating_sub(10)).find(|&k| sustained(k) * 1e9 >= 0.95 * rate);
    let series: Vec<String> =
        (0..450).map(|k| format!("{:.2}", gbps_in((t_c + k * US).saturating_sub(50 * US)))).collect();
    vec![
        ("capture_us".into(), capture.map_or(Cell::Null, |k| Cell::Float(k as f64))),
        ("base_rtt_us".into(), Cell::Float(fabriclab_base_rtt_us(cfg))),
        ("series_gbps_from_minus_50us".into(), Cell::Str(series.join(" "))),
    ]
}

/// The unloaded RTT of the run's fabric for a full packet, microseconds.
fn fabriclab_base_rtt_us(cfg: &Config) -> f64 {
    let topo = cfg.topology.build();
    let mss = fabriclab::net::wire::mss(cfg.network.mtu);
    fabriclab::net::Fabric::build_with(topo, 1, u64::MAX, u64::MAX, None)
        .map(|f| f.base_rtt(mss) as f64 / US as f64)
        .unwrap_or(f64::NAN)
}

/// Cumulative bytes over time: `(time, bytes arrived up to and including it)`,
/// in time order, so the bytes of any interval are two binary searches.
type Cumulative = Vec<(Time, u64)>;

/// The data arrivals in `log` that `keep` selects, as a [`Cumulative`].
fn cumulative(log: &[Arrival], keep: impl Fn(&Arrival) -> bool) -> Cumulative {
    let mut sum = 0u64;
    let mut c: Cumulative =
        log.iter().filter(|a| a.wire_bytes > CONTROL_WIRE && keep(a)).map(|a| (a.time, a.wire_bytes as u64)).collect();
    c.sort_by_key(|&(t, _)| t);
    for x in c.iter_mut() {
        sum += x.1;
        x.1 = sum;
    }
    c
}

/// Bytes of `c` that arrived in `(from, to]`.
fn bytes_in(c: &[(Time, u64)], from: Time, to: Time) -> u64 {
    let upto = |t: Time| c.partition_point(|&(x, _)| x <= t).checked_sub(1).map_or(0, |k| c[k].1);
    upto(to).saturating_sub(upto(from))
}

/// The largest queue sample in `[from, to]` and its time, then the first later
/// sample holding at most `empty` bytes (None: the queue never drained before the
/// samples end). None if no sample lies in `[from, to]`.
fn peak_and_drain(series: &[(Time, u64)], from: Time, to: Time, empty: u64) -> Option<((Time, u64), Option<Time>)> {
    let (k, &(t, peak)) = series.iter().enumerate().filter(|(_, (t, _))| *t >= from && *t <= to).fold(
        None,
        |best: Option<(usize, &(Time, u64))>, (k, x)| match best {
            Some((_, b)) if b.1 >= x.1 => best,
            _ => Some((k, x)),
        },
    )?;
    let drained = series[k + 1..].iter().find(|(_, b)| *b <= empty).map(|&(t, _)| t);
    Some(((t, peak), drained))
}

/// The lowest utilization of a link of `rate_bps` by the bytes of `c` over a
/// window of `window`, slid in steps of `step` from `from` while it ends by `to`:
/// (utilization, window start). None if no window fits.
fn min_window_utilization(
    c: &[(Time, u64)],
    rate_bps: f64,
    from: Time,
    to: Time,
    window: Time,
    step: Time,
) -> Option<(f64, Time)> {
    if window == 0 || step == 0 || to < from.saturating_add(window) {
        return None;
    }
    let capacity = rate_bps / 8.0 * (window as f64 / US as f64 / 1e6);
    let mut best: Option<(f64, Time)> = None;
    let mut a = from;
    while a + window <= to {
        let u = bytes_in(c, a, a + window) as f64 / capacity;
        if best.is_none_or(|(b, _)| u < b) {
            best = Some((u, a));
        }
        a += step;
    }
    best
}

/// Figs. 4.6/4.10 (R15): a flow joins (the last message to start) while the
/// other runs; the bottleneck queue (`output.queue_ports`' first port) from the
/// join to the first completion: its peak, when it is drained again (at most one
/// full packet), the lowest utilization over one unloaded RTT from the drain to
/// one RTT before the completion; and, for the figure, the queue and each flow's
/// throughput at the receiver in 1 us bins.
pub fn arrival_dynamics(cfg: &Config, out: &fabriclab::sim::RunOutput, log: &[Arrival]) -> Row {
    let m = &out.messages;
    let join = m.iter().map(|x| x.start_ps).max().unwrap_or(0);
    let end_run = (cfg.run.duration_ms * 1e3 * US as f64) as Time;
    let first_end = m.iter().filter_map(|x| x.end_ps).min().unwrap_or(end_run);
    let series: Vec<(Time, u64)> = out.queue_series.iter().filter(|s| s.port == 0).map(|s| (s.time, s.bytes)).collect();
    let rtt_us = fabriclab_base_rtt_us(cfg);
    let rtt = (rtt_us * US as f64).round() as Time;
    let full = fabriclab::net::wire::data_wire(fabriclab::net::wire::mss(cfg.network.mtu)) as u64;
    let rate = cfg.topology.build().links.iter().map(|l| l.rate_bps).min().unwrap_or(0) as f64;
    let dst = m.first().map_or(0, |x| x.dst);
    let all = cumulative(log, |a| a.host == dst);
    let found = peak_and_drain(&series, join, first_end, full);
    let drained = found.and_then(|(_, d)| d);
    let low = drained.and_then(|d| min_window_utilization(&all, rate, d, first_end.saturating_sub(rtt), rtt, US / 10));
    let us_cell = |t: Option<Time>| t.map_or(Cell::Null, |t| Cell::Float(t as f64 / US as f64));
    let mut row = vec![
        ("join_us".into(), Cell::Float(join as f64 / US as f64)),
        ("completion_us".into(), Cell::Float(first_end as f64 / US as f64)),
        ("base_rtt_us".into(), Cell::Float(rtt_us)),
        ("peak_kb".into(), found.map_or(Cell::Null, |((_, q), _)| Cell::Float(q as f64 / 1e3))),
        ("peak_us".into(), us_cell(found.map(|((t, _), _)| t))),
        ("drained_us".into(), us_cell(drained)),
        ("drain_rtts".into(), drained.map_or(Cell::Null, |d| Cell::Float((d - join) as f64 / US as f64 / rtt_us))),
        ("min_util".into(), low.map_or(Cell::Null, |(u, _)| Cell::Float(u))),
        ("min_util_at_us".into(), us_cell(low.map(|(_, a)| a))),
    ];
    // The figure: the queue (KB) at each microsecond, each flow's Gb/s per microsecond.
    let steps = end_run / US;
    let queue: Vec<String> = (0..steps)
        .map(|k| {
            let i = series.partition_point(|&(t, _)| t <= k * US);
            format!("{:.1}", i.checked_sub(1).map_or(0, |i| series[i].1) as f64 / 1e3)
        })
        .collect();
    row.push(("series_queue_kb".into(), Cell::Str(queue.join(" "))));
    for (i, x) in m.iter().enumerate() {
        let c = cumulative(log, |a| a.host == x.dst && a.src == x.src);
        let gbps: Vec<String> =
            (0..steps).map(|k| format!("{:.2}", bytes_in(&c, k * US, (k + 1) * US) as f64 * 8.0 / 1e3)).collect();
        row.push((format!("series_gbps_flow{i}"), Cell::Str(gbps.join(" "))));
    }
    row
}

/// When each flow of `flows` (start, bytes) would complete under an exact fair
/// share (processor sharing) of `bytes_per_s`, in ps (all 0 for a rate that is
/// not a positive number).
fn fair_share_completions(flows: &[(Time, u64)], bytes_per_s: f64) -> Vec<Time> {
    let per_ps = bytes_per_s / US as f64 / 1e6;
    if !(per_ps > 0.0 && per_ps.is_finite()) {
        return vec![0; flows.len()];
    }
    let mut left: Vec<f64> = flows.iter().map(|&(_, b)| b as f64).collect();
    let mut done: Vec<Option<Time>> = vec![None; flows.len()];
    let mut now = flows.iter().map(|&(s, _)| s).min().unwrap_or(0) as f64;
    while done.iter().any(Option::is_none) {
        let active: Vec<usize> = (0..flows.len()).filter(|&i| done[i].is_none() && flows[i].0 as f64 <= now).collect();
        let next_start = flows.iter().map(|&(s, _)| s as f64).filter(|&s| s > now).fold(f64::INFINITY, f64::min);
        if active.is_empty() {
            now = next_start;
            continue;
        }
        let share = per_ps / active.len() as f64;
        let first_done = active.iter().map(|&i| left[i] / share).fold(f64::INFINITY, f64::min);
        let dt = first_done.min(next_start - now);
        if !dt.is_finite() {
            break;
        }
        for &i in &active {
            left[i] -= share * dt;
            if left[i] <= 1e-6 * flows[i].1.max(1) as f64 {
                done[i] = Some((now + dt).round() as Time);
            }
        }
        now += dt;
    }
    done.into_iter().map(|d| d.unwrap_or(0)).collect()
}

/// Jain's fairness index of `xs`: (sum x)^2 / (n sum x^2); 1 when all are equal.
fn jain(xs: &[f64]) -> f64 {
    let (s, s2) = xs.iter().fold((0.0, 0.0), |(s, s2), x| (s + x, s2 + x * x));
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (xs.len() as f64 * s2)
}

/// From `from` (an event), bins of `bin` up to `to`: the time from `from` to the
/// first bin after which every flow of `flows` (each a [`Cumulative`]) stays within
/// `tol` (relative) of `fair` bytes per bin in every bin; None if the last bin is
/// not within it, or no bin fits.
fn convergence(flows: &[&[(Time, u64)]], from: Time, to: Time, bin: Time, fair: f64, tol: f64) -> Option<Time> {
    let n = to.saturating_sub(from) / bin.max(1);
    let within = |k: Time| {
        let (a, b) = (from + k * bin, from + (k + 1) * bin);
        flows.iter().all(|c| (bytes_in(c, a, b) as f64 - fair).abs() <= tol * fair)
    };
    let mut first = None;
    for k in (0..n).rev() {
        if !within(k) {
            break;
        }
        first = Some(k * bin);
    }
    first
}

/// Per-flow throughput bins for Fig. 4.15, microseconds.
const FAIR_BIN_US: Time = 100;
/// "Within the fair share": every flow within 10% of it.
const FAIR_TOLERANCE: f64 = 0.1;

/// Fig. 4.15 (R19): flows join and leave (complete) one by one; after each join
/// and each completion but the last, how long until every active flow stays
/// within [`FAIR_TOLERANCE`] of the fair share (100 Gb/s / active flows, wire
/// bytes at its receiver in [`FAIR_BIN_US`] bins) up to the next event; Jain's
/// index over the second half of each interval with two or more flows; each
/// completion against the one an exact fair share of the bottleneck's goodput
/// gives; and each flow's throughput series for the figure.
pub fn fair_share(cfg: &Config, out: &fabriclab::sim::RunOutput, log: &[Arrival]) -> Row {
    let m = &out.messages;
    let rate = cfg.topology.build().links.iter().map(|l| l.rate_bps).min().unwrap_or(0) as f64;
    let mss = fabriclab::net::wire::mss(cfg.network.mtu);
    let goodput = rate / 8.0 * mss as f64 / fabriclab::net::wire::data_wire(mss) as f64;
    let flows: Vec<Cumulative> = m.iter().map(|x| cumulative(log, |a| a.host == x.dst && a.src == x.src)).collect();
    let end_run = (cfg.run.duration_ms * 1e3 * US as f64) as Time;
    // Events: every start but the first, every completion but the last.
    let mut starts: Vec<Time> = m.iter().map(|x| x.start_ps).collect();
    starts.sort_unstable();
    let mut ends: Vec<Time> = m.iter().filter_map(|x| x.end_ps).collect();
    ends.sort_unstable();
    let last_end = if ends.len() == m.len() { ends.pop() } else { None };
    let mut events: Vec<Time> = starts.iter().skip(1).chain(ends.iter()).copied().collect();
    events.sort_unstable();
    let stop = last_end.unwrap_or(end_run);
    let active = |t: Time| -> Vec<usize> {
        (0..m.len()).filter(|&i| m[i].start_ps <= t && m[i].end_ps.is_none_or(|e| e > t)).collect()
    };
    let bin = FAIR_BIN_US * US;
    let (mut conv, mut jains) = (Vec::new(), Vec::new());
    for (k, &e) in events.iter().enumerate() {
        let next = events.get(k + 1).copied().unwrap_or(stop);
        let act = active(e);
        let fair = rate / 8.0 * (bin as f64 / US as f64 / 1e6) / act.len().max(1) as f64;
        let cs: Vec<&[(Time, u64)]> = act.iter().map(|&i| flows[i].as_slice()).collect();
        conv.push(convergence(&cs, e, next, bin, fair, FAIR_TOLERANCE));
        if act.len() >= 2 {
            let mid = e + (next - e) / 2;
            let xs: Vec<f64> = cs.iter().map(|c| bytes_in(c, mid, next) as f64).collect();
            jains.push(jain(&xs));
        }
    }
    let worst = if conv.iter().all(Option::is_some) {
        conv.iter().flatten().max().map_or(Cell::Null, |&t| Cell::Float(t as f64 / US as f64 / 1e3))
    } else {
        Cell::Null
    };
    let ideal = fair_share_completions(&m.iter().map(|x| (x.start_ps, x.size)).collect::<Vec<_>>(), goodput);
    let offset = if m.iter().all(|x| x.end_ps.is_some()) {
        let off = m.iter().zip(&ideal).map(|(x, &i)| x.end_ps.unwrap_or(0).abs_diff(i)).max().unwrap_or(0);
        Cell::Float(off as f64 / US as f64 / 1e3)
    } else {
        Cell::Null
    };
    let ms = |t: Time| format!("{:.3}", t as f64 / US as f64 / 1e3);
    let list = |v: Vec<String>| Cell::Str(v.join(" "));
    let mut row = vec![
        ("convergence_ms".into(), worst),
        ("events_ms".into(), list(events.iter().map(|&t| ms(t)).collect())),
        ("convergence_per_event_ms".into(), list(conv.iter().map(|c| c.map_or("never".into(), |t| ms(t))).collect())),
        ("jain_min".into(), jains.iter().copied().reduce(f64::min).map_or(Cell::Null, Cell::Float)),
        ("jain_per_interval".into(), list(jains.iter().map(|j| format!("{j:.4}")).collect())),
        ("completion_offset_ms".into(), offset),
        ("completions_ms".into(), list(m.iter().map(|x| x.end_ps.map_or("none".into(), ms)).collect())),
        ("fair_completions_ms".into(), list(ideal.iter().map(|&t| ms(t)).collect())),
        ("bin_us".into(), Cell::Float(FAIR_BIN_US as f64)),
    ];
    let bins = end_run / bin;
    for (i, c) in flows.iter().enumerate() {
        let gbps: Vec<String> = (0..bins)
            .map(|k| format!("{:.2}", bytes_in(c, k * bin, (k + 1) * bin) as f64 * 8.0 / (FAIR_BIN_US as f64 * 1e3)))
            .collect();
        row.push((format!("series_gbps_flow{i}"), Cell::Str(gbps.join(" "))));
    }
    row
}

#[cfg(test)]
mod dynamics_tests;
