//! The SMaRTT-REPS paper (smartt.md §5): the sweeps of experiments/repro/smartt/,
//! Figs. 1, 2, 3, 6 (with 5b), 6b, 7a/7b (simulated), 8, 9, 10, 11a-d (11a/b also with the
//! authors' queues), 12 and 13 (drawn by
//! python/fabriclab/repro_smartt.py) and claims R1-R22 (experiments/repro/smartt/claims.toml).

mod claims;

use super::{Figure, Paper};

pub const PAPER: Paper = Paper {
    name: "smartt",
    title: "SMaRTT-REPS",
    claims: include_str!("../../../../experiments/repro/smartt/claims.toml"),
    figures: &[
        Figure::new("fig1", "fig1", "Fig. 1: cross-pod permutations of 2 MiB and 32 MiB on an 8:1 fat tree, over REPS"),
        Figure::new(
            "fig2",
            "fig2",
            "Fig. 2: cwnd over time of the 8:1 incast's senders, SMaRTT vs ECN-only vs RTT-only",
        ),
        Figure::new("fig3", "fig2", "Fig. 3: 8:1 incast of 8 MiB, SMaRTT vs ECN-only vs RTT-only, per ACK vs every 50"),
        Figure::new("fig5b", "fig5b", "Fig. 5b: SMaRTT with and without Wait-to-Decrease, permutation on a 1:1 tree"),
        Figure::new("fig6", "fig6", "Fig. 6: SMaRTT over REPS, spraying, ECMP, PLB; REPS without WTD at 4:1"),
        Figure::new("fig6b", "fig6", "Fig. 6b: packet RTT distributions per load balancer"),
        Figure::new(
            "fig7",
            "fig7",
            "Fig. 7a/7b (simulated): 4 MB ring AllReduce, one uplink at 200G, REPS vs spraying",
        ),
        Figure::new(
            "fig7c",
            "fig7c",
            "Fig. 7c (simulated): 4 MB ring AllReduce, one T0-T1 link down at 50 us, REPS vs spraying",
        ),
        Figure::new("fig8", "fig8", "Fig. 8: 16:1 incast of 512 KiB with and without trimming"),
        Figure::new("fig9", "fig9", "Fig. 9: 2 MiB permutation on an 8:1 tree with and without trimming"),
        Figure::new("fig10", "fig10", "Fig. 10: N:1 incasts, completion time relative to the ideal"),
        Figure::new("fig11", "fig11", "Fig. 11a-d: permutations at 2:1, 4:1, four in parallel, one larger flow"),
        Figure::new(
            "fig11q",
            "fig11q",
            "Fig. 11a/b with the authors' htsim queues between switches (1/N of the buffer), for R15",
        ),
        Figure::new("fig12", "fig12", "Fig. 12: windowed all-to-all with k outstanding flows (128 hosts, 2:1)"),
        Figure::new("fig13", "fig13", "Fig. 13: EQDS alone and with a SMaRTT or MPRDMA window cap"),
    ],
    plot_module: "fabriclab.repro_smartt",
    measure: claims::measure,
    derive: None,
    runs_for_files: &[],
    figure_data: super::sweep_csv,
    appendix: None,
};
