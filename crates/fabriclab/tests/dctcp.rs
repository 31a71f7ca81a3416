//! DCTCP through the whole simulator: exact lone-message latency, invariants
//! under load, the DCTCP paper's queue-near-K behaviour, and loss recovery.

mod common;
use common::*;
use fabriclab::net::wire::{data_wire, packets_for, payload_of};

const MSS: u32 = 1460;

#[test]
fn dctcp_lone_message_completes_at_exactly_its_ideal_latency() {
    let (dumbbell, leaf_spine) = (dumbbell("dctcp"), leaf_spine("dctcp"));
    let cases = [(&dumbbell, 0, 1), (&leaf_spine, 0, 143), (&leaf_spine, 0, 1)];
    for (base, src, dst) in cases {
        for size in [100u64, 1459, 1460, 1461, 100_000, 300_000] {
            let m = lone(base, src, dst, size, &[]);
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
    // The messages Poisson generates in 2 ms, replayed as a trace so the run lasts until all complete.
    let path = poisson_trace("[workload]\nkind = \"poisson\"\nload = 0.5\nsize_dist = \"wkb\"\n", base, 2000.0, 7);
    let text = format!("{base}{}[run]\nduration_ms = 200.0\nwarmup_ms = 0.0\nseed = 7\n", trace_workload(&path));
    let a = simulate(&text, &[]);
    let s = &a.summary;
    let total: u64 = a.messages.iter().map(|m| m.size).sum();
    assert!(s.messages_started > 100, "only {} messages", s.messages_started);
    assert_eq!(s.messages_completed, s.messages_started);
    assert!(a.messages.iter().all(|m| m.end_ps.is_some() && m.delivered == m.size));
    assert_eq!(s.bytes_delivered, total);
    assert_eq!(s.drops, 0);
    let worst = a.messages.iter().map(|m| m.slowdown().unwrap()).fold(f64::INFINITY, f64::min);
    assert!(worst >= 1.0 - 1e-9, "slowdown below 1: {worst}");
    let b = simulate(&text, &[]);
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
    let out = simulate(&long_incast("dctcp"), &[]);
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
        &[],
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
