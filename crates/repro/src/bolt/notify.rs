//! Fig. 4.2 (Arslan thesis §4.2.1, experiment E1): how long the bottleneck
//! queue takes to drain after a second Swift flow joins, by where Swift's
//! congestion notification is generated and how late it arrives.
//!
//! The sweep `fig4_2` runs the right panel (`protocol.swift.notify` =
//! receiver / egress / ingress, notifications through the network); this step
//! re-runs each of its points, and the left panel's (ingress, delivered after
//! each of [`DELAYS_US`]), once per seed of the sweep, with the bottleneck
//! queue recorded, and measures [`drain_time`].

use super::tapped::derived;
use crate::{root, write, Tables};
use fabriclab::config::Config;
use fabriclab::sim::RunOutput;
use fabriclab::sweep::{expand, Cell, SweepSpec, Table};
use std::path::Path;

type Time = u64;
const US: Time = 1_000_000;

/// The left panel's constant notification delays (us): the x-axis of the
/// authors' notebook (Swift-feedbackDelay-benchmark-withArtificialDelay.ipynb).
pub const DELAYS_US: [f64; 6] = [0.0, 1.0, 2.0, 4.0, 8.0, 16.0];

/// The queue's two-flow level is its median over this window after the join.
const LEVEL_FROM: Time = 500 * US;
const LEVEL_TO: Time = 1500 * US;

/// Re-runs Fig. 4.2's points per seed of the `fig4_2` table in `t`, writes
/// `out`/fig4_2.csv (first seed) and keeps every seed's rows in [`derived`].
pub fn derive(t: &Tables, out: &Path) -> Result<(), String> {
    let Some(ran) = t.get("fig4_2") else { return Ok(()) };
    let file = root().join("experiments/repro/bolt/fig4_2.toml");
    let mut spec = SweepSpec::load(&file).map_err(|e| e.to_string())?;
    let mut seeds: Vec<u64> =
        (0..ran.rows.len()).filter_map(|r| ran.get(r, "run.seed").as_f64()).map(|s| s as u64).collect();
    seeds.sort_unstable();
    seeds.dedup();
    if !seeds.is_empty() {
        spec.seeds = seeds;
    }
    let mut rows = Vec::new();
    for p in expand(&spec).map_err(|e| e.to_string())? {
        let seed = p.swept.iter().find(|(k, _)| k == "run.seed").map(|(_, v)| Cell::from_toml(v)).unwrap_or(Cell::Null);
        let notify = p.swept.iter().find(|(k, _)| k == "protocol.swift.notify").map(|(_, v)| Cell::from_toml(v));
        let notify = notify.unwrap_or(Cell::Null);
        let mut runs = vec![("where", notify.clone(), Cell::Null, p.overrides.clone())];
        if notify == Cell::Str("ingress".into()) {
            for d in DELAYS_US {
                let mut o = p.overrides.clone();
                o.push(format!("protocol.swift.notify_delay_us={d:?}"));
                runs.push(("delay", notify.clone(), Cell::Float(d), o));
            }
        }
        for (panel, notify, delay, mut overrides) in runs {
            overrides.push("output.messages=true".into());
            let cfg = Config::load(&p.base, &overrides).map_err(|e| e.to_string())?;
            let run = fabriclab::sim::run(&cfg, &mut |_, _| {}).map_err(|e| e.to_string())?;
            let mut row = vec![
                ("panel".to_string(), Cell::Str(panel.into())),
                ("protocol.swift.notify".into(), notify),
                ("notify_delay_us".into(), delay),
                ("run.seed".into(), seed.clone()),
            ];
            row.extend(measure(&run));
            rows.push(row);
        }
    }
    let table = Table::from_records(&rows);
    write(&out.join("fig4_2.csv"), &first_seed(&table).to_csv())?;
    derived().insert("fig4_2", table);
    Ok(())
}

