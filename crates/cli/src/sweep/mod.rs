//! `fabriclab sweep`: expands a sweep file, runs its points N at a time, each
//! in a child process (skipping points whose summary.json exists), and writes
//! the tidy table as `results.csv` and `results.parquet`.

mod child;
pub mod dask;
mod parquet_out;

use child::{run_point, PointRun};
use fabriclab::sweep::{self, expand, Cell, Point, SweepSpec, Table};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// How to run a sweep.
pub struct Options {
    pub jobs: usize,
    pub out: PathBuf,
    pub quiet: bool,
}

/// The result of a sweep: the table (rows in grid order) and counts.
pub struct Outcome {
    pub table: Table,
    pub ran: usize,
    pub cached: usize,
    pub failed: Vec<(Point, String)>,
}

/// The runner `fabriclab repro` uses: each point in its own process, progress on stderr.
pub struct Runner;

impl fabriclab_repro::SweepRunner for Runner {
    fn run(&self, spec: &SweepSpec, out: &Path, jobs: usize) -> Result<fabriclab_repro::SweepOutcome, String> {
        let o = run(spec, &Options { jobs, out: out.to_path_buf(), quiet: false })?;
        Ok(fabriclab_repro::SweepOutcome { table: o.table, ran: o.ran, cached: o.cached, failed: o.failed })
    }
}

/// `fabriclab sweep`: runs the file and reports; fails if any point failed.
pub fn command(file: &Path, quick: bool, opts: &Options) -> Result<(), String> {
    let mut spec = SweepSpec::load(file).map_err(|e| e.to_string())?;
    if quick {
        spec = spec.quick();
    }
    let o = run(&spec, opts)?;
    crate::print(&format!(
        "sweep: {} points, {} run, {} cached, {} failed; wrote results.csv and results.parquet to {}\n",
        o.table.rows.len(),
        o.ran,
        o.cached,
        o.failed.len(),
        opts.out.display()
    ));
    if o.failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {} points failed (see the table's error column)", o.failed.len(), o.table.rows.len()))
    }
}

fn point_dir(out: &Path, p: &Point) -> PathBuf {
    out.join("points").join(&p.id)
}

/// Runs every point not already done and builds the table.
pub fn run(spec: &SweepSpec, opts: &Options) -> Result<Outcome, String> {
    let points = expand(spec).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(opts.out.join("points"))
        .map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let todo: Vec<&Point> = points.iter().filter(|p| !point_dir(&opts.out, p).join("summary.json").exists()).collect();
    let cached = points.len() - todo.len();
    crate::guard::check_sweep(&todo, opts.jobs)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;

    let bar = if opts.quiet { ProgressBar::hidden() } else { ProgressBar::new(todo.len() as u64) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} points {msg} (ETA {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("({cached} cached, 0 failed)"));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, PointRun)>();
    let mut runs: Vec<Option<PointRun>> = vec![None; points.len()];
    let mut failures = 0;
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1).min(todo.len()) {
            let (tx, next, todo, exe) = (tx.clone(), &next, &todo, &exe);
            s.spawn(move || {
                while let Some(p) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let dir = point_dir(&opts.out, p);
                    let r = run_point(exe, p, &dir);
                    write_point_json(&dir, p, &r);
                    if tx.send((p.index, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            if !r.ok {
                failures += 1;
                bar.suspend(|| eprintln!("point {} failed: {}", points[i].id, r.error.as_deref().unwrap_or("")));
            }
            runs[i] = Some(r);
            bar.set_message(format!("({cached} cached, {failures} failed)"));
            bar.inc(1);
        }
    });
    bar.finish_and_clear();

    let mut records = Vec::with_capacity(points.len());
    let mut failed = Vec::new();
    for (p, r) in points.iter().zip(runs) {
        let dir = point_dir(&opts.out, p);
        let r = r.unwrap_or_else(|| read_point_json(&dir));
        let (rec, err) = record(p, &dir, r);
        if let Some(e) = err {
            failed.push((p.clone(), e));
        }
        records.push(rec);
    }
    let table = Table::from_records(&records);
    let write = |name: &str, bytes: &[u8]| {
        let path = opts.out.join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write("results.csv", table.to_csv().as_bytes())?;
    parquet_out::write(&table, &opts.out.join("results.parquet"))?;
    Ok(Outcome { table, ran: todo.len(), cached, failed })
}

/// One row, from the point's summary.json and how its process ended.
fn record(p: &Point, dir: &Path, r: PointRun) -> (Vec<(String, Cell)>, Option<String>) {
    let summary = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    sweep::record(p, sweep::Outcome { summary, error: r.error, peak_rss_mb: r.peak_rss_mb })
}

/// point.json keeps what only the parent saw (peak RSS, how it ended) for resumed sweeps.
fn write_point_json(dir: &Path, p: &Point, r: &PointRun) {
    let v = serde_json::json!({
        "id": p.id,
        "base": p.base,
        "overrides": p.overrides,
        "ok": r.ok,
        "error": r.error,
        "peak_rss_mb": r.peak_rss_mb,
    });
    let _ = std::fs::write(dir.join("point.json"), format!("{v:#}\n"));
}

fn read_point_json(dir: &Path) -> PointRun {
    let v: serde_json::Value = std::fs::read_to_string(dir.join("point.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    PointRun {
        ok: v["ok"].as_bool().unwrap_or(false),
        error: v["error"].as_str().map(str::to_string),
        peak_rss_mb: v["peak_rss_mb"].as_f64(),
    }
}
