//! The papers' reproductions: `fabriclab repro PAPER` runs a paper's sweeps
//! (experiments/repro/PAPER/) through a [`SweepRunner`] (the CLI's, which runs
//! each point in its own process), draws its figures with the paper's Python
//! plotting module, and writes REPORT.md / REPORT.html with a verdict per claim.
//!
//! Each paper is one module that fills in a [`Paper`] and is listed in
//! [`PAPERS`]; everything else here is shared.

mod bolt;
pub mod engine;
mod nanotransport;
mod paydebt;
mod report;
mod sird;
mod smartt;
pub mod view;

use engine::{ClaimsFile, JudgedClaim, Measurements, Record, Rules};
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
    /// The claims file (`experiments/repro/NAME/claims.toml`, compiled in).
    pub claims: &'static str,
    pub figures: &'static [Figure],
    /// Python module whose `main` takes `--out DIR figN=TABLE.csv ...`.
    pub plot_module: &'static str,
    /// Measures every claim part on one seed's tables (a table that did not
    /// run: record nothing, or `missing`); the engine judges.
    pub measure: fn(&Tables, &mut Record),
    /// Writes files derived from the tables into the output directory (before plotting).
    pub derive: Option<Derive>,
    /// Sweeps whose points [`Paper::derive`] reads files of (time series), so
    /// they run even when a record of them exists: a record keeps the summary only.
    pub runs_for_files: &'static [&'static str],
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

/// Runs one sweep into `out` with `jobs` points at a time, reusing points
/// already there or, with `records`, recorded there by the same model.
pub trait SweepRunner {
    fn run(&self, spec: &SweepSpec, out: &Path, jobs: usize, records: Option<&Path>) -> Result<SweepOutcome, String>;
}

pub struct Args {
    pub name: String,
    pub quick: bool,
    /// Seeds per point (default: 3 in full mode, 1 in quick mode).
    pub seeds: Option<u64>,
    /// Judge this measurements file instead of running (`--judge FILE`).
    pub judge: Option<PathBuf>,
    pub only: Vec<String>,
    pub jobs: usize,
    pub out: Option<PathBuf>,
    /// Where the points' records go ([`RECORDS`] of the paper's folder by
    /// default in full mode; none in quick mode unless given).
    pub records: Option<PathBuf>,
}

/// The folder, under a paper's experiments/repro/PAPER/, of the records of
/// its full runs' points, one subfolder per sweep: committed while a run goes
/// on, so that a fresh clone resumes where the last machine stopped.
pub const RECORDS: &str = "points";

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

/// The sweep tables' seed column.
const SEED_KEY: &str = "run.seed";

/// Seeds per point when `--seeds` is not given.
pub const FULL_SEEDS: u64 = 3;

/// A paper by its `repro` name, or an error listing them.
pub fn paper(name: &str) -> Result<&'static Paper, String> {
    PAPERS.iter().copied().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PAPERS.iter().map(|p| p.name).collect();
        format!("repro: unknown paper {name:?}; available: {}", names.join(", "))
    })
}

/// Every paper's `repro` name.
pub fn paper_names() -> Vec<&'static str> {
    PAPERS.iter().map(|p| p.name).collect()
}

impl Paper {
    /// The paper's claims, parsed and checked.
    pub fn claims_file(&self) -> Result<ClaimsFile, String> {
        engine::claims::parse(self.claims, &format!("experiments/repro/{}/claims.toml", self.name))
    }
}

/// The tables split by seed: for every seed in any table's `run.seed` column,
/// each table narrowed to that seed's rows (a table without the column is the
/// same for every seed). Tables without seeds at all count as seed 1.
pub fn split_by_seed(tables: &Tables) -> Vec<(u64, Tables)> {
    let seed_of = |t: &Table, r: usize| t.get(r, SEED_KEY).as_f64().map(|s| s as u64);
    let mut seeds: Vec<u64> =
        tables.values().flat_map(|t| (0..t.rows.len()).filter_map(move |r| seed_of(t, r))).collect();
    seeds.sort_unstable();
    seeds.dedup();
    if seeds.is_empty() {
        return vec![(1, tables.clone())];
    }
    seeds
        .into_iter()
        .map(|s| {
            let split = tables
                .iter()
                .map(|(name, t)| {
                    let t = if t.column(SEED_KEY).is_none() {
                        t.clone()
                    } else {
                        let rows = (0..t.rows.len()).filter(|&r| seed_of(t, r) == Some(s)).map(|r| t.rows[r].clone());
                        Table { columns: t.columns.clone(), rows: rows.collect() }
                    };
                    (name.clone(), t)
                })
                .collect();
            (s, split)
        })
        .collect()
}

