//! `fabriclab repro sird`: runs the sweeps of experiments/repro/sird/ through
//! the sweep runner, draws the figures with python/fabriclab/plot.py, and
//! writes REPORT.md / REPORT.html with a verdict per claim.

mod claims;
mod data;
mod report;
mod verdict;

use crate::sweep::{self, Options};
use fabriclab::sweep::SweepSpec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// (figure id, the sweep it draws on, title).
const FIGURES: &[(&str, &str, &str)] = &[
    ("fig3", "fig3", "Fig. 3: mean ToR queuing vs goodput, Homa k vs SIRD B (balanced WKc, 95% load)"),
    ("fig4", "evaluation", "Fig. 4: goodput, queuing and slowdown normalised to the best protocol, 9 scenarios"),
    ("fig5", "evaluation", "Fig. 5: maximum ToR queuing vs achieved goodput"),
    ("fig6", "evaluation", "Fig. 6: median and p99 slowdown by size group at 50% load (balanced)"),
    ("fig7", "fig7", "Fig. 7: maximum goodput across B and SThr (balanced WKc, 95% load)"),
    ("fig8", "fig8", "Fig. 8: slowdown at 50% load vs UnschT and priority use (WKc)"),
    ("fig9", "fig9", "Fig. 9 (simulated analogue): receiver queue under 6-to-1 incast, paced vs unpaced credits"),
    ("fig10", "fig10", "Fig. 10 (simulated analogue): congested sender, receivers' goodput"),
    ("fig11", "evaluation", "Fig. 11: median and p99 slowdown by size group at 50% load (core, incast)"),
    ("fig12", "evaluation", "Fig. 12: mean ToR queuing vs achieved goodput"),
];

pub struct Args {
    pub name: String,
    pub quick: bool,
    pub only: Vec<String>,
    pub jobs: usize,
    pub out: Option<PathBuf>,
}

/// The repository root: `FABRICLAB_ROOT`, else where this crate was built from.
fn root() -> PathBuf {
    std::env::var_os("FABRICLAB_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// The Python package's directory: `FABRICLAB_PYTHON`, else `<root>/python`.
fn python_dir() -> PathBuf {
    std::env::var_os("FABRICLAB_PYTHON").map(PathBuf::from).unwrap_or_else(|| root().join("python"))
}

/// `fig5`, `5`, `Fig. 5` -> `fig5`, or an error listing the figures.
fn figure_id(s: &str) -> Result<&'static str, String> {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    FIGURES.iter().find(|f| f.0[3..] == digits).map(|f| f.0).ok_or_else(|| {
        let ids: Vec<&str> = FIGURES.iter().map(|f| f.0).collect();
        format!("--only: unknown figure {s:?}; figures: {}", ids.join(", "))
    })
}

fn python() -> Command {
    let mut c = Command::new(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()));
    c.env("PYTHONPATH", python_dir());
    c
}

/// Fails early, with what to install, if python3 or matplotlib is missing.
pub fn check_python() -> Result<(), String> {
    let o = python().args(["-c", "import matplotlib, fabriclab.plot"]).output().map_err(|e| {
        format!("cannot run python3 ({e}); the figures need Python 3 with matplotlib (pip install matplotlib)")
    })?;
    if o.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("No module named 'matplotlib'") {
        Err("matplotlib is not installed for python3; install it with: pip install matplotlib".into())
    } else {
        Err(format!("python3 cannot load fabriclab.plot from {}: {}", python_dir().display(), err.trim()))
    }
}