/// The rows of the lowest seed.
fn first_seed(t: &Table) -> Table {
    let seed = |r: usize| t.get(r, "run.seed").as_f64();
    let Some(first) = (0..t.rows.len()).filter_map(seed).reduce(f64::min) else { return t.clone() };
    let rows = (0..t.rows.len()).filter(|&r| seed(r) == Some(first)).map(|r| t.rows[r].clone()).collect();
    Table { columns: t.columns.clone(), rows }
}

/// The drain measurement of one run as columns: `drain_us` (Null only if the
/// run ended before the level's window), the peak and the two-flow level (KB), when the peak came
/// (us after the join), and the run's `stable` flag.
fn measure(run: &RunOutput) -> Vec<(String, Cell)> {
    let join = run.messages.get(1).map_or(0, |m| m.start_ps);
    let series: Vec<(Time, u64)> = run.queue_series.iter().map(|s| (s.time, s.bytes)).collect();
    let d = drain_time(&series, join);
    let kb = |b: u64| Cell::Float(b as f64 / 1e3);
    vec![
        ("drain_us".into(), d.end.map_or(Cell::Null, |e| Cell::Float((e - join) as f64 / US as f64))),
        ("peak_kb".into(), kb(d.peak)),
        ("peak_after_join_us".into(), Cell::Float(d.peak_at.saturating_sub(join) as f64 / US as f64)),
        ("level_kb".into(), kb(d.level)),
        ("stable".into(), Cell::Bool(run.summary.stable)),
    ]
}

/// What [`drain_time`] found.
#[derive(Debug, PartialEq)]
pub struct Drain {
    /// The queue's two-flow level (bytes).
    pub level: u64,
    pub peak: u64,
    pub peak_at: Time,
    /// When the queue was first back at or below `level` after the peak.
    pub end: Option<Time>,
}

/// "Time to drain the congested queue" on a sampled queue `series` (time,
/// bytes) of one port, with the second flow joining at `join`: the queue peaks
/// within [`LEVEL_FROM`] of the join (first highest sample), and it is drained
/// when a later sample is at or below the level it holds with both flows at
/// steady state (the median sample from `join + LEVEL_FROM` to `join +
/// LEVEL_TO`). With all links at 100 Gb/s the first flow alone keeps no queue
/// (its NIC is as fast as the bottleneck), so the level before the join is a
/// single packet, which Swift with two flows never returns to: its target
/// keeps a standing queue.
pub fn drain_time(series: &[(Time, u64)], join: Time) -> Drain {
    let mut level: Vec<u64> =
        series.iter().filter(|(t, _)| *t >= join + LEVEL_FROM && *t < join + LEVEL_TO).map(|s| s.1).collect();
    level.sort_unstable();
    let level = level.get(level.len() / 2).copied().unwrap_or(0);
    let after = series.iter().filter(|(t, _)| *t >= join && *t < join + LEVEL_FROM);
    let (peak_at, peak) = after.fold((join, 0), |m, &(t, b)| if b > m.1 { (t, b) } else { m });
    let end = series.iter().find(|(t, b)| *t > peak_at && *b <= level).map(|s| s.0);
    Drain { level, peak, peak_at, end }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_ends_at_the_first_sample_back_at_the_two_flow_level() {
        // 1 us samples: the queue rises to 300 KB 40 us after the join at 100 us,
        // falls, dips to 100 KB at 70 us after it, then holds 110 KB (the level).
        let join = 100 * US;
        let at = |us: u64| join + us * US;
        let mut s: Vec<(Time, u64)> = (0..100).map(|i| (i * US, 1538)).collect();
        s.extend((0..=40).map(|i| (at(i), 1538 + i * 7_500)));
        s.extend((41..70).map(|i| (at(i), 250_000)));
        s.push((at(70), 100_000));
        s.extend((71..2000).map(|i| (at(i), 110_000)));
        let d = drain_time(&s, join);
        assert_eq!(d, Drain { level: 110_000, peak: 301_538, peak_at: at(40), end: Some(at(70)) });
        // Without the dip, the first sample at the level.
        let flat: Vec<(Time, u64)> = s.iter().map(|&(t, b)| (t, if t == at(70) { 250_000 } else { b })).collect();
        assert_eq!(drain_time(&flat, join).end, Some(at(71)));
    }
}
