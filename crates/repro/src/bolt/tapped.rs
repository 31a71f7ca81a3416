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
