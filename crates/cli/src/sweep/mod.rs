//! `fabriclab sweep`: expands a sweep file, runs its points N at a time, each
//! in a child process (skipping points already complete), and writes the tidy
//! table as `results.csv` and `results.parquet`.
//!
//! A point is complete when its directory's manifest lists summary.json and
//! point.json and every listed file matches it: the manifest is written last,
//! after the run's files (renamed into place whole) and point.json. Anything
//! less (a run killed half-way, a file truncated or changed since), or a
//! config this build resolves differently (a default changed), is run again,
//! and said so. One sweep at a time per directory (`sweep.lock`);
//! SIGINT/SIGTERM kill the running points and mark nothing complete.

mod child;
pub mod dask;
pub(crate) mod lock;
pub mod parquet_out;
pub mod stop;

use child::{run_point, PointRun};
use fabriclab::files;
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
    /// Points found incomplete (see the module comment) and run again.
    pub incomplete: usize,
    pub failed: Vec<(Point, String)>,
}

/// The runner `fabriclab repro` uses: each point in its own process, progress on stderr.
pub struct Runner;

impl fabriclab_repro::SweepRunner for Runner {
    fn run(&self, spec: &SweepSpec, out: &Path, jobs: usize) -> Result<fabriclab_repro::SweepOutcome, String> {
        let o = run(spec, &Options { jobs, out: out.to_path_buf(), quiet: false })?;
        // `repro` reports reruns through `ran`; the incomplete points were also named on stderr.
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
    let again = match o.incomplete {
        0 => String::new(),
        1 => "; 1 was incomplete and ran again".into(),
        n => format!("; {n} were incomplete and ran again"),
    };
    crate::print(&format!(
        "sweep: {} points, {} run, {} cached, {} failed{again}; wrote results.csv and results.parquet to {}\n",
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

/// [`files::point_done`] for every point, on `jobs` threads (it reads every result file).
fn check_all(points: &[Point], out: &Path, jobs: usize) -> Vec<Result<(), Option<String>>> {
    let next = AtomicUsize::new(0);
    let mut found: Vec<_> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.max(1).min(points.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some(p) = points.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let dir = point_dir(out, p);
                        mine.push((p.index, files::point_done(&dir).and_then(|()| same_config(p, &dir))));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, r)| r).collect()
}

/// A complete point still counts only if this build resolves its config as
/// the run did ([`files::config_matches`]).
fn same_config(p: &Point, dir: &Path) -> Result<(), Option<String>> {
    let now = crate::load(&p.base, &p.overrides, None).map_err(|e| Some(format!("its config no longer loads: {e}")))?;
    files::config_matches(dir, &now.to_toml())
}

/// Runs every point not already done and builds the table.
pub fn run(spec: &SweepSpec, opts: &Options) -> Result<Outcome, String> {
    let points = expand(spec).map_err(|e| e.to_string())?;
    if opts.out.exists() && !opts.out.is_dir() {
        return Err(format!("--out {} is a file, not a directory", opts.out.display()));
    }
    std::fs::create_dir_all(opts.out.join("points"))
        .map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let _lock = lock::acquire(&opts.out)?;
    let _active = stop::begin()?;
    let status = check_all(&points, &opts.out, opts.jobs);
    let mut incomplete = 0;
    for (p, st) in points.iter().zip(&status) {
        if let Err(Some(why)) = st {
            incomplete += 1;
            eprintln!("point {} is incomplete ({why}); running it again", p.id);
        }
    }
    let todo: Vec<&Point> = points.iter().zip(&status).filter(|(_, st)| st.is_err()).map(|(p, _)| p).collect();
    let cached = points.len() - todo.len();
    crate::guard::check_sweep(&todo, opts.jobs)?;
    let exe = crate::exe::SelfCommand::get()?;

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
                    if stop::requested().is_some() {
                        break;
                    }
                    let dir = point_dir(&opts.out, p);
                    let r = finish_point(&dir, p, run_point(exe, p, &dir));
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
    if let Some(sig) = stop::requested() {
        let done = runs.iter().flatten().filter(|r| r.ok).count();
        return Err(format!(
            "stopped by {}: {done} of the {} points to run finished; the running ones were killed and none of \
             them is marked complete. Run the same command again to resume.",
            stop::name(sig),
            todo.len(),
        ));
    }

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
    files::write(&opts.out.join("results.csv"), table.to_csv().as_bytes())?;
    parquet_out::write(&table, &opts.out.join("results.parquet"))?;
    Ok(Outcome { table, ran: todo.len(), cached, incomplete, failed })
}

/// One row, from the point's summary.json and how its process ended (a
/// failed point's summary.json, if it got that far, is not its result).
fn record(p: &Point, dir: &Path, r: PointRun) -> (Vec<(String, Cell)>, Option<String>) {
    let summary = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .filter(|_| r.ok)
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    sweep::record(p, sweep::Outcome { summary, error: r.error, peak_rss_mb: r.peak_rss_mb })
}

/// Records how the point ended: point.json (what only the parent saw: peak
/// RSS, how it ended, for resumed sweeps), then, if it is ok, the manifest
/// over the run's files, point.json and the logs. A point that failed has no
/// manifest (the run's own, if it wrote one before dying, is removed first).
fn finish_point(dir: &Path, p: &Point, mut r: PointRun) -> PointRun {
    if !r.ok {
        let _ = std::fs::remove_file(dir.join(files::MANIFEST));
    }
    let v = serde_json::json!({
        "id": p.id,
        "base": p.base,
        "overrides": p.overrides,
        "ok": r.ok,
        "error": r.error,
        "peak_rss_mb": r.peak_rss_mb,
    });
    let sealed = files::write(&dir.join("point.json"), format!("{v:#}\n").as_bytes()).and_then(|()| {
        if !r.ok {
            return Ok(());
        }
        let mut names: Vec<&str> = r.files.iter().map(String::as_str).collect();
        names.push("point.json");
        names.extend(child::LOGS);
        files::seal(dir, &names).map(drop)
    });
    if let Err(e) = sealed {
        let _ = std::fs::remove_file(dir.join(files::MANIFEST));
        r.ok = false;
        r.error = Some(e);
    }
    r
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
        files: vec![],
    }
}
