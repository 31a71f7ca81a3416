//! nanoTransport (Arslan thesis ch. 3):
//! Fig. 3.2, the 10-to-1 incast of NDP, Homa and Homa-Tr at 200 Gb/s with the
//! large and the halved buffer (experiments/repro/nanotransport/), drawn by
//! python/fabriclab/repro_nanotransport.py, and claims N1-N9
//! (experiments/repro/nanotransport/claims.toml, measured by [`measure`]).

use super::{write, Figure, Paper, Tables};
use crate::engine::{Record, Unit};
use crate::view::ratio;
use fabriclab::sweep::{Cell, Table};
use std::path::{Path, PathBuf};

pub const PAPER: Paper = Paper {
    name: "nanotransport",
    title: "nanoTransport (Arslan thesis, ch. 3)",
    claims: include_str!("../../../../experiments/repro/nanotransport/claims.toml"),
    figures: &[
        Figure::new("fig3.2a", "fig3_2", "Fig. 3.2a: bottleneck queue (max and time-mean) under the 10-to-1 incast"),
        Figure::new("fig3.2b", "fig3_2_homa", "Fig. 3.2b: message slowdown under the 10-to-1 incast"),
    ],
    plot_module: "fabriclab.repro_nanotransport",
    measure,
    derive: Some(derive),
    runs_for_files: &[],
    figure_data,
    appendix: None,
};

/// Data buffers of the sweeps: the thesis's large one (N6's "large buffer";
/// Homa's ten first windows overflow it in our model, docs/repro.md), one that
/// absorbs the incast (N7's queue comparison), and the thesis's halved one.
const LARGE: f64 = 108_000.0;
const ABSORBING: f64 = 256_000.0;
const HALVED: f64 = 54_000.0;

/// Both panels draw the union of the two sweeps (fig3_2.csv), at the lowest
/// seed: one row per protocol and buffer, as the figures expect.
fn derive(t: &Tables, out: &Path) -> Result<(), String> {
    let seed = |t: &Table, r: usize| t.get(r, "run.seed").as_f64();
    let first = t.values().flat_map(|t| (0..t.rows.len()).filter_map(move |r| seed(t, r))).reduce(f64::min);
    let rows: Vec<Vec<(String, Cell)>> = ["fig3_2", "fig3_2_homa"]
        .iter()
        .filter_map(|n| t.get(*n))
        .flat_map(|t| (0..t.rows.len()).filter(move |&r| seed(t, r) == first).map(move |r| row(t, r)))
        .collect();
    write(&out.join("fig3_2.csv"), &Table::from_records(&rows).to_csv())
}

/// Row `r` of `t` with the data buffer as its own column (`data_buffer_bytes`).
fn row(t: &Table, r: usize) -> Vec<(String, Cell)> {
    let mut v: Vec<(String, Cell)> = t.columns.iter().map(|c| (c.clone(), t.get(r, c).clone())).collect();
    let data = t.get(r, "network.trim_threshold_bytes").as_f64().or(t.get(r, "network.buffer_bytes").as_f64());
    v.push(("data_buffer_bytes".into(), data.map_or(Cell::Null, Cell::Float)));
    v
}

fn figure_data(_: &Figure, out: &Path) -> PathBuf {
    out.join("fig3_2.csv")
}

/// The incast's messages: a run that completes fewer has no slowdown to judge.
const MESSAGES: f64 = 10.0;

/// `col` of `protocol`'s run at data buffer `buffer`, from whichever sweep ran
/// it: only a successful, stable run in which all ten messages completed.
fn value(d: &Tables, protocol: &str, buffer: f64, col: &str) -> Result<f64, String> {
    let what = format!("{protocol} at {:.0} KB", buffer / 1e3);
    let row = ["fig3_2", "fig3_2_homa"].iter().filter_map(|n| d.get(*n)).find_map(|t| {
        (0..t.rows.len())
            .find(|&r| {
                let data =
                    t.get(r, "network.trim_threshold_bytes").as_f64().or(t.get(r, "network.buffer_bytes").as_f64());
                t.get(r, "protocol").as_str() == Some(protocol) && data == Some(buffer)
            })
            .map(|r| (t, r))
    });
    let Some((t, r)) = row else { return Err(format!("{what}: not run")) };
    if t.get(r, "status").as_str() != Some("ok") {
        return Err(format!("{what}: the run failed"));
    }
    if t.get(r, "stable") != &Cell::Bool(true) {
        return Err(format!("run unstable: {what}"));
    }
    let done = t.get(r, "messages_completed").as_f64().unwrap_or(0.0);
    if done < MESSAGES {
        return Err(format!("{what}: {done:.0} of {MESSAGES:.0} messages completed within the run"));
    }
    t.get(r, col).as_f64().ok_or_else(|| format!("{what}: no {col}"))
}

/// `a`'s `col` over `b`'s, both at data buffer `buffer`.
fn over(d: &Tables, a: &str, b: &str, buffer: f64, col: &str) -> Result<f64, String> {
    let (x, y) = (value(d, a, buffer, col)?, value(d, b, buffer, col)?);
    ratio(Some(x), Some(y)).ok_or_else(|| format!("{a} over {b}: not a finite ratio"))
}

/// Records `v`, or why there is none.
fn put(r: &mut Record, claim: &str, part: &str, unit: Unit, v: Result<f64, String>, note: &str) {
    match v {
        Ok(x) => {
            r.value(claim, part, unit, Some(x)).note(note);
        }
        Err(why) => {
            r.missing(claim, part, unit, why);
        }
    }
}

/// N6 (Fig. 3.2b, mean message slowdown) and N7 (Fig. 3.2a, time-mean
/// bottleneck queue) on one seed's runs; N1-N5, N8 and N9 are hardware
/// properties (claims.toml says so).
pub fn measure(d: &Tables, r: &mut Record) {
    let sd = "slowdown_all_mean";
    put(r, "N6", "large_homa_vs_ndp", Unit::Ratio, over(d, "ndp", "homa", LARGE, sd), "108 KB buffer");
    put(r, "N6", "small_ndp_vs_homa", Unit::Ratio, over(d, "homa", "ndp", HALVED, sd), "54 KB buffer");
    let same = over(d, "homa_tr", "homa", LARGE, sd).map(|x| 100.0 * (x - 1.0));
    put(r, "N6", "large_tr_same", Unit::Percent, same, "108 KB buffer");
    put(r, "N6", "small_tr_vs_homa", Unit::Ratio, over(d, "homa", "homa_tr", HALVED, sd), "54 KB buffer");
    put(r, "N6", "small_tr_vs_ndp", Unit::Ratio, over(d, "ndp", "homa_tr", HALVED, sd), "54 KB buffer");
    let q = over(d, "ndp", "homa", ABSORBING, "tor_queue_mean_bytes");
    put(r, "N7", "ndp_vs_homa", Unit::Ratio, q, "time-mean bottleneck queue, 256 KB buffer");
}

#[cfg(test)]
mod tests;
