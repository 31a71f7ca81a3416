//! Bolt (Arslan thesis ch. 4): Fig. 4.2
//! (notification delay and generation point, [`notify`]), Table 4.1
//! (PRU/SM ablation), Table 4.2 (5000-to-1 incast), Figs. 4.11/4.12 (bandwidth
//! capture after a completion or a reroute), Figs. 4.13/4.14 (burstiness, line rates), Figs. 4.16/4.17 (64-host fat tree at 80%
//! load), drawn by python/fabriclab/repro_bolt.py, and claims R1-R21
//! (experiments/repro/bolt/claims.toml, measured by [`claims::measure`]).

mod claims;
mod notify;
pub(super) mod tapped;

use super::{Figure, Paper, Tables};
use std::path::{Path, PathBuf};

pub const PAPER: Paper = Paper {
    name: "bolt",
    title: "Bolt (Arslan thesis, ch. 4)",
    claims: include_str!("../../../../experiments/repro/bolt/claims.toml"),
    figures: &[
        Figure::new(
            "table4.1",
            "table4_1",
            "Table 4.1: bottleneck utilization between the first and last completion, PRU x SM",
        ),
        Figure::new("table4.2", "table4_2", "Table 4.2: 5000-to-1 incast, peak queuing, p99 slowdown, SRC bandwidth"),
        Figure::new("fig4.11", "fig4_11", "Fig. 4.11: throughput of the remaining flow after a completion"),
        Figure::new("fig4.12", "fig4_12", "Fig. 4.12: throughput of the remaining flow after the other is rerouted"),
        Figure::new(
            "fig4.13",
            "fig4_13",
            "Fig. 4.13: SRC bandwidth and p99 bottleneck queuing against the number of senders (1-63), star at 80% load",
        ),
        Figure::new(
            "fig4.14",
            "fig4_14",
            "Fig. 4.14: p99 slowdown of flows below 1 BDP, 63-to-1 star at 100, 200 and 400 Gb/s",
        ),
        Figure::new("fig4.16", "fig4_16", "Fig. 4.16: slowdown by size group, 64-host fat tree, Hadoop at 80% load"),
        Figure::new(
            "fig4.17",
            "fig4_17",
            "Fig. 4.17: slowdown by size group, 64-host fat tree, READ RPC (approx.) at 80% load",
        ),
        Figure::new(
            "fig4.10",
            "fig4_10",
            "Figs. 4.6/4.10: queue and throughput when a flow joins at 100 us and another completes near 650 us",
        ),
        Figure::new("fig4.15", "fig4_15", "Fig. 4.15: per-flow throughput as flows join and leave every 10 ms"),
        Figure::new(
            "fig4.2",
            "fig4_2",
            "Fig. 4.2: time to drain the bottleneck queue after a flow joins, by notification delay and by where Swift's notification is generated",
        ),
    ],
    plot_module: "fabriclab.repro_bolt",
    measure: claims::measure,
    derive: Some(derive),
    runs_for_files: &[],
    figure_data,
    appendix: None,
};

/// Table 4.1 and Figs. 4.10/4.11/4.12/4.15 need per-packet arrivals: their points run again,
/// tapped (milliseconds), once per seed. The tables are kept for the claims; the
/// figures draw the first seed.
fn derive(t: &Tables, out: &Path) -> Result<(), String> {
    tapped::derive_tapped_per_seed(
        t,
        out,
        "bolt",
        &[
            ("table4_1", tapped::utilization_between_completions),
            ("fig4_11", tapped::capture_after_completion),
            ("fig4_12", tapped::capture_after_reroute),
            ("fig4_10", tapped::arrival_dynamics),
            ("fig4_15", tapped::fair_share),
        ],
    )?;
    notify::derive(t, out)
}

fn figure_data(f: &Figure, out: &Path) -> PathBuf {
    match f.id {
        "table4.1" => out.join("table4_1.csv"),
        "fig4.11" => out.join("fig4_11.csv"),
        "fig4.12" => out.join("fig4_12.csv"),
        "fig4.10" => out.join("fig4_10.csv"),
        "fig4.15" => out.join("fig4_15.csv"),
        "fig4.2" => out.join("fig4_2.csv"),
        _ => super::sweep_csv(f, out),
    }
}
