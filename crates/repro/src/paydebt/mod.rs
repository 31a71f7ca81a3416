//! The PayDebt paper (IEEE TPDS 2022): the sweeps of
//! experiments/repro/paydebt/, Figs. 8-16 (drawn by
//! python/fabriclab/repro_paydebt.py), and the claims of its results table.

mod claims;
mod fairness;
mod scenarios;

use super::{Figure, Paper};

pub const PAPER: Paper = Paper {
    name: "paydebt",
    title: "PayDebt",
    claims: include_str!("../../../../experiments/repro/paydebt/claims.toml"),
    figures: &[
        Figure::new("fig9a", "fig9a", "Fig. 9a: Memcached, 4:1, load 0.8: max switch buffer vs FCT"),
        Figure::new("fig9b", "fig9b", "Fig. 9b: Hadoop, 4:1, load 0.8: max switch buffer vs FCT"),
        Figure::new("fig9c", "fig9c", "Fig. 9c: web search, 4:1, load 0.8: max switch buffer vs FCT"),
        Figure::new("fig12", "fig12", "Fig. 12: web search, load 0.2-0.8: max buffer and small-flow FCT"),
        Figure::new("fig15", "fig15", "Fig. 15: Hadoop with 8 MB, 4 MB and 800 KB buffers: PayDebt vs Homa"),
        Figure::new("fig16a", "fig16a", "Fig. 16a: N-to-1 incast of one-BDP flows: max buffer"),
        Figure::new("fig16b", "fig16b", "Fig. 16b: debt timing (PayDebt, none, late, early), Hadoop"),
        Figure::new("fig16c", "fig16c", "Fig. 16c: K_d sweep, Hadoop"),
        Figure::new("fig16d", "fig16d", "Fig. 16d: K_t sweep, Hadoop"),
        Figure::new(
            "fig8",
            "fig8",
            "Fig. 8a/b/d: simulated testbed, Hadoop and web search, 16 MB shared vs 128 KB/queue",
        ),
        Figure::new("fig8c", "fig8c", "Fig. 8a/b/c: simulated testbed, Memcached, 16 MB shared vs 128 KB/queue"),
        Figure::new("fig11", "fig11", "Fig. 11: fairness, 8 flows join and leave one bottleneck (per-flow throughput)"),
        Figure::new("fig11c", "fig11", "Fig. 11c: PayDebt's token queue at the bottleneck over time, against K_t"),
        Figure::new("fig3", "fig3", "Fig. 3: Memcached, non-blocking, load 0.8: Homa and Homa(A)"),
        Figure::new("fig9d", "fig9a", "Fig. 9d: Memcached, 4:1, load 0.8: FCT by flow size"),
        Figure::new("fig9e", "fig9c", "Fig. 9e: web search, 4:1, load 0.8: FCT by flow size"),
        Figure::new("fig10", "fig9c", "Fig. 10: web search, 4:1, load 0.8: FCT of flows up to 100 KB by size"),
        Figure::new("fig13", "fig13", "Fig. 13: web search at 100 Gbps, load 0.2-0.8: max buffer and small-flow FCT"),
        Figure::new("fig14a", "fig14a", "Fig. 14a: web search, 2:1 oversubscription: max switch buffer vs FCT"),
        Figure::new("fig14b", "fig14b", "Fig. 14b: web search, 8:1 oversubscription: max switch buffer vs FCT"),
        Figure::new("fig14c", "fig14c", "Fig. 14c: web search, non-blocking, with NDP: max switch buffer vs FCT"),
    ],
    plot_module: "fabriclab.repro_paydebt",
    measure: claims::measure,
    derive: Some(fairness::derive),
    // Fig. 11c's token queue is read from each fig11 point's queue series.
    runs_for_files: &["fig11"],
    figure_data: fairness::figure_data,
    appendix: None,
};
