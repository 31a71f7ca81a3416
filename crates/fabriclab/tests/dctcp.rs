//! DCTCP through the whole simulator: exact lone-message latency, invariants
//! under load, the DCTCP paper's queue-near-K behaviour, and loss recovery.

use fabriclab::config::Config;
use fabriclab::metrics::MessageRecord;
use fabriclab::net::wire::{data_wire, packets_for, payload_of};
use fabriclab::sim::{run, RunOutput};
use fabriclab::workload::{Workload, WorkloadEnv};
use std::path::Path;

const MSS: u32 = 1460;

fn config(text: &str) -> Config {
    Config::from_str_with(text, &[], Path::new(".")).unwrap_or_else(|e| panic!("bad config: {e}\n{text}"))
}

fn simulate(text: &str) -> RunOutput {
    run(&config(text), &mut |_, _| {}).expect("run")
}

/// One message of `size` bytes from `src` to `dst`, alone in the fabric.
fn lone(topology: &str, src: u32, dst: u32, size: u64) -> MessageRecord {
    let out = simulate(&format!(
        r#"
{topology}
[protocol]
name = "dctcp"
[workload]
kind = "incast"
receiver = {dst}
sender_hosts = [{src}]
bytes = {size}
[run]
duration_ms = 5.0
warmup_ms = 0.0
"#
    ));
    assert_eq!(out.messages.len(), 1);
    out.messages[0]
}

#[test]
fn dctcp_lone_message_completes_at_exactly_its_ideal_latency() {
    let dumbbell = "[topology]\nkind = \"dumbbell\"\nhosts_left = 1\nhosts_right = 1";
    let leaf_spine = "[topology]\nkind = \"leaf_spine\"";
    let cases = [(dumbbell, 0, 1), (leaf_spine, 0, 143), (leaf_spine, 0, 1)];
    for (topo, src, dst) in cases {
        for size in [100u64, 1459, 1460, 1461, 100_000, 300_000] {
            let m = lone(topo, src, dst, size);
            let s = m.slowdown().unwrap_or_else(|| panic!("{src}->{dst} {size} B did not complete"));
            assert!(
                (s - 1.0).abs() < 1e-9,
                "{src}->{dst} {size} B: fct {} ps vs ideal {} ps (slowdown {s})",
                m.end_ps.unwrap() - m.start_ps,
                m.ideal_ps
            );
        }
    }
}

/// A finite Poisson WKb run: the messages the Poisson generator produces in
/// `gen_ms`, replayed as a trace so that the run lasts until all complete.
fn poisson_as_trace(base: &str, gen_ms: f64, seed: u64, tag: &str) -> (String, u64, std::path::PathBuf) {
    let cfg = config(&format!(
        "{base}\n[workload]\nkind = \"poisson\"\nload = 0.5\nsize_dist = \"wkb\"\n[run]\nduration_ms = {gen_ms}\nwarmup_ms = 0.0\nseed = {seed}\n"
    ));
    let topo = cfg.topology.build();
    let env = WorkloadEnv {
        n_hosts: topo.n_hosts,
        host_rate_bps: topo.host_rate_bps(0),
        rack_of: topo.rack_of.clone(),
        core_ratio: topo.core_ratio,
        mss: MSS,
        seed,
        end: (gen_ms * 1e9) as u64,
    };
    let mut w = Workload::build(&cfg.workload, &env).expect("poisson workload");
    let mut csv = String::from("time_us,src,dst,bytes\n");
    let mut total = 0;
    while let Some(m) = w.next() {
        csv += &format!("{},{},{},{}\n", m.time as f64 / 1e6, m.src, m.dst, m.size);
        total += m.size;
    }
    let path = std::env::temp_dir().join(format!("fabriclab-dctcp-{tag}-{}.csv", std::process::id()));
    std::fs::write(&path, csv).unwrap();
    let text = format!(
        "{base}\n[workload]\nkind = \"trace\"\ntrace_file = \"{}\"\n[run]\nduration_ms = 200.0\nwarmup_ms = 0.0\nseed = {seed}\n",
        path.display()
    );
    (text, total, path)
}

