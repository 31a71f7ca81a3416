//! PayDebt Fig. 11 (S5): per-flow throughput over time while eight flows join
//! and leave one bottleneck (experiments/repro/paydebt/fairness.toml), from the
//! tapped re-runs of fig11.toml ([`crate::bolt::tapped`]), and Jain's
//! fairness index over the intervals where the set of flows is stable.

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
    tapped::derive_tapped(t, out, "paydebt", &[("fig11", per_flow_rates as Measure)])
}

pub fn figure_data(f: &Figure, out: &Path) -> PathBuf {
    match f.id {
        "fig11" => out.join("fig11.csv"),
        _ => crate::sweep_csv(f, out),
    }
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
    use super::jain;

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_flow() {
        assert_eq!(jain(&[2.0, 2.0, 2.0]), 1.0);
        assert!((jain(&[4.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[3.0, 1.0]) - 0.8).abs() < 1e-12);
    }
}
