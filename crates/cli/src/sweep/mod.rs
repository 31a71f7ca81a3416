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
pub mod records;
pub mod stop;

use child::{run_point, PointRun};
use fabriclab::files;
use fabriclab::sweep::{self, expand, Point, SweepSpec, Table};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// How to run a sweep.
pub struct Options {
    pub jobs: usize,
    pub out: PathBuf,
    pub quiet: bool,
    /// Keep a record of every finished point here, and reuse a record made
    /// from the same config by the same model instead of running ([`records`]).
    pub records: Option<PathBuf>,
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
    fn run(
        &self,
        spec: &SweepSpec,
        out: &Path,
        jobs: usize,
        records: Option<&Path>,
    ) -> Result<fabriclab_repro::SweepOutcome, String> {
        let opts = Options { jobs, out: out.to_path_buf(), quiet: false, records: records.map(Path::to_path_buf) };
        let o = run(spec, &opts)?;
        // `repro` reports reruns through `ran`; the incomplete points were also named on stderr.
        Ok(fabriclab_repro::SweepOutcome { table: o.table, ran: o.ran, cached: o.cached, failed: o.failed })
    }
}

/// `fabriclab sweep`: runs the file and reports; fails if any point failed.
pub fn command(file: &Path, quick: bool, set: &[String], opts: &Options) -> Result<(), String> {
    let mut spec = SweepSpec::load(file).map_err(|e| e.to_string())?;
    if quick {
        spec = spec.quick();
    }
    let spec = spec.with_overrides(set).map_err(|e| e.to_string())?;
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

/// [`files::point_done`] for every point, on `jobs` threads (it reads every
/// result file), with the config this build resolves for it (its hash is a
/// record's key) or why it does not resolve.
fn check_all(points: &[Point], out: &Path, jobs: usize) -> Vec<Checked> {
    let next = AtomicUsize::new(0);
    let mut found: Vec<_> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.max(1).min(points.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some(p) = points.get(next.fetch_add(1, Ordering::Relaxed)) {
                        mine.push((p.index, check(p, &point_dir(out, p))));
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

/// One point before the sweep runs anything.
struct Checked {
    /// The resolved config's text, or the config error.
    resolved: Result<String, String>,
    /// Its records' key ([`fabriclab::config::Config::identity`]), or why there is none.
    identity: Result<String, String>,
    /// Whether its folder holds a complete run of that config (else why not, if worth saying).
    done: Result<(), Option<String>>,
}

/// A complete point still counts only if this build resolves its config as
/// the run did ([`files::config_matches`]).
fn check(p: &Point, dir: &Path) -> Checked {
    let loaded = crate::load(&p.base, &p.overrides, None).map_err(|e| e.to_string());
    let identity = loaded.as_ref().map_err(Clone::clone).and_then(|c| c.identity());
    let resolved = loaded.map(|c| c.to_toml());
    let done = files::point_done(dir).and_then(|()| match &resolved {
        Ok(now) => files::config_matches(dir, now),
        Err(e) => Err(Some(format!("its config no longer loads: {e}"))),
    });
    Checked { resolved, identity, done }
}

/// Where a point's row comes from.
enum Source {
    /// Its folder (complete from before, or run now).
    Folder,
    /// Its record, made from the same config by the same model.
    Record(records::Kept),
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
    let checked = check_all(&points, &opts.out, opts.jobs);
    sweep::refuse_unloadable(&points, checked.iter().map(|c| c.resolved.as_ref().err().map(String::as_str)))?;
    let store = opts.records.as_deref().map(records::Store::open).transpose()?;
    // Every config resolved (refuse_unloadable), so each point has its key; only records need it.
    let hashes: Vec<String> = match store {
        Some(_) => checked.iter().map(|c| c.identity.clone()).collect::<Result<_, _>>()?,
        None => vec![],
    };
    let hash = |i: usize| hashes[i].as_str();
    let mut sources: Vec<Option<Source>> = Vec::with_capacity(points.len());
    let (mut incomplete, mut from_records) = (0, 0);
    for (p, c) in points.iter().zip(&checked) {
        let kept = match (&c.done, &store) {
            (Ok(()), _) => {
                sources.push(Some(Source::Folder));
                continue;
            }
            (Err(_), Some(store)) => store.find(p, hash(p.index)),
            (Err(_), None) => Err(records::Miss::Absent),
        };
        match kept {
            Ok(k) => {
                from_records += 1;
                sources.push(Some(Source::Record(k)));
                continue;
            }
            Err(records::Miss::Stale(why)) => eprintln!("point {} is run again: {why}", p.id),
            Err(records::Miss::Absent) => {}
        }
        if let Err(Some(why)) = &c.done {
            incomplete += 1;
            eprintln!("point {} is incomplete ({why}); running it again", p.id);
        }
        sources.push(None);
    }
    let todo: Vec<&Point> = points.iter().zip(&sources).filter(|(_, s)| s.is_none()).map(|(p, _)| p).collect();
    let cached = points.len() - todo.len();
    crate::guard::check_sweep(&todo, opts.jobs)?;
    let exe = crate::exe::SelfCommand::get()?;

    let bar = if opts.quiet { ProgressBar::hidden() } else { ProgressBar::new(todo.len() as u64) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} points {msg} (ETA {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let from = if from_records > 0 { format!(", {from_records} of them from records") } else { String::new() };
    bar.set_message(format!("({cached} cached{from}, 0 failed)"));
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
        for (i, mut r) in rx {
            // The record is written as soon as the point ends, so that a run
            // committed while it goes on keeps every finished point.
            if let (true, Some(store)) = (r.ok, &store) {
                let p = &points[i];
                if let Err(e) = read_summary(&point_dir(&opts.out, p))
                    .ok_or_else(|| "its summary.json does not parse".to_string())
                    .and_then(|s| store.keep(p, hash(i), &s, r.peak_rss_mb, env!("FABRICLAB_GIT_COMMIT")))
                {
                    r.ok = false;
                    r.error = Some(format!("cannot keep its record: {e}"));
                }
            }
            if !r.ok {
                failures += 1;
                bar.suspend(|| eprintln!("point {} failed: {}", points[i].id, r.error.as_deref().unwrap_or("")));
            }
            runs[i] = Some(r);
            bar.set_message(format!("({cached} cached{from}, {failures} failed)"));
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

    let mut rows = Vec::with_capacity(points.len());
    let mut failed = Vec::new();
    for ((p, r), source) in points.iter().zip(runs).zip(sources) {
        let (summary, r) = match &source {
            Some(Source::Record(k)) => {
                let r = PointRun { ok: true, error: None, peak_rss_mb: k.peak_rss_mb, files: vec![] };
                (Some(k.summary.clone()), r)
            }
            Some(Source::Folder) | None => {
                let dir = point_dir(&opts.out, p);
                let r = r.unwrap_or_else(|| read_point_json(&dir));
                let summary = read_summary(&dir).filter(|_| r.ok);
                // A point found complete in its folder (so of this model) gets the record it lacks.
                if let (Some(store), Some(s), Some(Source::Folder)) = (&store, &summary, &source) {
                    if store.find(p, hash(p.index)).is_err() {
                        store.keep(p, hash(p.index), s, r.peak_rss_mb, &provenance_commit(&dir))?;
                    }
                }
                (summary, r)
            }
        };
        let (row, err) = sweep::record(p, sweep::Outcome { summary, error: r.error, peak_rss_mb: r.peak_rss_mb });
        if let Some(e) = err {
            failed.push((p.clone(), e));
        }
        rows.push(row);
    }
    let table = Table::from_records(&rows);
    files::write(&opts.out.join("results.csv"), table.to_csv().as_bytes())?;
    parquet_out::write(&table, &opts.out.join("results.parquet"))?;
    Ok(Outcome { table, ran: todo.len(), cached, incomplete, failed })
}

/// The commit that built the run in `dir` (its provenance.json), or "unknown".
fn provenance_commit(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(crate::output::PROVENANCE_FILE))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["git_commit"].as_str().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// A point's summary.json, parsed.
fn read_summary(dir: &Path) -> Option<serde_json::Value> {
    std::fs::read_to_string(dir.join("summary.json")).ok().and_then(|t| serde_json::from_str(&t).ok())
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
        // The child is this executable, so its model is this build's.
        "model": fabriclab::MODEL,
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
