//! The papers' reproductions: `fabriclab repro PAPER` runs a paper's sweeps
//! (experiments/repro/PAPER/) through a [`SweepRunner`] (the CLI's, which runs
//! each point in its own process), draws its figures with the paper's Python
//! plotting module, and writes REPORT.md / REPORT.html with a verdict per claim.
//!
//! Each paper is one module that fills in a [`Paper`] and is listed in
//! [`PAPERS`]; everything else here is shared.

mod bolt;
mod nanotransport;
mod paydebt;
mod report;
mod sird;
mod smartt;
mod verdict;
pub mod engine;

use fabriclab::sweep::{Point, SweepSpec, Table};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The papers `fabriclab repro` knows.
const PAPERS: &[&Paper] = &[&sird::PAPER, &paydebt::PAPER, &nanotransport::PAPER, &bolt::PAPER, &smartt::PAPER];

/// The tables of the sweeps that ran, by sweep name.
pub type Tables = BTreeMap<String, Table>;

/// One figure: its id (`figN`, also the file stem), the sweep it draws on, its title.
pub struct Figure {
    pub id: &'static str,
    pub sweep: &'static str,
    pub title: &'static str,
}

impl Figure {
    pub const fn new(id: &'static str, sweep: &'static str, title: &'static str) -> Figure {
        Figure { id, sweep, title }
    }
}

/// Writes files derived from a reproduction's tables into its output directory.
pub type Derive = fn(&Tables, &Path) -> Result<(), String>;

/// What one paper's reproduction consists of.
pub struct Paper {
    /// The `fabriclab repro NAME` name and the directory under experiments/repro/.
    pub name: &'static str,
    /// As the report's heading names it.
    pub title: &'static str,
    /// Where the claims and the paper's numbers come from (for the report).
    pub claims_source: &'static str,
    pub figures: &'static [Figure],
    /// Python module whose `main` takes `--out DIR figN=TABLE.csv ...`.
    pub plot_module: &'static str,
    /// Judges every claim on the tables available (a missing table: not measured).
    pub evaluate: fn(&Tables) -> Vec<verdict::Claim>,
    /// Writes files derived from the tables into the output directory (before plotting).
    pub derive: Option<Derive>,
    /// The table a figure is drawn from.
    pub figure_data: fn(&Figure, &Path) -> PathBuf,
    /// Extra report sections after the figures.
    pub appendix: Option<fn(&Tables, &mut String)>,
}

/// The usual [`Paper::figure_data`]: the results of the figure's sweep.
pub fn sweep_csv(f: &Figure, out: &Path) -> PathBuf {
    out.join("sweeps").join(f.sweep).join("results.csv")
}

/// What a sweep run gives back: the table (rows in grid order) and counts.
pub struct SweepOutcome {
    pub table: Table,
    pub ran: usize,
    pub cached: usize,
    pub failed: Vec<(Point, String)>,
}

/// Runs one sweep into `out` with `jobs` points at a time, reusing points already there.
pub trait SweepRunner {
    fn run(&self, spec: &SweepSpec, out: &Path, jobs: usize) -> Result<SweepOutcome, String>;
}

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
/// `fig5`, `5`, `Fig. 5` -> `fig5`; `table4.1`, `4.1` -> `table4.1`; or an
/// error listing the paper's figures.
fn figure_id(paper: &Paper, s: &str) -> Result<&'static str, String> {
    let key = |id: &str| -> String { id.chars().filter(|c| c.is_ascii_digit() || *c == '.').collect() };
    let want = key(s).trim_matches('.').to_string();
    let exact = paper.figures.iter().find(|f| f.id.eq_ignore_ascii_case(s.trim()));
    exact.or_else(|| paper.figures.iter().find(|f| !want.is_empty() && key(f.id) == want)).map(|f| f.id).ok_or_else(
        || {
            let ids: Vec<&str> = paper.figures.iter().map(|f| f.id).collect();
            format!("--only: unknown figure {s:?} of {}; figures: {}", paper.name, ids.join(", "))
        },
    )
}

pub fn python() -> Command {
    let mut c = Command::new(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()));
    c.env("PYTHONPATH", python_dir());
    c
}

/// Fails early, with what to install, if python3 or matplotlib is missing.
pub fn check_python(module: &str) -> Result<(), String> {
    let o = python().args(["-c", &format!("import matplotlib, {module}")]).output().map_err(|e| {
        format!("cannot run python3 ({e}); the figures need Python 3 with matplotlib (pip install matplotlib)")
    })?;
    if o.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("No module named 'matplotlib'") {
        Err("matplotlib is not installed for python3; install it with: pip install matplotlib".into())
    } else {
        Err(format!("python3 cannot load {module} from {}: {}", python_dir().display(), err.trim()))
    }
}