pub fn command(a: Args) -> Result<(), String> {
    if a.name != "sird" {
        return Err(format!("repro: unknown paper {:?}; available: sird", a.name));
    }
    let start = Instant::now();
    let figures: Vec<&(&str, &str, &str)> = if a.only.is_empty() {
        FIGURES.iter().collect()
    } else {
        let ids = a.only.iter().map(|s| figure_id(s)).collect::<Result<Vec<_>, _>>()?;
        FIGURES.iter().filter(|f| ids.contains(&f.0)).collect()
    };
    check_python()?;
    let out = a.out.unwrap_or_else(|| PathBuf::from("out/repro/sird"));
    let dir = root().join("experiments/repro/sird");
    let mut sweeps: Vec<&str> = figures.iter().map(|f| f.1).collect();
    sweeps.sort_unstable();
    sweeps.dedup();

    let mut d = claims::Data::default();
    let (mut points, mut ran, mut cached, mut failed, mut point_seconds) = (0, 0, 0, Vec::new(), 0.0);
    for name in &sweeps {
        let file = dir.join(format!("{name}.toml"));
        let mut spec = SweepSpec::load(&file).map_err(|e| e.to_string())?;
        if a.quick {
            spec = spec.quick();
        }
        eprintln!("repro sird: sweep {name} ({})", file.display());
        let opts = Options { jobs: a.jobs, out: out.join("sweeps").join(name), quiet: false };
        let o = sweep::run(&spec, &opts)?;
        points += o.table.rows.len();
        ran += o.ran;
        cached += o.cached;
        point_seconds += (0..o.table.rows.len()).filter_map(|r| o.table.get(r, "wall_time_s").as_f64()).sum::<f64>();
        failed.extend(o.failed.into_iter().map(|(p, e)| (name.to_string(), p.id, e)));
        let slot = match *name {
            "evaluation" => &mut d.evaluation,
            "fig3" => &mut d.fig3,
            "fig7" => &mut d.fig7,
            "fig8" => &mut d.fig8,
            "fig9" => &mut d.fig9,
            _ => &mut d.fig10,
        };
        *slot = Some(o.table);
    }
    if let Some(t) = &d.evaluation {
        write(&out.join("table4.csv"), &data::aggregates_table(&data::aggregates(t)).to_csv())?;
    }
    plot(&out, &figures)?;
    let claims = claims::evaluate(&d);
    let figs: Vec<(String, String)> = figures.iter().map(|f| (f.0.to_string(), f.2.to_string())).collect();
    let info = report::RunInfo {
        quick: a.quick,
        wall_s: start.elapsed().as_secs_f64(),
        points,
        ran,
        cached,
        point_seconds,
        failed: &failed,
        figures: &figs,
        evaluation: d.evaluation.as_ref(),
    };
    let md = report::markdown(&claims, &info);
    write(&out.join("REPORT.md"), &md)?;
    write(&out.join("REPORT.html"), &report::html(&md))?;
    let mut text = String::new();
    for c in &claims {
        text.push_str(&format!("{:<4} {:<20} {}\n", c.id, c.verdict.to_string(), c.measured));
    }
    text.push_str(&format!(
        "wrote {} figures, REPORT.md and REPORT.html to {} in {:.0} s ({} points, {} failed)\n",
        figures.len(),
        out.display(),
        start.elapsed().as_secs_f64(),
        points,
        failed.len()
    ));
    crate::print(&text);
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Draws the figures: `python3 -m fabriclab.plot OUT figN=SWEEP_CSV ...`.
fn plot(out: &Path, figures: &[&(&str, &str, &str)]) -> Result<(), String> {
    let mut c = python();
    c.args(["-m", "fabriclab.plot", "--out"]).arg(out);
    for (id, sweep, _) in figures {
        // Fig. 4 plots Table 4 (the per-scenario aggregates), the others a sweep's table.
        let data =
            if *id == "fig4" { out.join("table4.csv") } else { out.join("sweeps").join(sweep).join("results.csv") };
        c.arg(format!("{id}={}", data.display()));
    }
    let s = c.status().map_err(|e| format!("cannot run python3: {e}"))?;
    if !s.success() {
        return Err(format!("plotting failed ({s}); the data is in {}", out.join("sweeps").display()));
    }
    Ok(())
}