#[test]
fn dctcp_wkb_at_half_load_keeps_every_invariant() {
    let base = r#"
[topology]
kind = "leaf_spine"
tors = 2
hosts_per_tor = 4
spines = 2
[network]
buffer_bytes = "infinite"
[protocol]
name = "dctcp"
"#;
    let (text, total, path) = poisson_as_trace(base, 2.0, 7, "wkb");
    let a = simulate(&text);
    let s = &a.summary;
    assert!(s.messages_started > 100, "only {} messages", s.messages_started);
    assert_eq!(s.messages_completed, s.messages_started);
    assert!(a.messages.iter().all(|m| m.end_ps.is_some() && m.delivered == m.size));
    assert_eq!(s.bytes_delivered, total);
    assert_eq!(s.drops, 0);
    let worst = a.messages.iter().map(|m| m.slowdown().unwrap()).fold(f64::INFINITY, f64::min);
    assert!(worst >= 1.0 - 1e-9, "slowdown below 1: {worst}");
    let b = simulate(&text);
    let _ = std::fs::remove_file(path);
    assert_eq!(a.summary.without_wall_clock(), b.summary.without_wall_clock());
    assert_eq!(a.messages, b.messages);
    eprintln!(
        "WKb 0.5: {} messages, {} bytes, p50/p99 slowdown {:.2}/{:.2}, ToR max {} B",
        s.messages_started, total, s.slowdown["all"].p50, s.slowdown["all"].p99, s.tor_queue_max_bytes
    );
}

/// Time to push `bytes` of messages of `size` through one 100 Gbps link, framing included.
fn serialisation_ps(size: u64, count: u64) -> u64 {
    let wire: u64 = (0..packets_for(size, MSS)).map(|i| data_wire(payload_of(size, MSS, i)) as u64).sum();
    wire * count * 80
}

#[test]
fn dctcp_long_lived_incast_queue_oscillates_around_k() {
    let k = 125_000.0;
    let (n, size) = (8u64, 20_000_000u64);
    let out = simulate(
        r#"
[topology]
kind = "star"
hosts = 9
[protocol]
name = "dctcp"
[workload]
kind = "incast"
receiver = 0
sender_hosts = [1, 2, 3, 4, 5, 6, 7, 8]
bytes = 20000000
[run]
duration_ms = 50.0
warmup_ms = 1.0
"#,
    );
    let s = &out.summary;
    assert_eq!(s.messages_completed, n);
    let end = out.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap();
    let ideal = serialisation_ps(size, n);
    let ratio = end as f64 / ideal as f64;
    eprintln!(
        "8x20MB: ToR queue mean {:.0} B ({:.2} K), max {} B ({:.2} K) after warm-up; last completion {:.3} ms = {:.4} x ideal {:.3} ms",
        s.tor_queue_mean_bytes,
        s.tor_queue_mean_bytes / k,
        s.tor_queue_max_bytes,
        s.tor_queue_max_bytes as f64 / k,
        end as f64 / 1e9,
        ratio,
        ideal as f64 / 1e9
    );
    assert!((0.5 * k..=2.0 * k).contains(&s.tor_queue_mean_bytes), "mean queue {} not near K", s.tor_queue_mean_bytes);
    assert!((s.tor_queue_max_bytes as f64) < 3.0 * k, "max queue {}", s.tor_queue_max_bytes);
    assert!(ratio < 1.02, "receiver link under-used: {ratio}");
    assert_eq!(s.drops, 0);
}

#[test]
fn dctcp_incast_into_small_buffers_recovers_from_drops() {
    let out = simulate(
        r#"
[topology]
kind = "star"
hosts = 17
[network]
buffer_bytes = 60000
[protocol]
name = "dctcp"
[workload]
kind = "incast"
receiver = 0
senders = 16
bytes = 1000000
[run]
duration_ms = 200.0
warmup_ms = 0.0
"#,
    );
    let s = &out.summary;
    let end = out.messages.iter().filter_map(|m| m.end_ps).max().unwrap_or(0);
    eprintln!(
        "16x1MB into 60 KB buffers: {} drops, {}/{} complete, last at {:.3} ms (ideal {:.3} ms)",
        s.drops,
        s.messages_completed,
        s.messages_started,
        end as f64 / 1e9,
        serialisation_ps(1_000_000, 16) as f64 / 1e9
    );
    assert!(s.drops > 0);
    assert_eq!(s.messages_started, 16);
    assert_eq!(s.messages_completed, 16);
    assert_eq!(s.bytes_delivered, 16_000_000);
    assert!(out.messages.iter().all(|m| m.delivered == m.size), "retransmissions delivered twice");
}
