//! PayDebt Fig. 11 (S5): per-flow throughput over time while eight flows join
//! and leave one bottleneck (experiments/repro/paydebt/fairness.toml), from the
//! tapped re-runs of fig11.toml ([`crate::bolt::tapped`]), and Jain's
//! fairness index over the intervals where the set of flows is stable.
//! Fig. 11c: PayDebt's token queue over time, from each fig11 point's own
//! queue_series.csv (`control_bytes` of the bottleneck's reverse port).

use crate::bolt::tapped::{self, Measure};
use crate::{Figure, Tables};
use fabriclab::config::Config;
use fabriclab::net::wire::CONTROL_WIRE;
use fabriclab::sim::RunOutput;
use fabriclab::sweep::Cell;
use fabriclab::transport::tap::Arrival;
use std::path::{Path, PathBuf};

/// Width of a throughput bin.
const BIN_PS: u64 = 100_000_000;
/// Bins left out after a flow joins or leaves, for the rates to settle (300 us,
/// 30 base RTTs).
const SETTLE_BINS: u64 = 3;

pub fn derive(t: &Tables, out: &Path) -> Result<(), String> {
    tapped::derive_tapped(t, out, "paydebt", &[("fig11", per_flow_rates as Measure)])?;
    token_queue(t, out)
}

pub fn figure_data(f: &Figure, out: &Path) -> PathBuf {
    match f.id {
        "fig11" => out.join("fig11.csv"),
        "fig11c" => out.join("fig11c.csv"),
        _ => crate::sweep_csv(f, out),
    }
}

/// The name under which [`token_queue`] keeps its table in [`tapped::derived`].
pub const TOKEN_TABLE: &str = "fig11c";
/// Width of fig11c.csv's bins.
const SERIES_BIN_US: f64 = 10.0;
/// Active flows from which the token queue is judged (the paper: it exceeds K_t
/// "when the third flow is injected", then converges).
const MIN_FLOWS: usize = 3;

/// Fig. 11c and S5's `token_queue_near_kt`: for each PayDebt point of the fig11
/// sweep (one per seed), the time-weighted mean of its token/debt queue at the
/// bottleneck's reverse port over the settled periods with >= [`MIN_FLOWS`]
/// active flows, from the point's queue_series.csv (`control_bytes`) and
/// messages.csv, over K_t (its config's `network.control_class`). Keeps one
/// row per seed as [`TOKEN_TABLE`]; writes the lowest seed's queue in
/// [`SERIES_BIN_US`] bins to fig11c.csv.
fn token_queue(t: &Tables, out: &Path) -> Result<(), String> {
    let Some(ran) = t.get("fig11") else { return Ok(()) };
    let points = out.join("sweeps").join("fig11").join("points");
    let mut rows = Vec::new();
    let mut series: Option<(f64, String)> = None;
    for r in 0..ran.rows.len() {
        let ok = ran.get(r, "status").as_str() == Some("ok");
        if !ok || ran.get(r, "protocol.name").as_str() != Some("paydebt") {
            continue;
        }
        let id = ran.get(r, "point").as_str().unwrap_or("?");
        let seed = ran.get(r, "run.seed").as_f64().unwrap_or(1.0);
        let mut row = vec![
            ("protocol.name".to_string(), Cell::Str("paydebt".into())),
            ("run.seed".to_string(), Cell::Float(seed)),
        ];
        // A point's files missing (one run before fairness.toml sampled the
        // token queue, resumed from an old output directory) leave the part
        // unmeasured with the reason, and the rest of the reproduction runs.
        match point_tokens(&points.join(id)) {
            Ok((k_t, samples, flows)) => {
                row.push(("k_t_bytes".into(), Cell::Float(k_t)));
                let q: Vec<(f64, f64)> = samples.iter().map(|s| (s[0], s[1])).collect();
                if let Some((mean, settled_us)) =
                    settled_mean(&q, &flows, MIN_FLOWS, SETTLE_BINS as f64 * BIN_PS as f64 / 1e6)
                {
                    row.push(("token_queue_mean_bytes".into(), Cell::Float(mean)));
                    row.push(("token_queue_kt".into(), Cell::Float(mean / k_t)));
                    row.push(("settled_us".into(), Cell::Float(settled_us)));
                }
                let lowest = match &series {
                    Some((s, _)) => seed < *s,
                    None => true,
                };
                if lowest {
                    series = Some((seed, binned_series(&samples, &flows, k_t)));
                }
            }
            Err(e) => row.push(("token_queue_error".into(), Cell::Str(e))),
        }
        rows.push(row);
    }
    if let Some((_, csv)) = series {
        crate::write(&out.join("fig11c.csv"), &csv)?;
    }
    tapped::derived().insert(TOKEN_TABLE, fabriclab::sweep::Table::from_records(&rows));
    Ok(())
}

