//! DCQCN with a sending window and HPCC on the same QPs: lone messages at
//! line rate, an incast is cut by CNPs (DCQCN) or INT (HPCC) to fair shares,
//! PFC keeps it lossless, and without PFC go-back-N recovers drops.

mod common;
use common::*;
use fabriclab::sim::RunOutput;

#[test]
fn lone_messages_take_exactly_their_ideal_latency() {
    for p in ["dcqcn", "hpcc"] {
        for size in [1u64, 1460, 12_500, 100_000, 1_000_000] {
            let m = lone(&star10(p, 2, 5.0), 0, 1, size, &[]);
            let fct = m.end_ps.unwrap() - m.start_ps;
            // HPCC aims at eta = 95% of the bottleneck, even alone, and its INT
            // records (8 B a hop) lengthen each data packet.
            let most = if p == "hpcc" { m.ideal_ps as f64 / 0.95 + 20e6 } else { m.ideal_ps as f64 };
            assert!(fct >= m.ideal_ps && fct as f64 <= most, "{p} size {size}: {fct} vs {}", m.ideal_ps);
        }
    }
}

fn incast(extra: &[&str]) -> RunOutput {
    incast_of("dcqcn", extra)
}

fn incast_of(protocol: &str, extra: &[&str]) -> RunOutput {
    let text =
        star10(protocol, 9, 40.0) + "[workload]\nkind = \"incast\"\nreceiver = 0\nsenders = 8\nbytes = 2000000\n";
    simulate(&text, extra)
}

#[test]
fn incast_is_cut_by_cnps_to_fair_shares_without_loss() {
    let out = incast(&[]);
    let s = &out.summary;
    assert_eq!((s.messages_completed, s.drops), (8, 0));
    // Equal shares: the eight 2 MB flows finish close together, and the
    // downlink stays busy (all done within 10% of line-rate time).
    let ends: Vec<f64> = out.messages.iter().map(|m| m.end_ps.unwrap() as f64).collect();
    let (first, last) = ends.iter().fold((f64::MAX, 0f64), |(a, b), &e| (a.min(e), b.max(e)));
    let line = 8.0 * 2e6 / 1460.0 * 1538.0 * 800.0;
    eprintln!("first {first:.3e} last {last:.3e} line {line:.3e} pauses {}", s.pfc_pauses);
    assert!(first > 0.85 * last, "first {first} last {last}");
    assert!(last < 1.1 * line, "last {last} vs line {line}");
    // Without ECN reaction the queue would hold the eight windows; with DCQCN
    // the rates come down and the queue stays near the RED band.
    let down = out.ports.iter().find(|p| p.peer == 0).unwrap();
    assert!(down.mean_bytes < 160_000.0, "{}", down.mean_bytes);
}

#[test]
fn without_pfc_small_buffers_drop_and_go_back_n_recovers() {
    let out = incast(&["protocol.dcqcn.pfc=false", "network.buffer_bytes=30000"]);
    let s = &out.summary;
    assert!(s.drops > 0);
    assert_eq!(s.messages_completed, 8);
    assert_eq!(s.bytes_delivered, 8 * 2_000_000);
}

#[test]
fn pfc_pauses_the_senders_of_a_large_incast() {
    // PFC counts per ingress link: each sender's 1-BDP window (12.5 KB) stays
    // below the default 100 KB XOFF, so lower it to see 32 senders paused.
    let text = star10("dcqcn", 33, 20.0) + "[workload]\nkind = \"incast\"\nreceiver = 0\nsenders = 32\nbytes = 64000\n";
    let out = simulate(&text, &["network.pfc.xoff_bytes=6000", "network.pfc.xon_bytes=3000"]);
    assert!(out.summary.pfc_pauses > 0);
    assert_eq!((out.summary.messages_completed, out.summary.drops), (32, 0));
}

#[test]
fn hpcc_holds_an_incast_near_zero_queue_at_fair_shares() {
    let hpcc = incast_of("hpcc", &[]);
    let dcqcn = incast(&[]);
    let s = &hpcc.summary;
    assert_eq!((s.messages_completed, s.drops), (8, 0));
    let ends: Vec<f64> = hpcc.messages.iter().map(|m| m.end_ps.unwrap() as f64).collect();
    let (first, last) = ends.iter().fold((f64::MAX, 0f64), |(a, b), &e| (a.min(e), b.max(e)));
    assert!(first > 0.85 * last, "first {first} last {last}");
    // eta = 95%: the link runs below capacity, so the incast takes longer than at line rate.
    let line = 8.0 * 2e6 / 1460.0 * 1538.0 * 800.0;
    eprintln!("hpcc last {last:.3e} line {line:.3e}");
    assert!(last < 1.2 * line, "last {last} vs line {line}");
    // INT keeps the queue far below DCQCN's RED band.
    let mean = |o: &RunOutput| o.ports.iter().find(|p| p.peer == 0).unwrap().mean_bytes;
    eprintln!("mean downlink queue: hpcc {:.0} dcqcn {:.0}", mean(&hpcc), mean(&dcqcn));
    assert!(mean(&hpcc) < 0.25 * mean(&dcqcn), "{} vs {}", mean(&hpcc), mean(&dcqcn));
}
