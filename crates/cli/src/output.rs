//! `fabriclab run`: progress bar, result files and the human summary.
//!
//! The run directory is checked (and its provenance written) before the
//! simulation starts, so a bad `--out` costs nothing; every result file is
//! written under a temporary name and renamed into place, and the directory's
//! `manifest.json` is written last (see `fabriclab::files`).

use fabriclab::config::Config;
use fabriclab::files;
use fabriclab::metrics::histogram::CdfRow;
use fabriclab::metrics::occupancy::QueueSample;
use fabriclab::metrics::trace::TraceRecord;
use fabriclab::metrics::{MessageRecord, PortRecord, Summary};
use fabriclab::sim::run as simulate;
use fabriclab::workload::goal::OpRow;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::Path;

/// Every file a run writes (besides the manifest): what an earlier run may have left.
pub const RUN_FILES: &[&str] = &[
    "summary.json",
    "messages.csv",
    "ops.csv",
    "queues.csv",
    "traces.csv",
    "queue_cdf.csv",
    "queue_series.csv",
    "packets.pcap",
    "report.html",
    CONFIG_FILE,
    PROVENANCE_FILE,
];
/// The resolved configuration, exactly as `fabriclab validate` prints it.
/// (Not config.toml, which could be the experiment itself when --out is its directory.)
pub const CONFIG_FILE: &str = fabriclab::files::RESOLVED_CONFIG;
/// The command line, seed, version and commit of the run.
pub const PROVENANCE_FILE: &str = "provenance.json";

/// What the run directory records about how it was made.
pub struct Provenance<'a> {
    /// `fabriclab validate`'s output for the same file and overrides.
    pub resolved: &'a str,
    pub experiment: &'a Path,
}

