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
    protocol: &'static str,
    scaled: &'static [(&'static str, f64)],
}

const SIRD_LEAF_SPINE: &str = include_str!("../../../experiments/bench/leaf-spine-wkc.toml");

const FAT_TREE_128_PERMUTATION: &str = include_str!("../../../experiments/bench/fat-tree-128-permutation.toml");

const FAT_TREE_1024_PERMUTATION: &str = include_str!("../../../experiments/bench/fat-tree-1024-permutation.toml");

const INCAST_64: &str = include_str!("../../../experiments/bench/incast-64.toml");

/// Each scenario: what it runs, and the keys whose base values `--scale`
/// multiplies (message sizes or durations), so that the same scenario runs
/// small in CI and at full size on a workstation.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "a-sird-leafspine144-wkc50",
        about: "SIRD, 144-host leaf-spine, WKc, 50% load, 10 ms",
        toml: SIRD_LEAF_SPINE,
        protocol: "sird",
        scaled: &[("run.duration_ms", 10.0), ("run.warmup_ms", 1.0)],
    },
    Scenario {
        name: "b-dctcp-fattree128-perm20MB",
        about: "DCTCP, k=8 fat tree, 100G, MTU 4000, 20 MB permutation, ECMP",
        toml: FAT_TREE_128_PERMUTATION,
        protocol: "dctcp",
        scaled: &[("workload.bytes", 20e6)],
    },
    Scenario {
        name: "c-sird-fattree128-perm20MB",
        about: "SIRD, k=8 fat tree, 100G, MTU 4000, 20 MB permutation, spraying",
        toml: FAT_TREE_128_PERMUTATION,
        protocol: "sird",
        scaled: &[("workload.bytes", 20e6)],
    },
    Scenario {
        name: "d-dctcp-fattree1024-perm2MB",
        about: "DCTCP, k=16 fat tree (1,024 hosts), 2 MB permutation",
        toml: FAT_TREE_1024_PERMUTATION,
        protocol: "dctcp",
        scaled: &[("workload.bytes", 2e6)],
    },
    Scenario {
        name: "d-sird-fattree1024-perm2MB",
        about: "SIRD, k=16 fat tree (1,024 hosts), 2 MB permutation",
        toml: FAT_TREE_1024_PERMUTATION,
        protocol: "sird",
        scaled: &[("workload.bytes", 2e6)],
    },
    Scenario {
        name: "e-dctcp-incast64-1MB",
        about: "DCTCP, 64-to-1 incast of 1 MB on a k=8 fat tree",
        toml: INCAST_64,
        protocol: "dctcp",
        scaled: &[("workload.bytes", 1e6)],
    },
    Scenario {
        name: "e-sird-incast64-1MB",
        about: "SIRD, 64-to-1 incast of 1 MB on a k=8 fat tree",
        toml: INCAST_64,
        protocol: "sird",
        scaled: &[("workload.bytes", 1e6)],
    },
];

/// How `fabriclab bench` runs.
pub struct Options<'a> {
    pub only: Option<&'a str>,
    pub record: Option<&'a Path>,
    pub list: bool,
    /// Runs per scenario; the record gives the median and the extremes.
    pub repeat: u32,
    /// Multiplies each scenario's sizes or durations.
    pub scale: f64,
    /// Instead of the suite: run the chosen scenario at 1/8, 1/4, 1/2 and 1
    /// of `scale` and fit wall time ~ packets^exponent.
    pub scaling: bool,
}

/// Runs the suite (or the scenarios whose name contains `only`), each in a child process.
pub fn run(o: &Options) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!("warning: debug build; benchmark numbers are meaningless (use --release)");
    }
    if !(o.scale > 0.0 && o.scale.is_finite()) {
        return Err(format!("--scale must be a positive number, got {}", o.scale));
    }
    if o.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    let chosen: Vec<_> = SCENARIOS.iter().filter(|s| o.only.is_none_or(|x| s.name.contains(x))).collect();
    if chosen.is_empty() {
        let names: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
        return Err(format!("no benchmark matches {:?}; scenarios: {}", o.only.unwrap_or(""), names.join(", ")));
    }
    if o.list {
        for s in &chosen {
            crate::print(&format!("{:<30} {}\n", s.name, s.about));
        }
        return Ok(());
    }
    if o.scaling {
        let [s] = chosen[..] else {
            return Err(format!("--scaling needs exactly one scenario; --only matches {}", chosen.len()));
        };
        return scaling(s, o);
    }
    // Taken once, before the first record is appended: the history file is
    // tracked, so asking after that would call every later record "+dirty".
    let commit = commit();
    for s in chosen {
        let rec = measure(s, o.scale, o.repeat, &commit)?;
        emit(&rec, o.record)?;
    }
    Ok(())
}

