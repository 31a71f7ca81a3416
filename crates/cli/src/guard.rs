//! Refuses runs and sweeps that cannot fit the machine's memory, before they
//! start, and announces runs estimated at a long wall time (fabriclab::estimate
//! has the arithmetic).
//!
//! `--force` skips the check. It is passed on as the environment variable
//! `FABRICLAB_FORCE=1` (set once by `main` before any thread starts), so
//! that a forced sweep's points, which are `fabriclab run` processes, are
//! forced too without the sweep runner carrying the flag.

use fabriclab::config::Config;
use fabriclab::estimate::{available_memory, check, estimate, Estimate};
use fabriclab::sweep::Point;

use fabriclab::estimate::forced;
pub use fabriclab::estimate::{check_run, FORCE_VAR};

/// Before a run: says on stderr, even with --quiet, when the run is
/// estimated at more than ten minutes of wall time (a run of hours should
/// not start without a word; the progress bar's ETA is hidden by --quiet).
pub fn warn_long_run(cfg: &Config) {
    if let Some(w) = estimate(cfg).long_run_warning() {
        eprintln!("warning: {w}");
    }
}

/// Before a sweep runs `todo` with `jobs` points at a time: refuses if one
/// point alone, or the `jobs` largest together, exceed the memory available.
/// Points whose configuration does not load are left to fail on their own.
pub fn check_sweep(todo: &[&Point], jobs: usize) -> Result<(), String> {
    if forced() || todo.is_empty() {
        return Ok(());
    }
    let Some(avail) = available_memory() else {
        return Ok(());
    };
    let mut sizes: Vec<(f64, &Point, Estimate)> = Vec::new();
    for p in todo {
        if let Ok(cfg) = Config::load(&p.base, &p.overrides) {
            let e = estimate(&cfg);
            sizes.push((e.total_bytes(), p, e));
        }
    }
    sizes.sort_by(|a, b| b.0.total_cmp(&a.0));
    if let Some((_, p, e)) = sizes.first() {
        check(e, avail, &format!("point {} of the sweep ({})", p.id, p.overrides.join(" ")))?;
    }
    let jobs = jobs.max(1).min(sizes.len());
    let together: f64 = sizes.iter().take(jobs).map(|s| s.0).sum();
    if together > avail as f64 {
        // The most points that fit at once, largest first.
        let mut sum = 0.0;
        let fit = sizes.iter().take_while(|s| {
            sum += s.0;
            sum <= avail as f64
        });
        return Err(format!(
            "{jobs} points at a time need an estimated {} of memory, more than the {} this machine has \
             available; run with --jobs {} or fewer, or pass --force to run anyway",
            fabriclab::estimate::bytes(together),
            fabriclab::estimate::bytes(avail as f64),
            fit.count().max(1)
        ));
    }
    Ok(())
}