pub fn run(cfg: &Config, out: &Path, quiet: bool, force: bool, prov: &Provenance) -> Result<(), String> {
    let _lock = prepare(out, force)?;
    write_provenance(cfg, out, prov)?;
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(1000) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {msg} (ETA {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let result = simulate(cfg, &mut |now, end| {
        bar.set_position(now.saturating_mul(1000) / end.max(1));
        bar.set_message(format!("{:.3}/{:.3} ms simulated", now as f64 / 1e9, end as f64 / 1e9));
    })
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    for w in &result.warnings {
        eprintln!("warning: {w}");
    }
    let s = &result.summary;
    files::write(&out.join("summary.json"), s.to_json().as_bytes())?;
    if cfg.output.messages {
        write_csv(&out.join("messages.csv"), MessageRecord::CSV_HEADER, &result.messages, MessageRecord::csv_row)?;
    }
    write_csv(&out.join("queues.csv"), PortRecord::CSV_HEADER, &result.ports, PortRecord::csv_row)?;
    let mut written = vec!["summary.json", "queues.csv"];
    if cfg.output.messages {
        written.insert(1, "messages.csv");
    }
    if s.goal.is_some() && cfg.output.ops {
        write_csv(&out.join("ops.csv"), OpRow::CSV_HEADER, &result.ops, OpRow::csv_row)?;
        written.push("ops.csv");
    }
    if !cfg.output.traces.is_empty() {
        write_csv(&out.join("traces.csv"), TraceRecord::CSV_HEADER, &result.traces, TraceRecord::csv_row)?;
        written.push("traces.csv");
    }
    if cfg.output.queue_percentiles {
        write_csv(&out.join("queue_cdf.csv"), CdfRow::CSV_HEADER, &result.queue_cdf, CdfRow::csv_row)?;
        written.push("queue_cdf.csv");
    }
    if !cfg.output.queue_ports.is_empty() {
        let names = &result.queue_ports;
        write_csv(&out.join("queue_series.csv"), QueueSample::CSV_HEADER, &result.queue_series, |r, line| {
            r.csv_row(names, line)
        })?;
        written.push("queue_series.csv");
    }
    if cfg.output.pcap() {
        files::write(&out.join("packets.pcap"), &result.pcap)?;
        written.push("packets.pcap");
        if result.pcap_dropped > 0 {
            eprintln!(
                "warning: packets.pcap reached output.pcap_max_mb = {} MB; {} later packets were not written to it",
                cfg.output.pcap_max_mb, result.pcap_dropped
            );
        }
    }
    let mut sealed = written.clone();
    sealed.extend([CONFIG_FILE, PROVENANCE_FILE]);
    files::seal(out, &sealed)?;
    let mut text = format_summary(s);
    let last = written.pop().unwrap_or_default();
    text.push_str(&format!("wrote {} and {last} to {}\n", written.join(", "), out.display()));
    crate::print(&text);
    Ok(())
}

/// Checks `out` before anything runs: a directory (created if missing) that
/// we can write, and not holding an earlier run's results unless `force`.
/// With `force`, removes the earlier run's files, the manifest first (so the
/// directory stops looking complete before anything else changes). Returns
/// the run's lock of `out`, taken before its old results are looked at: two
/// runs into one --out would otherwise leave a mix of both whose manifest verifies.
fn prepare(out: &Path, force: bool) -> Result<crate::sweep::lock::Lock, String> {
    if out.exists() && !out.is_dir() {
        return Err(format!("--out {} is a file, not a directory", out.display()));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create --out {}: {e}", out.display()))?;
    let probe = files::partial_name(&out.join("probe"));
    std::fs::File::create(&probe).map_err(|e| format!("cannot write to --out {}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&probe);
    let lock = crate::sweep::lock::acquire_named(out, crate::sweep::lock::RUN_LOCK_FILE, "run")?;
    // A manifest marks a finished run; summary.json without provenance.json
    // one from before manifests existed. provenance.json alone (written before
    // the simulation) marks a run of ours that did not finish.
    let has = |n: &str| out.join(n).exists();
    let ours_unfinished = has(PROVENANCE_FILE) && !has(files::MANIFEST);
    let finished: Vec<&str> = if ours_unfinished {
        vec![]
    } else {
        [files::MANIFEST, "summary.json"].into_iter().filter(|n| has(n)).collect()
    };
    if !finished.is_empty() && !force {
        return Err(format!(
            "--out {} holds the results of an earlier run ({}); pass --force to overwrite them, or choose another \
             directory",
            out.display(),
            finished.join(", ")
        ));
    }
    // Only files known to be a run's go: --out may be a directory with other files in it.
    if finished.is_empty() && !ours_unfinished {
        return Ok(lock);
    }
    for name in std::iter::once(files::MANIFEST).chain(RUN_FILES.iter().copied()) {
        match std::fs::remove_file(out.join(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove the earlier {}: {e}", out.join(name).display())),
        }
    }
    Ok(lock)
}

/// config.resolved.toml and provenance.json, written before the run so that even an
/// unfinished run directory says what it was.
fn write_provenance(cfg: &Config, out: &Path, prov: &Provenance) -> Result<(), String> {
    files::write(&out.join(CONFIG_FILE), prov.resolved.as_bytes())?;
    let v = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>(),
        "cwd": std::env::current_dir().ok(),
        "experiment": prov.experiment,
        "seed": cfg.run.seed,
        "fabriclab_version": env!("CARGO_PKG_VERSION"),
        "git_commit": env!("FABRICLAB_GIT_COMMIT"),
        "model": fabriclab::MODEL,
    });
    files::write(&out.join(PROVENANCE_FILE), format!("{v:#}\n").as_bytes())
}

fn write_csv<T>(path: &Path, header: &str, rows: &[T], row: impl Fn(&T, &mut String)) -> Result<(), String> {
    files::write_with(path, |f| {
        let mut w = std::io::BufWriter::new(f);
        let mut line = String::with_capacity(128);
        writeln!(w, "{header}")?;
        for r in rows {
            line.clear();
            row(r, &mut line);
            w.write_all(line.as_bytes())?;
        }
        w.flush()
    })
}

/// The human summary printed after a run.
pub fn format_summary(s: &Summary) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} | seed {} | {:.3} ms simulated in {:.2} s ({:.1} M events/s) | {}",
        s.protocol,
        s.seed,
        s.sim_time_s * 1e3,
        s.wall_time_s,
        s.events_per_s / 1e6,
        if s.stable { "stable" } else { "UNSTABLE" }
    );
    let _ = writeln!(
        o,
        "load {:.2} ({}) offered {:.2} Gbps/host | goodput {:.2} Gbps/host ({:.1}% of link)",
        s.offered_load,
        s.load_reference,
        s.offered_gbps,
        s.goodput_gbps,
        s.goodput_fraction * 100.0
    );
    let _ = writeln!(
        o,
        "ToR queue max {:.1} KB mean {:.1} KB | switch max {:.1} KB | drops {}",
        s.tor_queue_max_bytes as f64 / 1e3,
        s.tor_queue_mean_bytes / 1e3,
        s.switch_queue_max_bytes as f64 / 1e3,
        s.drops
    );
    if s.trims + s.pfc_pauses + s.selective_drops > 0 {
        let _ = writeln!(o, "trims {} | PFC pauses {} | selective drops {}", s.trims, s.pfc_pauses, s.selective_drops);
    }
    let _ = writeln!(o, "messages {} started, {} completed", s.messages_started, s.messages_completed);
    let _ = writeln!(o, "slowdown {:>6} {:>9} {:>8} {:>8} {:>8}", "group", "count", "mean", "p50", "p99");
    for (g, st) in &s.slowdown {
        let _ = writeln!(o, "         {:>6} {:>9} {:>8.2} {:>8.2} {:>8.2}", g, st.count, st.mean, st.p50, st.p99);
    }
    o
}