/// Runs the paper's measurement code once per seed.
pub fn measure(paper: &Paper, tables: &Tables, mode: &str) -> Measurements {
    let mut m = Measurements { paper: paper.name.into(), mode: mode.into(), seeds: vec![], entries: vec![] };
    for (seed, t) in split_by_seed(tables) {
        m.seeds.push(seed);
        (paper.measure)(&t, &mut Record::new(seed, &mut m.entries));
    }
    m
}

/// Judges a paper's measurements with the rules of `min_seeds`.
pub fn judge(paper: &Paper, m: &Measurements, min_seeds: usize) -> Result<Vec<JudgedClaim>, String> {
    engine::judge(&paper.claims_file()?, m, Rules { min_seeds })
}

/// What a `--quick` run's verdicts cannot be taken for, under its count of
/// verdicts in the terminal and in REPORT.md.
pub const QUICK_CAVEAT: &str =
    "quick mode: short runs on reduced settings exercise every path, but the numbers are not a reproduction";

pub fn command(a: Args, runner: &dyn SweepRunner) -> Result<String, String> {
    let paper = paper(&a.name)?;
    let claims = paper.claims_file()?;
    let start = Instant::now();
    let seeds = a.seeds.unwrap_or(if a.quick { 1 } else { FULL_SEEDS });
    if seeds == 0 {
        return Err("--seeds 0: at least one seed is needed".into());
    }
    let min_seeds = if a.quick { 1 } else { seeds.min(FULL_SEEDS) as usize };
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("out/repro").join(paper.name));
    if let Some(file) = &a.judge {
        return judge_only(paper, &claims, file, &out, a.seeds.map(|s| s as usize));
    }
    let figures: Vec<&Figure> = if a.only.is_empty() {
        paper.figures.iter().collect()
    } else {
        let ids = a.only.iter().map(|s| figure_id(paper, s)).collect::<Result<Vec<_>, _>>()?;
        paper.figures.iter().filter(|f| ids.contains(&f.id)).collect()
    };
    check_python(paper.plot_module)?;
    let dir = root().join("experiments/repro").join(paper.name);
    let records = a.records.clone().or_else(|| (!a.quick).then(|| dir.join(RECORDS)));
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
        spec.seeds = (1..=seeds).collect();
        eprintln!("repro {}: sweep {name} ({}, {seeds} seed(s) per point)", paper.name, file.display());
        let kept = records.as_ref().filter(|_| !paper.runs_for_files.contains(name)).map(|r| r.join(name));
        let o = runner.run(&spec, &out.join("sweeps").join(name), a.jobs, kept.as_deref())?;
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
    let mode = if a.quick { "quick" } else { "full" };
    let m = measure(paper, &tables, mode);
    write(&out.join("measurements.toml"), &m.to_toml())?;
    // A figure drawn from a point's own files (a time series) has no data when
    // that point was resumed from its record, which keeps the summary only.
    let (figures, undrawn): (Vec<&Figure>, Vec<&Figure>) =
        figures.into_iter().partition(|f| (paper.figure_data)(f, &out).exists());
    let undrawn: Vec<String> =
        undrawn.iter().map(|f| format!("{} (no {})", f.id, (paper.figure_data)(f, &out).display())).collect();
    if !undrawn.is_empty() {
        eprintln!(
            "repro {}: not drawn, their data was not produced (points resumed from their records keep no \
             per-point files; remove the records to run them again): {}",
            paper.name,
            undrawn.join(", ")
        );
    }
    if !figures.is_empty() {
        plot(paper, &out, &figures)?;
    }
    let judged = engine::judge(&claims, &m, Rules { min_seeds })?;
    let figs: Vec<(String, String)> = figures.iter().map(|f| (f.id.to_string(), f.title.to_string())).collect();
    let info = report::RunInfo {
        command: format!("fabriclab repro {}{}", paper.name, if a.quick { " --quick" } else { "" }),
        mode: if a.quick {
            "quick (short runs on reduced settings: every path is exercised, the numbers are not a reproduction)".into()
        } else {
            "full".into()
        },
        min_seeds,
        seeds: m.seeds.clone(),
        wall_s: start.elapsed().as_secs_f64(),
        points,
        ran,
        cached,
        point_seconds,
        failed: &failed,
        figures: &figs,
        caveat: match (a.quick, undrawn.is_empty()) {
            (true, _) => Some(QUICK_CAVEAT.to_string()),
            (false, true) => None,
            (false, false) => Some(format!(
                "figures not drawn, their data not produced (points resumed from their records keep no per-point \
                 files): {}",
                undrawn.join(", ")
            )),
        },
    };
    let md = report::markdown(paper, &claims, &judged, &info, &tables);
    write(&out.join("REPORT.md"), &md)?;
    write(&out.join("REPORT.html"), &report::html(paper.title, &md))?;
    let mut text = report::summary(&judged, &info);
    text.push_str(&format!(
        "wrote {} figures, measurements.toml, REPORT.md and REPORT.html to {} in {:.0} s ({} points, {} failed)\n",
        figures.len(),
        out.display(),
        start.elapsed().as_secs_f64(),
        points,
        failed.len()
    ));
    Ok(text)
}

