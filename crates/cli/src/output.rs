//! `fabriclab run`: progress bar, result files and the human summary.

use fabriclab::config::Config;
use fabriclab::metrics::trace::TraceRecord;
use fabriclab::metrics::{MessageRecord, PortRecord, Summary};
use fabriclab::sim::run as simulate;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::Path;

pub fn run(cfg: &Config, out: &Path, quiet: bool) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
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
    let s = &result.summary;
    write(&out.join("summary.json"), s.to_json().as_bytes())?;
    if cfg.output.messages {
        write_csv(&out.join("messages.csv"), MessageRecord::CSV_HEADER, &result.messages, MessageRecord::csv_row)?;
    }
    write_csv(&out.join("queues.csv"), PortRecord::CSV_HEADER, &result.ports, PortRecord::csv_row)?;
    let mut files = vec!["summary.json", "queues.csv"];
    if cfg.output.messages {
        files.insert(1, "messages.csv");
    }
    if !cfg.output.traces.is_empty() {
        write_csv(&out.join("traces.csv"), TraceRecord::CSV_HEADER, &result.traces, TraceRecord::csv_row)?;
        files.push("traces.csv");
    }
    let mut text = format_summary(s);
    let last = files.pop().unwrap_or_default();
    text.push_str(&format!("wrote {} and {last} to {}\n", files.join(", "), out.display()));
    crate::print(&text);
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_csv<T>(path: &Path, header: &str, rows: &[T], row: impl Fn(&T, &mut String)) -> Result<(), String> {
    let err = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let f = std::fs::File::create(path).map_err(err)?;
    let mut w = std::io::BufWriter::new(f);
    let mut line = String::with_capacity(128);
    writeln!(w, "{header}").map_err(err)?;
    for r in rows {
        line.clear();
        row(r, &mut line);
        w.write_all(line.as_bytes()).map_err(err)?;
    }
    w.flush().map_err(err)
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