/// K_t, the control class's samples (time_us, control_bytes, bytes) and the
/// flows' (start, end) in us (end infinite if unfinished) of a fig11 point.
type PointTokens = (f64, Vec<Vec<f64>>, Vec<(f64, f64)>);

fn point_tokens(dir: &Path) -> Result<PointTokens, String> {
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f)).map_err(|e| {
            format!(
                "{}/{f}: {e} (a fig11 point from before the token queue was sampled? remove it to re-run)",
                dir.display()
            )
        })
    };
    let k_t = control_threshold(&read("config.resolved.toml")?)?;
    let samples = columns(&read("queue_series.csv")?, &["time_us", "control_bytes", "bytes"])?;
    let msgs = columns(&read("messages.csv")?, &["start_us", "end_us"])?;
    let flows = msgs.iter().map(|m| (m[0], if m[1].is_nan() { f64::INFINITY } else { m[1] })).collect();
    Ok((k_t, samples, flows))
}

/// `network.control_class.ecn_threshold_bytes` of a resolved config (K_t in bytes).
fn control_threshold(resolved: &str) -> Result<f64, String> {
    let v: toml::Table = toml::from_str(resolved).map_err(|e| format!("config.resolved.toml: {e}"))?;
    v.get("network")
        .and_then(|n| n.get("control_class"))
        .and_then(|c| c.get("ecn_threshold_bytes"))
        .and_then(|k| k.as_integer())
        .map(|k| k as f64)
        .ok_or_else(|| "fig11: the run has no control class threshold (network.control_class)".into())
}

/// The named columns of a CSV text as numbers (an empty or unparsable cell is NaN).
fn columns(text: &str, want: &[&str]) -> Result<Vec<Vec<f64>>, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let idx: Vec<usize> = want
        .iter()
        .map(|w| header.iter().position(|h| h == w).ok_or(format!("no column {w} in {header:?}")))
        .collect::<Result<_, _>>()?;
    Ok(lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            idx.iter().map(|&i| f.get(i).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)).collect()
        })
        .collect())
}

/// Flows active at `t` (started, not yet completed), of `(start, end)` in us.
fn active(flows: &[(f64, f64)], t: f64) -> usize {
    flows.iter().filter(|&&(s, e)| s <= t && t < e).count()
}

/// The mean of the samples `(time_us, level)` (a uniform grid, so the
/// time-weighted mean) taken while at least `min_flows` flows are active and
/// no flow started or ended in the `settle_us` before; with the time they
/// cover (samples x spacing). None if no sample qualifies.
fn settled_mean(q: &[(f64, f64)], flows: &[(f64, f64)], min_flows: usize, settle_us: f64) -> Option<(f64, f64)> {
    let changes: Vec<f64> = flows.iter().flat_map(|&(s, e)| [s, e]).filter(|c| c.is_finite()).collect();
    let settled = |t: f64| changes.iter().all(|&c| c > t || c + settle_us <= t);
    let picked: Vec<f64> =
        q.iter().filter(|&&(t, _)| active(flows, t) >= min_flows && settled(t)).map(|&(_, v)| v).collect();
    let step = if q.len() > 1 { q[1].0 - q[0].0 } else { 0.0 };
    (!picked.is_empty()).then(|| (picked.iter().sum::<f64>() / picked.len() as f64, picked.len() as f64 * step))
}

/// fig11c.csv: the token queue in [`SERIES_BIN_US`] bins (mean and largest
/// sample), the port's whole queue (mean), the active flows and K_t.
fn binned_series(samples: &[Vec<f64>], flows: &[(f64, f64)], k_t: f64) -> String {
    use std::fmt::Write;
    let mut s =
        String::from("time_us,token_queue_bytes,token_queue_max_bytes,port_queue_bytes,active_flows,k_t_bytes\n");
    let mut i = 0;
    while i < samples.len() {
        let bin = (samples[i][0] / SERIES_BIN_US).floor();
        let j = i + samples[i..].iter().take_while(|x| (x[0] / SERIES_BIN_US).floor() == bin).count();
        let n = (j - i) as f64;
        let (tq, tmax, pq) =
            samples[i..j].iter().fold((0.0, 0.0f64, 0.0), |(a, m, b), x| (a + x[1], m.max(x[1]), b + x[2]));
        let t0 = bin * SERIES_BIN_US;
        let _ = writeln!(s, "{t0},{:.1},{tmax},{:.1},{},{k_t}", tq / n, pq / n, active(flows, t0));
        i = j;
    }
    s
}

