//! Helpers shared by the integration tests.
#![allow(dead_code)]

use fabriclab::config::Config;
use fabriclab::sim::{run, RunOutput};
use fabriclab::workload::{Workload, WorkloadConfig, WorkloadEnv};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub fn config(text: &str, overrides: &[&str]) -> Config {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::from_str_with(text, &o, Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

pub fn simulate(text: &str, overrides: &[&str]) -> RunOutput {
    run(&config(text, overrides), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// A unique scratch file path.
pub fn scratch(name: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("fabriclab-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{}-{name}", N.fetch_add(1, Ordering::Relaxed)))
}

/// Writes a trace CSV (time_us, src, dst, bytes) and returns its path.
pub fn trace(rows: &[(f64, u32, u32, u64)]) -> PathBuf {
    let mut s = String::from("time_us,src,dst,bytes\n");
    for (t, a, b, n) in rows {
        s.push_str(&format!("{t},{a},{b},{n}\n"));
    }
    let p = scratch("trace.csv");
    std::fs::write(&p, s).unwrap();
    p
}

/// A finite slice of a Poisson workload, frozen into a trace, so that a run
/// can end with every message complete.
pub fn poisson_trace(workload_toml: &str, topo_text: &str, until_us: f64, seed: u64) -> PathBuf {
    let cfg = config(topo_text, &[]);
    let topo = cfg.topology.build();
    let wl: WorkloadConfig =
        toml::from_str::<toml::Table>(workload_toml).map(|t| t["workload"].clone().try_into().unwrap()).unwrap();
    let env = WorkloadEnv {
        n_hosts: topo.n_hosts,
        host_rate_bps: topo.host_rate_bps(0),
        rack_of: topo.rack_of.clone(),
        core_ratio: topo.core_ratio,
        racks_per_pod: topo.racks_per_pod,
        mss: 1460,
        seed,
        end: (until_us * 1e6) as u64,
    };
    let rows: Vec<_> =
        Workload::build(&wl, &env).unwrap().map(|m| (m.time as f64 / 1e6, m.src, m.dst, m.size)).collect();
    assert!(!rows.is_empty());
    trace(&rows)
}

pub fn trace_workload(path: &Path) -> String {
    format!("[workload]\nkind = \"trace\"\ntrace_file = \"{}\"\n", path.display())
}

/// Runs experiment `base` with a single message of `size` bytes from `src` to
/// `dst` at time 0 (the lone-message latency tests of every protocol).
pub fn lone_run(base: &str, src: u32, dst: u32, size: u64, extra: &[&str]) -> RunOutput {
    let t = trace(&[(0.0, src, dst, size)]);
    let out = simulate(&format!("{base}{}", trace_workload(&t)), extra);
    assert_eq!(out.messages.len(), 1);
    out
}

/// One host on each side of a dumbbell running `protocol`, 5 ms.
pub fn dumbbell(protocol: &str) -> String {
    experiment("kind = \"dumbbell\"\nhosts_left = 1\nhosts_right = 1", protocol, 5.0)
}

/// The default (SIRD evaluation) leaf-spine running `protocol`, 5 ms.
pub fn leaf_spine(protocol: &str) -> String {
    experiment("kind = \"leaf_spine\"", protocol, 5.0)
}

/// The record of one message of `size` bytes alone in the network.
pub fn lone(base: &str, src: u32, dst: u32, size: u64, extra: &[&str]) -> fabriclab::metrics::MessageRecord {
    lone_run(base, src, dst, size, extra).messages[0]
}

/// Eight senders on a 9-host star each send 20 MB to host 0 at t = 0 (50 ms,
/// 1 ms warm-up): the long-lived incast where window protocols settle.
pub fn long_incast(protocol: &str) -> String {
    let star = experiment("kind = \"star\"\nhosts = 9", protocol, 50.0).replace("warmup_ms = 0.0", "warmup_ms = 1.0");
    star + "[workload]\nkind = \"incast\"\nreceiver = 0\nsender_hosts = [1, 2, 3, 4, 5, 6, 7, 8]\nbytes = 20000000\n"
}

/// A star of `hosts` at PayDebt's 10 Gbps with BDP 12.5 KB running `protocol`.
pub fn star10(protocol: &str, hosts: u32, duration_ms: f64) -> String {
    let topo = format!("kind = \"star\"\nhosts = {hosts}\nhost_rate_gbps = 10.0");
    experiment(&topo, protocol, duration_ms) + "[network]\nbdp_bytes = 12500\n"
}

/// An experiment on `topology` (the body of a `[topology]` table) running
/// `protocol` for `duration_ms` from time 0; append a `[workload]`.
pub fn experiment(topology: &str, protocol: &str, duration_ms: f64) -> String {
    format!(
        "[topology]\n{topology}\n[protocol]\nname = \"{protocol}\"\n[run]\nduration_ms = {duration_ms:?}\nwarmup_ms = 0.0\n"
    )
}

/// SMaRTT-REPS's switch setting on the 100 Gbps fabrics of these tests (base
/// RTT 7.5 us, BDP 93.75 KB): one-BDP port buffers, RED marked on dequeue
/// from 20% to 80% of the buffer (trimming comes from the protocol).
pub const SMARTT_NETWORK: &str = "[network]\nbuffer_bytes = 93750\n\
     [network.red]\nkmin_bytes = 18750\nkmax_bytes = 75000\npmax = 1.0\nmark_at = \"dequeue\"\n";

/// A permutation of `bytes` per host across a 2:1 core (4 racks of 4 hosts,
/// 2 spines at 100 Gbps; every pair crosses it) on [`SMARTT_NETWORK`].
pub fn core_permutation(protocol: &str, bytes: u64) -> String {
    let topo = "kind = \"leaf_spine\"\ntors = 4\nhosts_per_tor = 4\nspines = 2\nfabric_rate_gbps = 100.0";
    experiment(topo, protocol, 50.0)
        + SMARTT_NETWORK
        + &format!("[workload]\nkind = \"permutation\"\nbytes = {bytes}\ncross_rack = true\n")
}
