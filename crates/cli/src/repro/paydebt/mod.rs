//! The PayDebt paper (../shared/research/paydebt.md §4): the sweeps of
//! experiments/repro/paydebt/, Figs. 9, 12, 15 and 16 (drawn by
//! python/fabriclab/repro_paydebt.py), and the claims of its results table.

mod claims;

use super::{Figure, Paper};

pub const PAPER: Paper = Paper {
    name: "paydebt",
    title: "PayDebt",
    claims_source: "`../shared/research/paydebt.md` §4 (PayDebt, IEEE TPDS 2022)",
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
    ],
    plot_module: "fabriclab.repro_paydebt",
    evaluate: claims::evaluate,
    derive: None,
    figure_data: super::sweep_csv,
    appendix: None,
};