/// Runs `s` `repeat` times in child processes; the record of the median run,
/// with the minimum and maximum wall time of all runs.
fn measure(s: &Scenario, scale: f64, repeat: u32, commit: &str) -> Result<serde_json::Value, String> {
    let exe = crate::exe::SelfCommand::get()?;
    let mut runs = Vec::new();
    for i in 0..repeat {
        eprintln!("bench {} (scale {scale}, run {}/{repeat}) ...", s.name, i + 1);
        let out = exe
            .command()
            .args(["bench-one", s.name, "--scale", &scale.to_string()])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", s.name))?;
        if !out.status.success() {
            return Err(format!("{} failed: {}", s.name, String::from_utf8_lossy(&out.stderr)));
        }
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("{}: unreadable record: {e}", s.name))?;
        runs.push(v);
    }
    let wall = |v: &serde_json::Value| v["wall_time_s"].as_f64().unwrap_or(f64::NAN);
    runs.sort_by(|a, b| wall(a).total_cmp(&wall(b)));
    let (min, max) = (wall(&runs[0]), wall(&runs[runs.len() - 1]));
    let mut rec = runs.swap_remove(runs.len() / 2);
    rec["commit"] = commit.into();
    rec["runs"] = repeat.into();
    rec["wall_time_min_s"] = min.into();
    rec["wall_time_max_s"] = max.into();
    Ok(rec)
}

fn emit(rec: &serde_json::Value, record: Option<&Path>) -> Result<(), String> {
    let line = rec.to_string();
    crate::print(&format!("{line}\n"));
    if let Some(path) = record {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        writeln!(f, "{line}").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Cost against size: wall time at four sizes and the least-squares slope of
/// log(wall) against log(data packets) (1 = linear).
fn scaling(s: &Scenario, o: &Options) -> Result<(), String> {
    let mut points = Vec::new();
    let commit = commit();
    for f in [0.125, 0.25, 0.5, 1.0] {
        let rec = measure(s, o.scale * f, o.repeat, &commit)?;
        let packets = rec["data_packets_sent"].as_f64().unwrap_or(0.0);
        let wall = rec["wall_time_s"].as_f64().unwrap_or(0.0);
        if packets <= 0.0 || wall <= 0.0 {
            return Err(format!("{}: no packets or no time at scale {}", s.name, o.scale * f));
        }
        points.push((packets, wall, rec));
    }
    let xy: Vec<(f64, f64)> = points.iter().map(|(p, w, _)| (p.ln(), w.ln())).collect();
    let n = xy.len() as f64;
    let (mx, my) = (xy.iter().map(|p| p.0).sum::<f64>() / n, xy.iter().map(|p| p.1).sum::<f64>() / n);
    let sxy: f64 = xy.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xy.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    let rec = serde_json::json!({
        "scaling": s.name,
        "exponent": sxy / sxx,
        "points": points.iter().map(|(p, w, r)| serde_json::json!({
            "scale": r["scale"], "data_packets": p, "wall_time_s": w,
        })).collect::<Vec<_>>(),
    });
    emit(&rec, o.record)
}

/// Runs one scenario in this process and prints its JSON record.
pub fn run_one(name: &str, scale: f64) -> Result<(), String> {
    let s = SCENARIOS.iter().find(|s| s.name == name).ok_or(format!("unknown benchmark {name}"))?;
    let mut set = vec![format!("protocol.name={}", s.protocol), "output.messages=false".to_string()];
    for (key, base) in s.scaled {
        let v = base * scale;
        // Byte counts stay integers.
        set.push(if key.ends_with("bytes") {
            format!("{key}={}", v.round().max(1.0) as u64)
        } else {
            format!("{key}={v}")
        });
    }
    let cfg = Config::from_str_with(s.toml, &set, Path::new(".")).map_err(|e| e.to_string())?;
    let out = fabriclab::sim::run(&cfg, &mut |_, _| {}).map_err(|e| e.to_string())?;
    let m = &out.summary;
    let wall = m.wall_time_s.max(1e-9);
    let json = serde_json::json!({
        "scenario": s.name,
        "scale": scale,
        "fabriclab_version": env!("CARGO_PKG_VERSION"),
        // "pgo" for a binary from scripts/build-pgo.sh.
        "build": option_env!("FABRICLAB_BUILD").unwrap_or("release"),
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
        // The event model's cost without a profiler: events per hop of any packet (data or control).
        "events_per_packet_hop": m.events as f64 / m.packet_hops.max(1) as f64,
        "peak_rss_mb": peak_rss_kb().map(|k| k as f64 / 1024.0),
        "messages_completed": m.messages_completed,
        "goodput_gbps": m.goodput_gbps,
    });
    crate::print(&format!("{json}\n"));
    Ok(())
}

/// The source tree's commit (with "+dirty" for uncommitted changes), so that
/// history records can be compared across commits.
fn commit() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        Command::new("git").arg("-C").arg(dir).args(args).output().ok().filter(|o| o.status.success()).map(|o| o.stdout)
    };
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "unknown".into();
    };
    // The history file itself changes as records are appended; it does not make the code dirty.
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no", "--", ":(top)", ":(top,exclude)bench/history.jsonl"])
            .is_some_and(|s| !s.is_empty());
    format!("{}{}", String::from_utf8_lossy(&head).trim(), if dirty { "+dirty" } else { "" })
}

/// Peak resident set size (VmHWM) on Linux.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}
