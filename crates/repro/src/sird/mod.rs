//! The SIRD paper (sird.md §8): the sweeps of experiments/repro/sird/, Figs.
//! 2-12 (drawn by python/fabriclab/plot.py), Table 4 and claims S1-S17, F2.

mod claims;
pub(super) mod data;

use super::{write, Figure, Paper, Tables};

/// The ToR queue the claims read from the evaluation's runs: its authors'
/// definition, each ToR's ports summed and averaged over 10 us
/// (`output.tor_queue_average_us` in experiments/sird/*.toml; claims.toml,
/// "Shared definitions"). Fig. 9's micro-benchmark (S17) keeps the exact peak.
pub(super) const QUEUE_MAX: &str = "tor_queue_avg_max_bytes";
pub(super) const QUEUE_MEAN: &str = "tor_queue_avg_mean_bytes";
use data::{View, SCENARIOS};
use fabriclab::sweep::Table;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const PAPER: Paper = Paper {
    name: "sird",
    title: "SIRD",
    claims: include_str!("../../../../experiments/repro/sird/claims.toml"),
    figures: &[
        Figure::new(
            "fig2",
            "fig2",
            "Fig. 2: Homa's queue occupancy percentiles per ToR downlink and per ToR vs load (balanced WKc)",
        ),
        Figure::new("fig3", "fig3", "Fig. 3: mean ToR queuing vs goodput, Homa k vs SIRD B (balanced WKc, 95% load)"),
        Figure::new(
            "fig4",
            "evaluation",
            "Fig. 4: goodput, queuing and slowdown normalised to the best protocol, 9 scenarios",
        ),
        Figure::new("fig5", "evaluation", "Fig. 5: maximum ToR queuing vs achieved goodput"),
        Figure::new("fig6", "evaluation", "Fig. 6: median and p99 slowdown by size group at 50% load (balanced)"),
        Figure::new("fig7", "fig7", "Fig. 7: maximum goodput across B and SThr (balanced WKc, 95% load)"),
        Figure::new("fig8", "fig8", "Fig. 8: slowdown at 50% load vs UnschT and priority use (WKc)"),
        Figure::new(
            "fig9",
            "fig9",
            "Fig. 9 (simulated analogue): receiver queue under 6-to-1 incast, paced vs unpaced credits",
        ),
        Figure::new("fig10", "fig10", "Fig. 10 (simulated analogue): congested sender, receivers' goodput"),
        Figure::new("fig11", "evaluation", "Fig. 11: median and p99 slowdown by size group at 50% load (core, incast)"),
        Figure::new("fig12", "evaluation", "Fig. 12: mean ToR queuing vs achieved goodput"),
    ],
    plot_module: "fabriclab.plot",
    measure: claims::measure,
    derive: Some(derive),
    runs_for_files: &[],
    figure_data,
    appendix: Some(appendix),
};

/// Table 4 (the per-scenario aggregates behind Fig. 4): computed per seed, as
/// the claims see it, and written as the mean over seeds of each value.
fn derive(t: &Tables, out: &Path) -> Result<(), String> {
    if !t.contains_key("evaluation") {
        return Ok(());
    }
    let seeds: Vec<Table> =
        crate::split_by_seed(t).into_iter().filter_map(|(_, mut s)| s.remove("evaluation")).collect();
    write(&out.join("table4.csv"), &data::aggregates_table(&data::aggregates_over_seeds(&seeds)).to_csv())
}

/// Fig. 4 plots Table 4, the others their sweep's table.
fn figure_data(f: &Figure, out: &Path) -> PathBuf {
    if f.id == "fig4" {
        out.join("table4.csv")
    } else {
        super::sweep_csv(f, out)
    }
}

fn appendix(t: &Tables, o: &mut String) {
    if let Some(e) = t.get("evaluation") {
        message_counts(o, e);
    }
}

