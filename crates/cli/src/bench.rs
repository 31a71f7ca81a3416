//! `fabriclab bench`: fixed scenarios that measure the simulator's speed.
//! Each runs in its own child process, so that its peak memory is its own,
//! and reports wall time, events, events/s, packets per wall second,
//! packet-hops per wall second and peak RSS as one JSON record.

use fabriclab::config::Config;
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// One benchmark: a name, what it is, and the experiment it runs.
struct Scenario {
    name: &'static str,
    about: &'static str,
    toml: &'static str,
}

const SIRD_LEAF_SPINE: &str = r#"
[topology]
kind = "leaf_spine"
[protocol]
name = "sird"
[workload]
kind = "poisson"
size_dist = "wkc"
load = 0.5
[run]
duration_ms = 10.0
warmup_ms = 1.0
"#;

const FAT_TREE_128_PERMUTATION: &str = r#"
[topology]
kind = "fat_tree"
k = 8
host_rate_gbps = 100.0
fabric_rate_gbps = 100.0
[network]
mtu = 4000
[workload]
kind = "permutation"
bytes = 20000000
[run]
duration_ms = 1000.0
warmup_ms = 0.0
"#;

const FAT_TREE_1024_PERMUTATION: &str = r#"
[topology]
kind = "fat_tree"
k = 16
[workload]
kind = "permutation"
bytes = 2000000
[run]
duration_ms = 1000.0
warmup_ms = 0.0
"#;

const INCAST_64: &str = r#"
[topology]
kind = "fat_tree"
k = 8
[workload]
kind = "incast"
senders = 64
receiver = 0
bytes = 1000000
[run]
duration_ms = 1000.0
warmup_ms = 0.0
"#;

const SCENARIOS: &[(Scenario, &str)] = &[
    (
        Scenario {
            name: "a-sird-leafspine144-wkc50",
            about: "SIRD, 144-host leaf-spine, WKc, 50% load, 10 ms",
            toml: SIRD_LEAF_SPINE,
        },
        "sird",
    ),
    (
        Scenario {
            name: "b-dctcp-fattree128-perm20MB",
            about: "DCTCP, k=8 fat tree, 100G, MTU 4000, 20 MB permutation, ECMP",
            toml: FAT_TREE_128_PERMUTATION,
        },
        "dctcp",
    ),
    (
        Scenario {
            name: "c-sird-fattree128-perm20MB",
            about: "SIRD, k=8 fat tree, 100G, MTU 4000, 20 MB permutation, spraying",
            toml: FAT_TREE_128_PERMUTATION,
        },
        "sird",
    ),
    (
        Scenario {
            name: "d-dctcp-fattree1024-perm2MB",
            about: "DCTCP, k=16 fat tree (1,024 hosts), 2 MB permutation",
            toml: FAT_TREE_1024_PERMUTATION,
        },
        "dctcp",
    ),
    (
        Scenario {
            name: "d-sird-fattree1024-perm2MB",
            about: "SIRD, k=16 fat tree (1,024 hosts), 2 MB permutation",
            toml: FAT_TREE_1024_PERMUTATION,
        },
        "sird",
    ),
    (
        Scenario {
            name: "e-dctcp-incast64-1MB",
            about: "DCTCP, 64-to-1 incast of 1 MB on a k=8 fat tree",
            toml: INCAST_64,
        },
        "dctcp",
    ),
    (
        Scenario {
            name: "e-sird-incast64-1MB",
            about: "SIRD, 64-to-1 incast of 1 MB on a k=8 fat tree",
            toml: INCAST_64,
        },
        "sird",
    ),
];

/// Runs the suite (or the scenarios whose name contains `only`), each in a child process.
pub fn run(only: Option<&str>, record: Option<&Path>, list: bool) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!("warning: debug build; benchmark numbers are meaningless (use --release)");
    }
    let chosen: Vec<_> = SCENARIOS.iter().filter(|(s, _)| only.is_none_or(|o| s.name.contains(o))).collect();
    if chosen.is_empty() {
        let names: Vec<_> = SCENARIOS.iter().map(|(s, _)| s.name).collect();
        return Err(format!("no benchmark matches {:?}; scenarios: {}", only.unwrap_or(""), names.join(", ")));
    }
    if list {
        for (s, _) in &chosen {
            crate::print(&format!("{:<30} {}\n", s.name, s.about));
        }
        return Ok(());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    for (s, _) in chosen {
        eprintln!("bench {} ...", s.name);
        let out = Command::new(&exe)
            .args(["bench-one", s.name])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", s.name))?;
        if !out.status.success() {
            return Err(format!("{} failed: {}", s.name, String::from_utf8_lossy(&out.stderr)));
        }
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        crate::print(&format!("{line}\n"));
        if let Some(path) = record {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            writeln!(f, "{line}").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Runs one scenario in this process and prints its JSON record.
pub fn run_one(name: &str) -> Result<(), String> {
    let (s, protocol) = SCENARIOS.iter().find(|(s, _)| s.name == name).ok_or(format!("unknown benchmark {name}"))?;
    let set = vec![format!("protocol.name={protocol}"), "output.messages=false".to_string()];
    let cfg = Config::from_str_with(s.toml, &set, Path::new(".")).map_err(|e| e.to_string())?;
    let out = fabriclab::sim::run(&cfg, &mut |_, _| {}).map_err(|e| e.to_string())?;
    let m = &out.summary;
    let wall = m.wall_time_s.max(1e-9);
    let json = serde_json::json!({
        "scenario": s.name,
        "fabriclab_version": env!("CARGO_PKG_VERSION"),
        "hosts": m.hosts,
        "sim_time_s": m.sim_time_s,
        "wall_time_s": m.wall_time_s,
        "events": m.events,
        "events_per_s": m.events as f64 / wall,
        "packets_sent": m.packets_sent,
        "data_packets_sent": m.data_packets_sent,
        "data_packets_per_s": m.data_packets_sent as f64 / wall,
        "packet_hops": m.packet_hops,
        "packet_hops_per_s": m.packet_hops as f64 / wall,
        "peak_rss_mb": peak_rss_kb().map(|k| k as f64 / 1024.0),
        "messages_completed": m.messages_completed,
        "goodput_gbps": m.goodput_gbps,
    });
    crate::print(&format!("{json}\n"));
    Ok(())
}

/// Peak resident set size (VmHWM) on Linux.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}