/// Jain's index (sum x)^2 / (n sum x^2) of `x` (1 = equal shares).
pub fn jain(x: &[f64]) -> f64 {
    let (s, s2) = x.iter().fold((0.0, 0.0), |(s, s2), v| (s + v, s2 + v * v));
    if s2 > 0.0 {
        s * s / (x.len() as f64 * s2)
    } else {
        1.0
    }
}

/// Each message's data throughput at its receiver in 100 us bins (`flow<i>_gbps`,
/// space separated), and Jain's index over the flows active for a whole bin, in
/// bins with at least two such flows and no join or leave in the 300 us before.
fn per_flow_rates(_cfg: &Config, out: &RunOutput, log: &[Arrival]) -> Vec<(String, Cell)> {
    let msgs = &out.messages;
    let horizon = msgs.iter().filter_map(|m| m.end_ps).max().unwrap_or(0);
    let bins = horizon.div_ceil(BIN_PS) as usize;
    let mut gbps = vec![vec![0.0; bins]; msgs.len()];
    for a in log.iter().filter(|a| a.wire_bytes > CONTROL_WIRE) {
        let b = (a.time / BIN_PS) as usize;
        if let (Some(i), true) = (msgs.iter().position(|m| m.src == a.src && m.dst == a.host), b < bins) {
            gbps[i][b] += a.wire_bytes as f64 * 8.0 / (BIN_PS as f64 * 1e-12) / 1e9;
        }
    }
    let changes: Vec<u64> = msgs.iter().flat_map(|m| [Some(m.start_ps), m.end_ps]).flatten().collect();
    let mut idx = Vec::new();
    for b in 0..bins as u64 {
        let (lo, hi) = (b * BIN_PS, (b + 1) * BIN_PS);
        let settled = changes.iter().all(|&c| c > hi || c + SETTLE_BINS * BIN_PS <= lo);
        let active: Vec<f64> = (0..msgs.len())
            .filter(|&i| msgs[i].start_ps <= lo && msgs[i].end_ps.is_some_and(|e| e >= hi))
            .map(|i| gbps[i][b as usize])
            .collect();
        if settled && active.len() >= 2 {
            idx.push(jain(&active));
        }
    }
    let mean = if idx.is_empty() { f64::NAN } else { idx.iter().sum::<f64>() / idx.len() as f64 };
    let mut row = vec![
        ("jain_mean".into(), Cell::Float(mean)),
        ("jain_min".into(), Cell::Float(idx.iter().copied().fold(f64::NAN, f64::min))),
        ("steady_bins".into(), Cell::Float(idx.len() as f64)),
    ];
    for (i, g) in gbps.iter().enumerate() {
        let s: Vec<String> = g.iter().map(|v| format!("{v:.2}")).collect();
        row.push((format!("flow{i}_gbps"), Cell::Str(s.join(" "))));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::{jain, settled_mean};

    #[test]
    fn token_queue_mean_keeps_settled_samples_with_enough_flows() {
        // Flows over [0, 100), [10, 100), [20, 60) us; samples every 1 us at level t.
        let flows = [(0.0, 100.0), (10.0, 100.0), (20.0, 60.0)];
        let q: Vec<(f64, f64)> = (0..120).map(|t| (t as f64, t as f64)).collect();
        // Three flows over [20, 60); settled 5 us after the join: samples 25..=59.
        let (mean, covered) = settled_mean(&q, &flows, 3, 5.0).unwrap();
        assert_eq!((mean, covered), ((25.0 + 59.0) / 2.0, 35.0));
        // Two or more: [10, 100) less 5 us after 10, 20 and 60: 15..=19, 25..=59, 65..=99.
        let (mean, covered) = settled_mean(&q, &flows, 2, 5.0).unwrap();
        let want: Vec<f64> = (15..20).chain(25..60).chain(65..100).map(|t| t as f64).collect();
        assert_eq!(covered, want.len() as f64);
        assert!((mean - want.iter().sum::<f64>() / want.len() as f64).abs() < 1e-9);
        assert_eq!(settled_mean(&q, &flows, 4, 5.0), None);
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_flow() {
        assert_eq!(jain(&[2.0, 2.0, 2.0]), 1.0);
        assert!((jain(&[4.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[3.0, 1.0]) - 0.8).abs() < 1e-12);
    }
}