/// `--judge FILE`: judges recorded measurements (a run's measurements.toml,
/// or values transcribed from an earlier report) and writes the report.
/// The seeds each part needs default to the file's own (at most [`FULL_SEEDS`]).
fn judge_only(
    paper: &Paper,
    claims: &ClaimsFile,
    file: &Path,
    out: &Path,
    min_seeds: Option<usize>,
) -> Result<String, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("--judge: cannot read {}: {e}", file.display()))?;
    let m = Measurements::parse(&text, &file.display().to_string())?;
    let min_seeds = min_seeds.unwrap_or(m.seeds.len().min(FULL_SEEDS as usize)).max(1);
    if m.paper != paper.name {
        return Err(format!("--judge: {} holds measurements of {:?}, not of {}", file.display(), m.paper, paper.name));
    }
    let judged = engine::judge(claims, &m, Rules { min_seeds })?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let info = report::RunInfo {
        command: format!("fabriclab repro {} --judge {} --seeds {min_seeds}", paper.name, file.display()),
        mode: if min_seeds < FULL_SEEDS as usize {
            format!(
                "judged from recorded measurements ({}); fewer than {FULL_SEEDS} seeds, so these verdicts are provisional",
                m.mode
            )
        } else {
            format!("judged from recorded measurements ({})", m.mode)
        },
        min_seeds,
        seeds: m.seeds.clone(),
        wall_s: 0.0,
        points: 0,
        ran: 0,
        cached: 0,
        point_seconds: 0.0,
        failed: &[],
        figures: &[],
        caveat: (min_seeds < FULL_SEEDS as usize)
            .then(|| format!("judged on {min_seeds} seed(s), fewer than {FULL_SEEDS}: these verdicts are provisional")),
    };
    let md = report::markdown(paper, claims, &judged, &info, &Tables::new());
    write(&out.join("REPORT.md"), &md)?;
    write(&out.join("REPORT.html"), &report::html(paper.title, &md))?;
    let mut text = report::summary(&judged, &info);
    text.push_str(&format!("wrote REPORT.md and REPORT.html to {}\n", out.display()));
    Ok(text)
}