pub fn command(a: Args, runner: &dyn SweepRunner) -> Result<String, String> {
    let Some(paper) = PAPERS.iter().find(|p| p.name == a.name) else {
        let names: Vec<&str> = PAPERS.iter().map(|p| p.name).collect();
        return Err(format!("repro: unknown paper {:?}; available: {}", a.name, names.join(", ")));
    };
    let start = Instant::now();
    let figures: Vec<&Figure> = if a.only.is_empty() {
        paper.figures.iter().collect()
    } else {
        let ids = a.only.iter().map(|s| figure_id(paper, s)).collect::<Result<Vec<_>, _>>()?;
        paper.figures.iter().filter(|f| ids.contains(&f.id)).collect()
    };
    check_python(paper.plot_module)?;
    let out = a.out.unwrap_or_else(|| PathBuf::from("out/repro").join(paper.name));
    let dir = root().join("experiments/repro").join(paper.name);
    let mut sweeps: Vec<&str> = figures.iter().map(|f| f.sweep).collect();
    sweeps.sort_unstable();
    sweeps.dedup();

    let mut tables = Tables::new();
    let (mut points, mut ran, mut cached, mut failed, mut point_seconds) = (0, 0, 0, Vec::new(), 0.0);
    for name in &sweeps {
        let file = dir.join(format!("{name}.toml"));
        let mut spec = SweepSpec::load(&file).map_err(|e| e.to_string())?;
        if a.quick {
            spec = spec.quick();
        }
        eprintln!("repro {}: sweep {name} ({})", paper.name, file.display());
        let o = runner.run(&spec, &out.join("sweeps").join(name), a.jobs)?;
        points += o.table.rows.len();
        ran += o.ran;
        cached += o.cached;
        point_seconds += (0..o.table.rows.len()).filter_map(|r| o.table.get(r, "wall_time_s").as_f64()).sum::<f64>();
        failed.extend(o.failed.into_iter().map(|(p, e)| (name.to_string(), p.id, e)));
        tables.insert(name.to_string(), o.table);
    }
    if let Some(derive) = paper.derive {
        derive(&tables, &out)?;
    }
    plot(paper, &out, &figures)?;
    let claims = (paper.evaluate)(&tables);
    let figs: Vec<(String, String)> = figures.iter().map(|f| (f.id.to_string(), f.title.to_string())).collect();
    let info = report::RunInfo {
        quick: a.quick,
        wall_s: start.elapsed().as_secs_f64(),
        points,
        ran,
        cached,
        point_seconds,
        failed: &failed,
        figures: &figs,
    };
    let md = report::markdown(paper, &claims, &info, &tables);
    write(&out.join("REPORT.md"), &md)?;
    write(&out.join("REPORT.html"), &report::html(paper.title, &md))?;
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
    Ok(text)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Draws the figures: `python3 -m MODULE --out OUT figN=TABLE_CSV ...`.
fn plot(paper: &Paper, out: &Path, figures: &[&Figure]) -> Result<(), String> {
    let mut c = python();
    c.args(["-m", paper.plot_module, "--out"]).arg(out);
    for f in figures {
        c.arg(format!("{}={}", f.id, (paper.figure_data)(f, out).display()));
    }
    let s = c.status().map_err(|e| format!("cannot run python3: {e}"))?;
    if !s.success() {
        return Err(format!("plotting failed ({s}); the data is in {}", out.join("sweeps").display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_named_loosely_and_unknown_ones_listed() {
        let p = &sird::PAPER;
        assert_eq!(figure_id(p, "fig5"), Ok("fig5"));
        assert_eq!(figure_id(p, "5"), Ok("fig5"));
        assert_eq!(figure_id(p, "Fig. 10"), Ok("fig10"));
        let e = figure_id(p, "fig99").unwrap_err();
        assert!(e.contains("fig99") && e.contains("fig3, fig4"), "{e}");
        assert!(figure_id(p, "").is_err());
    }

    #[test]
    fn every_paper_has_its_sweep_files_and_unique_figures() {
        for p in PAPERS {
            let mut ids: Vec<&str> = p.figures.iter().map(|f| f.id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), p.figures.len(), "{}: duplicate figure ids", p.name);
            for f in p.figures {
                let file = root().join("experiments/repro").join(p.name).join(format!("{}.toml", f.sweep));
                assert!(file.exists(), "{}: {} needs {}", p.name, f.id, file.display());
            }
        }
    }
}
