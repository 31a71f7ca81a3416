//! `fabriclab bench`: the fixed scenario of DESIGN.md §5 — SIRD on the 144-host
//! leaf-spine, WKc at 50% load — reporting events/s, packet-hops per wall
//! second and peak memory.

use fabriclab::config::Config;
use std::io::Write;
use std::path::Path;

const SCENARIO: &str = r#"
[topology]
kind = "leaf_spine"
[protocol]
name = "sird"
[workload]
kind = "poisson"
size_dist = "wkc"
load = 0.5
[run]
warmup_ms = 1.0
seed = 1
[output]
messages = false
"#;

pub fn run(duration_ms: f64, record: Option<&Path>) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!("warning: debug build; benchmark numbers are meaningless (use --release)");
    }
    let set = vec![format!("run.duration_ms={duration_ms}")];
    let cfg = Config::from_str_with(SCENARIO, &set, Path::new(".")).map_err(|e| e.to_string())?;
    let out = fabriclab::sim::run(&cfg, &mut |_, _| {}).map_err(|e| e.to_string())?;
    let s = &out.summary;
    let rss_kb = peak_rss_kb();
    let json = serde_json::json!({
        "scenario": "sird-leafspine144-wkc-50",
        "fabriclab_version": env!("CARGO_PKG_VERSION"),
        "duration_ms": duration_ms,
        "wall_time_s": s.wall_time_s,
        "events": s.events,
        "events_per_s": s.events_per_s,
        "packets_sent": s.packets_sent,
        "packet_hops": s.packet_hops,
        "packet_hops_per_s": s.packet_hops as f64 / s.wall_time_s,
        "data_and_control_packets_per_s": s.packets_sent as f64 / s.wall_time_s,
        "peak_rss_mb": rss_kb.map(|k| k as f64 / 1024.0),
        "goodput_gbps": s.goodput_gbps,
    });
    crate::print(&format!("{}\n", serde_json::to_string_pretty(&json).expect("json")));
    if let Some(path) = record {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        writeln!(f, "{}", json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Peak resident set size (VmHWM) on Linux.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}