/// Reports and measurements are renamed into place whole (never half-written).
fn write(path: &Path, text: &str) -> Result<(), String> {
    fabriclab::files::write(path, text.as_bytes())
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
    fn every_paper_has_a_valid_claims_file() {
        for p in PAPERS {
            let f = p.claims_file().unwrap_or_else(|e| panic!("{e}"));
            assert!(!f.claims.is_empty(), "{}: no claims", p.name);
            // REPORT.md prints the source: it cites the paper, not a file
            // outside the repository.
            assert!(!p.claims.contains("../"), "{}: the claims file names a path outside the repository", p.name);
            assert!(f.source.contains('"'), "{}: the source names no title: {}", p.name, f.source);
        }
    }

    /// No effect never holds where a paper claims one: for every headline part
    /// of every paper whose value is an effect or a direction, a measurement at
    /// no effect, and any under a little less than half the effect (in log for
    /// ratios), is neither "holds" nor "holds qualitatively".
    #[test]
    fn no_claimed_effect_holds_at_no_effect_or_under_half_of_it() {
        use engine::judge::{judge_value, Verdict};
        let mut judged = 0;
        for p in PAPERS {
            for c in p.claims_file().unwrap().claims {
                for part in c.parts.iter().filter(|x| x.headline && x.direction() != 0) {
                    let (n, limit) = (part.neutral().unwrap(), part.qualitative_limit().unwrap());
                    let ratio = part.unit == engine::Unit::Ratio && n > 0.0;
                    // From no effect to 99% of the way to the limit (the loader's slack is 0.5%).
                    for i in 0..=20 {
                        let f = 0.99 * f64::from(i) / 20.0;
                        let v = if ratio { n * (limit / n).powf(f) } else { n + (limit - n) * f };
                        let (verdict, why) = judge_value(part, part.unit, v).unwrap();
                        assert!(
                            !matches!(verdict, Verdict::Holds | Verdict::Qualitative),
                            "{} {} part {}: {} at {v} (no effect {n}, half the effect {limit}): {why}",
                            p.name,
                            c.id,
                            part.id,
                            if verdict == Verdict::Holds { "holds" } else { "holds qualitatively" }
                        );
                    }
                    judged += 1;
                }
            }
        }
        assert!(judged > 100, "only {judged} parts state an effect");
    }

    /// The verdict counts the reproduction pages quote are the ones the engine
    /// gives on the recorded measurements (no hand-written list can disagree).
    #[test]
    fn the_docs_quote_the_generated_counts_of_every_recorded_run() {
        let docs: String = ["docs/repro.md", "docs/repro_smartt.md", "docs/repro_paydebt.md"]
            .iter()
            .map(|d| std::fs::read_to_string(root().join(d)).unwrap())
            .collect();
        let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
        for p in PAPERS {
            let dir = root().join("experiments/repro").join(p.name).join("recorded");
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            assert!(!files.is_empty(), "{}: no recorded run", p.name);
            for f in files {
                let m = Measurements::parse(&std::fs::read_to_string(&f).unwrap(), &f.display().to_string()).unwrap();
                assert_eq!(m.paper, p.name, "{}", f.display());
                let judged = judge(p, &m, m.seeds.len().min(FULL_SEEDS as usize)).unwrap();
                let name = f.file_name().unwrap().to_string_lossy();
                let line = format!(
                    "Re-judged from `experiments/repro/{}/recorded/{name}`: **{}**.",
                    p.name,
                    report::count_line(&judged)
                );
                assert!(docs.contains(&line), "the docs do not quote: {line}");
                // README's table: the row of the paper (its title's first word) and the run's date.
                let [h, q, d, n] = engine::judge::counts(&judged);
                let date = name.trim_start_matches("full-").trim_end_matches(".toml");
                let first = p.title.split(' ').next().unwrap_or(p.title);
                // The run cell starts with the date and a comma ("2026-11-26," is not "2026-11-26b,").
                let cell = format!("| {date},");
                let row = readme.lines().find(|l| l.starts_with(&format!("| {first} ")) && l.contains(&cell));
                let cells = format!("| {h} | {q} | {d} | {n} |");
                assert!(
                    row.is_some_and(|r| r.contains(&cells)),
                    "README's verdict table lacks {cells} for {} ({date}): {row:?}",
                    p.name
                );
            }
        }
    }

    #[test]
    fn tables_split_by_seed_keep_seedless_tables_whole() {
        use fabriclab::sweep::Cell;
        let rec = |seed: Option<i64>, v: f64| {
            let mut r = vec![("x".to_string(), Cell::Float(v))];
            if let Some(s) = seed {
                r.push((SEED_KEY.to_string(), Cell::Int(s)));
            }
            r
        };
        let seeded = Table::from_records(&[rec(Some(1), 1.0), rec(Some(2), 2.0), rec(Some(1), 3.0)]);
        let plain = Table::from_records(&[rec(None, 9.0)]);
        let t = Tables::from([("a".to_string(), seeded), ("b".to_string(), plain.clone())]);
        let split = split_by_seed(&t);
        assert_eq!(split.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(split[0].1["a"].rows.len(), 2);
        assert_eq!(split[1].1["a"].rows.len(), 1);
        assert_eq!(split[1].1["b"], plain);
        let none = Tables::from([("b".to_string(), plain)]);
        assert_eq!(split_by_seed(&none)[0].0, 1);
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