/// Messages behind each p99 at 50% load: per protocol the count summed over
/// the seeds (as the sample rule counts them), then the smallest over protocols.
fn message_counts(o: &mut String, t: &Table) {
    let v = View::ok(t).eq("workload.load", 0.5);
    let mut seeds = v.nums("run.seed");
    seeds.sort_by(f64::total_cmp);
    seeds.dedup();
    let _ = writeln!(
        o,
        "## Messages behind the percentiles (50% load)\n\nCompleted messages per scenario and size group \
         (A < MSS <= B < BDP <= C < 8 BDP <= D), summed over the {} seed(s) of each protocol's run, smallest over \
         the six protocols; a p99 over n messages rests on about n/100 of them, and the verdicts judge a p99 only \
         when n is at least 1,000.\n\n| scenario | A | B | C | D | all |\n|---|---|---|---|---|---|",
        seeds.len().max(1)
    );
    for sc in SCENARIOS {
        let w = v.scenario(sc);
        if w.is_empty() {
            continue;
        }
        let n = |g: &str| {
            let col = format!("slowdown_{g}_count");
            data::PROTOCOLS
                .iter()
                .map(|p| w.eq("protocol.name", *p))
                .filter(|runs| !runs.is_empty())
                .map(|runs| runs.nums(&col).iter().sum::<f64>())
                .reduce(f64::min)
                .filter(|n| *n > 0.0 || !w.nums(&col).is_empty())
                .map_or("-".into(), |n| format!("{n:.0}"))
        };
        let _ = writeln!(o, "| {sc} | {} | {} | {} | {} | {} |", n("A"), n("B"), n("C"), n("D"), n("all"));
    }
    let _ = writeln!(o);
}

#[cfg(test)]
mod tests {
    use fabriclab::sweep::{expand, SweepSpec};
    use std::path::Path;

    /// The run length of each point of a sweep file: (base stem, load, duration override).
    fn lengths(file: &str, quick: bool) -> Vec<(String, f64, Option<String>)> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/repro/sird").join(file);
        let mut spec = SweepSpec::load(&path).unwrap();
        if quick {
            spec = spec.quick();
        }
        let load = |p: &fabriclab::sweep::Point| {
            p.swept.iter().find(|(k, _)| k == "workload.load").and_then(|(_, v)| v.as_float()).unwrap()
        };
        expand(&spec)
            .unwrap()
            .iter()
            .map(|p| {
                let stem = p.base.file_stem().unwrap().to_string_lossy().into_owned();
                let d = p.overrides.iter().find(|o| o.starts_with("run.duration_ms=")).cloned();
                (stem, load(p), d)
            })
            .collect()
    }

    /// The run lengths fixed before the runs (evaluation.toml): WKc at 50% 100 ms, at 65-75%
    /// 200 ms, everything else its scenario's own; quick mode keeps its 0.5 ms everywhere.
    #[test]
    fn wkc_and_wka_50_points_run_long_enough_and_nothing_else_changes() {
        for (stem, load, d) in lengths("evaluation.toml", false) {
            let want = match (&stem[stem.len() - 3..], load) {
                ("wkc", l) if l == 0.5 => Some("run.duration_ms=100.0"),
                ("wkc", l) if l == 0.65 || l == 0.75 => Some("run.duration_ms=200.0"),
                // S10's group D samples (claims.toml).
                ("wka", l) if l == 0.5 => Some("run.duration_ms=20.0"),
                _ => None,
            };
            assert_eq!(d.as_deref(), want, "{stem} at {load}");
        }
        assert!(lengths("evaluation.toml", true).iter().all(|(_, _, d)| d.as_deref() == Some("run.duration_ms=0.5")));
        let fig2 = lengths("fig2.toml", false);
        assert_eq!(fig2.iter().filter(|(_, _, d)| d.as_deref() == Some("run.duration_ms=200.0")).count(), 2);
        assert!(lengths("fig2.toml", true).iter().all(|(_, _, d)| d.as_deref() == Some("run.duration_ms=0.5")));
    }
}
